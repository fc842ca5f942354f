"""The learner's side in the tests' own interpreter: the browser engine's one Pyodide.

The learner's module is imported here, from a folder of its own, and served by the same
:class:`judge.sandbox.learner.LearnerSide` as in a learner process, through a
:class:`judge.core.protocol.DirectConnection` that still turns every message into JSON text and
back: the tests get the same copied values, the same refusals and the same lent proxies as natively.
What it cannot give is isolation: the learner's code shares the interpreter with the tests, so the
browser's verdicts are for learning (the page and docs/web.md say so), and the page uses a fresh
engine for every run, so nothing a run does outlasts it.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from collections.abc import Iterator
from typing import Any

from ..core import codec, protocol
from . import guard
from . import learner as endpoint
from .standin import LearnerSpec, TestSide


class InProcessLearner:
    """The learner's module imported in this interpreter, behind a direct connection. While the
    learner's code runs (its import, each call) the guard confines it to its folder and its working
    directory is put back afterwards, as if it ran in a process of its own."""

    def __init__(self, spec: LearnerSpec, side: TestSide, root: str | None = None) -> None:
        self.folder = tempfile.mkdtemp(prefix="judge-learner-", dir=root)
        for name, text in {**spec.support, spec.entry: spec.source}.items():
            with open(os.path.join(self.folder, name), "w", encoding="utf-8") as handle:
                handle.write(text)
        self._saved_path = list(sys.path)
        sys.path.insert(0, self.folder)
        registry = endpoint.registry_from(spec.declarations)
        self._cwd = self.folder  # the learner's working directory between its calls
        with self.learner_running():
            module, self.import_error = endpoint.import_entry(spec.module, spec.entry, self.folder)
        self.connection = protocol.DirectConnection(_unconfined(side.handle), loads=side.loads)
        self.bound: dict[str, Any] = {}
        if module is not None:
            learner_side = endpoint.LearnerSide(module, registry, self.folder, interruptible=True)
            here = protocol.DirectConnection(self._confined(learner_side.handle), loads=learner_side.decoder.loads)
            learner_side.connection = here
            protocol.connect(self.connection, here)
            self.bound = side.decoder.loads(codec.dumps(learner_side.bindings()))

    @contextlib.contextmanager
    def learner_running(self) -> Iterator[None]:
        """While the learner's code runs: confined to its folder, in its own working directory."""
        with guard.confined(self.folder):
            with contextlib.suppress(OSError):  # removed by the learner's code: it runs where the tests are
                os.chdir(self._cwd)
            try:
                yield
            finally:
                self._cwd = guard.working_directory() or self._cwd

    def _confined(self, handler: protocol.Handler) -> protocol.Handler:
        def handle(message: dict[str, Any]) -> dict[str, Any]:
            with self.learner_running():
                return handler(message)

        return handle

    def stop(self, ended: bool = False) -> str:
        sys.path[:] = self._saved_path
        for name, module in list(sys.modules.items()):
            if (getattr(module, "__file__", None) or "").startswith(self.folder + os.sep):
                del sys.modules[name]
        return ""


def _unconfined(handler: protocol.Handler) -> protocol.Handler:
    def handle(message: dict[str, Any]) -> dict[str, Any]:
        with guard.confined(None):  # the tests' side serving the learner's code: the tests' own rights
            return handler(message)  # (confined() puts the learner's working directory back after)

    return handle
