"""The native engine's per-test time limit: a test that runs too long fails alone.

A pytest plugin that arms a wall-clock timer (``SIGALRM``) around each test's call phase. When it
fires, the test fails with :class:`TestTimedOut` and the run goes on with the next test, so one
infinite loop costs one test, not the problem. The problem's own time limit (enforced by the
parent process) still bounds the whole run: code that blocks signals, or loops inside native code
that does not return to Python, is stopped by it.

Native only (POSIX signals): the browser engine has no such timer and stops the whole run at the
problem's limit instead (docs/grading.md says so).
"""

from __future__ import annotations

import signal
from collections.abc import Generator
from typing import Any

import pytest


class TestTimedOut(BaseException):
    """Raised inside a test that ran past its limit (a BaseException: ``except Exception`` cannot swallow it)."""

    __test__ = False  # not a test class, whatever pytest's naming rules say


class TestTimer:
    """Fails a test whose call phase runs longer than ``seconds``."""

    __test__ = False

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Generator[None, Any, None]:
        if not hasattr(signal, "setitimer") or self.seconds <= 0:
            yield
            return
        previous = signal.signal(signal.SIGALRM, self._expired)
        signal.setitimer(signal.ITIMER_REAL, self.seconds)
        try:
            yield
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)

    def _expired(self, signum: int, frame: object) -> None:
        raise TestTimedOut(f"the test ran longer than its {self.seconds:g} s limit and was stopped "
                           "(an infinite loop, or a far too slow algorithm?)")
