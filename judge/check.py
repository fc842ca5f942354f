"""``python -m judge check``: an instructor's verification of problem folders.

For every problem folder: it validates; the reference passes every public and secret test (twice,
with the same verdicts); the starter fails at least one test; every ``wrong/`` solution fails the
way it should (status ``failed`` unless it declares otherwise, caught by the tests it names; a
``.diff`` must still apply to the reference, see :mod:`judge.wrong`); the reference runs well
inside the time limit. Broken folders are reported and the others still checked.
"""

from __future__ import annotations

import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from .native import Job, judge_many
from .problem import Problem, ProblemError, discover_problems
from .report import Painter, use_colour
from .result import Result
from .wrong import WrongSolution, WrongSolutionError, load_wrong, unmet

TIME_BUDGET = 0.5  # the reference may use at most this fraction of the time limit


@dataclass
class ProblemCheck:
    """The findings for one problem: failures make ``check`` exit 1, notes are informative."""

    problem: Problem
    failures: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def check_problems(root: Path, parallel: int = 1, stream: TextIO = sys.stdout) -> int:
    """Check every problem under ``root`` (or the one folder ``root``); return the exit code."""
    paint = Painter(use_colour(stream))
    try:
        problems, errors = discover_problems(root)
    except ProblemError as exc:
        stream.write(f"error: {exc}\n")
        return 2
    stream.write(f"Checking {len(problems) + len(errors)} problem folder(s) in {root}\n")
    for error in errors:
        stream.write(f"{paint('INVALID', 'failed')} {error}\n")
    checks = run_checks(problems, parallel)
    for check in checks:
        ok = not check.failures
        stream.write(f"{paint('OK     ' if ok else 'FAILED ', 'passed' if ok else 'failed')} {check.problem.id}\n")
        for line in check.failures:
            stream.write(f"    {paint('x', 'failed')} {line}\n")
        for line in check.notes:
            stream.write(f"    - {line}\n")
    bad = len(errors) + sum(bool(c.failures) for c in checks)
    stream.write(f"{len(checks) + len(errors) - bad} of {len(checks) + len(errors)} problem folders OK.\n")
    return 1 if bad else 0


def run_checks(problems: list[Problem], parallel: int = 1) -> list[ProblemCheck]:
    """Judge every solution of every problem (natively, secret tests included) and assess them."""
    jobs: list[Job] = []
    plan: list[tuple[Problem, str]] = []
    wrongs: dict[str, list[WrongSolution | WrongSolutionError]] = {}
    with tempfile.TemporaryDirectory(prefix="judge-check-") as tmp:
        for problem in problems:
            wrongs[problem.id] = [_load_wrong(problem, path) for path in problem.wrong_files]
            solutions = [("reference", problem.reference_path), ("reference (second run)", problem.reference_path),
                         ("starter", problem.starter_path)]
            solutions += [(w.label, _source_file(w, Path(tmp) / problem.id))
                          for w in wrongs[problem.id] if isinstance(w, WrongSolution)]
            for label, path in solutions:
                jobs.append(Job(problem, path, include_secret=True))
                plan.append((problem, label))
        results = judge_many(jobs, parallel)
    by_problem: dict[str, dict[str, Result]] = {}
    for (problem, label), result in zip(plan, results):
        by_problem.setdefault(problem.id, {})[label] = result
    return [assess(problem, by_problem[problem.id], wrongs[problem.id]) for problem in problems]


def _load_wrong(problem: Problem, path: Path) -> WrongSolution | WrongSolutionError:
    try:
        return load_wrong(problem, path)
    except WrongSolutionError as exc:
        return exc


def _source_file(wrong: WrongSolution, folder: Path) -> Path:
    """The wrong solution's code as a file (a ``.diff`` is judged as the patched reference)."""
    if wrong.path.suffix == ".py":
        return wrong.path
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / (wrong.path.stem + ".py")
    path.write_text(wrong.source, encoding="utf-8")
    return path


def assess(problem: Problem, results: dict[str, Result],
           wrongs: list[WrongSolution | WrongSolutionError] | None = None) -> ProblemCheck:
    """Turn the Results of one problem's solutions into findings."""
    check = ProblemCheck(problem)
    _assess_reference(check, results)
    _expect_failure(check, "starter", results["starter"],
                    "make the starter import and run but fail (e.g. raise NotImplementedError)")
    if wrongs is None:
        wrongs = [_load_wrong(problem, path) for path in problem.wrong_files]
    if not wrongs:
        check.failures.append("no wrong/ solutions: add at least one known-wrong solution per common mistake")
    for wrong in wrongs:
        if isinstance(wrong, WrongSolutionError):
            check.failures.append(str(wrong))
        else:
            _expect_wrong(check, wrong, results[wrong.label])
    if "TODO" in problem.statement:
        check.failures.append("README.md still contains TODO: write the statement")
    return check


def _assess_reference(check: ProblemCheck, results: dict[str, Result]) -> None:
    problem, reference = check.problem, results["reference"]
    if reference.status != "passed":
        failing = [t.name for t in reference.tests if t.outcome != "passed"]
        check.failures.append(f"the reference does not pass: {reference.status}"
                              f"{': ' + reference.message if reference.message else ''}"
                              f"{' (failing: ' + ', '.join(failing[:5]) + ')' if failing else ''}")
    else:
        share = reference.duration / problem.time_limit
        line = (f"reference passes {reference.passed}/{reference.total} tests in {reference.duration:.2f} s, "
                f"{share:.0%} of the {problem.time_limit:g} s limit")
        (check.failures if share > TIME_BUDGET else check.notes).append(
            line + (f" (more than {TIME_BUDGET:.0%}: raise time_limit or speed the tests up)" if share > TIME_BUDGET else ""))
    if _verdicts(reference) != _verdicts(results["reference (second run)"]):
        check.failures.append("two runs of the reference gave different verdicts: the tests are not deterministic")


def _expect_wrong(check: ProblemCheck, wrong: WrongSolution, result: Result) -> None:
    if result.status == "passed":
        check.failures.append(f"{wrong.label} passes every test, but it must fail at least one: "
                              "add a test that catches this mistake")
        return
    problems = unmet(wrong.expectation, result)
    if not problems:
        _expect_failure(check, wrong.label, result, "")
        return
    hint = ("; a wrong solution must import and run, and fail a test that catches its mistake "
            f"(or declare what it does instead: `# judge: expect status={result.status}`)"
            if result.status != wrong.expectation.status == "failed" else "")
    check.failures.append(f"{wrong.label} " + "; ".join(problems) + hint)


def _expect_failure(check: ProblemCheck, label: str, result: Result, advice: str) -> None:
    if result.status == "passed":
        check.failures.append(f"{label} passes every test, but it must fail at least one: {advice}")
        return
    failing = [t for t in result.tests if t.outcome != "passed"]
    first = (failing[0].message or "").splitlines()[0][:110] if failing else result.message.splitlines()[0][:110]
    check.notes.append(f"{label} fails as it should ({result.status}, {len(failing)} of {result.total} "
                       f"tests): {first}")


def _verdicts(result: Result) -> list[tuple[str, str]]:
    return [(t.id, t.outcome) for t in result.tests] + [("status", result.status)]
