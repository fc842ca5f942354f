"""The terminal report of Results: per problem a status line, per failing test its message, a summary.

Machine-readable files (JSON, JUnit, the autograder formats) are :mod:`judge.formats`."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import TextIO

from .artifacts import TIMELINE, render_timeline_text
from .result import Result, TestResult

_COLOURS = {"passed": "32", "failed": "31", "error": "31", "timeout": "33", "skipped": "33", "dim": "2",
            "bold": "1"}
MAX_FAILURES_SHOWN = 5  # per problem, unless --verbose
_MARKS = {"passed": "PASS", "failed": "FAIL", "error": "ERROR", "timeout": "TIMEOUT", "skipped": "SKIP"}


def use_colour(stream: TextIO) -> bool:
    return stream.isatty() and "NO_COLOR" not in os.environ and os.environ.get("TERM") != "dumb"


class Painter:
    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    def __call__(self, text: str, style: str) -> str:
        return f"\033[{_COLOURS[style]}m{text}\033[0m" if self.enabled else text


def print_report(results: Sequence[Result], stream: TextIO = sys.stdout, verbose: bool = False) -> None:
    """Per problem a status line, per failing test its message, then a summary line."""
    paint = Painter(use_colour(stream))
    for result in results:
        mark = paint(f"{_MARKS[result.status]:7s}", result.status)
        counts = f"{result.passed}/{result.total} tests" if result.total else ""
        points = f"{result.points:g}/{result.max_points:g} points" if result.max_points else ""
        stream.write(f"{mark} {paint(result.problem, 'bold')}  {counts}  "
                     f"{paint(f'score {result.score:.0%}', 'dim')}  {paint(points, 'dim')}".rstrip() + "\n")
        if result.message:
            stream.write(_indent(result.message, 8) + "\n")
        shown = [t for t in result.tests if t.outcome in ("failed", "error") or verbose]
        limit = len(shown) if verbose else MAX_FAILURES_SHOWN
        for test in shown[:limit]:
            stream.write(_test_block(test, paint, verbose))
        if len(shown) > limit:
            stream.write(paint(f"    ... and {len(shown) - limit} more failing tests (-v shows them all, "
                               f"-k TEXT picks some)\n", "dim"))
    stream.write(summary_line(results) + "\n")


def summary_line(results: Sequence[Result]) -> str:
    solved = sum(r.status == "passed" for r in results)
    tests = sum(r.total for r in results)
    passed = sum(r.passed for r in results)
    return f"Summary: {solved} of {len(results)} problems solved; {passed} of {tests} tests passed."


def _test_block(test: TestResult, paint: Painter, verbose: bool) -> str:
    lines = [f"    {paint(_MARKS[test.outcome].lower(), test.outcome)}  {test.name}"
             f"{paint(' (secret)', 'dim') if test.visibility == 'secret' else ''}"]
    if test.message:
        lines.append(_indent(test.message, 10))
    own = [f for f in test.traceback if not f.file.startswith("tests/")]
    for frame in (own or test.traceback[-1:])[-3:]:
        lines.append(paint(f"          at {frame.file}:{frame.line} in {frame.function}: {frame.code}", "dim"))
    if test.stdout.strip() and test.outcome != "passed":
        lines.append(paint("          printed:", "dim"))
        lines.append(_indent(test.stdout.rstrip()[-1500:], 12))
    for artifact in test.artifacts:
        value = artifact.get("value")
        if verbose and isinstance(value, dict) and value.get("type") == TIMELINE:
            lines.append(_indent(render_timeline_text(value), 10))
    return "\n".join(lines) + "\n"


def _indent(text: str, spaces: int) -> str:
    return "\n".join(" " * spaces + line for line in text.splitlines())
