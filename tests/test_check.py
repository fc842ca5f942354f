"""``judge check``: how a wrong solution must fail (wrong/*.py and wrong/*.diff, declared expectations), what is
left to fill in, the statement's links and assets, and messages an instructor can act on."""

from __future__ import annotations

import io
import shutil
from pathlib import Path

import pytest

from judge.commands.check import (
    MESSAGE_WIDTH,
    ProblemCheck,
    check_and_report,
    check_files,
    check_problems,
    practice_paths,
)
from judge.commands.practice import create_practice
from judge.core.findings import Finding, kinds
from judge.core.problem import ProblemError, load_problem
from judge.core.wrong import WrongSolutionError, apply_unified_diff, load_wrong, parse_expectation
from tests.conftest import FIXTURE_PROBLEMS, SOLUTIONS, judge_cli, run_cli

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


def check(folder: Path, verbose: bool = False) -> tuple[int, str]:
    out = io.StringIO()
    code = check_problems(folder.parent, parallel=2, stream=out, verbose=verbose)
    return code, out.getvalue()


def checked(folder: Path) -> tuple[int, str, ProblemCheck]:
    """The exit code, the printed report and the findings of ``check`` on the one problem ``folder``."""
    out = io.StringIO()
    code, checks = check_and_report(folder.parent, parallel=2, stream=out)
    assert len(checks) == 1, out.getvalue()
    return code, out.getvalue(), checks[0]


def about(findings: list[Finding], path: str) -> list[str]:
    """The kinds of the findings about ``path`` (a wrong solution's label, a file of the problem)."""
    return [f.kind for f in findings if f.path == path]


def findings(folder: Path) -> ProblemCheck:
    """What check says of the folder's files alone (no solution is run)."""
    found = ProblemCheck(load_problem(folder))
    check_files(found)
    return found


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
    ("# judge: loses at-most 100%", "must be `loses at-least N%`"),
    ("# judge: loses at-least 0%", "must be `loses at-least N%`"),
    ("# judge: loses about 20%", "or `loses at-most N%`"),
    ("# judge: loses at-least 50%\n# judge: loses at-most 20%", "no share of the points can be both"),
])
def test_bad_declarations_are_errors(line: str, words: str) -> None:
    with pytest.raises(WrongSolutionError, match=words):
        parse_expectation(f"x = 1\n{line}\n", "wrong/x.py")


def test_loss_declarations_are_shares_of_the_points() -> None:
    conceptual = parse_expectation("# judge: loses at-least 30%\n")
    assert (conceptual.loses, conceptual.loses_at_most) == (0.3, None)
    slip = parse_expectation("# judge: loses at-most 20%\n")
    assert (slip.loses, slip.loses_at_most) == (0.0, 0.2)
    both = parse_expectation("# judge: loses at-least 10%\n# judge: loses at-most 12.5%\n")
    assert (both.loses, both.loses_at_most) == (0.1, 0.125)


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
    code, out, found = checked(folder)
    assert code == 0, out
    assert "OK      fx-add" in out
    assert found.failures == []
    assert kinds(found.notes).count("fails-as-expected") == 4  # the starter and the three wrong solutions
    # how a note reads: status, tests failed, points kept, the first failing test and its message
    assert "wrong/subtracts.diff fails as it should (status failed): 3 of 4 tests failed, keeps 25% of the points; "\
           "test_small (public): " \
           "add(1, 2): expected 3, got -1" in out


def test_check_rejects_a_wrong_solution_that_is_only_a_syntax_error(tmp_path: Path) -> None:
    folder = fixture(tmp_path, {"subtracts.diff": SUBTRACT_DIFF, "typo.py": "def add(a, b)\n    return a - b\n"})
    code, out, found = checked(folder)
    assert code == 1, out
    assert "FAILED  fx-add" in out
    assert kinds(found.failures) == ["unmet-expectation"] and found.failures[0].path == "wrong/typo.py"
    assert "SyntaxError" in out and "`# judge: expect status=error`" in out  # the cause, and the way out


def test_check_says_when_a_diff_no_longer_applies(tmp_path: Path) -> None:
    folder = fixture(tmp_path, {"subtracts.diff": SUBTRACT_DIFF, "multiplies.py": "def add(a, b):\n    return a * b\n"})
    reference = folder / "reference" / "adder.py"
    reference.write_text(reference.read_text().replace("return a + b", "return b + a"))
    code, out, found = checked(folder)
    assert code == 1, out
    assert kinds(found.failures) == ["invalid-wrong-solution"] and "wrong/subtracts.diff" in out
    assert "wrong/multiplies.py fails as it should" in out  # the others are still judged


def test_check_holds_a_wrong_solution_to_the_tests_it_names(tmp_path: Path) -> None:
    folder = fixture(tmp_path, {
        "subtracts.py": "# judge: caught-by test_zero, test_missing\ndef add(a, b):\n    return a - b\n",
        "off_by_one.py": "# judge: caught-by test_zero\ndef add(a, b):\n    return a + b + (a == 1)\n",
    })
    code, out, found = checked(folder)
    assert code == 1, out
    assert about(found.failures, "wrong/subtracts.py") == ["unmet-expectation"]
    assert about(found.failures, "wrong/off_by_one.py") == ["unmet-expectation"]
    subtracts = next(f.message for f in found.failures if f.path == "wrong/subtracts.py")
    assert "test_missing" in subtracts and "test_zero" not in subtracts  # it names only the test it lacks
    assert "test_zero" in next(f.message for f in found.failures if f.path == "wrong/off_by_one.py")


# --- messages: which tests, how many, whole with -v -----------------------------------------

def test_a_failing_reference_shows_its_failing_tests_public_or_secret_with_messages(tmp_path: Path) -> None:
    folder = fixture(tmp_path, {"subtracts.diff": SUBTRACT_DIFF})
    shutil.copy(SOLUTIONS / "partly_failing.py", folder / "reference" / "adder.py")  # wrong from 100 on
    code, out, found = checked(folder)
    assert code == 1, out
    assert "reference-fails" in kinds(found.failures)
    assert "1 of 4 tests failed (1 secret)" in out
    assert "test_big (secret): add(10**6, 1) should be 1000001" in out


def test_long_messages_are_cut_at_a_word_and_shown_whole_with_verbose(tmp_path: Path) -> None:
    long = " ".join(f"word{i}" for i in range(60))
    folder = fixture(tmp_path, {"chatty.py": f"def add(a, b):\n    return {long!r}\n"})
    code, out = check(folder)
    line = next(row for row in out.splitlines() if "wrong/chatty.py fails as it should" in row)
    message = line.split("(public): ", 1)[1]
    assert message.endswith(" …") and len(message) <= MESSAGE_WIDTH + 2, line
    assert message[:-2].split()[-1] in long.split(), f"cut inside a word: {line}"
    assert "`judge check -v` shows them whole" in out
    code, verbose = check(folder, verbose=True)
    assert long in verbose and "…" not in verbose.split("wrong/chatty.py", 1)[1]
    assert "test_big (secret): add(10**6, 1) should be 1000001" in verbose  # every failing test, with -v


def test_tests_importing_another_module_than_the_entry_are_named(tmp_path: Path) -> None:
    folder = fixture(tmp_path, {"subtracts.diff": SUBTRACT_DIFF})
    toml = folder / "problem.toml"
    toml.write_text(toml.read_text().replace('entry = "adder.py"', 'entry = "summer.py"'))
    for part in ("starter", "reference"):
        (folder / part / "adder.py").rename(folder / part / "summer.py")
    code, out, found = checked(folder)
    assert code == 1, out
    assert kinds(found.failures)[:2] == ["import-failure", "reference-fails"]
    assert "tests/public/test_add.py:5, tests/secret/test_big.py:3" in found.failures[0].message  # who imports it
    assert "write `import summer`" in out
    assert "not-judged" in kinds(found.notes) and "fails-as-expected" not in kinds(found.notes)


# --- the files: FILL IN, links, assets -------------------------------------------------------

def test_fill_in_markers_are_listed_with_what_to_do(tmp_path: Path) -> None:
    folder = fixture(tmp_path, {"subtracts.diff": SUBTRACT_DIFF})
    starter = folder / "starter" / "adder.py"
    starter.write_text("# FILL IN (instructor): the starter learners see\n"
                       "# FILL IN: your code (this one is for learners)\n" + starter.read_text())
    assert findings(folder).failures == [Finding("fill-in", "starter/adder.py", 1, "fill in: the starter learners see")]
    assert str(findings(folder).failures[0]) == "starter/adder.py:1: fill in: the starter learners see"


def test_statement_links_must_resolve_in_the_practice_folder(tmp_path: Path) -> None:
    folder = fixture(tmp_path, {"subtracts.diff": SUBTRACT_DIFF})
    (folder / "README.md").write_text(
        "# Add\n\n![the figure](assets/figure.svg)\n\n"
        "See [the tests](tests/test_add.py), [the same, as in the problem folder](tests/public/test_add.py),\n"
        "[the secret ones](tests/secret/test_big.py), [notes](notes.md), [a sibling](../other/README.md),\n"
        "[a page](https://example.org/x.png), [a heading](#add) and [your file](adder.py).\n\n"
        "![remote](https://example.org/x.png)\n")
    found = findings(folder)
    assert [(f.kind, f.path, f.line) for f in found.failures] == [("broken-link", "README.md", 3)] + [
        ("broken-link", "README.md", 5)] * 4
    links = ["assets/figure.svg", "tests/public/test_add.py", "tests/secret/test_big.py", "notes.md",
             "../other/README.md"]
    assert [f.message.split()[2] for f in found.failures] == links  # "the image|link URL ..."
    assert "did you mean tests/test_add.py?" in found.failures[1].message  # what the learner's folder holds
    assert str(found.failures[0]).startswith("README.md:3: the image assets/figure.svg points at")
    assert [(f.kind, f.message.split()[2]) for f in found.notes if f.path == "README.md"] == [
        ("link-not-on-site", "tests/test_add.py"), ("link-not-on-site", "adder.py"),
        ("remote-image", "https://example.org/x.png")]
    (folder / "assets").mkdir()
    (folder / "assets" / "figure.svg").write_text("<svg xmlns='http://www.w3.org/2000/svg'/>")
    assert "figure.svg" not in " ".join(f.message for f in findings(folder).failures)


def test_practice_paths_are_what_the_practice_folder_holds(tmp_path: Path) -> None:
    folder = fixture(tmp_path, {"subtracts.diff": SUBTRACT_DIFF})
    (folder / "assets" / "img").mkdir(parents=True)
    (folder / "assets" / "img" / "a.png").write_bytes(b"\x89PNG")
    problem = load_problem(folder)
    create_practice(tmp_path / "practice", [problem])
    made = tmp_path / "practice" / "fx-add"
    on_disk = {p.relative_to(made).as_posix() for p in made.rglob("*")} | {"."}
    assert practice_paths(problem) == on_disk


def test_assets_that_would_leak_or_are_links_are_refused(tmp_path: Path) -> None:
    folder = fixture(tmp_path, {"subtracts.diff": SUBTRACT_DIFF})
    (folder / "assets").mkdir()
    shutil.copy(folder / "tests" / "secret" / "test_big.py", folder / "assets" / "notes.txt")
    failures = findings(folder).failures
    assert kinds(failures) == ["leaking-asset"]
    assert failures[0].message.startswith("assets/notes.txt ")
    assert "tests/secret/test_big.py" in failures[0].message  # what it leaks
    (folder / "assets" / "answer.py").symlink_to(folder / "reference" / "adder.py")
    with pytest.raises(ProblemError) as refused:  # a link anywhere in the folder: it does not load at all
        findings(folder)
    assert [f.kind for f in refused.value.findings] == ["symbolic-link"]
    assert "fx-add/assets/answer.py is a symbolic link" in str(refused.value)


def test_tests_whose_verdicts_change_from_one_run_to_the_next_are_not_deterministic(tmp_path: Path) -> None:
    """The reference is judged twice: when the two runs disagree, the tests are not deterministic (here a
    test passes only in the first run that reaches it, as a test that depends on the clock or on
    leftovers of an earlier run would)."""
    folder = fixture(tmp_path, {"subtracts.diff": SUBTRACT_DIFF})
    marker = tmp_path / "reached"
    (folder / "tests" / "public" / "test_once.py").write_text(
        "import os\n\n\ndef test_first_run_only():\n"
        f"    os.close(os.open({str(marker)!r}, os.O_CREAT | os.O_EXCL | os.O_WRONLY))\n", encoding="utf-8")
    out = io.StringIO()
    code, (found,) = check_and_report(folder.parent, parallel=1, stream=out)  # the reference runs first
    assert code == 1, out.getvalue()
    assert marker.exists()
    assert "nondeterministic" in kinds(found.failures), out.getvalue()
    assert "not deterministic" in out.getvalue()


# --- the sandbox ---------------------------------------------------------------------------------

def test_a_package_the_problem_declares_reaches_its_solutions_in_check_as_in_practice(tmp_path: Path) -> None:
    """``packages`` in problem.toml shows an installed distribution to the learner's code: ``check``
    judges the reference with it as ``python -m judge`` and ``judge grade`` do (it did not: "No module
    named 'iniconfig'", and the problem failed its check)."""
    uses = REFERENCE.replace('"""\n', '"""\nimport iniconfig\n', 1).replace(
        "return a + b", "assert iniconfig.IniConfig\n    return a + b")
    folder = fixture(tmp_path, {"subtracts.py": uses.replace("a + b", "a - b")})
    (folder / "reference" / "adder.py").write_text(uses, encoding="utf-8")
    toml = folder / "problem.toml"
    toml.write_text(toml.read_text(encoding="utf-8").replace('entry = "adder.py"\n',
                                                            'entry = "adder.py"\npackages = ["iniconfig"]\n'),
                    encoding="utf-8")
    assert 'packages = ["iniconfig"]' in toml.read_text(encoding="utf-8")
    # in processes of their own: the package is linked into the process's runtime folder, which other tests check
    result = run_cli("check", str(folder))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "OK      fx-add" in result.stdout
    practice = tmp_path / "practice" / "fx-add"
    practice.mkdir(parents=True)
    (practice / "adder.py").write_text(uses, encoding="utf-8")
    solved = run_cli(str(practice), "--problems", str(folder.parent))
    assert solved.returncode == 0, solved.stdout + solved.stderr


def test_check_runs_the_solutions_at_the_sandbox_level_asked_for(tmp_path: Path) -> None:
    """``--sandbox`` and ``--sandbox-user`` are ``check``'s options too: a level that cannot be used is a
    clear error, not silently replaced by another (``check`` used to ignore both)."""
    folder = fixture(tmp_path, {"subtracts.diff": SUBTRACT_DIFF})
    result = judge_cli("check", str(folder), "--sandbox", "user", "--sandbox-user", "no-such-user-here")
    assert result.returncode == 2, result.stdout + result.stderr
    assert "no user 'no-such-user-here'" in result.stderr
    assert "problem folders OK" not in result.stdout


# --- several folders ---------------------------------------------------------------------------

def test_several_problem_folders_are_checked_in_one_run(tmp_path: Path) -> None:
    first = fixture(tmp_path / "a", {"subtracts.diff": SUBTRACT_DIFF})
    second = tmp_path / "b" / "fx-sub"
    shutil.copytree(first, second)
    toml = second / "problem.toml"
    toml.write_text(toml.read_text(encoding="utf-8").replace('id = "fx-add"', 'id = "fx-sub"'), encoding="utf-8")
    result = run_cli("check", str(first), str(second), str(first), "-j", "2")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Checking 2 problem folder(s)" in result.stdout  # the folder named twice is checked once
    assert "OK      fx-add" in result.stdout and "OK      fx-sub" in result.stdout
    assert "2 of 2 problem folders OK." in result.stdout


def test_the_same_id_in_two_folders_is_an_error(tmp_path: Path) -> None:
    first = fixture(tmp_path / "a", {"subtracts.diff": SUBTRACT_DIFF})
    second = fixture(tmp_path / "b", {"subtracts.diff": SUBTRACT_DIFF})
    out = io.StringIO()
    code = check_problems([first, second], parallel=2, stream=out)
    assert code == 1, out.getvalue()
    assert f"duplicate id 'fx-add' (also in {first})" in out.getvalue()
    assert "1 of 2 problem folders OK." in out.getvalue()


def test_a_test_name_cut_mid_sentence_is_pointed_out(tmp_path: Path) -> None:
    folder = fixture(tmp_path, {"subtracts.diff": SUBTRACT_DIFF})
    (folder / "tests" / "public" / "test_titles.py").write_text(
        "from adder import add\n\n\n"
        "def test_runs_on():\n    \"\"\"Adding two numbers gives their sum, also when one of\n"
        "    them is negative.\"\"\"\n    assert add(-1, 2) == 1\n\n\n"
        "def test_titled():\n    \"\"\"A short title.\n\n    Then the detail.\"\"\"\n    assert add(1, 2) == 3\n",
        encoding="utf-8")
    found = findings(folder)
    cut = [note for note in found.notes if note.kind == "cut-test-name"]
    assert [(n.path, n.line) for n in cut] == [("tests/public/test_titles.py", 4)], found.notes
    assert "'Adding two numbers gives their sum, also when one of'" in cut[0].message  # the cut title
    assert not found.failures  # a note: the problem still works


# --- points: degenerate solutions, wrong solutions that must lose points --------------------

def test_check_fails_a_problem_where_a_degenerate_solution_earns_points(tmp_path: Path) -> None:
    folder = fixture(tmp_path, {})
    (folder / "tests" / "public" / "test_raises.py").write_text(
        "import pytest\nimport adder\n\n\ndef test_text_raises():\n"
        "    with pytest.raises(ValueError):\n        adder.add('1', 2)\n", encoding="utf-8")
    code, out, found = checked(folder)
    assert code == 1, out
    earning = [f.message for f in found.failures if f.kind == "degenerate-earns"]
    assert len(earning) == 1 and earning[0].startswith("degenerate: raises ") and "test_text_raises" in earning[0]
    assert "x degenerate: raises earns" in out, out  # printed as a failure


def test_check_holds_a_wrong_solution_to_the_points_it_must_lose(tmp_path: Path) -> None:
    keeps_most = "# judge: loses at-least 50%\ndef add(a, b):\n    return a + b if a < 100 else 0\n"
    folder = fixture(tmp_path, {"big_numbers.py": keeps_most, "loses_enough.py": keeps_most.replace("50%", "20%")})
    code, out, found = checked(folder)
    assert code == 1, out
    assert about(found.failures, "wrong/big_numbers.py") == ["unmet-expectation"], out
    assert "keeps 3 of 4 points (75%)" in found.failures[0].message, out
    assert about(found.failures, "wrong/loses_enough.py") == [], out


def test_check_holds_a_slip_to_the_most_it_may_lose(tmp_path: Path) -> None:
    """A slip (here: big numbers, a quarter of the tests) declared to lose at most 20% loses 25%: a failure
    that says what it kept and what to change; declared at most 30%, it holds."""
    slip = "# judge: loses at-most 20%\ndef add(a, b):\n    return a + b if a < 100 else 0\n"
    folder = fixture(tmp_path, {"costs_too_much.py": slip, "costs_little.py": slip.replace("20%", "30%")})
    code, out, found = checked(folder)
    assert code == 1, out
    assert about(found.failures, "wrong/costs_too_much.py") == ["unmet-expectation"], out
    assert "at most 20%" in found.failures[0].message, out
    assert about(found.failures, "wrong/costs_little.py") == [], out


def test_a_secret_test_that_records_an_expected_timeline_fails_the_check(tmp_path: Path) -> None:
    """Yours vs expected is for public tests only: a secret test's expected order is not the learner's to see."""
    folder = fixture(tmp_path, {"subtracts.diff": SUBTRACT_DIFF})
    (folder / "tests" / "secret" / "test_secret_order.py").write_text(
        "from adder import add\n\nfrom judge.artifacts import timeline\n\n\n"
        "def test_secret_order(record_property):\n"
        "    record_property('timeline', timeline([[('F', 0, 0, add(0, 1))]], title='yours'))\n"
        "    record_property('expected', timeline([[('F', 0, 0, 1)]], title='expected SECRET'))\n"
        "    assert add(0, 1) == 1\n", encoding="utf-8")
    code, out, found = checked(folder)
    assert code == 1, out
    assert [(f.kind, f.path) for f in found.failures] == [
        ("secret-expected-timeline", "tests/secret/test_secret_order.py")], out
    assert "test_secret_order" in out and "seen with the reference" in out, out
    (folder / "tests" / "secret" / "test_secret_order.py").unlink()  # the same problem without it passes
    code, out = check(folder)
    assert code == 0, out
