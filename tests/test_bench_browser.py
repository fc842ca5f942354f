"""``python -m bench.run`` (native + browser benchmarks) runs on a tiny case: one problem, one repeat.

No figure is asserted (no timing in tests): only that the command runs end to end, prints its
table and writes JSON with every measure. It drives Chromium like tests/browser: skipped locally
without Playwright or Chromium, a failure under CI (where .ci/setup installs both).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import FIXTURE_PROBLEMS, ROOT

CHROMIUM = Path("/usr/lib/chromium/chromium")


def _need_browser() -> None:
    try:
        import playwright.sync_api  # noqa: F401
        missing = None if CHROMIUM.exists() else f"{CHROMIUM} is missing (apt-get install chromium)"
    except ImportError:
        missing = "Python Playwright is not installed (pip install -e '.[test]')"
    if missing:
        if os.environ.get("CI"):
            pytest.fail(f"the browser benchmark cannot run: {missing}")
        pytest.skip(f"browser benchmark skipped: {missing}")


def test_bench_run_measures_native_and_browser_on_a_tiny_case(tmp_path: Path) -> None:
    _need_browser()
    out = tmp_path / "latest.json"
    result = subprocess.run(
        [sys.executable, "-m", "bench.run", "--problems", str(FIXTURE_PROBLEMS), "--native-repeats", "1",
         "--browser-repeats", "1", "--reruns", "1", "--json", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    for line in ("Machine:", "median ratio", "floor: imported numpy+pytest, cold", "app: engine ready, cold",
                 "app: engine ready, repeat", "fx-add", "app, repeat visit", "Targets:"):
        assert line in result.stdout, f"{line!r} missing from:\n{result.stdout}"

    data = json.loads(out.read_text())
    assert data["machine"]["nproc"] >= 1
    assert data["native"]["problems"] == 1
    b = data["browser"]
    assert b["problems"] == ["fx-add"] and b["repeats"] == 1 and len(b["runs"]) == 1
    m = b["median"]
    for key in ("floor_cold_ms", "floor_repeat_ms", "app_cold_ready_ms", "app_repeat_ready_ms",
                "verdict_at_ready_repeat_ms"):
        assert m[key] > 0, key
    assert m["first_verdict_ms"]["fx-add"] > 0 and m["rerun_median_ms"]["fx-add"] > 0
    for visit in ("floor_cold", "floor_repeat", "app_cold", "app_repeat"):
        assert set(m["bytes"][visit]) >= {"bytes", "gzip_bytes", "pyodide_bytes", "requests"}
    # a first visit downloads Pyodide (the server saw it); both pages loaded it from the same site
    assert m["bytes"]["floor_cold"]["pyodide_bytes"] > 1_000_000
    assert m["bytes"]["app_cold"]["pyodide_bytes"] > 1_000_000
    assert set(b["meets"]) >= {"ready_cold_vs_floor", "repeat_vs_cold", "first_verdict_ms", "repeat_pyodide_bytes"}
    assert b["runs"][0]["app"]["page_errors"] == []
