"""Public tests for interleaved 1F1B: per-rank order, warm-up counts, validation and the simulation."""

from __future__ import annotations

import math
from collections import Counter

import interleaved
import pytest
from interleaved_check import (
    NOTATION,
    assert_schedule,
    attach,
    expect_value_error,
    fmt,
    leading_forwards,
    normalize,
    order_report,
    parse,
    simulate,
    stuck_ops,
    timeline_artifact,
    warmup_hint,
)

from judge.lang import say

# Expected per-rank lists, written F<mb>c<chunk> (forward of micro-batch mb on local chunk c).
EXPECTED = {
    # the worked example of the statement
    (2, 4, 2): [
        "F0c0 F1c0 F0c1 F1c1 F2c0 B0c1 F3c0 B1c1 F2c1 B0c0 F3c1 B1c0 B2c1 B3c1 B2c0 B3c0",
        "F0c0 F1c0 F0c1 B0c1 F1c1 B1c1 F2c0 B0c0 F3c0 B1c0 F2c1 B2c1 F3c1 B3c1 B2c0 B3c0",
    ],
    # m == p: rank 0's warm-up 2*2 + 3 = 7 is capped at m*v = 6
    (3, 3, 2): [
        "F0c0 F1c0 F2c0 F0c1 F1c1 F2c1 B0c1 B1c1 B2c1 B0c0 B1c0 B2c0",
        "F0c0 F1c0 F2c0 F0c1 F1c1 F2c1 B0c1 B1c1 B2c1 B0c0 B1c0 B2c0",
        "F0c0 F1c0 F2c0 F0c1 B0c1 F1c1 B1c1 F2c1 B2c1 B0c0 B1c0 B2c0",
    ],
    # three chunks, three groups of p = 2 micro-batches
    (2, 6, 3): [
        "F0c0 F1c0 F0c1 F1c1 F0c2 F1c2 F2c0 B0c2 F3c0 B1c2 F2c1 B0c1 F3c1 B1c1 F2c2 B0c0 F3c2 B1c0 "
        "F4c0 B2c2 F5c0 B3c2 F4c1 B2c1 F5c1 B3c1 F4c2 B2c0 F5c2 B3c0 B4c2 B5c2 B4c1 B5c1 B4c0 B5c0",
        "F0c0 F1c0 F0c1 F1c1 F0c2 B0c2 F1c2 B1c2 F2c0 B0c1 F3c0 B1c1 F2c1 B0c0 F3c1 B1c0 F2c2 B2c2 "
        "F3c2 B3c2 F4c0 B2c1 F5c0 B3c1 F4c1 B2c0 F5c1 B3c0 F4c2 B4c2 F5c2 B5c2 B4c1 B5c1 B4c0 B5c0",
    ],
    # one rank holding all three chunks
    (1, 2, 3): ["F0c0 F0c1 F0c2 B0c2 F1c0 B0c1 F1c1 B0c0 F1c2 B1c2 B1c1 B1c0"],
    # v == 1 is plain 1F1B (m need not be a multiple of p)
    (3, 5, 1): [
        "F0c0 F1c0 F2c0 B0c0 F3c0 B1c0 F4c0 B2c0 B3c0 B4c0",
        "F0c0 F1c0 B0c0 F2c0 B1c0 F3c0 B2c0 F4c0 B3c0 B4c0",
        "F0c0 B0c0 F1c0 B1c0 F2c0 B2c0 F3c0 B3c0 F4c0 B4c0",
    ],
    # v == 1 with fewer micro-batches than the warm-up wants: min(p - r - 1, m)
    (4, 2, 1): ["F0c0 F1c0 B0c0 B1c0", "F0c0 F1c0 B0c0 B1c0", "F0c0 F1c0 B0c0 B1c0", "F0c0 B0c0 F1c0 B1c0"],
}


def _expected(p: int, m: int, v: int) -> list[list[tuple[int, str, int]]]:
    return [parse(text) for text in EXPECTED[(p, m, v)]]


def _check_exact(p: int, m: int, v: int, record_property) -> None:
    got = normalize(interleaved.interleaved_schedule(p, m, v), p)
    attach(record_property, interleaved, got, p, v, f"interleaved 1F1B, p={p} m={m} v={v}", _expected(p, m, v))
    assert_schedule(p, m, v, _expected(p, m, v), got)


@pytest.mark.title(zh="调度与预期完全一致")
@pytest.mark.parametrize("p,m,v", [key for key in EXPECTED if key[2] > 1])
def test_schedule_exact(p, m, v, record_property):
    _check_exact(p, m, v, record_property)


@pytest.mark.title(zh="v = 1 时调度就是普通 1F1B：预热 min(p - r - 1, m) 次前向")
@pytest.mark.parametrize("p,m,v", [key for key in EXPECTED if key[2] == 1])
def test_v1_schedule_is_plain_1f1b(p, m, v, record_property):
    """With v = 1 the schedule is plain 1F1B: min(p - r - 1, m) warm-up forwards."""
    _check_exact(p, m, v, record_property)


WARMUPS = {
    (2, 4, 2): [4, 2],
    (4, 8, 2): [10, 8, 6, 4],
    (3, 3, 2): [6, 5, 3],        # rank 0: 2*2 + 1*3 = 7, capped at m*v = 6
    (4, 4, 3): [12, 12, 10, 8],  # ranks 0 and 1: 14 and 12, capped at 12
    (1, 3, 4): [3],
    (3, 6, 1): [2, 1, 0],        # plain 1F1B
    (4, 2, 1): [2, 2, 1, 0],     # plain 1F1B, capped at m
}


def _check_warmups(p: int, m: int, v: int) -> None:
    got = [int(interleaved.num_warmup(p, m, v, r)) for r in range(p)]
    want = WARMUPS[(p, m, v)]
    hints = [f"rank {r}: {warmup_hint(p, m, v, r, g)}" for r, (g, w) in enumerate(zip(got, want))
             if g != w and warmup_hint(p, m, v, r, g)]
    assert got == want, (f"num_warmup(p={p}, m={m}, v={v}, rank) for ranks 0..{p - 1}: expected {want}, got {got}"
                         + ("\n" + "\n".join(hints) if hints else ""))


@pytest.mark.title(zh="预热数量 num_warmup")
@pytest.mark.parametrize("p,m,v", [key for key in WARMUPS if key[2] > 1])
def test_num_warmup(p, m, v):
    _check_warmups(p, m, v)


@pytest.mark.title(zh="v = 1 时 num_warmup 是普通 1F1B 的 min(p - r - 1, m)，列表也以这么多次前向开头")
@pytest.mark.parametrize("p,m,v", [key for key in WARMUPS if key[2] == 1])
def test_v1_num_warmup(p, m, v):
    """With v = 1, num_warmup is plain 1F1B's min(p - r - 1, m), and the list starts with that many forwards."""
    _check_warmups(p, m, v)
    _check_leading_forwards(p, m, v)


def _check_leading_forwards(p: int, m: int, v: int) -> None:
    sched = normalize(interleaved.interleaved_schedule(p, m, v), p)
    for r in range(p):
        w = WARMUPS[(p, m, v)][r]
        want = w + 1 if w < m * v else m * v
        got = leading_forwards(sched[r])
        assert got == want, (
            f"p={p} m={m} v={v} rank {r}: the list should start with {w} warm-up forwards plus the first "
            f"steady-state forward, i.e. {want} forwards before the first backward; it has {got}: {fmt(sched[r][:want + 2])} ...")


@pytest.mark.title(zh="调度以预热开头")
@pytest.mark.parametrize("p,m,v", [(2, 4, 2), (4, 8, 2), (3, 3, 2), (4, 4, 3)])
def test_schedule_starts_with_the_warmup(p, m, v):
    _check_leading_forwards(p, m, v)


ORDER_CASES = [(2, 4, 2), (4, 8, 2), (3, 6, 3), (2, 6, 3), (4, 8, 4), (1, 2, 3)]


@pytest.mark.title(zh="每个 rank 的前向按运行顺序，以 p 个微批次为一组依次经过各模型块")
@pytest.mark.parametrize("p,m,v", ORDER_CASES)
def test_forwards_visit_the_chunks_in_groups_of_p(p, m, v):
    """Each rank's forwards, in the order it runs them, go through the chunks in groups of p micro-batches.

    The k-th forward runs chunk (k mod p*v) // p on micro-batch (k // (p*v)) * p + k mod p, whatever the
    warm-up count (the backwards in between do not matter here)."""
    sched = normalize(interleaved.interleaved_schedule(p, m, v), p)
    reports = [order_report("F", p, m, v, r, sched[r]) for r in range(p)]
    wrong = [text for text in reports if text]
    assert not wrong, wrong[0] + (f"\n(and {len(wrong) - 1} more rank(s) like it)" if len(wrong) > 1 else "")


@pytest.mark.title(zh="每个 rank 的反向按运行顺序，从最后一个模型块到第一个")
@pytest.mark.parametrize("p,m,v", ORDER_CASES)
def test_backwards_visit_the_chunks_in_reverse(p, m, v):
    """Each rank's backwards, in the order it runs them, go through the chunks last to first.

    The k-th backward runs chunk v - 1 - (k mod p*v) // p on micro-batch (k // (p*v)) * p + k mod p: the
    gradient enters at the last virtual stage."""
    sched = normalize(interleaved.interleaved_schedule(p, m, v), p)
    reports = [order_report("B", p, m, v, r, sched[r]) for r in range(p)]
    wrong = [text for text in reports if text]
    assert not wrong, wrong[0] + (f"\n(and {len(wrong) - 1} more rank(s) like it)" if len(wrong) > 1 else "")


@pytest.mark.title(zh="每个操作恰好一次")
@pytest.mark.parametrize("p,m,v", [(2, 4, 2), (4, 8, 2), (4, 12, 4), (3, 6, 3), (1, 4, 2), (5, 7, 1)])
def test_every_op_exactly_once(p, m, v):
    sched = normalize(interleaved.interleaved_schedule(p, m, v), p)
    want = Counter((c, kind, mb) for c in range(v) for kind in "FB" for mb in range(m))
    for r in range(p):
        got = Counter(sched[r])
        missing = sorted(want - got)
        extra = sorted(got - want)
        assert not missing and not extra, (
            f"p={p} m={m} v={v} rank {r}: every (chunk, op, mb) with chunk < {v}, mb < {m} must appear exactly once "
            f"{NOTATION}; missing: {fmt(missing[:8]) or '-'}; extra or repeated: {fmt(extra[:8]) or '-'}")


INVALID_SIZES = [(2, 3, 2), (4, 6, 2), (3, 4, 3), (3, 2, 2), (4, 1, 3), (0, 4, 2), (2, 0, 2),
    (2, 4, 0), (-1, 4, 2), (0, 4, 1), (3, 0, 1)]


@pytest.mark.title(zh="两个函数都检查规模，v = 1 时也检查（普通 1F1B 同样要求 p、m >= 1）")
@pytest.mark.parametrize("p,m,v", INVALID_SIZES, ids=[f"p={p}, m={m}, v={v}" for p, m, v in INVALID_SIZES])
def test_invalid_sizes_raise(p, m, v):
    """Both functions check the sizes, also for v = 1 (plain 1F1B still needs p, m >= 1).

    For v >= 2, m must be a multiple of p: 1 <= m < p is refused too (no group of p micro-batches is complete)."""
    expect_value_error(interleaved, "interleaved_schedule", p, m, v)
    expect_value_error(interleaved, "num_warmup", p, m, v, 0)


BAD_RANKS = [(2, 4, 2, -1), (2, 4, 2, 2), (3, 5, 1, 3), (3, 5, 1, -1), (1, 3, 4, 1)]


@pytest.mark.title(zh="rank 不在 0..p-1 内时抛出 ValueError，v = 1 时也是")
@pytest.mark.parametrize("p,m,v,rank", BAD_RANKS, ids=[f"p={p}, m={m}, v={v}, rank={rank}" for p, m, v, rank in BAD_RANKS])
def test_num_warmup_rejects_bad_rank(p, m, v, rank):
    """A rank outside 0..p-1 raises ValueError, also for v = 1."""
    expect_value_error(interleaved, "num_warmup", p, m, v, rank)


@pytest.mark.title(zh="v = 1 时任何 m 都可以（普通 1F1B 没有整除要求）")
def test_v1_accepts_any_m():
    """With v = 1 any m is fine (plain 1F1B has no divisibility rule)."""
    sched = normalize(interleaved.interleaved_schedule(2, 3, 1), 2)
    assert [fmt(row) for row in sched] == ["F0c0 F1c0 B0c0 F2c0 B1c0 B2c0", "F0c0 B0c0 F1c0 B1c0 F2c0 B2c0"], (
        f"interleaved_schedule(2, 3, 1) should be plain 1F1B, got {[fmt(row) for row in sched]}")


@pytest.mark.title(zh="调度不会死锁")
@pytest.mark.parametrize("p,m,v", [(2, 4, 2), (4, 8, 2), (3, 6, 3), (4, 8, 4)])
def test_schedule_has_no_deadlock(p, m, v, record_property):
    sched = normalize(interleaved.interleaved_schedule(p, m, v), p)
    stuck = stuck_ops(sched, p, v)
    assert not stuck, (
        f"p={p} m={m} v={v}: your schedule cannot run to the end; stuck: {'; '.join(stuck)} {NOTATION}. "
        f"Each of these waits for an op that (directly or through other ranks) waits for it. Typical causes: "
        f"too few warm-up forwards (the (v - 1) * p term) or backwards in forward chunk order")
    # the schedule is feasible: your simulation must run every op of it
    rows, total, _ = simulate(interleaved, sched, p, v, say(f"your interleaved_schedule({p}, {m}, {v})",
                                                         zh=f"你的 interleaved_schedule({p}, {m}, {v})"))
    record_property("timeline", timeline_artifact(_rows(rows), f"interleaved 1F1B, p={p} m={m} v={v}"))
    assert sum(len(row) for row in rows) == 2 * m * v * p, "every op of the schedule must appear in the timeline"


# simulate_interleaved on the worked example's (correct) schedule: (chunk, op, mb, start, end) per rank
WORKED_TIMES = [
    [(0.0, 0.5), (0.5, 1.0), (1.0, 1.5), (1.5, 2.0), (2.0, 2.5), (3.0, 4.0), (4.0, 4.5), (4.5, 5.5),
     (5.5, 6.0), (6.0, 7.0), (7.0, 7.5), (7.5, 8.5), (9.0, 10.0), (10.5, 11.5), (11.5, 12.5), (12.5, 13.5)],
    [(0.5, 1.0), (1.0, 1.5), (1.5, 2.0), (2.0, 3.0), (3.0, 3.5), (3.5, 4.5), (4.5, 5.0), (5.0, 6.0),
     (6.0, 6.5), (6.5, 7.5), (7.5, 8.0), (8.0, 9.0), (9.0, 9.5), (9.5, 10.5), (10.5, 11.5), (11.5, 12.5)],
]


def _worked() -> str:
    return say("the worked example's schedule (p=2, m=4, v=2)", zh="题面示例的调度（p=2, m=4, v=2）")


def _rows(rows) -> list[list[tuple[int, str, int, float, float]]]:
    return [[(int(c), str(o), int(mb), float(s), float(e)) for c, o, mb, s, e in row] for row in rows]


@pytest.mark.title(zh="模拟：示例")
def test_simulate_worked_example(record_property):
    sched = _expected(2, 4, 2)
    rows, total, bubble = simulate(interleaved, sched, 2, 2, _worked())
    rows = _rows(rows)
    record_property("timeline", timeline_artifact(rows, "your simulate_interleaved, p=2 m=4 v=2 (tf=1, tb=2)"))
    record_property("expected", timeline_artifact(  # the times WORKED_TIMES gives anyway
        [[(c, o, mb, s, e) for (c, o, mb), (s, e) in zip(sched[r], WORKED_TIMES[r])] for r in range(2)],
        "expected simulation, p=2 m=4 v=2 (tf=1, tb=2)"))
    durations = {o: sorted({e - s for row in rows for _, oo, _, s, e in row if oo == o}) for o in "FB"}
    assert durations == {"F": [0.5], "B": [1.0]}, say(
        f"op durations: expected every forward to take tf/v = 0.5 and every backward tb/v = 1.0 "
        f"(a chunk is 1/v of a stage's layers), got forwards {durations['F']} and backwards {durations['B']}",
        zh=f"操作时长：预期每个前向用时 tf/v = 0.5，每个反向用时 tb/v = 1.0（一个模型块是一个 stage 的层的 1/v），"
        f"实际前向 {durations['F']}，反向 {durations['B']}")
    for r in range(2):
        want = [(c, o, mb, s, e) for (c, o, mb), (s, e) in zip(sched[r], WORKED_TIMES[r])]
        for got_block, want_block in zip(rows[r], want):
            c, o, mb, s, e = got_block
            assert got_block == want_block, (
                f"rank {r}: expected {want_block[1]}{want_block[2]}c{want_block[0]} to run from {want_block[3]} "
                f"to {want_block[4]}, got {o}{mb}c{c} from {s} to {e}. The blocks must follow the rank's list; "
                f"an op starts when its rank is free and its dependency has finished")
        assert len(rows[r]) == len(want), f"rank {r}: expected {len(want)} blocks, got {len(rows[r])}"
    assert float(total) == 13.5, f"total: expected 13.5 = (m + (p-1)/v) * (tf + tb) = 4.5 * 3, got {float(total)}"
    assert math.isclose(float(bubble), 1 / 9, rel_tol=1e-9), (
        f"bubble: expected (p-1)/(v*m + p-1) = 1/9 = {1 / 9:.6f}, got {float(bubble)}; the bubble fraction is "
        f"1 - (sum of op durations) / (p * total) = 1 - 24/27")


@pytest.mark.title(zh="模拟使用 tf 和 tb")
def test_simulate_uses_tf_and_tb():
    sched = _expected(2, 4, 2)
    rows, total, bubble = simulate(interleaved, sched, 2, 2, _worked(), tf=2.0, tb=2.0)
    durations = sorted({float(e) - float(s) for row in rows for _, _, _, s, e in row})
    assert durations == [1.0], f"with tf = tb = 2 and v = 2 every op takes 1.0, got durations {durations}"
    assert float(total) == 18.0, f"total: expected (4 + 1/2) * (2 + 2) = 18.0, got {float(total)}"


ANY_ORDER_STARTS = [[0.0, 0.5, 1.0, 1.5, 3.5, 4.5, 5.5, 6.5], [0.5, 1.0, 1.5, 2.0, 2.5, 3.5, 4.5, 5.5]]


@pytest.mark.title(zh="模拟任意顺序")
def test_simulate_any_order(record_property):
    # Not Megatron's order: every forward first (chunk by chunk), then every backward.
    sched = [[(0, "F", 0), (0, "F", 1), (1, "F", 0), (1, "F", 1), (1, "B", 0), (1, "B", 1), (0, "B", 0), (0, "B", 1)]
             for _ in range(2)]
    rows, total, bubble = simulate(interleaved, sched, 2, 2, say(
        "a schedule that is not Megatron's (every forward first)", zh="一个不是 Megatron 的调度（先运行全部前向）"))
    try:
        record_property("timeline", timeline_artifact(_rows(rows), "your simulate_interleaved, every forward first"))
    except (TypeError, ValueError):
        pass  # not drawable: the checks below say what is wrong
    record_property("expected", timeline_artifact(  # the start times below, and tf/v = 0.5, tb/v = 1
        [[(c, o, mb, s, s + (0.5 if o == "F" else 1.0)) for (c, o, mb), s in zip(sched[r], ANY_ORDER_STARTS[r])]
         for r in range(2)], "expected simulation, every forward first (tf=1, tb=2)"))
    starts = [[float(s) for _, _, _, s, _ in row] for row in rows]
    # what the same schedule gives when chunk c of rank r is taken as virtual stage r * v + c
    contiguous = [[0.0, 0.5, 1.0, 1.5, 6.5, 7.5, 8.5, 9.5], [1.5, 2.0, 2.5, 3.0, 3.5, 4.5, 5.5, 6.5]]
    mapping = say(" (these are the start times when chunk c of rank r is virtual stage r * v + c; the layers are "
                  "dealt round-robin: chunk c of rank r is virtual stage c * p + r)",
                  zh="（这是把 rank r 的模型块 c 当作虚拟 stage r * v + c 时的开始时间；层是轮流分配的："
                  "rank r 的模型块 c 是虚拟 stage c * p + r）") if starts == contiguous else ""
    assert starts == [[0.0, 0.5, 1.0, 1.5, 3.5, 4.5, 5.5, 6.5], [0.5, 1.0, 1.5, 2.0, 2.5, 3.5, 4.5, 5.5]], (
        f"start times per rank: expected [[0, .5, 1, 1.5, 3.5, 4.5, 5.5, 6.5], [.5, 1, 1.5, 2, 2.5, 3.5, 4.5, 5.5]], "
        f"got {starts}{mapping}. Rank 1 holds virtual stages 1 and 3; the backward of stage 3 (the last) waits only "
        f"for its own forward, rank 0's backward of its chunk 1 (stage 2) waits for stage 3's backward")
    assert float(total) == 7.5, f"total: expected 7.5, got {float(total)}"
    assert math.isclose(float(bubble), 0.2, rel_tol=1e-9), f"bubble: expected 1 - 12/15 = 0.2, got {float(bubble)}"


@pytest.mark.title(zh="模拟报告死锁")
def test_simulate_reports_deadlock():
    # Rank 1 wants the backward of micro-batch 0 on its last chunk before it has run that forward.
    sched = [parse("F0c0 F1c0 F0c1 F1c1 B0c1 B1c1 B0c0 B1c0"), parse("F0c0 B0c1 F1c0 F0c1 F1c1 B1c1 B0c0 B1c0")]
    with pytest.raises(ValueError):
        interleaved.simulate_interleaved(sched, 2, 2)


@pytest.mark.title(zh="气泡随 v 缩小")
@pytest.mark.parametrize("tf,tb", [(1.0, 2.0), (1.0, 1.0)])
def test_bubble_shrinks_with_v(tf, tb, record_property):
    # Uses your interleaved_schedule and simulate_interleaved: p = 4, m = 8, v = 1, 2, 4.
    p, m = 4, 8
    idle = {}
    for v in (1, 2, 4):
        sched = normalize(interleaved.interleaved_schedule(p, m, v), p)
        stuck = stuck_ops(sched, p, v)
        assert not stuck, f"v={v}: your interleaved_schedule({p}, {m}, {v}) deadlocks: {'; '.join(stuck)}"
        what = (f"your interleaved_schedule({p}, {m}, 1) (v = 1: the plain 1F1B baseline, one fused chunk per rank)"
                if v == 1 else f"your interleaved_schedule({p}, {m}, {v})")
        rows, total, bubble = simulate(interleaved, sched, p, v, what, tf=tf, tb=tb)
        if v == 4:
            record_property("timeline", timeline_artifact(_rows(rows), f"p={p} m={m} v={v}, tf={tf}, tb={tb}"))
        want_total = (m + (p - 1) / v) * (tf + tb)
        assert float(total) == want_total, (
            f"v={v}: expected total (m + (p-1)/v) * (tf+tb) = {want_total}, got {float(total)}")
        want_bubble = (p - 1) / (v * m + p - 1)
        assert math.isclose(float(bubble), want_bubble, rel_tol=1e-9), (
            f"v={v}: expected bubble (p-1)/(v*m + p-1) = {want_bubble:.6f}, got {float(bubble):.6f}")
        idle[v] = float(total) - m * (tf + tb)
    assert idle[2] == idle[1] / 2 and idle[4] == idle[1] / 4, (
        f"idle time per rank should shrink by v: v=1 {idle[1]}, v=2 {idle[2]}, v=4 {idle[4]}")


@pytest.mark.title(zh="操作不是 F 或 B 时 simulate_interleaved 抛出 ValueError")
@pytest.mark.parametrize("op", ["W", "f", "X", "", "FB"], ids=repr)
def test_simulate_rejects_unknown_ops(op):
    """simulate_interleaved raises ValueError for an op other than "F" or "B".

    "" and "FB" are not ops either (both are in the string "FB", which `op in "FB"` would accept)."""
    sched = [[(0, "F", 0), (0, op, 0)]]
    try:
        got = interleaved.simulate_interleaved(sched, 1, 1)
    except ValueError:
        return
    except Exception as exc:  # noqa: BLE001 - reported to the learner
        raise AssertionError(f"simulate_interleaved([[(0, 'F', 0), (0, {op!r}, 0)]], 1, 1) should raise ValueError "
                             f"(ops are 'F' or 'B'), but raised {type(exc).__name__}: {exc}") from None
    raise AssertionError(f"simulate_interleaved([[(0, 'F', 0), (0, {op!r}, 0)]], 1, 1) should raise ValueError "
                         f"(ops are 'F' or 'B'), but returned {str(got)[:80]}")


@pytest.mark.title(zh="interleaved_schedule 返回列表，每个 rank 一个由 (chunk, op, mb) 元组组成的列表，v = 1 时也是")
@pytest.mark.parametrize("p,m,v", [(2, 4, 2), (3, 5, 1)])
def test_schedule_types(p, m, v):
    """interleaved_schedule returns a list with one list per rank of (chunk, op, mb) tuples, also for v = 1."""
    got = interleaved.interleaved_schedule(p, m, v)
    call = f"interleaved_schedule({p}, {m}, {v})"
    assert type(got) is list, f"{call}: expected a list with one list per rank, got a {type(got).__name__}"
    assert len(got) == p, f"{call}: expected one list per rank ({p} lists), got {len(got)}"
    for r, row in enumerate(got):
        assert type(row) is list, f"{call}[{r}]: expected a list of (chunk, op, mb) tuples, got a {type(row).__name__}"
        assert len(row) == 2 * m * v, (f"{call}[{r}]: expected 2 * m * v = {2 * m * v} ops (a forward and a "
                                       f"backward per chunk and micro-batch), got {len(row)}")
        for i, op in enumerate(row):
            ok = (type(op) is tuple and len(op) == 3 and type(op[0]) is int and type(op[1]) is str
                  and op[1] in ("F", "B") and type(op[2]) is int)
            assert ok, say(f"{call}[{r}][{i}] is {op!r} (a {type(op).__name__}): expected a tuple (chunk, op, mb) "
                           f"of an int, 'F' or 'B', and an int",
                           zh=f"{call}[{r}][{i}] 是 {op!r}（{type(op).__name__}）：预期一个元组 (chunk, op, mb)，"
                           f"依次是 int、'F' 或 'B'、int")


def _is_time(x) -> bool:
    return type(x) in (float, int)


@pytest.mark.title(zh="simulate_interleaved 返回题面所说的类型")
def test_simulate_types():
    """simulate_interleaved returns the types the statement names.

    A tuple (timeline, total, bubble); a block is a tuple (chunk, op, mb, start, end); start, end,
    total and bubble are floats (an int is fine too)."""
    sched = _expected(2, 4, 2)
    result = simulate(interleaved, sched, 2, 2, _worked())
    call = "simulate_interleaved(<the worked example's schedule>, 2, 2, tf=1.0, tb=2.0)"
    assert type(result) is tuple and len(result) == 3, (
        f"{call}: expected a tuple (timeline, total, bubble), got {str(result)[:80]} (a {type(result).__name__})")
    timeline, total, bubble = result
    assert type(timeline) is list and all(type(row) is list for row in timeline), (
        f"{call}: expected the timeline as a list with one list per rank, got a {type(timeline).__name__} of "
        f"{[type(row).__name__ for row in timeline][:2]}")
    for r, row in enumerate(timeline):
        for i, block in enumerate(row):
            ok = (type(block) is tuple and len(block) == 5 and type(block[0]) is int and type(block[1]) is str
                  and type(block[2]) is int and _is_time(block[3]) and _is_time(block[4]))
            assert ok, say(f"{call}: timeline[{r}][{i}] is {block!r} (a {type(block).__name__}): expected a tuple "
                           f"(chunk, op, mb, start, end) of int, str, int, float, float (start, end, total and bubble "
                           f"are floats)",
                           zh=f"{call}：timeline[{r}][{i}] 是 {block!r}（{type(block).__name__}）：预期一个元组 "
                           f"(chunk, op, mb, start, end)，依次是 int、str、int、float、float"
                           f"（start、end、total 和 bubble 都是 float）")
    for what, value in (("total", total), ("bubble", bubble)):
        assert _is_time(value), say(f"{call}: {what} is {value!r} of type {type(value).__name__}, expected a float "
                                    f"(start, end, total and bubble are floats)",
                                    zh=f"{call}：{what} 是 {type(value).__name__} 类型的 {value!r}，预期 float"
                                    f"（start、end、total 和 bubble 都是 float）")


@pytest.mark.title(zh="默认值是 tf = 1.0 和 tb = 2.0，与签名一致")
def test_simulate_default_durations():
    """The defaults are tf = 1.0 and tb = 2.0, as in the signature."""
    sched = _expected(2, 4, 2)
    _, explicit_total, _ = simulate(interleaved, sched, 2, 2, _worked())
    call = "simulate_interleaved(<the worked example's schedule>, 2, 2)"
    try:
        rows, total, _ = interleaved.simulate_interleaved(sched, 2, 2)
    except Exception as exc:  # noqa: BLE001 - reported to the learner
        raise AssertionError(f"{call}, without tf and tb, raised {type(exc).__name__}: {exc}") from None
    if float(total) == 13.5:
        return
    durations = {o: sorted({float(e) - float(s) for row in rows for _, oo, _, s, e in row if oo == o}) for o in "FB"}
    msg = say(f"{call}, without tf and tb: expected total 13.5 = (4 + 1/2) * (tf + tb) with the defaults tf = 1.0, "
              f"tb = 2.0 (a chunk's F 0.5, its B 1.0), got {float(total)} (forwards {durations['F']}, backwards "
              f"{durations['B']})",
              zh=f"{call}，不给 tf 和 tb：按默认值 tf = 1.0、tb = 2.0（一个模型块的 F 为 0.5，B 为 1.0），预期 total "
              f"13.5 = (4 + 1/2) * (tf + tb)，实际 {float(total)}（前向 {durations['F']}，反向 {durations['B']}）")
    if float(explicit_total) == 13.5:
        msg += say(f"; with tf=1.0, tb=2.0 passed explicitly the total is {float(explicit_total)}: the signature's "
                   "defaults differ from tf = 1.0, tb = 2.0",
                   zh=f"；显式传入 tf=1.0、tb=2.0 时 total 是 {float(explicit_total)}：签名的默认值与 "
                   "tf = 1.0、tb = 2.0 不同")
    raise AssertionError(msg)
