"""What the grading-platform formats (Gradescope, PrairieLearn, GitHub Classroom) share: rows with points.

A platform lists graded items, each with points; the judge lists tests inside Results. One
:class:`Row` per test, plus:

- a Result that ran no test (a crash, a timeout, a file that was not submitted) is one failed row
  worth the problem's ``max_points``, whose message says why;
- tests of the canonical set that did not run in this Result (a test file that did not load) are
  one failed row worth what they were worth.

So a platform's total is always the Results' total. Points are :mod:`.points`' two-decimal
decimals: a problem's rows are its points split by the tests' weights, the earned rows splitting
what the problem earned and the others the rest, so the rows add up to the problem's points and
what it is worth to the cent, and every earned row is worth what it earned. How much of a secret
test a student sees follows ``feedback`` (full | names | none), as in ``judge grade``.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING

from ..core.kinds import Outcome, Visibility
from ..core.result import Result, TestResult
from ..i18n import N_, _
from .points import ZERO, exact, number, split
from .secret_code import hide_code, secret_code_lines, secret_names

if TYPE_CHECKING:
    from ..core.problem import Problem

OUTPUT_CAP = 2000  # characters of a test's captured output shown on a platform
_TOLERANCE = 0.0001  # per test: what judge.core.scoring's rounding to 4 decimals can leave unaccounted for


@dataclass
class Row:
    """One graded item as a platform shows it."""

    problem: str
    name: str
    points: float
    max_points: float
    outcome: Outcome
    visibility: Visibility
    message: str = ""
    output: str = ""  # captured stdout and stderr (public tests, and secret ones at feedback "full")
    file: str = ""
    line: int = 0
    duration: float = 0.0
    whole_problem: bool = False  # a row that stands for the problem (or its tests that did not run)

    @property
    def passed(self) -> bool:
        return self.outcome == "passed"


def rows(result: Result, problem: Problem | None = None, feedback: str = "names") -> list[Row]:
    """The rows of one Result; their points add up to ``result.points`` and ``result.max_points`` exactly."""
    if not result.tests:
        return [Row(result.problem, f"{result.problem}: {_unjudged_label(result)}", 0.0, number(result.max_points),
                    "error", "public", result.shown_message() or _("no test ran"), duration=result.duration,
                    whole_problem=True)]
    hidden = secret_code_lines(problem) if feedback == "full" else set()
    names = secret_names([t for t in result.tests if t.visibility == "secret"]) if feedback != "full" else {}
    out, secret_count = [], 0
    for test in result.tests:
        secret_count += test.visibility == "secret"
        out.append(_row(result.problem, test, secret_count, feedback, hidden))
        if test.id in names and feedback == "names":
            out[-1].name = f"{result.problem}: {names[test.id]}"
    weights = [t.max_points for t in result.tests]
    earned = [t.points > 0 for t in result.tests]
    missing = result.max_points - sum(weights)
    if missing > _TOLERANCE * len(out):
        out.append(Row(result.problem, f"{result.problem}: " + _("tests that did not run"), 0.0, 0.0, "error",
                       "public", result.message or _("these tests did not run (a test file did not load)"),
                       whole_problem=True))
        weights.append(missing)
        earned.append(False)
    _set_points(out, weights, earned, exact(result.points), exact(result.max_points))
    return out


def _set_points(out: list[Row], weights: list[float], earned: list[bool], points: Decimal, worth: Decimal) -> None:
    """Earned rows split ``points``, the others ``worth - points``, both by weight (see the module's docstring)."""
    if not any(earned):
        earned = [False] * len(out)
        points = ZERO
    rest = [not e for e in earned]
    if not any(rest):
        points = worth
    gained = iter(split(points, [w for w, e in zip(weights, earned) if e]))
    lost = iter(split(worth - points, [w for w, r in zip(weights, rest) if r]))
    for row, is_earned in zip(out, earned):
        share = next(gained) if is_earned else next(lost)
        row.max_points = number(share)
        row.points = row.max_points if is_earned else 0.0


def _row(pid: str, test: TestResult, secret_number: int, feedback: str, hidden: set[str]) -> Row:
    row = Row(pid, f"{pid}: {test.name}", test.points, test.max_points, test.outcome, test.visibility,
              test.message, _output(test), test.file, _line(test), test.duration)
    if test.visibility == "secret":
        if feedback == "none":
            row.name = f"{pid}: " + _("secret test {number}").format(number=secret_number)
        if feedback != "full":
            row.message, row.output = "", ""
        else:
            row.message = hide_code(test.message, hidden)
            row.output = ""
    return row


_UNJUDGED = {"timeout": N_("timed out"), "error": N_("could not be judged")}


def _unjudged_label(result: Result) -> str:
    return _(_UNJUDGED[result.status]) if result.status in _UNJUDGED else result.status


def outcome_word(outcome: Outcome) -> str:
    """A test's outcome (passed, failed, error, skipped) in the reader's language."""
    return _(outcome)


def _output(test: TestResult) -> str:
    text = "\n".join(part for part in (test.stdout, test.stderr) if part)
    if len(text) <= OUTPUT_CAP:
        return text
    return text[:OUTPUT_CAP] + "\n" + _("... [{n} more characters]").format(n=len(text) - OUTPUT_CAP)


def _line(test: TestResult) -> int:
    """The line in the test file where the test failed (0 when unknown, e.g. a passed test)."""
    for frame in test.traceback:
        if frame.file == test.file:
            return frame.line
    return 0


def total(all_rows: list[Row]) -> tuple[Decimal, Decimal]:
    """(points, max_points) of ``all_rows``, exact: the sums of their two-decimal values."""
    return (sum((exact(r.points) for r in all_rows), ZERO), sum((exact(r.max_points) for r in all_rows), ZERO))
