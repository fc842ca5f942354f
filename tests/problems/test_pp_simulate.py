"""Project tests for pp-simulate: the reference agrees with an independent implementation.

The independent simulator computes each operation's end time by memoised recursion on the
defining equation end = max(end of the stage's previous op, end of the input) + duration, and finds
deadlocks as cycles in that recursion; the independent renderer looks blocks up with bisect. The
reference instead sweeps the stages in rounds.
"""

from __future__ import annotations

import bisect
import math
import random
import sys
from pathlib import Path

import pytest

from tests.problems.loading import load

PROBLEM = Path(__file__).resolve().parents[2] / "problems" / "pp-simulate"




ref = load("pp-simulate", "reference/pp_sim.py", "_pp_simulate_reference")
schedule = load("pp-schedule", "reference/pp_sim.py", "_pp_schedule_reference_for_simulate").schedule


class Deadlock(Exception):
    pass


def orders(kind: str, p: int, m: int) -> list[list[tuple[str, int]]]:
    """Per-stage orders built from the in-flight limit (m for GPipe, p - s for 1F1B)."""
    out = []
    for s in range(p):
        limit = m if kind == "gpipe" else p - s
        row, f, b = [], 0, 0
        while b < m:
            if f < m and f - b < limit:
                row, f = row + [("F", f)], f + 1
            else:
                row, b = row + [("B", b)], b + 1
        out.append(row)
    return out


def independent_simulate(sched, tf, tb):
    p = len(sched)
    index = {(s, op, mb): k for s, row in enumerate(sched) for k, (op, mb) in enumerate(row)}
    memo: dict[tuple[int, int], float] = {}
    visiting: set[tuple[int, int]] = set()
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))

    def end(s: int, k: int) -> float:
        if (s, k) in memo:
            return memo[(s, k)]
        if (s, k) in visiting:
            raise Deadlock
        visiting.add((s, k))
        op, mb = sched[s][k]
        ready = end(s, k - 1) if k else 0.0
        if op == "F" and s:
            ready = max(ready, end(s - 1, index[(s - 1, "F", mb)]))
        if op == "B":
            src = (s + 1, "B", mb) if s + 1 < p else (s, "F", mb)
            ready = max(ready, end(src[0], index[src]))
        memo[(s, k)] = ready + (tf if op == "F" else tb)
        visiting.discard((s, k))
        return memo[(s, k)]

    rows = []
    for s, row in enumerate(sched):
        rows.append([(op, mb, end(s, k) - (tf if op == "F" else tb), end(s, k)) for k, (op, mb) in enumerate(row)])
    total = max(b[3] for row in rows for b in row)
    idle = sum(total - sum(b[3] - b[2] for b in row) for row in rows)
    peaks = [max(sum(1 if o == "F" else -1 for o, _ in row[:k]) for k in range(len(row) + 1)) for row in sched]
    return rows, total, idle / (p * total), peaks


def independent_render(rows, total, unit=1.0):
    w = max(len(str(b[1])) for row in rows for b in row) + 1
    n = math.ceil(round(total / unit, 9))
    sw = len(str(len(rows) - 1))
    lines = []
    for s, row in enumerate(rows):
        starts = [b[2] for b in row]
        cells = []
        for k in range(n):
            mid = (k + 0.5) * unit
            j = bisect.bisect_right(starts, mid) - 1
            hit = j >= 0 and row[j][3] > mid
            cells.append(f"{row[j][0]}{row[j][1]:<{w - 1}}" if hit else "." * w)
        lines.append("stage " + f"{s}".rjust(sw) + " |" + " ".join(cells) + "|")
    return "\n".join(lines)


def same_timeline(a, b) -> bool:
    return all(len(ra) == len(rb) and all(x[:2] == y[:2] and math.isclose(x[2], y[2], abs_tol=1e-9)
                                          and math.isclose(x[3], y[3], abs_tol=1e-9) for x, y in zip(ra, rb))
               for ra, rb in zip(a, b)) and len(a) == len(b)


@pytest.mark.parametrize("kind", ["gpipe", "1f1b"])
@pytest.mark.parametrize("tf, tb", [(1.0, 2.0), (0.5, 1.25)])
def test_reference_matches_independent_on_grid(kind, tf, tb):
    for p in range(1, 9):
        for m in range(1, 33):
            sched = orders(kind, p, m)
            assert schedule(kind, p, m) == sched, (kind, p, m)
            got = ref.simulate(sched, tf, tb)
            rows, total, bubble, peaks = independent_simulate(sched, tf, tb)
            assert same_timeline(got.timeline, rows), (kind, p, m, tf, tb)
            assert math.isclose(got.total, total) and math.isclose(got.total, (m + p - 1) * (tf + tb))
            assert math.isclose(got.bubble, bubble, abs_tol=1e-12)
            assert math.isclose(got.bubble, (p - 1) / (m + p - 1), abs_tol=1e-12)
            assert got.peak_activations == peaks
            assert peaks == ([m] * p if kind == "gpipe" else [min(p - s, m) for s in range(p)])


def test_reference_render_matches_independent():
    for kind in ("gpipe", "1f1b"):
        for p in (1, 2, 4, 11):
            for m in (1, 3, 10, 11, 32):
                for tf, tb, unit in ((1.0, 2.0, 1.0), (0.5, 1.25, 0.25), (0.5, 1.25, 0.5), (1.0, 3.0, 2.0)):
                    res = ref.simulate(orders(kind, p, m), tf, tb)
                    want = independent_render(*independent_simulate(orders(kind, p, m), tf, tb)[:2], unit)
                    assert ref.render(res, unit) == want, (kind, p, m, tf, tb, unit)


def test_reference_deadlocks_match_independent():
    rng = random.Random(7)
    seen = {True: 0, False: 0}
    for _ in range(300):
        p, m = rng.randint(1, 5), rng.randint(1, 6)
        sched = []
        for _ in range(p):
            row, f, b = [], 0, 0
            while b < m:
                if f < m and (f == b or rng.random() < 0.5):
                    row, f = row + [("F", f)], f + 1
                else:
                    row, b = row + [("B", b)], b + 1
            sched.append(row)
        try:
            rows, total, bubble, peaks = independent_simulate(sched, 1.0, 2.0)
        except Deadlock:
            seen[True] += 1
            with pytest.raises(ValueError, match="deadlock"):
                ref.simulate(sched)
            continue
        seen[False] += 1
        got = ref.simulate(sched)
        assert same_timeline(got.timeline, rows) and math.isclose(got.total, total)
        assert math.isclose(got.bubble, bubble, abs_tol=1e-12) and got.peak_activations == peaks
    assert seen[True] > 20 and seen[False] > 20, seen


@pytest.mark.parametrize("sched, kwargs", [
    ([], {}), ([[]], {}), ([[("F", 0), ("X", 0)]], {}), ([[("F", 0), ("F", 0), ("B", 0)]], {}),
    ([[("F", 0), ("B", 0)], [("F", 1), ("B", 1)]], {}), ([[("F", 0), ("B", 0)]], {"tf": 0}),
    ([[("F", 0), ("B", 0)]], {"tb": -1.0}), ([[("F", True), ("B", True)]], {}),
])
def test_reference_rejects_malformed_input(sched, kwargs):
    with pytest.raises(ValueError, match=r"\S"):
        ref.simulate(sched, **kwargs)


def test_neither_starter_nor_reference_has_schedule_and_the_test_orders_are_right():
    """Neither the starter nor the reference holds a schedule() (that is pp-schedule's answer, and the
    tests never call one); the orders the public tests write out (SCHEDULES) and the ones the hidden
    tests generate equal pp-schedule's reference."""
    starter = load("pp-simulate", "starter/pp_sim.py", "_pp_simulate_starter")
    assert not hasattr(starter, "schedule") and not hasattr(ref, "schedule")
    with pytest.raises(NotImplementedError):
        starter.simulate(schedule("1f1b", 2, 2))
    helpers = load("pp-simulate", "tests/public/simulate_helpers.py", "_pp_simulate_public_helpers")
    oracle = load("pp-simulate", "tests/secret/simulate_oracle.py", "_pp_simulate_secret_oracle")
    for (kind, p, m), rows in helpers.SCHEDULES.items():
        assert [helpers.ops(row) for row in rows] == schedule(kind, p, m), (kind, p, m)
    for kind in ("gpipe", "1f1b"):
        for p in range(1, 9):
            for m in range(1, 33):
                assert oracle.orders(kind, p, m) == schedule(kind, p, m), (kind, p, m)
