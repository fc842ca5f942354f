"""The shipped problem set, end to end through the CLI: check passes; practice/ fails then passes.

The problem list is derived from ``problems/`` (every folder there is a problem), never written out
here: a new problem is covered by adding its folder.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from judge.commands.check import cut_test_names
from judge.core.problem import discover_problems, load_problem
from judge.core.workdir import make_workdir, remove_workdir
from tests.conftest import PROBLEMS, ROOT, run_cli

FOLDERS = sorted(p.name for p in PROBLEMS.iterdir() if p.is_dir() and not p.name.startswith((".", "_")))


def test_every_problem_folder_is_valid():
    problems, errors = discover_problems(PROBLEMS)
    assert not errors, errors
    assert sorted(p.id for p in problems) == FOLDERS  # every folder loads (none is silently skipped)
    for problem in problems:
        assert len(problem.wrong_files) >= 2, f"{problem.id}: at least two wrong/ solutions"
        assert problem.secret_test_files or "quiz" in problem.tags, f"{problem.id}: secret tests"
        project_tests = ROOT / "tests" / "problems" / f"test_{problem.id.replace('-', '_')}.py"
        assert project_tests.is_file(), f"{problem.id}: no project tests ({project_tests.relative_to(ROOT)})"
        assert not cut_test_names(problem), cut_test_names(problem)


def test_problem_tests_find_their_helpers_through_the_pytest_configuration():
    offenders = [str(p.relative_to(ROOT)) for p in PROBLEMS.glob("*/tests/**/*.py") if "sys.path" in p.read_text()]
    assert not offenders, f"helper modules are on pytest's pythonpath (judge/core/workdir.py); remove: {offenders}"


@pytest.mark.slow
@pytest.mark.parametrize("problem_id", [f for f in FOLDERS if (PROBLEMS / f / "tests" / "secret").is_dir()])
def test_secret_tests_run_on_their_own(problem_id, tmp_path):
    """Without the public tests collected first, the secret tests still import the shared helpers."""
    problem = load_problem(PROBLEMS / problem_id)
    workdir = make_workdir(problem, True, root=tmp_path)
    (workdir / problem.entry).write_bytes(problem.reference_path.read_bytes())  # bare pytest imports it directly
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(ROOT)  # judge.artifacts, as the runner has it
    try:
        run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-c", "pytest.ini",
                              "--rootdir", ".", "tests/secret"], cwd=workdir, env=env, capture_output=True,
                             text=True, timeout=300)
    finally:
        remove_workdir(workdir)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]


@pytest.mark.slow
def test_check_passes_on_the_problem_set():
    result = run_cli("check", str(PROBLEMS), "-j", "2", timeout=900)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"{len(FOLDERS)} of {len(FOLDERS)} problem folders OK." in result.stdout


@pytest.mark.slow
def test_fresh_practice_fails_everywhere_then_references_pass(tmp_path):
    practice = tmp_path / "practice"
    first = run_cli(str(practice), "-j", "2", cwd=tmp_path, timeout=900)
    assert first.returncode == 1, first.stdout + first.stderr
    assert f"Created {len(FOLDERS)} problem folders in" in first.stdout
    for pid in FOLDERS:
        assert any(line.startswith("TODO") and f" {pid} " in line for line in first.stdout.splitlines()), pid
    verbose = run_cli(str(practice), "-j", "2", "-v", cwd=tmp_path, timeout=900)  # the starters' own verdicts
    for pid in FOLDERS:
        assert any(line.startswith("FAIL") and f" {pid} " in line for line in verbose.stdout.splitlines()), pid
    problems, _ = discover_problems(PROBLEMS)
    for problem in problems:
        shutil.copy(problem.reference_path, practice / problem.id / problem.entry)
    second = run_cli(str(practice), "-j", "2", cwd=tmp_path, timeout=900)
    assert second.returncode == 0, second.stdout + second.stderr
    assert f"Summary: {len(FOLDERS)} of {len(FOLDERS)} problems solved" in second.stdout
