"""Hidden tests of pp-dualpipe: more sizes, more costs, random schedules."""

import dualpipe
import dualpipe_helpers as H
import dualpipe_oracle as O
import pytest

from judge.lang import say


# Above the smallest size: m = 2p is test_order_exact's (and the size check's), so refusing m = 2p, a slip
# in the size check, does not also fail every size of the order (docs/grading.md). Weighs 3: the order at
# every size is most of what the order objective asks.
@pytest.mark.title(zh="顺序：多组规模")
@pytest.mark.points(3)
@pytest.mark.parametrize("p", [1, 2, 3, 4, 5, 6])
def test_orders_grid(p):
    for m in sorted(set(range(2 * p + 1, 2 * p + 6)) | {4 * p + 1, 24}):
        got = H.normalize(dualpipe.dualpipev_schedule(p, m), p, f"dualpipev_schedule({p}, {m})")
        report = H.order_report(p, m, O.dualpipev(p, m), got)
        assert not report, report


@pytest.mark.title(zh="微批次太少时抛出异常")
@pytest.mark.parametrize("p", [1, 3, 6, 8])
def test_too_few_micro_batches_raise(p):
    for m in (2 * p - 1, p, 1):
        try:
            got = dualpipe.dualpipev_schedule(p, m)
        except ValueError:
            continue
        except Exception as exc:  # noqa: BLE001 - reported to the learner
            raise AssertionError(say(f"dualpipev_schedule({p}, {m}) should raise ValueError (m >= 2p is required), but "
                                     f"raised {type(exc).__name__}: {exc}",
                                     zh=f"dualpipev_schedule({p}, {m}) 应抛出 ValueError（必须满足 m >= 2p），但抛出了 "
                                        f"{type(exc).__name__}: {exc}")) from None
        raise AssertionError(say(f"dualpipev_schedule({p}, {m}) should raise ValueError (m >= 2p is required), but it "
                                 f"returned {str(got)[:120]}",
                                 zh=f"dualpipev_schedule({p}, {m}) 应抛出 ValueError（必须满足 m >= 2p），但它返回了 "
                                    f"{str(got)[:120]}"))


COSTS = [(1.0, 1.0, 0.0), (1.0, 1.0, 1.0), (1.0, 0.5, 0.5), (1.0, 0.25, 0.75), (2.0, 1.0, 0.5), (2.0, 2.0, 2.0),
         (2.0, 0.5, 1.5)]  # (T_F = T_I, T_W, gain) with T_W <= T_F and gain <= T_F


@pytest.mark.title(zh="气泡公式：多组规模")
@pytest.mark.parametrize("tf,tw,gain", COSTS, ids=[f"T_F=T_I={tf:g}, T_W={tw:g}, gain={gain:g}" for tf, tw, gain in COSTS])
def test_bubble_formula_grid(tf, tw, gain):
    tb = tf + tw
    for p in range(1, 7):
        for m in (2 * p, 2 * p + 1, 2 * p + 4):
            res = H.simulate_named(dualpipe, O.dualpipev(p, m), tf, tb, tw, gain,
                                   say(f"DualPipeV's order, p={p}, m={m}", zh=f"DualPipeV 的顺序，p={p}、m={m}"))
            tip = (p - 1) * ((tf + tb - gain) + tb - 3 * tw)
            want = [tip - gain * max(0, p - 2 - r) for r in range(p)]
            got = [float(b) for b in res["bubble"]]
            assert got == want, say(
                f"DualPipeV p={p}, m={m}, T_F={tf:g}, T_B={tb:g}, T_W={tw:g}, gain={gain:g}: expected bubbles {want} "
                f"(the last rank's (p-1)(T_F&B + T_B - 3T_W) = {tip:g}), got {got}." + H.duration_hint(res, tf, tb, tw, gain),
                zh=f"DualPipeV p={p}、m={m}、T_F={tf:g}、T_B={tb:g}、T_W={tw:g}、gain={gain:g}：预期气泡 {want}"
                   f"（最后一个 rank 的 (p-1)(T_F&B + T_B - 3T_W) = {tip:g}），实际 {got}。"
                   + H.duration_hint(res, tf, tb, tw, gain))


@pytest.mark.title(zh="随机调度的模拟结果一致")
@pytest.mark.parametrize("seed", range(12))
def test_random_schedules_match(seed, record_property):
    p, m = 1 + seed % 4, 2 + seed % 5
    m = max(m, 2 * p)
    sched = O.random_schedule(p, m, seed)
    tf, tb, tw, gain = [(1.0, 2.0, 1.0, 0.5), (2.0, 3.0, 0.5, 1.0), (1.0, 1.5, 0.5, 0.0), (2.0, 2.0, 1.0, 0.25)][seed % 4]
    res = H.simulate_named(dualpipe, sched, tf, tb, tw, gain,
                           say(f"a random valid schedule (seed {seed})", zh=f"一个随机的有效调度（seed {seed}）"))
    if seed == 0:
        record_property("timeline", H.to_timeline(res, p, f"a random valid schedule, p={p}, m={m}"))
    want_tl, want_total = O.times(sched, tf, tb, tw, gain)
    got = H.rows(res)
    want = [[(H.label(a), s, e) for a, s, e in row] for row in want_tl]
    for r in range(p):
        if got[r] != want[r]:
            first = next((i for i, (a, b) in enumerate(zip(got[r], want[r])) if a != b), 0)
            hint = H.duration_hint(res, tf, tb, tw, gain)
            raise AssertionError(say(
                f"a random valid schedule (T_F={tf:g}, T_B={tb:g}, T_W={tw:g}, gain={gain:g}), rank {r}, action {first}: "
                f"expected {want[r][first:first + 3]}, got {got[r][first:first + 3]}.{hint}\n{H.fmt_sched(sched)}",
                zh=f"一个随机的有效调度（T_F={tf:g}、T_B={tb:g}、T_W={tw:g}、gain={gain:g}），rank {r}，动作 {first}："
                   f"预期 {want[r][first:first + 3]}，实际 {got[r][first:first + 3]}。{hint}\n{H.fmt_sched(sched)}"))
    assert float(res["total"]) == want_total, say(f"total: expected {want_total:g}, got {float(res['total']):g}",
                                                  zh=f"total：预期 {want_total:g}，实际 {float(res['total']):g}")


@pytest.mark.title(zh="对照调度：多组规模")
@pytest.mark.parametrize("p", [2, 3, 5, 6])
def test_baselines_grid(p):
    for m in (p, 2 * p, 3 * p + 1):
        one = H.simulate_named(dualpipe, O.baseline("1f1b", p, m), 2.0, 3.0, 1.0, 0.0,
                               say(f"1F1B, p={p}, m={m}", zh=f"1F1B，p={p}、m={m}"))
        zb = H.simulate_named(dualpipe, O.baseline("zb-h1", p, m), 2.0, 3.0, 1.0, 0.0,
                              say(f"ZB-H1, p={p}, m={m}", zh=f"ZB-H1，p={p}、m={m}"))
        assert [float(b) for b in one["bubble"]] == [5.0 * (p - 1)] * p, say(
            f"1F1B p={p}, m={m}, T_F=2, T_B=3: expected bubble (p-1)(T_F+T_B) = {5 * (p - 1)} per rank, got "
            f"{[float(b) for b in one['bubble']]}",
            zh=f"1F1B p={p}、m={m}、T_F=2、T_B=3：预期每个 rank 的气泡 (p-1)(T_F+T_B) = {5 * (p - 1)}，实际 "
               f"{[float(b) for b in one['bubble']]}")
        assert [float(b) for b in zb["bubble"]] == [3.0 * (p - 1)] * p, say(
            f"ZB-H1 p={p}, m={m}, T_F=2, T_I=2, T_W=1: expected bubble (p-1)(T_F+T_I-T_W) = {3 * (p - 1)} per rank, got "
            f"{[float(b) for b in zb['bubble']]}" + H.duration_hint(zb, 2.0, 3.0, 1.0, 0.0),
            zh=f"ZB-H1 p={p}、m={m}、T_F=2、T_I=2、T_W=1：预期每个 rank 的气泡 (p-1)(T_F+T_I-T_W) = {3 * (p - 1)}，实际 "
               f"{[float(b) for b in zb['bubble']]}" + H.duration_hint(zb, 2.0, 3.0, 1.0, 0.0))


@pytest.mark.title(zh="激活峰值：多组规模")
@pytest.mark.parametrize("p", [1, 2, 3, 5, 7])
def test_peaks_grid(p):
    for m in (2 * p, 2 * p + 3):
        sched = O.dualpipev(p, m)
        got = [int(x) for x in dualpipe.peak_activations(sched)]
        want = [2 * p] * (p - 1) + [2 * p + 1]
        assert got == want, say(f"peak_activations of DualPipeV, p={p}, m={m}: expected {want}, got {got}."
                                + H.memory_hint(sched, got),
                                zh=f"DualPipeV 的 peak_activations，p={p}、m={m}：预期 {want}，实际 {got}。"
                                   + H.memory_hint(sched, got))


@pytest.mark.title(zh="随机调度的激活峰值")
def test_peaks_random_schedules():
    for seed in range(20):
        p, m = 1 + seed % 4, 2 * (1 + seed % 4) + seed % 3
        sched = O.random_schedule(p, m, 100 + seed)
        want = []
        for row in sched:
            held = peak = 0
            for a in row:
                held += sum({"F": 1, "B": -1, "I": -1}.get(kind, 0) for kind, _, _ in H.singles(a))
                peak = max(peak, held)
            want.append(peak)
        got = [int(x) for x in dualpipe.peak_activations(sched)]
        assert got == want, say(f"peak_activations of a random valid schedule (seed {100 + seed}): expected {want}, got "
                                f"{got}." + H.memory_hint(sched, got) + f"\n{H.fmt_sched(sched)}",
                                zh=f"一个随机的有效调度（seed {100 + seed}）的 peak_activations：预期 {want}，实际 "
                                   f"{got}。" + H.memory_hint(sched, got) + f"\n{H.fmt_sched(sched)}")


@pytest.mark.title(zh="DualPipeV 的权衡：多组规模")
@pytest.mark.parametrize("p", [2, 3, 5, 6])
def test_tradeoff_grid(p):
    for m in (2 * p + 1, 2 * p + 3):
        report = H.tradeoff_report(dualpipe, p, m, O.dualpipev(p, m))
        assert not report, report
