"""Secret tests for pp-simulate: many sizes and durations against an oracle, arbitrary valid and
deadlocking orders, validation, and render() on wide and non-aligned timelines."""

from __future__ import annotations

import math

import numpy as np
import pp_sim
import pytest
from simulate_helpers import (
    attach,
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
from simulate_oracle import ballot_orders, close, oracle_render, oracle_simulate

from judge.lang import say


def check_against_oracle(sim, sched, tf, tb, where):
    """The timeline and its total (the bubble and the peaks are judged by their own tests, so that each
    mistake costs its own objective: docs/grading.md, what mistakes cost)."""
    timeline, total, _, _ = oracle_simulate(sched, tf, tb)
    check_rules(sim, sched, tf, tb, where)
    check_blocks(sim, timeline, where)
    check_total(sim, total, where)


STANDARD = [
    ("gpipe", 1, 1, 1.0, 2.0), ("1f1b", 1, 5, 0.5, 0.75), ("1f1b", 2, 1, 1.0, 2.0),
    ("gpipe", 3, 2, 1.0, 1.0), ("1f1b", 3, 7, 0.3, 0.7), ("1f1b", 5, 3, 1.0, 2.0),
    ("gpipe", 6, 9, 2.0, 1.0), ("1f1b", 8, 8, 1.0, 2.0), ("1f1b", 8, 32, 1.0, 2.0),
    ("gpipe", 8, 32, 0.125, 0.375), ("1f1b", 7, 20, 3.0, 1.0),
]


def random_orders(count: int = 60):
    """The random orders of the deadlock test, each with the oracle's run (None: it deadlocks)."""
    rng = np.random.default_rng(20240611)
    for case in range(count):
        p = int(rng.integers(2, 5))
        m = int(rng.integers(1, 6))
        sched = ballot_orders(rng, p, m)
        text = " / ".join(" ".join(f"{op}{mb}" for op, mb in row) for row in sched)
        yield case, sched, text, oracle_simulate(sched, 1.0, 2.0)


@pytest.mark.title(zh="标准调度与参考模拟一致")
@pytest.mark.parametrize("kind, p, m, tf, tb", STANDARD)
def test_standard_schedules_match_oracle(record_property, kind, p, m, tf, tb):
    sched = build(kind, p, m)
    sim = run(record_property, sched, tf, tb, f"{kind}, p={p}, m={m}")
    check_against_oracle(sim, sched, tf, tb, f"{kind} p={p} m={m} tf={tf:g} tb={tb:g}")


@pytest.mark.title(zh="从时间线测出的气泡：GPipe、1F1B 和随机顺序")
def test_bubble_matches_oracle_on_standard_and_random_orders():
    """The bubble measured from the timeline, on GPipe, 1F1B and random orders"""
    for kind, p, m, tf, tb in STANDARD:
        sim = read(pp_sim.simulate(build(kind, p, m), tf=tf, tb=tb))
        check_bubble(sim, oracle_simulate(build(kind, p, m), tf, tb)[2], f"{kind} p={p} m={m} tf={tf:g} tb={tb:g}")
    for case, sched, text, want in random_orders():
        if want is not None:
            check_bubble(read(pp_sim.simulate(sched, tf=1.0, tb=2.0)), want[2], f"random order #{case} [{text}]")


@pytest.mark.title(zh="激活峰值：GPipe、1F1B（多组规模）和随机顺序")
def test_peak_activations_match_oracle_on_standard_and_random_orders():
    """Peak activations on GPipe, 1F1B (a grid of sizes) and random orders"""
    for kind, p, m, tf, tb in STANDARD:
        sched = build(kind, p, m)
        check_peaks(read(pp_sim.simulate(sched, tf=tf, tb=tb)), sched, f"{kind} p={p} m={m} tf={tf:g} tb={tb:g}")
    for kind in ("gpipe", "1f1b"):
        for p in range(1, 7):
            for m in (1, 2, 3, 5, 8, 12):
                want = [m] * p if kind == "gpipe" else [min(p - s, m) for s in range(p)]
                sched = build(kind, p, m)
                check_peaks(read(pp_sim.simulate(sched, tf=1.0, tb=2.0)), sched, f"{kind} p={p} m={m}", want)
    for case, sched, text, want in random_orders():
        if want is not None:
            check_peaks(read(pp_sim.simulate(sched, tf=1.0, tb=2.0)), sched, f"random order #{case} [{text}]")


@pytest.mark.title(zh="各 stage 相同时：总时间 (m + p - 1)(tf + tb)，气泡占比 (p - 1)/(m + p - 1)，与 tb/tf 无关")
@pytest.mark.parametrize("kind", ["gpipe", "1f1b"])
def test_closed_forms_on_a_grid(record_property, kind):
    """Equal stages: total (m + p - 1)(tf + tb), bubble (p - 1)/(m + p - 1), whatever tb/tf."""
    for p in range(1, 7):
        for m in range(1, 13):
            sched = build(kind, p, m)
            sim = read(pp_sim.simulate(sched, tf=1.0, tb=2.0))
            where = f"{kind} p={p} m={m}"
            want_total = (m + p - 1) * 3.0
            if not close(sim.total, want_total):
                attach(record_property, sim, f"{where} (your simulate)")
            check_total(sim, want_total, where, " = (m + p - 1)(tf + tb)")
            check_bubble(sim, (p - 1) / (m + p - 1), where)


@pytest.mark.title(zh="stage 1 先 F1 后 F0、先 B1 后 B0：模拟器必须按列表顺序，而不是挑已就绪的操作")
def test_each_stage_follows_its_own_list_order(record_property):
    """Stage 1 runs F1 before F0 and B1 before B0: a simulator must follow the list, not pick what is ready."""
    sched = [ops("F0 F1 B0 B1"), ops("F1 F0 B1 B0")]
    sim = run(record_property, sched, 1.0, 2.0, "custom order, p=2, m=2")
    check_against_oracle(sim, sched, 1.0, 2.0, "stage 1 order F1 F0 B1 B0")
    check_total(sim, 12.0, "stage 1 order F1 F0 B1 B0")


@pytest.mark.title(zh="随机顺序能否运行（或死锁）与参考模拟一致")
def test_random_orders_run_or_deadlock_like_the_oracle(record_property):
    ran = stuck = 0
    for case, sched, text, want in random_orders():
        if want is None:
            stuck += 1
            expect_value_error(lambda: pp_sim.simulate(sched), f"simulate([{text}])",
                               say("this order deadlocks", zh="这个顺序会死锁"))
            continue
        ran += 1
        sim = read(pp_sim.simulate(sched, tf=1.0, tb=2.0))
        where = f"random order #{case} [{text}]"
        try:
            check_against_oracle(sim, sched, 1.0, 2.0, where)
        except AssertionError:
            attach(record_property, sim, f"{where} (your simulate)")
            raise
    assert ran >= 10 and stuck >= 10, (ran, stuck)  # the seed gives both kinds of cases


MALFORMED = [
    ([], "no stages"),
    ([[]], "no operations"),
    ([ops("F0 B0"), [("F", 0), ("X", 0)]], "unknown op 'X'"),
    ([[("F", 0), ("B", -1)]], "negative micro-batch"),
    ([[("F", 0.0), ("B", 0.0)]], "micro-batch is not an int"),
    ([ops("F0 F0 B0")], "F0 twice on a stage"),
    ([ops("F0 F1 B0 B1"), ops("F0 B0")], "stage 1 misses micro-batch 1"),
    ([ops("F0 F1 B0")], "F1 has no backward"),
    ([ops("F0 B0 B0")], "B0 twice on a stage"),
    ([[("F", -1), ("B", -1)]], "micro-batch -1 on both F and B"),
    ([[("F", True), ("B", True)]], "micro-batch True (a bool, not an int) on both F and B"),
    ([[("F", 0, 0), ("B", 0, 0)]], "operations of three items"),
    ([ops("F0 F1 B0"), ops("F0 B0 F1 B1")], "stage 0 runs F1 but not B1"),
]


MALFORMED_ZH = {  # the reasons above in Chinese (the English ones are the test ids)
    "no stages": "没有 stage",
    "no operations": "没有操作",
    "unknown op 'X'": "未知的操作 'X'",
    "negative micro-batch": "负的微批次编号",
    "micro-batch is not an int": "微批次编号不是 int",
    "F0 twice on a stage": "一个 stage 上有两次 F0",
    "stage 1 misses micro-batch 1": "stage 1 缺少微批次 1",
    "F1 has no backward": "F1 没有反向",
    "B0 twice on a stage": "一个 stage 上有两次 B0",
    "micro-batch -1 on both F and B": "F 和 B 上都是微批次 -1",
    "micro-batch True (a bool, not an int) on both F and B": "F 和 B 上都是微批次 True（一个 bool，不是 int）",
    "operations of three items": "有三项的操作",
    "stage 0 runs F1 but not B1": "stage 0 运行了 F1 却没有运行 B1",
}


@pytest.mark.title(zh="格式错误的调度抛出 ValueError")
@pytest.mark.parametrize("sched, why", MALFORMED, ids=[why for _, why in MALFORMED])
def test_malformed_schedules_raise_value_error(sched, why):
    diagnoses = {
        # the schedule's only defect is the repeated B0; say so only when a repeated F0 is rejected
        "B0 twice on a stage": lambda: (
            say(" (likely mistake: a repeated forward, F0 F0 B0, is rejected but a repeated backward is not: no "
                "operation may be listed twice on a stage)",
                zh="（可能的错误：重复的前向 F0 F0 B0 会被拒绝，重复的反向却不会：一个 stage 上的任何操作"
                   "都不能列出两次）")
            if _raises_value_error(lambda: pp_sim.simulate([ops("F0 F0 B0")])) else ""),
        # the schedule's only defect is the negative micro-batch number
        "micro-batch -1 on both F and B": lambda: say(
            " (likely mistake: a negative micro-batch number is accepted: i must be an int >= 0)",
            zh="（可能的错误：负的微批次编号被接受了：i 必须是 >= 0 的 int）"),
    }
    expect_value_error(lambda: pp_sim.simulate(sched), f"simulate({sched!r})", say(why, zh=MALFORMED_ZH[why]),
                       diagnoses.get(why))


BAD_DURATIONS = [
    ("tf", 0.0), ("tb", -2.0), ("tf", -1.0), ("tf", float("nan")), ("tf", "1"),
    ("tb", True), ("tf", False), ("tb", False), ("tf", float("inf")), ("tf", float("-inf")), ("tb", float("nan")),
    ("tb", "2"), ("tb", 0),
]


@pytest.mark.title(zh="tf 和 tb 的检查相同：每个坏值都分别在两者上试（另一个取默认值）")
@pytest.mark.parametrize("which, value", BAD_DURATIONS,
                         ids=[shown(**{which: value}) for which, value in BAD_DURATIONS])
def test_bad_durations_raise_value_error(which, value):
    """tf and tb get the same checks: each bad value is tried on each of them (the other left at its default)."""
    sched = build("1f1b", 2, 2)
    other = "tb" if which == "tf" else "tf"

    def diagnose() -> str:
        if not _raises_value_error(lambda: pp_sim.simulate(sched, **{other: value})):
            return ""
        return say(f" (likely mistake: simulate(..., {other}={value!r}) raises ValueError but this call does not: "
                   f"check {which} as you check {other})",
                   zh=f"（可能的错误：simulate(..., {other}={value!r}) 会抛出 ValueError，而这次调用不会："
                      f"像检查 {other} 那样检查 {which}）")

    expect_value_error(lambda: pp_sim.simulate(sched, **{which: value}), f"simulate(<1F1B p=2 m=2>, {which}={value!r})",
                     say("tf and tb must be positive numbers", zh="tf 和 tb 必须是正数"), diagnose)


def _result(kind, p, m, tf=1.0, tb=2.0):
    timeline, total, bubble, peaks = oracle_simulate(build(kind, p, m), tf, tb)
    return pp_sim.SimResult(timeline=timeline, total=total, bubble=bubble, peak_activations=peaks), timeline, total


@pytest.mark.title(zh="画出的时间线符合约定的格式")
@pytest.mark.parametrize("kind, p, m, tf, tb, unit", [
    ("1f1b", 4, 6, 1.0, 2.0, 1.0),     # the chapter's picture
    ("1f1b", 3, 10, 1.0, 2.0, 1.0),    # micro-batches 0..9: width 2
    ("1f1b", 3, 11, 1.0, 2.0, 1.0),    # micro-batch 10: width 3
    ("gpipe", 2, 101, 1.0, 1.0, 1.0),  # micro-batch 100: width 4
    ("1f1b", 11, 3, 1.0, 2.0, 1.0),    # stage 10: stage numbers right-justified
    ("1f1b", 3, 4, 0.5, 1.25, 0.25),   # float durations on a finer grid
    ("1f1b", 3, 4, 0.5, 1.25, 0.5),    # blocks not aligned with the cells: midpoint rule
    ("gpipe", 2, 3, 2.0, 4.0, 2.0),
    ("1f1b", 2, 2, 1.0, 2.0, 2.0),     # T = 9 is not a multiple of the unit: n = 5 cells, the last one idle
    ("1f1b", 2, 2, 0.3, 0.6, 0.3),     # T / unit = 9.000000000000002 in floats: still n = 9 cells
    ("1f1b", 10, 2, 1.0, 2.0, 1.0),    # stages 0..9: one digit, not the two digits of p = 10
])
def test_render_matches_the_encoding(record_property, kind, p, m, tf, tb, unit):
    res, timeline, total = _result(kind, p, m, tf, tb)
    want = oracle_render(timeline, total, unit)
    got = pp_sim.render(res, unit=unit)
    assert isinstance(got, str), say(f"render() must return a str, got {type(got).__name__}",
                                     zh=f"render() 必须返回一个 str，实际得到 {type(got).__name__}")
    if got != want:
        _diagnose_render(got, timeline, total, unit, kind, p, m)
    got_lines, want_lines = got.split("\n"), want.split("\n")
    assert len(got_lines) == len(want_lines), say(
        f"render() of {kind} p={p} m={m}: expected {len(want_lines)} lines (one per stage, no trailing "
        f"newline), got {len(got_lines)}",
        zh=f"{kind} p={p} m={m} 的 render()：预期 {len(want_lines)} 行（每个 stage 一行，末尾没有换行），"
           f"实际 {len(got_lines)} 行")
    for s, (g, w) in enumerate(zip(got_lines, want_lines)):
        assert g == w, say(f"render() of {kind} p={p} m={m} (tf={tf:g}, tb={tb:g}, unit={unit:g}), stage {s}:\n"
                           f"expected {w[:160]!r}\ngot      {g[:160]!r}",
                           zh=f"{kind} p={p} m={m}（tf={tf:g}, tb={tb:g}, unit={unit:g}）的 render()，stage {s}：\n"
                              f"预期 {w[:160]!r}\n实际 {g[:160]!r}")


def _diagnose_render(got, timeline, total, unit, kind, p, m):
    """Raise with a diagnosis when `got` is exactly the picture of a known mistake; else return."""
    where = f"render() of {kind} p={p} m={m} (T = {total!r}, unit={unit:g})"
    cells = 0
    while cells * unit < total - 1e-9:
        cells += 1
    ratio = total / unit
    if ratio != cells and got == oracle_render(timeline, total, unit, cells=math.floor(ratio)):
        raise AssertionError(say(f"{where}: expected {cells} cells per line, got {math.floor(ratio)} (likely mistake: "
                                 f"the number of cells is T / unit = {ratio:g} rounded down; n is the smallest with "
                                 f"n * unit >= T - 1e-9, so the last, partly covered cell is drawn too)",
                                 zh=f"{where}：预期每行 {cells} 格，实际 {math.floor(ratio)} 格（可能的错误：格数是 "
                                    f"T / unit = {ratio:g} 向下取整的结果；n 是满足 n * unit >= T - 1e-9 的最小值，"
                                    f"所以最后那个只被部分覆盖的格也要画出来）"))
    if ratio > cells and got == oracle_render(timeline, total, unit, cells=cells + 1):
        raise AssertionError(say(f"{where}: expected {cells} cells per line, got {cells + 1} (likely mistake: "
                                 f"T / unit = {ratio!r} is {cells} up to rounding error: n is the smallest with "
                                 f"n * unit >= T - 1e-9, the 1e-9 keeps float noise from adding a cell)",
                                 zh=f"{where}：预期每行 {cells} 格，实际 {cells + 1} 格（可能的错误：T / unit = "
                                    f"{ratio!r} 在舍入误差范围内就是 {cells}：n 是满足 n * unit >= T - 1e-9 的最小值，"
                                    f"这个 1e-9 让浮点误差不会多出一格）"))
    digits = len(str(len(timeline) - 1))
    if len(str(len(timeline))) != digits and got == oracle_render(timeline, total, unit,
                                                                  stage_width=len(str(len(timeline)))):
        first = got.split("\n")[0]
        raise AssertionError(say(f"{where}: expected lines starting 'stage {0:>{digits}} |', got {first[:12]!r} "
                                 f"(likely mistake: stage numbers padded to the width of p = {len(timeline)}; they are "
                                 f"padded to the width of p - 1 = {len(timeline) - 1}, the largest stage number)",
                                 zh=f"{where}：预期各行以 'stage {0:>{digits}} |' 开头，实际是 {first[:12]!r}"
                                    f"（可能的错误：stage 编号按 p = {len(timeline)} 的位数补齐了宽度；应当按最大的 "
                                    f"stage 编号 p - 1 = {len(timeline) - 1} 的位数补齐）"))


@pytest.mark.title(zh="画图拒绝非正的时间单位")
@pytest.mark.parametrize("unit", [0.0, -1.0, float("nan"), float("-inf")])
def test_render_rejects_a_non_positive_unit(unit):
    res, _, _ = _result("1f1b", 2, 2)

    def diagnose() -> str:
        if not _raises_value_error(lambda: pp_sim.simulate(build("1f1b", 2, 2), tf=unit)):
            return ""
        return say(f" (likely mistake: simulate(..., tf={unit:g}) raises ValueError but render(..., unit={unit:g}) "
                   f"does not: unit is a positive number in the same sense as tf and tb)",
                   zh=f"（可能的错误：simulate(..., tf={unit:g}) 会抛出 ValueError，而 render(..., unit={unit:g}) "
                      f"不会：unit 是正数，与 tf 和 tb 的含义相同）")

    expect_value_error(lambda: pp_sim.render(res, unit=unit), f"render(result, unit={unit:g})",
                       say("unit must be a positive number", zh="unit 必须是正数"), diagnose)


def _raises_value_error(call) -> bool:
    try:
        call()
    except ValueError:
        return True
    except Exception:  # noqa: BLE001 - only a ValueError counts as rejecting the input
        return False
    return False


@pytest.mark.title(zh="m = 12 时的 render(simulate(...))：读回的格与时间线一致")
def test_render_of_simulate_round_trip(record_property):
    """render(simulate(...)) for m = 12: the cells read back as the timeline."""
    sched = build("1f1b", 3, 12)
    sim = run(record_property, sched, 1.0, 2.0, "1F1B, p=3, m=12")
    check_against_oracle(sim, sched, 1.0, 2.0, "1F1B p=3 m=12")
    text = pp_sim.render(pp_sim.simulate(sched))
    timeline, total, _, _ = oracle_simulate(sched, 1.0, 2.0)
    assert text == oracle_render(timeline, total), say(
        f"render(simulate(<1F1B orders, p=3, m=12>)):\nexpected\n{oracle_render(timeline, total)}\ngot\n{text}",
        zh=f"render(simulate(<1F1B 顺序, p=3, m=12>))：\n预期\n{oracle_render(timeline, total)}\n实际\n{text}")
