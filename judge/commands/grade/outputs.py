"""The files ``judge grade`` writes: grades.csv, results/, feedback/, report.html, the LMS gradebooks, similarity.csv.

Everything is written below the output folder only, each file through a temporary name and a
rename, and in a stable order with no timestamps, so two runs over the same input give the same
bytes. Student ids become file names through :func:`safe_name`. Points are
:mod:`judge.formats.points`' two-decimal decimals, so a row's cells add up to its total.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
from collections.abc import Sequence
from pathlib import Path

from ... import __version__
from ...core.problem import Problem
from ...core.result import Result
from ...formats import points
from .late import LatePolicy
from .model import ClassGrades, Graded, cell, safe_name, write_atomic

OUTPUT_KEPT = 2000  # characters of a test's stdout or stderr kept in results/<student>.json
MESSAGE_KEPT = 4000  # characters of a message kept there
TRACEBACK_KEPT = 4  # innermost frames kept there


def write_outputs(grades: ClassGrades, out_dir: Path) -> None:
    """Write every output for ``grades`` into ``out_dir``."""
    from .feedback import feedback_markdown
    from .html_report import render_report
    from .lms import MOODLE_GRADEBOOK, canvas_csv, moodle_csv, moodle_gradebook_csv
    from .objectives import objectives_csv
    from .similarity import similar_pairs, similarity_csv

    for sub in ("results", "feedback"):
        (out_dir / sub).mkdir(parents=True, exist_ok=True)
    late = grades.options.late
    for item in grades.graded:
        write_atomic(results_path(out_dir, item.student), results_json(item, late, grades.problems))
        if not item.stray:  # no student's: grades.csv and report.html name it
            write_atomic(out_dir / "feedback" / f"{safe_name(item.student)}.md", feedback_markdown(item, grades))
    gradebook = grades_csv(grades)
    record_history(out_dir, gradebook, grades)
    write_atomic(out_dir / "grades.csv", gradebook)
    write_atomic(out_dir / "objectives.csv", objectives_csv(grades))
    write_atomic(out_dir / "canvas.csv", canvas_csv(grades))
    write_atomic(out_dir / "moodle.csv", moodle_csv(grades))
    others = moodle_gradebook_csv(grades)
    if others is not None:
        write_atomic(out_dir / MOODLE_GRADEBOOK, others)
    else:
        (out_dir / MOODLE_GRADEBOOK).unlink(missing_ok=True)
    pairs = similar_pairs(grades)
    if pairs is not None:
        write_atomic(out_dir / "similarity.csv", similarity_csv(pairs))
    write_atomic(out_dir / "report.html", render_report(grades, pairs))


HISTORY = "history.csv"
HISTORY_COLUMNS = ("changed_at", "note", "student", "column", "before", "after")


def record_history(out_dir: Path, gradebook: str, grades: ClassGrades) -> None:
    """Append to history.csv each cell of grades.csv this run changes (a regrade, a new policy), with the
    time and ``--note``; a student's row that disappears or appears is recorded too. Nothing is appended when
    nothing changed, or on the first run."""
    from datetime import UTC, datetime

    try:
        before = _by_student((out_dir / "grades.csv").read_text(encoding="utf-8"))
    except OSError:
        return
    except (csv.Error, ValueError) as exc:  # not a gradebook this judge wrote, or one an older version made too long
        grades.notes.append(f"the previous grades.csv could not be read ({exc}): no change recorded in {HISTORY}")
        return
    after = _by_student(gradebook)
    changes = []
    for student in sorted(set(before) | set(after)):
        old, new = before.get(student, {}), after.get(student, {})
        for column in dict.fromkeys(c for c in [*old, *new] if c != "student"):
            if old.get(column, "") != new.get(column, ""):
                changes.append((student, column, old.get(column, ""), new.get(column, "")))
    if not changes:
        return
    when = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    path = out_dir / HISTORY
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    if not path.is_file():
        writer.writerow(HISTORY_COLUMNS)
    for student, column, old_value, new_value in changes:
        writer.writerow([when, cell(grades.options.note), cell(student), column, cell(old_value), cell(new_value)])
    with path.open("a", encoding="utf-8", newline="") as handle:
        handle.write(buffer.getvalue())
    grades.notes.append(f"{len(changes)} change(s) to grades.csv recorded in {path}"
                        + ("" if grades.options.note else " (give --note to say why)"))


def _by_student(text: str) -> dict[str, dict[str, str]]:
    return {row.get("student", ""): row for row in csv.DictReader(io.StringIO(text))}


def results_path(out_dir: Path, student: str) -> Path:
    return out_dir / "results" / f"{safe_name(student)}.json"


def results_json(item: Graded, late: LatePolicy | None = None, problems: Sequence[Problem] = ()) -> str:
    """The student's record: the submission as read (with its code), the points, and compact Results
    (briefer still for an untouched starter of ``problems``: its feedback is one line)."""
    from .feedback import untouched

    starters = {p.id for p in problems if untouched(item, p)}
    data = {"judge_version": __version__, "student": item.student, "input_digest": item.digest,
            "status": item.status, "points": points.number(item.total(late)),
            "penalty": points.number(item.penalty(late)), "submission": item.submission.to_dict(),
            "results": [compact(r, brief=r.problem in starters).to_dict() for r in item.results]}
    return json.dumps(data, indent=1, ensure_ascii=False) + "\n"


def compact(result: Result, brief: bool = False) -> Result:
    """``result`` without what only a live run needs: artifacts (timelines), long output, deep tracebacks;
    ``brief``: each test's outcome and the first line of its message only."""
    if brief:
        tests = [dataclasses.replace(t, artifacts=[], stdout="", stderr="", traceback=[],
                                     message=_cut(_first_line(t.message), MESSAGE_KEPT)) for t in result.tests]
    else:
        tests = [dataclasses.replace(t, artifacts=[], stdout=_cut(t.stdout), stderr=_cut(t.stderr),
                                     message=_cut(t.message, MESSAGE_KEPT), traceback=t.traceback[-TRACEBACK_KEPT:])
                 for t in result.tests]
    return dataclasses.replace(result, tests=tests, message=_cut(result.message, MESSAGE_KEPT))


def _first_line(text: str) -> str:
    """The line the report counts a failure by (``html_report.failure_keys``)."""
    return text.splitlines()[0] if text.strip() else text


def _cut(text: str, limit: int = OUTPUT_KEPT) -> str:
    return text if len(text) <= limit else text[:limit] + f"\n... [{len(text) - limit} more characters]"


def grades_csv(grades: ClassGrades) -> str:
    """One row per submission: student, points per problem, total, max_total, status (and the late penalty).

    An unreadable submission's total is empty (no grade), and so is each problem whose file could not be
    read; the status says why (``Options.zero_unreadable``: 0 instead)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    ids = [p.id for p in grades.problems]
    late = grades.options.late
    extra = ["submitted_at", "days_late", "penalty"] if late else []
    writer.writerow(["student", *ids, *extra, "total", "max_total", "status"])
    options = grades.options
    for item in grades.graded:
        graded = bool(item.grade_text(options))
        timing = ([item.submission.submitted_at, str(item.days_late(late)),
                   points.text(item.penalty(late)) if graded else ""] if late else [])
        writer.writerow([cell(item.student), *(item.problem_text(pid, options) for pid in ids), *timing,
                         item.grade_text(options), points.text(grades.max_total), cell(item.status)])
    return buffer.getvalue()
