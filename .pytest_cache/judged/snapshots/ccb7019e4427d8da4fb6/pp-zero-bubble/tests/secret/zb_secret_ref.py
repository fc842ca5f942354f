"""Independent ZB-H1 order (by sort keys), an independent simulator (longest path), random schedules."""

from __future__ import annotations

import random


def zb_h1_by_keys(p: int, m: int) -> list[list[tuple[str, int]]]:
    """ZB-H1 built by sorting every op of a stage on a key instead of appending in a loop.

    Round k of stage s holds B k, then W (k - s), then F (k + warm-up); warm-up forwards come
    before round 0 and the W's that do not fit in a round (k - s past the last round) close it.
    """
    out = []
    for s in range(p):
        warm = min(p - s, m)
        keyed = [((-1, 0, i), ("F", i)) if i < warm else ((i - warm, 2, 0), ("F", i)) for i in range(m)]
        keyed += [((k, 0, 0), ("B", k)) for k in range(m)]
        keyed += [((min(j + s, m - 1), 1, j), ("W", j)) for j in range(m)]
        out.append([op for _, op in sorted(keyed)])
    return out


def longest_path_times(sched, tf: float, tb: float, tw: float):
    """Start/end of every op: earliest start over the DAG (same-stage predecessor + the dependency).

    Returns (timeline, total) or None if the graph has a cycle.
    """
    dur = {"F": tf, "B": tb, "W": tw}
    p = len(sched)
    where = {}
    for s, ops in enumerate(sched):
        for k, (op, i) in enumerate(ops):
            where[(op, s, int(i))] = k
    preds = {}
    for s, ops in enumerate(sched):
        for k, (op, i) in enumerate(ops):
            ps = [(s, k - 1)] if k else []
            dep = {"F": ("F", s - 1, i) if s else None,
                   "B": ("B", s + 1, i) if s < p - 1 else ("F", s, i),
                   "W": ("B", s, i)}[op]
            if dep is not None:
                if dep not in where:
                    return None
                ps.append((dep[1], where[dep]))
            preds[(s, k)] = ps
    succ = {node: [] for node in preds}
    indeg = {node: len(ps) for node, ps in preds.items()}
    for node, ps in preds.items():
        for q in ps:
            succ[q].append(node)
    ready = [node for node, d in indeg.items() if d == 0]
    end = {}
    start = {}
    while ready:
        node = ready.pop()
        s, k = node
        st = max((end[q] for q in preds[node]), default=0.0)
        start[node] = st
        end[node] = st + dur[sched[s][k][0]]
        for nxt in succ[node]:
            indeg[nxt] -= 1
            if indeg[nxt] == 0:
                ready.append(nxt)
    if len(end) != len(preds):
        return None
    timeline = [[(sched[s][k][0], int(sched[s][k][1]), start[(s, k)], end[(s, k)]) for k in range(len(sched[s]))]
                for s in range(p)]
    total = max(end.values(), default=0.0)
    return timeline, total


def random_valid_schedule(p: int, m: int, seed: int) -> list[list[tuple[str, int]]]:
    """Per-stage lists read off a random global order that respects every dependency."""
    rnd = random.Random(seed)
    placed: set[tuple[str, int, int]] = set()
    sched = [[] for _ in range(p)]
    todo = {(op, s, i) for s in range(p) for i in range(m) for op in "FBW"}

    def ready(op, s, i):
        if op == "F":
            return s == 0 or ("F", s - 1, i) in placed
        if op == "B":
            return ("F", s, i) in placed and (s == p - 1 or ("B", s + 1, i) in placed)
        return ("B", s, i) in placed

    while todo:
        cands = sorted(x for x in todo if ready(*x))
        op, s, i = rnd.choice(cands)
        todo.remove((op, s, i))
        placed.add((op, s, i))
        sched[s].append((op, i))
    return sched


def one_f_one_b(p: int, m: int) -> list[list[tuple[str, int]]]:
    """1F1B with a fused backward (only F and B ops), for sizes the public table does not hold."""
    out = []
    for s in range(p):
        warm = min(p - s, m)
        ops = [("F", i) for i in range(warm)]
        for i in range(m):
            ops.append(("B", i))
            if warm + i < m:
                ops.append(("F", warm + i))
        out.append(ops)
    return out
