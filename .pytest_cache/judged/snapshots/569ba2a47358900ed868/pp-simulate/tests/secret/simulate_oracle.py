"""Oracle for the secret pp-simulate tests: a topological-order simulation and the render encoding.

The schedule is a graph: node (s, k) is stage s's k-th operation; it depends on (s, k - 1) and on
its input operation. Kahn's algorithm visits the nodes in a dependency order; a node starts at the
latest end of its predecessors. Nodes left unvisited mean a cycle, that is a deadlock.
"""

from __future__ import annotations

import math
from collections import deque


def oracle_simulate(sched: list[list[tuple[str, int]]], tf: float, tb: float):
    """(timeline, total, bubble, peaks), or None when the schedule deadlocks."""
    p = len(sched)
    where = {(s, op, mb): k for s, row in enumerate(sched) for k, (op, mb) in enumerate(row)}
    preds: dict[tuple[int, int], list[tuple[int, int]]] = {}
    for s, row in enumerate(sched):
        for k, (op, mb) in enumerate(row):
            node_preds = [(s, k - 1)] if k > 0 else []
            if op == "F" and s > 0:
                node_preds.append((s - 1, where[(s - 1, "F", mb)]))
            elif op == "B":
                src = (s + 1, "B", mb) if s < p - 1 else (s, "F", mb)
                node_preds.append((src[0], where[src]))
            preds[(s, k)] = node_preds
    succs: dict[tuple[int, int], list[tuple[int, int]]] = {node: [] for node in preds}
    indegree = {node: len(ps) for node, ps in preds.items()}
    for node, ps in preds.items():
        for q in ps:
            succs[q].append(node)
    queue = deque(node for node, d in indegree.items() if d == 0)
    start: dict[tuple[int, int], float] = {}
    end: dict[tuple[int, int], float] = {}
    while queue:
        node = queue.popleft()
        s, k = node
        start[node] = max((end[q] for q in preds[node]), default=0.0)
        end[node] = start[node] + (tf if sched[s][k][0] == "F" else tb)
        for nxt in succs[node]:
            indegree[nxt] -= 1
            if indegree[nxt] == 0:
                queue.append(nxt)
    if len(end) < len(preds):
        return None
    timeline = [[(op, mb, start[(s, k)], end[(s, k)]) for k, (op, mb) in enumerate(row)]
                for s, row in enumerate(sched)]
    total = max(end.values())
    busy = sum(len([1 for op, _ in row if op == "F"]) * tf + len([1 for op, _ in row if op == "B"]) * tb
               for row in sched)
    bubble = 1.0 - busy / (p * total)
    peaks = []
    for row in sched:
        forwards = backwards = peak = 0
        for op, _ in row:
            forwards += op == "F"
            backwards += op == "B"
            peak = max(peak, forwards - backwards)
        peaks.append(peak)
    return timeline, total, bubble, peaks


def oracle_render(timeline: list[list[tuple[str, int, float, float]]], total: float, unit: float = 1.0,
                  cells: int | None = None, stage_width: int | None = None) -> str:
    """The statement's text encoding, written cell by cell.

    `cells` and `stage_width` replace the statement's number of cells and width of the stage numbers:
    the tests draw the picture a known mistake would give, to name that mistake only when it is the one."""
    widest = max(len(str(mb)) for row in timeline for _, mb, _, _ in row)
    n = 0
    while n * unit < total - 1e-9:
        n += 1
    n = n if cells is None else cells
    lines = []
    for s, row in enumerate(timeline):
        cells = ["." * (widest + 1)] * n
        for k in range(n):
            mid = (k + 0.5) * unit
            for op, mb, a, b in row:
                if a <= mid < b:
                    cells[k] = (op + str(mb) + " " * widest)[: widest + 1]
        name = str(s).rjust(len(str(len(timeline) - 1)) if stage_width is None else stage_width)
        lines.append("stage " + name + " |" + " ".join(cells) + "|")
    return "\n".join(lines)


def ballot_orders(rng, p: int, m: int) -> list[list[tuple[str, int]]]:
    """Random per-stage orders: forwards and backwards each ascending, F i always before B i."""
    sched = []
    for _ in range(p):
        fwd = bwd = 0
        row = []
        while bwd < m:
            if fwd < m and (fwd == bwd or rng.random() < 0.5):
                row.append(("F", fwd))
                fwd += 1
            else:
                row.append(("B", bwd))
                bwd += 1
        sched.append(row)
    return sched


def close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)


def orders(kind: str, p: int, m: int) -> list[list[tuple[str, int]]]:
    """GPipe or 1F1B per-stage orders: a stage runs the next forward while it holds fewer than its
    limit of un-backpropagated micro-batches (m for GPipe, p - s for 1F1B), else a backward."""
    stages = []
    for s in range(p):
        limit = m if kind == "gpipe" else p - s
        fwd = bwd = 0
        row = []
        while bwd < m:
            if fwd < m and fwd - bwd < limit:
                row.append(("F", fwd))
                fwd += 1
            else:
                row.append(("B", bwd))
                bwd += 1
        stages.append(row)
    return stages
