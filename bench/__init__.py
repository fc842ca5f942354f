"""Benchmarks: ratios measured side by side in one run (absolute times on shared machines are noisy)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any


def report(data: dict[str, Any], print_table: Callable[[dict[str, Any]], None], json_path: Path | None) -> None:
    """Print a benchmark's table and, when asked, write its figures as JSON (making the folder)."""
    print_table(data)
    if json_path:
        json_path.parent.mkdir(parents=True, exist_ok=True)
        json_path.write_text(json.dumps(data, indent=2) + "\n")


def with_compiled_judge(env: dict[str, str], scratch: Path) -> dict[str, str]:
    """``env`` importing a copy of the judge package under ``scratch`` whose byte code is compiled,
    as an installed package has it (pip compiles on install). Where PYTHONDONTWRITEBYTECODE is set,
    a judge run from the source tree compiles the package again in every process, which bare pytest
    (compiled in site-packages) does not: the benchmark would time that. The source tree gets no
    byte code. PYTHONSAFEPATH keeps ``python -m judge`` run from the source tree from importing
    the tree's own copy first."""
    installed = scratch / "installed"
    shutil.copytree(Path(__file__).resolve().parent.parent / "judge", installed / "judge",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(installed / "judge")], check=True)
    return dict(env, PYTHONPATH=str(installed), PYTHONSAFEPATH="1")
