"""Unit tests of judge.engines.pyodide's normalisation and comparison (no Node.js needed)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from judge.core import result as results
from judge.core.result import Frame, Result
from judge.engines import pyodide as parity
from tests.conftest import FIXTURE_PROBLEMS, folder_job


def _result(**changes: Any) -> dict[str, Any]:
    tests = [
        results.TestResult(id="tests/public/test_a.py::test_one", name="one", file="tests/public/test_a.py",
                   visibility="public", outcome="passed", duration=0.01),
        results.TestResult(id="tests/public/test_a.py::test_two", name="two", file="tests/public/test_a.py",
                   visibility="public", outcome="failed", message="expected 3, got 4", duration=0.02,
                   traceback=[Frame("tests/public/test_a.py", 9, "test_two", "assert f() == 3"),
                              Frame("sol.py", 2, "f", "return 4")]),
    ]
    data = Result(problem="demo", status="failed", tests=tests, duration=0.5).to_dict()
    for key, value in changes.items():
        data[key] = value
    return data


def test_identical_results_compare_equal() -> None:
    assert parity.compare(_result(), _result()) == ""


def test_durations_are_ignored() -> None:
    other = _result(duration=9.0)
    other["tests"][0]["duration"] = 3.0
    assert parity.compare(_result(), other) == ""
    assert "duration" not in parity.normalise(other)
    assert all("duration" not in t for t in parity.normalise(other)["tests"])


@pytest.mark.parametrize("native, pyodide", [
    ("/tmp/pytest-of-root/pytest-12/test_x0/out.txt", "/tmp/pytest-of-web_user/pytest-0/test_x0/out.txt"),
    ("/tmp/judge-pp-schedule-ab12cd_9/pp_sim.py", "/tmp/judge-pp-schedule-zz99yy00/pp_sim.py"),
    ("/root/.pyenv/versions/3.11.7/lib/python3.11/site-packages/numpy/core.py",
     "/lib/python3.12/site-packages/numpy/core.py"),
    ("/root/.pyenv/versions/3.11.7/lib/python3.11/json/decoder.py", "/lib/python312.zip/json/decoder.py"),
    ("<function f at 0x7f3a2b1c0d60>", "<function f at 0x1a2b3c>"),
])
def test_documented_path_differences_are_normalised(native: str, pyodide: str) -> None:
    a, b = _result(), _result()
    a["tests"][1]["message"] = f"could not open {native}"
    b["tests"][1]["message"] = f"could not open {pyodide}"
    assert parity.compare(a, b) == "", parity.compare(a, b)


def test_the_native_problem_folder_matches_pyodides_copy(tmp_path: Any) -> None:
    folder = tmp_path / "demo"
    a, b = _result(), _result()
    a["tests"][1]["stdout"] = f"reading {folder}/data.txt\n"
    b["tests"][1]["stdout"] = "reading /home/pyodide/problems/demo/data.txt\n"
    assert parity.compare(a, b, folder) == ""
    assert parity.compare(a, b) != ""  # without the folder the native path stays as it is


def test_comprehension_frames_of_python_311_are_ignored() -> None:
    native = _result()
    native["tests"][1]["traceback"].insert(1, {"file": "tests/public/test_a.py", "line": 9,
                                               "function": "<listcomp>", "code": "assert f() == 3"})
    assert parity.compare(native, _result()) == ""
    genexpr = copy.deepcopy(native)
    genexpr["tests"][1]["traceback"][1]["function"] = "<genexpr>"  # still a frame in 3.12
    assert "traceback" in parity.compare(genexpr, _result())


def test_a_real_difference_is_reported_side_by_side() -> None:
    pyodide = _result(status="passed", passed=2, score=1.0)
    pyodide["tests"][1].update(outcome="passed", message="", traceback=[])
    diff = parity.compare(_result(), pyodide)
    assert diff.startswith("Result of demo differs between native CPython and Pyodide")
    assert "status: native 'failed'  |  pyodide 'passed'" in diff
    assert "score: native 0.5  |  pyodide 1.0" in diff
    assert "test tests/public/test_a.py::test_two:" in diff
    assert "outcome: native 'failed'  |  pyodide 'passed'" in diff
    assert "message: native 'expected 3, got 4'  |  pyodide ''" in diff
    assert "-sol.py:2 in f: return 4" in diff
    assert "test_one" not in diff


def test_long_and_multiline_messages_get_a_unified_diff() -> None:
    a, b = _result(), _result()
    a["tests"][1]["message"] = "stage 1:\n  expected F0 F1 B0 B1\n  got F0 B0 F1 B1"
    b["tests"][1]["message"] = "stage 1:\n  expected F0 F1 B0 B1\n  got F0 F1 B0 B1"
    diff = parity.compare(a, b)
    assert "--- native" in diff and "+++ pyodide" in diff
    assert "-  got F0 B0 F1 B1" in diff and "+  got F0 F1 B0 B1" in diff


def test_tests_present_on_one_side_only_are_named() -> None:
    b = _result()
    b["tests"].pop(0)
    diff = parity.compare(_result(), b)
    assert "tests only in native: tests/public/test_a.py::test_one" in diff


def test_artifacts_are_compared() -> None:
    a, b = _result(), _result()
    a["tests"][0]["artifacts"] = [{"name": "timeline", "value": {"total": 6.0}}]
    b["tests"][0]["artifacts"] = [{"name": "timeline", "value": {"total": 7.0}}]
    diff = parity.compare(a, b)
    assert "artifacts:" in diff and '-   "total": 6.0' in diff and '+   "total": 7.0' in diff


def test_missing_node_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(parity.shutil, "which", lambda name: None)
    with pytest.raises(parity.HarnessError, match=r"node \(Node.js 20\) is not installed"):
        parity.run_in_pyodide([folder_job(FIXTURE_PROBLEMS / "fx-add", "pass")])


def test_no_jobs_needs_no_harness() -> None:
    assert parity.run_in_pyodide([]) == []


def test_a_time_out_is_the_same_whichever_clock_stopped_it() -> None:
    native = {"problem": "p", "status": "timeout", "message": "timed out after 1 s of CPU time (a loop ...)",
              "tests": []}
    browser = {"problem": "p", "status": "timeout", "message": "timed out after 1 s", "tests": []}
    assert parity.compare(native, browser) == ""
    assert parity.compare(native, dict(browser, status="failed")) != ""
