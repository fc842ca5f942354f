"""A learner process: its fresh folder, its start at the run's sandbox level, its end.

:class:`ProcessLearner` is what the test side's :class:`judge.sandbox.standin.TestSide` holds
natively. Each start makes a fresh folder (``work/`` with the learner's entry file and the
problem's support modules, ``io/`` with the files behind the process's stdout and stderr) and
starts ``python`` there at the level of :class:`judge.sandbox.levels.Sandbox`, in its own session,
with two pipes for the protocol. The process is killed (its whole process group, and with
bubblewrap its whole pid namespace) when the run ends, when a call runs past its test's limit, or
when its channel breaks; a parent-death signal ends it if the test process itself is killed.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
from typing import Any

from ..core import protocol
from . import levels
from .standin import LearnerSpec, TestSide

READY_TIMEOUT_FLOOR = 2.0  # seconds a learner process may take to start and import, at least


class ProcessLearner:
    """One learner process (see the module docstring)."""

    def __init__(self, spec: LearnerSpec, sandbox: levels.Sandbox, side: TestSide) -> None:
        self.sandbox = sandbox
        # beside the runtime folder, in the system's temp folder: not inside the test process's private
        # folder, which the unprivileged user of the user level cannot enter
        self.folder = tempfile.mkdtemp(prefix="judge-learner-", dir=os.path.dirname(sandbox.runtime))
        self._process: subprocess.Popen[bytes] | None = None
        self.import_error = ""
        self.bound: dict[str, Any] = {}  # the module's functions, decoded (stand-ins of the learner's)
        try:
            self._start(spec, side)
        except BaseException:
            self.stop()
            raise

    def _start(self, spec: LearnerSpec, side: TestSide) -> None:
        work = os.path.join(self.folder, "work")
        io_folder = os.path.join(self.folder, "io")
        os.makedirs(work)
        os.makedirs(io_folder)
        for name, text in {**spec.support, spec.entry: spec.source}.items():
            with open(os.path.join(work, name), "w", encoding="utf-8") as handle:
                handle.write(text)
        ids = levels.user_ids(self.sandbox)
        if ids is not None:
            for path in (self.folder, work, io_folder, *(os.path.join(work, n) for n in os.listdir(work))):
                os.chown(path, *ids)
        to_child_r, to_child_w = os.pipe()
        from_child_r, from_child_w = os.pipe()
        config: dict[str, Any] = {"module": spec.module, "entry": spec.entry, "memory_limit": spec.memory_limit,
                                  "numpy": spec.numpy, "declarations": spec.declarations,
                                  "fds": [to_child_r, from_child_w]}
        out = os.open(os.path.join(io_folder, "stdout"), os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o600)
        err = os.open(os.path.join(io_folder, "stderr"), os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o600)
        if ids is not None:
            os.fchown(out, *ids)
            os.fchown(err, *ids)
        try:
            self._process = subprocess.Popen(
                self.sandbox.command(self.folder, config), stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                pass_fds=(to_child_r, from_child_w), cwd=work, env=self.sandbox.environment(work),
                start_new_session=True, preexec_fn=_die_with_parent, user=ids[0] if ids else None,
                group=ids[1] if ids else None, extra_groups=[] if ids else None)
        finally:
            for fd in (to_child_r, from_child_w, out, err):
                os.close(fd)
        self.connection = protocol.PipeConnection(side.handle, from_child_r, to_child_w, on_receive=_print_output,
                                                  loads=side.decoder.loads)
        self._await_ready(spec.start_timeout)

    def _await_ready(self, timeout: float) -> None:
        import time

        connection = self.connection
        seconds = max(READY_TIMEOUT_FLOOR, timeout)
        connection.deadline = time.monotonic() + seconds
        connection.on_deadline = lambda: protocol.StartTimedOut(seconds)
        try:
            ready = connection.receive()
        except protocol.LearnerCrashed:
            tail = self._stderr_tail()
            how = self.stop(ended=True).replace("while a test was calling it", "while starting, before the "
                                                "learner's module was imported")
            raise protocol.LearnerCrashed((how or "the learner's process ended while starting")
                                          + (f":\n{tail}" if tail else "")) from None
        finally:
            connection.deadline = None
        if ready.get("op") != "ready" or not isinstance(ready.get("error"), str):
            raise protocol.ProtocolViolation("the learner's process did not start as expected")
        self.import_error = ready["error"]
        bound = ready.get("bound")
        self.bound = bound if isinstance(bound, dict) else {}

    def _stderr_tail(self, lines: int = 6) -> str:
        try:
            with open(os.path.join(self.folder, "io", "stderr"), "rb") as handle:
                handle.seek(max(0, os.fstat(handle.fileno()).st_size - 4096))
                return "\n".join(handle.read().decode("utf-8", "replace").strip().splitlines()[-lines:])
        except OSError:
            return ""

    def stop(self, ended: bool = False) -> str:
        """Kill the process (and all it started); a sentence on how it had ended if it ended by itself.

        ``ended``: its channel saw the end, so it is exiting: wait a moment for its exit status.
        """
        process = self._process
        how = ""
        if process is not None:
            try:
                status = process.wait(timeout=1.0) if ended else process.poll()
            except subprocess.TimeoutExpired:
                status = None
            if status is not None:
                how = ended_message(status)
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            process.wait()
            self._process = None
        connection = getattr(self, "connection", None)
        if connection is not None:
            for fd in (connection.read_fd, connection.write_fd):
                try:
                    os.close(fd)
                except OSError:
                    pass
            self.connection = None  # type: ignore[assignment]
        shutil.rmtree(self.folder, ignore_errors=True)
        return how


def ended_message(status: int) -> str:
    """Why a learner process ended by itself, from its exit status (negative: killed by that signal)."""
    if status == 0:
        return ("the code ended the learner's process early (os._exit() or similar) while a test was "
                "calling it; a solution must return, not exit")
    if status < 0:
        name = signal.Signals(-status).name if -status in signal.valid_signals() else str(-status)
        hint = " (most often: the memory limit)" if name == "SIGKILL" else ""
        return f"the learner's process was killed by {name}{hint} while a test was calling it"
    return (f"the learner's process ended with exit code {status} while a test was calling it "
            "(os._exit() in the code, or a crash)")


def _print_output(message: dict[str, Any]) -> None:
    """The learner's output that came with a message, written where the current test's output goes."""
    import sys

    out, err = message.get("out"), message.get("err")
    if isinstance(out, str) and out:
        sys.stdout.write(out)
    if isinstance(err, str) and err:
        sys.stderr.write(err)


def _die_with_parent() -> None:
    """In the child, before exec: be killed when the test process dies (Linux's parent-death signal)."""
    try:
        import ctypes

        ctypes.CDLL(None).prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
