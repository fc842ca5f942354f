"""Interleaved 1F1B (Megatron-LM's virtual pipeline schedule) and a dependency-driven simulation.

Rank ``r`` of ``p`` holds ``v`` model chunks; local chunk ``c`` is global virtual stage ``c * p + r``.
An op is a tuple ``(chunk, op, micro_batch)`` with ``op`` ``"F"`` (forward) or ``"B"`` (backward).
"""

from __future__ import annotations

Op = tuple[int, str, int]
Block = tuple[int, str, int, float, float]


def _check_sizes(p: int, m: int, v: int) -> None:
    for name, value in (("p", p), ("m", m), ("v", v)):
        if value < 1:
            raise ValueError(f"{name} must be at least 1, got {value}")
    if v > 1 and m % p != 0:
        raise ValueError(f"interleaved 1F1B needs m to be a multiple of p: m = {m}, p = {p}")


def num_warmup(p: int, m: int, v: int, rank: int) -> int:
    """Number of warm-up forwards that ``rank`` runs before its first 1F1B step.

    v == 1 is plain 1F1B (Megatron runs its non-interleaved schedule): min(p - rank - 1, m).
    v > 1: min(2 * (p - rank - 1) + (v - 1) * p, m * v).
    """
    _check_sizes(p, m, v)
    if not 0 <= rank < p:
        raise ValueError(f"rank {rank} is not one of the p = {p} ranks (0 up to p - 1)")
    if v == 1:
        return min(p - rank - 1, m)
    return min(2 * (p - rank - 1) + (v - 1) * p, m * v)


def _forward_op(k: int, p: int, v: int) -> Op:
    group, pos = divmod(k, p * v)
    return pos // p, "F", group * p + k % p


def _backward_op(k: int, p: int, v: int) -> Op:
    group, pos = divmod(k, p * v)
    return v - 1 - pos // p, "B", group * p + k % p


def interleaved_schedule(p: int, m: int, v: int) -> list[list[Op]]:
    """Per rank, the ordered list of (chunk, op, micro_batch) of interleaved 1F1B.

    Warm-up forwards, then alternate one forward and one backward, then the remaining backwards.
    The k-th forward of a rank runs chunk (k mod p*v) // p, the k-th backward chunk
    v - 1 - (k mod p*v) // p, both on micro-batch (k // (p*v)) * p + k mod p.
    """
    _check_sizes(p, m, v)
    total = m * v
    schedule = []
    for rank in range(p):
        warmup = num_warmup(p, m, v, rank)
        ops = [_forward_op(k, p, v) for k in range(warmup)]
        for i in range(total - warmup):
            ops.append(_forward_op(warmup + i, p, v))
            ops.append(_backward_op(i, p, v))
        ops.extend(_backward_op(k, p, v) for k in range(total - warmup, total))
        schedule.append(ops)
    return schedule


def simulate_interleaved(sched: list[list[Op]], p: int, v: int,
                         tf: float = 1.0, tb: float = 2.0) -> tuple[list[list[Block]], float, float]:
    """Run ``sched`` as early as the dependencies allow.

    A chunk's forward takes tf / v, its backward tb / v. Forward of virtual stage g waits for the
    forward of g - 1 (same micro-batch); backward of g waits for the backward of g + 1, and the last
    virtual stage's backward waits for its own forward. A rank runs its ops one at a time, in order.

    Returns (timeline, total, bubble): timeline[r] is the list of (chunk, op, mb, start, end) in
    the order rank r ran them, total the time the last op ends, bubble the idle fraction
    1 - (sum of op durations) / (p * total). Raises ValueError if the schedule cannot finish.
    """
    if len(sched) != p:
        raise ValueError(f"the schedule has {len(sched)} ranks, expected p = {p}")
    duration = {"F": tf / v, "B": tb / v}
    last = p * v - 1
    finished: dict[tuple[int, str, int], float] = {}
    timeline: list[list[Block]] = [[] for _ in range(p)]
    position = [0] * p
    free_at = [0.0] * p
    progress = True
    while progress:
        progress = False
        for rank in range(p):
            while position[rank] < len(sched[rank]):
                chunk, op, mb = sched[rank][position[rank]]
                stage = chunk * p + rank
                if op == "F":
                    needs = (stage - 1, "F", mb) if stage > 0 else None
                elif op == "B":
                    needs = (stage + 1, "B", mb) if stage < last else (stage, "F", mb)
                else:
                    raise ValueError(f"rank {rank}: unknown op {op!r} (expected 'F' or 'B')")
                if needs is None:
                    start = free_at[rank]
                elif needs in finished:
                    start = max(free_at[rank], finished[needs])
                else:
                    break
                end = start + duration[op]
                finished[(stage, op, mb)] = end
                free_at[rank] = end
                timeline[rank].append((chunk, op, mb, start, end))
                position[rank] += 1
                progress = True
    stuck = [rank for rank in range(p) if position[rank] < len(sched[rank])]
    if stuck:
        detail = "; ".join(f"rank {r} waits at {sched[r][position[r]]}" for r in stuck)
        raise ValueError(f"deadlock: the schedule cannot finish ({detail})")
    total = max(free_at)
    busy = sum(end - start for row in timeline for _, _, _, start, end in row)
    bubble = 1.0 - busy / (p * total)
    return timeline, total, bubble
