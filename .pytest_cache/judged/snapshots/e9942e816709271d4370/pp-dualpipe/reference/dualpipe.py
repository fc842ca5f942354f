"""DualPipeV (DeepSeek's "cut-in-half" DualPipe): the per-rank order, a simulator with overlapped
forward-backward pairs, and the peak number of activations each rank holds.

``p`` ranks hold ``2p`` stages folded into a V: rank ``r`` holds stage ``r`` (its "down" stage, local
chunk 0) and stage ``2p - 1 - r`` (its "up" stage, local chunk 1). Micro-batches enter at stage 0 on
rank 0, go down to rank ``p - 1`` (which holds stages ``p - 1`` and ``p``), come back up and leave at
stage ``2p - 1``, again on rank 0.

An action is ``("F", mb, stage)``, ``("B", mb, stage)`` (full backward), ``("I", mb, stage)`` (input
gradient only), ``("W", mb, stage)`` (weight gradient only), or an overlapped pair
``(("F", mb1, s1), ("B", mb2, s2))``.
"""

from __future__ import annotations

from typing import Any

Single = tuple[str, int, int]
Action = Any  # a Single, or a pair (Single, Single)


def dualpipev_schedule(p: int, m: int) -> list[list[Action]]:
    """DualPipeV's per-rank list of actions for ``p`` ranks and ``m`` micro-batches (``m >= 2p``)."""
    if p < 1:
        raise ValueError(f"DualPipeV needs p >= 1 ranks, got p={p}")
    if m < 2 * p:
        raise ValueError(f"DualPipeV needs m >= 2p micro-batches (one per stage at least): got m={m} for p={p}")
    return [_rank_order(p, m, r) for r in range(p)]


def _rank_order(p: int, m: int, r: int) -> list[Action]:
    down, up = r, 2 * p - 1 - r
    next_f = {down: 0, up: 0}      # next micro-batch to run forward, per stage
    next_b = {down: 0, up: 0}      # next micro-batch to run backward (B or I), per stage
    pending_w: list[Single] = []   # W passes owed, oldest first
    order: list[Action] = []

    def forward(stage: int) -> Single:
        action = ("F", next_f[stage], stage)
        next_f[stage] += 1
        return action

    def backward(stage: int, kind: str) -> Single:
        action = (kind, next_b[stage], stage)
        next_b[stage] += 1
        if kind == "I":
            pending_w.append(("W", action[1], stage))
        return action

    def weight() -> None:
        if pending_w:
            order.append(pending_w.pop(0))

    # 1. warm-up forwards of the down stage
    order.extend(forward(down) for _ in range(2 * (p - r - 1)))
    # 2. forwards of the down stage and the up stage, alternating
    for _ in range(r + 1):
        order.append(forward(down))
        order.append(forward(up))
    # 3. zero-bubble steps on the up stage: I, its W right away, the next forward
    for _ in range(p - r - 1):
        order.append(backward(up, "I"))
        weight()
        order.append(forward(up))
    # 4. main loop: (F down & B up), (F up & B down); the last rank does not overlap its very first one
    for i in range(m - 2 * p + r + 1):
        if i == 0 and r == p - 1:
            order.append(forward(down))
            order.append(backward(up, "B"))
        else:
            order.append((forward(down), backward(up, "B")))
        order.append((forward(up), backward(down, "B")))
    # 5. the up stage's backward, then (F up & B down)
    for _ in range(p - r - 1):
        order.append(backward(up, "B"))
        order.append((forward(up), backward(down, "B")))
    # 6. backwards up, down, ...: the first r + 1 of these 2(r + 1) are full B, the last r + 1 only I
    for k in range(2 * (r + 1)):
        order.append(backward(up if k % 2 == 0 else down, "B" if k < r + 1 else "I"))
    # 7. a deferred W, then an I of the down stage
    for _ in range(p - r - 1):
        weight()
        order.append(backward(down, "I"))
    # 8. the W passes still owed
    while pending_w:
        weight()
    return order


def _parts(action: Action, rank: int, index: int) -> tuple[Single, ...]:
    """The single actions an action consists of; ValueError for a malformed one."""
    if isinstance(action, (tuple, list)) and len(action) == 2 and all(isinstance(x, (tuple, list)) for x in action):
        first, second = (tuple(x) for x in action)
        if len(first) != 3 or len(second) != 3 or first[0] != "F" or second[0] != "B":
            raise ValueError(f"rank {rank}, action {index}: an overlapped pair is (('F', mb, stage), ('B', mb, stage)), "
                             f"got {action!r}")
        return (first, second)
    if isinstance(action, (tuple, list)) and len(action) == 3 and action[0] in ("F", "B", "I", "W"):
        return (tuple(action),)
    raise ValueError(f"rank {rank}, action {index}: expected ('F'|'B'|'I'|'W', mb, stage) or a pair, got {action!r}")


def simulate(sched: list[list[Action]], tf: float, tb: float, tw: float, gain: float = 0.0) -> dict[str, Any]:
    """Play ``sched`` out in time.

    F takes ``tf``, a full backward B ``tb``, I ``tb - tw``, W ``tw`` and an overlapped pair
    ``tf + tb - gain``. See the statement for the dependencies and the result.
    """
    p = len(sched)
    parts = [[_parts(a, r, k) for k, a in enumerate(row)] for r, row in enumerate(sched)]
    seen: set[Single] = set()
    for r, row in enumerate(parts):
        for k, subs in enumerate(row):
            for kind, mb, stage in subs:
                key = ("B" if kind == "I" else kind, mb, stage)  # B and I are each the backward of (mb, stage)
                if key in seen:
                    raise ValueError(f"rank {r}, action {k}: {kind}{mb}s{stage} repeats an action of the schedule "
                                     f"(a B and an I of one micro-batch and stage are both its backward)")
                seen.add(key)
    last_stage = max((s for row in parts for subs in row for _, _, s in subs), default=None)
    cost = {"F": float(tf), "B": float(tb), "I": float(tb) - float(tw), "W": float(tw)}
    pair_cost = float(tf) + float(tb) - float(gain)
    done: dict[tuple[str, int, int], float] = {}  # ("F"|"G"|"I", mb, stage) -> end; "G": input gradient ready

    def need(kind: str, mb: int, stage: int):
        if kind == "F":
            return ("F", mb, stage - 1) if stage > 0 else None
        if kind in ("B", "I"):
            return ("F", mb, stage) if stage == last_stage else ("G", mb, stage + 1)
        return ("I", mb, stage)

    free = [0.0] * p
    pos = [0] * p
    timeline: list[list[tuple[Action, float, float]]] = [[] for _ in range(p)]
    moved = True
    while moved:
        moved = False
        for r in range(p):
            while pos[r] < len(sched[r]):
                subs = parts[r][pos[r]]
                deps = [need(*a) for a in subs]
                if any(d is not None and d not in done for d in deps):
                    break
                start = max([free[r]] + [done[d] for d in deps if d is not None])
                end = start + (pair_cost if len(subs) == 2 else cost[subs[0][0]])
                for kind, mb, stage in subs:
                    if kind == "F":
                        done[("F", mb, stage)] = end
                    elif kind in ("B", "I"):
                        done[("G", mb, stage)] = end
                        if kind == "I":
                            done[("I", mb, stage)] = end
                free[r] = end
                timeline[r].append((sched[r][pos[r]], start, end))
                pos[r] += 1
                moved = True
    stuck = [f"rank {r} at {sched[r][pos[r]]!r}" for r in range(p) if pos[r] < len(sched[r])]
    if stuck:
        raise ValueError("the schedule deadlocks; waiting forever: " + "; ".join(stuck))
    total = max(free, default=0.0)
    busy = [sum(end - start for _, start, end in row) for row in timeline]
    bubble = [total - b for b in busy]
    fraction = sum(bubble) / (p * total) if total > 0 else 0.0
    return {"timeline": timeline, "total": total, "busy": busy, "bubble": bubble, "bubble_fraction": fraction}


def peak_activations(sched: list[list[Action]]) -> list[int]:
    """Per rank, the most micro-batch activations held at once after any of its actions.

    A forward stores one (for its micro-batch and stage); the backward of that micro-batch and stage
    (B or I) frees it; W changes nothing. A pair does both, so it changes nothing overall.
    """
    peaks = []
    for r, row in enumerate(sched):
        held = peak = 0
        for k, action in enumerate(row):
            for kind, _, _ in _parts(action, r, k):
                held += {"F": 1, "B": -1, "I": -1, "W": 0}[kind]
            peak = max(peak, held)
        peaks.append(peak)
    return peaks
