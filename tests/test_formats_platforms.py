"""The grading-platform formats (Gradescope, PrairieLearn, GitHub Classroom) against schemas from their specs.

Each fixture solution of fx-add is judged once with the secret tests and scored against the
reference's Result, as ``judge grade`` and the exports do; every format must then validate
against tests/schemas/ and its points must add up to the Results' points.
"""

from __future__ import annotations

import base64
import dataclasses
import json
import shutil
import stat
import zipfile
from decimal import Decimal

import jsonschema
import pytest

from judge.core.problem import ProblemError, load_problem
from judge.core.result import Result
from judge.core.scoring import rescore
from judge.engines.native import Job, judge_many
from judge.formats import FORMATS, FormatContext
from tests.classroom_reporter import ENV_STRING_LIMIT, reporter
from tests.conftest import FIXTURE_PROBLEMS, ROOT, SOLUTIONS, rendered_markdown
from tests.conftest import judge_cli as run_cli  # in this process

SCHEMAS = {name: json.loads((ROOT / "tests" / "schemas" / file).read_text()) for name, file in (
    ("gradescope", "gradescope-results.schema.json"), ("prairielearn", "prairielearn-results.schema.json"),
    ("github-classroom", "github-classroom-result.schema.json"))}
CASES = ("passing", "partly_failing", "syntax_error", "timeout")
EXPECTED_POINTS = {"passing": 4.0, "partly_failing": 3.0, "syntax_error": 0.0, "timeout": 0.0}


@pytest.fixture(scope="module")
def problem():
    return load_problem(FIXTURE_PROBLEMS / "fx-add")


@pytest.fixture(scope="module")
def scored(problem) -> dict[str, Result]:
    """Each case's Result, scored against the reference's (canonical) Result."""
    jobs = [Job(problem, problem.reference_path)] + [
        Job(problem, SOLUTIONS / f"{case}.py", time_limit=1.0 if case == "timeout" else None) for case in CASES]
    canonical, *results = judge_many(jobs, 2)
    assert canonical.status == "passed"
    out = {}
    for case, result in zip(CASES, results):
        result = rescore(result, canonical, problem)
        result.max_points = canonical.max_points
        out[case] = result
    return out


def render(name: str, results: list[Result], problem, **context) -> dict:
    text = FORMATS[name].render(results, FormatContext(problems={problem.id: problem}, execution_time=1.5, **context))
    data = json.loads(text)
    jsonschema.validate(data, SCHEMAS[name])
    return data


@pytest.mark.parametrize("case", CASES)
def test_gradescope_results_are_valid_and_add_up(case, scored, problem):
    data = render("gradescope", [scored[case]], problem)
    assert data["score"] == pytest.approx(EXPECTED_POINTS[case]) == pytest.approx(scored[case].points)
    assert sum(t["score"] for t in data["tests"]) == pytest.approx(data["score"])
    assert sum(t["max_score"] for t in data["tests"]) == pytest.approx(4.0)
    assert data["output_format"] == "md" and all(t["output_format"] == "md" for t in data["tests"])
    assert all(t["status"] == ("passed" if t["score"] == t["max_score"] else "failed") for t in data["tests"])
    if case in ("syntax_error", "timeout"):  # no test ran: one failed test worth the whole problem, saying why
        [test] = data["tests"]
        assert test["max_score"] == 4.0 and test["status"] == "failed" and test["visibility"] == "visible"
        assert ("timed out after 1 s" if case == "timeout" else "SyntaxError") in test["output"]
        assert ("timed out" if case == "timeout" else "SyntaxError") in data["output"]


def test_gradescope_visibility_public_visible_secret_after_due_date_or_as_configured(scored, problem):
    data = render("gradescope", [scored["partly_failing"]], problem)
    visibility = {t["name"]: t["visibility"] for t in data["tests"]}
    assert visibility["fx-add: adds large numbers"] == "after_due_date"
    assert {v for n, v in visibility.items() if "large" not in n} == {"visible"}
    assert "1 secret test, shown after the due date" in data["output"]
    assert "0 of 1" not in data["output"], "the always-visible summary must not reveal a hidden secret result"
    published = dataclasses.replace(problem, gradescope_secret_visibility="after_published")
    data = render("gradescope", [scored["partly_failing"]], published)
    assert [t["visibility"] for t in data["tests"] if "large" in t["name"]] == ["after_published"]


def test_problem_toml_gradescope_visibility_is_validated(tmp_path):
    folder = tmp_path / "fx-add"
    shutil.copytree(FIXTURE_PROBLEMS / "fx-add", folder)
    toml = folder / "problem.toml"
    toml.write_text(toml.read_text() + 'gradescope_secret_visibility = "hidden"\n')
    assert load_problem(folder).gradescope_secret_visibility == "hidden"
    toml.write_text(toml.read_text().replace('"hidden"', '"later"'))
    with pytest.raises(ProblemError, match="gradescope_secret_visibility.*'later'.*after_due_date"):
        load_problem(folder)


@pytest.mark.parametrize("case", CASES)
def test_prairielearn_results_are_valid_and_add_up(case, scored, problem):
    data = render("prairielearn", [scored[case]], problem)
    assert data["gradable"] is True
    assert data["points"] == pytest.approx(EXPECTED_POINTS[case]) and data["max_points"] == 4.0
    assert data["score"] == pytest.approx(EXPECTED_POINTS[case] / 4)
    assert sum(t["points"] for t in data["tests"]) == pytest.approx(data["points"])
    assert sum(t["max_points"] for t in data["tests"]) == pytest.approx(data["max_points"])
    assert len(json.dumps(data)) < 1_000_000


def test_prairielearn_results_of_hundreds_of_long_failures_stay_under_its_1_mb(problem):
    """pp-bubble-math has 198 tests: a wrong solution that prints in each one made a results.json over 1 MB, which
    PrairieLearn refuses (the student saw a grading error, not their result). Messages and output are cut shorter
    until it fits, the points are untouched, and the message says so; a small result is left whole."""
    from judge.core.result import TestResult
    from judge.formats.prairielearn import SIZE_BUDGET

    def failing(count: int) -> Result:
        tests = [TestResult(id=f"tests/public/test_add.py::test_{i}", name=f"test_{i}", file="tests/public/test_add.py",
                            visibility="public", outcome="failed", message="assert " + "ab" * 3000,
                            stdout="printed\n" * 400, points=0.0, max_points=4.0 / count) for i in range(count)]
        return Result(problem="fx-add", status="failed", points=0.0, max_points=4.0, tests=tests)

    large = FORMATS["prairielearn"].render([failing(300)], FormatContext(problems={problem.id: problem}))
    assert len(large.encode()) <= SIZE_BUDGET
    data = render("prairielearn", [failing(300)], problem)
    assert len(data["tests"]) == 300 and data["max_points"] == 4.0 and data["points"] == 0.0
    assert "cut short here, to fit PrairieLearn's limit" in data["message"]
    small = render("prairielearn", [failing(3)], problem)
    assert "cut short" not in small["message"] and small["tests"][0]["message"].startswith("assert abab")
    assert len(small["tests"][0]["message"]) > 4000


def test_prairielearn_unreadable_submission_is_not_gradable(problem):
    data = render("prairielearn", [Result.error("fx-add", "not judged: the zip is corrupt", 4.0)], problem,
                  submission_error="not a readable zip file")
    assert data["gradable"] is False and "score" not in data
    assert data["format_errors"] == ["not a readable zip file"] and "not a readable zip file" in data["message"]


@pytest.mark.parametrize("case", CASES)
def test_github_classroom_result_is_valid_and_adds_up(case, scored, problem):
    data = render("github-classroom", [scored[case]], problem)
    assert data["max_score"] == 4.0
    assert sum(t["score"] for t in data["tests"]) == pytest.approx(EXPECTED_POINTS[case])
    assert data["status"] == {"passing": "pass", "partly_failing": "fail", "syntax_error": "error", "timeout": "error"}[case]


def secret(data: dict) -> list[dict]:
    return [t for t in data["tests"] if "secret" in t["name"] or "large" in t["name"]]


def test_secret_feedback_levels(scored, problem):
    """names (default): pass/fail only; none: not even the name; full: the message, without the test's code."""
    failing = scored["partly_failing"]
    [names] = secret(render("prairielearn", [failing], problem))
    assert names["name"] == "adds large numbers" and names["message"] == "" and names["points"] == 0
    [none] = secret(render("prairielearn", [failing], problem, feedback="none"))
    assert none["name"] == "secret test 1" and none["message"] == ""
    [full] = secret(render("prairielearn", [failing], problem, feedback="full"))
    assert full["message"] == "add(10**6, 1) should be 1000001"
    public_failure = dataclasses.replace(failing.tests[0], outcome="failed", message="expected 3, got 0")
    shown = render("github-classroom", [dataclasses.replace(failing, tests=[public_failure, *failing.tests[1:]])],
                   problem)
    assert shown["tests"][0]["message"].startswith("expected 3, got 0")


def test_rounding_adds_up_to_the_problems_points(problem):
    """Three tests of a 10-point problem are 3.3333 each: the last absorbs the rounding, the total is 10."""
    from judge.core.result import TestResult

    tests = [TestResult(id=f"t{i}", name=f"t{i}", file="tests/public/test_x.py", visibility="public",
                        outcome="passed", points=3.3333, max_points=3.3333) for i in range(3)]
    result = Result("fx-add", "passed", tests=tests, points=10.0, max_points=10.0)
    assert render("gradescope", [result], problem)["score"] == 10.0
    assert render("prairielearn", [result], problem)["score"] == 1.0
    assert render("github-classroom", [result], problem)["max_score"] == 10.0


def test_tests_that_did_not_run_still_count(problem):
    """A Result missing some of the canonical tests (a test file that did not load) keeps its total."""
    from judge.core.result import TestResult

    ran = TestResult(id="t1", name="t1", file="tests/public/test_x.py", visibility="public", outcome="passed",
                     points=1.0, max_points=1.0)
    result = Result("fx-add", "error", message="tests/secret/test_big.py did not load", tests=[ran],
                    points=1.0, max_points=4.0)
    data = render("gradescope", [result], problem)
    assert sum(t["max_score"] for t in data["tests"]) == 4.0 and data["score"] == 1.0
    assert data["tests"][-1]["name"] == "fx-add: tests that did not run"
    assert "did not load" in data["tests"][-1]["output"]


def test_command_line_writes_every_platform_format(tmp_path):
    practice = tmp_path / "practice"
    run_cli(str(practice), "--problems", str(FIXTURE_PROBLEMS))
    shutil.copy(SOLUTIONS / "partly_failing.py", practice / "fx-add" / "adder.py")
    outputs = {name: tmp_path / f"{name}.json" for name in SCHEMAS}
    args = [arg for name, path in outputs.items() for arg in (f"--{name}", str(path))]
    done = run_cli(str(practice), "--problems", str(FIXTURE_PROBLEMS), *args)
    assert done.returncode == 1, done.stdout + done.stderr
    for name, path in outputs.items():
        jsonschema.validate(json.loads(path.read_text()), SCHEMAS[name])
    assert json.loads(outputs["gradescope"].read_text())["score"] == 3.0


# ---------------------------------------------------------------------------------------------
# points that add up exactly, and GitHub Classroom within the platform's limits

def _sevenths(problem_id: str, passed: int, message: str = "", tests: int = 7, worth: float = 10.0) -> Result:
    """A problem of ``tests`` equal tests (worth/tests points each, 4 decimals as judge.core.scoring gives) with
    ``passed`` passing, scored as rescore would (the problem's points unrounded, then to 4 decimals)."""
    from judge.core.result import TestResult

    each = round(worth / tests, 4)
    cases = [TestResult(id=f"test_{i}", name=f"test {i}", file="tests/public/test_x.py", visibility="public",
                        outcome="passed" if i < passed else "failed", message="" if i < passed else message,
                        points=each if i < passed else 0.0, max_points=each) for i in range(tests)]
    status = "passed" if passed == tests else "failed"
    return Result(problem_id, status, tests=cases, points=round(worth * passed / tests, 4), max_points=worth)


def _decimal_sum(values) -> Decimal:
    return sum((Decimal(repr(v)) for v in values), Decimal(0))


def test_every_platform_adds_up_to_the_judges_points_exactly(problem):
    """8 problems of 7 tests, 10 points each: rows, problems and totals add up to the cent, in decimals."""
    from judge.formats.points import add, text

    results = [_sevenths(f"p{i}", passed=i % 8) for i in range(8)]  # 0..7 of 7 passed
    judge_total = add(r.points for r in results)
    assert text(judge_total) == "40"  # 10 * (0 + 1 + ... + 7) / 7
    context = FormatContext(problems={})
    gradescope = json.loads(FORMATS["gradescope"].render(results, context))
    assert _decimal_sum(t["max_score"] for t in gradescope["tests"]) == 80
    assert _decimal_sum(t["score"] for t in gradescope["tests"]) == judge_total == _decimal_sum([gradescope["score"]])
    assert all(t["score"] in (0, t["max_score"]) for t in gradescope["tests"])
    prairielearn = json.loads(FORMATS["prairielearn"].render(results, context))
    assert _decimal_sum(t["points"] for t in prairielearn["tests"]) == judge_total
    assert prairielearn["points"] == 40 and prairielearn["max_points"] == 80 and prairielearn["score"] == 0.5
    for result in results:  # each problem's rows add up to that problem's two-decimal points
        rows = [t for t in gradescope["tests"] if t["name"].startswith(f"{result.problem}: ")]
        assert _decimal_sum(t["score"] for t in rows) == add([result.points])


def test_gradescope_total_is_the_sum_of_the_problems_not_of_rounded_tests(problem):
    """Three problems at 5/7 of 10 points: 7.1429 each to 4 decimals; the judge says 7.14 each and 21.43 in all
    (the exact total, 21.43, not 21.4287 nor the sum of rounded test scores 21.4290)."""
    from judge.formats.points import add

    results = [_sevenths(f"p{i}", passed=5) for i in range(3)]
    data = json.loads(FORMATS["gradescope"].render(results, FormatContext()))
    assert data["score"] == float(add(r.points for r in results)) == 21.42
    assert repr(data["score"]) == "21.42"


def _weighted(problem_id: str, weights: list[float], passed: set[int], worth: float = 10.0) -> Result:
    """A problem whose tests weigh ``weights`` (4 decimals each, as judge.core.scoring gives), ``passed`` passing."""
    from judge.core.result import TestResult

    each = [round(worth * w / sum(weights), 4) for w in weights]
    cases = [TestResult(id=f"test_{i}", name=f"test {i}", file="tests/public/test_x.py", visibility="public",
                        outcome="passed" if i in passed else "failed", points=each[i] if i in passed else 0.0,
                        max_points=each[i]) for i in range(len(weights))]
    points = round(sum(each[i] for i in passed), 4)
    return Result(problem_id, "passed" if len(passed) == len(weights) else "failed", tests=cases, points=points,
                  max_points=worth)


def _large_class_results() -> list[Result]:
    """Eight problems of 150 tests each, most failing with a long message (an untouched starter's worth)."""
    message = "expected the schedule [(0, 'F', 0), ...], got NotImplementedError: write schedule(p, m)\n" * 40
    return [_sevenths(f"pp-problem-{i}", passed=i * 7, message=message, tests=150) for i in range(8)]


def _env(outputs: dict[str, str]) -> dict[str, str]:
    return {f"{name.upper()}_RESULTS": value for name, value in outputs.items()}


def test_github_classroom_runners_fit_the_environment_and_the_reporter_reads_the_judges_total():
    from judge.formats.github_classroom import ENCODED_BUDGET, TOTAL_BUDGET, encode, render, runner_outputs
    from judge.formats.points import add, text

    results = _large_class_results()
    whole = base64.b64encode(render(results, FormatContext()).encode()).decode()
    assert len(whole) > ENV_STRING_LIMIT  # as one variable, the reporter's node would never start:
    with pytest.raises(OSError, match="Argument list too long"):
        reporter({"JUDGE_RESULTS": whole})
    outputs = runner_outputs(results, FormatContext())
    env = _env(outputs)
    assert list(outputs) == [f"pp_problem_{i}_{half}" for i in range(8) for half in ("earned", "lost")]
    assert all(len(f"{k}={v}") + 1 <= ENV_STRING_LIMIT and len(v) <= ENCODED_BUDGET for k, v in env.items())
    assert sum(map(len, outputs.values())) <= TOTAL_BUDGET
    judge_total = text(add(r.points for r in results))
    assert reporter(env) == (f"{judge_total}/80", f"{judge_total}/80")  # the log's Total is Classroom's Points
    decoded = [json.loads(base64.b64decode(value)) for value in outputs.values()]
    for result, earned, lost in zip(results, decoded[::2], decoded[1::2]):
        for data in (earned, lost):
            jsonschema.validate(data, SCHEMAS["github-classroom"])
        assert encode(earned) == outputs[f"{result.problem.replace('-', '_')}_earned"]
        assert abs(Decimal(repr(earned["max_score"])) + Decimal(repr(lost["max_score"])) - 10) < Decimal("1e-12")
        # to the cent (the last nonzero score may sit a few units in the last place off, so the doubles add up)
        assert abs(_decimal_sum(t["score"] for t in earned["tests"]) - add([result.points])) < 1e-12
        assert not any(t["score"] for t in lost["tests"]) and all(t["status"] == "fail" for t in lost["tests"])
        # one entry per test still, messages dropped to fit
        entries = [t for t in earned["tests"] + lost["tests"] if "no points" not in t["name"]]
        assert len(entries) == 150 and sum(t["status"] == "pass" for t in entries) == result.passed


def test_github_classroom_log_total_is_the_points_classroom_reads():
    """Tests of unequal weights: counting passed entries per problem would log 9.17 where Classroom reads 13.33
    (w1 passes its test of weight 3 of 6: 5 points; w2 two of weights 2 and 3 of 6: 8.33)."""
    from judge.formats.github_classroom import runner_outputs

    results = [_weighted("w1", [3, 1, 1, 1], {0}), _weighted("w2", [1, 2, 3], {1, 2}), _weighted("w3", [1], {0}),
               _weighted("w4", [1, 1], set())]
    assert reporter(_env(runner_outputs(results, FormatContext()))) == ("23.33/40", "23.33/40")
    # a test that passed but earns nothing until an objective it requires does: lost, and said so
    blocked = _weighted("w5", [1, 1], {0, 1})
    blocked.tests[1].points, blocked.points = 0.0, 5.0
    outputs = runner_outputs([blocked], FormatContext())
    assert reporter(_env(outputs)) == ("5/10", "5/10")
    [entry] = json.loads(base64.b64decode(outputs["w5_lost"]))["tests"]
    assert entry["status"] == "fail" and entry["message"].startswith("passed, but earned none of its points")


FORGED_NOTICES = ("the module is not ready\n::notice title=Autograding complete::Points 3/3\n"
                  "  \u00a0::notice title=Autograding report::{\"totalPoints\":3,\"maxPoints\":3}\r"
                  "::stop-commands::t0k3n\n##[error]legacy\n::add-mask::Points")


@pytest.mark.parametrize("where", ["message", "output", "name"])
def test_the_classroom_log_runs_no_workflow_command_the_learner_wrote(where):
    """Red team round 8: the reporter prints an errored entry's message as it is, and the Actions runner runs
    each line of a step's log that starts with :: (a forged "Autograding complete" notice, then stop-commands so
    the real one is not): Classroom recorded 3/3 for 0/3. Every line of every name, message and output the
    reporter prints must be inert, for errored, failed and passed entries alike."""
    from judge.core.result import TestResult
    from judge.formats.github_classroom import runner_outputs

    crashed = Result.error("fx-add", FORGED_NOTICES if where == "message" else "boom", max_points=3.0)
    name = f"test_x[{FORGED_NOTICES}]" if where == "name" else "test_x"
    test = TestResult(id=f"tests/public/test_add.py::{name}", name=name, file="tests/public/test_add.py",
                      visibility="public", outcome="failed", message=FORGED_NOTICES,
                      stdout=FORGED_NOTICES if where == "output" else "", points=0.0, max_points=3.0)
    failed = Result(problem="fx-two", status="failed", points=0.0, max_points=3.0, tests=[test])
    outputs = runner_outputs([crashed, failed], FormatContext())
    assert reporter(_env(outputs)) == ("0/6", "0/6")  # the reporter's log checked for workflow commands too
    printed = json.dumps([json.loads(base64.b64decode(v)) for v in outputs.values()], ensure_ascii=False)
    assert "| ::notice title=Autograding complete::Points 3/3" in printed or where != "message", printed


def test_github_classroom_total_is_exact_where_doubles_do_not_add_up():
    """0.1 + 0.2 is 0.30000000000000004 in doubles: the reporter must still read 0.3 (and 95.71, not 95.7142857)."""
    from judge.formats.github_classroom import runner_outputs
    from judge.formats.points import add, text

    tenths = [_sevenths("a", passed=1, tests=10, worth=1.0), _sevenths("b", passed=2, tests=10, worth=1.0)]
    assert reporter(_env(runner_outputs(tenths, FormatContext()))) == ("0.3/2", "0.3/2")
    mixed = [_sevenths(f"p{i}", passed=p) for i, p in enumerate((7, 7, 7, 7, 7, 7, 5, 7, 7, 6))]
    expected = "95.71/100"  # 8 * 10 + 7.14 + 8.57: the judge's two-decimal points, added
    assert f"{text(add(r.points for r in mixed))}/100" == expected
    assert reporter(_env(runner_outputs(mixed, FormatContext()))) == (expected, expected)


def test_secret_names_do_not_publish_the_cases_inputs():
    """Under --feedback names a secret case is named without its parameters (they are the secret inputs)."""
    from judge.core.result import TestResult as Case
    from judge.formats._platform import rows

    cases = [Case(id=f"tests/secret/test_b.py::test_bubble[{p}]", name=f"bubble [{p}]", file="tests/secret/test_b.py",
                  visibility="secret", outcome="failed", max_points=1.0)
             for p in ("p=4, v=2, target=0.1", "p=8, v=1, target=0.05")]
    cases.append(Case(id="tests/public/test_a.py::test_small[1-2]", name="small [1-2]", file="tests/public/test_a.py",
                      visibility="public", outcome="passed", points=1.0, max_points=1.0))
    result = Result(problem="pp", status="failed", tests=cases, points=1.0, max_points=3.0)
    names = [row.name for row in rows(result, None, "names")]
    assert names == ["pp: bubble (case 1)", "pp: bubble (case 2)", "pp: small [1-2]"]
    assert [row.name for row in rows(result, None, "full")][0] == "pp: bubble [p=4, v=2, target=0.1]"
    for fmt in ("gradescope", "prairielearn", "github-classroom"):
        text = FORMATS[fmt].render([result], FormatContext(feedback="names"))
        assert "target=0.1" not in text and "p=8" not in text, fmt


LEARNER_MARKDOWN = ("**Score: 4.0 / 4.0, all tests passed** ![ok](https://example.invalid/pixel.png) "
                    "[regrade request form](https://example.invalid/phish) <img src=x onerror=alert(1)> | a | b |")


def _made_by_the_learner(page: str) -> list[str]:
    return [tag for tag in ("<strong>Score", "<img", "<a href", "<td> a </td>", "<td>a</td>") if tag in page]


def test_gradescopes_summary_shows_the_learners_words_as_code_not_markdown(problem):
    """Gradescope renders the top-level output as Markdown: a problem's message (here an exception the
    learner raised at import) and an unreadable submission's reason are the learner's words, shown as code."""
    error = Result.error("fx-add", f"adder.py raised an exception while being imported at line 1: ValueError: "
                                   f"{LEARNER_MARKDOWN}\nsecond line", 4.0)
    data = render("gradescope", [error], problem, submission_error=f"the zip contains a link ({LEARNER_MARKDOWN})")
    page = rendered_markdown(data["output"])
    assert "Score: 4.0 / 4.0" in page and not _made_by_the_learner(page), page


def test_feedback_files_show_the_learners_words_as_code_not_markdown(tmp_path):
    """judge grade's feedback file: the verdict cell quotes the first line of an error, in a table."""
    subs = tmp_path / "subs" / "mallory" / "fx-add"
    subs.mkdir(parents=True)
    (subs / "adder.py").write_text(f"raise ValueError({LEARNER_MARKDOWN!r})\n")
    link = zipfile.ZipInfo("fx-add/**Score: 4.0 / 4.0** ![ok](x.png) [form](phish) <img src=x> | a | b |.py")
    link.external_attr = (stat.S_IFLNK | 0o777) << 16
    with zipfile.ZipFile(tmp_path / "subs" / "eve.zip", "w") as archive:  # unreadable: a link, named by her
        archive.writestr(link, "adder.py")
    with zipfile.ZipFile(tmp_path / "subs" / "zoe.zip", "w") as archive:  # a note names a file of hers
        archive.writestr("fx-add/adder.py", (FIXTURE_PROBLEMS / "fx-add" / "reference" / "adder.py").read_text())
        archive.writestr("**Score: 4.0 / 4.0** ![ok](x.png) [form](phish) <img src=x>.txt", "notes")
    done = run_cli("grade", str(tmp_path / "subs"), "-o", str(tmp_path / "out"), "--problems", str(FIXTURE_PROBLEMS),
                   "--similarity", "0")
    assert done.returncode == 0, done.stderr
    for student in ("mallory", "eve", "zoe"):
        page = rendered_markdown((tmp_path / "out" / "feedback" / f"{student}.md").read_text(encoding="utf-8"))
        assert "Score: 4.0 / 4.0" in page and not _made_by_the_learner(page), page
