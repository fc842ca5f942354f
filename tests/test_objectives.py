"""Points by learning objective: problem.toml's ``[[objectives]]``, how a Result is scored by them,
and every report that says them.

The end-to-end cases judge pp-schedule (gpipe 4, 1f1b 4.5, types 0.5, checks 1 point) with solutions a
learner writes: the chapter's own schedule() without argument checks, code that raises for every
input, tests skipped from learner code.
"""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pytest

from judge.commands.grade import Options, grade_class
from judge.core import result as result_module
from judge.core.problem import ProblemError, discover_problems, load_problem
from judge.core.result import ObjectiveResult, Result
from judge.core.scoring import rescore, score_result
from judge.engines.native import Job
from judge.formats import FORMATS, FormatContext
from judge.formats.terminal import print_report
from tests.conftest import FIXTURE_PROBLEMS, ROOT, judge_isolated

SCHEDULE = ROOT / "problems" / "pp-schedule"

CHAPTER_SCHEDULE = '''
def schedule(kind, p, m):
    orders = []
    for s in range(p):
        if kind == "gpipe":
            orders.append([("F", i) for i in range(m)] + [("B", i) for i in range(m)])
        else:
            warm = min(p - s - 1, m)
            order = [("F", i) for i in range(warm)]
            for i in range(m - warm):
                order += [("F", warm + i), ("B", i)]
            order += [("B", i) for i in range(m - warm, m)]
            orders.append(order)
    return orders
'''
RAISES = "def schedule(kind, p, m):\n    raise ValueError('no')\n"
SKIPS = "import pytest\n\ndef schedule(kind, p, m):\n    pytest.skip('not today')\n"

OBJECTIVES = '''
points = 10

[[objectives]]
id = "sum"
title = "Adding"
points = 8
tests = ["test_small", "test_big"]

[[objectives]]
id = "zero"
title = "Adding zero"
points = 2
kind = "checks"
requires = ["sum"]
tests = ["test_zero*"]
'''


def _problem_with(tmp_path: Path, toml_extra: str) -> Path:
    folder = tmp_path / "problems" / "fx-add"
    shutil.copytree(FIXTURE_PROBLEMS / "fx-add", folder, ignore=shutil.ignore_patterns("__pycache__"))
    with (folder / "problem.toml").open("a", encoding="utf-8") as toml:
        toml.write(toml_extra)
    return folder


def _judge(problem_folder: Path, source: str, tmp_path: Path) -> Result:
    solution = tmp_path / "solution" / load_problem(problem_folder).entry
    solution.parent.mkdir(exist_ok=True)
    solution.write_text(source, encoding="utf-8")
    return judge_isolated(Job(load_problem(problem_folder), solution, include_secret=True))


def _objectives(result: Result) -> dict[str, float]:
    return {o.id: o.points for o in result.objectives}


# --- problem.toml ----------------------------------------------------------------------------

@pytest.mark.parametrize(("extra", "error"), [
    (OBJECTIVES.replace("points = 8", "points = 7"), "the objectives' points add up to 9, not the problem's points (10)"),
    (OBJECTIVES.replace("points = 8", "points = 5").replace("points = 2", "points = 5"),
     "argument checks and type details carry 5 of 10 points; at most 20% (2)"),
    (OBJECTIVES.replace('requires = ["sum"]', 'requires = ["summing"]'), "requires 'summing', which is not an objective"),
    (OBJECTIVES.replace('tests = ["test_small", "test_big"]', 'tests = ["test_small", "test_big"]\nrequires = ["zero"]'),
     "the requirements form a cycle"),
    (OBJECTIVES.replace('kind = "checks"', 'kind = "style"'), "kind 'style' is not one of"),
    (OBJECTIVES.replace('id = "zero"', 'id = "sum"'), "duplicate id 'sum'"),
    (OBJECTIVES.replace('title = "Adding zero"\n', ''), "missing 'title'"),
    (OBJECTIVES.replace("points = 2\n", "points = 2\nweight = 3\n"), "unknown key 'weight'"),
])
def test_problem_toml_refuses_objectives_that_do_not_add_up(tmp_path, extra, error):
    folder = _problem_with(tmp_path, extra)
    with pytest.raises(ProblemError, match="objectives") as raised:
        load_problem(folder)
    assert {(f.kind, f.path) for f in raised.value.findings} == {("bad-objective", "problem.toml")}
    assert error in str(raised.value), str(raised.value)


def test_a_test_in_no_objective_is_an_error_of_the_problem_not_a_pass(tmp_path):
    folder = _problem_with(tmp_path, OBJECTIVES.replace('tests = ["test_zero*"]', 'tests = ["test_nought*"]'))
    reference = (FIXTURE_PROBLEMS / "fx-add" / "reference" / "adder.py").read_text()
    result = _judge(folder, reference, tmp_path)
    assert result.status == "error"
    assert "test_zero[0-7] belongs to no objective" in result.message, result.message


# --- scoring -----------------------------------------------------------------------------------

TWO_REQUIRED = OBJECTIVES.replace("""[[objectives]]
id = "sum"
title = "Adding"
points = 8
tests = ["test_small", "test_big"]""", """[[objectives]]
id = "small"
title = "Small sums"
points = 4
tests = ["test_small"]

[[objectives]]
id = "big"
title = "Big sums"
points = 4
tests = ["test_big"]""").replace('requires = ["sum"]', 'requires = ["small", "big"]')


def test_the_note_of_a_gated_objective_says_it_is_right_and_what_it_waits_for(tmp_path):
    """An objective that requires two, one of them right: it is right, and it waits for the other only."""
    folder = _problem_with(tmp_path, TWO_REQUIRED)
    small_only = "def add(a, b):\n    return a + b if abs(a) + abs(b) < 100 else 0\n"
    zero = next(o for o in _judge(folder, small_only, tmp_path).objectives if o.id == "zero")
    assert (zero.passed, zero.total, zero.points) == (2, 2, 1), zero
    assert zero.note == "right; it counts in full once Big sums is right", zero.note


def test_titles_and_notes_follow_the_learners_language_and_the_verdict_does_not(tmp_path):
    """problem.toml's titles = { zh = ... } and a test's @pytest.mark.title(zh=...): the Result of a run in
    Chinese names them in Chinese, its note too; status, points and ids are the English run's."""
    toml = TWO_REQUIRED.replace('title = "Small sums"', 'title = "Small sums"\ntitles = { zh = "小数相加" }') \
        .replace('title = "Big sums"', 'title = "Big sums"\ntitles = { zh = "大数相加" }')
    folder = _problem_with(tmp_path, toml)
    test_file = folder / "tests" / "public" / "test_add.py"
    text = test_file.read_text(encoding="utf-8")
    test_file.write_text(text.replace("def test_small(", '@pytest.mark.title(zh="小数")\ndef test_small(', 1),
                         encoding="utf-8")
    small_only = "def add(a, b):\n    return a + b if abs(a) + abs(b) < 100 else 0\n"
    source = tmp_path / "solution" / "adder.py"
    source.parent.mkdir()
    source.write_text(small_only, encoding="utf-8")
    english, chinese = (judge_isolated(Job(load_problem(folder), source, include_secret=True, lang=lang))
                        for lang in ("en", "zh"))
    titles = {o.id: o.title for o in chinese.objectives}
    assert titles["small"] == "小数相加" and titles["big"] == "大数相加", titles
    assert next(o.note for o in chinese.objectives if o.id == "zero") == "正确；等 大数相加 也正确后才全部计分"
    assert {t.name for t in chinese.tests if t.id.endswith("::test_small")} == {"小数"}
    assert {t.name for t in english.tests if t.id.endswith("::test_small")} != {"小数"}

    def verdict(result: Result) -> object:
        return (result.status, result.points, [(o.id, o.points, o.max_points) for o in result.objectives],
                [(t.id, t.outcome, t.points) for t in result.tests])
    assert verdict(english) == verdict(chinese)


def test_checks_count_only_as_far_as_what_they_require_is_right(tmp_path):
    folder = _problem_with(tmp_path, OBJECTIVES)
    problem = load_problem(folder)
    right = "def add(a, b):\n    return a + b\n"
    assert _objectives(_judge(folder, right, tmp_path)) == {"sum": 8, "zero": 2}
    # right for small numbers only: test_big fails, so 'zero' (all its tests passed) keeps half its points
    small_only = "def add(a, b):\n    return a + b if abs(a) + abs(b) < 100 else 0\n"
    result = _judge(folder, small_only, tmp_path)
    assert _objectives(result) == {"sum": 4, "zero": 1}, result.objectives
    zero = next(o for o in result.objectives if o.id == "zero")
    assert (zero.passed, zero.total) == (2, 2)
    assert zero.note == "right; it counts in full once Adding is right"
    assert result.points == 5 and sum(t.points for t in result.tests) == 5
    assert {t.id.split("::")[1]: t.objective for t in result.tests}["test_zero[7-0]"] == "zero"
    assert problem.objectives[1].requires == ["sum"]


def test_points_follow_what_is_learnt_on_pp_schedule(tmp_path):
    chapter = _judge(SCHEDULE, CHAPTER_SCHEDULE, tmp_path)
    assert _objectives(chapter) == {"gpipe": 4, "1f1b": 4.5, "types": 0.5, "checks": 0}, chapter.objectives
    assert chapter.points == 9
    checks = next(o for o in chapter.objectives if o.id == "checks")
    assert "should raise ValueError" in checks.note, checks.note
    raises = _judge(SCHEDULE, RAISES, tmp_path)
    assert raises.points == 0 and _objectives(raises)["checks"] == 0, raises.objectives


@pytest.mark.parametrize("policy", ["proportional", "all-or-nothing"])
def test_tests_skipped_from_learner_code_earn_nothing(tmp_path, policy):
    folder = _problem_with(tmp_path, f'scoring = "{policy}"\n')
    result = _judge(folder, "import pytest\n\ndef add(a, b):\n    pytest.skip('later')\n", tmp_path)
    assert result.status != "passed"
    assert result.points == 0, [(t.id, t.outcome, t.points) for t in result.tests]
    assert all(t.outcome != "passed" for t in result.tests)


def test_skipping_pp_schedule_earns_nothing(tmp_path):
    result = _judge(SCHEDULE, SKIPS, tmp_path)
    assert result.points == 0 and result.status != "passed"


def test_rescoring_against_the_reference_keeps_objectives_and_counts_tests_that_did_not_run(tmp_path):
    folder = _problem_with(tmp_path, OBJECTIVES)
    problem = load_problem(folder)
    canonical = _judge(folder, "def add(a, b):\n    return a + b\n", tmp_path)
    partial = Result.from_dict(canonical.to_dict())
    partial.tests = [t for t in partial.tests if "test_big" not in t.id]  # its file did not load
    rescore(partial, canonical, problem)
    assert _objectives(partial) == {"sum": 4, "zero": 1}
    assert partial.max_points == 10


def test_a_result_written_before_objectives_reads_and_scores_by_its_tests():
    old = {"schema_version": 1, "problem": "fx-add", "status": "failed", "points": 1.0, "max_points": 2.0,
           "tests": [{"id": "a::test_one", "name": "one", "file": "a", "visibility": "public", "outcome": "passed",
                      "points": 1.0, "max_points": 1.0},
                     {"id": "a::test_two", "name": "two", "file": "a", "visibility": "public", "outcome": "failed",
                      "points": 0.0, "max_points": 1.0}]}
    result = Result.from_dict(old)
    assert result.objectives == [] and [t.objective for t in result.tests] == ["", ""]
    problem = load_problem(FIXTURE_PROBLEMS / "fx-add")
    score_result(result, {}, problem)
    assert (result.points, result.max_points, result.objectives) == (1.0, 2.0, [])


# --- every report says points by objective ------------------------------------------------

def _scored() -> tuple[Result, dict]:
    tests = [result_module.TestResult(id=f"tests/public/t.py::test_{n}", name=n, file="tests/public/t.py", visibility="public",
                        outcome=o, message="" if o == "passed" else "expected 3, got 2", objective=obj)
             for n, o, obj in (("a", "passed", "gpipe"), ("b", "failed", "1f1b"))]
    result = Result(problem="pp-schedule", status="failed", tests=tests, points=4.0, max_points=10.0,
                    objectives=[ObjectiveResult("gpipe", "GPipe order", 4.0, 4.0, 1, 1),
                                ObjectiveResult("1f1b", "1F1B order", 0.0, 6.0, 0, 1, note="expected 3, got 2")])
    return result, {"pp-schedule": load_problem(SCHEDULE)}


@pytest.mark.parametrize("name", ["gradescope", "prairielearn", "github-classroom", "json"])
def test_every_platform_format_says_points_by_objective(name):
    result, problems = _scored()
    text = FORMATS[name].render([result], FormatContext(problems=problems))
    if name == "json":
        assert json.loads(text)["results"][0]["objectives"][1]["note"] == "expected 3, got 2", text[:2000]
    else:  # Gradescope shows Markdown: the note, which may be the learner's words, is quoted as code there
        note = "` expected 3, got 2 `" if name == "gradescope" else "expected 3, got 2"
        assert f"1F1B order 0 / 6: {note}" in _strings(json.loads(text)), text[:2000]


def _strings(data: object) -> str:
    """Every string inside a JSON document, one per line."""
    if isinstance(data, dict):
        return "\n".join(_strings(v) for v in data.values())
    if isinstance(data, list):
        return "\n".join(_strings(v) for v in data)
    return data if isinstance(data, str) else ""


def test_the_terminal_report_says_points_by_objective():
    result, _ = _scored()
    out = io.StringIO()
    print_report([result], out)
    text = out.getvalue()
    assert "1F1B order" in text and "0 / 6" in text and "expected 3, got 2" in text, text


def test_feedback_and_the_class_report_say_points_by_objective(tmp_path):
    problems = tmp_path / "problems"
    shutil.copytree(SCHEDULE, problems / "pp-schedule", ignore=shutil.ignore_patterns("__pycache__"))
    subs = tmp_path / "subs"
    (subs / "ada" / "pp-schedule").mkdir(parents=True)
    (subs / "ada" / "pp-schedule" / "pp_sim.py").write_text(CHAPTER_SCHEDULE, encoding="utf-8")
    found, errors = discover_problems(problems)
    assert not errors
    grade_class(subs, tmp_path / "out", found, Options())
    feedback = (tmp_path / "out" / "feedback" / "ada.md").read_text(encoding="utf-8")
    assert "Points by objective" in feedback and "Argument checks 0 / 1" in feedback, feedback[:3000]
    report = (tmp_path / "out" / "report.html").read_text(encoding="utf-8")
    assert "Argument checks" in report and "1F1B order" in report


def test_the_grading_guides_table_of_objectives_is_the_problems_own():
    """docs/grading.md lists every problem's objectives and points: its rows are what the problem.toml files
    declare (two rows had gone stale when pp-simulate's and pp-1f1b-emulated's points changed)."""
    problems, errors = discover_problems(ROOT / "problems")
    assert not errors
    expected = [f"| {p.id} | " + "; ".join(f"{o.title} {o.points:g}" for o in p.objectives) + " |"
                for p in sorted(problems, key=lambda p: p.order)]
    text = (ROOT / "docs" / "grading.md").read_text(encoding="utf-8")
    head = "| problem | objectives (points) |\n|---|---|\n"
    rows = text[text.index(head) + len(head):].split("\n\n", 1)[0].splitlines()
    assert rows == expected
