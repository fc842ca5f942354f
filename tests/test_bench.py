"""The benchmark commands run (on a tiny case); their figures are not asserted (no timing in tests)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.conftest import FIXTURE_PROBLEMS, ROOT


@pytest.mark.slow  # a benchmark run end to end, as the other benchmarks' tests
def test_native_benchmark_runs_on_a_tiny_case(tmp_path):
    out = tmp_path / "native.json"
    result = subprocess.run([sys.executable, "-m", "bench.native", "--problems", str(FIXTURE_PROBLEMS),
                             "--repeats", "1", "--json", str(out)], cwd=ROOT, capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "median ratio" in result.stdout
    data = json.loads(out.read_text())
    assert data["problems"] == 1 and len(data["bare_pytest_s"]) == 1 and data["median_ratio"] > 0


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
