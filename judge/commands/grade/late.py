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

from ...formats.points import ZERO, exact
from ...i18n import _

DAY_SECONDS = 24 * 60 * 60


@dataclass(frozen=True)
class LatePolicy:
    """The deadline (naive local time, as the LMS writes it) and the percentage of the total lost per day."""

    deadline: datetime
    percent_per_day: float

    def days_late(self, submitted_at: str) -> int:
        """Started days after the deadline (0 when on time or when the time is unknown)."""
        if not submitted_at:
            return 0
        seconds = (datetime.fromisoformat(submitted_at) - self.deadline).total_seconds()
        return math.ceil(seconds / DAY_SECONDS) if seconds > 0 else 0

    def penalty(self, total: Decimal, submitted_at: str) -> Decimal:
        """The points taken off ``total`` (two decimals; never more than the total)."""
        share = min(Decimal(100), Decimal(repr(self.percent_per_day)) * self.days_late(submitted_at)) / 100
        return min(total, exact(total * share)) if share > 0 else ZERO


def parse_deadline(text: str) -> datetime:
    """``2026-12-01T23:59`` or ``2026-12-01 23:59`` (ValueError names the expected form)."""
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(f"--deadline {text!r}: " + _("expected a date and time like 2026-12-01T23:59")) from None
