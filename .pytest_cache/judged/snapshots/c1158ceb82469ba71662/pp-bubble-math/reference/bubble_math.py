"""Reference solution for pp-bubble-math: closed forms for pipeline-parallel schedules."""

from __future__ import annotations

KINDS = ("gpipe", "1f1b")


def _check_int(name: str, value: int, minimum: int = 1) -> int:
    """Return ``value`` if it is >= ``minimum``; raise ValueError otherwise (types are not checked:
    the statement leaves arguments of the wrong type open)."""
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return value


def bubble_fraction(p: int, m: int) -> float:
    """Idle share of the total time of GPipe / 1F1B: (p - 1) / (m + p - 1)."""
    p = _check_int("p (number of stages)", p)
    m = _check_int("m (number of micro-batches)", m)
    return (p - 1) / (m + p - 1)


def bubble_over_ideal(p: int, m: int) -> float:
    """Idle time relative to the ideal (bubble-free) time of GPipe / 1F1B: (p - 1) / m."""
    p = _check_int("p (number of stages)", p)
    m = _check_int("m (number of micro-batches)", m)
    return (p - 1) / m


def interleaved_bubble_fraction(p: int, m: int, v: int) -> float:
    """Idle share of the total time of interleaved 1F1B with v chunks per rank: (p - 1) / (v m + p - 1)."""
    p = _check_int("p (number of ranks)", p)
    m = _check_int("m (number of micro-batches)", m)
    v = _check_int("v (virtual stages per rank)", v)
    return (p - 1) / (v * m + p - 1)


def interleaved_bubble_over_ideal(p: int, m: int, v: int) -> float:
    """Idle time of interleaved 1F1B relative to the ideal time: (1 / v) (p - 1) / m."""
    p = _check_int("p (number of ranks)", p)
    m = _check_int("m (number of micro-batches)", m)
    v = _check_int("v (virtual stages per rank)", v)
    return (p - 1) / (v * m)


def peak_activations(kind: str, p: int, m: int, s: int) -> int:
    """Most micro-batches whose activations stage ``s`` holds at once: GPipe m, 1F1B min(p - s, m)."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    p = _check_int("p (number of stages)", p)
    m = _check_int("m (number of micro-batches)", m)
    s = _check_int("s (stage index)", s, minimum=0)
    if s >= p:
        raise ValueError(f"s (stage index) must be in 0..p-1 (a stage of the p = {p} stages), got {s}")
    if kind == "gpipe":
        return m
    return min(p - s, m)


def min_microbatches(p: int, target: float) -> int:
    """Smallest m >= 1 with (p - 1) / (m + p - 1) <= target.

    Found by testing the defining inequality itself, with the single (correctly rounded) division
    (p - 1) / (m + p - 1), never a closed form (which floating-point rounding can put one off):
    doubling m until it holds, then bisecting between the last m that fails and the first that holds.
    """
    p = _check_int("p (number of stages)", p)
    if isinstance(target, bool):
        raise TypeError(f"target must be a number, got {target!r}")
    target = float(target)
    if not 0.0 < target < 1.0:
        raise ValueError(f"target must be strictly between 0 and 1, got {target}")

    def ok(m: int) -> bool:
        return (p - 1) / (m + p - 1) <= target

    low, high = 0, 1  # every m <= low fails (m = 0 is no answer); ok(high) is not known yet
    while not ok(high):
        low, high = high, 2 * high
    while high - low > 1:  # low fails (or is 0), high holds
        middle = (low + high) // 2
        if ok(middle):
            high = middle
        else:
            low = middle
    return high


def p2p_elements_per_microbatch(s: int, b: int, h: int, v: int = 1) -> int:
    """Elements one micro-batch moves over the link between rank r and rank r + 1, both directions.

    Forward: the activation (s, b, h) from r to r + 1; backward: its gradient (s, b, h) from r + 1
    to r. With v chunks per rank a micro-batch crosses that link v times each way.
    """
    s = _check_int("s (sequence length)", s)
    b = _check_int("b (micro-batch size)", b)
    h = _check_int("h (hidden size)", h)
    v = _check_int("v (virtual stages per rank)", v)
    return 2 * v * s * b * h
