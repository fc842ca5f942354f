"""Secret tests for pp-zero-bubble: larger grids, m < p, other op times, random schedules."""

import numpy as np
import pytest
import zb_helpers as H
import zb_secret_ref as R
import zero_bubble

from judge.artifacts import timeline
from judge.lang import say


@pytest.mark.title(zh="顺序：多组规模")
@pytest.mark.parametrize("p", range(1, 9))
def test_order_grid(p):
    for m in range(1, 17):
        got = zero_bubble.zb_h1_schedule(p, m)
        want = R.zb_h1_by_keys(p, m)
        problem = H.check_schedule(got, p, m)
        assert problem is None, say(f"zb_h1_schedule({p}, {m}) is not a valid schedule: {problem}\n{H.fmt_sched(got)}",
                                    zh=f"zb_h1_schedule({p}, {m}) 不是一个有效的调度：{problem}\n{H.fmt_sched(got)}")
        for s in range(p):
            assert H.fmt(got[s]) == H.fmt(want[s]), say(
                f"zb_h1_schedule({p}, {m}) stage {s}: expected {H.fmt(want[s])}, got {H.fmt(got[s])}"
                + H.order_hint(p, s, m, got[s], want[s]),
                zh=f"zb_h1_schedule({p}, {m}) stage {s}：预期 {H.fmt(want[s])}，实际 {H.fmt(got[s])}"
                   + H.order_hint(p, s, m, got[s], want[s]))


@pytest.mark.title(zh="气泡公式")
@pytest.mark.parametrize("times", [(1.0, 1.0, 1.0), (1.0, 2.0, 1.0), (2.0, 2.0, 1.0), (1.0, 1.0, 0.5), (2.0, 3.0, 1.5)],
                         ids=lambda t: f"T_F={t[0]:g}, T_B={t[1]:g}, T_W={t[2]:g}")
def test_bubble_formula(times):
    tf, tb, tw = times
    for p in range(2, 9):
        for m in (p, p + 1, 2 * p + 3):
            res = zero_bubble.simulate(zero_bubble.zb_h1_schedule(p, m), tf, tb, tw)
            want = (p - 1) * (tf + tb - tw)
            got = [float(b) for b in res["bubble"]]
            assert all(abs(b - want) < 1e-9 for b in got), say(
                f"ZB-H1 p={p}, m={m}, T_F={tf}, T_B={tb}, T_W={tw}: expected bubble (p - 1)(T_F + T_B - T_W) = {want} "
                f"on every stage, got {got}",
                zh=f"ZB-H1 p={p}、m={m}、T_F={tf}、T_B={tb}、T_W={tw}：预期每个 stage 上的气泡 (p - 1)(T_F + T_B - T_W) = "
                   f"{want}，实际 {got}")


def _compare_sim(sched, times, label):
    res = zero_bubble.simulate(sched, *times)
    want_tl, want_total = R.longest_path_times(sched, *times)
    got = [[(str(op), int(i), float(a), float(b)) for op, i, a, b in row] for row in res["timeline"]]
    for s in range(len(sched)):
        assert len(got[s]) == len(want_tl[s]), say(f"{label}: stage {s} should have {len(want_tl[s])} blocks, got {len(got[s])}",
                                                   zh=f"{label}：stage {s} 应有 {len(want_tl[s])} 个时间块，实际 {len(got[s])} 个")
        for g, w in zip(got[s], want_tl[s]):
            assert g[:2] == w[:2] and abs(g[2] - w[2]) < 1e-9 and abs(g[3] - w[3]) < 1e-9, say(
                f"{label}: stage {s}: expected {w[0]}{w[1]} from {w[2]:g} to {w[3]:g}, got {g}",
                zh=f"{label}：stage {s}：预期 {w[0]}{w[1]} 从 {w[2]:g} 到 {w[3]:g}，实际 {g}")
    assert abs(float(res["total"]) - want_total) < 1e-9, say(f"{label}: total expected {want_total:g}, got {float(res['total'])}",
                                                             zh=f"{label}：total 预期 {want_total:g}，实际 {float(res['total'])}")
    p = len(sched)
    busy = [sum(b - a for _, _, a, b in row) for row in want_tl]
    for s in range(p):
        assert abs(float(res["busy"][s]) - busy[s]) < 1e-9, say(
            f"{label}: busy[{s}] expected {busy[s]:g}, got {float(res['busy'][s])}",
            zh=f"{label}：busy[{s}] 预期 {busy[s]:g}，实际 {float(res['busy'][s])}")
        assert abs(float(res["bubble"][s]) - (want_total - busy[s])) < 1e-9, say(
            f"{label}: bubble[{s}] expected total - busy = {want_total - busy[s]:g}, got {float(res['bubble'][s])}",
            zh=f"{label}：bubble[{s}] 预期 total - busy = {want_total - busy[s]:g}，实际 {float(res['bubble'][s])}")
    frac = (p * want_total - sum(busy)) / (p * want_total)
    assert abs(float(res["bubble_fraction"]) - frac) < 1e-9, say(
        f"{label}: bubble_fraction expected {frac:.6g}, got {float(res['bubble_fraction'])}",
        zh=f"{label}：bubble_fraction 预期 {frac:.6g}，实际 {float(res['bubble_fraction'])}")


@pytest.mark.title(zh="模拟结果等于最长路径")
@pytest.mark.parametrize("times", [(1.0, 2.0, 0.5), (3.0, 1.0, 2.0), (1.0, 1.0, 1.0)],
                         ids=lambda t: f"T_F={t[0]:g}, T_B={t[1]:g}, T_W={t[2]:g}")
def test_simulate_matches_longest_path(times):
    for p, m in [(1, 3), (3, 2), (5, 5), (8, 12)]:
        for label, label_zh, sched in [("zb-h1", "zb-h1", R.zb_h1_by_keys(p, m)),
                                       ("1F1B, W after B", "1F1B，W 紧跟在 B 之后", H.w_right_after_b(H.one_f_one_b(p, m))),
                                       ("1F1B, W at the end", "1F1B，W 全在最后", H.w_at_end(H.one_f_one_b(p, m)))]:
            _compare_sim(sched, times, say(f"{label} p={p} m={m} times={times}", zh=f"{label_zh} p={p} m={m} times={times}"))


@pytest.mark.title(zh="模拟随机调度")
def test_simulate_random_schedules():
    for seed in range(12):
        p, m = 2 + seed % 4, 1 + seed % 5
        sched = R.random_valid_schedule(p, m, seed)
        _compare_sim(sched, (1.0, 2.0, 0.5), say(f"random schedule (seed {seed}):\n{H.fmt_sched(sched)}\n",
                                                 zh=f"随机调度（seed {seed}）：\n{H.fmt_sched(sched)}\n"))


@pytest.mark.title(zh="模拟跨 stage 的死锁")
def test_simulate_cross_stage_deadlock():
    # stage 1 wants F1 first, which stage 0 runs only after B0, which needs stage 1's B0: a cycle
    sched = [[("F", 0), ("B", 0), ("F", 1), ("B", 1), ("W", 0), ("W", 1)],
             [("F", 1), ("F", 0), ("B", 0), ("B", 1), ("W", 0), ("W", 1)]]
    assert R.longest_path_times(sched, 1.0, 1.0, 1.0) is None
    with pytest.raises(ValueError):
        zero_bubble.simulate(sched, 1.0, 1.0, 1.0)


@pytest.mark.title(zh="m < p 时的时间线")
def test_m_less_than_p_timeline(record_property):
    p, m = 6, 3
    sched = zero_bubble.zb_h1_schedule(p, m)
    res = zero_bubble.simulate(sched, 1.0, 1.0, 1.0)
    record_property("timeline", timeline(res["timeline"], title=f"ZB-H1, p={p}, m={m}"))
    want_tl, want_total = R.longest_path_times(R.zb_h1_by_keys(p, m), 1.0, 1.0, 1.0)
    assert float(res["total"]) == want_total, say(f"ZB-H1 p={p}, m={m}: total expected {want_total:g}, got {float(res['total'])}",
                                                  zh=f"ZB-H1 p={p}、m={m}：total 预期 {want_total:g}，实际 {float(res['total'])}")


@pytest.mark.title(zh="run_schedule：更大的模型")
def test_run_schedule_bigger_model():
    p, m = 4, 6
    stages, xs, targets = H.make_problem(seed=11, p=p, m=m, width=5, rows=2, layers_per_stage=3)
    want, want_loss, _ = H.reference_grads(stages, xs, targets)
    for label, label_zh, sched in [("zb-h1", "zb-h1", R.zb_h1_by_keys(p, m)),
                                   ("random order", "随机顺序", R.random_valid_schedule(p, m, 5))]:
        grads, loss = H.run_watched(stages, xs, targets, sched, say(f"{label} (p={p}, m={m}, 3 layers per stage)",
                                                                    zh=f"{label_zh}（p={p}、m={m}，每个 stage 3 层）"))
        problem = H.grads_mismatch(grads, want)
        hint = H.grads_hint(stages, xs, targets, sched, grads) if problem is not None else ""
        assert problem is None, say(f"run_schedule on {label} (p={p}, m={m}, 3 layers per stage):\n{H.fmt_sched(sched)}\n"
                                    f"{problem}." + hint,
                                    zh=f"run_schedule 在 {label_zh}（p={p}、m={m}，每个 stage 3 层）上：\n"
                                       f"{H.fmt_sched(sched)}\n{problem}。" + hint)
        assert abs(float(loss) - want_loss) < 1e-12, say(f"{label}: loss expected {want_loss:.12g}, got {float(loss):.12g}",
                                                         zh=f"{label_zh}：损失预期 {want_loss:.12g}，实际 {float(loss):.12g}")


@pytest.mark.title(zh="run_schedule：只有一个 stage")
def test_run_schedule_single_stage():
    stages, xs, targets = H.make_problem(seed=12, p=1, m=2, width=3, rows=4, layers_per_stage=1)
    want, _, _ = H.reference_grads(stages, xs, targets)
    sched = [[("F", 0), ("F", 1), ("B", 1), ("B", 0), ("W", 1), ("W", 0)]]
    grads, _ = H.run_watched(stages, xs, targets, sched, say("one stage, one layer, B and W out of micro-batch order",
                                                             zh="一个 stage、一层，B 和 W 不按微批次顺序"))
    problem = H.grads_mismatch(grads, want)
    hint = H.grads_hint(stages, xs, targets, sched, grads) if problem is not None else ""
    assert problem is None, say(f"one stage, one layer, B and W out of micro-batch order: {problem}." + hint,
                                zh=f"一个 stage、一层，B 和 W 不按微批次顺序：{problem}。" + hint)


@pytest.mark.title(zh="run_schedule 不修改参数")
def test_run_schedule_does_not_modify_parameters():
    stages, xs, targets = H.make_problem(seed=13, p=2, m=2)
    before = [[(w.copy(), b.copy()) for w, b in st] for st in stages]
    want = H.reference_grads(stages, xs, targets)[0]
    grads, _ = H.run_watched(stages, xs, targets, R.zb_h1_by_keys(2, 2), say("ZB-H1 (p=2, m=2)", zh="ZB-H1（p=2、m=2）"))
    problem = H.grads_mismatch(grads, want)
    assert problem is None, say(f"run_schedule on ZB-H1 (p=2, m=2) gives the wrong gradients: {problem}",
                                zh=f"run_schedule 在 ZB-H1（p=2、m=2）上给出的梯度不对：{problem}")
    for s, st in enumerate(stages):
        for k, (w, b) in enumerate(st):
            assert np.array_equal(w, before[s][k][0]) and np.array_equal(b, before[s][k][1]), say(
                f"run_schedule changed stage {s} layer {k}'s parameters; it should only return gradients",
                zh=f"run_schedule 改变了 stage {s} 第 {k} 层的参数；它只应返回梯度")
