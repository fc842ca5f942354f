"""Public tests for pp-bubble-math: the closed forms and the input checks.

(The hidden tests also compare the formulas with a simulator that plays the schedules.)
"""

from __future__ import annotations

import math
import re

import pytest

from judge.lang import say


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


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


# ---------------------------------------------------------------------------------------------
# GPipe / 1F1B bubble

def _swapped_text() -> str:
    return say("you swapped the two: bubble_fraction must give (p - 1) / (m + p - 1), the idle share of the TOTAL "
               "time, and bubble_over_ideal (p - 1) / m, the idle time relative to the IDEAL time",
               zh="你把两者弄反了：bubble_fraction 应当给出 (p - 1) / (m + p - 1)，即空闲时间占总时间的比例；"
                  "bubble_over_ideal 应当给出 (p - 1) / m，即空闲时间与理想时间之比")


def _swapped(p: int, m: int) -> bool:
    """Whether bubble_fraction gives (p - 1) / m AND bubble_over_ideal gives (p - 1) / (m + p - 1)."""
    import bubble_math

    try:
        return (_close(float(bubble_math.bubble_fraction(p, m)), (p - 1) / m)
                and _close(float(bubble_math.bubble_over_ideal(p, m)), (p - 1) / (m + p - 1)))
    except Exception:  # noqa: BLE001 - the learner's code may fail here too; then no diagnosis
        return False


@pytest.mark.title(zh="气泡占比")
@pytest.mark.parametrize("p,m", [(2, 1), (4, 4), (4, 12), (8, 8), (8, 32)])
def test_bubble_fraction(p, m):
    import bubble_math

    got = bubble_math.bubble_fraction(p, m)
    _check_value(f"bubble_fraction(p={p}, m={m})", got, (p - 1) / (m + p - 1), [
        ((p - 1) / m, _swapped_text() if _swapped(p, m) else
         say("that is (p - 1) / m, the bubble relative to the IDEAL time; the fraction of the "
             "TOTAL time divides by the total length m + p - 1",
             zh="那是 (p - 1) / m，即相对于理想时间的气泡；占总时间的比例要除以总长度 m + p - 1")),
        (m / (m + p - 1), say("that is the busy fraction m / (m + p - 1); the bubble is the idle part",
                              zh="那是忙碌时间的占比 m / (m + p - 1)；气泡是空闲的部分")),
        ((p - 1) / (m + p), say("the total is m + p - 1 time slots per phase, not m + p",
                                zh="每个阶段的总时间是 m + p - 1 个时间格，不是 m + p")),
        (p / (m + p - 1), say("the bubble has p - 1 slots, not p: the first stage starts right away",
                              zh="气泡有 p - 1 个时间格，不是 p 个：第一个 stage 立刻就开始")),
    ])


@pytest.mark.title(zh="气泡与理想时间之比")
@pytest.mark.parametrize("p,m", [(2, 1), (4, 4), (4, 12), (8, 8), (8, 2)])
def test_bubble_over_ideal(p, m):
    import bubble_math

    got = bubble_math.bubble_over_ideal(p, m)
    _check_value(f"bubble_over_ideal(p={p}, m={m})", got, (p - 1) / m, [
        ((p - 1) / (m + p - 1), _swapped_text() if _swapped(p, m) else
         say("that is the fraction of the TOTAL time; relative to the ideal (bubble-free) time the denominator is "
             "just m",
             zh="那是占总时间的比例；与理想（无气泡）时间相比，分母只是 m")),
        (p / m, say("the bubble has p - 1 slots, not p", zh="气泡有 p - 1 个时间格，不是 p 个")),
    ])


# ---------------------------------------------------------------------------------------------
# interleaved 1F1B


@pytest.mark.title(zh="交错调度的气泡占比")
@pytest.mark.parametrize("p,m,v", [(4, 8, 1), (4, 8, 2), (4, 8, 4), (8, 8, 2), (8, 16, 3)])
def test_interleaved_bubble_fraction(p, m, v):
    import bubble_math

    got = bubble_math.interleaved_bubble_fraction(p, m, v)
    _check_value(f"interleaved_bubble_fraction(p={p}, m={m}, v={v})", got, (p - 1) / (v * m + p - 1), [
        ((p - 1) / (m + p - 1), say("that is plain 1F1B: interleaving shrinks the bubble time to (p - 1) / v "
                                    "units while the work stays m units",
                                    zh="那是普通的 1F1B：交错把气泡时间缩短到 (p - 1) / v 个单位，"
                                       "而工作量仍是 m 个单位")),
        ((p - 1) / (v * m), say("that is the bubble relative to the IDEAL time; the fraction of the TOTAL "
                                "time is (p - 1) / (v m + p - 1)",
                                zh="那是相对于理想时间的气泡；占总时间的比例是 (p - 1) / (v m + p - 1)")),
        ((p - 1) / (m + p - 1) / v, say("dividing the 1F1B fraction by v is not right: the total time "
                                        "shrinks too, so the fraction of the total is (p - 1) / (v m + p - 1)",
                                        zh="把 1F1B 的占比除以 v 是不对的：总时间也缩短了，所以占总时间的"
                                           "比例是 (p - 1) / (v m + p - 1)")),
    ])


@pytest.mark.title(zh="交错调度的气泡与理想时间之比")
@pytest.mark.parametrize("p,m,v", [(4, 8, 1), (4, 8, 2), (8, 16, 4), (8, 8, 3)])
def test_interleaved_bubble_over_ideal(p, m, v):
    import bubble_math

    got = bubble_math.interleaved_bubble_over_ideal(p, m, v)
    _check_value(f"interleaved_bubble_over_ideal(p={p}, m={m}, v={v})", got, (p - 1) / (v * m), [
        ((p - 1) / m, say("that is plain 1F1B: with v chunks per rank the bubble relative to the ideal "
                          "time is divided by v",
                          zh="那是普通的 1F1B：每个 rank 有 v 个模型块时，气泡与理想时间之比要除以 v")),
        ((p - 1) / (v * m + p - 1), say("that is the fraction of the TOTAL time; relative to the ideal "
                                        "time the denominator is v m",
                                        zh="那是占总时间的比例；与理想时间相比，分母是 v m")),
        (v * (p - 1) / m, say("the bubble is divided by v, not multiplied", zh="气泡要除以 v，而不是乘以 v")),
    ])


@pytest.mark.title(zh="每个 rank 只有一个模型块（v = 1）时，交错 1F1B 就是普通 1F1B")
@pytest.mark.parametrize("p,m", [(2, 2), (4, 8), (8, 8)])
def test_interleaved_with_v1_is_plain_1f1b(p, m):
    """With one chunk per rank (v = 1) interleaved 1F1B is plain 1F1B."""
    import bubble_math

    for name, want in (("interleaved_bubble_fraction", (p - 1) / (m + p - 1)),
                       ("interleaved_bubble_over_ideal", (p - 1) / m)):
        got = getattr(bubble_math, name)(p, m, 1)
        _check_value(say(f"{name}(p={p}, m={m}, v=1) (v = 1 is plain 1F1B)",
                         zh=f"{name}(p={p}, m={m}, v=1)（v = 1 就是普通的 1F1B）"), got, want, [])


# one stage has no bubble; two stages do (a function that always answers 0 is not right)
ONE_STAGE = [
    ("bubble_fraction", (1, 5), (2, 5), 1 / 6),
    ("bubble_over_ideal", (1, 3), (2, 3), 1 / 3),
    ("interleaved_bubble_fraction", (1, 4, 3), (2, 4, 3), 1 / 13),
    ("interleaved_bubble_over_ideal", (1, 4, 2), (2, 4, 2), 1 / 8),
]


@pytest.mark.title(zh="p = 1：没有等待，气泡为 0；p = 2 时则不为 0")
@pytest.mark.parametrize("name,one,two,want", ONE_STAGE, ids=[case[0] for case in ONE_STAGE])
def test_one_stage_has_no_bubble(name, one, two, want):
    """p = 1: nothing waits, the bubble is 0; with p = 2 it is not."""
    import bubble_math

    function = getattr(bubble_math, name)
    _check_value(say(f"{name}{one!r} (one stage: no stage ever waits)",
                     zh=f"{name}{one!r}（只有一个 stage：没有 stage 需要等待）"), function(*one), 0.0, [])
    _check_value(f"{name}{two!r}", function(*two), want, [])


# ---------------------------------------------------------------------------------------------
# peak activations


@pytest.mark.title(zh="激活峰值")
@pytest.mark.parametrize("kind,p,m,s,expected", [
    ("gpipe", 4, 8, 0, 8), ("gpipe", 4, 8, 3, 8), ("gpipe", 1, 5, 0, 5),
    ("1f1b", 4, 8, 0, 4), ("1f1b", 4, 8, 3, 1), ("1f1b", 4, 2, 0, 2), ("1f1b", 8, 32, 5, 3),
    ("1f1b", 1, 5, 0, 1),
])
def test_peak_activations(kind, p, m, s, expected):
    import bubble_math

    got = bubble_math.peak_activations(kind, p, m, s)
    ok = got == expected
    hint = "" if ok else _peak_hint(kind, p, m, s, got)
    assert ok, say(f"peak_activations({kind!r}, p={p}, m={m}, s={s}): expected {expected}, got {got!r}" + hint,
                   zh=f"peak_activations({kind!r}, p={p}, m={m}, s={s})：预期 {expected}，实际 {got!r}" + hint)


def _peak_hint(kind: str, p: int, m: int, s: int, got) -> str:
    """The likely mistake behind a wrong peak, when the learner's answers support it ('' otherwise)."""
    if kind == "gpipe":
        return say(" (GPipe runs all m forwards before any backward, so every stage holds all m)",
                   zh="（GPipe 在任何反向之前先运行全部 m 个前向，所以每个 stage 都保存全部 m 个）")
    if got == p - s and m < p - s:
        return say(f" (1F1B cannot hold more micro-batches than exist: with m = {m} take min(p - s, m))",
                   zh=f"（1F1B 保存的微批次不可能比实际存在的多：m = {m} 时取 min(p - s, m)）")
    if got == p - s - 1 and m >= p - s:
        return say(" (off by one: stage s does p - s - 1 warm-up forwards and then one more forward "
                   "before its first backward, so with m >= p - s it holds p - s)",
                   zh="（差了一个：stage s 在第一个反向之前先做 p - s - 1 个预热前向，再做一个前向，"
                      "所以 m >= p - s 时它保存 p - s 个）")
    if m > 1 and got == m and _all_stages(kind, p, m) == [m] * p:
        return say(" (that is GPipe's answer, m on every stage: 1F1B starts each stage's backwards after "
                   "min(p - s - 1, m) warm-up forwards and one more forward, so stage s holds min(p - s, m))",
                   zh="（那是 GPipe 的答案，每个 stage 都是 m：1F1B 的每个 stage 在 min(p - s - 1, m) 个预热前向"
                      "和再一个前向之后就开始反向，所以 stage s 保存 min(p - s, m) 个）")
    if p > 1 and _all_stages(kind, p, m) == [min(k + 1, m) for k in range(p)]:
        peaks = _all_stages(kind, p, m)
        return say(f" (reversed: your peaks grow with the stage index, {peaks} for stages 0..{p - 1}; "
                   "stage 0 waits longest for its first backward and holds the most, the last stage holds 1: "
                   "stage s holds min(p - s, m))",
                   zh=f"（反了：你的峰值随 stage 编号增大，stage 0..{p - 1} 依次是 {peaks}；"
                      "stage 0 等待第一个反向的时间最长，保存得最多，最后一个 stage 保存 1 个："
                      "stage s 保存 min(p - s, m) 个）")
    return say(" (1F1B: stage s holds at most min(p - s, m) micro-batches)",
               zh="（1F1B：stage s 最多保存 min(p - s, m) 个微批次）")


def _all_stages(kind: str, p: int, m: int) -> list:
    """The learner's peak_activations for every stage (None where it raises)."""
    import bubble_math

    out = []
    for k in range(p):
        try:
            out.append(bubble_math.peak_activations(kind, p, m, k))
        except Exception:  # noqa: BLE001 - the learner's code may fail here too; then no diagnosis
            out.append(None)
    return out


# ---------------------------------------------------------------------------------------------
# minimum number of micro-batches


@pytest.mark.title(zh="最少微批次数")
@pytest.mark.parametrize("p,target,expected", [
    (4, 0.5, 3),    # exact boundary: 3 / (3 + 3) == 0.5
    (4, 0.2, 12),   # exact boundary: 3 / 15 == 0.2 (a plain math.ceil of a float gives 13)
    (4, 0.6, 2),    # exact boundary: 3 / 5 == 0.6
    (8, 0.25, 21),  # exact boundary: 7 / 28 == 0.25
    (2, 0.1, 9),    # exact boundary: 1 / 10 == 0.1
    (4, 0.21, 12),
    (4, 0.2 - 1e-12, 13),  # just below an exact boundary: m = 12 gives 0.2, a hair too much
    (2, 0.049999999999999996, 20),  # the float just below 0.05: m = 19 gives 1/20 = 0.05, a hair too much
    (3, 2 / 3, 1),  # exact boundary: 2/3 (the closed form computed in floats gives 1.0000000000000002)
    (8, 0.99, 1),
    (1, 0.1, 1),    # one stage: no bubble at all, one micro-batch suffices
])
def test_min_microbatches(p, target, expected):
    import bubble_math

    got = bubble_math.min_microbatches(p, target)
    msg = say(f"min_microbatches(p={p}, target={target}): expected {expected}, got {got!r}",
              zh=f"min_microbatches(p={p}, target={target})：预期 {expected}，实际 {got!r}")
    if got == expected + 1:
        exact = (p - 1) / (expected + p - 1) == target
        msg += say(f" (one too many: with m = {expected} the bubble fraction is {p - 1}/{expected + p - 1}"
                   f" = {(p - 1) / (expected + p - 1):.6g}, which is already <= target"
                   + ("; 'at most' includes equality, and a closed form computed in floating point can land a "
                      "hair above an integer before math.ceil)" if exact else ")"),
                   zh=f"（多了一个：m = {expected} 时气泡占比是 {p - 1}/{expected + p - 1}"
                      f" = {(p - 1) / (expected + p - 1):.6g}，已经 <= target"
                      + ("；「至多」包含相等，而在浮点数中计算的闭式公式可能在 math.ceil 之前略高于一个整数）"
                         if exact else "）"))
    elif got == expected - 1:
        msg += say(f" (one too few: with m = {got} the bubble fraction is {p - 1}/{got + p - 1}"
                   f" = {(p - 1) / (got + p - 1):.6g} > target)",
                   zh=f"（少了一个：m = {got} 时气泡占比是 {p - 1}/{got + p - 1}"
                      f" = {(p - 1) / (got + p - 1):.6g} > target）")
    ok = got == expected
    assert ok, msg


# ---------------------------------------------------------------------------------------------
# point-to-point volume


@pytest.mark.title(zh="点对点通信的元素个数")
@pytest.mark.parametrize("s,b,h,v", [(1024, 1, 4096, 1), (2048, 2, 4096, 2), (16, 4, 8, 3), (1, 1, 1, 1)])
def test_p2p_elements(s, b, h, v):
    import bubble_math

    expected = 2 * v * s * b * h
    got = bubble_math.p2p_elements_per_microbatch(s, b, h, v)
    msg = say(f"p2p_elements_per_microbatch(s={s}, b={b}, h={h}, v={v}): expected {expected}, got {got!r}",
              zh=f"p2p_elements_per_microbatch(s={s}, b={b}, h={h}, v={v})：预期 {expected}，实际 {got!r}")
    if got == 2 * s * b * h and v > 1:
        msg += say(" (with v chunks per rank a micro-batch crosses the link v times in each direction)",
                   zh="（每个 rank 有 v 个模型块时，一个微批次在每个方向上经过链路 v 次）")
    elif got == v * s * b * h:
        msg += say(" (count both directions: the activation forward AND its gradient backward)",
                   zh="（两个方向都要算：向前传的激活，以及向后传的梯度）")
    ok = got == expected
    assert ok, msg


@pytest.mark.title(zh="点对点通信量：v 默认为 1")
def test_p2p_default_v_is_1():
    import bubble_math

    got = bubble_math.p2p_elements_per_microbatch(8, 2, 4)
    ok = got == 2 * 8 * 2 * 4
    assert ok, say(f"p2p_elements_per_microbatch(8, 2, 4) with the default v=1: expected 128, got {got!r}",
                   zh=f"使用默认值 v=1 的 p2p_elements_per_microbatch(8, 2, 4)：预期 128，实际 {got!r}")


# ---------------------------------------------------------------------------------------------
# input validation


def _names_argument(message: str, arg: str) -> bool:
    """True when ``message`` mentions ``arg`` as a word of its own (``p``, ``kind``, ``target``, ...)."""
    return re.search(rf"(?<![A-Za-z0-9_]){re.escape(arg)}(?![A-Za-z0-9_])", message) is not None


# (function, arguments, the argument that is wrong, as the signature spells it)
INVALID = [
    ("bubble_fraction", (0, 4), "p"), ("bubble_fraction", (4, 0), "m"), ("bubble_over_ideal", (-1, 4), "p"),
    ("bubble_over_ideal", (4, 0), "m"), ("interleaved_bubble_fraction", (4, 8, 0), "v"),
    ("interleaved_bubble_fraction", (0, 8, 2), "p"), ("interleaved_bubble_over_ideal", (4, 0, 2), "m"),
    ("peak_activations", ("1f1b", 4, 8, 4), "s"), ("peak_activations", ("gpipe", 4, 8, 4), "s"),
    ("peak_activations", ("zb", 4, 8, 0), "kind"),
    ("peak_activations", ("GPipe", 4, 8, 0), "kind"), ("peak_activations", ("1F1B", 4, 8, 0), "kind"),
    ("min_microbatches", (4, 0.0), "target"), ("min_microbatches", (4, 1.0), "target"),
    ("min_microbatches", (0, 0.5), "p"), ("min_microbatches", (1, 0.0), "target"),
    ("p2p_elements_per_microbatch", (1024, 1, 4096, 0), "v"),
]


@pytest.mark.title(zh="非法输入抛出 ValueError")
@pytest.mark.parametrize("name,args,arg", INVALID, ids=[f"{name}{args!r} (wrong {arg})" for name, args, arg in INVALID])
def test_invalid_input_raises_value_error(name, args, arg):
    import bubble_math

    call = f"{name}{args!r}"
    try:
        result = getattr(bubble_math, name)(*args)
    except ValueError as exc:
        assert str(exc), say(f"{call} raised ValueError without a message; say which argument is wrong and why",
                             zh=f"{call} 抛出的 ValueError 没有信息；请说明哪个参数不对、为什么不对")
        assert _names_argument(str(exc), arg), say(
            f"{call} raised ValueError({str(exc)!r}), which does not name the argument {arg!r} that is wrong; "
            f"say which argument is wrong and why, e.g. 'p (number of stages) must be >= 1, got 0'",
            zh=f"{call} 抛出了 ValueError({str(exc)!r})，其中没有写出出错的参数 {arg!r}；"
               f"请说明哪个参数不对、为什么不对，例如 'p (number of stages) must be >= 1, got 0'")
        return
    except Exception as exc:  # noqa: BLE001 - reported to the learner
        raise AssertionError(say(f"{call} should raise ValueError, but raised {type(exc).__name__}: {exc}",
                                 zh=f"{call} 应抛出 ValueError，却抛出了 {type(exc).__name__}: {exc}")) from None
    raise AssertionError(say(f"{call} should raise ValueError, but returned {result!r}",
                             zh=f"{call} 应抛出 ValueError，却返回了 {result!r}"))


@pytest.mark.title(zh="元素个数是 int（任何规模都精确），不是 float")
@pytest.mark.parametrize("s,b,h,v", [(1024, 1, 4096, 1), (3, 5, 7, 2)])
def test_p2p_returns_an_int(s, b, h, v):
    """A number of elements is an int (exact at any size), not a float."""
    import bubble_math

    got = bubble_math.p2p_elements_per_microbatch(s, b, h, v)
    assert type(got) is int, say(
        f"p2p_elements_per_microbatch({s}, {b}, {h}, {v}): expected the int {2 * v * s * b * h}, got {got!r} "
        f"of type {type(got).__name__} (return an int: a count of elements, computed with integers only)",
        zh=f"p2p_elements_per_microbatch({s}, {b}, {h}, {v})：预期 int {2 * v * s * b * h}，实际得到类型为 "
           f"{type(got).__name__} 的 {got!r}（请返回 int：这是元素的个数，只用整数计算）")


@pytest.mark.title(zh="微批次数是 int")
@pytest.mark.parametrize("kind", ["gpipe", "1f1b"])
def test_peak_activations_returns_an_int(kind):
    """A number of micro-batches is an int."""
    import bubble_math

    got = bubble_math.peak_activations(kind, 4, 8, 1)
    assert type(got) is int, say(
        f"peak_activations({kind!r}, 4, 8, 1): expected an int, got {got!r} of type {type(got).__name__}",
        zh=f"peak_activations({kind!r}, 4, 8, 1)：预期一个 int，实际得到类型为 {type(got).__name__} 的 {got!r}")


FLOAT_CALLS = [
    ("bubble_fraction", (4, 12)), ("bubble_fraction", (1, 3)), ("bubble_over_ideal", (4, 12)),
    ("bubble_over_ideal", (1, 3)), ("interleaved_bubble_fraction", (4, 8, 2)),
    ("interleaved_bubble_fraction", (1, 4, 2)), ("interleaved_bubble_over_ideal", (4, 8, 2)),
    ("interleaved_bubble_over_ideal", (1, 4, 2)),
]


@pytest.mark.title(zh="时间占比是 float，为 0 时（p = 1）也是")
@pytest.mark.parametrize("name,args", FLOAT_CALLS, ids=[f"{name}{args!r}" for name, args in FLOAT_CALLS])
def test_bubble_functions_return_a_float(name, args):
    """A share of time is a float, also when it is 0 (p = 1)."""
    import bubble_math

    got = getattr(bubble_math, name)(*args)
    assert type(got) is float, say(
        f"{name}{args!r}: expected a float, got {got!r} of type {type(got).__name__} "
        "(the four bubble functions return a float)",
        zh=f"{name}{args!r}：预期一个 float，实际得到类型为 {type(got).__name__} 的 {got!r}"
           "（四个气泡函数都返回 float）")


@pytest.mark.title(zh="微批次数是 int")
@pytest.mark.parametrize("p,target", [(4, 0.2), (4, 0.5), (8, 0.25), (1, 0.1)])
def test_min_microbatches_returns_an_int(p, target):
    """A number of micro-batches is an int."""
    import bubble_math

    got = bubble_math.min_microbatches(p, target)
    assert type(got) is int, say(
        f"min_microbatches({p}, {target}): expected an int, got {got!r} of type {type(got).__name__} "
        "(m is a number of micro-batches: make the result an int)",
        zh=f"min_microbatches({p}, {target})：预期一个 int，实际得到类型为 {type(got).__name__} 的 {got!r}"
           "（m 是微批次的个数：结果要是 int）")
