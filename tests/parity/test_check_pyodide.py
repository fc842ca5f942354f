"""``python -m judge check --pyodide`` shows an instructor a parity problem before learners see it."""

from __future__ import annotations

import os
import shutil

import pytest

from tests.conftest import FIXTURE_PROBLEMS, run_cli

pytestmark = pytest.mark.skipif(
    shutil.which("node") is None and os.environ.get("CI") != "true",
    reason="node (Node.js 20) is not installed (in CI a missing node is a failure)")


def test_check_pyodide_passes_and_reports_a_dtype_difference(tmp_path):
    good = run_cli("check", str(FIXTURE_PROBLEMS), "--pyodide", timeout=600)
    assert good.returncode == 0, good.stdout + good.stderr
    assert "3 of 3 solutions give the same Result in both engines." in good.stdout

    folder = tmp_path / "fx-add"
    shutil.copytree(FIXTURE_PROBLEMS / "fx-add", folder)
    (folder / "tests" / "public" / "test_dtype.py").write_text(
        "import numpy as np\n\n\ndef test_default_integer():\n"
        "    assert np.array([1]).dtype == np.int64, 'numpy default integer should be int64'\n")
    bad = run_cli("check", str(tmp_path), "--pyodide", timeout=600)
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert "DIFFERS fx-add reference" in bad.stdout
    assert "numpy default integer should be int64" in bad.stdout  # the diff shows the message
    assert "0 of 3 solutions give the same Result in both engines." in bad.stdout  # the test runs for all
