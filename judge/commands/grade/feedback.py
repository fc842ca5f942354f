"""``feedback/<student>.md``: what a student reads about their grade, short and worst first.

The page opens with the total and one line per problem (points and a verdict: ``all tests
passed``, ``3 of 7 tests passed``, ``error``, ``not attempted`` for an untouched starter, ``not
submitted``), then what went wrong, problems that errored or timed out first, then those with
failing tests. Per problem at most :data:`FAILURES_SHOWN` failing tests are shown, each message
cut to :data:`MESSAGE_LINES` lines; the secret tests follow ``--feedback`` (``full``: names and
messages, never a line of their code; ``names``: how many passed and the names of those that failed;
``none``: nothing, the points say it).
Passing problems, untouched starters and problems not submitted get their summary line only.
The frame's words come from the active language's catalog (:mod:`judge.i18n`, ``judge grade --lang``).
"""

from __future__ import annotations

from collections.abc import Callable

from ...core.problem import Problem
from ...core.result import Result, TestResult
from ...core.titles import problem_title
from ...formats.markdown import code_span, plain_text
from ...formats.objectives import objective_lines
from ...formats.points import text
from ...formats.secret_code import secret_code_lines, secret_names, without_code
from ...i18n import N_, _, current_language, ngettext
from .model import ClassGrades, Graded

FAILURES_SHOWN = 5  # failing tests with their messages, per problem
SECRET_NAMES_SHOWN = 10
MESSAGE_LINES = 12  # lines of one message
MESSAGE_CHARS = 1500
_SEVERITY = {"error": 0, "timeout": 0, "failed": 1}
_OUTCOMES = (N_("passed"), N_("failed"), N_("error"), N_("timeout"), N_("skipped"))  # shown translated


def feedback_markdown(item: Graded, grades: ClassGrades) -> str:
    """The student's page (see the module docstring)."""
    late = grades.options.late
    lines = [_("# Feedback for {student}").format(student=plain_text(item.student)), "", _total_line(item, grades)]
    if late and item.penalty(late) and not item.no_grade(grades.options):
        days = item.days_late(late)
        lines.append(ngettext("{days} day late: {penalty} points were taken off the {earned} earned.",
                              "{days} days late: {penalty} points were taken off the {earned} earned.", days)
                     .format(days=days, penalty=text(item.penalty(late)), earned=text(item.raw_points)))
    if item.submission.error:
        lines += ["", _("Your submission could not be read: {error}.").format(error=plain_text(item.submission.error))]
    lines += ["", *(f"- {plain_text(line)}" for line in item.submission.notes)] if item.submission.notes else []
    lines += ["", "| {} | {} | {} |".format(_("problem"), _("points"), _("verdict")), "|---|---|---|"]
    pairs = list(zip(grades.problems, item.results))
    lines += [f"| {p.id} | {text(r.points)} / {text(grades.max_points(p.id))} | "
              f"{verdict(item, p, r, _quoted_in_table, _escaped_in_table)} |" for p, r in pairs]
    for problem, result in sorted(_needing_details(item, pairs), key=lambda pr: _SEVERITY[pr[1].status]):
        lines += ["", *_details(problem, result, grades.options.feedback)]
    return "\n".join(lines).rstrip() + "\n"


def _total_line(item: Graded, grades: ClassGrades) -> str:
    """The total, or no grade where the gradebooks have none (a file that could not be read, no zeros asked)."""
    if item.no_grade(grades.options):
        if item.submission.error:
            return _("Total: no grade, since your submission could not be read (see below).")
        return _("Total: no grade yet, since a file of your submission could not be read (see below); the problems "
                 "that were judged earned {points} of their {max_points} points.").format(
            points=text(item.raw_points), max_points=text(_judged_max(item, grades)))
    return _("Total: **{points} / {max_points}** points.").format(points=text(item.total(grades.options.late)),
                                                                 max_points=text(grades.max_total))


def _judged_max(item: Graded, grades: ClassGrades) -> float:
    return sum(grades.max_points(p.id) for p in grades.problems if p.id not in item.submission.unreadable)


def verdict(item: Graded, problem: Problem, result: Result, quote: Callable[[str], str] = str,
            escape: Callable[[str], str] = str) -> str:
    """One problem's verdict in a few words. What may hold the learner's words is shown in the output's own
    way: ``quote`` for the first line of an error, ``escape`` for a reason a file was not read (Markdown: a
    code span and escaped text, :func:`_quoted_in_table`, :func:`_escaped_in_table`)."""
    if item.submission.error:
        return _("not judged: the submission could not be read")
    if problem.id in item.submission.unreadable:
        return _("not judged: {reason}").format(reason=escape(item.submission.unreadable[problem.id]))
    if not item.submitted(problem.id):
        return _("not submitted")
    if untouched(item, problem):
        return _("not attempted (the file is the starter as given)")
    if result.status == "passed":
        return _("all tests passed")
    if result.status in ("error", "timeout"):
        first = result.message.splitlines()[0] if result.message.strip() else result.status
        return f"{_(result.status)}: {quote(first[:120])}"
    return _("{passed} of {total} tests passed").format(passed=result.passed, total=result.total)


def _quoted_in_table(text: str) -> str:
    return code_span(text, in_table=True)


def _escaped_in_table(text: str) -> str:
    return plain_text(text, in_table=True)


def untouched(item: Graded, problem: Problem) -> bool:
    """Whether the submitted file is the problem's starter, unchanged (trailing white space aside)."""
    source = item.submission.sources.get(problem.id)
    return source is not None and source.rstrip() == problem.starter.rstrip()


def _needing_details(item: Graded, pairs: list[tuple[Problem, Result]]) -> list[tuple[Problem, Result]]:
    return [(p, r) for p, r in pairs if item.submitted(p.id) and p.id in item.submission.sources
            and not untouched(item, p) and r.status in _SEVERITY]


def _details(problem: Problem, result: Result, level: str) -> list[str]:
    lines = [f"## {problem.id}: {problem_title(problem, current_language())}", ""]
    if result.message:
        lines += [_fenced(result.message), ""]
    if result.objectives:
        lines += [_("Points by objective:"), *(f"- {line}" for line in objective_lines(result, quote=code_span)), ""]
    public = [t for t in result.tests if t.visibility == "public"]
    failing = [t for t in public if t.outcome != "passed"]
    if public:
        lines.append(_("Public tests: {passed} of {total} passed.").format(passed=len(public) - len(failing),
                                                                           total=len(public)))
    for test in failing[:FAILURES_SHOWN]:
        lines += ["", f"- {_(test.outcome)}: {test.name}", "", _fenced(test.message or _(test.outcome), indent="  ")]
    if len(failing) > FAILURES_SHOWN:
        more = len(failing) - FAILURES_SHOWN
        lines += ["", ngettext("... and {n} more failing public test: run the judge on your practice folder to "
                               "see them all.", "... and {n} more failing public tests: run the judge on your "
                               "practice folder to see them all.", more).format(n=more)]
    return lines + [""] + _secret_lines(problem, [t for t in result.tests if t.visibility == "secret"], level)


def _secret_lines(problem: Problem, secret: list[TestResult], level: str) -> list[str]:
    if not secret or level == "none":
        return []
    failing = [t for t in secret if t.outcome != "passed"]
    lines = [_("Secret tests: {passed} of {total} passed.").format(passed=len(secret) - len(failing),
                                                                   total=len(secret))]
    if not failing:
        return lines
    hidden = secret_code_lines(problem) if level == "full" else set()
    names = secret_names(secret) if level == "names" else {}  # a case's parameters are the secret inputs
    for test in failing[:SECRET_NAMES_SHOWN if level == "names" else FAILURES_SHOWN]:
        lines.append(f"- {_(test.outcome)}: {names.get(test.id, test.name)}")
        if level == "full" and test.message:
            lines += ["", _fenced(without_code(test, hidden).message, indent="  "), ""]
    return lines


def _fenced(message: str, indent: str = "") -> str:
    kept = message.replace("```", "'''")[:MESSAGE_CHARS].splitlines()
    cut = len(kept) > MESSAGE_LINES or len(message) > MESSAGE_CHARS
    kept = kept[:MESSAGE_LINES] + (["..."] if cut else [])
    return "\n".join(indent + line for line in ["```text", *kept, "```"])
