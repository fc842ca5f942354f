"""The benchmark commands run (on a tiny case); their figures are not asserted (no timing in tests)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from bench.run import floors, floors_line
from tests.conftest import FIXTURE_PROBLEMS, ROOT


@pytest.mark.slow  # a benchmark run end to end, as the other benchmarks' tests
def test_native_benchmark_runs_on_a_tiny_case(tmp_path):
    out = tmp_path / "native.json"
    result = subprocess.run([sys.executable, "-m", "bench.native", "--problems", str(FIXTURE_PROBLEMS),
                             "--repeats", "1", "--json", str(out)], cwd=ROOT, capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "median ratio" in result.stdout and "judging itself, no process boundary" in result.stdout
    data = json.loads(out.read_text())
    assert data["problems"] == 1 and len(data["bare_pytest_s"]) == 1 and data["median_ratio"] > 0
    one = data["one_interpreter"]  # the same reference judged in one interpreter, against bare pytest
    assert [(row["problem"], row["tests"]) for row in one["problems"]] == [("fx-add", 4)]
    assert one["bare_s"] > 0 and one["judge_s"] > 0 and one["ratio"] > 0
    found = floors({"native": data})  # what bench.run prints beside the targets, from these figures
    assert found["native_serial"] == pytest.approx(one["ratio"], abs=1e-3)
    assert found["native"] == pytest.approx(one["ratio"] / data["cpus"], abs=1e-3)
    assert found["grade"] == pytest.approx(one["judge_s"] / data["cpus"] / data["judge_s"][0], abs=1e-3)


def test_floors_are_judging_itself_alone_and_over_every_core():
    native = {"cpus": 2, "judge_s": [3.0, 4.0, 5.0], "one_interpreter": {"ratio": 2.0, "judge_s": 3.2}}
    assert floors({"native": native}) == {"native_serial": 2.0, "native": 1.0, "grade": 0.4}
    assert floors({}) == {}  # nothing measured natively: no floor
    assert "-j 1 >= 2.00x" in floors_line(floors({"native": native}))


@pytest.mark.slow
def test_boundary_benchmark_measures_the_codec_calls_and_each_problem(tmp_path):
    out = tmp_path / "boundary.json"
    result = subprocess.run([sys.executable, "-m", "bench.boundary", "--problems", str(FIXTURE_PROBLEMS),
                             "--calls", "20", "--json", str(out)], cwd=ROOT, capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    data = json.loads(out.read_text())
    assert {row["value"] for row in data["codec"]} >= {"an int", "a 64 x 64 float64 array"}
    assert all(row["encode_us"] > 0 and row["decode_us"] > 0 for row in data["codec"])
    hows = [row["how"] for row in data["calls"]]
    assert hows[0] == "a direct call (no boundary)" and "one interpreter (the browser's transport)" in hows
    assert any(how.startswith("learner process (") for how in hows), hows
    (fx_add,) = data["problems"]
    assert fx_add["problem"] == "fx-add" and fx_add["status"] == "passed"
    assert fx_add["round_trips"] >= fx_add["tests"]  # every test calls the learner's add() at least once


@pytest.mark.slow  # a benchmark run end to end
def test_limits_benchmark_reports_each_references_cpu_time_and_each_levels_job(tmp_path):
    out = tmp_path / "limits.json"
    result = subprocess.run([sys.executable, "-m", "bench.limits", "--problems", str(FIXTURE_PROBLEMS),
                             "--repeats", "1", "--json", str(out)], cwd=ROOT, capture_output=True, text=True,
                            timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    data = json.loads(out.read_text())
    ids = {row["problem"] for row in data["headroom"]}
    assert "fx-add" in ids and all(row["cpu_s"] > 0 and row["limit_s"] > 0 for row in data["headroom"])
    levels = {row["level"]: row for row in data["levels"]}
    assert set(levels) == {"bubblewrap", "plain", "user"}
    assert levels["plain"]["median_cpu_s"] > 0
    assert "--user-python" in levels["user"]["unavailable"]  # measured only with a Python the identity can run


@pytest.mark.slow  # runs pytest again, with two workers
def test_suite_profile_records_every_test_of_the_run_and_its_worker(tmp_path):
    out = tmp_path / "suite.json"
    result = subprocess.run([sys.executable, "-m", "bench.suite", "--json", str(out), "tests/test_kinds.py",
                             "-n", "2", "-p", "no:cacheprovider"], cwd=ROOT, capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    data = json.loads(out.read_text())
    collected = subprocess.run([sys.executable, "-m", "pytest", "tests/test_kinds.py", "--collect-only", "-q",
                                "-n", "0", "-p", "no:cacheprovider"], cwd=ROOT, capture_output=True, text=True,
                               timeout=120).stdout
    count = sum(1 for line in collected.splitlines() if "::" in line)
    assert data["tests"] == count > 0
    assert data["run"]["status"] == 0 and data["run"]["cores"] >= 1
    assert {w["worker"] for w in data["workers"]} <= {"gw0", "gw1"}
    assert sum(w["tests"] for w in data["workers"]) == count
    assert [row["area"] for row in data["areas"]] == ["tests/test_kinds.py"]
    assert "tests/test_kinds.py" in result.stdout


def test_suite_profile_summary_names_areas_and_skips_a_cut_line(tmp_path):
    from bench.suite import main

    profile = tmp_path / "profile.jsonl"
    lines = [{"id": "tests/browser/test_page.py::test_a", "worker": "gw0", "start": 100.0, "wall": 30.0, "cpu": 2.0},
             {"id": "tests/parity/test_parity.py::test_b[x]", "worker": "gw1", "start": 100.5, "wall": 50.0,
              "cpu": 40.0},
             {"id": "tests/parity/test_compare.py::test_c", "worker": "gw1", "start": 151.0, "wall": 1.0, "cpu": 1.0},
             {"id": "tests/test_cli.py::test_d", "worker": "gw0", "start": 131.0, "wall": 2.0, "cpu": 1.5}]
    profile.write_text("".join(json.dumps(line) + "\n" for line in lines) + '{"id": "tests/test_cut', encoding="utf-8")
    out = tmp_path / "suite.json"
    assert main(["--from", str(profile), "--json", str(out), "--top", "2"]) == 0
    data = json.loads(out.read_text())
    assert data["tests"] == 4 and "run" not in data
    assert {row["area"]: row["tests"] for row in data["areas"]} == {
        "tests/browser/test_page.py (browser)": 1, "tests/parity/test_parity.py (pyodide)": 1,
        "tests/parity/test_compare.py": 1, "tests/test_cli.py": 1}
    assert data["workers"] == [{"worker": "gw0", "tests": 2, "busy_s": 32.0, "finished_s": 33.0},
                               {"worker": "gw1", "tests": 2, "busy_s": 51.0, "finished_s": 52.0}]
    assert [row["test"] for row in data["longest"]] == ["tests/parity/test_parity.py::test_b[x]",
                                                        "tests/browser/test_page.py::test_a"]
