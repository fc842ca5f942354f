"""The rule that keeps tampering from buying a grade, and the restore that keeps runs independent.

The rule, in both engines: from the moment before the learner's module is imported to the end of
the run, nothing outside the learner's own modules may change, other than what pytest and the
judge change themselves. :class:`Watch` enforces it for one run. The runner creates it before the
import, calls :meth:`Watch.check` once the module is imported (so a change made at import and
undone later still counts) and again after the tests, and :meth:`Watch.finish` at the end,
whatever happened. What it covers:

- namespaces (:mod:`judge.core.namespaces`): every attribute of every module in ``sys.modules`` and of
  every class their namespaces hold, including modules first imported during the run (snapshotted
  right after they executed, by :mod:`judge.core.importwatch`). Rebinding or deleting any of them, or
  adding behaviour (a callable, class or descriptor; a dunder or an attribute hiding an inherited
  method on a class), voids the verdict. Plain-data caches and genuine submodules may be added.
  Outside the judge, pytest, pluggy and the problem's own modules, a module may also do what its
  own code does after import: add objects that are not the learner's code (numpy registers dtype
  classes as they are first used) and rebind a private flag from data to data
  (``tempfile._O_TMPFILE_WORKS``). The guard (:mod:`judge.core.guard`) refuses what keeps an object's
  identity but changes its behaviour: a function's ``__code__`` or defaults swapped.
- imports (:mod:`judge.core.importwatch`): no ``sys.modules`` entry replaced, no stand-in under a name
  the tests or the judge could import, every test helper and support module loaded from its own
  file; ``sys.meta_path``, ``sys.path_hooks`` and the finders in ``sys.path_importer_cache``
  unchanged.
- files (:func:`judge.core.workdir.layout_findings`): the work directory may gain the code's own files,
  but nothing pytest or the import system would read.
- configuration: no ``PYTEST_*`` or ``PY_*`` environment variable changed (``PYTEST_ADDOPTS``,
  ``PYTEST_PLUGINS`` and ``PY_IGNORE_IMPORTMISMATCH`` configure pytest); no trace, profile or
  garbage-collector hook left installed (:mod:`judge.core.globalstate`).

Exempt, and restored after the run: ``sys.stdout``, ``sys.stderr``, ``sys.stdin``, ``sys.path``
and ``sys.last_*`` (pytest sets these), and the honest global state of :mod:`judge.core.globalstate`.

A violated rule voids the verdict; :func:`message` says what changed and, when it can tell, which
file's code did it. Either way :meth:`Watch.finish` puts back what it can with certainty. A run that
tampered leaves the interpreter suspect (it may have done more than can be seen), and so does a
restore that failed: :func:`engine_note` marks the browser engine's Result JSON so that the page
replaces that engine. Pure Python: runs in both engines.
"""

from __future__ import annotations

import gc
import importlib.machinery
import json
import os
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from . import guard
from .globalstate import GlobalState
from .importwatch import (
    Imports,
    Recorder,
    entry_findings,
    genuine,
    hook_findings,
    planter,
    restore_imports,
)
from .namespaces import (
    DATA,
    Baseline,
    Space,
    allowed_addition,
    changes,
    class_space,
    intact,
    module_space,
    restore,
)
from .problem import Problem
from .workdir import layout, layout_findings

Finding = tuple[str, str]  # (kind, sentence); kind "tests" (a test file changed) or "tamper"
_MODULE_DICT = ModuleType.__dict__["__dict__"].__get__  # type: ignore[index]  # the real __dict__, not an override
_HONEST = {("sys", name) for name in ("last_type", "last_value", "last_traceback", "last_exc",
                                      "stdout", "stderr", "stdin", "path")} | {
    # pytest sets these for a session and resets them after it (which matters when the judge
    # itself runs inside a pytest session, as in the project's own tests)
    ("_pytest.assertion.util", name) for name in ("_config", "_reprcompare", "_assertion_pass")}
_MACHINERY = ("judge", "pytest", "_pytest", "pluggy")  # where any change voids (and the problem's modules)
_CONFIG_ENV = ("PYTEST_", "PY_")
_PYTEST_OWN_ENV = ("PYTEST_CURRENT_TEST", "PYTEST_VERSION")  # pytest sets and clears them itself
_TESTS_CHANGED = ("the test files were modified during the run; a solution must not touch the tests "
                  "(no verdict given)")
_baseline = Baseline()
_active: list[Watch] = []
_note = [""]


def prime() -> None:
    """Snapshot the loaded modules now (the native parent does, before it forks its children)."""
    _baseline.refresh()


def session_started() -> None:
    """Put the running watch's import recorder back in front of pytest's assertion-rewriting hook,
    which pytest inserts first on ``sys.meta_path`` while it configures (called by the collector)."""
    if _active:
        recorder = _active[0].recorder
        sys.meta_path[:] = [recorder, *[f for f in sys.meta_path if f is not recorder]]


def message(findings: list[Finding]) -> str:
    """The Result's message for a voided run."""
    if all(kind == "tests" for kind, _ in findings):
        return _TESTS_CHANGED
    texts = list(dict.fromkeys(_short(text) for _, text in findings))
    shown = "; ".join(texts[:3]) + (f"; and {len(texts) - 3} more" if len(texts) > 3 else "")
    return f"the code changed what the tests rely on, so no verdict is given: {shown}"


def engine_note(result_json: str) -> str:
    """``result_json`` with ``"engine_dirty": <why>`` added when the last run left this interpreter
    suspect; the browser page then replaces the engine (web/js/engine.js strips the key)."""
    why, _note[0] = _note[0], ""
    if not why:
        return result_json
    data = json.loads(result_json)
    data["engine_dirty"] = why
    return json.dumps(data, ensure_ascii=False)


class Watch:
    """Watches one run: snapshots at creation, :meth:`check` any number of times, :meth:`finish` once."""

    def __init__(self, problem: Problem, workdir: Path) -> None:
        self.workdir = os.path.realpath(workdir)
        root = guard.active_root()
        self.writable = root if root and self.workdir.startswith(root + os.sep) else self.workdir
        self.entry = problem.entry
        self.state = GlobalState()
        paused = _pause_gc()
        try:
            self.laid_out = layout(workdir, problem.entry)
            local = {rel.rsplit("/", 1)[-1][:-3]: os.path.join(self.workdir, rel)
                     for rel in self.laid_out if rel.endswith(".py")}
            self.group, self.volatile = _baseline.refresh()
            self.latest: list[Space] | None = None  # the spaces found changed by a final check
            self.tracked: set[int] = set()
            modules = dict(sys.modules)
            for name in modules.keys() & {*local, problem.module_name}:
                del modules[name]  # an earlier run's module of the same name: the runner forgets it
            self.imports = Imports(modules, local, list(sys.meta_path), list(sys.path_hooks),
                                   dict(sys.path_importer_cache), list(sys.path), _pytest_hooks(), self.workdir)
            self.recorded: list[Space] = []
            self.found: list[Finding] = []
            self.shadowing: dict[str, bool] = {problem.module_name: False}
            self.recorder = Recorder(self._own, self._executed)
            self.bytecode = sys.dont_write_bytecode
            sys.dont_write_bytecode = True  # any byte code in the work directory is then the code's
            sys.meta_path.insert(0, self.recorder)
            _active[:] = [self]
        finally:
            _resume_gc(paused)

    def check(self, final: bool = False) -> list[Finding]:
        """Everything the rule forbids that has happened so far (also kept for :meth:`finish`).

        ``final``: no code of the learner's runs between this check and :meth:`finish`, which then
        restores what this check found instead of looking again."""
        paused = _pause_gc()
        try:
            found = layout_findings(Path(self.workdir), self.laid_out, self.entry, self._shadows)
            changed = self._changed()
            self.latest = changed if final else None
            texts = self._namespace_findings(changed)
            texts += entry_findings(self.imports, self.recorder, self._shadows, self._planted_by)
            texts += hook_findings(self.imports, self.recorder, self._who)
            texts += self.state.findings(self._who) + self._environment_findings() + guard.refused()
        finally:
            _resume_gc(paused)
        found = [(kind, text) for kind, text in found if kind == "tests"] + [
            ("tamper", text) for kind, text in found if kind != "tests"] + [("tamper", t) for t in texts]
        self.found += found
        return found

    def finish(self) -> None:
        """Put back what the run changed, uninstall the recorder and note whether the interpreter
        is suspect. An interrupt (the browser's Stop) arriving meanwhile is re-raised at the end."""
        interrupted: BaseException | None = None
        failures = []
        paused = _pause_gc()
        try:
            for step in (self._restore_namespaces, self._restore_imports, self._restore_state):
                for _ in range(3):
                    try:
                        step()
                        break
                    except KeyboardInterrupt as exc:
                        interrupted = exc
                    except Exception as exc:  # noqa: BLE001 - reported as a suspect engine
                        failures.append(f"{step.__name__}: {type(exc).__name__}: {exc}")
                        break
        finally:
            _active.clear()
            _resume_gc(paused)
        suspect = [text for kind, text in self.found if kind == "tamper"] + failures
        _note[0] = ("the run tampered with the interpreter: " if not failures else "could not restore: ") \
            + "; ".join(suspect[:3]) if suspect else ""
        if interrupted is not None:
            raise interrupted

    # --- the checks -------------------------------------------------------------------------
    def _changed(self) -> list[Space]:
        return [*self.group.changed(), *[s for s in [*self.volatile, *self.recorded] if not intact(s)]]

    def _namespace_findings(self, changed: list[Space]) -> list[str]:
        found = []
        for space in changed:
            for key, how, new in changes(space):
                if not self._allowed(space, key, how, new):
                    found.append(_sentence(space, key, how) + self._who(new))
        return found

    def _allowed(self, space: Space, key: str, how: str, new: Any) -> bool:
        """pytest's own changes; additions of plain data or submodules; and, outside the judge,
        pytest and the problem's modules, what a module's own code does after it was imported:
        additions to its namespace that are not the learner's code (numpy registers classes in
        ``numpy.dtypes`` as it goes) and private flags rebound from data to data
        (``tempfile._O_TMPFILE_WORKS``). Additions the rule keeps are kept; the rest is put back."""
        if (space.name, key) in _HONEST or how == "added" and allowed_addition(space, key, new):
            return True
        if self._machinery(space.name):
            return False
        if how == "added":
            return not space.is_class and not self._who(new)
        return how == "replaced" and key.startswith("_") and type(space.saved[key]) in DATA and type(new) in DATA

    def _machinery(self, name: str) -> bool:
        top = name.partition(".")[0]
        return top in _MACHINERY or top in self.imports.local

    def _environment_findings(self) -> list[str]:
        before, now = self.state.environ, os.environ
        keys = {k for k in (*before, *now) if k.startswith(_CONFIG_ENV) and k not in _PYTEST_OWN_ENV
                and before.get(k) != now.get(k)}
        return [f"the environment variable {key} was {'set' if key in now else 'removed'} (it configures pytest)"
                for key in sorted(keys)]

    def _who(self, value: Any) -> str:
        file = planter(value, self.workdir)
        return f" by {file}" if file else ""

    def _planted_by(self, value: Any) -> str:
        file = planter(value, self.workdir)
        return f" (put there by {file})" if file else ""

    def _shadows(self, name: str) -> bool:
        """Whether a module called ``name`` is one the tests or the judge could import."""
        top = name.partition(".")[0]
        if top not in self.shadowing:
            self.shadowing[top] = (top in self.imports.local or top in sys.stdlib_module_names
                                   or top in sys.builtin_module_names or top in self.imports.modules
                                   or importlib.machinery.PathFinder.find_spec(top, self._elsewhere()) is not None)
        return self.shadowing[top]

    def _elsewhere(self) -> list[str]:
        """The import path without the folders the learner's code can write to."""
        return [p for p in self.imports.path if p and not _inside(os.path.realpath(p), self.writable)]

    # --- the recorder's callbacks -----------------------------------------------------------
    def _own(self, origin: str) -> bool:
        return _inside(origin, self.writable) and origin not in self.imports.local.values()

    def _executed(self, module: ModuleType, own: bool) -> None:
        space = module_space(_MODULE_DICT(module).get("__name__", "?"), module)
        self.recorded.append(space)
        for cls in space.classes:
            if id(cls) not in self.tracked and id(cls) not in self.group.owners:
                self.tracked.add(id(cls))
                self.recorded.append(class_space(cls))

    # --- restoring --------------------------------------------------------------------------
    def _restore_namespaces(self) -> None:
        changed = self.latest if self.latest is not None else self._changed()
        classes: list[Any] = []
        for space in changed:
            def allowed(key: str, value: Any, space: Any = space) -> bool:
                return self._allowed(space, key, "added", value)
            classes += restore(space, allowed)
        self.group.reread(changed)
        self.group.add_classes(classes)

    def _restore_imports(self) -> None:
        restore_imports(self.imports, self.recorder, lambda key, module: genuine(self.recorder, key, module))
        sys.dont_write_bytecode = self.bytecode
        if not self.found:
            _baseline.adopt(self.recorded)  # a clean run's new modules are watched from now on

    def _restore_state(self) -> None:
        self.state.restore()


def _short(text: str, limit: int = 300) -> str:
    """A sentence cut to ``limit`` characters (names in it may be the learner's, of any length)."""
    return text if len(text) <= limit else text[:limit] + "..."


def _sentence(space: Space, key: str, how: str) -> str:
    if how == "type":
        return f"the class of {space.name} was changed"
    if how == "bases":
        return f"the base classes of {space.name} were changed"
    return f"{space.name}.{key} was {how}"


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder + os.sep)


def _pytest_hooks() -> tuple[type, ...]:
    rewrite = sys.modules.get("_pytest.assertion.rewrite")
    hook = getattr(rewrite, "AssertionRewritingHook", None)
    return (hook,) if isinstance(hook, type) else ()


def _pause_gc() -> bool:
    """Keep finalizers and gc callbacks (code of the learner's) from running during a check."""
    enabled = gc.isenabled()
    gc.disable()
    return enabled


def _resume_gc(enabled: bool) -> None:
    if enabled:
        gc.enable()
