"""``judge new``: a working example named after the entry, that ``check`` fails only for what is left to fill in;
never written inside the judge's own package; where problems come from, said in every command's help."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

import judge
from judge.commands.scaffold import FILES
from tests.conftest import run_cli

PACKAGE = Path(judge.__file__).resolve().parent


@pytest.fixture(autouse=True)
def _no_problems_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("JUDGE_PROBLEMS", raising=False)


def test_a_fresh_scaffold_fails_check_only_with_fill_ins_and_passes_once_they_are_done(tmp_path: Path) -> None:
    created = run_cli("new", "pp-activation-memory", "--entry", "act_mem.py", "--title", 'Activation "memory"',
                      cwd=tmp_path)
    assert created.returncode == 0, created.stderr
    folder = tmp_path / "problems" / "pp-activation-memory"
    files = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())
    assert files == sorted(["problem.toml", "README.md", "assets/bubble.svg", "starter/act_mem.py",
                            "reference/act_mem.py", "tests/public/test_act_mem.py",
                            "tests/secret/test_act_mem_secret.py", "wrong/off_by_one.py"])
    assert all(name in created.stdout for name in files)
    assert "judge check problems/pp-activation-memory" in created.stdout
    meta = tomllib.loads((folder / "problem.toml").read_text())
    assert (meta["entry"], meta["title"]) == ("act_mem.py", 'Activation "memory"')
    for test in ("tests/public/test_act_mem.py", "tests/secret/test_act_mem_secret.py"):
        assert re.search(r"^import act_mem$", (folder / test).read_text(), re.M), test

    result = run_cli("check", "-j", "2", cwd=tmp_path)  # no folder given: ./problems
    assert result.returncode == 1, result.stdout + result.stderr
    failures = [line for line in result.stdout.splitlines() if line.startswith("    x ")]
    assert len(failures) == len(FILES) - 1, result.stdout  # every file but the image has a FILL IN line
    assert all(": fill in: " in line for line in failures), result.stdout
    assert "reference passes 2/2 tests" in result.stdout
    assert "starter fails as it should (status failed): 2 of 2 tests failed" in result.stdout
    assert "wrong/off_by_one.py fails as it should (status failed): 1 of 2 tests failed" in result.stdout

    for path in folder.rglob("*"):
        if path.is_file() and path.suffix != ".svg":
            kept = [line for line in path.read_text().splitlines(keepends=True) if "FILL IN (instructor)" not in line]
            path.write_text("".join(kept))
    toml = folder / "problem.toml"
    toml.write_text(toml.read_text().replace("title =", 'summary = "The bubble fraction."\ntitle ='))
    done = run_cli("check", "-j", "2", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize(("entry", "words"), [
    ("test_mine.py", "pytest would collect it"),
    ("random.py", "would hide the module `random`"),
    ("pytest.py", "would hide the module `pytest`"),
    ("sched", "would hide the module `sched`"),
    ("class.py", "must be a Python module file name"),
    ("my-module.py", "must be a Python module file name"),
])
def test_entries_the_tests_could_not_import_are_refused(tmp_path: Path, entry: str, words: str) -> None:
    result = run_cli("new", "pp-x", "--entry", entry, cwd=tmp_path)
    assert result.returncode == 2 and words in result.stderr, result.stderr
    assert not (tmp_path / "problems").exists()


def test_an_entry_without_py_ids_and_existing_folders(tmp_path: Path) -> None:
    assert run_cli("new", "pp-x", "--entry", "my_sched", cwd=tmp_path).returncode == 0
    assert (tmp_path / "problems" / "pp-x" / "starter" / "my_sched.py").is_file()
    again = run_cli("new", "pp-x", cwd=tmp_path)
    assert again.returncode == 2 and "already exists" in again.stderr
    bad = run_cli("new", "Bad_Id", cwd=tmp_path)
    assert bad.returncode == 2 and "not a valid id" in bad.stderr


def test_new_writes_where_judge_problems_says(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JUDGE_PROBLEMS", str(tmp_path / "course" / "problems"))
    assert run_cli("new", "pp-x", cwd=tmp_path).returncode == 0
    assert (tmp_path / "course" / "problems" / "pp-x" / "problem.toml").is_file()
    assert not (tmp_path / "problems").exists()


@pytest.mark.parametrize("how", ["--problems", "JUDGE_PROBLEMS"])
def test_new_never_writes_inside_the_judge_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str) -> None:
    inside = PACKAGE / "_problems"
    if how == "JUDGE_PROBLEMS":
        monkeypatch.setenv("JUDGE_PROBLEMS", str(inside))
        result = run_cli("new", "pp-sneaky", cwd=tmp_path)
    else:
        result = run_cli("new", "pp-sneaky", "--problems", str(inside), cwd=tmp_path)
    assert result.returncode == 2 and "inside the judge's own package" in result.stderr, result.stderr
    assert not (inside / "pp-sneaky").exists()


@pytest.mark.parametrize("command", ["new", "check", "build", "serve", "grade"])
def test_every_instructor_command_says_where_problems_come_from(command: str) -> None:
    text = " ".join(run_cli(command, "--help").stdout.split())
    assert "$JUDGE_PROBLEMS" in text and "./problems" in text, text
    if command != "new":
        assert "bundled" in text, text
