"""The Python half of the Pyodide harness: runs one job inside Pyodide and returns Result JSON.

``run_jobs.mjs`` installs the ``judge`` package into Pyodide's site-packages and calls these
functions from its worker thread. Every Result is built here, with :mod:`judge.result`, so the
harness's JavaScript never spells out the Result format. Runs on Pyodide's Python 3.12 (and on
CPython, for tests).
"""

from __future__ import annotations

import shutil
import traceback
from pathlib import PurePosixPath

from judge.result import Result


def problem_id(problem_dir: str) -> str:
    """The problem id, which the format requires to equal the folder name."""
    return PurePosixPath(problem_dir).name


def run_job(problem_dir: str, source: str, include_secret: bool, time_limit: float) -> str:
    """Judge ``source`` against the problem at ``problem_dir``; always returns Result JSON.

    A ``KeyboardInterrupt`` (the harness's time-limit interrupt) that escapes the runner becomes
    a timeout Result; any other exception escaping the runner is a judge bug, reported as an
    error Result whose message carries the traceback.
    """
    try:
        from judge.runner import judge_source_json

        return judge_source_json(problem_dir, source, include_secret)
    except KeyboardInterrupt:
        return timeout_json(problem_dir, time_limit)
    except BaseException:  # noqa: BLE001 - the harness must always produce a Result
        return Result.error(problem_id(problem_dir),
                            "internal error in the judge (Pyodide harness):\n" + traceback.format_exc()).to_json()


def timeout_json(problem_dir: str, time_limit: float) -> str:
    """The Result of a run stopped at its time limit."""
    return Result.timeout(problem_id(problem_dir), time_limit).to_json()


def crash_json(problem_dir: str) -> str:
    """The Result of a run during which the interpreter died (the harness appends the detail)."""
    return Result.error(problem_id(problem_dir), "the Pyodide interpreter crashed during this run").to_json()


def remove_tree(path: str) -> None:
    """Remove a job's copy of a problem folder from Pyodide's file system."""
    shutil.rmtree(path, ignore_errors=True)
