"""Public-only grading is fair: where the secret tests are left out (``--public-only``, the browser,
GitHub Classroom's default export), a problem is scored over the objectives its public tests check,
so every bundled problem's reference earns full points on the public tests alone.

The Classroom side (the exported workflow's runners read by the reporter) is in tests/test_export.py.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import jsonschema
import pytest

from judge.core.problem import discover_problems, load_problem
from judge.core.result import ObjectiveResult, Result
from judge.core.result import TestResult as Case
from judge.core.scoring import rescore, score_result, uncounted
from tests.conftest import PROBLEMS, ROOT
from tests.conftest import judge_cli as run_cli  # in this process

SCHEMA = json.loads((ROOT / "judge" / "core" / "schema" / "result.schema.json").read_text())


def _bundled():
    problems, errors = discover_problems(PROBLEMS)
    assert not errors
    return problems


def references_folder(dest: Path) -> Path:
    """A practice folder holding every bundled problem's reference solution."""
    for problem in _bundled():
        (dest / problem.id).mkdir(parents=True)
        shutil.copy(problem.reference_path, dest / problem.id / problem.entry)
    return dest


@pytest.mark.slow  # judges every problem
def test_every_reference_earns_full_points_on_the_public_tests_alone(tmp_path):
    """The terminal and --json, as a learner runs them: PASS is never beside less than full points."""
    practice = references_folder(tmp_path / "practice")
    out = tmp_path / "results.json"
    done = run_cli(str(practice), "--public-only", "--json", str(out), "-j", "2", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    problems = {p.id: p for p in _bundled()}
    lines = [line for line in done.stdout.splitlines() if line.startswith("PASS")]
    assert len(lines) == len(problems), done.stdout
    for line in lines:
        shown = re.search(r"([\d.]+)/([\d.]+) points", line)
        assert shown and shown[1] == shown[2] == "10", line
    data = json.loads(out.read_text())
    for result in data["results"]:
        jsonschema.validate(result, SCHEMA)
        problem = problems[result["problem"]]
        assert result["status"] == "passed"
        assert result["points"] == result["max_points"] == problem.points, result["problem"]
        assert sum(o["max_points"] for o in result["objectives"]) == pytest.approx(problem.points, abs=1e-3)
        assert all(o["points"] == o["max_points"] for o in result["objectives"])
        assert all(o["total"] > 0 for o in result["objectives"]), "an objective left in has a public test"
    # the problems whose objectives are partly checked by secret tests only are named, once
    assert "note: public tests only" in done.stdout and "pp-quiz (5/6)" in done.stdout
    assert "pp-bubble-math (1/8)" in done.stdout


def test_an_untouched_starter_still_earns_nothing_on_the_public_tests(tmp_path):
    practice = tmp_path / "practice"
    quiz = load_problem(PROBLEMS / "pp-quiz")
    (practice / quiz.id).mkdir(parents=True)
    (practice / quiz.id / quiz.entry).write_text(quiz.starter)
    out = tmp_path / "results.json"
    run_cli(str(practice / quiz.id), "--public-only", "--json", str(out), cwd=tmp_path)
    [result] = json.loads(out.read_text())["results"]
    assert result["points"] == 0 and result["max_points"] == 10


def _quiz_run(outcomes: dict[str, str], status: str = "failed") -> Result:
    tests = [Case(id=f"tests/public/test_quiz.py::{name}", name=name, file="tests/public/test_quiz.py",
                        visibility="public", outcome=outcome, objective="form") for name, outcome in outcomes.items()]
    return Result(problem="pp-quiz", status=status, tests=tests)


def test_objectives_without_a_test_in_the_run_do_not_count_and_the_others_are_scaled():
    quiz = load_problem(PROBLEMS / "pp-quiz")
    result = score_result(_quiz_run({"test_answer_form[q1]": "passed", "test_answer_form[q2]": "failed"}), {}, quiz)
    [form] = result.objectives
    assert (form.id, form.max_points, form.requires) == ("form", 10.0, [])
    assert result.max_points == 10.0 and result.points == 5.0
    assert uncounted(result, quiz) == ["bubble", "memory", "interleaving", "beyond-1f1b", "deadlock"]


def test_a_test_file_that_did_not_load_never_makes_a_problem_easier():
    """A collection error leaves objectives without tests: they still count (as lost), nothing is scaled."""
    quiz = load_problem(PROBLEMS / "pp-quiz")
    run = _quiz_run({"test_answer_form[q1]": "passed"}, status="error")
    run.tests.append(Case(id="tests/public/test_other.py", name="test_other.py (could not be loaded)",
                                file="tests/public/test_other.py", visibility="public", outcome="error"))
    result = score_result(run, {}, quiz)
    assert len(result.objectives) == 6 and result.max_points == 10.0
    assert result.points == 0.0  # the form counts as far as the (lost) answers are right


def test_a_bundle_written_before_keeps_working_its_canonical_lists_every_objective():
    """An old public canonical Result lists every objective at its declared points, those without tests too: a
    rescore against it scores over the objectives that have tests, as against a new one."""
    quiz = load_problem(PROBLEMS / "pp-quiz")
    old = _quiz_run({"test_answer_form[q1]": "passed"}, status="passed")
    old.tests[0].max_points = 0.5
    old.objectives = [ObjectiveResult(o.id, o.title, 0.0, o.points, 0, 0, o.kind, list(o.requires), o.scoring)
                      for o in quiz.objectives]
    result = rescore(_quiz_run({"test_answer_form[q1]": "passed"}, status="passed"), old, quiz)
    assert result.points == result.max_points == 10.0


@pytest.mark.pyodide
@pytest.mark.skipif(shutil.which("node") is None, reason="node (Node.js 20) runs Pyodide: .ci/setup installs it")
def test_in_pyodide_as_the_browser_judges_every_reference_earns_full_points():
    """The page judges with the public tests only, through the same core scoring: run in Pyodide under Node.js,
    as the parity tests do, every bundled reference earns its problem's points."""
    from judge.engines import Job
    from judge.engines.pyodide import run_in_pyodide

    problems = _bundled()
    jobs = [Job(load_problem(p.path, published=True), source=p.reference_path.read_text(), include_secret=False,
                time_limit=p.time_limit * 3) for p in problems]
    results = run_in_pyodide(jobs)
    for problem, result in zip(problems, results):
        assert result["status"] == "passed", (problem.id, result["message"])
        assert result["points"] == result["max_points"] == problem.points, problem.id
        assert result["sandbox"] == "browser"
