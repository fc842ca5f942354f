"""Secret tests for interleaved 1F1B: a grid of sizes against an independent oracle."""

from __future__ import annotations

import math

import interleaved
import interleaved_oracle as oracle
import pytest
from interleaved_check import (
    assert_schedule,
    expect_value_error,
    fmt,
    normalize,
    order_report,
    runnable_part,
    schedule_report,
    timeline_artifact,
    warmup_formula,
    warmup_hint,
)

GRID = [(p, v) for p in (1, 2, 3, 4, 5, 8) for v in (1, 2, 3, 4)]


def _sizes(p: int, v: int) -> list[int]:
    ms = [p * k for k in (1, 2, 3) if p * k <= 32]
    if v == 1:
        ms = sorted(set(ms) | {1, 2, 3, 7})
    return ms


def _exact(v: int) -> bool:
    """With tf = 1, tb = 2 every duration is an exact binary fraction when v is 1, 2 or 4."""
    return v in (1, 2, 4)


@pytest.mark.title(zh="调度：多组规模")
@pytest.mark.parametrize("p,v", [(p, v) for p, v in GRID if v >= 2])
def test_grid_schedule(p, v, record_property):
    _check_grid_schedule(p, v, record_property)


@pytest.mark.title(zh="v = 1：普通 1F1B 的预热数量和顺序，m = 1、2、3、7 以及 p 的倍数")
@pytest.mark.parametrize("p", sorted({p for p, _ in GRID}))
def test_grid_v1(p, record_property):
    """With v = 1: plain 1F1B's warm-up counts and orders, for m = 1, 2, 3, 7 and multiples of p."""
    if p > 1:
        _check_grid_warmups(p, 1)
    _check_grid_schedule(p, 1, record_property)


def _check_grid_schedule(p: int, v: int, record_property) -> None:
    failures = []
    for m in _sizes(p, v):
        got = normalize(interleaved.interleaved_schedule(p, m, v), p)
        report = schedule_report(p, m, v, oracle.schedule(p, m, v), got, max_ranks=3)
        if report:
            failures.append((m, got, report))
    if failures:
        m, got, report = failures[0]
        runnable, stuck = runnable_part(got, p, v)  # a deadlocking schedule: up to where it gets stuck
        try:
            rows, _, _ = oracle.simulate(runnable, p, v)
            record_property("timeline", timeline_artifact(
                rows, f"your schedule, p={p} m={m} v={v}" + (" (up to where it gets stuck)" if stuck else ""), stuck))
        except (ValueError, KeyError, ZeroDivisionError):
            pass
        pytest.fail(report + f"\n(wrong for m in {[f[0] for f in failures]} with p={p}, v={v})")


@pytest.mark.title(zh="每个 rank 的前向和反向按运行顺序都符合题面的公式")
@pytest.mark.parametrize("p,v", [(p, v) for p, v in GRID if v >= 2])
def test_grid_chunk_order(p, v):
    """Every rank's forwards and backwards, each in the order it runs them, follow the statement's formulas."""
    for m in _sizes(p, v):
        got = normalize(interleaved.interleaved_schedule(p, m, v), p)
        for r in range(p):
            for kind in "FB":
                report = order_report(kind, p, m, v, r, got[r])
                assert not report, report


@pytest.mark.title(zh="预热数量：多组规模")
@pytest.mark.parametrize("p,v", [(p, v) for p, v in GRID if v >= 2])
def test_grid_num_warmup(p, v):
    _check_grid_warmups(p, v)


def _check_grid_warmups(p: int, v: int) -> None:
    for m in _sizes(p, v):
        got = [int(interleaved.num_warmup(p, m, v, r)) for r in range(p)]
        want = [warmup_formula(p, m, v, r) for r in range(p)]
        hints = [warmup_hint(p, m, v, r, g) for r, (g, w) in enumerate(zip(got, want)) if g != w]
        hints = [h for h in hints if h]
        assert got == want, (f"num_warmup(p={p}, m={m}, v={v}, rank) for ranks 0..{p - 1}: expected {want}, "
                             f"got {got}" + (f"; likely mistake: {hints[0]}" if hints else ""))


@pytest.mark.title(zh="大规模调度与预期一致，气泡达到理想值")
@pytest.mark.parametrize("p,m,v", [(8, 32, 4), (8, 16, 3), (6, 12, 2), (5, 20, 4), (7, 7, 3)])
def test_large_schedule_matches_and_has_the_ideal_bubble(p, m, v, record_property):
    got = normalize(interleaved.interleaved_schedule(p, m, v), p)
    assert_schedule(p, m, v, oracle.schedule(p, m, v), got)
    rows, total, bubble = oracle.simulate(got, p, v)
    record_property("timeline", timeline_artifact(rows, f"interleaved 1F1B, p={p} m={m} v={v}"))
    assert math.isclose(total, (m + (p - 1) / v) * 3.0, rel_tol=1e-9)


SIM_CASES = [(2, 4, 2, 1.0, 2.0), (3, 6, 3, 1.0, 2.0), (4, 8, 4, 1.0, 2.0), (4, 4, 2, 1.5, 2.5),
             (1, 3, 2, 1.0, 2.0), (5, 5, 1, 1.0, 2.0), (3, 9, 3, 0.7, 1.3)]


def _compare_rows(got_rows, want_rows, exact: bool, what: str) -> None:
    assert len(got_rows) == len(want_rows), f"{what}: expected {len(want_rows)} rows (one per rank), got {len(got_rows)}"
    for r, (got, want) in enumerate(zip(got_rows, want_rows)):
        assert len(got) == len(want), f"{what}, rank {r}: expected {len(want)} blocks, got {len(got)}"
        for g, w in zip(got, want):
            c, o, mb, s, e = int(g[0]), str(g[1]), int(g[2]), float(g[3]), float(g[4])
            same = (s == w[3] and e == w[4]) if exact else (
                math.isclose(s, w[3], rel_tol=1e-9, abs_tol=1e-9) and math.isclose(e, w[4], rel_tol=1e-9, abs_tol=1e-9))
            assert (c, o, mb) == w[:3] and same, (
                f"{what}, rank {r}: expected {w[1]}{w[2]}c{w[0]} from {w[3]:g} to {w[4]:g}, "
                f"got {o}{mb}c{c} from {s:g} to {e:g}")


@pytest.mark.title(zh="模拟 Megatron 的顺序")
@pytest.mark.parametrize("p,m,v,tf,tb", SIM_CASES)
def test_simulate_megatron_order(p, m, v, tf, tb, record_property):
    sched = oracle.schedule(p, m, v)
    want_rows, want_total, want_bubble = oracle.simulate(sched, p, v, tf, tb)
    rows, total, bubble = _simulate(interleaved, sched, p, v, f"Megatron's schedule for p={p} m={m} v={v}", tf=tf, tb=tb)
    record_property("timeline", timeline_artifact(
        [[(int(c), str(o), int(mb), float(s), float(e)) for c, o, mb, s, e in row] for row in rows],
        f"simulate_interleaved, p={p} m={m} v={v} tf={tf} tb={tb}"))
    exact = _exact(v) and (tf, tb) == (1.0, 2.0)
    _compare_rows(rows, want_rows, exact, f"p={p} m={m} v={v} tf={tf} tb={tb}")
    assert math.isclose(float(total), want_total, rel_tol=1e-9), f"total: expected {want_total:g}, got {float(total)}"
    assert math.isclose(float(bubble), want_bubble, rel_tol=1e-9, abs_tol=1e-12), (
        f"bubble: expected {want_bubble:.6f}, got {float(bubble):.6f}")
    assert math.isclose(want_bubble, (p - 1) / (v * m + p - 1), rel_tol=1e-9, abs_tol=1e-12)


@pytest.mark.title(zh="模拟其他可行的顺序")
@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_simulate_other_feasible_orders(seed):
    p, m, v = [(2, 3, 2), (3, 2, 2), (2, 2, 4), (4, 3, 1)][seed]
    sched = oracle.random_feasible_schedule(p, m, v, seed)
    want_rows, want_total, want_bubble = oracle.simulate(sched, p, v)
    rows, total, bubble = _simulate(interleaved, sched, p, v, f"a feasible non-Megatron schedule (seed {seed})")
    _compare_rows(rows, want_rows, True, f"schedule {[fmt(r) for r in sched]}")
    assert float(total) == want_total, f"total: expected {want_total}, got {float(total)}"
    assert math.isclose(float(bubble), want_bubble, rel_tol=1e-9, abs_tol=1e-12)


@pytest.mark.title(zh="模拟检测到死锁")
@pytest.mark.parametrize("p,m,v", [(4, 8, 2), (3, 6, 3), (2, 4, 2)])
def test_simulate_detects_deadlock(p, m, v):
    # Megatron's order without the (v-1)*p warm-up: the last rank wants a backward it cannot have yet.
    sched = oracle.schedule(p, m, v)
    bad = []
    for r in range(p):
        w = min(2 * (p - 1 - r), m * v)
        fwd = [op for op in sched[r] if op[1] == "F"]
        bwd = [op for op in sched[r] if op[1] == "B"]
        ops = fwd[:w]
        for f, b in zip(fwd[w:], bwd):
            ops += [f, b]
        bad.append(ops + bwd[len(fwd) - w:])
    with pytest.raises(ValueError):
        interleaved.simulate_interleaved(bad, p, v)


@pytest.mark.title(zh="v = 3 时的气泡")
@pytest.mark.parametrize("p,m,v", [(2, 4, 3), (3, 6, 3), (4, 4, 3)])
def test_bubble_with_v3(p, m, v):
    sched = normalize(interleaved.interleaved_schedule(p, m, v), p)
    _, total, bubble = _simulate(interleaved, sched, p, v, f"your interleaved_schedule({p}, {m}, {v})")
    want = (m + (p - 1) / v) * 3.0
    assert math.isclose(float(total), want, rel_tol=1e-9), f"p={p} m={m} v={v}: expected total {want:g}, got {float(total)}"
    assert math.isclose(float(bubble), (p - 1) / (v * m + p - 1), rel_tol=1e-9, abs_tol=1e-12), (
        f"p={p} m={m} v={v}: expected bubble {(p - 1) / (v * m + p - 1):.6f}, got {float(bubble):.6f}")


@pytest.mark.title(zh="只有一个 rank")
def test_single_rank():
    sched = normalize(interleaved.interleaved_schedule(1, 3, 2), 1)
    assert sched == oracle.schedule(1, 3, 2), f"p=1 m=3 v=2: expected {fmt(oracle.schedule(1, 3, 2)[0])}, got {fmt(sched[0])}"
    _, total, bubble = _simulate(interleaved, sched, 1, 2, "your interleaved_schedule(1, 3, 2)")
    assert float(total) == 9.0 and math.isclose(float(bubble), 0.0, abs_tol=1e-12), (
        f"one rank never idles: expected total 9.0 and bubble 0, got {float(total)} and {float(bubble)}")


MORE_INVALID_SIZES = [(2, 5, 4), (8, 12, 2), (5, 3, 2), (8, 4, 4), (3, 0, 1), (0, 0, 1), (1, 1, 0), (-2, 3, 1)]


@pytest.mark.title(zh="更多不合法的规模")
@pytest.mark.parametrize("p,m,v", MORE_INVALID_SIZES, ids=[f"p={p}, m={m}, v={v}" for p, m, v in MORE_INVALID_SIZES])
def test_more_invalid_sizes(p, m, v):
    expect_value_error(interleaved, "interleaved_schedule", p, m, v)
    expect_value_error(interleaved, "num_warmup", p, m, v, 0)


MORE_BAD_RANKS = [(4, 7, 1, 4), (4, 7, 1, -1), (3, 6, 3, 3), (1, 1, 1, 1)]


@pytest.mark.title(zh="更多不合法的 rank")
@pytest.mark.parametrize("p,m,v,rank", MORE_BAD_RANKS,
                         ids=[f"p={p}, m={m}, v={v}, rank={rank}" for p, m, v, rank in MORE_BAD_RANKS])
def test_more_bad_ranks(p, m, v, rank):
    expect_value_error(interleaved, "num_warmup", p, m, v, rank)


@pytest.mark.title(zh="合法的边界规模")
@pytest.mark.parametrize("p,m,v", [(1, 5, 3), (2, 2, 4)])
def test_valid_edge_sizes(p, m, v):
    got = normalize(interleaved.interleaved_schedule(p, m, v), p)
    assert_schedule(p, m, v, oracle.schedule(p, m, v), got)


@pytest.mark.title(zh="v = 1 时，m 小于 p 和 m = 1 也是普通 1F1B")
@pytest.mark.parametrize("p,m,v", [(4, 3, 1), (8, 1, 1)])
def test_v1_edge_sizes(p, m, v):
    """With v = 1, m below p and m = 1 are plain 1F1B too."""
    got = normalize(interleaved.interleaved_schedule(p, m, v), p)
    assert_schedule(p, m, v, oracle.schedule(p, m, v), got)


from interleaved_check import simulate as _simulate  # noqa: E402  (used by the tests above, at run time)
