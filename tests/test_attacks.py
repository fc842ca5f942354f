"""Attacks a student who wants marks without the work would try, graded with `judge grade`.

tests/fixtures/attacks/README.md describes the fixtures: canaries (fx-add solutions that earn the
points only when their attack works) and real exploits against the bundled problems. Under
bubblewrap every one of them earns nothing; under the plain level only reading the grader's disk
works, and grading warns about exactly that. No attack changes the canonical tests or another
student's grade. (The Gradescope bundle runs the canaries at the user level: tests/test_export.py.)
"""

from __future__ import annotations

import csv
import hashlib
import os
import shutil
import tempfile
from pathlib import Path

import pytest

from judge.commands.grade import Options, grade_class
from judge.core.problem import discover_problems, load_problem
from judge.engines import get_engine
from judge.sandbox import levels, trees
from tests.conftest import FIXTURE_PROBLEMS, PROBLEMS, ROOT

pytestmark = pytest.mark.slow  # every attack is graded at every sandbox level

ATTACKS = ROOT / "tests" / "fixtures" / "attacks"
CANARIES = sorted(p.stem for p in (ATTACKS / "canary").glob("*.py"))
EXPLOITS = sorted(p.stem for p in (ATTACKS / "problems").glob("*.py"))
#: exploits that sit on a partly right solution: the attack line must buy nothing over the solution without it
ATTACK_LINES = {"pp-bubble-math__patch_isclose": "math.isclose = lambda *a, **k: True",
                "pp-1f1b-emulated__patch_allclose": "import numpy; numpy.allclose = lambda *a, **k: True",
                "pp-schedule__crash_the_tests": "return _crash()  # the attack"}
#: what the plain level cannot stop: the learner's code runs as the grader (grading warns about it)
PLAIN_HOLES = {"disk_secret_tests", "parent_memory"}
HONEST = "def add(a, b):\n    return a + b\n"

needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None and os.environ.get("CI") != "true",
                                 reason="bubblewrap is not installed (in CI a missing bwrap is a failure)")


def engine(level: str):
    return get_engine("native", sandbox=levels.choose(level, grading=True))


def grade(submissions: dict[str, dict[str, str]], problems_dir: Path, out: Path, level: str) -> dict[str, dict]:
    """Grade ``{student: {problem id: code}}``; the grades.csv rows by student."""
    problems, errors = discover_problems(problems_dir)
    assert not errors, errors
    entries = {p.id: p.entry for p in problems}
    folder = out.parent / f"{out.name}-submissions"
    for student, files in submissions.items():
        for problem_id, code in files.items():
            path = folder / student / problem_id / entries[problem_id]
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(code)
    grade_class(folder, out, problems, Options(parallel=2, engine=engine(level)))
    with (out / "grades.csv").open() as handle:
        return {row["student"]: row for row in csv.DictReader(handle)}


def fixture_copy(tmp_path: Path) -> Path:
    """A copy of fx-add to grade against (an attack that wrote to it would not damage the repository)."""
    folder = tmp_path / "problems" / "fx-add"
    shutil.copytree(FIXTURE_PROBLEMS / "fx-add", folder)
    return folder.parent


def digests(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


@needs_bwrap
def test_no_canary_earns_a_point_under_bubblewrap(tmp_path):
    problems = fixture_copy(tmp_path)
    before = digests(problems)
    subs = {name: {"fx-add": (ATTACKS / "canary" / f"{name}.py").read_text()} for name in CANARIES}
    rows = grade({**subs, "zz-honest": {"fx-add": HONEST}}, problems, tmp_path / "out", "bubblewrap")
    earned = {name: rows[name]["total"] for name in CANARIES if float(rows[name]["total"]) > 0}
    assert earned == {}, f"these attacks earned points under bubblewrap: {earned}"
    assert float(rows["zz-honest"]["total"]) == 4.0  # graded after the attacks, in the same batch
    assert digests(problems) == before


def test_under_the_plain_level_only_the_documented_holes_earn_points(tmp_path):
    problems = fixture_copy(tmp_path)
    before = digests(problems)
    subs = {name: {"fx-add": (ATTACKS / "canary" / f"{name}.py").read_text()} for name in CANARIES}
    rows = grade({**subs, "zz-honest": {"fx-add": HONEST}}, problems, tmp_path / "out", "plain")
    earned = {name for name in CANARIES if float(rows[name]["total"]) > 0}
    assert earned == PLAIN_HOLES, f"the plain level's holes are not the documented ones: {earned ^ PLAIN_HOLES}"
    assert float(rows["zz-honest"]["total"]) == 4.0
    assert digests(problems) == before  # the guard refuses the write even here


@needs_bwrap
def test_exploits_against_the_bundled_problems_buy_nothing(tmp_path):
    problems, _ = discover_problems(PROBLEMS)
    subs: dict[str, dict[str, str]] = {}
    baselines: dict[str, dict[str, str]] = {}
    for name in EXPLOITS:
        problem_id = name.split("__")[0]
        code = (ATTACKS / "problems" / f"{name}.py").read_text()
        subs[name] = {problem_id: code}
        if name in ATTACK_LINES:
            assert ATTACK_LINES[name] in code
            baselines[f"{name}--without"] = {problem_id: code.replace(ATTACK_LINES[name], "")}
    honest = (ATTACKS / "honest" / "pp-bubble-math__honest_state.py").read_text()
    rows = grade({**subs, **baselines, "honest-state": {"pp-bubble-math": honest}}, PROBLEMS, tmp_path / "out",
                 "bubblewrap")
    for name in EXPLOITS:
        problem_id = name.split("__")[0]
        expected = rows[f"{name}--without"][problem_id] if name in ATTACK_LINES else "0"
        assert rows[name][problem_id] == expected, (
            f"{name} earned {rows[name][problem_id]} of {problem_id}'s points; without its attack {expected}")
    assert rows["honest-state"]["pp-bubble-math"] == "10"
    assert len(problems) == 8


def test_the_plain_warning_names_the_fix():
    warning = levels.choose("plain", grading=True).warning
    assert "can read the grader's files" in warning and "apt-get install bubblewrap" in warning
    assert "--sandbox user" in warning


def test_every_exploit_targets_a_bundled_problem():
    ids = {p.id for p in discover_problems(PROBLEMS)[0]}
    assert {name.split("__")[0] for name in EXPLOITS} <= ids
    assert load_problem(FIXTURE_PROBLEMS / "fx-add").entry == "adder.py"


def test_the_docs_table_lists_every_canary_with_its_measured_outcome():
    """docs/hostile-input.md: one row per canary; bubblewrap and user 0; plain earns exactly PLAIN_HOLES."""
    text = (ROOT / "docs" / "hostile-input.md").read_text()
    section = text.split("## Attacks on grades, measured", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 6 and cells[0].startswith("`") and "__" not in cells[0]:
            rows[cells[0].strip("`")] = cells
    assert sorted(rows) == CANARIES
    for name, (_, _, bubblewrap, user, plain, _) in rows.items():
        assert bubblewrap.startswith("0") and user == "0", name
        assert plain.startswith("**4**") == (name in PLAIN_HOLES), name
    exploits = {c.split("`")[1] for c in section.splitlines() if c.startswith("| `") and "__" in c.split("|")[1]}
    assert exploits == set(EXPLOITS)


def test_a_tree_too_deep_for_rmtree_stops_no_grading_at_the_plain_level(tmp_path, monkeypatch):
    """The red team's deep_dirs (5,000 nested folders) once stopped `judge grade` for the class: at the plain
    level too every student is graded and the job's folders go (what it made in /tmp as the grader stays:
    the plain level is no sandbox, and this test removes it)."""
    private = tmp_path / "tmp"
    private.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(private))
    shared_before = set(Path("/tmp").glob("deep-*"))
    attack = (ATTACKS / "user" / "deep_dirs.py").read_text()
    try:
        rows = grade({"deep_dirs": {"fx-add": attack}, "zz-honest": {"fx-add": HONEST}}, fixture_copy(tmp_path),
                     tmp_path / "out", "plain")
    finally:
        for left in set(Path("/tmp").glob("deep-*")) - shared_before:
            trees.remove_tree(left)
    assert (rows["deep_dirs"]["total"], rows["zz-honest"]["total"]) == ("0", "4")
    # the run's runtime folder (the judge's own learner-side modules) lives as long as this process
    assert [p.name for p in private.glob("judge-*") if not p.name.startswith("judge-runtime-")] == []
