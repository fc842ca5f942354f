"""DualPipeV: the per-rank order, a simulator with overlapped forward-backward pairs, activation peaks.

``p`` ranks hold ``2p`` stages folded into a V: rank ``r`` holds stage ``r`` (its down stage) and stage
``2p - 1 - r`` (its up stage). An action is ``("F", mb, stage)``, ``("B", mb, stage)`` (full backward),
``("I", mb, stage)`` (input gradient only), ``("W", mb, stage)`` (weight gradient only) or an
overlapped pair ``(("F", mb1, s1), ("B", mb2, s2))``. The statement (README.md, or its translation
README.<lang>.md) gives the exact rules; replace each ``raise NotImplementedError`` with your code.
"""

from __future__ import annotations

from typing import Any

Single = tuple[str, int, int]
Action = Any  # a Single, or a pair (Single, Single)


def dualpipev_schedule(p: int, m: int) -> list[list[Action]]:
    """DualPipeV's list of actions for each of the ``p`` ranks, for ``m`` micro-batches.

    Raise ValueError when p < 1 or m < 2p. Rank r runs the eight phases of the statement; keep, per
    stage, the next micro-batch to run forward and backward, and a first-in first-out queue of the
    W passes owed (one per I).
    """
    raise NotImplementedError("dualpipev_schedule: build each rank's eight phases (README, 'The DualPipeV order')")


def simulate(sched: list[list[Action]], tf: float, tb: float, tw: float, gain: float = 0.0) -> dict[str, Any]:
    """Play ``sched`` out in time.

    F takes tf, B tb, I tb - tw, W tw, a pair tf + tb - gain. An action starts when its rank is free
    and its dependencies (both halves' for a pair) have finished. Return ``{"timeline": [[(action,
    start, end), ...] per rank], "total": float, "busy": [...], "bubble": [...], "bubble_fraction":
    float}``. Raise ValueError on a deadlock, a malformed action or an action listed twice.
    """
    raise NotImplementedError("simulate: start each action when its rank is free and its inputs are ready (README, 'The simulation')")


def peak_activations(sched: list[list[Action]]) -> list[int]:
    """Per rank, the most activations held after any of its actions (F stores one, B or I frees one)."""
    raise NotImplementedError("peak_activations: count, per rank, forwards done minus backwards done (README, 'Memory')")
