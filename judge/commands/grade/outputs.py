"""The files ``judge grade`` writes: grades.csv, results/<student>.json, feedback/<student>.md, report.html.

Everything is written below the output folder only, each file through a temporary name and a
rename, and in a stable order with no timestamps, so two runs over the same input give the same
bytes. Student ids become file names through :func:`safe_name`.
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
from . import ClassGrades, Graded, _write_atomic

_UNSAFE_CHARS = re.compile(r"[^A-Za-z0-9._@+-]")
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def write_outputs(grades: ClassGrades, out_dir: Path, feedback: str) -> None:
    """Write all four outputs for ``grades`` into ``out_dir``."""
    from .html_report import render_report

    for sub in ("results", "feedback"):
        (out_dir / sub).mkdir(parents=True, exist_ok=True)
    for item in grades.graded:
        _write_atomic(results_path(out_dir, item.student), results_json(item))
        _write_atomic(out_dir / "feedback" / f"{safe_name(item.student)}.md", feedback_markdown(item, grades, feedback))
    _write_atomic(out_dir / "grades.csv", grades_csv(grades))
    _write_atomic(out_dir / "report.html", render_report(grades))


def safe_name(student: str) -> str:
    """A file name for ``student``: unchanged when it is plain, else cleaned and made unique by a hash."""
    cleaned = _UNSAFE_CHARS.sub("_", student).strip("._") or "student"
    if cleaned == student:
        return student
    return f"{cleaned[:80]}-{hashlib.sha256(student.encode()).hexdigest()[:8]}"


def results_path(out_dir: Path, student: str) -> Path:
    return out_dir / "results" / f"{safe_name(student)}.json"


def results_json(item: Graded) -> str:
    data = {"judge_version": __version__, "student": item.student, "input_digest": item.digest,
            "status": item.status, "points": item.points,
            "results": [r.to_dict() for r in item.results]}
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def grades_csv(grades: ClassGrades) -> str:
    """One row per submission: student, points per problem, total, max_total, status."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    ids = [p.id for p in grades.problems]
    writer.writerow(["student", *ids, "total", "max_total", "status"])
    for item in sorted(grades.graded, key=lambda g: g.student):
        points = {r.problem: r.points for r in item.results}
        writer.writerow([_cell(item.student), *(number(points.get(pid, 0.0)) for pid in ids),
                         number(item.points), number(grades.max_total), _cell(item.status)])
    return buffer.getvalue()


def number(value: float) -> str:
    """Points as a spreadsheet reads them: at most two decimals, no trailing zeros."""
    text = f"{value:.2f}".rstrip("0").rstrip(".")
    return "0" if text in ("", "-0") else text


def _cell(text: str) -> str:
    """Text a spreadsheet will not run as a formula."""
    return "'" + text if text.startswith(_FORMULA_START) else text


def feedback_markdown(item: Graded, grades: ClassGrades, level: str) -> str:
    """What the student may see: scores, the public tests' messages, the secret tests per ``level``."""
    lines = [f"# Feedback for {item.student}", "",
             f"Total: **{number(item.points)} / {number(grades.max_total)}** points.", ""]
    if item.submission.error:
        lines += [f"Your submission could not be read: {item.submission.error}.", ""]
    for problem, result in zip(grades.problems, item.results):
        lines += _problem_feedback(problem, result, grades.max_points(problem.id), level)
    return "\n".join(lines).rstrip() + "\n"


def _problem_feedback(problem: Problem, result: Result, max_points: float, level: str) -> list[str]:
    lines = [f"## {result.problem}: {problem.title}", "",
             f"{number(result.points)} / {number(max_points)} points ({_verdict(result)})", ""]
    if result.message:
        lines += ["```text", _fence_safe(result.message), "```", ""]
    public = [t for t in result.tests if t.visibility == "public"]
    secret = [t for t in result.tests if t.visibility == "secret"]
    if public:
        lines.append(f"Public tests: {sum(t.outcome == 'passed' for t in public)} of {len(public)} passed.")
        lines += _test_lines(public, messages=True, names_of_passed=True)
    if secret and level != "none":
        lines.append(f"Secret tests: {sum(t.outcome == 'passed' for t in secret)} of {len(secret)} passed.")
        hidden = secret_code_lines(problem) if level == "full" else set()
        lines += _test_lines([_without_code(t, hidden) for t in secret], messages=level == "full",
                             names_of_passed=True)
    return lines + [""]


def secret_code_lines(problem: Problem) -> set[str]:
    """The non-trivial lines of the problem's secret test files (never shown to a student)."""
    lines: set[str] = set()
    for path in problem.secret_test_files:
        lines.update(line.strip() for line in path.read_text(encoding="utf-8").splitlines()
                     if len(line.strip()) >= 8)
    return lines


def _without_code(test: TestResult, hidden: set[str]) -> TestResult:
    """``test`` with every message line that quotes secret test code replaced by a note."""
    if not hidden:
        return test
    kept = [line if not any(code in line for code in hidden) and not line.lstrip(" +").startswith(("assert ", "where "))
            else "(a line of the secret test's code is not shown)" for line in test.message.splitlines()]
    return dataclasses.replace(test, message="\n".join(kept))


def _verdict(result: Result) -> str:
    if result.status == "passed":
        return "all tests passed"
    if result.status in ("timeout", "error"):
        return result.status if result.tests else f"{result.status}, no test was credited"
    return f"{result.passed} of {result.total} tests passed"


def _test_lines(tests: list[TestResult], messages: bool, names_of_passed: bool = False) -> list[str]:
    lines = [""]
    for test in tests:
        if test.outcome == "passed" and not names_of_passed:
            continue
        lines.append(f"- {'passed' if test.outcome == 'passed' else test.outcome}: {test.name}")
        if messages and test.outcome != "passed" and test.message:
            lines += ["", "  ```text", *("  " + line for line in _fence_safe(test.message).splitlines()), "  ```"]
    return lines + [""]


def _fence_safe(text: str) -> str:
    return text.replace("```", "'''")
