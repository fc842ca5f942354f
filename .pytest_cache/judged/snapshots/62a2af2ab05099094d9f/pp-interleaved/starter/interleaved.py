"""Interleaved 1F1B (Megatron-LM's virtual pipeline schedule) and a dependency-driven simulation.

Rank ``r`` of ``p`` holds ``v`` model chunks; local chunk ``c`` is global virtual stage ``c * p + r``.
An op is a tuple ``(chunk, op, micro_batch)`` with ``op`` ``"F"`` (forward) or ``"B"`` (backward).
Read the statement (README.md, or README.zh.md in Chinese) for the rules; replace each ``raise NotImplementedError`` with your code.
"""

from __future__ import annotations

Op = tuple[int, str, int]
Block = tuple[int, str, int, float, float]


def num_warmup(p: int, m: int, v: int, rank: int) -> int:
    """Number of warm-up forwards that ``rank`` runs before its first forward-backward pair.

    v == 1: plain 1F1B, min(p - rank - 1, m).
    v > 1: min(2 * (p - rank - 1) + (v - 1) * p, m * v).
    Raises ValueError when p, m or v is below 1, when v > 1 and m is not a multiple of p,
    or when rank is not in 0..p-1.
    """
    raise NotImplementedError("num_warmup: return the warm-up count of this rank (see README)")


def interleaved_schedule(p: int, m: int, v: int) -> list[list[Op]]:
    """Per rank, the ordered list of (chunk, op, micro_batch) of interleaved 1F1B.

    schedule[r] holds 2 * m * v ops: num_warmup(...) forwards, then pairs (one forward, one
    backward), then the remaining backwards. The k-th forward of a rank runs local chunk
    (k mod p*v) // p and the k-th backward local chunk v - 1 - (k mod p*v) // p, both on
    micro-batch (k // (p*v)) * p + k mod p.
    Raises ValueError for p, m or v below 1 and, when v > 1, for m not a multiple of p.
    """
    raise NotImplementedError("interleaved_schedule: build each rank's list of (chunk, op, mb) (see README)")


def simulate_interleaved(sched: list[list[Op]], p: int, v: int,
                         tf: float = 1.0, tb: float = 2.0) -> tuple[list[list[Block]], float, float]:
    """Run ``sched`` (one list of (chunk, op, mb) per rank) as early as the dependencies allow.

    A chunk's forward takes tf / v and its backward tb / v. Forward of virtual stage g waits for
    the forward of stage g - 1 on the same micro-batch; backward of g waits for the backward of
    g + 1, and the backward of the last virtual stage (p*v - 1) waits for its own forward. Each
    rank runs its ops one at a time in list order; there is no communication delay.

    Returns (timeline, total, bubble): timeline[r] lists (chunk, op, mb, start, end) in the
    order rank r ran them, total is the time the last op ends, and bubble is
    1 - (sum of all op durations) / (p * total).
    Raises ValueError if the schedule cannot finish (a deadlock).
    """
    raise NotImplementedError("simulate_interleaved: simulate the schedule (see README)")
