"""The shipped problem set: each problem passes check; practice/ fails, then passes, through the CLI.

The problem list is derived from ``problems/`` (every folder there is a problem), never written out
here: a new problem is covered by adding its folder.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from judge.commands.check import DEGENERATE, SECOND_RUN, assess, check_jobs, cut_test_names, loaded_wrongs
from judge.core.problem import discover_problems, load_problem
from judge.core.workdir import make_workdir, remove_workdir
from judge.engines.native import judge_many
from tests.conftest import PROBLEMS, ROOT, run_cli
from tests.judged import judge_cached, solution_job

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
@pytest.mark.parametrize("problem_id", FOLDERS)
def test_check_passes_on_every_problem(problem_id, tmp_path):
    """What ``judge check problems/`` says of each problem: check's own jobs and assessment, the jobs
    judged through the tests' shared Results (the hint and parity sweeps judge the same solutions), but
    the reference's second run, judged afresh: it is there to catch tests that are not deterministic.
    The command itself, its output and its exit code, is tested on the fixture problems (test_cli.py)."""
    problem = load_problem(PROBLEMS / problem_id)
    wrongs = loaded_wrongs(problem)
    plan = check_jobs(problem, wrongs, tmp_path)
    jobs = {label: solution_job(problem.path, f"{problem_id}/{label}", job.code()) for label, job in plan}
    second = jobs.pop(SECOND_RUN)
    results = dict(zip(jobs, judge_cached(list(jobs.values()))))
    results[SECOND_RUN] = judge_many([second], parallel=1)[0]
    check = assess(problem, results, wrongs)
    assert not check.failures, "\n".join(str(finding) for finding in check.failures)
    assert {label for label, _ in plan} == {"reference", SECOND_RUN, "starter", *(w.label for w in wrongs),
                                            *(label for label in results if label.startswith(DEGENERATE))}
    assert sum(label.startswith(DEGENERATE) for label in results) >= 4, "the degenerate solutions were judged"


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
