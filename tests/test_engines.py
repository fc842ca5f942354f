"""The engine interface and the format registry: one Job type, engines and formats found by name."""

from __future__ import annotations

import pytest

from judge.core.problem import load_problem
from judge.engines import ENGINES, Job, get_engine
from judge.formats import FORMATS, get
from tests.conftest import FIXTURE_PROBLEMS, SOLUTIONS, run_cli


def test_engines_are_found_by_name_and_unknown_ones_are_refused():
    assert set(ENGINES) == {"native", "pyodide"}
    with pytest.raises(ValueError, match="unknown engine 'gpu'"):
        get_engine("gpu")


def test_native_engine_judges_jobs_in_order_with_one_time_limit():
    problem = load_problem(FIXTURE_PROBLEMS / "fx-add")
    jobs = [Job(problem, SOLUTIONS / "passing.py"), Job(problem, source="def add(a, b):\n    return 0\n"),
            Job(problem, SOLUTIONS / "timeout.py", time_limit=1.0)]
    seen: list[int] = []
    results = get_engine("native").judge(jobs, parallel=2, on_result=lambda index, _: seen.append(index))
    assert [r.status for r in results] == ["passed", "failed", "timeout"]
    assert sorted(seen) == [0, 1, 2]
    assert results[2].message.startswith("timed out after ") and jobs[2].limit == 1.0 and jobs[0].limit == problem.time_limit


def test_every_registered_format_has_its_option_and_renders():
    problem = load_problem(FIXTURE_PROBLEMS / "fx-add")
    [result] = get_engine("native").judge([Job(problem, SOLUTIONS / "partly_failing.py")])
    help_text = run_cli("--help").stdout
    for name, fmt in FORMATS.items():
        assert fmt.option in help_text, name
        assert get(name).render([result]).strip(), name
    with pytest.raises(KeyError, match="unknown format 'yaml'"):
        get("yaml")


def test_a_lone_surrogate_in_the_learners_message_fails_its_tests_and_ends_no_run():
    """A str may hold a lone surrogate (``ValueError("\\ud800")``), UTF-8 cannot: the test process used to
    end with exit 70 writing the Result ("internal error", the judge's own traceback shown to the learner)."""
    problem = load_problem(FIXTURE_PROBLEMS / "fx-add")
    source = 'def add(a, b):\n    raise ValueError("wrong \\ud800 answer")\n'
    [result] = get_engine("native").judge([Job(problem, source=source, time_limit=10.0)])
    assert (result.status, result.passed) == ("failed", 0), result.message
    messages = [t.message for t in result.tests]
    assert all("wrong \ufffd answer" in m for m in messages), messages
