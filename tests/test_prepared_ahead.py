"""Jobs prepared ahead: while a job's tests run, the next job's test process and learner process start.

At ``-j 1`` the next job is set up (its work directory, its learner process, the learner's module
imported) while the current one runs, and waits at a gate until the current one ends; only then do
its tests start, and only then does its wall-clock backstop count. What a prepared job's learner code
does before its turn (a loop at import) is stopped as it would be otherwise, and the jobs after it
still run. No assertion here is about how long anything took: the first shows the order of events.
Also here: a Ctrl-C while the judge warms pytest up in its own process stops the judge.
"""

from __future__ import annotations

import re
import time

import pytest

from judge.core import runner
from judge.core.problem import load_problem
from judge.engines import Job
from judge.engines.native import judge_many
from tests.conftest import FIXTURE_PROBLEMS

SLOW = "import time\n\n\ndef add(a, b):\n    time.sleep(0.5)\n    return a + b\n"
CORRECT = "def add(a, b):\n    return a + b\n"
#: every call returns the moment the module was first imported (each test imports it afresh; the
#: first import's time is kept in the learner's own folder), which the failing tests' messages show
TELLS_WHEN_IMPORTED = """
import os
import time

if not os.path.exists("first-import"):
    with open("first-import", "w") as file:
        file.write(repr(time.time()))
with open("first-import") as file:
    FIRST_IMPORT = float(file.read())


def add(a, b):
    return FIRST_IMPORT
"""
LOOPS_AT_IMPORT = "while True:\n    pass\n\n\ndef add(a, b):\n    return a + b\n"


@pytest.fixture(autouse=True)
def a_core_to_spare(monkeypatch):
    """Jobs are prepared ahead only with a core to spare: two cores for one job at a time, whatever the machine."""
    from judge.engines import native

    monkeypatch.setattr(native, "_cores", lambda: 2)


def _judge_in_turn(sources: list[str], limit: float = 5.0) -> tuple[list, dict[int, float]]:
    problem = load_problem(FIXTURE_PROBLEMS / "fx-add")
    ended: dict[int, float] = {}
    results = judge_many([Job(problem, source=s, time_limit=limit) for s in sources], parallel=1,
                         on_result=lambda index, _: ended.setdefault(index, time.time()))
    return results, ended


def test_the_next_job_is_set_up_while_the_one_before_it_runs():
    results, ended = _judge_in_turn([SLOW, TELLS_WHEN_IMPORTED, CORRECT])
    assert [r.status for r in results] == ["passed", "failed", "passed"], [r.message for r in results]
    stamps = {float(n) for t in results[1].tests for n in re.findall(r"\d{9,}\.\d+", t.message)}
    assert len(stamps) == 1, [t.message for t in results[1].tests]
    # the second job's learner module was imported before the first job (two seconds of sleeps) ended
    assert stamps.pop() < ended[0], (stamps, ended)


def test_a_prepared_job_that_loops_at_import_is_stopped_and_the_jobs_after_it_run():
    results, _ = _judge_in_turn([SLOW, LOOPS_AT_IMPORT, CORRECT], limit=2.0)
    assert [r.status for r in results] == ["passed", "timeout", "passed"], [r.message for r in results]
    assert results[2].points == results[2].max_points


@pytest.mark.usefixtures("ctrl_c_as_in_a_terminal")
def test_ctrl_c_during_the_warm_up_stops_the_judge(monkeypatch, tmp_path):
    """The warm-up runs pytest in the judge's own process, and pytest returns when a KeyboardInterrupt
    reaches it: a Ctrl-C there must still stop the judge (it went on grading before)."""
    from judge.engines import native

    (tmp_path / "test_ctrl_c.py").write_text("import os, signal\n\n\ndef test_pressed():\n"
                                             "    os.kill(os.getpid(), signal.SIGINT)\n")
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")  # as in the judge: no installed plugin
    monkeypatch.setattr(runner, "judge_source", lambda *args, **kwargs: pytest.main(
        [str(tmp_path), "-q", "-p", "no:cacheprovider"]))
    with pytest.raises(KeyboardInterrupt):
        native._warm_up()
