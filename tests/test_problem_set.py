"""The shipped problem set, end to end through the CLI: check passes; practice/ fails then passes."""

from __future__ import annotations

import shutil

from judge.problem import discover_problems
from tests.conftest import PROBLEMS, run_cli

EXPECTED_IDS = {"pp-schedule", "pp-simulate", "pp-bubble-math", "pp-1f1b-emulated", "pp-interleaved",
                "pp-zero-bubble", "pp-quiz"}


def test_every_problem_folder_is_valid():
    problems, errors = discover_problems(PROBLEMS)
    assert not errors, errors
    assert {p.id for p in problems} == EXPECTED_IDS
    for problem in problems:
        assert len(problem.wrong_files) >= 2, f"{problem.id}: at least two wrong/ solutions"
        assert problem.secret_test_files or problem.id == "pp-quiz", f"{problem.id}: secret tests"


def test_check_passes_on_the_problem_set():
    result = run_cli("check", str(PROBLEMS), "-j", "2", timeout=900)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"{len(EXPECTED_IDS)} of {len(EXPECTED_IDS)} problem folders OK." in result.stdout


def test_fresh_practice_fails_everywhere_then_references_pass(tmp_path):
    practice = tmp_path / "practice"
    first = run_cli(str(practice), "-j", "2", cwd=tmp_path, timeout=900)
    assert first.returncode == 1, first.stdout + first.stderr
    assert f"Created {len(EXPECTED_IDS)} problem folder(s)" in first.stdout
    for pid in EXPECTED_IDS:
        assert any(line.startswith("FAIL") and f" {pid} " in line for line in first.stdout.splitlines()), pid
    problems, _ = discover_problems(PROBLEMS)
    for problem in problems:
        shutil.copy(problem.reference_path, practice / problem.id / problem.entry)
    second = run_cli(str(practice), "-j", "2", cwd=tmp_path, timeout=900)
    assert second.returncode == 0, second.stdout + second.stderr
    assert f"Summary: {len(EXPECTED_IDS)} of {len(EXPECTED_IDS)} problems solved" in second.stdout
