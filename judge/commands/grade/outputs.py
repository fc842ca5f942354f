"""The files ``judge grade`` writes: grades.csv, results/, feedback/, report.html, the LMS gradebooks, similarity.csv.

Everything is written below the output folder only, each file through a temporary name and a
rename, and in a stable order with no timestamps, so two runs over the same input give the same
bytes. Student ids become file names through :func:`safe_name`. Points are
:mod:`judge.formats.points`' two-decimal decimals, so a row's cells add up to its total.
"""

from __future__ import annotations

import csv
import dataclasses
import hashlib
import io
import json
import re
from pathlib import Path

from ... import __version__
from ...core.problem import Problem
from ...core.result import Result, TestResult
from ...formats import points
from . import ClassGrades, Graded, _write_atomic
from .late import LatePolicy

_UNSAFE_CHARS = re.compile(r"[^A-Za-z0-9._@+-]")
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
OUTPUT_KEPT = 2000  # characters of a test's stdout or stderr kept in results/<student>.json
MESSAGE_KEPT = 4000  # characters of a message kept there
TRACEBACK_KEPT = 4  # innermost frames kept there


def write_outputs(grades: ClassGrades, out_dir: Path) -> None:
    """Write every output for ``grades`` into ``out_dir``."""
    from .feedback import feedback_markdown
    from .html_report import render_report
    from .lms import canvas_csv, moodle_csv
    from .similarity import similar_pairs, similarity_csv

    for sub in ("results", "feedback"):
        (out_dir / sub).mkdir(parents=True, exist_ok=True)
    late = grades.options.late
    for item in grades.graded:
        _write_atomic(results_path(out_dir, item.student), results_json(item, late))
        _write_atomic(out_dir / "feedback" / f"{safe_name(item.student)}.md", feedback_markdown(item, grades))
    _write_atomic(out_dir / "grades.csv", grades_csv(grades))
    _write_atomic(out_dir / "canvas.csv", canvas_csv(grades))
    _write_atomic(out_dir / "moodle.csv", moodle_csv(grades))
    pairs = similar_pairs(grades)
    if pairs is not None:
        _write_atomic(out_dir / "similarity.csv", similarity_csv(pairs))
    _write_atomic(out_dir / "report.html", render_report(grades, pairs))


def safe_name(student: str) -> str:
    """A file name for ``student``: unchanged when it is plain, else cleaned and made unique by a hash."""
    cleaned = _UNSAFE_CHARS.sub("_", student).strip("._") or "student"
    if cleaned == student:
        return student
    return f"{cleaned[:80]}-{hashlib.sha256(student.encode()).hexdigest()[:8]}"


def results_path(out_dir: Path, student: str) -> Path:
    return out_dir / "results" / f"{safe_name(student)}.json"


def results_json(item: Graded, late: LatePolicy | None = None) -> str:
    """The student's record: the submission as read (with its code), the points, and compact Results."""
    data = {"judge_version": __version__, "student": item.student, "input_digest": item.digest,
            "status": item.status, "points": points.number(item.total(late)),
            "penalty": points.number(item.penalty(late)), "submission": item.submission.to_dict(),
            "results": [compact(r).to_dict() for r in item.results]}
    return json.dumps(data, indent=1, ensure_ascii=False) + "\n"


def compact(result: Result) -> Result:
    """``result`` without what only a live run needs: artifacts (timelines), long output, deep tracebacks."""
    tests = [dataclasses.replace(t, artifacts=[], stdout=_cut(t.stdout), stderr=_cut(t.stderr),
                                 message=_cut(t.message, MESSAGE_KEPT), traceback=t.traceback[-TRACEBACK_KEPT:])
             for t in result.tests]
    return dataclasses.replace(result, tests=tests, message=_cut(result.message, MESSAGE_KEPT))


def _cut(text: str, limit: int = OUTPUT_KEPT) -> str:
    return text if len(text) <= limit else text[:limit] + f"\n... [{len(text) - limit} more characters]"


def grades_csv(grades: ClassGrades) -> str:
    """One row per submission: student, points per problem, total, max_total, status (and the late penalty)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    ids = [p.id for p in grades.problems]
    late = grades.options.late
    extra = ["submitted_at", "days_late", "penalty"] if late else []
    writer.writerow(["student", *ids, *extra, "total", "max_total", "status"])
    for item in grades.graded:
        by_problem = {r.problem: r.points for r in item.results}
        timing = ([item.submission.submitted_at, str(late.days_late(item.submission.submitted_at)),
                   points.text(item.penalty(late))] if late else [])
        writer.writerow([cell(item.student), *(points.text(by_problem.get(pid, 0.0)) for pid in ids), *timing,
                         points.text(item.total(late)), points.text(grades.max_total), cell(item.status)])
    return buffer.getvalue()


def cell(text: str) -> str:
    """Text a spreadsheet will not run as a formula."""
    return "'" + text if text.startswith(_FORMULA_START) else text


def secret_code_lines(problem: Problem) -> set[str]:
    """The non-trivial lines of the problem's secret test files (never shown to a student)."""
    lines: set[str] = set()
    for path in problem.secret_test_files:
        lines.update(line.strip() for line in path.read_text(encoding="utf-8").splitlines()
                     if len(line.strip()) >= 8)
    return lines


def without_code(test: TestResult, hidden: set[str]) -> TestResult:
    """``test`` with every message line that quotes secret test code replaced by a note."""
    if not hidden:
        return test
    kept = [line if not any(code in line for code in hidden) and not line.lstrip(" +").startswith(("assert ", "where "))
            else "(a line of the secret test's code is not shown)" for line in test.message.splitlines()]
    return dataclasses.replace(test, message="\n".join(kept))
