"""The terminal report of Results: per problem a status line, per failing test its message, a summary.

Machine-readable files (JSON, JUnit, the autograder formats) are :mod:`judge.formats`. Its words come
from the active language's catalog (:mod:`judge.i18n`)."""

from __future__ import annotations

import os
import sys
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TextIO

from ..artifacts import EXPECTED, TIMELINE, first_difference, first_timing_difference, render_timeline_text
from ..core.result import Frame, Result, TestResult
from ..i18n import N_, _, ngettext
from .objectives import objective_right

_COLOURS = {"passed": "32", "failed": "31", "error": "31", "timeout": "33", "skipped": "33", "dim": "2",
            "bold": "1"}
MAX_FAILURES_SHOWN = 5  # per problem, unless --verbose
_MARKS = {"passed": N_("PASS"), "failed": N_("FAIL"), "error": N_("ERROR"), "timeout": N_("TIMEOUT"),
          "skipped": N_("SKIP")}  # a problem's status
_TEST_MARKS = {"passed": N_("pass"), "failed": N_("fail"), "error": N_("error"), "timeout": N_("timeout"),
               "skipped": N_("skip")}  # a test's outcome


def use_colour(stream: TextIO) -> bool:
    return stream.isatty() and "NO_COLOR" not in os.environ and os.environ.get("TERM") != "dumb"


class Painter:
    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    def __call__(self, text: str, style: str) -> str:
        return f"\033[{_COLOURS[style]}m{text}\033[0m" if self.enabled else text


@dataclass(frozen=True)
class ReportOptions:
    """What the learner asked for, which changes how Results read."""

    verbose: bool = False
    keyword: str | None = None  # -k: the counts are of a subset of the tests
    not_started: Mapping[str, tuple[str, str]] = field(default_factory=dict)  # problem id -> (file to edit, statement)


def print_report(results: Sequence[Result], stream: TextIO | None = None, verbose: bool = False,
                 options: ReportOptions | None = None) -> None:
    """Per problem a status line, per failing test its message, then a summary line (to ``stream``, default
    the ``sys.stdout`` of the moment of the call)."""
    stream = sys.stdout if stream is None else stream
    options = options or ReportOptions(verbose=verbose)
    paint = Painter(use_colour(stream))
    for result in results:
        if result.problem in options.not_started:
            entry, statement = options.not_started[result.problem]
            note = _("not started: edit {file} (the statement is {statement} beside it)").format(
                file=entry, statement=statement)
            todo = paint(_pad(_("TODO"), 7), "skipped")
            stream.write(f"{todo} {paint(result.problem, 'bold')}  {note}\n")
            continue
        stream.write(_status_line(result, paint, options.keyword))
        if result.message:
            stream.write(_indent(result.shown_message(), 8) + "\n")
        if result.objectives and (result.status != "passed" or options.verbose) and not options.keyword:
            stream.write(_objectives(result, paint))
        shown = _first_of_each_function_first(
            [t for t in result.tests if t.outcome in ("failed", "error") or options.verbose])
        limit = len(shown) if options.verbose else MAX_FAILURES_SHOWN
        for test in shown[:limit]:
            stream.write(_test_block(test, paint, options.verbose))
        if len(shown) > limit:
            more = ngettext("... and {n} more failing test (-v shows them all, -k TEXT picks some)",
                            "... and {n} more failing tests (-v shows them all, -k TEXT picks some)",
                            len(shown) - limit).format(n=len(shown) - limit)
            stream.write(paint(f"    {more}\n", "dim"))
    stream.write(summary_line(results, options) + "\n")


def _status_line(result: Result, paint: Painter, keyword: str | None) -> str:
    mark = paint(_pad(_(_MARKS[result.status]), 7), result.status)
    subset = _(" matching -k {keyword}").format(keyword=repr(keyword)) if keyword else ""
    counts = _("{passed}/{total} tests").format(passed=result.passed, total=result.total) + subset \
        if result.total else ""
    if keyword:  # the points and score of a subset would read as the problem's
        return f"{mark} {paint(result.problem, 'bold')}  {counts}".rstrip() + "\n"
    points = _("{points}/{max_points} points").format(
        points=f"{round(result.points, 2):g}", max_points=f"{round(result.max_points, 2):g}") \
        if result.max_points else ""
    score = _("score {percent}").format(percent=f"{result.score:.0%}")
    return (f"{mark} {paint(result.problem, 'bold')}  {counts}  "
            f"{paint(score, 'dim')}  {paint(points, 'dim')}".rstrip() + "\n")


def _pad(text: str, width: int) -> str:
    """``text`` padded to ``width`` terminal columns (a wide character, as in 通过, takes two)."""
    return text + " " * max(0, width - _columns(text))


def _columns(text: str) -> int:
    """The terminal columns ``text`` takes."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def _objectives(result: Result, paint: Painter) -> str:
    """Points per objective, each marked right (its tests pass) or not: the ones earned in full dimmed,
    the others with why (for a right one, what it waits for)."""
    width = max(_columns(o.title) for o in result.objectives)
    lines = []
    for objective in result.objectives:
        mark = "✓" if objective_right(objective) else "✗"
        earned = f"{round(objective.points, 2):g} / {round(objective.max_points, 2):g}"
        points = f"{mark} {_pad(objective.title, width)}  {earned}"
        if objective.points >= objective.max_points:
            lines.append(paint(f"        {points}", "dim"))
        else:
            lines.append(f"        {points}" + (f"  {objective.note}" if objective.note else ""))
    return "\n".join(lines) + "\n"


def _first_of_each_function_first(tests: list[TestResult]) -> list[TestResult]:
    """One failure of each test function, then the other cases: five shown are five different checks."""
    seen: set[str] = set()
    first: list[TestResult] = []
    rest: list[TestResult] = []
    for test in tests:
        function = test.id.split("[", 1)[0]
        (rest if function in seen else first).append(test)
        seen.add(function)
    return first + rest


def summary_line(results: Sequence[Result], options: ReportOptions | None = None) -> str:
    """The last line of the report. Its tests are every problem's, not-started ones included (their failures
    are not listed, but they are tests of the run: the same count as the --json Results)."""
    options = options or ReportOptions()
    started = [r for r in results if r.problem not in options.not_started]
    solved = sum(r.status == "passed" for r in started)
    tests = sum(r.total for r in results)
    passed = sum(r.passed for r in results)
    todo = len(results) - len(started)
    subset = _(" (only tests matching -k {keyword})").format(keyword=repr(options.keyword)) \
        if options.keyword else ""
    not_started = _(", {todo} not started").format(todo=todo) if todo else ""
    return _("Summary: {solved} of {problems} problems solved{not_started}; {passed} of {tests} tests "
             "passed{subset}.").format(solved=solved, problems=len(results), not_started=not_started,
                                      passed=passed, tests=tests, subset=subset)


def _test_block(test: TestResult, paint: Painter, verbose: bool) -> str:
    secret = paint(_(" (secret)"), "dim") if test.visibility == "secret" else ""
    lines = [f"    {paint(_(_TEST_MARKS[test.outcome]), test.outcome)}  {test.name}{secret}"]
    if test.message:
        lines.append(_indent(test.message, 10))
    for frame in _frames_to_show(test):
        at = _("at {file}:{line} in {function}: {code}").format(
            file=_practice_path(frame.file), line=frame.line, function=frame.function, code=frame.code)
        lines.append(paint(f"          {at}", "dim"))
    if test.stdout.strip() and test.outcome != "passed":
        lines.append(paint("          " + _("printed:"), "dim"))
        lines.append(_indent(test.stdout.rstrip()[-1500:], 12))
    if verbose:
        lines.extend(_indent(text, 10) for text in _timelines(test))
    return "\n".join(lines) + "\n"


def _timelines(test: TestResult) -> list[str]:
    """The test's timelines as text; a failed public test's expected timeline under the learner's,
    the first difference marked on both (an expected timeline of a secret test is never shown)."""
    timelines: list[tuple[str, dict[str, Any]]] = [
        (str(a.get("name")), value) for a in test.artifacts
        if isinstance(value := a.get("value"), dict) and value.get("type") == TIMELINE]
    expected = next((value for name, value in timelines if name == EXPECTED), None)
    if test.visibility != "public" or test.outcome == "passed":
        expected = None
    out = []
    for name, value in timelines:
        if name == EXPECTED:
            continue
        if expected is None:
            out.append(render_timeline_text(value))
            continue
        mark = first_difference(value, expected)
        timing = mark is None
        mark = mark or first_timing_difference(value, expected)
        out.append(render_timeline_text(value, mark=mark))
        title = str(expected.get("title", ""))
        if not title.lower().startswith("expected"):
            title = _("expected: {title}").format(title=title).rstrip(": ")
        out.append(render_timeline_text({**expected, "title": title}, mark=mark))
        note = _difference_note(value, expected, mark, timing)
        if note:
            out.append(note)
        expected = None  # under the first timeline only
    return out


def _difference_note(yours: dict[str, Any], expected: dict[str, Any], mark: tuple[int, int] | None,
                     timing: bool = False) -> str:
    """The first difference in words (empty when the two timelines are the same); ``timing``: the
    orders agree and ``mark`` is the first block at another time, shown with its start and end."""
    if mark is None:
        return ""
    row, index = mark
    name = yours.get("rows", "stage")

    def at(timeline: dict[str, Any]) -> str:
        stages = timeline.get("stages", [])
        blocks = stages[row] if row < len(stages) else []
        if index >= len(blocks):
            return _("nothing")
        b = blocks[index]
        chunk = _(" (chunk {chunk})").format(chunk=b["chunk"]) if b.get("chunk") is not None else ""
        when = f" [{float(b['start']):g}, {float(b['end']):g}]" if timing else ""
        return f"{b['op']}{b['mb']}{chunk}{when}"

    line = _("first difference: {rows} {row}, operation {operation}: yours {yours}, expected {expected}").format(
        rows=name, row=row, operation=index + 1, yours=at(yours), expected=at(expected))
    return _("same order of operations as expected (the timing differs)") + "\n" + line if timing else line


def _frames_to_show(test: TestResult) -> list[Frame]:
    """The learner's own frames; else the line of the test that failed, unless the test is secret (its
    code stays hidden). A check inside a helper module is shown by the test's call of it: that line
    says which case failed, the helper's ``raise`` does not."""
    own = [f for f in test.traceback if not f.file.startswith("tests/")]
    if own or test.visibility == "secret":
        return own[-3:]
    in_test_files = [f for f in test.traceback if f.file.rsplit("/", 1)[-1].startswith("test_")]
    return (in_test_files or test.traceback)[-1:]


def _practice_path(file: str) -> str:
    """Where the learner finds a file: the practice folder holds the public tests in tests/, not tests/public/."""
    return "tests/" + file.removeprefix("tests/public/") if file.startswith("tests/public/") else file


def _indent(text: str, spaces: int) -> str:
    return "\n".join(" " * spaces + line for line in text.splitlines())
