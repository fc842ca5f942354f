"""An independent interleaved 1F1B schedule and simulator used by the secret tests.

The schedule is built from explicit tables of the forward and backward visiting order; the
simulator orders all ops topologically (rank order plus data dependencies) instead of sweeping
over ranks.
"""

from __future__ import annotations

from collections import deque

import numpy as np


def forward_order(p: int, m: int, v: int) -> list[tuple[int, int]]:
    """(chunk, mb) in the order every rank runs its forwards: groups of p micro-batches per chunk."""
    if v == 1:
        return [(0, mb) for mb in range(m)]
    return [(c, g * p + j) for g in range(m // p) for c in range(v) for j in range(p)]


def backward_order(p: int, m: int, v: int) -> list[tuple[int, int]]:
    if v == 1:
        return [(0, mb) for mb in range(m)]
    return [(c, g * p + j) for g in range(m // p) for c in reversed(range(v)) for j in range(p)]


def warmups(p: int, m: int, v: int) -> list[int]:
    if v == 1:
        return [min(p - 1 - r, m) for r in range(p)]
    return [min((v - 1) * p + 2 * (p - 1 - r), m * v) for r in range(p)]


def schedule(p: int, m: int, v: int) -> list[list[tuple[int, str, int]]]:
    fwd = [(c, "F", mb) for c, mb in forward_order(p, m, v)]
    bwd = [(c, "B", mb) for c, mb in backward_order(p, m, v)]
    out = []
    for w in warmups(p, m, v):
        ops = fwd[:w]
        for f, b in zip(fwd[w:], bwd):
            ops += [f, b]
        out.append(ops + bwd[len(fwd) - w:])
    return out


def simulate(sched: list[list[tuple[int, str, int]]], p: int, v: int, tf: float = 1.0,
             tb: float = 2.0) -> tuple[list[list[tuple[int, str, int, float, float]]], float, float]:
    """Return (rows, total, bubble) like simulate_interleaved, or raise ValueError on a deadlock."""
    stages = p * v
    where = {}  # (stage, op, mb) -> (rank, index)
    for r, ops in enumerate(sched):
        for i, (c, op, mb) in enumerate(ops):
            where[(c * p + r, op, mb)] = (r, i)
    preds: dict[tuple[int, int], list[tuple[int, int]]] = {node: [] for node in where.values()}
    for (g, op, mb), node in where.items():
        r, i = node
        if i > 0:
            preds[node].append((r, i - 1))
        if op == "F" and g > 0:
            dep = (g - 1, "F", mb)
        elif op == "B":
            dep = (g + 1, "B", mb) if g < stages - 1 else (g, "F", mb)
        else:
            dep = None
        if dep is not None:
            if dep not in where:
                raise ValueError(f"{dep} never runs")
            preds[node].append(where[dep])
    succs: dict[tuple[int, int], list[tuple[int, int]]] = {node: [] for node in preds}
    for node, ps in preds.items():
        for q in ps:
            succs[q].append(node)
    waiting = {node: len(ps) for node, ps in preds.items()}
    ready = deque(node for node, n in waiting.items() if n == 0)
    end: dict[tuple[int, int], float] = {}
    start: dict[tuple[int, int], float] = {}
    while ready:
        node = ready.popleft()
        r, i = node
        op = sched[r][i][1]
        start[node] = max((end[q] for q in preds[node]), default=0.0)
        end[node] = start[node] + (tf if op == "F" else tb) / v
        for s in succs[node]:
            waiting[s] -= 1
            if waiting[s] == 0:
                ready.append(s)
    if len(end) != len(preds):
        raise ValueError("deadlock")
    rows = [[(c, op, mb, start[(r, i)], end[(r, i)]) for i, (c, op, mb) in enumerate(ops)]
            for r, ops in enumerate(sched)]
    total = max(end.values(), default=0.0)
    busy = sum(e - s for row in rows for *_, s, e in row)
    return rows, total, (1.0 - busy / (p * total)) if total else 0.0


def random_feasible_schedule(p: int, m: int, v: int, seed: int) -> list[list[tuple[int, str, int]]]:
    """Per-rank orders produced by running the ops one at a time in a random order that respects
    the data dependencies: a feasible schedule that is usually not Megatron's."""
    rng = np.random.default_rng(seed)
    stages = p * v
    done: set[tuple[int, str, int]] = set()
    remaining = {(g, op, mb) for g in range(stages) for op in "FB" for mb in range(m)}
    out: list[list[tuple[int, str, int]]] = [[] for _ in range(p)]
    while remaining:
        ready = sorted(node for node in remaining if _dep(node, stages) is None or _dep(node, stages) in done)
        g, op, mb = ready[int(rng.integers(0, len(ready)))]
        remaining.discard((g, op, mb))
        done.add((g, op, mb))
        out[g % p].append((g // p, op, mb))
    return out


def _dep(node: tuple[int, str, int], stages: int) -> tuple[int, str, int] | None:
    g, op, mb = node
    if op == "F":
        return (g - 1, "F", mb) if g > 0 else None
    return (g + 1, "B", mb) if g < stages - 1 else (g, "F", mb)
