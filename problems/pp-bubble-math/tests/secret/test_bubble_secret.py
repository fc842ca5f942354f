"""Secret tests for pp-bubble-math: more sizes, hard rounding boundaries, more input checks."""

from __future__ import annotations

import math
import re
from fractions import Fraction

import _pipeline_sim as sim  # lives in tests/public
import pytest

from judge.lang import say


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


def _expect(what: str, got, expected: Fraction, wrong: dict[str, Fraction]) -> None:
    assert got is not None, say(f"{what}: expected {float(expected):.6g}, got None",
                                zh=f"{what}：预期 {float(expected):.6g}，实际得到 None")
    got_f, exp_f = float(got), float(expected)
    ok = _close(got_f, exp_f)
    if not ok:
        reason = next((text for text, value in wrong.items() if _close(got_f, float(value))), "")
        raise AssertionError(say(f"{what}: expected {exp_f:.6g}, got {got_f:.6g}" + (f" ({reason})" if reason else ""),
                                 zh=f"{what}：预期 {exp_f:.6g}，实际 {got_f:.6g}" + (f"（{reason}）" if reason else "")))


PS = (1, 2, 3, 5, 7, 8)  # every grid test holds p = 1 (no bubble) and larger p


@pytest.mark.title(zh="气泡：多组规模")
@pytest.mark.parametrize("m", [1, 2, 3, 7, 16, 31, 32])
def test_bubble_grid(m):
    import bubble_math

    for p in PS:
        frac, over = Fraction(p - 1, m + p - 1), Fraction(p - 1, m)
        _expect(f"bubble_fraction(p={p}, m={m})", bubble_math.bubble_fraction(p, m), frac,
                {say("that is the bubble over the ideal time, (p - 1) / m", zh="那是气泡与理想时间之比，(p - 1) / m"): over})
        _expect(f"bubble_over_ideal(p={p}, m={m})", bubble_math.bubble_over_ideal(p, m), over,
                {say("that is the fraction of the total time, (p - 1) / (m + p - 1)",
                     zh="那是占总时间的比例，(p - 1) / (m + p - 1)"): frac})


@pytest.mark.title(zh="交错调度：多组规模")
@pytest.mark.parametrize("m", [1, 2, 3, 7, 16, 31, 32])
def test_interleaved_grid(m):
    import bubble_math

    for p in PS:
        frac, over = Fraction(p - 1, m + p - 1), Fraction(p - 1, m)
        for v in (1, 2, 3, 4):
            ifrac, iover = Fraction(p - 1, v * m + p - 1), Fraction(p - 1, v * m)
            _expect(f"interleaved_bubble_fraction(p={p}, m={m}, v={v})",
                    bubble_math.interleaved_bubble_fraction(p, m, v), ifrac,
                    {say("that is plain 1F1B, not divided by v", zh="那是普通的 1F1B，没有除以 v"): frac,
                     say("that is the bubble over the ideal time", zh="那是气泡与理想时间之比"): iover})
            _expect(f"interleaved_bubble_over_ideal(p={p}, m={m}, v={v})",
                    bubble_math.interleaved_bubble_over_ideal(p, m, v), iover,
                    {say("that is plain 1F1B, not divided by v", zh="那是普通的 1F1B，没有除以 v"): over,
                     say("that is the fraction of the total", zh="那是占总时间的比例"): ifrac})


@pytest.mark.title(zh="与模拟器对照：更多规模")
@pytest.mark.parametrize("kind", ["gpipe", "1f1b"])
@pytest.mark.parametrize("p,m", [(5, 3), (5, 16), (8, 8), (8, 12)])
def test_simulator_more_sizes(kind, p, m, record_property):
    import bubble_math

    run = sim.simulate(kind, p, m)
    record_property("timeline", run.timeline(f"{kind}, p={p}, m={m}"))
    idle, total, busy = run.idle(0), run.total, run.busy[0]
    _expect(say(f"{kind} p={p} m={m}: simulator idle {idle} of total {total}, so bubble_fraction",
                zh=f"{kind} p={p} m={m}：模拟器测得总时间 {total} 中空闲 {idle}，所以 bubble_fraction"),
            bubble_math.bubble_fraction(p, m), idle / total,
            {say("that is idle / busy", zh="那是 idle / busy"): idle / busy})
    _expect(say(f"{kind} p={p} m={m}: simulator idle {idle} for busy {busy}, so bubble_over_ideal",
                zh=f"{kind} p={p} m={m}：模拟器测得忙碌 {busy} 时空闲 {idle}，所以 bubble_over_ideal"),
            bubble_math.bubble_over_ideal(p, m), idle / busy,
            {say("that is idle / total", zh="那是 idle / total"): idle / total})


@pytest.mark.title(zh="激活峰值与模拟器对照：更多规模")
@pytest.mark.parametrize("kind", ["gpipe", "1f1b"])
@pytest.mark.parametrize("p,m", [(5, 3), (5, 16), (8, 8), (8, 12), (1, 4)])
def test_simulator_more_sizes_peaks(kind, p, m, record_property):
    import bubble_math

    run = sim.simulate(kind, p, m)
    record_property("timeline", run.timeline(f"{kind}, p={p}, m={m}"))
    got = [bubble_math.peak_activations(kind, p, m, s) for s in range(p)]
    ok = got == run.peak
    assert ok, say(f"{kind} p={p} m={m}: simulator peaks per stage {run.peak}, peak_activations gave {got}",
                   zh=f"{kind} p={p} m={m}：模拟器测得各 stage 的峰值 {run.peak}，peak_activations 给出 {got}")


@pytest.mark.title(zh="交错调度与模拟器对照：更多规模")
@pytest.mark.parametrize("p,m,v", [(2, 6, 4), (3, 3, 3), (5, 10, 2), (8, 8, 2), (4, 12, 3)])
def test_interleaved_simulator_more_sizes(p, m, v, record_property):
    import bubble_math

    run = sim.simulate("interleaved", p, m, v)
    record_property("timeline", run.timeline(f"interleaved 1F1B, p={p}, m={m}, v={v}"))
    for r in range(p):
        idle, total, busy = run.idle(r), run.total, run.busy[r]
        plain_1f1b = say("that is plain 1F1B: divide the bubble time by v", zh="那是普通的 1F1B：要把气泡时间除以 v")
        _expect(say(f"interleaved p={p} m={m} v={v}: rank {r} idle {idle} of total {total}, so "
                    "interleaved_bubble_fraction",
                    zh=f"interleaved p={p} m={m} v={v}：rank {r} 在总时间 {total} 中空闲 {idle}，所以 "
                       "interleaved_bubble_fraction"), bubble_math.interleaved_bubble_fraction(p, m, v), idle / total,
                {plain_1f1b: Fraction(p - 1, m + p - 1),
                 say("that is idle / busy", zh="那是 idle / busy"): idle / busy})
        _expect(say(f"interleaved p={p} m={m} v={v}: rank {r} idle {idle} for busy {busy}, so "
                    "interleaved_bubble_over_ideal",
                    zh=f"interleaved p={p} m={m} v={v}：rank {r} 忙碌 {busy} 时空闲 {idle}，所以 "
                       "interleaved_bubble_over_ideal"), bubble_math.interleaved_bubble_over_ideal(p, m, v), idle / busy,
                {plain_1f1b: Fraction(p - 1, m),
                 say("that is idle / total", zh="那是 idle / total"): idle / total})


@pytest.mark.title(zh="交错调度每条链路的通信量与模拟器一致")
@pytest.mark.parametrize("p,m,v", [(2, 6, 4), (3, 3, 3), (5, 10, 2), (8, 8, 2), (4, 12, 3)])
def test_interleaved_link_volume_matches_simulator(p, m, v, record_property):
    import bubble_math

    run = sim.simulate("interleaved", p, m, v)
    record_property("timeline", run.timeline(f"interleaved 1F1B, p={p}, m={m}, v={v}"))
    counts = set(run.link_volume(p - 2).values())
    got = bubble_math.p2p_elements_per_microbatch(3, 2, 5, v)
    ok = counts == {got // 30} and got % 30 == 0
    assert ok, say(f"interleaved p={p} v={v}: each micro-batch makes {sorted(counts)} transfers over the link "
                   f"rank {p - 2} <-> rank {p - 1}, i.e. {[c * 30 for c in sorted(counts)]} elements for "
                   f"s*b*h = 30, but p2p_elements_per_microbatch(3, 2, 5, {v}) gave {got!r}",
                   zh=f"interleaved p={p} v={v}：每个微批次在链路 rank {p - 2} <-> rank {p - 1} 上传输 "
                      f"{sorted(counts)} 次，即 s*b*h = 30 时共 {[c * 30 for c in sorted(counts)]} 个元素，"
                      f"但 p2p_elements_per_microbatch(3, 2, 5, {v}) 给出 {got!r}")


def _defining_min(p: int, target: float) -> int:
    m = 1
    while (p - 1) / (m + p - 1) > target:
        m += 1
    return m


@pytest.mark.title(zh="最少微批次数：恰好在边界上的目标")
@pytest.mark.parametrize("p,target", [
    (10, 0.072), (12, 0.088), (7, 0.24), (13, 0.48), (4, 0.03), (7, 0.6), (8, 0.7), (11, 0.08), (10, 0.009),
])
def test_min_microbatches_hard_boundaries(p, target):
    import bubble_math

    expected = _defining_min(p, target)
    got = bubble_math.min_microbatches(p, target)
    ok = got == expected
    why = (say(f" (one too many: with m = {expected} the bubble is {p - 1}/{expected + p - 1}, exactly the target; "
               "a floating-point closed form can land just above an integer, so check the candidate against the "
               "inequality itself)",
               zh=f"（多了一个：m = {expected} 时气泡是 {p - 1}/{expected + p - 1}，恰好等于 target；"
                  "用浮点数计算的闭式公式可能略高于一个整数，所以要用不等式本身检验候选值）")
           if got == expected + 1 else "")
    assert ok, say(f"min_microbatches(p={p}, target={target}): expected {expected}, got {got!r}{why}",
                   zh=f"min_microbatches(p={p}, target={target})：预期 {expected}，实际 {got!r}{why}")


@pytest.mark.title(zh="最少微批次数：多组规模")
def test_min_microbatches_grid():
    import bubble_math

    for p in (1, 2, 3, 5, 8, 16):
        for k in range(1, 100, 7):
            target = k / 100
            expected = _defining_min(p, target)
            got = bubble_math.min_microbatches(p, target)
            ok = got == expected
            assert ok, say(f"min_microbatches(p={p}, target={target}): expected {expected}, got {got!r}: the "
                           f"smallest m >= 1 with (p - 1) / (m + p - 1) <= target",
                           zh=f"min_microbatches(p={p}, target={target})：预期 {expected}，实际 {got!r}："
                              f"应是满足 (p - 1) / (m + p - 1) <= target 的最小的 m >= 1")


@pytest.mark.title(zh="每个 stage 的激活峰值")
def test_peak_activations_all_stages():
    import bubble_math

    for p in (2, 5, 8):
        for m in (1, 3, 8, 20):
            gpipe = [bubble_math.peak_activations("gpipe", p, m, s) for s in range(p)]
            ofob = [bubble_math.peak_activations("1f1b", p, m, s) for s in range(p)]
            ok = gpipe == [m] * p and ofob == [min(p - s, m) for s in range(p)]
            assert ok, say(f"p={p} m={m}: expected GPipe peaks {[m] * p} and 1F1B peaks "
                           f"{[min(p - s, m) for s in range(p)]} (stage 0 first), got {gpipe} and {ofob}",
                           zh=f"p={p} m={m}：预期 GPipe 的峰值为 {[m] * p}，1F1B 的峰值为 "
                              f"{[min(p - s, m) for s in range(p)]}（stage 0 在前），实际为 {gpipe} 和 {ofob}")


@pytest.mark.title(zh="很大的点对点通信量也精确")
def test_p2p_large_values_exact():
    import bubble_math

    got = bubble_math.p2p_elements_per_microbatch(8192, 4, 12288, 4)
    expected = 2 * 4 * 8192 * 4 * 12288
    ok = got == expected
    msg = say(f"p2p_elements_per_microbatch(8192, 4, 12288, 4): expected {expected}, got {got!r}",
              zh=f"p2p_elements_per_microbatch(8192, 4, 12288, 4)：预期 {expected}，实际 {got!r}")
    if isinstance(got, (int, float)) and not isinstance(got, bool) and got == expected // 4:
        msg += say(" (with v chunks per rank a micro-batch crosses the link v times in each direction)",
                   zh="（每个 rank 有 v 个模型块时，一个微批次在每个方向上经过链路 v 次）")
    elif isinstance(got, float) and got == float(expected):
        msg += say(" (the right value, but as a float: return an int, computed with exact integer arithmetic)",
                   zh="（值是对的，但它是 float：请返回 int，用精确的整数运算计算）")
    elif isinstance(got, float) and math.isclose(got, expected, rel_tol=1e-6):
        msg += say(" (close but not exact: compute with integers, not floats)",
                   zh="（接近但不精确：用整数计算，不要用浮点数）")
    assert ok, msg


@pytest.mark.title(zh="超过 2**53 后 float 无法表示每个整数：只有整数运算仍然精确")
def test_p2p_exact_beyond_float_precision():
    """Past 2**53 a float can no longer hold every integer: only integer arithmetic stays exact."""
    import bubble_math

    s, b, h, v = 2**20 + 1, 2**20 + 3, 2**14 + 1, 3
    expected = 2 * v * s * b * h  # about 1.1e17, above 2**53
    got = bubble_math.p2p_elements_per_microbatch(s, b, h, v)
    ok = type(got) is int and got == expected
    msg = say(f"p2p_elements_per_microbatch({s}, {b}, {h}, {v}): expected the int {expected}, got {got!r}",
              zh=f"p2p_elements_per_microbatch({s}, {b}, {h}, {v})：预期 int {expected}，实际 {got!r}")
    if type(got) is int and got != expected and got == int(float(expected)):
        msg += say(" (that is the exact count rounded to a float: a step of the computation goes through a float, "
                   "such as a / division; compute with integers only)",
                   zh="（那是把精确的个数舍入成 float 后的值：计算中有一步经过了 float，例如 / 除法；"
                      "只用整数计算）")
    assert ok, msg


def _names_argument(message: str, arg: str) -> bool:
    return re.search(rf"(?<![A-Za-z0-9_]){re.escape(arg)}(?![A-Za-z0-9_])", message) is not None


# (function, arguments, the argument that is wrong, as the signature spells it)
MORE_INVALID = [
    ("bubble_over_ideal", (0, 3), "p"), ("interleaved_bubble_over_ideal", (4, 8, 0), "v"),
    ("interleaved_bubble_over_ideal", (0, 8, 1), "p"), ("interleaved_bubble_fraction", (4, 0, 2), "m"),
    ("peak_activations", ("gpipe", 4, 8, -1), "s"), ("peak_activations", ("1f1b", 4, 8, -1), "s"),
    ("peak_activations", ("gpipe", 2, 3, 7), "s"), ("peak_activations", ("1f1b", 0, 8, 0), "p"),
    ("peak_activations", ("gpipe", 0, 8, 0), "p"), ("peak_activations", ("gpipe", 4, 0, 0), "m"),
    ("peak_activations", ("1f1b", 4, 0, 0), "m"), ("peak_activations", ("interleaved", 4, 8, 0), "kind"),
    ("min_microbatches", (4, -0.1), "target"), ("min_microbatches", (4, 1.5), "target"),
    ("min_microbatches", (1, 1.0), "target"), ("min_microbatches", (1, -0.5), "target"),
    ("bubble_fraction", (1, 0), "m"), ("bubble_over_ideal", (1, 0), "m"),
    ("interleaved_bubble_fraction", (1, 4, 0), "v"), ("interleaved_bubble_over_ideal", (1, 0, 2), "m"),
    ("p2p_elements_per_microbatch", (0, 1, 4096), "s"), ("p2p_elements_per_microbatch", (1024, 0, 4096), "b"),
    ("p2p_elements_per_microbatch", (1024, 1, -1), "h"),
]


@pytest.mark.title(zh="更多非法输入")
@pytest.mark.parametrize("name,args,arg", MORE_INVALID, ids=[f"{name}{args!r} (wrong {arg})" for name, args, arg in MORE_INVALID])
def test_more_invalid_input(name, args, arg):
    import bubble_math

    call = f"{name}{args!r}"
    try:
        result = getattr(bubble_math, name)(*args)
    except ValueError as exc:
        assert _names_argument(str(exc), arg), say(
            f"{call} raised ValueError({str(exc)!r}), which does not name the argument {arg!r} that is wrong; "
            f"say which argument is wrong and why",
            zh=f"{call} 抛出了 ValueError({str(exc)!r})，其中没有写出出错的参数 {arg!r}；"
               f"请说明哪个参数不对、为什么不对")
        return
    except Exception as exc:  # noqa: BLE001 - reported to the learner
        raise AssertionError(say(f"{call} should raise ValueError, but raised {type(exc).__name__}: {exc}",
                                 zh=f"{call} 应抛出 ValueError，却抛出了 {type(exc).__name__}: {exc}")) from None
    raise AssertionError(say(f"{call} should raise ValueError, but returned {result!r}",
                             zh=f"{call} 应抛出 ValueError，却返回了 {result!r}"))


# ---------------------------------------------------------------------------------------------
# moved from the public tests: the simulator (_pipeline_sim.py) plays the very schedules other
# problems ask the learner to write, so it is not shown to learners.


def _check_value(what: str, got, expected: float, hints: list[tuple[float, str]]) -> None:
    """Assert ``got`` is close to ``expected``; otherwise explain, naming a known mistake if it fits."""
    assert got is not None, say(f"{what}: expected {expected!r}, got None (did you forget to return?)",
                                zh=f"{what}：预期 {expected!r}，实际得到 None（是不是忘了 return？）")
    got = float(got)
    if _close(got, expected):
        return
    reason = next((text for value, text in hints if _close(got, value)), "")
    msg = say(f"{what}: expected {expected:.6g}, got {got:.6g}", zh=f"{what}：预期 {expected:.6g}，实际 {got:.6g}")
    assert False, msg + (say(f" ({reason})", zh=f"（{reason}）") if reason else "")


def _frac_str(x) -> str:
    return f"{x.numerator}/{x.denominator}" if x.denominator != 1 else str(x.numerator)


def _swapped_text() -> str:
    return say("you swapped the two: idle / total is the fraction, idle / busy is over ideal",
               zh="你把两者弄反了：idle / total 是占比，idle / busy 是与理想时间之比")


def _is_over_ideal() -> str:
    return say("that is idle / busy, the bubble over the ideal time; the fraction of the total divides by the total",
               zh="那是 idle / busy，即气泡与理想时间之比；占总时间的比例要除以总时间")


def _is_fraction() -> str:
    return say("that is idle / total, the fraction of the total time; the bubble over the ideal divides by the busy "
               "time", zh="那是 idle / total，即占总时间的比例；气泡与理想时间之比要除以忙碌时间")


def _swapped(fraction, over, args: tuple, of_total: float, of_busy: float) -> bool:
    """Whether the learner's fraction gives idle / busy AND its over-ideal gives idle / total."""
    try:
        return _close(float(fraction(*args)), of_busy) and _close(float(over(*args)), of_total)
    except Exception:  # noqa: BLE001 - the learner's code may fail here too; then no diagnosis
        return False


@pytest.mark.title(zh="气泡与模拟器一致")
@pytest.mark.parametrize("kind", ["gpipe", "1f1b"])
@pytest.mark.parametrize("p,m", [(2, 1), (2, 3), (3, 5), (4, 4), (4, 8)])
def test_bubble_matches_simulator(kind, p, m, record_property):
    import bubble_math

    run = sim.simulate(kind, p, m)
    name = "GPipe" if kind == "gpipe" else "1F1B"
    record_property("timeline", run.timeline(f"{name}, p={p}, m={m} (F and B take 1 unit)"))
    for r in range(p):
        idle, total, busy = run.idle(r), run.total, run.busy[r]
        of_total, of_busy = float(idle / total), float(idle / busy)
        swapped = _swapped(bubble_math.bubble_fraction, bubble_math.bubble_over_ideal, (p, m), of_total, of_busy)
        _check_value(
            say(f"{name} p={p} m={m}: the simulator measures on stage {r} idle {_frac_str(idle)} of a total "
                f"{_frac_str(total)}, so bubble_fraction",
                zh=f"{name} p={p} m={m}：模拟器测得 stage {r} 在总时间 {_frac_str(total)} 中空闲 "
                   f"{_frac_str(idle)}，所以 bubble_fraction"), bubble_math.bubble_fraction(p, m), of_total,
            [(of_busy, _swapped_text() if swapped else _is_over_ideal())])
        _check_value(
            say(f"{name} p={p} m={m}: the simulator measures on stage {r} idle {_frac_str(idle)} for "
                f"{_frac_str(busy)} of work, so bubble_over_ideal",
                zh=f"{name} p={p} m={m}：模拟器测得 stage {r} 在 {_frac_str(busy)} 的工作量下空闲 "
                   f"{_frac_str(idle)}，所以 bubble_over_ideal"), bubble_math.bubble_over_ideal(p, m), of_busy,
            [(of_total, _swapped_text() if swapped else _is_fraction())])


@pytest.mark.title(zh="交错调度与模拟器一致")
@pytest.mark.parametrize("p,m,v", [(2, 2, 2), (2, 4, 3), (4, 4, 2), (4, 8, 2), (3, 6, 2), (4, 8, 4)])
def test_interleaved_matches_simulator(p, m, v, record_property):
    import bubble_math

    run = sim.simulate("interleaved", p, m, v)
    record_property("timeline", run.timeline(f"interleaved 1F1B, p={p}, m={m}, v={v} (chunk F/B take 1/{v})"))
    plain = sim.simulate("1f1b", p, m)
    no_v_text = say("that is what plain 1F1B measures: interleaving divides the bubble time by v",
                    zh="这是普通 1F1B 测得的值：交错会把气泡时间除以 v")
    no_v = [(float(plain.idle(0) / plain.total), no_v_text), (float(plain.idle(0) / plain.busy[0]), no_v_text)]
    for r in range(p):
        idle, total, busy = run.idle(r), run.total, run.busy[r]
        of_total, of_busy = float(idle / total), float(idle / busy)
        swapped = _swapped(bubble_math.interleaved_bubble_fraction, bubble_math.interleaved_bubble_over_ideal,
                           (p, m, v), of_total, of_busy)
        _check_value(
            say(f"interleaved p={p} m={m} v={v}: the simulator measures on rank {r} idle {_frac_str(idle)} of a "
                f"total {_frac_str(total)}, so interleaved_bubble_fraction",
                zh=f"interleaved p={p} m={m} v={v}：模拟器测得 rank {r} 在总时间 {_frac_str(total)} 中空闲 "
                   f"{_frac_str(idle)}，所以 interleaved_bubble_fraction"),
            bubble_math.interleaved_bubble_fraction(p, m, v), of_total,
            [(of_busy, _swapped_text() if swapped else _is_over_ideal())] + no_v)
        _check_value(
            say(f"interleaved p={p} m={m} v={v}: the simulator measures on rank {r} idle {_frac_str(idle)} for "
                f"{_frac_str(busy)} of work, so interleaved_bubble_over_ideal",
                zh=f"interleaved p={p} m={m} v={v}：模拟器测得 rank {r} 在 {_frac_str(busy)} 的工作量下空闲 "
                   f"{_frac_str(idle)}，所以 interleaved_bubble_over_ideal"),
            bubble_math.interleaved_bubble_over_ideal(p, m, v), of_busy,
            [(of_total, _swapped_text() if swapped else _is_fraction())] + no_v)


@pytest.mark.title(zh="激活峰值与模拟器一致")
@pytest.mark.parametrize("kind", ["gpipe", "1f1b"])
@pytest.mark.parametrize("p,m", [(2, 1), (4, 2), (4, 4), (4, 8)])
def test_peak_matches_simulator(kind, p, m, record_property):
    import bubble_math

    run = sim.simulate(kind, p, m)
    name = "GPipe" if kind == "gpipe" else "1F1B"
    record_property("timeline", run.timeline(f"{name}, p={p}, m={m}"))
    measured = run.peak
    got = [bubble_math.peak_activations(kind, p, m, s) for s in range(p)]
    ok = got == measured
    assert ok, say(
        f"{name} p={p} m={m}: counting forwards done minus backwards done on each stage, the simulator "
        f"finds peaks {measured} (stage 0 first), your peak_activations gave {got}",
        zh=f"{name} p={p} m={m}：在每个 stage 上数已完成的前向减去已完成的反向，模拟器得到的峰值是 "
           f"{measured}（stage 0 在前），你的 peak_activations 给出 {got}")


@pytest.mark.title(zh="点对点通信量与模拟器一致")
@pytest.mark.parametrize("p,v", [(2, 1), (4, 1), (2, 2), (4, 3)])
def test_p2p_matches_simulator(p, v, record_property):
    import bubble_math

    m, s, b, h = p, 8, 2, 4
    kind = "1f1b" if v == 1 else "interleaved"
    run = sim.simulate(kind, p, m, v)
    record_property("timeline", run.timeline(f"{kind}, p={p}, m={m}, v={v}"))
    got = bubble_math.p2p_elements_per_microbatch(s, b, h, v)
    for r in range(p - 1):
        for mb, messages in run.link_volume(r).items():
            ok = got == messages * s * b * h
            assert ok, say(
                f"{kind} p={p} v={v}: on the link rank {r} <-> rank {r + 1} micro-batch {mb} makes {messages} "
                f"transfers (activations forward + gradients backward) of s*b*h = {s * b * h} elements = "
                f"{messages * s * b * h}, but p2p_elements_per_microbatch({s}, {b}, {h}, {v}) gave {got!r}",
                zh=f"{kind} p={p} v={v}：在链路 rank {r} <-> rank {r + 1} 上，微批次 {mb} 传输 {messages} 次"
                   f"（向前传的激活 + 向后传的梯度），每次 s*b*h = {s * b * h} 个元素，共 "
                   f"{messages * s * b * h} 个，但 p2p_elements_per_microbatch({s}, {b}, {h}, {v}) 给出 {got!r}")


# ---------------------------------------------------------------------------------------------
# every closed form against the same simulated schedules: one consistent model of the pipeline


@pytest.mark.title(zh="每个闭式公式对照同一批模拟的调度")
@pytest.mark.parametrize("p,m", [(2, 2), (2, 6), (3, 2), (3, 3), (3, 9), (4, 4), (4, 8), (5, 3), (5, 10)])
def test_closed_forms_match_the_simulated_schedules(p, m, record_property):
    """Every closed form against the same simulated schedules

    For one (p, m): GPipe, 1F1B and interleaved 1F1B (v = 2) played by the simulator, and every
    closed form compared with what it measures (bubble, peaks, link volume)."""
    import bubble_math

    v = 2
    runs = {kind: sim.simulate(kind, p, m) for kind in ("gpipe", "1f1b")}
    if m % p == 0:  # interleaving needs m % p == 0; fewer micro-batches than stages check GPipe's and 1F1B's forms
        runs["interleaved"] = sim.simulate("interleaved", p, m, v)
    record_property("timeline", runs["1f1b"].timeline(f"1F1B, p={p}, m={m}"))
    where = f"p={p} m={m}"
    for kind in ("gpipe", "1f1b"):
        run = runs[kind]
        idle, total, busy = run.idle(0), run.total, run.busy[0]
        _expect(say(f"{kind} {where}: the simulator measures idle {_frac_str(idle)} of a total {_frac_str(total)}, "
                    "so bubble_fraction",
                    zh=f"{kind} {where}：模拟器测得总时间 {_frac_str(total)} 中空闲 {_frac_str(idle)}，"
                       "所以 bubble_fraction"), bubble_math.bubble_fraction(p, m), idle / total,
                {say("that is idle / busy, the bubble over the ideal time",
                     zh="那是 idle / busy，即气泡与理想时间之比"): idle / busy})
        _expect(say(f"{kind} {where}: the simulator measures idle {_frac_str(idle)} for {_frac_str(busy)} of work, "
                    "so bubble_over_ideal",
                    zh=f"{kind} {where}：模拟器测得 {_frac_str(busy)} 的工作量下空闲 {_frac_str(idle)}，"
                       "所以 bubble_over_ideal"), bubble_math.bubble_over_ideal(p, m), idle / busy,
                {say("that is idle / total, the fraction of the total time",
                     zh="那是 idle / total，即占总时间的比例"): idle / total})
        peaks = [bubble_math.peak_activations(kind, p, m, s) for s in range(p)]
        assert peaks == run.peak, say(f"{kind} {where}: the simulator finds peaks {run.peak} (stage 0 first), "
                                      f"peak_activations gave {peaks}",
                                      zh=f"{kind} {where}：模拟器得到的峰值是 {run.peak}（stage 0 在前），"
                                         f"peak_activations 给出 {peaks}")
    if "interleaved" not in runs:
        return
    run = runs["interleaved"]
    idle, total, busy = run.idle(0), run.total, run.busy[0]
    plain = runs["1f1b"]
    no_v_text = say("that is what plain 1F1B measures: interleaving divides the bubble time by v",
                    zh="这是普通 1F1B 测得的值：交错会把气泡时间除以 v")
    _expect(say(f"interleaved v={v} {where}: the simulator measures idle {_frac_str(idle)} of a total "
                f"{_frac_str(total)}, so interleaved_bubble_fraction",
                zh=f"interleaved v={v} {where}：模拟器测得总时间 {_frac_str(total)} 中空闲 {_frac_str(idle)}，"
                   f"所以 interleaved_bubble_fraction"), bubble_math.interleaved_bubble_fraction(p, m, v),
            idle / total, {no_v_text: plain.idle(0) / plain.total})
    _expect(say(f"interleaved v={v} {where}: the simulator measures idle {_frac_str(idle)} for {_frac_str(busy)} of "
                "work, so interleaved_bubble_over_ideal",
                zh=f"interleaved v={v} {where}：模拟器测得 {_frac_str(busy)} 的工作量下空闲 {_frac_str(idle)}，"
                   "所以 interleaved_bubble_over_ideal"), bubble_math.interleaved_bubble_over_ideal(p, m, v),
            idle / busy, {no_v_text: plain.idle(0) / plain.busy[0]})
    for chunks, played in ((1, runs["1f1b"]), (v, run)):
        counts = set(played.link_volume(0).values())
        got = bubble_math.p2p_elements_per_microbatch(3, 2, 5, chunks)
        assert counts == {got // 30} and got % 30 == 0, say(
            f"{where}, v={chunks}: each micro-batch makes {sorted(counts)} transfers over the link rank 0 <-> rank 1, "
            f"i.e. {[c * 30 for c in sorted(counts)]} elements for s*b*h = 30, but "
            f"p2p_elements_per_microbatch(3, 2, 5, {chunks}) gave {got!r}",
            zh=f"{where}，v={chunks}：每个微批次在链路 rank 0 <-> rank 1 上传输 {sorted(counts)} 次，"
               f"即 s*b*h = 30 时共 {[c * 30 for c in sorted(counts)]} 个元素，但 "
               f"p2p_elements_per_microbatch(3, 2, 5, {chunks}) 给出 {got!r}")
