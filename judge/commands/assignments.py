"""A course's assignments: ``[[assignments]]`` in ``course.toml`` beside the problems.

::

    title = "Distributed training"          # the site's (judge.commands.site.course)

    [[assignments]]
    name = "week3"                          # what --assignment takes
    title = "Week 3: schedules"             # optional: how people read it
    problems = ["pp-schedule", "pp-simulate"]
    points = 20                             # optional: checked against the problems' points
    deadline = "2026-12-04T23:59"           # optional: the LMS's local time
    late_penalty = 10                       # percent of the total per started day late (default 10)
    canvas = "Week 3 (4242)"                # optional: canvas.csv's column, as Canvas's export heads it

``judge grade --assignment NAME`` grades its problems with its deadline and late policy (a
``--deadline`` or ``--late-penalty`` given on the command line wins) and names its column in the LMS
files after it; ``judge export`` and ``judge build`` with ``--assignment NAME`` package and publish
its problems only. Without ``[[assignments]]`` in course.toml, ``judge grade --assignment NAME``
only names the LMS column, as before.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from ..core.errors import UsageError
from ..core.problem import Problem
from ..core.result import Result

COURSE_FILE = "course.toml"
DEFAULT_LATE_PENALTY = 10.0
_KEYS = {"name", "title", "problems", "points", "deadline", "late_penalty", "canvas"}


@dataclass(frozen=True)
class Assignment:
    """One assignment of a course."""

    name: str
    problems: tuple[str, ...]
    title: str = ""
    points: float | None = None
    deadline: datetime | None = None
    late_penalty: float = DEFAULT_LATE_PENALTY
    canvas: str = ""  # the column heading in canvas.csv (default: the name)

    @property
    def column(self) -> str:
        return self.canvas or self.name


def read_assignments(problems_dir: Path) -> list[Assignment]:
    """The assignments ``problems_dir/course.toml`` declares (none without the file or the table);
    :class:`UsageError` naming the file for anything malformed."""
    path = problems_dir / COURSE_FILE
    if not path.is_file():
        return []
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise UsageError(f"{path}: not valid TOML ({exc})") from None
    tables = data.get("assignments", [])
    if not isinstance(tables, list) or not all(isinstance(t, dict) for t in tables):
        raise UsageError(f"{path}: assignments must be [[assignments]] tables")
    found = [_assignment(path, table) for table in tables]
    names = [a.name for a in found]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise UsageError(f"{path}: two assignments named {', '.join(twice)}")
    return found


def _assignment(path: Path, table: dict[str, Any]) -> Assignment:
    where = f"{path}: [[assignments]] {table.get('name', '?')}"
    unknown = sorted(set(table) - _KEYS)
    if unknown:
        raise UsageError(f"{where}: unknown field(s) {', '.join(unknown)} (known: {', '.join(sorted(_KEYS))})")
    name, problems = table.get("name"), table.get("problems")
    if not isinstance(name, str) or not name.strip():
        raise UsageError(f"{path}: every [[assignments]] needs a name")
    if not isinstance(problems, list) or not problems or not all(isinstance(p, str) for p in problems):
        raise UsageError(f"{where}: problems must be a list of problem ids")
    points = table.get("points")
    if points is not None and (isinstance(points, bool) or not isinstance(points, (int, float)) or points < 0):
        raise UsageError(f"{where}: points must be a number >= 0")
    penalty = table.get("late_penalty", DEFAULT_LATE_PENALTY)
    if isinstance(penalty, bool) or not isinstance(penalty, (int, float)) or not 0 <= penalty <= 100:
        raise UsageError(f"{where}: late_penalty must be a percentage (0-100) per day")
    deadline = table.get("deadline")
    if isinstance(deadline, str):
        try:
            deadline = datetime.fromisoformat(deadline)
        except ValueError:
            raise UsageError(f"{where}: deadline {deadline!r}: expected a date and time like 2026-12-04T23:59") \
                from None
    elif deadline is not None and not isinstance(deadline, datetime):  # TOML's own local date-times read as datetime
        raise UsageError(f"{where}: deadline must be a date and time like 2026-12-04T23:59")
    if isinstance(deadline, datetime) and deadline.tzinfo is not None:
        deadline = deadline.replace(tzinfo=None)  # the LMS's local time, as the downloads' times are
    canvas = table.get("canvas", "")
    title = table.get("title", "")
    if not isinstance(canvas, str) or not isinstance(title, str):
        raise UsageError(f"{where}: title and canvas must be text")
    return Assignment(name.strip(), tuple(problems), title.strip(), None if points is None else float(points),
                      deadline, float(penalty), canvas.strip())


def choose(problems_dir: Path, name: str, problems: list[Problem]) -> tuple[Assignment, list[Problem]]:
    """The assignment ``name`` of the course and its problems, in the assignment's order; :class:`UsageError`
    when the course does not declare it, or it names a problem the folder lacks or points that do not add up."""
    assignments = read_assignments(problems_dir)
    if not assignments:
        raise UsageError(f"--assignment {name}: {problems_dir / COURSE_FILE} declares no [[assignments]]")
    chosen = next((a for a in assignments if a.name == name), None)
    if chosen is None:
        raise UsageError(f"--assignment {name}: no such assignment in {problems_dir / COURSE_FILE} (there are: "
                         f"{', '.join(a.name for a in assignments)})")
    by_id = {p.id: p for p in problems}
    missing = [pid for pid in chosen.problems if pid not in by_id]
    if missing:
        raise UsageError(f"assignment {name}: no problem {', '.join(missing)} in {problems_dir}")
    selected = [by_id[pid] for pid in chosen.problems]
    worth = sum(p.points or 0.0 for p in selected)
    if chosen.points is not None and all(p.points is not None for p in selected) and abs(worth - chosen.points) > 1e-9:
        raise UsageError(f"assignment {name}: points = {chosen.points:g}, but its problems are worth {worth:g} "
                         "(their problem.toml's points); make them agree")
    return chosen, selected


def check_worth(assignment: Assignment, canonical: Mapping[str, Result]) -> None:
    """Once the references are judged (with their secret tests): refuse an assignment whose ``points`` differ
    from what its problems are worth, their Results' points (a problem.toml's ``points``, or its tests' weights
    where it declares none, which :func:`choose` cannot know)."""
    if assignment.points is None or any(pid not in canonical for pid in assignment.problems):
        return  # narrowed by --problem: the assignment's points are not these problems'
    worth = {pid: canonical[pid].max_points for pid in assignment.problems}
    if abs(sum(worth.values()) - assignment.points) > 1e-9:
        each = ", ".join(f"{pid} {points:g}" for pid, points in worth.items())
        raise UsageError(f"assignment {assignment.name}: points = {assignment.points:g}, but its problems are worth "
                         f"{sum(worth.values()):g} ({each}); make them agree (points in course.toml, or in the "
                         "problems' problem.toml)")


def shared_entries(problems: list[Problem]) -> list[str]:
    """What to tell students of an assignment whose problems share an entry file (pp-schedule and pp-simulate:
    ``pp_sim.py``): an LMS that downloads each file alone cannot tell which problem it is for."""
    by_entry: dict[str, list[str]] = {}
    for problem in problems:
        by_entry.setdefault(problem.entry, []).append(problem.id)
    return [f"{' and '.join(ids)} share the entry file {entry}: where students upload files one by one (Canvas, "
            f"Blackboard, Gradescope), they hand them in as a zip laid out like practice/ ({ids[0]}/{entry})"
            for entry, ids in by_entry.items() if len(ids) > 1]
