"""Ctrl-C stops the judge even where Python drops the KeyboardInterrupt it raises.

A KeyboardInterrupt raised while a destructor runs (also a weakref callback, a garbage collection, a
fork handler) is printed as "Exception ignored" and the program goes on: a Ctrl-C whose handler ran
there was lost, and ``judge grade`` went on grading. The command line's latch
(:func:`judge.sandbox.forking.ctrl_c_latched`) remembers the press, and the judging loop raises it.
"""

from __future__ import annotations

import os
import signal

import pytest

from judge.engines.native import judge_many
from judge.sandbox import forking, levels
from tests.conftest import FIXTURE_PROBLEMS, folder_job

CORRECT = "def add(a, b):\n    return a + b\n"
# each press below is dropped on purpose, and pytest reports a dropped exception as a warning
pytestmark = [pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
              pytest.mark.usefixtures("ctrl_c_as_in_a_terminal")]

SLEEPS = "import time\n\ntime.sleep(20)\n\n\ndef add(a, b):\n    return a + b\n"


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
