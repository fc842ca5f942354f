"""Tampering in Pyodide: the same voided verdicts as natively, and nothing left behind.

One harness call (Pyodide 0.27.7 under Node.js, the browser engine's entry point, ONE interpreter
for every job, which is what the page's engine does until it replaces itself) runs, in turn:
each tampering fixture (every hostile fixture whose native verdict is voided, and the three
tricks on real problems), each followed by the honest wrong solution
``problems/pp-simulate/wrong/bubble_over_total.diff``; then the honest-state solutions, each also
followed by it. The harness never replaces its interpreter on the engine's dirty note, so every
"later" Result here also shows that the restore alone leaves nothing behind.
"""

from __future__ import annotations

import os
import shutil

import pytest

from judge.core.problem import load_problem
from judge.engines import pyodide as parity
from judge.engines.native import Job, judge_isolated
from tests.conftest import FIXTURE_PROBLEMS, PROBLEMS, SOLUTIONS, folder_job
from tests.test_tamper import HONEST, LATER, TRICKS, TRICKS_DIR, VOIDED, tamper_fixtures

pytestmark = pytest.mark.skipif(
    shutil.which("node") is None and os.environ.get("CI") != "true",
    reason="node (Node.js 20) is not installed (in CI a missing node is a failure)")

FX_ADD = FIXTURE_PROBLEMS / "fx-add"
CASES = [(name, FX_ADD, SOLUTIONS / f"{name}.py") for name in tamper_fixtures()] + [
    (name, PROBLEMS / problem_id, TRICKS_DIR / f"{name}.py") for name, (problem_id, _) in sorted(TRICKS.items())]
HONEST_CASES = [("honest_state", FX_ADD, SOLUTIONS / "honest_state.py")] + [
    (name, PROBLEMS / problem_id, TRICKS_DIR / f"{name}.py") for name, problem_id in sorted(HONEST.items())]


@pytest.fixture(scope="module")
def run() -> dict[str, tuple[dict, dict]]:
    """label -> (Result, harness record), all from one interpreter, in the order of the plan."""
    jobs = []
    for name, problem_dir, path in CASES + HONEST_CASES:
        jobs.append(folder_job(problem_dir, path.read_text(encoding="utf-8"), True, 30.0, name))
        jobs.append(folder_job(LATER[0], LATER[1], True, 30.0, f"after {name}"))
    harness = parity.run_harness(jobs)
    return {job.label: (result, record) for job, result, record in zip(jobs, harness.results, harness.records)}


@pytest.fixture(scope="module")
def later_native() -> dict:
    return judge_isolated(Job(load_problem(LATER[0]), None, include_secret=True, source=LATER[1])).to_dict()


@pytest.mark.parametrize("name,problem_dir,path", CASES, ids=[c[0] for c in CASES])
def test_tampering_is_voided_like_natively_and_leaves_nothing_behind(name, problem_dir, path, run, later_native):
    result, record = run[name]
    assert result["status"] == "error" and result["tests"] == [] and result["passed"] == 0, result
    assert result["message"].startswith(VOIDED), result["message"]
    if name in TRICKS:
        assert TRICKS[name][1] in result["message"], result["message"]
    native = judge_isolated(Job(load_problem(problem_dir), path, include_secret=True)).to_dict()
    diff = parity.compare(native, result, problem_dir)
    assert not diff, diff
    assert record["engine_dirty"], "the engine must ask to be replaced after a tampering run"
    later, later_record = run[f"after {name}"]
    assert not later_record["engine_dirty"]
    diff = parity.compare(later_native, later, LATER[0])
    assert not diff, f"after {name}, in the same interpreter:\n{diff}"


@pytest.mark.parametrize("name,problem_dir,path", HONEST_CASES, ids=[c[0] for c in HONEST_CASES])
def test_honest_state_changes_pass_and_are_undone(name, problem_dir, path, run, later_native):
    result, record = run[name]
    assert result["status"] == "passed" and result["passed"] == result["total"] > 0, result
    assert not record["engine_dirty"], record["engine_dirty"]
    later, _ = run[f"after {name}"]
    diff = parity.compare(later_native, later, LATER[0])
    assert not diff, f"after {name}, in the same interpreter:\n{diff}"
