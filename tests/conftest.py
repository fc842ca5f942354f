"""Shared fixtures for the judge's own tests."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
FIXTURE_PROBLEMS = FIXTURES / "problems"
SOLUTIONS = FIXTURES / "solutions"
PROBLEMS = ROOT / "problems"


def normalise(result: dict) -> dict:
    """A Result dict with durations zeroed: the only field allowed to differ between runs."""
    result = dict(result, duration=0.0)
    result["tests"] = [dict(t, duration=0.0) for t in result["tests"]]
    return result


def run_cli(*args: str, cwd: Path | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    """Run ``python -m judge ARGS`` in a real subprocess."""
    env = dict(os.environ, NO_COLOR="1", PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "judge", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=timeout)


@pytest.fixture
def fixture_problem():
    from judge.core.problem import load_problem
    return load_problem(FIXTURE_PROBLEMS / "fx-add")


def folder_job(folder: Path | str, source: str, include_secret: bool = False, time_limit: float | None = None,
               label: str = ""):
    """A :class:`judge.engines.Job` for the problem folder at ``folder`` (loaded as published)."""
    from judge.core.problem import load_problem
    from judge.engines import Job

    return Job(load_problem(folder, published=True), source=source, include_secret=include_secret,
               time_limit=time_limit, label=label)
