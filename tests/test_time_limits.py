"""Time limits count CPU time natively, so a busy grader never fails correct work.

A correct solution that needs real work keeps full marks while every core is taken by busy loops of
other processes; a loop is stopped by its CPU time and said to be; code that only waits is stopped
by the wall-clock backstop (:data:`judge.sandbox.levels.WALL_BACKSTOP` times the limit) and said to
be. No assertion here is about how long anything took.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from judge.core.problem import load_problem
from judge.engines import Job, get_engine
from judge.sandbox import levels
from tests.conftest import FIXTURE_PROBLEMS

#: each call burns 0.3 s of its own process's CPU time: 1.2 s for fx-add's four calls, far from its
#: 3 s limit in CPU time, and well past it in wall-clock time once other work takes most of the cores
WORKS_HARD = """
import time


def add(a, b):
    started = time.process_time()
    while time.process_time() - started < 0.3:
        pass
    return a + b
"""
LOOPS = "def add(a, b):\n    while True:\n        pass\n"
WAITS = "import time\n\n\ndef add(a, b):\n    time.sleep(3600)\n"


@pytest.fixture
def busy_cores():
    """Two busy loops per core, for the length of the test."""
    loops = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2 * (os.cpu_count() or 1))]
    yield
    for loop in loops:
        loop.kill()
        loop.wait()


def judge(source: str, limit: float):
    problem = load_problem(FIXTURE_PROBLEMS / "fx-add")
    return get_engine("native").judge([Job(problem, source=source, time_limit=limit)])[0]


def test_a_correct_solution_keeps_full_marks_with_every_core_busy(busy_cores):
    result = judge(WORKS_HARD, 3.0)
    assert (result.status, result.passed, result.total) == ("passed", 4, 4), result.message or [
        t.message for t in result.tests if t.outcome != "passed"]


def test_a_loop_is_stopped_by_its_cpu_time_and_the_message_says_so(monkeypatch):
    monkeypatch.setattr(levels, "WALL_BACKSTOP", 1000.0)  # only the CPU-time limit can stop it
    result = judge(LOOPS, 1.0)
    # each test's learner loops until that test's limit, is killed and replaced: the job's CPU time
    # (the replaced processes' included) reaches the job's limit in the second test
    assert (result.status, result.message) == (
        "timeout", "timed out after 1 s of CPU time (a loop that never ends, or a far too slow algorithm?)")


def test_code_that_only_waits_is_stopped_by_the_wall_clock_backstop_and_the_message_says_so(monkeypatch):
    # a backstop of 2x: the job's wall clock (2 x 2 s) runs out long before its CPU time (2 s) can, however
    # many learner processes the timed-out tests replace and however busy the machine (at 10x a 0.3 s
    # limit, the replacements' start-ups on a loaded grader once reached the CPU limit first)
    monkeypatch.setattr(levels, "WALL_BACKSTOP", 2.0)
    result = judge(WAITS, 1.5)
    messages = [result.message, *(t.message for t in result.tests)]
    assert any("wall-clock time" in m for m in messages), messages
    assert result.points == 0


@pytest.mark.skipif(os.geteuid() != 0, reason="bubblewrap's fallback to the user level is a root's choice")
def test_where_bwrap_cannot_make_namespaces_the_message_names_the_cause(tmp_path: Path, monkeypatch):
    """As on Gradescope: bwrap is installed but the kernel refuses it namespaces."""
    fake = tmp_path / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bwrap: No permissions to creating new namespace, likely because the kernel "
                    "does not allow non-privileged user namespaces.' >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:{os.environ['PATH']}")
    levels._choose.cache_clear()
    try:
        with pytest.raises(levels.SandboxError) as caught:
            levels.choose("bubblewrap", grading=True)
    finally:
        levels._choose.cache_clear()
    assert "does not let bwrap create namespaces" in str(caught.value)
    assert "the user level is the one expected here" in str(caught.value)
