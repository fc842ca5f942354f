"""Points as every output reports them: two decimals, and parts that add up to their whole exactly.

The judge scores with floats (:mod:`judge.core.scoring`: 4 decimals per test and per problem), and
floats do not add up exactly (0.1 + 0.2 is 0.30000000000000004). Every output a person or a
platform reads (grades.csv, feedback, Gradescope, PrairieLearn, GitHub Classroom, LMS CSVs) takes
its numbers from here instead:

- a problem's points and what it is worth are :func:`exact` of the Result's: a :class:`~decimal.Decimal`
  rounded half up to :data:`PLACES`;
- a total is the sum of those decimals (exact);
- a breakdown of a problem into rows (one per test) is :func:`split` of the problem's points by the
  tests' weights (largest remainders), so the rows add up to the problem's points to the cent.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from decimal import ROUND_DOWN, ROUND_HALF_UP, Decimal
from fractions import Fraction

PLACES = Decimal("0.01")
ZERO = Decimal("0.00")


def exact(value: float | Decimal) -> Decimal:
    """``value`` rounded half up to two decimals (``7.14285`` -> ``7.14``, ``2.675`` -> ``2.68``)."""
    return Decimal(repr(value) if isinstance(value, float) else value).quantize(PLACES, ROUND_HALF_UP)


def add(values: Iterable[float | Decimal]) -> Decimal:
    """The exact sum of ``values``, each taken to two decimals first."""
    return sum((exact(v) for v in values), ZERO)


def split(whole: Decimal, weights: Sequence[float]) -> list[Decimal]:
    """``whole`` in parts proportional to ``weights`` (two decimals each) that add up to ``whole``.

    Largest remainders: each part is its share rounded down to the cent, and the cents left over
    go to the parts whose shares were cut the most (the earlier part on a tie). With no weight at
    all, the first part takes everything.
    """
    if not weights:
        return []
    cents = int((exact(whole) / PLACES).to_integral_value(ROUND_DOWN))
    fractions = [Fraction(w) if w > 0 else Fraction(0) for w in weights]
    total = sum(fractions)
    if total == 0:
        return [exact(whole)] + [ZERO] * (len(weights) - 1)
    shares = [cents * f / total for f in fractions]
    parts = [int(s) for s in shares]  # floor: shares are >= 0
    left = cents - sum(parts)
    by_remainder = sorted(range(len(shares)), key=lambda i: (-(shares[i] - parts[i]), i))
    for index in by_remainder[:left]:
        parts[index] += 1
    return [Decimal(p) * PLACES for p in parts]


def number(value: Decimal | float) -> float:
    """A JSON number for points: the float nearest ``value``'s two decimals (``95.25``, never ``95.2501``)."""
    return float(exact(value))


def text(value: Decimal | float) -> str:
    """Points as people and spreadsheets read them: ``10``, ``6.7``, ``95.25`` (no trailing zeros)."""
    shown = format(exact(value).normalize(), "f")
    return "0" if shown in ("-0", "0") else shown
