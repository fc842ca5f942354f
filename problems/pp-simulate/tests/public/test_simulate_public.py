"""Public tests for pp-simulate: block times, bubble, peak activations, deadlocks, and render()."""

from __future__ import annotations

import math

import pp_sim
import pytest
from simulate_helpers import (
    attach_expected,
    bubble_of,
    build,
    check_blocks,
    check_bubble,
    check_peaks,
    check_rules,
    check_total,
    expect_value_error,
    ops,
    read,
    run,
    shown,
)

from judge.lang import say


@pytest.mark.title(zh="两个 stage 的 1F1B 时间线")
def test_two_stage_1f1b_timeline(record_property):
    sched = build("1f1b", 2, 2)  # stage 0: F0 F1 B0 B1, stage 1: F0 B0 F1 B1
    sim = run(record_property, sched, 1.0, 2.0, "1F1B, p=2, m=2")
    want = [
        [("F", 0, 0, 1), ("F", 1, 1, 2), ("B", 0, 4, 6), ("B", 1, 7, 9)],
        [("F", 0, 1, 2), ("B", 0, 2, 4), ("F", 1, 4, 5), ("B", 1, 5, 7)],
    ]
    attach_expected(record_property, want, "1F1B, p=2, m=2, tf=1, tb=2")
    check_rules(sim, sched, 1.0, 2.0, "1F1B p=2 m=2")
    check_blocks(sim, want, "1F1B p=2 m=2")
    check_total(sim, 9.0, "1F1B p=2 m=2")


@pytest.mark.title(zh="两个 stage 的 GPipe 时间线")
def test_two_stage_gpipe_timeline(record_property):
    sched = build("gpipe", 2, 2)  # both stages: F0 F1 B0 B1
    sim = run(record_property, sched, 1.0, 2.0, "GPipe, p=2, m=2")
    want = [
        [("F", 0, 0, 1), ("F", 1, 1, 2), ("B", 0, 5, 7), ("B", 1, 7, 9)],
        [("F", 0, 1, 2), ("F", 1, 2, 3), ("B", 0, 3, 5), ("B", 1, 5, 7)],
    ]
    attach_expected(record_property, want, "GPipe, p=2, m=2, tf=1, tb=2")
    check_rules(sim, sched, 1.0, 2.0, "GPipe p=2 m=2")
    check_blocks(sim, want, "GPipe p=2 m=2")
    check_total(sim, 9.0, "GPipe p=2 m=2")


@pytest.mark.title(zh="p = 4，1F1B：F0 走完所有 stage、B0 再传回来之后，B0 才到达 stage 0（10 到 12）")
def test_first_backward_of_stage_zero_waits_for_the_whole_pipeline(record_property):
    """p = 4, 1F1B: B0 reaches stage 0 only after F0 crossed all stages and B0 came back (10 to 12)."""
    sched = build("1f1b", 4, 6)
    sim = run(record_property, sched, 1.0, 2.0, "1F1B, p=4, m=6")
    check_rules(sim, sched, 1.0, 2.0, "1F1B p=4 m=6")
    b0 = next(b for b in sim.timeline[0] if b[:2] == ("B", 0))
    assert math.isclose(b0[2], 10.0) and math.isclose(b0[3], 12.0), say(
        f"stage 0, B0: expected 10 to 12 (F0 on stages 0..3 ends at 4, then B0 on stages 3, 2, 1 takes "
        f"2 each), got {b0[2]:g} to {b0[3]:g}",
        zh=f"stage 0，B0：预期从 10 到 12（F0 在 stage 0..3 上于 4 结束，然后 B0 在 stage 3、2、1 上各耗时 "
           f"2），实际从 {b0[2]:g} 到 {b0[3]:g}")


@pytest.mark.title(zh="题面的练习：p = 4 时 (p - 1) / (m + p - 1) = 42.9 %、27.3 %、15.8 %、8.6 %")
@pytest.mark.parametrize("kind", ["gpipe", "1f1b"])
@pytest.mark.parametrize("m", [4, 8, 16, 32])
def test_exercise_bubble_p4(record_property, kind, m):
    """The statement's exercise: p = 4 gives (p - 1) / (m + p - 1) = 42.9 %, 27.3 %, 15.8 %, 8.6 %."""
    p = 4
    sched = build(kind, p, m)
    sim = run(record_property, sched, 1.0, 2.0, f"{kind}, p={p}, m={m}")
    check_rules(sim, sched, 1.0, 2.0, f"{kind} p={p} m={m}")
    want_total = (m + p - 1) * 3.0
    check_total(sim, want_total, f"{kind} p={p} m={m}", " = (m + p - 1)(tf + tb)")
    check_bubble(sim, (p - 1) / (m + p - 1), f"{kind} p={p} m={m}")


@pytest.mark.title(zh="气泡占比与 tb/tf 无关")
@pytest.mark.parametrize("tf, tb", [(1.0, 1.0), (1.0, 3.5), (0.25, 2.0)])
def test_bubble_does_not_depend_on_tb_over_tf(record_property, tf, tb):
    p, m = 4, 8
    sched = build("1f1b", p, m)
    sim = run(record_property, sched, tf, tb, f"1F1B, p={p}, m={m}")
    check_rules(sim, sched, tf, tb, f"1F1B p={p} m={m} tf={tf:g} tb={tb:g}")
    check_bubble(sim, 3 / 11, f"1F1B p={p} m={m} tf={tf:g} tb={tb:g}")


@pytest.mark.title(zh="GPipe 在每个 stage 上持有全部 m 个微批次；1F1B 在 stage s 上最多 min(p - s, m) 个")
@pytest.mark.parametrize("kind, p, m, want", [
    ("gpipe", 4, 8, [8, 8, 8, 8]),
    ("1f1b", 4, 8, [4, 3, 2, 1]),
    ("1f1b", 4, 2, [2, 2, 2, 1]),
    ("1f1b", 4, 16, [4, 3, 2, 1]),
    ("1f1b", 1, 3, [1]),
], ids=["gpipe, p=4, m=8", "1f1b, p=4, m=8", "1f1b, p=4, m=2", "1f1b, p=4, m=16", "1f1b, p=1, m=3"])
def test_peak_activations(record_property, kind, p, m, want):
    """GPipe holds all m micro-batches on every stage; 1F1B at most min(p - s, m) on stage s."""
    sched = build(kind, p, m)
    sim = run(record_property, sched, 1.0, 2.0, f"{kind}, p={p}, m={m}")
    check_peaks(sim, sched, f"{kind} p={p} m={m}", want)


@pytest.mark.title(zh="只有一个 stage 时没有气泡")
@pytest.mark.parametrize("kind", ["gpipe", "1f1b"])
def test_single_stage_has_no_bubble(record_property, kind):
    sched = build(kind, 1, 3)
    sim = run(record_property, sched, 1.0, 2.0, f"{kind}, p=1, m=3")
    check_rules(sim, sched, 1.0, 2.0, f"{kind} p=1 m=3")
    check_total(sim, 9.0, f"{kind} p=1 m=3")
    assert math.isclose(sim.bubble, 0.0, abs_tol=1e-12), say(f"{kind} p=1: expected bubble 0, got {sim.bubble:g}",
                                                             zh=f"{kind} p=1：预期 bubble 0，实际 {sim.bubble:g}")


@pytest.mark.title(zh="时长为 float")
def test_float_durations(record_property):
    sched = build("1f1b", 3, 4)
    sim = run(record_property, sched, 0.5, 1.25, "1F1B, p=3, m=4")
    check_rules(sim, sched, 0.5, 1.25, "1F1B p=3 m=4 tf=0.5 tb=1.25")
    check_total(sim, 10.5, "1F1B p=3 m=4 tf=0.5 tb=1.25", " = (4 + 3 - 1) * 1.75")
    check_bubble(sim, bubble_of(sim), "1F1B p=3 m=4 tf=0.5 tb=1.25")
    check_bubble(sim, 2 / 6, "1F1B p=3 m=4 tf=0.5 tb=1.25")


@pytest.mark.title(zh="最后一个 stage 的反向要等它自己的前向")
def test_last_stage_backward_waits_for_its_own_forward():
    """The last stage's backward waits for its own forward

    B i on the last stage starts after that stage's F i ends (the loss needs the forward's output): listed
    before it, it can never start."""
    sched = [ops("F0 F1 B0 B1"), ops("B0 F0 F1 B1")]
    call = "simulate([[F0 F1 B0 B1], [B0 F0 F1 B1]])"
    try:
        sim = read(pp_sim.simulate(sched))
    except ValueError:
        return
    last = {(op, mb): (start, end) for op, mb, start, end in sim.timeline[-1]} if sim.timeline else {}
    b0, f0 = last.get(("B", 0)), last.get(("F", 0))
    ran_early = b0 is not None and f0 is not None and b0[0] < f0[1]
    hint = say(f" Likely mistake: on the last stage your B0 starts at {b0[0]:g}, before its own F0 ends at "
               f"{f0[1]:g}: there a backward waits for its own forward (the loss needs the forward's output).",
               zh=f" 可能的错误：在最后一个 stage 上，你的 B0 在 {b0[0]:g} 开始，早于它自己的 F0 在 {f0[1]:g} 结束："
                  "那里的反向要等待它自己的前向（损失需要前向的输出）。") if ran_early else ""
    raise AssertionError(say(f"{call} should raise ValueError (stage 1 is the last stage: its B0 waits for its own F0, "
                             f"listed after it, so the schedule deadlocks), but it returned a timeline.{hint}",
                             zh=f"{call} 应当抛出 ValueError（stage 1 是最后一个 stage：它的 B0 等待它自己的 F0，"
                                f"而 F0 排在它之后，所以这个调度会死锁），却返回了一个 timeline。{hint}"))


@pytest.mark.title(zh="既不是 GPipe 也不是 1F1B 的顺序的气泡")
@pytest.mark.parametrize("sched, total, bubble", [
    ("F0 B0 F1 B1 | F0 B0 F1 B1", 12.0, 0.5),
    ("F0 F1 B0 B1 F2 B2 | F0 B0 F1 B1 F2 B2", 15.0, 0.4),
], ids=["one micro-batch at a time", "a third micro-batch after a drained pipeline"])
def test_bubble_is_measured_from_the_timeline(record_property, sched, total, bubble):
    """The bubble of an order that is neither GPipe nor 1F1B

    The bubble is measured from the timeline (idle time over p times the total), whatever the order: the
    closed form (p - 1) / (m + p - 1) holds for GPipe's and 1F1B's orders only."""
    rows = [ops(row.strip()) for row in sched.split("|")]
    p, m = len(rows), len(rows[0]) // 2
    sim = run(record_property, rows, 1.0, 2.0, f"p={p}, m={m}: {sched}")
    check_total(sim, total, sched)
    closed = (p - 1) / (m + p - 1)
    assert not (math.isclose(sim.bubble, closed) and not math.isclose(bubble, closed)), say(
        f"{sched}: expected bubble {bubble:g}, got {sim.bubble:g}: that is the closed form (p - 1) / (m + p - 1), "
        "which holds for GPipe's and 1F1B's orders only; measure the bubble from the timeline (idle time over p "
        "times the total)",
        zh=f"{sched}：预期 bubble {bubble:g}，实际 {sim.bubble:g}：那是闭式 (p - 1) / (m + p - 1)，它只对 GPipe 和 1F1B "
           "的顺序成立；请从 timeline 测量气泡（空闲时间除以 p 乘总时间）")
    check_bubble(sim, bubble, sched)


@pytest.mark.title(zh="会死锁的顺序抛出 ValueError；同样的操作换成能运行的顺序则不会")
def test_deadlock_raises_value_error():
    """Orders that deadlock raise ValueError; the same operations in an order that can run do not."""
    runs = [ops("F0 B0 F1 B1"), ops("F0 B0 F1 B1")]  # the same operations, in an order that can run
    try:
        sim = read(pp_sim.simulate(runs))
    except Exception as exc:  # noqa: BLE001 - any exception here is the learner's mistake to report
        raise AssertionError(say(f"simulate([[F0 B0 F1 B1], [F0 B0 F1 B1]]) raised {type(exc).__name__}: {exc}; "
                                 f"this order does not deadlock (stage 0's B0 waits for stage 1's B0, which comes "
                                 f"after stage 1's F0), so it must run",
                                 zh=f"simulate([[F0 B0 F1 B1], [F0 B0 F1 B1]]) 抛出了 {type(exc).__name__}: {exc}；"
                                    f"这个顺序不会死锁（stage 0 的 B0 等待 stage 1 的 B0，而后者排在 stage 1 的 F0 "
                                    f"之后），所以必须能运行")) from None
    check_total(sim, 12.0, "simulate([[F0 B0 F1 B1], [F0 B0 F1 B1]])")
    # stage 0 waits at B0 for stage 1's B0; stage 1 waits at F1 for stage 0's F1, which comes after B0
    sched = [ops("F0 B0 F1 B1"), ops("F1 B1 F0 B0")]
    expect_value_error(lambda: pp_sim.simulate(sched), "simulate([[F0 B0 F1 B1], [F1 B1 F0 B0]])",
                       say("this schedule deadlocks", zh="这个调度会死锁"))
    expect_value_error(lambda: pp_sim.simulate([ops("B0 F0")]), "simulate([[B0 F0]])",
                       say("the last stage's B0 waits for its own F0, listed after it",
                           zh="最后一个 stage 的 B0 等待它自己的 F0，而 F0 排在它之后"))


@pytest.mark.title(zh="画出两个 stage")
def test_render_two_stages():
    res = pp_sim.SimResult(
        timeline=[[("F", 0, 0.0, 1.0), ("F", 1, 1.0, 2.0), ("B", 0, 4.0, 6.0), ("B", 1, 7.0, 9.0)],
                  [("F", 0, 1.0, 2.0), ("B", 0, 2.0, 4.0), ("F", 1, 4.0, 5.0), ("B", 1, 5.0, 7.0)]],
        total=9.0, bubble=1 / 3, peak_activations=[2, 1])
    want = ("stage 0 |F0 F1 .. .. B0 B0 .. B1 B1|\n"
            "stage 1 |.. F0 B0 B0 F1 B1 B1 .. ..|")
    got = pp_sim.render(res)
    assert got == want, say(f"render() of the p=2, m=2 1F1B timeline differs from the statement's picture:\n"
                            f"expected\n{want}\ngot\n{got}",
                            zh=f"p=2、m=2 的 1F1B 时间线的 render() 与题面中的图不同：\n"
                               f"预期\n{want}\n实际\n{got}")


@pytest.mark.title(zh="微批次编号达到 10 及以上时，每格宽 3 个字符：'F10'、'B3 '、'...'")
def test_render_more_than_ten_microbatches():
    """With micro-batch 10 or more, every cell is 3 characters wide: 'F10', 'B3 ', '...'."""
    blocks = [("F", 9, 0.0, 1.0), ("F", 10, 1.0, 2.0), ("B", 9, 3.0, 4.0), ("B", 10, 4.0, 5.0)]
    res = pp_sim.SimResult(timeline=[blocks], total=5.0, bubble=0.2, peak_activations=[2])
    want = "stage 0 |F9  F10 ... B9  B10|"
    got = pp_sim.render(res)
    assert got == want, say(f"render() with micro-batches 9 and 10 must give {want!r}, got {got!r} "
                            f"(every cell is W = 1 + len(str(10)) = 3 characters wide, labels left-justified)",
                            zh=f"带有微批次 9 和 10 的 render() 必须得到 {want!r}，实际得到 {got!r}"
                               f"（每格宽 W = 1 + len(str(10)) = 3 个字符，标签左对齐）")


@pytest.mark.title(zh="按时间单位画出")
def test_render_with_a_time_unit():
    res = pp_sim.SimResult(
        timeline=[[("F", 0, 0.0, 0.5), ("F", 1, 0.5, 1.0), ("B", 0, 2.0, 3.0), ("B", 1, 3.5, 4.5)],
                  [("F", 0, 0.5, 1.0), ("B", 0, 1.0, 2.0), ("F", 1, 2.0, 2.5), ("B", 1, 2.5, 3.5)]],
        total=4.5, bubble=1 / 3, peak_activations=[2, 1])
    want = ("stage 0 |F0 F1 .. .. B0 B0 .. B1 B1|\n"
            "stage 1 |.. F0 B0 B0 F1 B1 B1 .. ..|")
    got = pp_sim.render(res, unit=0.5)
    assert got == want, say(f"render(result, unit=0.5) of a tf=0.5, tb=1 timeline:\nexpected\n{want}\ngot\n{got}",
                            zh=f"tf=0.5、tb=1 的时间线的 render(result, unit=0.5)：\n预期\n{want}\n实际\n{got}")


BAD_DURATIONS = [(True, 2.0), (1.0, float("inf")), (float("nan"), 1.0), ("1", 2.0), (0, 2.0)]


@pytest.mark.title(zh="时长是有限且 > 0 的 int 或 float：不能是 bool、无穷大、NaN 或字符串")
@pytest.mark.parametrize("tf, tb", BAD_DURATIONS, ids=[shown(tf=tf, tb=tb) for tf, tb in BAD_DURATIONS])
def test_durations_must_be_positive_finite_numbers(tf, tb):
    """A duration is an int or float, finite and > 0: not a bool, an infinity, NaN or a string."""
    sched = build("1f1b", 2, 2)
    expect_value_error(lambda: pp_sim.simulate(sched, tf=tf, tb=tb), f"simulate(<1F1B p=2 m=2>, tf={tf!r}, tb={tb!r})",
                       say("tf and tb must be positive, finite int or float values, not bool",
                           zh="tf 和 tb 必须是正的、有限的 int 或 float 值，不能是 bool"))


@pytest.mark.title(zh="画图的时间单位必须是有限的正数")
@pytest.mark.parametrize("unit", [0, -1.0, True, float("inf"), "1"], ids=lambda unit: shown(unit=unit))
def test_render_unit_must_be_a_positive_finite_number(unit):
    res = pp_sim.SimResult(timeline=[[("F", 0, 0.0, 1.0), ("B", 0, 1.0, 3.0)]], total=3.0, bubble=0.0,
                           peak_activations=[1])
    expect_value_error(lambda: pp_sim.render(res, unit=unit), f"render(result, unit={unit!r})",
                       say("unit must be a positive, finite int or float, not bool",
                           zh="unit 必须是正的、有限的 int 或 float，不能是 bool"))


@pytest.mark.title(zh="只有 (\"F\", i) 和 (\"B\", i)（i 为 >= 0 的 int）是操作：不能小写，不能是 W，i 不能是 bool 或 str")
@pytest.mark.parametrize("bad", [("f", 0), ("W", 0), ("F", True), ("F", "0")], ids=repr)
def test_unknown_operations_raise_value_error(bad):
    """Only ("F", i) and ("B", i) with an int i >= 0 are operations: no lowercase, no W, no bool or str i."""
    sched = [[bad, ("B", 0)]]
    expect_value_error(lambda: pp_sim.simulate(sched), f"simulate([[{bad!r}, ('B', 0)]])",
                       say(f"{bad!r} is not an operation of this problem", zh=f"{bad!r} 不是本题的操作"))


@pytest.mark.title(zh="题面：说出哪个 stage 卡在哪个操作")
def test_deadlock_message_names_the_stuck_stage_and_operation():
    """The statement: say which stage is stuck at which operation."""
    try:
        pp_sim.simulate([ops("F0 B0 F1 B1"), ops("F1 B1 F0 B0")])
    except ValueError as exc:
        text = str(exc)
    else:
        raise AssertionError(say("simulate([[F0 B0 F1 B1], [F1 B1 F0 B0]]) should raise ValueError (it deadlocks)",
                                 zh="simulate([[F0 B0 F1 B1], [F1 B1 F0 B0]]) 应当抛出 ValueError（它会死锁）"))
    # stage 0 waits at B0 for stage 1's B0; stage 1 waits at F1 for stage 0's F1, listed after B0
    labels = ("B0", "('B', 0)", '("B", 0)', "F1", "('F', 1)", '("F", 1)')
    assert "stage" in text.lower() and any(label in text for label in labels), say(
        f"simulate([[F0 B0 F1 B1], [F1 B1 F0 B0]]) raised ValueError({text!r}); the message should say which "
        f"stage is stuck at which operation: stage 0 waits at B0 for stage 1's B0, stage 1 waits at F1 for "
        f"stage 0's F1 (say which stage is stuck)",
        zh=f"simulate([[F0 B0 F1 B1], [F1 B1 F0 B0]]) 抛出了 ValueError({text!r})；信息应当说明哪个 stage "
           f"卡在哪个操作：stage 0 卡在 B0，等待 stage 1 的 B0；stage 1 卡在 F1，等待 stage 0 的 F1"
           f"（说明哪个 stage 卡住了）")


@pytest.mark.title(zh="simulate 返回题面所说的类型")
@pytest.mark.parametrize("kind, p, m, tf, tb", [("1f1b", 2, 2, 1, 2), ("gpipe", 1, 3, 1.0, 2.0)])
def test_types_of_the_result(kind, p, m, tf, tb):
    """simulate returns the types the statement names.

    Times as float (also for int durations), total and bubble float, peaks int; with one stage too,
    where the bubble is 0.0."""
    result = pp_sim.simulate(build(kind, p, m), tf=tf, tb=tb)
    call = f"simulate(<{kind} p={p} m={m}>, tf={tf!r}, tb={tb!r})"
    ints_given = type(tf) is int and type(tb) is int
    because = say(" (times as float, also when tf and tb are ints)",
                  zh="（时间用 float，tf 和 tb 是 int 时也一样）") if ints_given else ""
    bad = [(s, block) for s, row in enumerate(result.timeline) for block in row
           if not (isinstance(block, tuple) and len(block) == 4 and type(block[0]) is str and type(block[1]) is int
                   and type(block[2]) is float and type(block[3]) is float)]
    int_times = ints_given and bad and all(type(x) is int for x in bad[0][1][2:4])
    assert not bad, say(f"{call}: every block must be a tuple (str op, int mb, float start, float end); stage "
                        f"{bad[0][0]} has {bad[0][1]!r}{because if int_times else ''}",
                        zh=f"{call}：每个时间块都必须是元组 (str op, int mb, float start, float end)；stage "
                           f"{bad[0][0]} 中有 {bad[0][1]!r}{because if int_times else ''}")
    for name in ("total", "bubble"):
        value = getattr(result, name)
        hint = because if type(value) is int and ints_given else ""
        if type(value) is int and p == 1 and name == "bubble" and not ints_given:
            hint = say(" (likely mistake: with one stage your bubble is the int 0; return it as the float 0.0)",
                       zh="（可能的错误：只有一个 stage 时你的 bubble 是 int 0；请返回 float 0.0）")
        assert type(value) is float, say(f"{call}: {name} must be a float, got {type(value).__name__} {value!r}{hint}",
                                         zh=f"{call}：{name} 必须是 float，实际得到 {type(value).__name__} {value!r}{hint}")
    assert isinstance(result.peak_activations, list) and all(type(x) is int for x in result.peak_activations), say(
        f"{call}: peak_activations must be a list of ints, got {result.peak_activations!r}",
        zh=f"{call}：peak_activations 必须是由 int 组成的列表，实际得到 {result.peak_activations!r}")
    check_rules(read(result), build(kind, p, m), tf, tb, call)  # and the times themselves, for int durations too
