"""A learner process: its fresh folder, its start at the run's sandbox level, its end.

:class:`ProcessLearner` is what the test side's :class:`judge.sandbox.standin.TestSide` holds
natively. Each start makes a fresh folder inside the job's folder (:class:`JobSpace`): ``work/``,
with the learner's entry file and the problem's support modules, written while only the judge can
write it and then handed to the job's identity. The learner's stdout and stderr are unnamed files
(``memfd``) made here, so the judge never opens a path the learner could have replaced. It starts
``python`` there at the level of :class:`judge.sandbox.levels.Sandbox` (as the job's identity, in
the job's Landlock and seccomp confinement at the user level), in its own session, with two pipes
for the protocol. The process is killed (its whole process group, and with bubblewrap its whole pid
namespace) when the run ends, when a call runs past its test's limit, or when its channel breaks;
a parent-death signal ends it if the test process itself is killed; and at the end of the job the
judge ends every process of the job's identity, wherever it went.
"""

from __future__ import annotations

import functools
import os
import signal
import subprocess
import tempfile
from dataclasses import dataclass
from typing import Any

from ..core import protocol
from . import confine, forking, identities, levels, trees
from .standin import LearnerSpec, TestSide

READY_TIMEOUT_FLOOR = 2.0  # seconds a learner process may take to start and import, at least
PROCESS_LIMIT = 32  # processes (and threads) of a job's identity at once


@dataclass
class JobSpace:
    """Where one job's learner processes live and who they run as.

    ``folder``: made by the judge for this job, owned by it, that others may only traverse; each
    learner process gets a fresh folder inside. ``ids``: the job's sandbox identity (uid, gid), or
    None to run as the judge's own user. ``confinement``: Landlock and seccomp rules entered by
    every learner process of the job (user level), built on first use.
    """

    folder: str
    ids: tuple[int, int] | None
    identity: identities.Identity | None = None  # held by this space (released by :meth:`close`)
    confinement: confine.Confinement | None = None

    @classmethod
    def standalone(cls, sandbox: levels.Sandbox) -> JobSpace:
        """A space of its own, with an identity of its own where the level wants one (tests, bench)."""
        identity = levels.acquire_identity(sandbox)
        folder = make_job_folder(sandbox)
        return cls(folder, (identity.uid, identity.gid) if identity else None, identity)

    def confine(self, sandbox: levels.Sandbox) -> confine.Confinement | None:
        if sandbox.level != "user" or not sandbox.confinement:
            return None
        if self.confinement is None:
            use = confine.offered()
            self.confinement = confine.Confinement(sandbox.readable, self.folder, use)
        return self.confinement

    def close(self) -> None:
        """End what the space's identity runs, remove its folder, give the identity back (standalone)."""
        try:
            if self.confinement is not None:
                self.confinement.close()
            identity, self.identity = self.identity, None
            if identity is not None:  # the folder goes before the identity is given back
                identities.release(identity, then=lambda _lock: trees.remove_tree(self.folder))
            elif self.ids is not None:
                identities.end_processes(self.ids[0])
        finally:  # also when a process of the identity survived (IdentityError): the folder goes
            trees.remove_tree(self.folder)


def make_job_folder(sandbox: levels.Sandbox) -> str:
    """A fresh folder for one job's learner folders: the judge's, others may only pass through it."""
    return trees.held_folder("judge-job-", os.path.dirname(sandbox.runtime), 0o711)


class ProcessLearner:
    """One learner process (see the module docstring)."""

    def __init__(self, spec: LearnerSpec, sandbox: levels.Sandbox, side: TestSide,
                 space: JobSpace | None = None) -> None:
        self.sandbox = sandbox
        self._own_space = space is None
        self.space = space or JobSpace.standalone(sandbox)
        self.folder = tempfile.mkdtemp(prefix="judge-learner-", dir=self.space.folder)
        os.chmod(self.folder, 0o711)
        self._process: subprocess.Popen[bytes] | None = None
        self._stderr = -1
        self.import_error = ""
        self.bound: dict[str, Any] = {}  # the module's functions, decoded (stand-ins of the learner's)
        try:
            self._start(spec, side)
        except BaseException:
            self.stop()
            raise

    def _start(self, spec: LearnerSpec, side: TestSide) -> None:
        ids = self.space.ids
        work = _prepare_work(self.folder, {**spec.support, spec.entry: spec.source}, ids)
        to_child_r, to_child_w = os.pipe()
        from_child_r, from_child_w = os.pipe()
        config: dict[str, Any] = {"module": spec.module, "entry": spec.entry, "memory_limit": spec.memory_limit,
                                  "numpy": spec.numpy, "declarations": spec.declarations,
                                  "fds": [to_child_r, from_child_w]}
        user = ids if ids is not None and (self.sandbox.level == "user" or self.sandbox.as_identity) else None
        if user is not None:
            config["processes"] = PROCESS_LIMIT  # of the job's own identity: no fork bomb outruns its end
        # the learner's output goes to files with no name, made here: nothing the learner can swap
        out = os.memfd_create("learner-stdout", os.MFD_CLOEXEC)
        err = os.memfd_create("learner-stderr", os.MFD_CLOEXEC)
        confinement = self.space.confine(self.sandbox)
        seccomp_fd = (confine.seccomp_program_fd()
                      if self.sandbox.level == "bubblewrap" and "seccomp" in self.sandbox.confinement else None)
        passed = (to_child_r, from_child_w) + ((seccomp_fd,) if seccomp_fd is not None else ())
        try:
            self._process = subprocess.Popen(
                self.sandbox.command(self.folder, config, seccomp_fd), stdin=subprocess.DEVNULL, stdout=out,
                stderr=err, pass_fds=passed, cwd=work, env=self.sandbox.environment(work),
                start_new_session=True, preexec_fn=functools.partial(_enter, confinement),
                user=user[0] if user else None, group=user[1] if user else None,
                extra_groups=[] if user else None)
        finally:
            for fd in (*passed, out):
                os.close(fd)
            self._stderr = err
        self.connection = protocol.PipeConnection(side.handle, from_child_r, to_child_w,
                                                  on_receive=functools.partial(_print_output, side),
                                                  loads=side.loads)
        self._await_ready(spec.start_timeout)

    def _await_ready(self, timeout: float) -> None:
        import time

        connection = self.connection
        seconds = max(READY_TIMEOUT_FLOOR, timeout) * levels.WALL_BACKSTOP
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
        """The end of what the learner wrote to stderr (read from the judge's own descriptor)."""
        if self._stderr < 0:
            return ""
        try:
            size = os.fstat(self._stderr).st_size
            data = os.pread(self._stderr, 4096, max(0, size - 4096))
        except OSError:
            return ""
        return "\n".join(data.decode("utf-8", "replace").strip().splitlines()[-lines:])

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
            _reap_orphans()
        connection = getattr(self, "connection", None)
        if connection is not None:
            for fd in (connection.read_fd, connection.write_fd):
                try:
                    os.close(fd)
                except OSError:
                    pass
            self.connection = None  # type: ignore[assignment]
        if self._stderr >= 0:
            os.close(self._stderr)
            self._stderr = -1
        if self._own_space:
            self.space.close()  # every process of its identity ended, verified
        elif self.space.ids is not None and self.space.ids[0] != os.geteuid():
            identities.end_processes(self.space.ids[0])  # what the replaced process left running
        trees.remove_tree(self.folder)
        return how


def _prepare_work(folder: str, files: dict[str, str], ids: tuple[int, int] | None) -> str:
    """The learner's folder, written while only the judge can write it, then handed to ``ids``."""
    work = os.path.join(folder, "work")
    os.mkdir(work, 0o700)
    directory = os.open(work, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    try:
        for name, text in files.items():
            fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644, dir_fd=directory)
            with open(fd, "w", encoding="utf-8") as handle:
                if ids is not None:
                    os.fchown(handle.fileno(), *ids)
                handle.write(text)
        if ids is not None:
            os.fchown(directory, *ids)
    finally:
        os.close(directory)
    return work


def _reap_orphans() -> None:
    """Reap what ended of the learner's processes and was adopted here (the test process is their
    subreaper): their CPU time then counts in this process's own (:mod:`judge.sandbox.cputime`)."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


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


def _print_output(side: TestSide, message: dict[str, Any]) -> None:
    """The learner's output that came with a message, written where the current test's output goes, up to
    what the test may still keep of each stream (``side.output_left``). The learner process caps what it
    sends too, but in code the learner can change: this is the bound on what the tests' process holds."""
    import sys

    for key, stream in (("out", sys.stdout), ("err", sys.stderr)):
        text, left = message.get(key), side.output_left[key]
        if isinstance(text, str) and text and left > 0:
            stream.write(text[:left])
            side.output_left[key] = left - len(text)


def _enter(confinement: confine.Confinement | None) -> None:
    """In the child, before exec: be killed when the test process dies (Linux's parent-death signal),
    then enter the job's confinement (user level)."""
    forking.die_with_parent()
    if confinement is not None:
        confinement.enter()
