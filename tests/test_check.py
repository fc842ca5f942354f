"""``judge check`` knows how a wrong solution must fail: wrong/*.py and wrong/*.diff, declared expectations."""

from __future__ import annotations

import io
import shutil
from pathlib import Path

import pytest

from judge.check import check_problems
from judge.problem import load_problem
from judge.wrong import WrongSolutionError, apply_unified_diff, load_wrong, parse_expectation
from tests.conftest import FIXTURE_PROBLEMS

REFERENCE = '"""Reference: add two numbers."""\n\n\ndef add(a, b):\n    return a + b\n'
SUBTRACT_DIFF = """--- reference/adder.py
+++ wrong/subtracts.py
@@ -3,3 +3,3 @@

 def add(a, b):
-    return a + b
+    return a - b
"""


def fixture(tmp_path: Path, wrong: dict[str, str]) -> Path:
    """fx-add under ``tmp_path/problems`` with exactly the given wrong/ files."""
    folder = tmp_path / "problems" / "fx-add"
    shutil.copytree(FIXTURE_PROBLEMS / "fx-add", folder, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.rmtree(folder / "wrong")
    (folder / "wrong").mkdir()
    for name, text in wrong.items():
        (folder / "wrong" / name).write_text(text, encoding="utf-8")
    return folder


def check(folder: Path) -> tuple[int, str]:
    out = io.StringIO()
    code = check_problems(folder.parent, parallel=2, stream=out)
    return code, out.getvalue()


# --- diffs -----------------------------------------------------------------------------------

def test_a_diff_applies_to_the_reference() -> None:
    assert apply_unified_diff(REFERENCE, SUBTRACT_DIFF) == REFERENCE.replace("a + b", "a - b")


def test_a_hunk_that_moved_still_applies() -> None:
    moved = '"""Reference."""\n# a new comment\n# and another\n\n\ndef add(a, b):\n    return a + b\n'
    assert apply_unified_diff(moved, SUBTRACT_DIFF) == moved.replace("a + b", "a - b")


def test_a_diff_whose_lines_changed_in_the_reference_does_not_apply() -> None:
    changed = REFERENCE.replace("return a + b", "return sum((a, b))")
    with pytest.raises(WrongSolutionError, match=r"(?s)its lines are not in the reference any more.*a \+ b.*sum"):
        apply_unified_diff(changed, SUBTRACT_DIFF)


def test_additions_removals_and_a_missing_final_newline() -> None:
    diff = ("--- a\n+++ b\n@@ -1,2 +1,3 @@\n-x = 1\n+x = 2\n+y = 3\n z = 4\n"
            "@@ -5 +6 @@\n-w = 6\n\\ No newline at end of file\n+w = 7\n")
    assert apply_unified_diff("x = 1\nz = 4\nq = 5\n\nw = 6", diff) == "x = 2\ny = 3\nz = 4\nq = 5\n\nw = 7\n"


@pytest.mark.parametrize("diff, words", [
    ("just text\n", "not a unified diff"),
    ("--- a\n+++ b\n@@ -1 +1 @@\n-x\n+y\n--- c\n+++ d\n@@ -1 +1 @@\n-x\n+y\n", "more than one file"),
    ("--- a\n+++ b\n@@ -1,2 +1,2 @@\n-x\n+y\n", "the header says 2 and 2"),
    ("--- a\n+++ b\n", "no hunks"),
])
def test_malformed_diffs_are_named(diff: str, words: str) -> None:
    with pytest.raises(WrongSolutionError, match=words):
        apply_unified_diff("x\n", diff)


# --- declarations ----------------------------------------------------------------------------

def test_declarations() -> None:
    assert parse_expectation("def f(): pass\n").status == "failed"
    text = "# judge: expect status=error\n# judge: caught-by test_a, test_b[1-2]\n# judge: caught-by test_c\n"
    expectation = parse_expectation(text)
    assert expectation.status == "error"
    assert expectation.caught_by == ("test_a", "test_b[1-2]", "test_c")


@pytest.mark.parametrize("line, words", [
    ("# judge: expect status=passed", "must be `expect status=`"),
    ("# judge: expect outcome=failed", "must be `expect status=`"),
    ("# judge: cought-by test_a", "unknown declaration"),
])
def test_bad_declarations_are_errors(line: str, words: str) -> None:
    with pytest.raises(WrongSolutionError, match=words):
        parse_expectation(f"x = 1\n{line}\n", "wrong/x.py")


def test_a_diffs_declarations_come_before_its_header(tmp_path: Path) -> None:
    folder = fixture(tmp_path, {"subtracts.diff": "# judge: caught-by test_small\n" + SUBTRACT_DIFF})
    wrong = load_wrong(load_problem(folder), folder / "wrong" / "subtracts.diff")
    assert wrong.expectation.caught_by == ("test_small",)
    assert wrong.source == REFERENCE.replace("a + b", "a - b")


# --- check, end to end -----------------------------------------------------------------------

def test_check_accepts_wrong_solutions_that_fail_as_declared(tmp_path: Path) -> None:
    folder = fixture(tmp_path, {
        "subtracts.diff": "# judge: caught-by test_small, tests/secret/test_big.py::test_big\n" + SUBTRACT_DIFF,
        "no_module.py": '"""Imports what is not there."""\n# judge: expect status=error\nimport no_such_module\n',
        "multiplies.py": "def add(a, b):\n    return a * b\n",
    })
    code, out = check(folder)
    assert code == 0, out
    assert "OK      fx-add" in out
    assert "wrong/subtracts.diff fails as it should (failed" in out
    assert "wrong/no_module.py fails as it should (error" in out


def test_check_rejects_a_wrong_solution_that_is_only_a_syntax_error(tmp_path: Path) -> None:
    folder = fixture(tmp_path, {"subtracts.diff": SUBTRACT_DIFF, "typo.py": "def add(a, b)\n    return a - b\n"})
    code, out = check(folder)
    assert code == 1, out
    assert "FAILED  fx-add" in out
    assert "wrong/typo.py gives status error, not failed (adder.py, line 1: SyntaxError" in out
    assert "`# judge: expect status=error`" in out


def test_check_says_when_a_diff_no_longer_applies(tmp_path: Path) -> None:
    folder = fixture(tmp_path, {"subtracts.diff": SUBTRACT_DIFF, "multiplies.py": "def add(a, b):\n    return a * b\n"})
    reference = folder / "reference" / "adder.py"
    reference.write_text(reference.read_text().replace("return a + b", "return b + a"))
    code, out = check(folder)
    assert code == 1, out
    assert "wrong/subtracts.diff no longer applies to reference/adder.py" in out
    assert "wrong/multiplies.py fails as it should" in out  # the others are still judged


def test_check_holds_a_wrong_solution_to_the_tests_it_names(tmp_path: Path) -> None:
    folder = fixture(tmp_path, {
        "subtracts.py": "# judge: caught-by test_zero, test_missing\ndef add(a, b):\n    return a - b\n",
        "off_by_one.py": "# judge: caught-by test_zero\ndef add(a, b):\n    return a + b + (a == 1)\n",
    })
    code, out = check(folder)
    assert code == 1, out
    assert "wrong/subtracts.py declares it is caught by test_missing, but no test has that name" in out
    assert "test_zero, but that test passes" not in out.split("wrong/subtracts.py", 1)[1].split("\n", 1)[0]
    assert "wrong/off_by_one.py declares it is caught by test_zero, but that test passes" in out
