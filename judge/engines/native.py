"""The native engine: each job in a test process of its own, whose learner process is sandboxed.

Theory of operation. For every job this process (the judge) starts a *test process* in its own
session (process group): it runs pytest on the canonical tests, trusted code only. The learner's
module runs in a *learner process* that the test process starts at the run's sandbox level
(:mod:`judge.sandbox.levels`, chosen once per engine and recorded in every Result) and reaches only
through the codec; a call that runs past its test's limit fails that test and the learner process
is replaced. This process enforces the whole job's wall-clock limit and kills the test process
group on timeout and after every run (a learner process dies with its test process). The Result
comes back on a private pipe with a per-run token; the test process's stdout is discarded and the
tail of its stderr kept to explain a failure of the judge itself.

While ``parallel`` jobs run on fewer cores than the machine has, the next one is *prepared ahead*
(forks only): its test process makes its work directory, starts its learner process (which imports
the learner's module) and collects the tests, then waits at a gate until a slot is free. Its CPU
time counts throughout (a loop at import is stopped by the job's CPU limit as ever); its wall-clock
backstop and its Result's duration count from the moment its tests may start. So a learner process's
start is off the critical path.

Two ways to start the test process, same code (:mod:`judge.engines.native_child`):
- fork (POSIX): this process imports pytest once and forks a test process per job, which saves
  the interpreter start-up and imports on every problem;
- spawn (elsewhere, or ``JUDGE_SPAWN=1``): ``python -m judge.engines.native_child`` per job.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import gc
import json
import math
import os
import secrets
import select
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from ..core import code_cache
from ..core.errors import ExitCode
from ..core.problem import Problem
from ..core.result import INTERNAL_ERROR, Result
from ..sandbox import cputime, forking, identities, levels, trees
from ..sandbox.process import JobSpace, make_job_folder
from . import Job

SPAWN_ALLOWANCE = 2.0  # extra seconds for a spawned child's interpreter to start
FORK_ALLOWANCE = 0.5  # extra seconds for a forked child to set itself up
_PACKAGE_ROOT = str(Path(__file__).resolve().parents[2])  # the folder that holds judge/
_STDERR_TAIL = 4096


@dataclass
class _Running:
    job: Job
    pid: int
    channel: int
    root: str
    token: str
    cpu_limit: float  # CPU seconds the job's processes may use
    deadline: float  # the wall-clock backstop (monotonic)
    space: JobSpace
    identity: identities.Identity | None
    data: bytearray = field(default_factory=bytearray)
    status: int | None = None
    timed_out: str = ""  # "cpu" or "wall": which limit stopped it
    cpu: float = 0.0  # CPU seconds of the job's processes, as last seen (exact once reaped)
    gate: int = -1  # prepared ahead: the pipe that lets its tests start (-1: started, or never held)
    wall_seconds: float = 0.0  # its wall-clock backstop, counted from the moment its tests may start


class NativeEngine:
    """The native engine: :func:`judge_many` behind the engine interface, at one sandbox level."""

    def __init__(self, sandbox: levels.Sandbox | levels.PendingSandbox | None = None) -> None:
        self._sandbox = sandbox

    @property
    def sandbox(self) -> levels.Sandbox:
        """The sandbox of this engine's learner processes (probed on first use when not given)."""
        if self._sandbox is None:
            self._sandbox = levels.choose("auto")
        elif isinstance(self._sandbox, levels.PendingSandbox):
            self._sandbox = self._sandbox.result()
        return self._sandbox

    def judge(self, jobs: Sequence[Job], parallel: int = 1,
              on_result: Callable[[int, Result], None] | None = None) -> list[Result]:
        sandbox = self._sandbox
        if sandbox is None and jobs:  # the best level here for these jobs' problems (each call's own)
            sandbox = levels.choose_ahead("auto", **_problems_options(jobs))
        if isinstance(sandbox, levels.PendingSandbox) and _forks() and jobs:
            _preload(warm_up=len(jobs) > 1)  # while the sandbox's probe runs on its own
        if isinstance(sandbox, levels.PendingSandbox):
            sandbox = sandbox.result()
            if self._sandbox is not None:
                self._sandbox = sandbox
        return judge_many(list(jobs), parallel, on_result, sandbox)


def _problems_options(jobs: Sequence[Job]) -> dict[str, Any]:
    return levels.problems_options({job.problem.path: job.problem for job in jobs}.values())


def judge_many(jobs: list[Job], parallel: int = 1,
               on_result: Callable[[int, Result], None] | None = None,
               sandbox: levels.Sandbox | None = None) -> list[Result]:
    """Judge several jobs, ``parallel`` at a time, each in its own test process; results in job order.

    ``on_result(index, result)`` is called as each job finishes (for progress reports). ``sandbox``
    is where learner processes run (default: the best level this machine offers).
    """
    sandbox = sandbox or levels.choose("auto", **_problems_options(jobs))
    _remove_abandoned(sandbox)
    results: list[Result | None] = [None] * len(jobs)
    pending = list(enumerate(jobs))
    running: dict[int, tuple[int, _Running]] = {}
    prepared: list[int] = []  # pids of the jobs prepared ahead, oldest first (in ``running`` too)
    slots = 1 if levels.one_identity(sandbox) else max(1, parallel)
    # only with a core to spare (with every core judging, preparing competes with the jobs: 3-5 % slower),
    # and not for a named user, a pool of one identity
    ahead = _forks() and slots < _cores() and sandbox.user is None

    def recorder(index: int, gated: bool = False) -> Callable[[_Running], None]:
        def record(run: _Running) -> None:  # called by _start with Ctrl-C held: never a job unknown to both
            running[run.pid] = (index, run)
            if gated:
                prepared.append(run.pid)

        return record

    def ended_at_once(index: int, result: Result) -> None:
        results[index] = result
        if on_result:
            on_result(index, result)

    try:
        while pending or running:
            while len(running) - len(prepared) < slots and (prepared or pending):
                if prepared:
                    _release(running[prepared.pop(0)][1])
                else:
                    index, job = pending.pop(0)
                    outcome = _start(job, sandbox, recorder(index), warm_up=len(jobs) > 1)
                    if not isinstance(outcome, _Running):
                        ended_at_once(index, outcome)
            if ahead and pending and not prepared:
                index, job = pending.pop(0)
                outcome = _start(job, sandbox, recorder(index, gated=True), gated=True)
                if not isinstance(outcome, _Running):
                    ended_at_once(index, outcome)
            ended = [(pid, *running.pop(pid)) for pid in _poll(running)]
            for pid, _, _ in ended:
                if pid in prepared:  # ended before its tests could start (a syntax or start error)
                    prepared.remove(pid)
            while prepared and len(running) - len(prepared) < slots:  # their turn comes before the clean-up
                _release(running[prepared.pop(0)][1])
            for _, index, run in ended:
                results[index] = _finish(run, sandbox)
                if on_result:
                    on_result(index, results[index])  # type: ignore[arg-type]  # just set
    finally:  # interrupted (Ctrl-C, an error): nothing of a job outlives the run
        for _, run in running.values():
            _kill_group(run.pid)
            _close_gate(run)
            if run.channel >= 0:
                os.close(run.channel)
                run.channel = -1
            _end_job(run)
        _reap(block=True)
    return results  # type: ignore[return-value]


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _release(run: _Running) -> None:
    """Let a job prepared ahead start its tests: from now on its wall-clock backstop counts."""
    try:
        os.write(run.gate, b"g")
    except OSError:  # it has ended already: _poll will see that
        pass
    _close_gate(run)
    run.deadline = time.monotonic() + run.wall_seconds


def _close_gate(run: _Running) -> None:
    if run.gate >= 0:
        os.close(run.gate)
        run.gate = -1


# children whose report was complete before they had exited: killed, reaped a little later
_exiting: list[int] = []


def _reap(block: bool = False) -> None:
    for pid in list(_exiting):
        try:
            done, _ = os.waitpid(pid, 0 if block else os.WNOHANG)
        except ChildProcessError:
            done = pid
        if done:
            _exiting.remove(pid)


def _start(job: Job, sandbox: levels.Sandbox, record: Callable[[_Running], None], warm_up: bool = True,
           gated: bool = False) -> _Running | Result:
    """Start ``job``'s test process and ``record`` it (the caller then owns its clean-up), or return the
    Result of a job that cannot start. ``gated``: prepared ahead, while other jobs run; it sets up the
    tests and its learner process, then waits for :func:`_release` before the first test (forks only)."""
    problem = job.problem
    try:
        source = job.code()
    except (OSError, UnicodeDecodeError) as exc:
        return Result.error(problem.id, f"{job.source_path}: cannot be read as UTF-8 text ({exc})",
                            problem.points or 0.0)
    forks = _forks()
    limit = job.limit + (FORK_ALLOWANCE if forks else SPAWN_ALLOWANCE)
    wall = limit * levels.WALL_BACKSTOP if cputime.available() else limit
    if job.wall_limit is not None:  # a platform's time for the whole submission, shared among its jobs
        wall = max(limit, min(wall, job.wall_limit))
    # from the first folder made to the caller's record of the job, an exception (a Ctrl-C, raised at the
    # next Python call) must leave no folder, identity or test process behind: each thing made is recorded
    # with Ctrl-C held, so that a Ctrl-C raised when the system call returns finds it recorded
    made = _Made(parent=os.getpid())
    try:
        with forking.ctrl_c_held():
            made.root = trees.held_folder(f"judge-{problem.id}-")  # private to this user: the tests live here
        made.take_identity(sandbox)  # this job's alone, until _end_job
        with forking.ctrl_c_held():
            made.space = JobSpace(make_job_folder(sandbox), (made.identity.uid, made.identity.gid)
                                  if made.identity else None)
        token = secrets.token_hex(16)
        payload = {"token": token, "problem_dir": str(problem.path), "source": source,
                   "root": made.root, "include_secret": job.include_secret, "keyword": job.keyword,
                   "memory_limit": job.memory_limit or problem.memory_limit,
                   "test_time_limit": min(problem.per_test_time_limit, job.limit),
                   "sandbox": dataclasses.asdict(sandbox), "lang": job.language(),
                   "space": {"folder": made.space.folder, "ids": made.space.ids}}
        read_end, write_end = made.pipe()
        gate_read, gate_write = made.pipe() if gated and forks else (-1, -1)
        if forks:  # the child inherits the loaded Problem: no second parse and syntax check
            _fork(dict(payload, problem=problem, gate=gate_read), read_end, write_end, made, warm_up, gate_write)
        else:
            _spawn(payload, write_end, made)
        made.close(write_end, gate_read)
        # a prepared job waits for its turn without a wall-clock limit: its CPU time still counts, and the
        # learner process's start has a limit of its own
        backstop = math.inf if gate_write >= 0 else time.monotonic() + wall
        run = _Running(job, made.pid, read_end, made.root, token, limit, backstop, made.space, made.identity,
                       gate=gate_write, wall_seconds=wall)
        with forking.ctrl_c_held():
            record(run)
            made.handed_over = True
        return run
    except BaseException:
        if os.getpid() != made.parent:  # a Ctrl-C that reached the forked child before its own set-up
            os._exit(ExitCode.INTERNAL)
        if not made.handed_over:
            made.undo()
        raise


@dataclass
class _Made:
    """What :func:`_start` has made so far, to be undone if it cannot hand the job over."""

    parent: int  # the judge's pid (a forked child leaves _start by another way)
    handed_over: bool = False  # recorded by the caller, which then cleans it up
    root: str = ""
    identity: identities.Identity | None = None
    space: JobSpace | None = None
    pid: int = 0
    descriptors: list[int] = field(default_factory=list)

    def take_identity(self, sandbox: levels.Sandbox) -> None:
        """The job's identity (where the level has one): each try with Ctrl-C held, so that a Ctrl-C raised
        as a try returns finds the identity recorded; the waits for a free one without."""
        deadline = time.monotonic() + identities.WAIT
        announce: float = identities.WAIT  # said once, on the first try that finds every identity taken
        while True:
            try:
                with forking.ctrl_c_held():
                    self.identity = levels.acquire_identity(sandbox, wait=0, announce=announce)
                return
            except levels.IdentitiesBusy:
                if time.monotonic() > deadline:
                    raise
                announce = 0
            time.sleep(0.05)

    def pipe(self) -> tuple[int, int]:
        with forking.ctrl_c_held():
            ends = os.pipe()
            self.descriptors.extend(ends)
        return ends

    def close(self, *descriptors: int) -> None:
        """Close the parent's copies of the ends only the child uses."""
        for descriptor in descriptors:
            if descriptor >= 0:
                with forking.ctrl_c_held():
                    self.descriptors.remove(descriptor)
                    os.close(descriptor)

    def undo(self) -> None:
        if self.pid:
            _kill_group(self.pid)
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)  # perhaps not yet the leader of its own group
            _exiting.append(self.pid)
        for descriptor in self.descriptors:
            with contextlib.suppress(OSError):
                os.close(descriptor)
        _free(self.identity, self.space.folder if self.space else "", self.root)


def _forks() -> bool:
    """Whether test processes are forked from this one (POSIX), not spawned (elsewhere, or ``JUDGE_SPAWN``)."""
    return hasattr(os, "fork") and not os.environ.get("JUDGE_SPAWN")


def _fork(payload: dict, read_end: int, write_end: int, made: _Made, warm_up: bool, gate_write: int = -1) -> None:
    """Fork the job's test process; its pid is in ``made`` before a Ctrl-C held during the fork is raised."""
    _preload(warm_up)
    problem = payload["problem"]  # its tests compiled here once, for every job of the problem
    code_cache.prepare(problem.test_files(payload["include_secret"]), problem.support_files)
    gc.freeze()  # keep the parent's objects out of the child's collections: fewer copied pages
    judge = os.getpid()
    with forking.ctrl_c_held():  # the child leaves the block too, with its mask as it was
        made.pid = os.fork()
    if made.pid == 0:  # the child
        try:
            os.setsid()
            _die_with(judge)
            os.close(read_end)
            if gate_write >= 0:
                os.close(gate_write)
            # the identity's lock stays open here too (it is not inherited further: close-on-exec), so the uid
            # is no other judge's while this process lives, even should it outlive a judge killed by SIGKILL
            _redirect_output(made.root)
            os.environ.update(_CHILD_ENV)
            sys.dont_write_bytecode = True
        except BaseException:  # noqa: BLE001
            os._exit(ExitCode.INTERNAL)
        from .native_child import run_job
        run_job(payload, write_end)


def _die_with(judge: int) -> None:
    """Be killed when the judge dies (Linux's parent-death signal): a test process that outlived a judge killed
    by SIGKILL (an OOM kill, a platform's hard stop) went on judging as root with no CPU limit, and ended every
    process of its uid, which the next judge on the machine had taken for another student's job."""
    if not forking.die_with_parent():
        return
    if os.getppid() != judge:  # the judge died before the signal was asked for
        os._exit(ExitCode.INTERNAL)


def _spawn(payload: dict, write_end: int, made: _Made) -> None:
    env = dict(os.environ, **_CHILD_ENV)
    env["PYTHONPATH"] = os.pathsep.join([_PACKAGE_ROOT] + [p for p in [env.get("PYTHONPATH")] if p])
    with open(os.path.join(made.root, ".stderr"), "wb") as stderr:
        process = subprocess.Popen([sys.executable, "-m", "judge.engines.native_child"], stdin=subprocess.PIPE,
                                   stdout=subprocess.DEVNULL, stderr=stderr, pass_fds=(write_end,),
                                   start_new_session=True, env=env, cwd=made.root)
    made.pid = process.pid
    process.returncode = 0  # reaped by _poll with os.waitpid, not by Popen
    payload = dict(payload, fd=write_end)
    stdin: IO[bytes] = process.stdin  # type: ignore[assignment]  # stdin=PIPE, binary
    try:
        stdin.write((json.dumps(payload) + "\n").encode())
        stdin.close()
    except OSError:
        pass


_CHILD_ENV = {"PYTHONDONTWRITEBYTECODE": "1", "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1",
              "MKL_NUM_THREADS": "1", "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "PYTHONIOENCODING": "utf-8"}


def _preload(warm_up: bool = True) -> None:
    """Import once in the parent what every child needs, and warm pytest up, so forks start warm.

    One job alone is not warmed up: its child would pay for pytest's first run either way, and the
    warm-up's own throw-away run would only add to it."""
    os.environ.update({k: v for k, v in _CHILD_ENV.items() if k.endswith("_THREADS")})
    import numpy  # noqa: F401
    import numpy.random  # noqa: F401  (numpy imports it on first use, in every child otherwise)
    import pytest  # noqa: F401

    from ..core import runner  # noqa: F401
    from ..sandbox import process, standin  # noqa: F401
    from . import native_child  # noqa: F401

    code_cache.install()

    if warm_up and not _warmed_up:
        _warmed_up.append(True)
        _warm_up()


_warmed_up: list[bool] = []


def _warm_up() -> None:
    """One throw-away run of a tiny problem in this process, before the first fork.

    A child's first ``pytest.main`` otherwise pays for what pytest sets up and imports on its first
    run (plugins, the assertion rewriter, numpy and pytest helpers used by the tests); a child
    inherits all that when it was done here once. No learner code runs here.
    """
    from ..core import runner
    from ..sandbox import inprocess, standin
    from .pyodide_boot import WARM_UP_SOURCE, write_warm_up_problem

    root = trees.held_folder("judge-warm-up-")
    learner = functools.partial(standin.session, start=lambda spec, side: inprocess.InProcessLearner(spec, side, root))
    try:
        with open(os.devnull, "w") as devnull, contextlib.redirect_stderr(devnull), \
                forking.ctrl_c_deferred():
            runner.judge_source(write_warm_up_problem(root), WARM_UP_SOURCE, learner=learner, workdir=root)
    except Exception:  # noqa: BLE001 - a warm-up that fails only costs speed
        pass
    finally:
        trees.remove_tree(root)


def _redirect_output(root: str) -> None:
    devnull = os.open(os.devnull, os.O_RDWR)
    errors = os.open(os.path.join(root, ".stderr"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(devnull, 0)
    os.dup2(devnull, 1)
    os.dup2(errors, 2)


def _poll(running: dict[int, tuple[int, _Running]]) -> list[int]:
    """Wait a little for output, exits or deadlines; return the pids that are finished."""
    forking.raise_if_pressed()
    runs = [run for _, run in running.values()]
    open_channels = [run.channel for run in runs if run.channel >= 0]
    wait = max(0.0, min(run.deadline for run in runs) - time.monotonic())
    ready = select.select(open_channels, [], [], min(wait, 0.05))[0] if open_channels else []
    if not open_channels:  # reports read: the children are exiting, reap them promptly
        time.sleep(min(wait, 0.002))
    for run in runs:
        if run.channel in ready:
            chunk = os.read(run.channel, 1 << 16)
            if chunk:
                run.data += chunk
            else:
                os.close(run.channel)
                run.channel = -1
    finished = []
    now = time.monotonic()
    processes = _cpu_snapshot(now)
    for run in runs:
        if run.status is None:
            pid, status, usage = os.wait4(run.pid, os.WNOHANG)
            if pid:
                run.status = status
                run.cpu = usage.ru_utime + usage.ru_stime  # the test process and all it reaped
        if run.status is None and not run.timed_out:
            if processes is not None:
                run.cpu = cputime.job_seconds(run.pid, processes=processes)
            if run.cpu > run.cpu_limit:
                run.timed_out = "cpu"
            elif now > run.deadline:
                run.timed_out = "wall"
            if run.timed_out:
                _kill_group(run.pid)
                run.status = os.waitpid(run.pid, 0)[1]
        if run.status is not None and (run.channel < 0 or run.timed_out or now > run.deadline + 2):
            finished.append(run.pid)
        elif run.status is None and run.channel < 0 and run.data.startswith(run.token.encode() + b"\n"):
            # the whole report is in (the child closed its end after writing it): the next job need
            # not wait for this process to finish exiting
            finished.append(run.pid)
    _reap()
    return finished


_CPU_EVERY = 0.5  # seconds between two readings of the jobs' CPU time (a whole /proc scan each)
_last_cpu_reading = [0.0]


def _cpu_snapshot(now: float) -> list | None:
    """The processes' CPU times, read at most every :data:`_CPU_EVERY` seconds (None in between)."""
    if not cputime.available() or now - _last_cpu_reading[0] < _CPU_EVERY:
        return None
    _last_cpu_reading[0] = now
    return cputime.snapshot()


def _remove_abandoned(sandbox: levels.Sandbox) -> None:
    """The folders a judge killed outright left behind (its learners' code among them): gone before any job
    of this one takes an identity that a leftover folder's learner had."""
    for parent in dict.fromkeys((tempfile.gettempdir(), os.path.dirname(sandbox.runtime))):
        trees.remove_abandoned(parent)


def _end_job(run: _Running, apart: bool = False) -> None:
    """Every process of the job's identity ended (verified) and its folders removed; on every path.
    ``apart``: removed by a process of their own while the judge goes on (see :func:`_free`)."""
    identity, run.identity = run.identity, None
    _free(identity, run.space.folder, run.root, apart=apart)


def _free(identity: identities.Identity | None, *folders: str, apart: bool = False) -> None:
    """End the identity's processes, remove ``folders``, then give the identity back: no job takes the uid
    while they are there. ``apart``: a forked process removes them (:func:`trees.remove_apart`; reaped with
    the test processes, waited for before :func:`judge_many` returns) and holds the identity until they are
    gone: a job that filled its folder with entries does not hold up the loop that watches every other job."""
    folders = tuple(folder for folder in folders if folder)
    removed = False

    def remove(lock: int = -1) -> None:
        nonlocal removed
        remover = trees.remove_apart(folders, holding=lock) if apart else None
        if remover is not None:
            _exiting.append(remover)
        else:
            for folder in folders:
                trees.remove_tree(folder)
        removed = True

    try:
        if identity is not None:
            identities.release(identity, then=remove)
        else:
            remove()
    except identities.IdentityError as exc:  # never reused: its lock stays held until the judge exits
        print(f"judge: {exc}", file=sys.stderr)
    finally:
        if not removed:
            for folder in folders:
                trees.remove_tree(folder)


def _finish(run: _Running, sandbox: levels.Sandbox) -> Result:
    if run.status is None and cputime.available():  # its report is in, it is exiting: its CPU time so far
        run.cpu = max(run.cpu, cputime.job_seconds(run.pid))
    _kill_group(run.pid)  # whatever the learner's code started dies with the group
    if run.status is None:
        _exiting.append(run.pid)
    if run.channel >= 0:
        os.close(run.channel)
    problem = run.job.problem
    try:
        stderr = Path(run.root, ".stderr").read_bytes()[-_STDERR_TAIL:]
    except OSError:
        stderr = b""
    # apart when the test process left its learner's folder (stopped at a limit): one that ended by itself removed
    # it, and a fork per job would cost more than the lock file left; one identity: the next job waits anyway
    _end_job(run, apart=not levels.one_identity(sandbox) and trees.holds_more_than_its_lock(run.space.folder))
    if run.timed_out:
        seconds = _limit_hit(run)
        result = Result.timeout(problem.id, seconds, problem.points or 0.0, clock=run.timed_out)
    else:
        result = _parse(problem, bytes(run.data), run.token, _exit_code(run.status), stderr)
    result.sandbox = sandbox.level
    result.cpu_seconds = run.cpu
    return result


def _exit_code(status: int | None) -> int:
    if status is None:
        return -1
    return -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)


def _limit_hit(run: _Running) -> float:
    """The seconds of the limit that stopped ``run``, as its message says them: the job's CPU time limit, or
    its wall-clock backstop (whole seconds of it: the allowance for starting the job is not the learner's)."""
    if run.timed_out == "wall" and cputime.available():
        return float(math.floor(run.wall_seconds)) if run.job.wall_limit is not None else \
            run.job.limit * levels.WALL_BACKSTOP
    return run.job.limit


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _parse(problem: Problem, data: bytes, token: str, returncode: int, stderr: bytes) -> Result:
    head, _, body = data.partition(b"\n")
    if data and head.decode(errors="replace") == token:
        try:
            return Result.from_dict(json.loads(body))
        except (ValueError, KeyError, TypeError) as exc:
            return Result.error(problem.id, f"{INTERNAL_ERROR}the judge's report could not be read ({exc})",
                                problem.points or 0.0)
    return Result.error(problem.id, _early_exit_message(returncode, stderr), problem.points or 0.0)


def _early_exit_message(returncode: int, stderr: bytes) -> str:
    """Why a test process ended without a report: never the learner's code (it runs elsewhere), so a
    fault of the judge or of the machine; the tail of its stderr says more."""
    tail = stderr.decode(errors="replace").strip().splitlines()[-3:]
    if returncode < 0:
        name = signal.Signals(-returncode).name if -returncode in signal.valid_signals() else str(-returncode)
        reason = f"{INTERNAL_ERROR}the judge's test process was killed by {name} before the tests finished"
    else:
        reason = f"{INTERNAL_ERROR}the judge's test process ended with exit code {returncode} before the tests finished"
    return reason + ("\n" + "\n".join(tail) if tail else "")
