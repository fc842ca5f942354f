"""``judge new``: a working example named after the entry, that ``check`` fails only for what is left to fill in;
never written inside the judge's own package; where problems come from, said in every command's help."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

import judge
from judge.commands.scaffold import FILES
from tests.conftest import PROBLEMS as PROBLEMS_DIR
from tests.conftest import judge_cli as run_cli  # in this process

PACKAGE = Path(judge.__file__).resolve().parent


@pytest.fixture(autouse=True)
def _no_problems_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("JUDGE_PROBLEMS", raising=False)


@pytest.mark.slow
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
    assert "wrong/off_by_one.py fails as it should (status failed): 2 of 2 tests failed" in result.stdout

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


# ---------------------------------------------------------------------------------------------
# authoring traps (issue 23: 8)


def test_new_inside_the_problems_folder_writes_there_not_in_problems_problems(tmp_path: Path) -> None:
    problems = tmp_path / "problems"
    problems.mkdir()
    done = run_cli("new", "pp-one", cwd=problems)
    assert done.returncode == 0, done.stderr
    assert (problems / "pp-one" / "problem.toml").is_file() and not (problems / "problems").exists()
    course = tmp_path / "exercises"  # a problems folder by another name: it holds a problem folder
    (course / "pp-one").mkdir(parents=True)
    (course / "pp-one" / "problem.toml").write_text((problems / "pp-one" / "problem.toml").read_text())
    assert run_cli("new", "pp-two", cwd=course).returncode == 0
    assert (course / "pp-two" / "problem.toml").is_file() and not (course / "problems").exists()


@pytest.mark.slow
def test_examples_are_copied_into_a_course_and_one_problem_no_longer_hides_them_silently(tmp_path: Path) -> None:
    course = tmp_path / "course"
    course.mkdir()
    assert run_cli("new", "pp-mine", cwd=course).returncode == 0
    practice = run_cli("practice/", "--problems", str(PROBLEMS_DIR), cwd=course)  # the examples' practice folder
    hidden = run_cli("practice/", cwd=course)  # now judged against ./problems, which holds only pp-mine
    assert "not a known problem id" not in hidden.stderr
    assert "folder(s) are not problems of problems" in hidden.stderr, hidden.stderr
    assert "`judge new --examples` copies them into ./problems" in hidden.stderr
    assert practice.returncode == 1
    copied = run_cli("new", "--examples", cwd=course)
    assert copied.returncode == 0, copied.stderr
    example_ids = sorted(p.name for p in PROBLEMS_DIR.iterdir() if (p / "problem.toml").is_file())
    assert sorted(p.name for p in (course / "problems").iterdir()) == sorted(example_ids + ["pp-mine"])
    assert (course / "problems" / "pp-quiz" / "reference").is_dir(), "an instructor's copy keeps its references"
    again = run_cli("new", "--examples", cwd=course)
    assert "Copied 0 example problem(s)" in again.stdout


def test_judging_a_problems_folder_is_refused_and_writes_nothing(tmp_path: Path) -> None:
    import shutil

    folder = tmp_path / "mine"
    for pid in ("pp-quiz", "pp-bubble-math"):
        shutil.copytree(PROBLEMS_DIR / pid, folder / pid)
    before = sorted(p.relative_to(folder) for p in folder.rglob("*"))
    done = run_cli(str(folder), "--problems", str(PROBLEMS_DIR))
    assert done.returncode == 2 and "holds problem folders (problem.toml)" in done.stderr
    assert f"judge check {folder}" in done.stderr
    assert sorted(p.relative_to(folder) for p in folder.rglob("*")) == before


def test_a_hint_that_no_message_says_is_a_finding(tmp_path: Path) -> None:
    from judge.commands.hints import hint_phrases, unmet_hints
    from judge.core.result import Result, TestResult

    wrong = tmp_path / "wrong" / "off_by_one.py"
    wrong.parent.mkdir()
    wrong.write_text("# judge: caught-by test_x\n# hint: your warm-up looks like min(p - s, m)\n# hint: off by one\n")
    diff = tmp_path / "wrong" / "cap.diff"
    diff.write_text("# hint: must be capped at m\n--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-# hint: not me\n+x = 1\n")
    assert hint_phrases(diff) == ["must be capped at m"]
    failed = TestResult(id="t", name="t", file="tests/public/test_x.py", visibility="public", outcome="failed",
                        message="expected 3, got 4: your warm-up looks like min(p - s, m)")
    findings = unmet_hints(wrong, Result("pp", "failed", tests=[failed]))
    assert findings == ["wrong/off_by_one.py declares the hint 'off by one', which no failure message says: "
                        "fix the hint line or the message the test gives"]
