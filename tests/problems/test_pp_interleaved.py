"""Project tests for pp-interleaved: the reference agrees with an independent implementation.

The independent schedule follows Megatron-Core's table-driven formulation: a lookup table of
(micro-batch, chunk) per "virtual micro-batch id", built group by group, and warm-up counts derived
from the table (the last rank warms up until the first forward of the last chunk; each rank further
from the end adds two steps) instead of the reference's closed formulas. The independent simulator
is event-driven (a heap of completion times) instead of the reference's sweep over ranks. The grid
is p = 1..8, m = multiples of p up to 32, v = 1..4 (and v = 1 with any m up to 32).
"""

from __future__ import annotations

import heapq
import math
import re
from pathlib import Path

import numpy as np
import pytest

from tests.problems.loading import load

PROBLEM = Path(__file__).resolve().parents[2] / "problems" / "pp-interleaved"




ref = load("pp-interleaved", "reference/interleaved.py", "_pp_interleaved_reference")

GRID = [(p, m, v) for p in range(1, 9) for v in range(1, 5) for m in range(p, 33, p)]


# ---------------------------------------------------------------- independent schedule

def schedule_table(p: int, m: int, v: int) -> list[tuple[int, int]]:
    """(mb, chunk) of each virtual micro-batch id, in order: groups of p micro-batches, every chunk."""
    table = []
    for first in range(0, m, p):
        group = range(first, min(first + p, m))
        table.extend((mb, chunk) for chunk in range(v) for mb in group)
    return table


def warmup_counts(p: int, m: int, v: int) -> list[int]:
    total = m * v
    if v == 1:  # Megatron treats a virtual size of 1 as plain 1F1B: one step per hop
        return [min(p - 1 - r, total) for r in range(p)]
    table = schedule_table(p, m, v)
    last_rank = next(i for i, (_, chunk) in enumerate(table) if chunk == v - 1)
    return [min(last_rank + 2 * (p - 1 - r), total) for r in range(p)]


def independent_schedule(p: int, m: int, v: int) -> list[list[tuple[int, str, int]]]:
    table = schedule_table(p, m, v)
    forwards = [(chunk, "F", mb) for mb, chunk in table]
    backwards = [(v - 1 - chunk, "B", mb) for mb, chunk in table]
    out = []
    for w in warmup_counts(p, m, v):
        order: list[tuple[int, str, int]] = []
        f = b = 0
        while f < w:
            order.append(forwards[f])
            f += 1
        while f < len(forwards):  # steady state: one forward, one backward
            order += [forwards[f], backwards[b]]
            f += 1
            b += 1
        order += backwards[b:]
        out.append(order)
    return out


# ---------------------------------------------------------------- independent simulator

def _dependency(stage: int, op: str, mb: int, stages: int):
    if op == "F":
        return (stage - 1, "F", mb) if stage > 0 else None
    return (stage + 1, "B", mb) if stage < stages - 1 else (stage, "F", mb)


def event_simulate(sched, p: int, v: int, tf: float = 1.0, tb: float = 2.0):
    stages = p * v
    finished: dict[tuple[int, str, int], float] = {}
    nxt = [0] * p
    running = [False] * p
    rows: list[list] = [[] for _ in range(p)]
    events: list[tuple[float, int, tuple[int, str, int]]] = []

    def try_start(rank: int, now: float) -> None:
        if running[rank] or nxt[rank] >= len(sched[rank]):
            return
        chunk, op, mb = sched[rank][nxt[rank]]
        key = (chunk * p + rank, op, mb)
        dep = _dependency(*key, stages)
        if dep is not None and dep not in finished:
            return
        end = now + (tf if op == "F" else tb) / v
        rows[rank].append((chunk, op, mb, now, end))
        running[rank] = True
        nxt[rank] += 1
        heapq.heappush(events, (end, rank, key))

    for rank in range(p):
        try_start(rank, 0.0)
    now = 0.0
    while events:
        now, rank, key = heapq.heappop(events)
        finished[key] = now
        running[rank] = False
        for other in range(p):
            try_start(other, now)
    if any(nxt[r] < len(sched[r]) for r in range(p)):
        raise ValueError("deadlock")
    busy = sum(e - s for row in rows for *_, s, e in row)
    return rows, now, 1.0 - busy / (p * now)


# ---------------------------------------------------------------- tests

def test_schedule_matches_independent_on_grid():
    for p, m, v in GRID:
        assert ref.interleaved_schedule(p, m, v) == independent_schedule(p, m, v), (p, m, v)
        assert [ref.num_warmup(p, m, v, r) for r in range(p)] == warmup_counts(p, m, v), (p, m, v)
    for p in range(1, 9):
        for m in range(1, 33):
            assert ref.interleaved_schedule(p, m, 1) == independent_schedule(p, m, 1), (p, m)


def test_v1_is_plain_1f1b():
    for p in range(1, 9):
        for m in range(1, 33):
            for r, ops in enumerate(ref.interleaved_schedule(p, m, 1)):
                in_flight, expected, fwd, bwd = 0, [], 0, 0
                while fwd < m or bwd < m:  # 1F1B: at most p - r micro-batches in flight
                    if fwd < m and in_flight < p - r:
                        expected.append((0, "F", fwd))
                        fwd, in_flight = fwd + 1, in_flight + 1
                    else:
                        expected.append((0, "B", bwd))
                        bwd, in_flight = bwd + 1, in_flight - 1
                assert ops == expected, (p, m, r)


def test_simulation_matches_event_simulator_and_closed_form():
    for p, m, v in GRID:
        sched = ref.interleaved_schedule(p, m, v)
        rows, total, bubble = ref.simulate_interleaved(sched, p, v)
        want_rows, want_total, want_bubble = event_simulate(sched, p, v)
        exact = v in (1, 2, 4)
        if exact:
            assert rows == want_rows, (p, m, v)
            assert total == want_total == (m + (p - 1) / v) * 3.0, (p, m, v, total)
        else:
            for row, want in zip(rows, want_rows):
                for a, b in zip(row, want):
                    assert a[:3] == b[:3] and math.isclose(a[3], b[3], abs_tol=1e-9) and math.isclose(a[4], b[4], abs_tol=1e-9)
            assert math.isclose(total, (m + (p - 1) / v) * 3.0, rel_tol=1e-12), (p, m, v, total)
        assert math.isclose(bubble, want_bubble, rel_tol=1e-9, abs_tol=1e-12)
        assert math.isclose(bubble, (p - 1) / (v * m + p - 1), rel_tol=1e-9, abs_tol=1e-12), (p, m, v, bubble)


def _random_order(p: int, m: int, v: int, rng: np.random.Generator):
    stages = p * v
    left = sorted((g, op, mb) for g in range(stages) for op in "FB" for mb in range(m))
    done: set = set()
    out: list[list] = [[] for _ in range(p)]
    while left:
        ready = [k for k in left if (d := _dependency(*k, stages)) is None or d in done]
        g, op, mb = ready[int(rng.integers(0, len(ready)))]
        left.remove((g, op, mb))
        done.add((g, op, mb))
        out[g % p].append((g // p, op, mb))
    return out


def test_simulation_on_random_feasible_orders():
    rng = np.random.default_rng(20240611)
    for _ in range(30):
        p, v = int(rng.integers(1, 5)), int(rng.choice([1, 2, 4]))
        m = int(rng.integers(1, 5))
        sched = _random_order(p, m, v, rng)
        tf, tb = float(rng.choice([0.5, 1.0, 2.0])), float(rng.choice([1.0, 2.0, 3.0]))
        assert ref.simulate_interleaved(sched, p, v, tf, tb) == event_simulate(sched, p, v, tf, tb)


def test_deadlocks_are_reported():
    for p, m, v in [(2, 4, 2), (4, 8, 2), (3, 6, 3)]:
        bad = []
        for ops in independent_schedule(p, m, v):
            first_b = next(i for i, op in enumerate(ops) if op[1] == "B")
            bad.append(ops[first_b:first_b + 1] + ops[:first_b] + ops[first_b + 1:])  # a backward first
        with pytest.raises(ValueError):
            event_simulate(bad, p, v)
        with pytest.raises(ValueError):
            ref.simulate_interleaved(bad, p, v)


def test_invalid_sizes():
    for p, m, v in [(2, 3, 2), (4, 6, 3), (0, 4, 2), (2, 0, 1), (2, 4, 0)]:
        with pytest.raises(ValueError):
            ref.interleaved_schedule(p, m, v)


def test_statement_worked_example_matches_reference():
    text = (PROBLEM / "README.md").read_text(encoding="utf-8")
    lists = re.findall(r"^rank (\d): ((?:[FB]\d+c\d+ ?(?:\| )?)+)$", text, flags=re.M)
    assert len(lists) == 2, lists
    sched = ref.interleaved_schedule(2, 4, 2)
    for rank, ops in lists:
        words = ops.replace("|", " ").split()
        assert words == [f"{op}{mb}c{c}" for c, op, mb in sched[int(rank)]], rank
