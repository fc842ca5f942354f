"""Who struggles with what: each student's points per learning objective (``objectives.csv``) and, for the
report, the students below a threshold of an objective's points.

``objectives.csv`` has one row per student and one column per objective of every problem
(``pp-schedule/gpipe``; a problem that declares none is one column, ``pp-schedule``), then
``penalty`` (with a late policy) and ``total``; the second row, ``max_points``, says what each is worth.
A problem's cells are its points (two decimals, as in grades.csv) split over its objectives in
proportion to what each earned (:func:`judge.formats.points.split`), so they add up to the problem's
cell in grades.csv exactly, and a row's cells less the penalty to its total. A submission that could
not be read has empty cells, as in grades.csv.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass

from ...core.problem import Problem
from ...core.result import Result
from ...formats.points import exact, split, text
from .model import ClassGrades, Graded, cell


@dataclass(frozen=True)
class Column:
    """One objective of one problem (``objective`` empty: a problem that declares none)."""

    problem: str
    objective: str
    title: str
    max_points: float

    @property
    def heading(self) -> str:
        return f"{self.problem}/{self.objective}" if self.objective else self.problem


def columns(grades: ClassGrades) -> list[Column]:
    """The objectives of every problem, as the canonical Results (the references') score them."""
    found = []
    for problem in grades.problems:
        canonical = grades.canonical[problem.id]
        if canonical.objectives:
            found += [Column(problem.id, o.id, o.title, o.max_points) for o in canonical.objectives]
        else:
            found.append(Column(problem.id, "", problem.title, canonical.max_points))
    return found


def objective_points(result: Result, canonical: Result) -> dict[str, str]:
    """The problem's two-decimal points split over its objectives by what each earned: objective id -> cell."""
    ids = [o.id for o in canonical.objectives] or [""]
    earned = {o.id: o.points for o in result.objectives}
    weights = [earned.get(i, 0.0) for i in ids] if canonical.objectives else [1.0]
    return {i: text(part) for i, part in zip(ids, split(exact(result.points), weights))}


def objectives_csv(grades: ClassGrades) -> str:
    """The student-by-objective table (see the module docstring)."""
    buffer, options = io.StringIO(), grades.options
    writer = csv.writer(buffer, lineterminator="\r\n")
    cols, late = columns(grades), options.late
    extra = ["penalty"] if late else []
    writer.writerow(["student", *(c.heading for c in cols), *extra, "total"])
    writer.writerow(["max_points", *(text(c.max_points) for c in cols), *([""] if late else []),
                     text(grades.max_total)])
    for item in grades.students:
        cells = _cells(item, grades)
        graded = bool(item.grade_text(options))
        penalty = [text(item.penalty(late)) if graded else ""] if late else []
        writer.writerow([cell(item.student), *(cells[(c.problem, c.objective)] for c in cols), *penalty,
                         item.grade_text(options)])
    return buffer.getvalue()


def _cells(item: Graded, grades: ClassGrades) -> dict[tuple[str, str], str]:
    cells = {}
    by_problem = {r.problem: r for r in item.results}
    for problem in grades.problems:
        canonical = grades.canonical[problem.id]
        blank = not item.problem_text(problem.id, grades.options)
        split_points = objective_points(by_problem[problem.id], canonical) if problem.id in by_problem else {}
        for ident in [o.id for o in canonical.objectives] or [""]:
            cells[(problem.id, ident)] = "" if blank else split_points.get(ident, "0")
    return cells


def struggling(grades: ClassGrades, problem: Problem, threshold: float) -> list[tuple[Column, list[str]]]:
    """Per objective of ``problem``, the students who handed it in (not an untouched starter) and earned less
    than ``threshold`` of its points."""
    from .feedback import untouched

    below = []
    for column in [c for c in columns(grades) if c.problem == problem.id]:
        students = []
        for item in grades.graded:
            if not item.submitted(problem.id) or untouched(item, problem) or problem.id in item.submission.unreadable:
                continue
            result = next((r for r in item.results if r.problem == problem.id), None)
            if result is None:
                continue
            if column.objective:
                earned = next((o.points for o in result.objectives if o.id == column.objective), 0.0)
            else:
                earned = result.points
            if column.max_points and earned < threshold * column.max_points:
                students.append(item.student)
        below.append((column, students))
    return below
