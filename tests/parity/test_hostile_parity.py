"""Hostile fixtures in Pyodide: each gets the browser verdict documented in docs/hostile-input.md.

All fixtures of tests/fixtures/solutions run in one harness call (Pyodide 0.27.7 under Node.js,
the browser engine's entry point ``judge_source_json``, each in an engine of its own as on the
page), with the same time limits as the native golden tests. Rows marked "same Result" must equal the native golden Result after
:func:`judge.engines.pyodide.normalise`; the others must have the documented (non-passing) status.
"""

from __future__ import annotations

import json
import os
import shutil

import pytest

from judge.engines import pyodide as parity
from tests.conftest import FIXTURE_PROBLEMS, ROOT, SOLUTIONS, folder_job
from tests.test_golden import TIME_LIMITS
from tests.test_hostile_table import hostile_table

pytestmark = pytest.mark.skipif(
    shutil.which("node") is None and os.environ.get("CI") != "true",
    reason="node (Node.js 20) is not installed (in CI a missing node is a failure)")

TABLE = hostile_table()
FIXTURES = sorted(TABLE)
PROBLEM = FIXTURE_PROBLEMS / "fx-add"
# the limit of a fixture whose verdict is not about time (those have theirs in TIME_LIMITS): the browser
# engine's limit is wall-clock, and with busy loops on every core a 5 s limit timed out keyboard_interrupt
ROOM = 30.0


@pytest.fixture(scope="module")
def pyodide_results() -> dict[str, dict]:
    jobs = [folder_job(PROBLEM, (SOLUTIONS / f"{name}.py").read_text(), include_secret=True,
                       time_limit=TIME_LIMITS.get(name, ROOM), label=name) for name in FIXTURES]
    return dict(zip(FIXTURES, parity.run_in_pyodide(jobs, fresh=True)))


@pytest.mark.parametrize("fixture", FIXTURES)
def test_browser_verdict_is_the_documented_one(fixture, pyodide_results):
    row, result = TABLE[fixture], pyodide_results[fixture]
    allowed = [s.strip() for s in row["browser"].split("/")]
    assert result["status"] in allowed, (
        f"{fixture}: docs/hostile-input.md says the browser gives {row['browser']}, Pyodide gave "
        f"{result['status']}: {result['message'] or [t['message'] for t in result['tests']][:2]}")
    if row["same"] == "yes":
        golden = json.loads((ROOT / "tests" / "golden" / f"{fixture}.json").read_text())
        diff = parity.compare(golden, result, problem_dir=PROBLEM)
        assert not diff, f"{fixture}: native (golden) and Pyodide Results differ:\n{diff}"
