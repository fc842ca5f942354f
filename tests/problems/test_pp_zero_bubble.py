"""Project tests for pp-zero-bubble: the reference agrees with independent implementations.

- The ZB-H1 order is rebuilt from closed-form *positions* (where each op lands in a stage's list)
  instead of the reference's append loop.
- Times come from a memoised longest-path recursion over the dependency graph instead of the
  reference's sweep over stages.
- Gradients come from whole-model backprop with every weight gradient taken on the spot.
"""

from __future__ import annotations

import functools
import random
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.problems.loading import load, support

PROBLEM = Path(__file__).resolve().parents[2] / "problems" / "pp-zero-bubble"




ref = load("pp-zero-bubble", "reference/zero_bubble.py")
mlp = support("pp-zero-bubble", "zb_mlp")

UNIT = (1.0, 1.0, 1.0)
TIMES = [UNIT, (1.0, 2.0, 1.0), (2.0, 1.0, 0.5), (2.0, 3.0, 1.5), (1.0, 1.0, 2.0), (3.0, 2.0, 2.5), (1.0, 3.0, 4.0)]


# --------------------------------------------------------------------------- independent order

def zb_h1_by_position(p: int, m: int) -> list[list[tuple[str, int]]]:
    """Place every op of stage s at its closed-form index in the stage's list."""
    out = []
    for s in range(p):
        w = min(p - s, m)
        slots: list[tuple[str, int] | None] = [None] * (3 * m)

        def put(k: int, op: tuple[str, int]) -> None:
            assert slots[k] is None, f"p={p} m={m} s={s}: slot {k} taken twice"
            slots[k] = op

        def round_start(k: int) -> int:  # rounds before k hold k B's, max(0, k - s) W's, min(k, m - w) F's
            return w + k + max(0, k - s) + min(k, m - w)

        for i in range(w):
            put(i, ("F", i))
        for k in range(m):
            r = round_start(k)
            put(r, ("B", k))
            if k >= s:
                put(r + 1, ("W", k - s))
            if k + w < m:
                put(r + 1 + (k >= s), ("F", k + w))
        first_tail = max(0, m - s)
        for j in range(first_tail, m):
            put(round_start(m) + j - first_tail, ("W", j))
        assert None not in slots, f"p={p} m={m} s={s}: unfilled slots"
        out.append(slots)
    return out


# --------------------------------------------------------------------------- independent timing

def longest_path(sched, tf: float, tb: float, tw: float):
    """End time of every op by memoised recursion; None if the dependency graph has a cycle."""
    p = len(sched)
    dur = {"F": tf, "B": tb, "W": tw}
    index = {(op, s, i): k for s, ops in enumerate(sched) for k, (op, i) in enumerate(ops)}
    on_stack: set[tuple[int, int]] = set()

    class Cycle(Exception):
        pass

    @functools.cache
    def finish(s: int, k: int) -> float:
        if (s, k) in on_stack:
            raise Cycle
        on_stack.add((s, k))
        op, i = sched[s][k]
        ready = finish(s, k - 1) if k else 0.0
        dep = {"F": ("F", s - 1, i) if s else None,
               "B": ("B", s + 1, i) if s < p - 1 else ("F", s, i),
               "W": ("B", s, i)}[op]
        if dep is not None:
            if dep not in index:
                raise Cycle
            ready = max(ready, finish(dep[1], index[dep]))
        on_stack.discard((s, k))
        return ready + dur[op]

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 20000))
    try:
        ends = [[finish(s, k) for k in range(len(ops))] for s, ops in enumerate(sched)]
    except Cycle:
        return None
    finally:
        sys.setrecursionlimit(limit)
    timeline = [[(op, i, e - dur[op], e) for (op, i), e in zip(ops, row)] for ops, row in zip(sched, ends)]
    return timeline, max((e for row in ends for e in row), default=0.0)


def one_f_one_b(p: int, m: int, w_after_b: bool):
    """1F1B by in-flight limit: forward while fewer than p - s micro-batches await their B."""
    out = []
    for s in range(p):
        f = b = 0
        ops = []
        while b < m:
            if f < m and f - b < p - s:
                ops.append(("F", f))
                f += 1
            else:
                ops.append(("B", b))
                if w_after_b:
                    ops.append(("W", b))
                b += 1
        out.append(ops)
    return out


def random_valid(p: int, m: int, seed: int):
    rnd = random.Random(seed)
    done: set = set()
    todo = sorted((op, s, i) for s in range(p) for i in range(m) for op in "FBW")
    sched = [[] for _ in range(p)]
    deps = lambda op, s, i: {"F": [("F", s - 1, i)] if s else [],
                             "B": [("F", s, i)] + ([("B", s + 1, i)] if s < p - 1 else []),
                             "W": [("B", s, i)]}[op]
    while todo:
        ready = [x for x in todo if all(d in done for d in deps(*x))]
        x = rnd.choice(ready)
        todo.remove(x)
        done.add(x)
        sched[x[1]].append((x[0], x[2]))
    return sched


def valid(sched, p: int, m: int) -> bool:
    if len(sched) != p:
        return False
    for ops in sched:
        if sorted(ops) != sorted((op, i) for op in "FBW" for i in range(m)):
            return False
        pos = {x: k for k, x in enumerate(ops)}
        if any(not pos[("F", i)] < pos[("B", i)] < pos[("W", i)] for i in range(m)):
            return False
    return longest_path(sched, *UNIT) is not None


def same_sim(sched, times) -> dict:
    """Check the reference simulate against longest_path; return the reference's result."""
    got = ref.simulate(sched, *times)
    want_tl, want_total = longest_path(sched, *times)
    assert got["total"] == pytest.approx(want_total, abs=1e-9)
    for row, want_row in zip(got["timeline"], want_tl):
        assert [(op, i) for op, i, _, _ in row] == [(op, i) for op, i, _, _ in want_row]
        assert [a for *_, a, _ in row] == pytest.approx([a for *_, a, _ in want_row], abs=1e-9)
        assert [b for *_, b in row] == pytest.approx([b for *_, b in want_row], abs=1e-9)
    busy = [sum(e - a for *_, a, e in row) for row in want_tl]
    assert got["busy"] == pytest.approx(busy, abs=1e-9)
    assert got["bubble"] == pytest.approx([want_total - x for x in busy], abs=1e-9)
    p = len(sched)
    assert got["bubble_fraction"] == pytest.approx((p * want_total - sum(busy)) / (p * want_total), abs=1e-12)
    return got


# --------------------------------------------------------------------------- tests

@pytest.mark.parametrize("p", range(1, 9))
def test_order_and_validity_grid(p):
    for m in range(1, 33):
        sched = ref.zb_h1_schedule(p, m)
        assert sched == zb_h1_by_position(p, m), f"p={p} m={m}"
        assert valid(sched, p, m), f"p={p} m={m}"


@pytest.mark.parametrize("p", range(1, 9))
def test_bubble_unit_times_grid(p):
    for m in range(1, 33):
        got = same_sim(ref.zb_h1_schedule(p, m), UNIT)
        if m >= p:
            # 3m + p - 1 is a lower bound (the last stage cannot start before p - 1), so ZB-H1 is optimal
            assert got["total"] == 3 * m + p - 1
            assert got["bubble"] == [float(p - 1)] * p
            assert ref.simulate(one_f_one_b(p, m, True), *UNIT)["bubble"] == [2.0 * (p - 1)] * p
            assert ref.simulate(one_f_one_b(p, m, False), 1.0, 2.0, 1.0)["bubble"] == [3.0 * (p - 1)] * p


@pytest.mark.parametrize("times", TIMES)
def test_bubble_formulas_other_times(times):
    tf, tb, tw = times
    for p in range(1, 9):
        for m in sorted({p, p + 1, 2 * p + 1} | ({32} if p in (2, 8) else set())):
            total = same_sim(ref.zb_h1_schedule(p, m), times)["total"]
            want = (p - 1) * (tf + tb - min(tf, tb, tw))
            assert total - m * (tf + tb + tw) == pytest.approx(want, abs=1e-9), (p, m, times)
            if tw <= min(tf, tb):
                assert want == pytest.approx((p - 1) * (tf + tb - tw))  # the paper's formula
            split = one_f_one_b(p, m, True)
            assert same_sim(split, times)["total"] - m * (tf + tb + tw) == pytest.approx((p - 1) * (tf + tb), abs=1e-9)
            fused = one_f_one_b(p, m, False)
            assert longest_path(fused, tf, tb + tw, 0.0)[1] - m * (tf + tb + tw) == pytest.approx(
                (p - 1) * (tf + tb + tw), abs=1e-9)


def test_simulate_random_schedules_and_deadlocks():
    for seed in range(40):
        p, m = 1 + seed % 8, 1 + (seed * 7) % 6
        sched = random_valid(p, m, seed)
        same_sim(sched, TIMES[seed % len(TIMES)])
    cyclic = [[("F", 0), ("B", 0), ("F", 1), ("B", 1), ("W", 0), ("W", 1)],
              [("F", 1), ("F", 0), ("B", 0), ("B", 1), ("W", 0), ("W", 1)]]
    assert longest_path(cyclic, *UNIT) is None
    with pytest.raises(ValueError):
        ref.simulate(cyclic, *UNIT)
    with pytest.raises(ValueError):
        ref.simulate([[("F", 0), ("W", 0), ("B", 0)]], *UNIT)


@pytest.mark.parametrize("p", range(1, 9))
def test_memory_peaks(p):
    for m in range(1, 33):
        for s, ops in enumerate(ref.zb_h1_schedule(p, m)):
            f = b = w = peak_b = peak_w = 0
            for op, _ in ops:
                f, b, w = f + (op == "F"), b + (op == "B"), w + (op == "W")
                peak_b, peak_w = max(peak_b, f - b), max(peak_w, f - w)
            assert (peak_b, peak_w) == (min(p - s, m), min(p, m)), (p, m, s)


def _backprop(stages, xs, targets):
    flat = [layer for stage in stages for layer in stage]
    owner = [(s, k) for s, stage in enumerate(stages) for k in range(len(stage))]
    grads = [[[np.zeros_like(w), np.zeros_like(b)] for w, b in stage] for stage in stages]
    loss = 0.0
    for x, t in zip(xs, targets):
        acts = [x]
        for w, b in flat:
            acts.append(np.tanh(acts[-1] @ w + b))
        loss += 0.5 * float(np.sum((acts[-1] - t) ** 2))
        g = acts[-1] - t
        for j in range(len(flat) - 1, -1, -1):
            gz = g * (1.0 - acts[j + 1] ** 2)
            s, k = owner[j]
            grads[s][k][0] += acts[j].T @ gz
            grads[s][k][1] += gz.sum(axis=0)
            g = gz @ flat[j][0].T
    return grads, loss


@pytest.mark.parametrize("p,m", [(1, 3), (3, 5), (4, 8)])
def test_run_schedule_deferred_w_matches_backprop(p, m):
    rng = np.random.default_rng(100 + p)
    stages = mlp.init_stages(rng, p, 4, 2)
    xs = [rng.normal(size=(3, 4)) for _ in range(m)]
    targets = [rng.normal(size=(3, 4)) for _ in range(m)]
    want, want_loss = _backprop(stages, xs, targets)
    for sched in (ref.zb_h1_schedule(p, m), one_f_one_b(p, m, True), random_valid(p, m, p * m)):
        grads, loss = ref.run_schedule(stages, xs, targets, sched)
        assert loss == pytest.approx(want_loss, abs=1e-12)
        for s in range(p):
            for k in range(2):
                assert np.max(np.abs(grads[s][k][0] - want[s][k][0])) <= 1e-12
                assert np.max(np.abs(grads[s][k][1] - want[s][k][1])) <= 1e-12
