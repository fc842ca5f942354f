"""A late policy: a deadline and a penalty per day late, taken off a submission's total.

``judge grade --deadline 2026-12-01T23:59 --late-penalty 10`` takes 10 % of the total off per
started day after the deadline (a submission 1 minute late is 1 day late), down to 0 at the
most. It applies only where the layout says when the work was handed in (Blackboard's attempt
time, see :mod:`.layouts`); a submission without a time is never penalised, and one that the LMS
marks late without a time (Canvas's ``_LATE``) says so in its status instead.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from pathlib import Path

from ...formats.points import ZERO, exact
from ...i18n import _

DAY_SECONDS = 24 * 60 * 60


@dataclass(frozen=True)
class LatePolicy:
    """The deadline (naive local time, as the LMS writes it) and the percentage of the total lost per day."""

    deadline: datetime
    percent_per_day: float

    def days_late(self, submitted_at: str, extended_to: str = "") -> int:
        """Started days after the deadline, or after the student's own (``extended_to``, ISO) when later
        (0 when on time or when the time is unknown)."""
        if not submitted_at:
            return 0
        deadline = max(self.deadline, datetime.fromisoformat(extended_to)) if extended_to else self.deadline
        seconds = (datetime.fromisoformat(submitted_at) - deadline).total_seconds()
        return math.ceil(seconds / DAY_SECONDS) if seconds > 0 else 0

    def penalty(self, total: Decimal, submitted_at: str, extended_to: str = "") -> Decimal:
        """The points taken off ``total`` (two decimals; never more than the total)."""
        days = self.days_late(submitted_at, extended_to)
        share = min(Decimal(100), Decimal(repr(self.percent_per_day)) * days) / 100
        return min(total, exact(total * share)) if share > 0 else ZERO


def read_times(path: Path) -> dict[str, tuple[str, str]]:
    """``--times FILE``: a CSV with ``student`` and ``submitted_at`` columns and an optional ``deadline`` column
    (that student's extension), times like 2026-12-01T23:59; student id -> (submitted_at, deadline), ISO.
    ValueError names the row that cannot be read."""
    import csv

    try:
        rows = list(csv.DictReader(path.read_text(encoding="utf-8-sig").splitlines()))
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise ValueError(f"--times {path}: {exc}") from None
    if not rows or "student" not in rows[0] or not ({"submitted_at", "deadline"} & set(rows[0])):
        raise ValueError(f"--times {path}: expected the columns student, submitted_at and (optional) deadline")
    times = {}
    for number, row in enumerate(rows, start=2):
        where = f"--times {path}, line {number}"
        when = [_local_time(row[k].strip(), where).isoformat() if (row.get(k) or "").strip() else ""
                for k in ("submitted_at", "deadline")]
        times[row["student"].strip()] = (when[0], when[1])
    return times


def parse_deadline(text: str) -> datetime:
    """``2026-12-01T23:59`` or ``2026-12-01 23:59`` (ValueError names the expected form)."""
    return _local_time(text, f"--deadline {text!r}")


def _local_time(text: str, where: str) -> datetime:
    """A date and time without a UTC offset, as the LMS downloads' times are (their local time): one with an
    offset cannot be compared with them, so it is refused here rather than after the whole class is judged."""
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(f"{where}: " + _("expected a date and time like 2026-12-01T23:59")) from None
    if when.tzinfo is not None:
        raise ValueError(f"{where}: " + _("give the time without a UTC offset (like 2026-12-01T23:59), in the time "
                                          "zone of the submissions' times")) from None
    return when
