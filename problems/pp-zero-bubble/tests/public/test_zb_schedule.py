"""Part 2: the ZB-H1 order of F, B and W on every stage, its bubble and its memory."""

import pytest
import zb_helpers as H
import zero_bubble

from judge.artifacts import timeline
from judge.lang import say

EXPECTED_P4_M8 = [
    "F0 F1 F2 F3 B0 W0 F4 B1 W1 F5 B2 W2 F6 B3 W3 F7 B4 W4 B5 W5 B6 W6 B7 W7",
    "F0 F1 F2 B0 F3 B1 W0 F4 B2 W1 F5 B3 W2 F6 B4 W3 F7 B5 W4 B6 W5 B7 W6 W7",
    "F0 F1 B0 F2 B1 F3 B2 W0 F4 B3 W1 F5 B4 W2 F6 B5 W3 F7 B6 W4 B7 W5 W6 W7",
    "F0 B0 F1 B1 F2 B2 F3 B3 W0 F4 B4 W1 F5 B5 W2 F6 B6 W3 F7 B7 W4 W5 W6 W7",
]


def _sim(sched, tf, tb, tw, label):
    return H.simulate_named(sched, tf, tb, tw, label)


@pytest.mark.title(zh="p = 4，m = 8 的顺序")
def test_order_p4_m8(record_property):
    got = zero_bubble.zb_h1_schedule(4, 8)
    H.attach(record_property, got, "ZB-H1, p=4, m=8", H.parse(EXPECTED_P4_M8))
    assert isinstance(got, list) and len(got) == 4, say(f"zb_h1_schedule(4, 8) should return a list of 4 stages, got {got!r}",
                                                        zh=f"zb_h1_schedule(4, 8) 应返回一个由 4 个 stage 组成的列表，"
                                                           f"实际得到 {got!r}")
    for s in range(4):
        want = [(w[0], int(w[1:])) for w in EXPECTED_P4_M8[s].split()]
        assert H.fmt(got[s]) == EXPECTED_P4_M8[s], say(
            f"zb_h1_schedule(4, 8) stage {s}: expected {EXPECTED_P4_M8[s]}, got {H.fmt(got[s])}."
            + H.order_hint(4, s, 8, got[s], want),
            zh=f"zb_h1_schedule(4, 8) stage {s}：预期 {EXPECTED_P4_M8[s]}，实际 {H.fmt(got[s])}。"
               + H.order_hint(4, s, 8, got[s], want))


SMALL = {
    (1, 3): ["F0 B0 W0 F1 B1 W1 F2 B2 W2"],
    (2, 3): ["F0 F1 B0 W0 F2 B1 W1 B2 W2",
             "F0 B0 F1 B1 W0 F2 B2 W1 W2"],
    (3, 2): ["F0 F1 B0 W0 B1 W1",
             "F0 F1 B0 B1 W0 W1",
             "F0 B0 F1 B1 W0 W1"],
    (3, 4): ["F0 F1 F2 B0 W0 F3 B1 W1 B2 W2 B3 W3",
             "F0 F1 B0 F2 B1 W0 F3 B2 W1 B3 W2 W3",
             "F0 B0 F1 B1 F2 B2 W0 F3 B3 W1 W2 W3"],
}


@pytest.mark.title(zh="一个 stage、微批次少于 stage（m < p：预热减为 m）、m 略大于 p")
@pytest.mark.parametrize("p,m", list(SMALL), ids=[f"p{p}-m{m}" for p, m in SMALL])
def test_order_small_sizes(p, m, record_property):
    """One stage, fewer micro-batches than stages (m < p: the warm-up is cut to m), and m just above p."""
    got = zero_bubble.zb_h1_schedule(p, m)
    H.attach(record_property, got, f"ZB-H1, p={p}, m={m}", H.parse(SMALL[(p, m)]))
    assert isinstance(got, list) and len(got) == p, say(
        f"zb_h1_schedule({p}, {m}) should return a list of {p} stages, got {got!r}",
        zh=f"zb_h1_schedule({p}, {m}) 应返回一个由 {p} 个 stage 组成的列表，实际得到 {got!r}")
    for s in range(p):
        want = [(w[0], int(w[1:])) for w in SMALL[(p, m)][s].split()]
        assert H.fmt(got[s]) == SMALL[(p, m)][s], say(
            f"zb_h1_schedule({p}, {m}) stage {s}: expected {SMALL[(p, m)][s]}, got {H.fmt(got[s])}."
            + H.order_hint(p, s, m, got[s], want),
            zh=f"zb_h1_schedule({p}, {m}) stage {s}：预期 {SMALL[(p, m)][s]}，实际 {H.fmt(got[s])}。"
               + H.order_hint(p, s, m, got[s], want))


@pytest.mark.title(zh="p 取 1、2、3、5，m 取 1、2、4、7：每个操作一次，F 在 B 前、B 在 W 前，所有 stage 都能完成")
def test_schedule_is_valid():
    """For p in 1, 2, 3, 5 and m in 1, 2, 4, 7: every op once, F before B before W, and the stages can all finish."""
    for p in (1, 2, 3, 5):
        for m in (1, 2, 4, 7):
            got = zero_bubble.zb_h1_schedule(p, m)
            problem = H.check_schedule(got, p, m)
            assert problem is None, say(f"zb_h1_schedule({p}, {m}) is not a valid schedule: {problem}\n{H.fmt_sched(got)}",
                                        zh=f"zb_h1_schedule({p}, {m}) 不是一个有效的调度：{problem}\n{H.fmt_sched(got)}")


@pytest.mark.title(zh="p = 4，m = 8 的时间线上的气泡")
def test_bubble_p4_m8_timeline(record_property):
    p, m = 4, 8
    sched = zero_bubble.zb_h1_schedule(p, m)
    res = _sim(sched, 1.0, 1.0, 1.0, f"zb_h1_schedule({p}, {m})")
    record_property("timeline", timeline(res["timeline"], title=f"ZB-H1, p={p}, m={m}, T_F = T_B = T_W = 1"))
    bubble = [float(b) for b in res["bubble"]]
    assert float(res["total"]) == 3 * m + p - 1, say(
        f"ZB-H1 with p={p}, m={m} and unit times should take 3m + p - 1 = {3 * m + p - 1}, took {float(res['total']):g}",
        zh=f"p={p}、m={m}、单位时间下的 ZB-H1 应耗时 3m + p - 1 = {3 * m + p - 1}，实际耗时 {float(res['total']):g}")
    assert bubble == [float(p - 1)] * p, say(f"bubble per stage: expected {[float(p - 1)] * p}, got {bubble}",
                                             zh=f"每个 stage 的气泡：预期 {[float(p - 1)] * p}，实际 {bubble}")


@pytest.mark.title(zh="单位时长下 ZB-H1 每个 stage 空闲 p - 1；反向融合的 1F1B 空闲 3(p - 1)")
@pytest.mark.parametrize("p,m", [(2, 2), (3, 6), (4, 4), (6, 9)])
def test_bubble_is_a_third_of_1f1b(p, m, record_property):
    """With unit times ZB-H1 idles p - 1 per stage; 1F1B with a fused backward idles 3(p - 1)."""
    zb = _sim(zero_bubble.zb_h1_schedule(p, m), 1.0, 1.0, 1.0, f"zb_h1_schedule({p}, {m})")
    record_property("timeline", timeline(zb["timeline"], title=f"ZB-H1, p={p}, m={m}"))
    got = [float(b) for b in zb["bubble"]]
    hint = ""
    if got == [2.0 * (p - 1)] * p and H.every_w_right_after_its_b(zero_bubble.zb_h1_schedule(p, m)):
        hint = say(" That is the bubble of 1F1B with W right after each B: your schedule does not defer W.",
                   zh=" 那是每个 B 之后紧跟 W 的 1F1B 的气泡：你的调度没有推迟 W。")
    assert got == [float(p - 1)] * p, say(
        f"ZB-H1 bubble per stage with unit times: expected p - 1 = {p - 1} on every stage (a third of 1F1B's 3(p - 1)), "
        f"got {got}.{hint}",
        zh=f"单位时间下 ZB-H1 每个 stage 的气泡：预期每个 stage 上都是 p - 1 = {p - 1}（1F1B 的 3(p - 1) 的三分之一），"
           f"实际 {got}。{hint}")


@pytest.mark.title(zh="显存与 1F1B 相同")
@pytest.mark.parametrize("p,m", [(4, 8), (3, 2), (5, 5), (2, 5), (3, 7)])
def test_memory_matches_1f1b(p, m):
    sched = zero_bubble.zb_h1_schedule(p, m)
    for s, ops in enumerate(sched):
        peak_b, peak_w = H.peaks(ops)
        lead = H.leading_forwards(ops)
        assert peak_b == min(p - s, m), say(
            f"stage {s} of zb_h1_schedule({p}, {m}) holds up to {peak_b} micro-batches between F and B; "
            f"1F1B holds min(p - s, m) = {min(p - s, m)}."
            + (f" Stage {s} runs {lead} forwards before its first B instead of min(p - s, m) = {min(p - s, m)}: "
               f"check the warm-up count." if lead != min(p - s, m) else ""),
            zh=f"zb_h1_schedule({p}, {m}) 的 stage {s} 在 F 和 B 之间最多持有 {peak_b} 个微批次；"
               f"1F1B 持有 min(p - s, m) = {min(p - s, m)} 个。"
               + (f" stage {s} 在它的第一个 B 之前运行了 {lead} 个前向，而不是 min(p - s, m) = {min(p - s, m)} 个："
                  f"请检查预热数量。" if lead != min(p - s, m) else ""))
        assert peak_w <= min(p, m), say(
            f"stage {s} of zb_h1_schedule({p}, {m}) holds up to {peak_w} micro-batches between F and W; "
            f"ZB-H1 never holds more than min(p, m) = {min(p, m)} (1F1B's peak, reached on its stage 0).",
            zh=f"zb_h1_schedule({p}, {m}) 的 stage {s} 在 F 和 W 之间最多持有 {peak_w} 个微批次；"
               f"ZB-H1 从不持有超过 min(p, m) = {min(p, m)} 个（1F1B 的峰值，在它的 stage 0 上达到）。")
    assert H.peaks(sched[-1])[1] == min(p, m), say(
        f"the last stage of zb_h1_schedule({p}, {m}) should hold min(p, m) = {min(p, m)} micro-batches between F and W "
        f"at its peak (it defers W by p - 1 micro-batches), got {H.peaks(sched[-1])[1]}",
        zh=f"zb_h1_schedule({p}, {m}) 的最后一个 stage 在峰值时应在 F 和 W 之间持有 min(p, m) = {min(p, m)} 个微批次"
           f"（它把 W 推迟 p - 1 个微批次），实际 {H.peaks(sched[-1])[1]}")
