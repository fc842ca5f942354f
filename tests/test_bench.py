"""The benchmark commands run (on a tiny case); their figures are not asserted (no timing in tests)."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.conftest import FIXTURE_PROBLEMS, ROOT


def test_native_benchmark_runs_on_a_tiny_case(tmp_path):
    out = tmp_path / "native.json"
    result = subprocess.run([sys.executable, "-m", "bench.native", "--problems", str(FIXTURE_PROBLEMS),
                             "--repeats", "1", "--json", str(out)], cwd=ROOT, capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "median ratio" in result.stdout
    data = json.loads(out.read_text())
    assert data["problems"] == 1 and len(data["bare_pytest_s"]) == 1 and data["median_ratio"] > 0
