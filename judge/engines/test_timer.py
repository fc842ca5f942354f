"""The native engine's per-test time limit: a test that runs too long fails alone.

A pytest plugin that watches each test's call phase. What it counts is CPU time: the test
process's own and that of the learner processes it started (:mod:`judge.sandbox.cputime`), so a
busy machine, which stretches wall-clock time, never fails correct work. Wall-clock time stops a
test only past :data:`judge.sandbox.levels.WALL_BACKSTOP` times the limit (a learner that sleeps or
waits forever). A ``SIGALRM`` timer wakes the test process every fraction of a second to look; when
a limit is past, the test fails with :class:`TestTimedOut` and the run goes on with the next test,
so one infinite loop costs one test, not the problem. The problem's own time limit (enforced by
the parent process, on the same clocks) still bounds the whole run: code that blocks signals, or
loops inside native code that does not return to Python, is stopped by it.

Native only (POSIX signals): the browser engine has no such timer and stops the whole run at the
problem's limit instead (docs/grading.md says so).
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Generator
from typing import Any

import pytest

from ..sandbox import cputime, levels

CHECK_EVERY = 0.25  # seconds of wall-clock time between two looks at the clocks


class TestTimedOut(BaseException):
    """Raised inside a test that ran past its limit (a BaseException: ``except Exception`` cannot swallow it)."""

    __test__ = False  # not a test class, whatever pytest's naming rules say


class TestTimer:
    """Fails a test whose call phase uses more than ``seconds`` of CPU time (or runs far too long)."""

    __test__ = False

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self._cpu_start = 0.0
        self._wall_end = 0.0

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Generator[None, Any, None]:
        if not hasattr(signal, "setitimer") or self.seconds <= 0:
            yield
            return
        counts_cpu = cputime.available()
        self._wall_end = time.monotonic() + self.seconds * (levels.WALL_BACKSTOP if counts_cpu else 1)
        self._cpu_start = self._cpu_used() if counts_cpu else 0.0
        previous = signal.signal(signal.SIGALRM, self._look if counts_cpu else self._wall_expired)
        if counts_cpu:
            signal.setitimer(signal.ITIMER_REAL, CHECK_EVERY, CHECK_EVERY)
        else:
            signal.setitimer(signal.ITIMER_REAL, self.seconds)
        try:
            yield
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)

    def _cpu_used(self) -> float:
        return cputime.tree_seconds(os.getpid())

    def _look(self, signum: int, frame: object) -> None:
        if self._cpu_used() - self._cpu_start > self.seconds:
            signal.setitimer(signal.ITIMER_REAL, 0)
            raise TestTimedOut(f"the test used more than its {self.seconds:g} s of CPU time and was stopped "
                               "(an infinite loop, or a far too slow algorithm?)")
        if time.monotonic() > self._wall_end:
            self._wall_expired(signum, frame)

    def _wall_expired(self, signum: int, frame: object) -> None:
        signal.setitimer(signal.ITIMER_REAL, 0)
        waited = self.seconds * (levels.WALL_BACKSTOP if cputime.available() else 1)
        raise TestTimedOut(f"the test was still running after {waited:g} s of wall-clock time and was stopped "
                           "(code that waits or sleeps, or an infinite loop)")
