"""Ctrl-C stops the judge even where Python drops the KeyboardInterrupt it raises.

A KeyboardInterrupt raised while a destructor runs (also a weakref callback, a garbage collection, a
fork handler) is printed as "Exception ignored" and the program goes on: a Ctrl-C whose handler ran
there was lost, and ``judge grade`` went on grading. The command line's latch
(:func:`judge.sandbox.forking.ctrl_c_latched`) remembers the press, and the judging loop raises it.
"""

from __future__ import annotations

import os
import signal
import tempfile
import threading

import pytest

from judge.engines import native
from judge.engines.native import judge_many
from judge.sandbox import forking, levels, process
from tests.conftest import FIXTURE_PROBLEMS, folder_job

CORRECT = "def add(a, b):\n    return a + b\n"
# each press below is dropped on purpose, and pytest reports a dropped exception as a warning
pytestmark = [pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
              pytest.mark.usefixtures("ctrl_c_as_in_a_terminal")]

SLEEPS = "import time\n\ntime.sleep(20)\n\n\ndef add(a, b):\n    return a + b\n"


def ctrl_c_to_the_main_thread() -> None:
    """SIGINT as a terminal's Ctrl-C reaches the judge, which has no other thread while jobs start. (The
    kernel gives a signal sent to the process to any thread that does not block it: a pytest-xdist
    worker's other threads would take it and defeat the hold being tested.)"""
    signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)


class _PressesCtrlC:
    """Presses Ctrl-C from its destructor, where the KeyboardInterrupt it causes is dropped."""

    def __del__(self) -> None:
        os.kill(os.getpid(), signal.SIGINT)
        for _ in range(1000):  # the handler runs at one of these Python instructions, inside the destructor
            pass


def test_without_the_latch_a_ctrl_c_in_a_destructor_is_lost():
    """The control: what the latch is for."""
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    _PressesCtrlC()  # prints "Exception ignored in: ... KeyboardInterrupt"
    forking.raise_if_pressed()  # nothing was remembered


def test_a_ctrl_c_dropped_in_a_destructor_is_raised_again():
    with forking.ctrl_c_latched():
        _PressesCtrlC()
        with pytest.raises(KeyboardInterrupt):
            forking.raise_if_pressed()
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler, "the handler is restored"
    forking.raise_if_pressed()  # and the press forgotten


def test_a_ctrl_c_dropped_while_judging_stops_the_run():
    """The press is dropped between two jobs (in the progress callback's destructor); the judging loop
    raises it at its next turn instead of judging the job that sleeps."""
    jobs = [folder_job(FIXTURE_PROBLEMS / "fx-add", CORRECT, label="first"),
            folder_job(FIXTURE_PROBLEMS / "fx-add", SLEEPS, time_limit=60.0, label="sleeps")]
    finished: list[str] = []

    def on_result(index: int, result: object) -> None:
        finished.append(jobs[index].label)
        _PressesCtrlC()

    with forking.ctrl_c_latched(), pytest.raises(KeyboardInterrupt):
        judge_many(jobs, parallel=1, on_result=on_result, sandbox=levels.choose("plain"))
    assert finished == ["first"], finished


def test_an_ignored_ctrl_c_stays_ignored():
    """A judge started in the background (SIGINT ignored, as a shell does for ``judge grade &``) keeps it so."""
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        with forking.ctrl_c_latched():
            assert signal.getsignal(signal.SIGINT) == signal.SIG_IGN
            with forking.ctrl_c_deferred():  # the warm-up's hold
                assert signal.getsignal(signal.SIGINT) == signal.SIG_IGN
        assert signal.getsignal(signal.SIGINT) == signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, previous)


def stop_to_the_main_thread(number: int) -> None:
    signal.pthread_kill(threading.main_thread().ident, number)


@pytest.mark.parametrize("stop", forking.STOP_SIGNALS, ids=[s.name for s in forking.STOP_SIGNALS])
def test_a_stop_signal_is_a_ctrl_c_held_deferred_and_latched_as_one(stop):
    """SIGTERM (a container, a platform's time limit) and SIGHUP (a closed terminal) end a command as
    Ctrl-C does, so its jobs are ended and their folders removed; not inside a fork's hold (the job must
    be recorded first), nor inside code that catches KeyboardInterrupt itself."""
    assert signal.getsignal(stop) == signal.SIG_DFL
    with forking.ctrl_c_latched():
        with pytest.raises(KeyboardInterrupt):
            stop_to_the_main_thread(stop)
            for _ in range(1000):
                pass
        with pytest.raises(KeyboardInterrupt):
            forking.raise_if_pressed()
        for block in (forking.ctrl_c_held, forking.ctrl_c_deferred):
            went_through = []
            with pytest.raises(KeyboardInterrupt), block():
                stop_to_the_main_thread(stop)
                for _ in range(1000):
                    pass
                went_through.append("the block")
            assert went_through == ["the block"], f"a stop signal was raised inside {block.__name__}"
    assert signal.getsignal(stop) == signal.SIG_DFL, "the default is restored"


def test_a_judge_started_in_the_background_still_ends_its_run_when_stopped():
    """SIGINT ignored (``judge grade &`` in a script) stays ignored, but SIGTERM still ends the command as
    Ctrl-C would, held and deferred alike: a container or a platform stops such a judge too."""
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        with forking.ctrl_c_latched():
            assert signal.getsignal(signal.SIGINT) == signal.SIG_IGN
            for block in (forking.ctrl_c_held, forking.ctrl_c_deferred):
                went_through = []
                with pytest.raises(KeyboardInterrupt), block():
                    stop_to_the_main_thread(signal.SIGTERM)
                    for _ in range(1000):
                        pass
                    went_through.append("the block")
                assert went_through == ["the block"], block.__name__
        assert signal.getsignal(signal.SIGINT) == signal.SIG_IGN
        assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL
    finally:
        signal.signal(signal.SIGINT, previous)


def test_an_ignored_hang_up_stays_ignored():
    """A judge started under nohup (SIGHUP ignored) keeps ignoring it."""
    previous = signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        with forking.ctrl_c_latched():
            assert signal.getsignal(signal.SIGHUP) == signal.SIG_IGN
        assert signal.getsignal(signal.SIGHUP) == signal.SIG_IGN
    finally:
        signal.signal(signal.SIGHUP, previous)


@pytest.mark.parametrize("landing", ["identity", "job folder", "during the fork", "after the fork", "after the spawn"])
def test_a_ctrl_c_while_a_job_starts_leaves_nothing_of_it(tmp_path, monkeypatch, landing):
    """Seen once in a full run: a Ctrl-C between the job's first folder and its record left
    ``judge-fx-add-*`` behind. Wherever it lands while the job starts, the job's folders, descriptors
    and test process go with it."""
    sandbox = levels.choose("plain")  # its runtime folder made before /tmp is watched
    watched = tmp_path / "tmp"
    watched.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(watched))
    made: list[str] = []
    forked: list[int] = []

    def make_job_folder(level: levels.Sandbox) -> str:
        if landing == "job folder":
            raise KeyboardInterrupt
        made.append(process.make_job_folder(level))
        return made[-1]

    def acquire_identity(level: levels.Sandbox, wait: float = 0.0, announce: float | None = None) -> None:
        if landing == "identity":
            raise KeyboardInterrupt

    def started(start):
        def start_then_ctrl_c(*args) -> None:
            start(*args)
            forked.extend(made.pid for made in args if isinstance(made, native._Made))
            raise KeyboardInterrupt

        return start_then_ctrl_c

    def fork_then_ctrl_c() -> int:
        """os.fork, and in the judge a real Ctrl-C while the fork still holds it back."""
        pid = real_os_fork()
        if pid:
            forked.append(pid)
            ctrl_c_to_the_main_thread()
        return pid

    ended: dict[int, int] = {}

    def waitpid(pid: int, options: int) -> tuple[int, int]:
        done, status = real_waitpid(pid, options)
        if done:
            ended[done] = status
        return done, status

    real_fork, real_spawn, real_os_fork, real_waitpid = native._fork, native._spawn, os.fork, os.waitpid
    monkeypatch.setattr(os, "waitpid", waitpid)
    monkeypatch.setattr(native, "make_job_folder", make_job_folder)
    monkeypatch.setattr(levels, "acquire_identity", acquire_identity)
    if landing == "during the fork":
        monkeypatch.setattr(os, "fork", fork_then_ctrl_c)
    if landing == "after the fork":
        monkeypatch.setattr(native, "_fork", started(real_fork))
    if landing == "after the spawn":
        monkeypatch.setenv("JUDGE_SPAWN", "1")
        monkeypatch.setattr(native, "_spawn", started(real_spawn))
    descriptors = sorted(os.listdir("/proc/self/fd"))
    with pytest.raises(KeyboardInterrupt):
        judge_many([folder_job(FIXTURE_PROBLEMS / "fx-add", CORRECT)], parallel=1, sandbox=sandbox)
    assert sorted(p.name for p in watched.iterdir()) == []
    assert [folder for folder in made if os.path.exists(folder)] == []
    assert sorted(os.listdir("/proc/self/fd")) == descriptors
    if forked:
        [pid] = forked
        assert os.WIFSIGNALED(ended[pid]) and os.WTERMSIG(ended[pid]) == signal.SIGKILL, "killed, and reaped"
    assert bool(forked) == (landing not in ("identity", "job folder"))


@pytest.mark.skipif(os.geteuid() != 0, reason="sandbox identities are taken by root")
def test_a_ctrl_c_as_the_jobs_identity_is_taken_gives_it_back(tmp_path, monkeypatch):
    """A real Ctrl-C arriving as the identity's lock is taken (held back, raised as the try ends): the
    identity is recorded first and given back, not left locked until the judge exits."""
    import dataclasses
    import fcntl

    from judge.sandbox import identities

    sandbox = dataclasses.replace(levels.choose("plain"), as_identity=True)  # a job identity, as root
    taken: list[identities.Identity] = []

    def acquire_then_ctrl_c(level: levels.Sandbox, wait: float = 0.0,
                            announce: float | None = None) -> identities.Identity | None:
        identity = real_acquire(level, wait=wait, announce=announce)
        assert identity is not None
        taken.append(identity)
        ctrl_c_to_the_main_thread()
        return identity

    real_acquire = levels.acquire_identity
    monkeypatch.setattr(levels, "acquire_identity", acquire_then_ctrl_c)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    with pytest.raises(KeyboardInterrupt):
        judge_many([folder_job(FIXTURE_PROBLEMS / "fx-add", CORRECT)], parallel=1, sandbox=sandbox)
    [identity] = taken
    lock = os.open(os.path.join(identities._lock_folder(), f"uid-{identity.uid}.lock"), os.O_RDWR)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)  # BlockingIOError while the judge still holds it
    finally:
        os.close(lock)
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_a_ctrl_c_while_a_job_runs_closes_its_channel(tmp_path, monkeypatch):
    """Interrupted while a job runs: its test process killed, its folders removed, and the judge's end
    of its channel closed (it was left open)."""
    sandbox = levels.choose("plain")
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    polls: list[int] = []

    def poll_then_ctrl_c(running):
        polls.append(len(running))
        if len(polls) == 3:
            raise KeyboardInterrupt
        return real_poll(running)

    real_poll = native._poll
    monkeypatch.setattr(native, "_poll", poll_then_ctrl_c)
    descriptors = sorted(os.listdir("/proc/self/fd"))
    with pytest.raises(KeyboardInterrupt):
        judge_many([folder_job(FIXTURE_PROBLEMS / "fx-add", SLEEPS, time_limit=60.0)], parallel=1, sandbox=sandbox)
    assert polls[-1] == 1, "the job was running"
    assert sorted(os.listdir("/proc/self/fd")) == descriptors
    assert sorted(p.name for p in tmp_path.iterdir()) == []
