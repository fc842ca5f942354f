"""``python -m judge check``: an instructor's verification of problem folders.

For every problem folder: it validates; the reference passes every public and secret test (twice,
with the same verdicts); the starter fails at least one test; every ``wrong/`` solution fails at
least one test; the reference runs well inside the time limit. Broken folders are reported and the
others still checked.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from .native import Job, judge_many
from .problem import Problem, ProblemError, discover_problems
from .report import Painter, use_colour
from .result import Result

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
    jobs: list[Job] = []
    plan: list[tuple[Problem, str]] = []
    for problem in problems:
        solutions = [("reference", problem.reference_path), ("reference (second run)", problem.reference_path),
                     ("starter", problem.starter_path)] + [(f"wrong/{p.name}", p) for p in problem.wrong_files]
        for label, path in solutions:
            jobs.append(Job(problem, path, include_secret=True))
            plan.append((problem, label))
    results = judge_many(jobs, parallel)
    by_problem: dict[str, dict[str, Result]] = {}
    for (problem, label), result in zip(plan, results):
        by_problem.setdefault(problem.id, {})[label] = result
    return [assess(problem, by_problem[problem.id]) for problem in problems]


def assess(problem: Problem, results: dict[str, Result]) -> ProblemCheck:
    """Turn the Results of one problem's solutions into findings."""
    check = ProblemCheck(problem)
    reference = results["reference"]
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
    _expect_failure(check, "starter", results["starter"],
                    "make the starter import and run but fail (e.g. raise NotImplementedError)")
    if not problem.wrong_files:
        check.failures.append("no wrong/ solutions: add at least one known-wrong solution per common mistake")
    for path in problem.wrong_files:
        _expect_failure(check, f"wrong/{path.name}", results[f"wrong/{path.name}"],
                        "add a test that catches this mistake")
    if "TODO" in problem.statement:
        check.failures.append("README.md still contains TODO: write the statement")
    return check


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
