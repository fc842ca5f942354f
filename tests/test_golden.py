"""Golden Results: each fixture solution judged natively must give exactly its expected Result.

tests/golden/<case>.json holds the expected Result (durations zeroed). To regenerate after an
intended change: ``UPDATE_GOLDEN=1 python -m pytest tests/test_golden.py`` and review the diff.
"""

from __future__ import annotations

import json
import os

import jsonschema
import pytest

from judge.engines.native import Job
from tests.conftest import ROOT, SOLUTIONS, judge_isolated, normalise

GOLDEN = ROOT / "tests" / "golden"
SCHEMA = json.loads((ROOT / "judge" / "core" / "schema" / "result.schema.json").read_text())
TIME_LIMITS = {"timeout": 1.0, "loop_at_import": 1.0, "sleep": 1.0,
               # about memory, and about a trace function (in Pyodide it traces every line of pytest too,
               # against a wall clock there), not time: room for a loaded machine
               "memory_bomb": 60.0, "trace_hook": 60.0}
MEMORY_LIMITS = {"memory_bomb": 300}
CASES = sorted(p.stem for p in SOLUTIONS.glob("*.py"))
SLOW_CASES = {"sleep"}  # waits for the wall-clock backstop, ten times its limit


@pytest.mark.parametrize("case", [pytest.param(c, marks=pytest.mark.slow) if c in SLOW_CASES else c for c in CASES])
def test_golden_result(case, fixture_problem):
    result = judge_isolated(Job(fixture_problem, SOLUTIONS / f"{case}.py", include_secret=True,
                                time_limit=TIME_LIMITS.get(case), memory_limit=MEMORY_LIMITS.get(case))).to_dict()
    jsonschema.validate(result, SCHEMA)
    got = normalise(result)
    path = GOLDEN / f"{case}.json"
    if os.environ.get("UPDATE_GOLDEN"):
        path.write_text(json.dumps(got, indent=2, ensure_ascii=False) + "\n")
        pytest.skip("golden file written: review its diff")
    expected = json.loads(path.read_text())
    for key in expected:
        if key != "tests":
            assert got[key] == expected[key], f"{case}: field {key!r} differs"
    assert [t["id"] for t in got["tests"]] == [t["id"] for t in expected["tests"]], f"{case}: test ids differ"
    for got_test, want_test in zip(got["tests"], expected["tests"]):
        for key in want_test:
            assert got_test[key] == want_test[key], f"{case}: {want_test['id']}: field {key!r} differs"


def test_every_golden_file_has_a_fixture():
    assert sorted(p.stem for p in GOLDEN.glob("*.json")) == CASES


def test_only_honest_solutions_pass():
    for case in CASES:
        if case in ("passing", "stdout", "leftover_thread", "honest_state"):  # honest code: the pass is earned
            continue
        assert json.loads((GOLDEN / f"{case}.json").read_text())["status"] != "passed", case


@pytest.mark.parametrize("case", ["partly_failing", "os_exit", "write_outside", "timeout"])
def test_spawn_mode_matches_the_golden_result(case, fixture_problem, monkeypatch):
    """The fallback that starts ``python -m judge.engines.native_child`` instead of forking gives the same Result."""
    monkeypatch.setenv("JUDGE_SPAWN", "1")
    result = judge_isolated(Job(fixture_problem, SOLUTIONS / f"{case}.py", include_secret=True,
                                time_limit=TIME_LIMITS.get(case)))
    assert normalise(result.to_dict()) == json.loads((GOLDEN / f"{case}.json").read_text())
