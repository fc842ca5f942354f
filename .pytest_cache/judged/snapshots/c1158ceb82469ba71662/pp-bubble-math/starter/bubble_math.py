"""Bubble math: closed forms for pipeline-parallel schedules (GPipe, 1F1B, interleaved 1F1B).

Fill in every function. Notation: p pipeline stages (ranks), m micro-batches, v virtual stages
(model chunks) per rank, s a stage index 0..p-1. Raise ValueError with a clear message for
invalid input (p < 1, m < 1, v < 1, s outside 0..p-1, unknown kind, target outside (0, 1), ...).
"""

from __future__ import annotations


def bubble_fraction(p: int, m: int) -> float:
    """Bubble of GPipe / 1F1B as a fraction of the TOTAL time: (p - 1) / (m + p - 1).

    Example: bubble_fraction(4, 12) == 0.2.
    """
    raise NotImplementedError("bubble_fraction: idle time divided by total time, see the statement")


def bubble_over_ideal(p: int, m: int) -> float:
    """Bubble of GPipe / 1F1B relative to the IDEAL (bubble-free) time: (p - 1) / m.

    Example: bubble_over_ideal(4, 12) == 0.25.
    """
    raise NotImplementedError("bubble_over_ideal: idle time divided by busy time, see the statement")


def interleaved_bubble_fraction(p: int, m: int, v: int) -> float:
    """Bubble of interleaved 1F1B (v chunks per rank) as a fraction of the TOTAL time.

    Equals (p - 1) / (v m + p - 1). Example: interleaved_bubble_fraction(4, 8, 2) == 3 / 19.
    """
    raise NotImplementedError("interleaved_bubble_fraction: see the worked example in the statement")


def interleaved_bubble_over_ideal(p: int, m: int, v: int) -> float:
    """Bubble of interleaved 1F1B relative to the IDEAL time: (1 / v) (p - 1) / m.

    Example: interleaved_bubble_over_ideal(4, 8, 2) == 3 / 16.
    """
    raise NotImplementedError("interleaved_bubble_over_ideal: see the worked example in the statement")


def peak_activations(kind: str, p: int, m: int, s: int) -> int:
    """Most micro-batches whose activations stage s (0-based) holds at the same time.

    kind is "gpipe" or "1f1b". Example: peak_activations("1f1b", 4, 8, 0) == 4.
    """
    raise NotImplementedError("peak_activations: count forwards started minus backwards finished")


def min_microbatches(p: int, target: float) -> int:
    """Smallest integer m >= 1 with bubble fraction (p - 1) / (m + p - 1) <= target, 0 < target < 1.

    Example: min_microbatches(4, 0.5) == 3 (3 / 6 is exactly 0.5, and "at most" includes equality).
    """
    raise NotImplementedError("min_microbatches: mind the float rounding at exact boundaries")


def p2p_elements_per_microbatch(s: int, b: int, h: int, v: int = 1) -> int:
    """Elements one micro-batch moves over the link rank r <-> rank r + 1, both directions together.

    s sequence length, b micro-batch size, h hidden size, v chunks per rank.
    Example: p2p_elements_per_microbatch(1024, 1, 4096) == 8388608.
    """
    raise NotImplementedError("p2p_elements_per_microbatch: activation forward + gradient backward")
