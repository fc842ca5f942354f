"""Points per learning objective, as every report says them: ``1F1B order 0.72 / 4.5: <why>``.

A Result of a problem that declares objectives carries one entry per objective (what it earned,
what it is worth, and a note on why points were lost); older Results and problems without
objectives have none, and the reports then say points per test as before.
"""

from __future__ import annotations

from collections.abc import Callable

from ..core.result import ObjectiveResult, Result
from .points import text


def objective_right(objective: ObjectiveResult) -> bool:
    """Whether the objective is right: earned in full, or its tests all pass (it then waits for others)."""
    return objective.points >= objective.max_points or 0 < objective.total <= objective.passed


def objective_line(objective: ObjectiveResult, with_note: bool = True,
                   quote: Callable[[str], str] = str) -> str:
    """``title earned / worth`` and, when points were lost, ``: note``. The note may be the learner's words
    (a failing test's first line shows the learner's values): ``quote`` makes them safe where they are shown
    (a Markdown code span in feedback and on Gradescope)."""
    line = f"{objective.title} {text(objective.points)} / {text(objective.max_points)}"
    lost = objective.points < objective.max_points
    return f"{line}: {quote(objective.note)}" if with_note and lost and objective.note else line


def objective_lines(result: Result, with_notes: bool = True, quote: Callable[[str], str] = str) -> list[str]:
    """One line per objective of ``result`` (empty when its problem declares none)."""
    return [objective_line(o, with_notes, quote) for o in result.objectives]
