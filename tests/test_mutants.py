"""``judge check --mutants``: mutants of the reference (cosmic-ray's operators), judged by the native engine,
survivors listed with their diff, equivalent mutants declared in reference/equivalent-mutants.toml."""

from __future__ import annotations

import dataclasses
import io
import shutil
import sys
from pathlib import Path

import pytest

from judge.commands.mutants import (
    OPERATORS,
    Mutant,
    assess,
    check_mutants,
    code_lines,
    declaration,
    generate_mutants,
    judge_mutants,
    matches,
    timed_out,
)
from judge.core.errors import JudgeError
from judge.core.problem import EquivalentMutant, Problem, ProblemError, load_equivalent_mutants, load_problem
from judge.core.result import Result
from judge.core.wrong import apply_unified_diff
from tests.conftest import FIXTURES, run_cli

pytestmark = pytest.mark.slow  # mutation runs judge every mutant of the fixture

FX_CLAMP = FIXTURES / "mutants" / "fx-clamp"
SOURCE = (FX_CLAMP / "reference" / "clamp.py").read_text(encoding="utf-8")
DECLARED = FX_CLAMP / "reference" / "equivalent-mutants.toml"


def copy_fixture(tmp_path: Path) -> Path:
    folder = tmp_path / "problems" / "fx-clamp"
    shutil.copytree(FX_CLAMP, folder, ignore=shutil.ignore_patterns("__pycache__"))
    return folder


def find(mutants: list[Mutant], removed: str, added: str) -> Mutant:
    found = [m for m in mutants if m.removed == (removed,) and m.added == (added,)]
    assert len(found) == 1, f"expected one mutant {removed!r} -> {added!r}, got {[m.where for m in found]}"
    return found[0]


@pytest.fixture(scope="module")
def weak(tmp_path_factory: pytest.TempPathFactory) -> tuple[Problem, list[Mutant], list[Result | None]]:
    """fx-clamp without its single-point test, its mutants judged once (so `low >= high` survives)."""
    folder = copy_fixture(tmp_path_factory.mktemp("weak"))
    secret = folder / "tests" / "secret" / "test_steps.py"
    secret.write_text(secret.read_text(encoding="utf-8").replace("def test_single_point_range", "def _unused"),
                      encoding="utf-8")
    problem = load_problem(folder)
    mutants = generate_mutants(SOURCE, problem.entry)
    return problem, mutants, judge_mutants(problem, mutants, 2.0, 2, None, lambda done: None)


# --- generating mutants --------------------------------------------------------------------------

def test_every_mutant_is_the_reference_with_its_diff_applied() -> None:
    mutants = generate_mutants(SOURCE, "clamp.py")
    assert mutants, "cosmic-ray's operators made no mutant of the fixture"
    assert len({m.source for m in mutants}) == len(mutants), "two mutants have the same code"
    for mutant in mutants:
        assert mutant.source != SOURCE
        compile(mutant.source, "mutant.py", "exec")
        assert apply_unified_diff(SOURCE, mutant.diff) == mutant.source, mutant.where
        assert mutant.diff.startswith("--- reference/clamp.py\n+++ mutant (")


def test_the_realistic_mistakes_are_among_the_mutants() -> None:
    mutants = generate_mutants(SOURCE, "clamp.py")
    off_by_one = find(mutants, "start += 1", "start += 0")
    assert (off_by_one.operator, off_by_one.line, off_by_one.function) == ("core/NumberReplacer", 17, "count_steps")
    boundary = find(mutants, "if low > high:", "if low >= high:")
    assert (boundary.line, boundary.function) == (5, "clamp")
    find(mutants, "if value > high:", "if not value > high:")


def test_a_mutant_names_the_method_or_module_level_that_holds_it() -> None:
    source = "LIMIT = 3\n\n\nclass Box:\n    def size(self, n):\n        return n + 1\n"
    mutants = generate_mutants(source, "box.py")
    assert {m.function for m in mutants if m.line == 6} == {"Box.size"}
    assert {m.function for m in mutants if m.line == 1} == {None}
    assert "module level, line 1" in next(m.where for m in mutants if m.line == 1)


def test_type_annotations_are_not_mutated() -> None:
    source = ("from __future__ import annotations\n\n\n"
              "def first(items: list[int] | None, n: int = 1) -> tuple[int, ...] | None:\n"
              "    size: int | None = n + 1\n    return None if items is None else tuple(items[:size])\n")
    changed = {m.added for m in generate_mutants(source, "first.py")}
    assert ("size: int | None = n - 1",) in changed and ("def first(items: list[int] | None, n: int = 2) "
                                                          "-> tuple[int, ...] | None:",) in changed
    assert not [c for c in changed if "&" in c[0]], "a `|` of a type hint was mutated"


def test_only_the_chosen_operators_run_and_unknown_ones_are_refused() -> None:
    only = generate_mutants(SOURCE, "clamp.py", operators=["core/NumberReplacer"])
    assert {m.operator for m in only} == {"core/NumberReplacer"} and len(only) == 6
    with pytest.raises(JudgeError, match="no operator core/NoSuchOperator"):
        generate_mutants(SOURCE, "clamp.py", operators=["core/NoSuchOperator"])
    generate_mutants(SOURCE, "clamp.py", operators=OPERATORS)  # every default operator exists in the pinned version


def test_without_cosmic_ray_the_message_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "cosmic_ray", None)
    with pytest.raises(JudgeError, match=r"needs the cosmic-ray package: pip install 'pp-judge\[mutants\]'"):
        generate_mutants(SOURCE, "clamp.py")


# --- declarations: the format and the matching ----------------------------------------------------

def test_declarations_load_from_the_reference_folder() -> None:
    declared = load_problem(FX_CLAMP).equivalent_mutants
    assert [(d.number, d.function, d.code, d.mutant) for d in declared] == [
        (1, "clamp", "if value < low:", "if value <= low:"), (2, "clamp", "if value > high:", "if value >= high:")]
    assert load_equivalent_mutants(FX_CLAMP / "reference" / "absent.toml") == []


@pytest.mark.parametrize("table, words", [
    ('code = "a < b"\nmutant = "a <= b"', "[[equivalent]] 1: missing field 'reason'"),
    ('code = "a < b"\nmutant = "a <= b"\nreason = "  "', "field 'reason': say why"),
    ('code = "a < b"\nmutant = "a  <  b"\nreason = "r"', "'code' and 'mutant' are the same"),
    ('code = ""\nmutant = "x"\nreason = "r"', "field 'code': the reference's line(s)"),
    ('code = "a"\nmutant = "b"\nreason = "r"\nline = 3', "unknown field 'line'"),
    ('code = "a"\nmutant = 2\nreason = "r"', "field 'mutant': expected str, got int 2"),
    ('code = "a"\nmutant = "b"\nreason = "r"\nfunction = "f()"', "field 'function': 'f()' must be"),
])
def test_an_invalid_declaration_names_the_file_table_and_field(tmp_path: Path, table: str, words: str) -> None:
    path = tmp_path / "equivalent-mutants.toml"
    path.write_text(f"[[equivalent]]\n{table}\n", encoding="utf-8")
    with pytest.raises(ProblemError, match="equivalent-mutants.toml") as caught:
        load_equivalent_mutants(path)
    assert words in str(caught.value)


def test_a_mutant_declared_twice_and_a_table_that_is_not_an_array_are_errors(tmp_path: Path) -> None:
    path = tmp_path / "equivalent-mutants.toml"
    entry = '[[equivalent]]\ncode = "a < b"\nmutant = "a <= b"\nreason = "r"\n'
    path.write_text(entry + entry.replace("a < b", "a  <  b"), encoding="utf-8")
    with pytest.raises(ProblemError, match=r"\[\[equivalent\]\] 2: the same mutant as \[\[equivalent\]\] 1"):
        load_equivalent_mutants(path)
    path.write_text('[equivalent]\ncode = "a"\n', encoding="utf-8")
    with pytest.raises(ProblemError, match="must be an array of tables"):
        load_equivalent_mutants(path)


def test_an_invalid_declaration_file_makes_the_problem_folder_invalid(tmp_path: Path) -> None:
    folder = copy_fixture(tmp_path)
    (folder / "reference" / "equivalent-mutants.toml").write_text("[[equivalent]]\ncode = 'x'\n", encoding="utf-8")
    with pytest.raises(ProblemError, match="missing field 'mutant'"):
        load_problem(folder)


def test_matching_ignores_whitespace_and_respects_the_function() -> None:
    mutant = find(generate_mutants(SOURCE, "clamp.py"), "if value < low:", "if value <= low:")
    assert code_lines("    if  value <\tlow:\n\n") == ("if value < low:",)
    assert matches(EquivalentMutant("if value  < low:", " if value <= low:", "r"), mutant)
    assert matches(EquivalentMutant("if value < low:", "if value <= low:", "r", "clamp"), mutant)
    assert not matches(EquivalentMutant("if value < low:", "if value <= low:", "r", "count_steps"), mutant)
    assert not matches(EquivalentMutant("if value < low:", "if value > low:", "r"), mutant)


def test_the_printed_declaration_loads_and_matches_its_mutant(tmp_path: Path) -> None:
    mutant = find(generate_mutants(SOURCE, "clamp.py"), "if low > high:", "if low >= high:")
    text = declaration(mutant).replace("FILL IN (instructor): why this mutant behaves exactly like the reference",
                                       "a reason")
    path = tmp_path / "equivalent-mutants.toml"
    path.write_text(text, encoding="utf-8")
    [declared] = load_equivalent_mutants(path)
    assert matches(declared, mutant) and declared.function == "clamp"


# --- judging and assessing ------------------------------------------------------------------------

def test_the_fixture_has_no_unexplained_survivor(tmp_path: Path) -> None:
    out = io.StringIO()
    code = check_mutants(FX_CLAMP.parent, parallel=2, stream=out, progress=None)
    text = out.getvalue()
    assert code == 0, text
    generated = len(generate_mutants(SOURCE, "clamp.py"))
    assert f"fx-clamp mutants: {generated} generated, {generated - 2} killed (" in text
    assert "2 accepted as equivalent, 0 survived in" in text
    assert "survived:" not in text


def test_a_mutant_the_weakened_tests_miss_survives(weak: tuple[Problem, list[Mutant], list[Result | None]]) -> None:
    problem, mutants, results = weak
    report = assess(problem, mutants, results)
    assert [m.added for m in report.survivors] == [("if low >= high:",)]
    assert sorted(d.number for _, d in report.accepted) == [1, 2]
    assert report.failures == [] and not report.ok
    assert len(report.killed) == len(mutants) - 3


def test_mutants_that_loop_are_killed_by_their_time_limit(weak: tuple[Problem, list[Mutant], list[Result | None]]
                                                          ) -> None:
    problem, mutants, results = weak
    by_change = {m.added: r for m, r in zip(mutants, results)}
    looping = by_change[("start += 0",)]
    assert looping is not None and looping.status != "passed" and timed_out(looping)
    finite = by_change[("start += 2",)]
    assert finite is not None and finite.status == "failed" and not timed_out(finite)


def test_a_declaration_the_tests_kill_and_a_stale_one_fail(weak: tuple[Problem, list[Mutant], list[Result | None]]
                                                           ) -> None:
    problem, mutants, results = weak
    killed = EquivalentMutant("if low > high:", "if low < high:", "not really", "clamp", 3)
    stale = EquivalentMutant("return value", "return None", "was once", None, 4)
    elsewhere = EquivalentMutant("if low > high:", "if low >= high:", "in the wrong function", "count_steps", 5)
    declared = dataclasses.replace(problem, equivalent_mutants=[*problem.equivalent_mutants, killed, stale, elsewhere])
    report = assess(declared, mutants, results)
    assert len(report.survivors) == 1, "a declaration naming another function must not accept the mutant"
    assert len(report.failures) == 3
    assert report.failures[0].startswith("reference/equivalent-mutants.toml: [[equivalent]] 3 (`if low > high:` -> "
                                         "`if low < high:` in clamp) is no equivalent: the tests kill it (test_")
    assert "[[equivalent]] 4 (`return value` -> `return None`) is stale" in report.failures[1]
    assert "[[equivalent]] 5" in report.failures[2] and "is stale" in report.failures[2]


def test_mutants_left_by_the_budget_are_not_judged_and_fail(tmp_path: Path) -> None:
    out = io.StringIO()
    code = check_mutants(FX_CLAMP.parent, parallel=2, stream=out, progress=None, budget=0)
    assert code == 1
    generated = len(generate_mutants(SOURCE, "clamp.py"))
    assert f"{generated} generated, 0 killed, 0 accepted as equivalent, 0 survived, {generated} not judged" \
           in out.getvalue()
    assert "stale" not in out.getvalue(), "declarations are not assessed on a partial run"


def test_a_failing_reference_is_not_mutated(tmp_path: Path) -> None:
    folder = copy_fixture(tmp_path)
    reference = folder / "reference" / "clamp.py"
    reference.write_text(SOURCE.replace("return low\n", "return high\n", 1), encoding="utf-8")
    out = io.StringIO()
    assert check_mutants(folder.parent, parallel=2, stream=out, progress=None) == 1
    assert "FAILED  fx-clamp mutants: 0 generated" in out.getvalue()
    assert "the reference does not pass (status failed)" in out.getvalue()


def test_the_command_lists_a_survivor_with_its_diff_and_fails(tmp_path: Path) -> None:
    folder = copy_fixture(tmp_path)
    (folder / "reference" / "equivalent-mutants.toml").unlink()
    result = run_cli("check", str(folder.parent), "--mutants", "-j", "2", "-v")
    assert result.returncode == 1, result.stdout + result.stderr
    out = result.stdout
    assert "OK      fx-clamp\n" in out, "the ordinary check runs too"
    assert "FAILED  fx-clamp mutants:" in out and "2 survived" in out
    assert "x survived: core/ReplaceComparisonOperator_Lt_LtE in clamp, line 7" in out
    assert "        -    if value < low:\n        +    if value <= low:\n" in out
    assert 'code = "if value < low:"\n        mutant = "if value <= low:"\n' in out  # -v: the table to paste
    assert "Mutants: " in out and "0 of 1 problems OK, in " in out


def test_progress_lines_count_the_judged_mutants(monkeypatch: pytest.MonkeyPatch) -> None:
    from judge.commands import mutants

    monkeypatch.setattr(mutants, "PROGRESS_EVERY", 0.0)
    out = io.StringIO()
    progress = mutants._Progress(out, "fx-clamp")
    progress.start(40)
    progress.add(32)
    progress.add(8)  # the last batch: the problem's own line follows, no progress line
    lines = out.getvalue().splitlines()
    assert len(lines) == 1 and lines[0].startswith("  fx-clamp: 32 of 40 mutants judged (")
