"""The simulator: durations, dependencies, errors, and the bubble against 1F1B and ZB-H1."""

import dualpipe
import dualpipe_helpers as H
import pytest

from judge.lang import say


def _sim(sched, tf, tb, tw, gain, what):
    return H.simulate_named(dualpipe, sched, tf, tb, tw, gain, what)


# one rank holding stages 0 and 1: every kind of action once
ONE_RANK = H.parse("F0s0 F0s1 I0s1 F1s0 W0s1 F1s1&B0s0 B1s1 B1s0")
ONE_RANK_TIMES = [("F0s0", 0.0, 1.0), ("F0s1", 1.0, 2.0), ("I0s1", 2.0, 3.5), ("F1s0", 3.5, 4.5), ("W0s1", 4.5, 5.0),
                  ("F1s1&B0s0", 5.0, 7.5), ("B1s1", 7.5, 9.5), ("B1s0", 9.5, 11.5)]


@pytest.mark.title(zh="单个 rank 上的时长")
def test_durations_one_rank(record_property):
    res = _sim([ONE_RANK], 1.0, 2.0, 0.5, 0.5, say("a one-rank schedule with every kind of action",
                                                    zh="一个包含每种动作的单 rank 调度"))
    record_property("timeline", H.to_timeline(res, 1, "your simulate: one rank, T_F=1, T_B=2, T_W=0.5, gain=0.5"))
    record_property("expected", H.expected_timeline([ONE_RANK_TIMES], 1, "expected: one rank, T_F=1, T_B=2, T_W=0.5, gain=0.5"))
    got = H.rows(res)[0]
    hint = H.duration_hint(res, 1.0, 2.0, 0.5, 0.5)
    assert got == ONE_RANK_TIMES, say(
        f"T_F=1, T_B=2, T_W=0.5, gain=0.5 (F 1, B 2, I 1.5, W 0.5, pair 2.5), one rank, no waiting:\n"
        f"  expected {ONE_RANK_TIMES}\n  got      {got}.{hint}",
        zh=f"T_F=1、T_B=2、T_W=0.5、gain=0.5（F 1、B 2、I 1.5、W 0.5、重叠对 2.5），一个 rank，没有等待：\n"
           f"  预期 {ONE_RANK_TIMES}\n  实际 {got}。{hint}")
    assert float(res["total"]) == 11.5, say(f"total: expected 11.5, got {float(res['total'])}",
                                            zh=f"total：预期 11.5，实际 {float(res['total'])}")
    assert [float(x) for x in res["busy"]] == [11.5] and [float(x) for x in res["bubble"]] == [0.0], say(
        f"busy and bubble: expected [11.5] and [0.0], got {res['busy']} and {res['bubble']}",
        zh=f"busy 和 bubble：预期 [11.5] 和 [0.0]，实际 {res['busy']} 和 {res['bubble']}")
    assert float(res["bubble_fraction"]) == 0.0, say(f"bubble_fraction: expected 0.0, got {res['bubble_fraction']}",
                                                     zh=f"bubble_fraction：预期 0.0，实际 {res['bubble_fraction']}")


ONE_RANK_TIMES_NO_GAIN = [("F0s0", 0.0, 1.0), ("F0s1", 1.0, 2.0), ("I0s1", 2.0, 3.5), ("F1s0", 3.5, 4.5),
                          ("W0s1", 4.5, 5.0), ("F1s1&B0s0", 5.0, 8.0), ("B1s1", 8.0, 10.0), ("B1s0", 10.0, 12.0)]


@pytest.mark.title(zh="simulate(sched, tf, tb, tw)：gain 可省略，默认 0.0（此时一个重叠对耗时 T_F + T_B）")
def test_gain_defaults_to_zero():
    """simulate(sched, tf, tb, tw): gain is optional, 0.0 by default (a pair then takes T_F + T_B)."""
    try:
        res = dualpipe.simulate([ONE_RANK], 1.0, 2.0, 0.5)
    except TypeError as exc:
        raise AssertionError(say(f"simulate(sched, 1.0, 2.0, 0.5) without gain raised TypeError: {exc}. The signature is "
                                 f"simulate(sched, tf, tb, tw, gain=0.0): gain is optional and defaults to 0.0",
                                 zh=f"不带 gain 的 simulate(sched, 1.0, 2.0, 0.5) 抛出了 TypeError：{exc}。签名是 "
                                    f"simulate(sched, tf, tb, tw, gain=0.0)：gain 是可选的，默认为 0.0")) from None
    got = H.rows(res)[0]
    assert got == ONE_RANK_TIMES_NO_GAIN, say(
        f"simulate(sched, 1.0, 2.0, 0.5) without gain should run as with gain=0.0 (pair T_F + T_B = 3):\n"
        f"  expected {ONE_RANK_TIMES_NO_GAIN}\n  got      {got}",
        zh=f"不带 gain 的 simulate(sched, 1.0, 2.0, 0.5) 应与 gain=0.0 时一样运行（重叠对 T_F + T_B = 3）：\n"
           f"  预期 {ONE_RANK_TIMES_NO_GAIN}\n  实际 {got}")


def _as_lists(sched):
    """The same schedule with every action (and each half of a pair) written as a list."""
    return [[[list(x) for x in a] if isinstance(a[0], tuple) else list(a) for a in row] for row in sched]


@pytest.mark.title(zh="时间线每项是 (action, start, end)，action 与调度中写的完全一样（list 仍是 list）")
@pytest.mark.parametrize("written", ["tuples", "lists"])
def test_timeline_lists_actions_as_given(written):
    """Each timeline entry is (action, start, end) with the action exactly as the schedule lists it (a list stays a list)."""
    sched = TWO_RANKS if written == "tuples" else _as_lists(TWO_RANKS)
    res = _sim(sched, 1.0, 2.0, 1.0, 1.0, say(f"a two-rank schedule with one pair, its actions written as {written}",
                                              zh=f"一个带一个重叠对的两 rank 调度，其动作写成 {written}"))
    for r, row in enumerate(sched):
        got = [entry[0] for entry in res["timeline"][r]]
        for k, (want, action) in enumerate(zip(row, got, strict=False)):
            if action == want and type(action) is type(want):
                continue
            hint = ""
            if isinstance(want[0], str) and isinstance(action, (tuple, list)) and list(action) == [tuple(want)]:
                hint = say(" That is the tuple of the action's parts: a single action is the action itself.",
                           zh=" 那是由动作的各部分组成的元组：单个动作就是动作本身。")
            elif H.label(action) == H.label(want):
                hint = say(f" It is the same action rebuilt as a {type(action).__name__}: put the schedule's own action "
                           f"object in the timeline.",
                           zh=f" 那是把同一个动作重新构造成了 {type(action).__name__}：请把调度里的那个动作对象本身"
                              f"放进 timeline。")
            raise AssertionError(say(
                f"simulate's timeline[{r}][{k}] should hold the action exactly as the schedule lists it, {want!r} (a "
                f"{type(want).__name__}); got {action!r} (a {type(action).__name__}).{hint}\n{H.fmt_sched(sched)}",
                zh=f"simulate 的 timeline[{r}][{k}] 应原样保存调度中列出的动作 {want!r}（一个 "
                   f"{type(want).__name__}）；实际得到 {action!r}（一个 {type(action).__name__}）。{hint}\n"
                   f"{H.fmt_sched(sched)}"))
        assert len(got) == len(row), say(f"timeline[{r}] should list the rank's {len(row)} actions; it lists {len(got)}",
                                         zh=f"timeline[{r}] 应列出该 rank 的 {len(row)} 个动作；它列出了 {len(got)} 个")


# two ranks (stages 0..3), T_B = 3 and T_W = 2, so T_I = 1: stage 2's B0s2 needs the gradient of I0s3, which
# is sent when I0s3 ends (at 5), not after the W0s3 rank 0 runs next; rank 1 runs the last action
W_AFTER_I = [H.parse("F0s0 F0s3 I0s3 W0s3 I0s0"), H.parse("F0s1 F0s2 B0s2 I0s1 W0s1")]
W_AFTER_I_TIMES = [
    [("F0s0", 0.0, 1.0), ("F0s3", 3.0, 4.0), ("I0s3", 4.0, 5.0), ("W0s3", 5.0, 7.0), ("I0s0", 9.0, 10.0)],
    [("F0s1", 1.0, 2.0), ("F0s2", 2.0, 3.0), ("B0s2", 5.0, 8.0), ("I0s1", 8.0, 9.0), ("W0s1", 9.0, 11.0)],
]


@pytest.mark.title(zh="I 结束时就发送输入梯度：上一个 stage 的反向从不等待 W")
def test_w_does_not_delay_its_i(record_property):
    """The input gradient of an I is sent when the I ends: the previous stage's backward never waits for the W."""
    res = _sim(W_AFTER_I, 1.0, 3.0, 2.0, 0.0, say("a two-rank schedule with I and W", zh="一个带 I 和 W 的两 rank 调度"))
    record_property("timeline", H.to_timeline(res, 2, "your simulate: two ranks, T_F=1, T_B=3, T_W=2 (T_I=1)"))
    record_property("expected", H.expected_timeline(W_AFTER_I_TIMES, 2, "expected: two ranks, T_F=1, T_B=3, T_W=2 (T_I=1)"))
    got = H.rows(res)
    b02 = next((x for x in got[1] if x[0] == "B0s2"), None)
    if b02 is not None and b02[1] == 7.0:
        raise AssertionError(say(
            "rank 1's B0s2 started at 7, when W0s3 ended; but it needs only the input gradient of stage 3, which I0s3 "
            f"sends when it ends, at 5: a W never delays the gradient of its I, so B0s2 runs from 5 to 8.\n  got {got}",
            zh="rank 1 的 B0s2 在 7 开始，也就是 W0s3 结束时；但它只需要 stage 3 的输入梯度，I0s3 在结束时（5）就发送它："
               f"W 从不推迟它的 I 的梯度，所以 B0s2 从 5 运行到 8。\n  实际 {got}"))
    for r in range(2):
        assert got[r] == W_AFTER_I_TIMES[r], say(
            f"rank {r} (T_F=1, T_B=3, I 1, W 2):\n  expected {W_AFTER_I_TIMES[r]}\n  got      {got[r]}."
            + H.duration_hint(res, 1.0, 3.0, 2.0, 0.0),
            zh=f"rank {r}（T_F=1、T_B=3、I 1、W 2）：\n  预期 {W_AFTER_I_TIMES[r]}\n  实际 {got[r]}。"
               + H.duration_hint(res, 1.0, 3.0, 2.0, 0.0))
    total = float(res["total"])
    assert total == 11.0, say(f"total: expected 11.0, the time the last action ends (rank 1's W0s1; rank 0 is done at 10), "
                              f"got {total:g}" + (" (rank 0's end: the total is the latest end over every rank)"
                                                  if total == 10.0 else ""),
                              zh=f"total：预期 11.0，即最后一个动作结束的时间（rank 1 的 W0s1；rank 0 在 10 就完成了），"
                                 f"实际 {total:g}" + ("（这是 rank 0 的结束时间：total 是所有 rank 中最晚的结束时间）"
                                                      if total == 10.0 else ""))
    assert [float(x) for x in res["busy"]] == [6.0, 8.0], say(f"busy: expected [6.0, 8.0], got {res['busy']}",
                                                              zh=f"busy：预期 [6.0, 8.0]，实际 {res['busy']}")
    assert [float(x) for x in res["bubble"]] == [5.0, 3.0], say(
        f"bubble: expected total - busy = [5.0, 3.0], got {res['bubble']}",
        zh=f"bubble：预期 total - busy = [5.0, 3.0]，实际 {res['bubble']}")
    assert abs(float(res["bubble_fraction"]) - 8 / 22) < 1e-12, say(
        f"bubble_fraction: expected sum(bubble) / (p * total) = 8 / 22, got {res['bubble_fraction']}",
        zh=f"bubble_fraction：预期 sum(bubble) / (p * total) = 8 / 22，实际 {res['bubble_fraction']}")


# two ranks (stages 0..3): rank 1's pair F1s1&B0s2 has its forward's input at 2 but its backward's at 6
TWO_RANKS = [H.parse("F0s0 F1s0 F0s3 B0s3 F1s3 B1s3 B0s0 B1s0"),
             H.parse("F0s1 F0s2 F1s1&B0s2 F1s2 B1s2 B0s1 B1s1")]
TWO_RANKS_TIMES = [
    [("F0s0", 0.0, 1.0), ("F1s0", 1.0, 2.0), ("F0s3", 3.0, 4.0), ("B0s3", 4.0, 6.0), ("F1s3", 9.0, 10.0),
     ("B1s3", 10.0, 12.0), ("B0s0", 16.0, 18.0), ("B1s0", 18.0, 20.0)],
    [("F0s1", 1.0, 2.0), ("F0s2", 2.0, 3.0), ("F1s1&B0s2", 6.0, 8.0), ("F1s2", 8.0, 9.0), ("B1s2", 12.0, 14.0),
     ("B0s1", 14.0, 16.0), ("B1s1", 16.0, 18.0)],
]


@pytest.mark.title(zh="重叠对等待它的两个输入")
def test_pair_waits_for_both_inputs(record_property):
    res = _sim(TWO_RANKS, 1.0, 2.0, 1.0, 1.0, say("a two-rank schedule with one pair", zh="一个带一个重叠对的两 rank 调度"))
    record_property("timeline", H.to_timeline(res, 2, "your simulate: two ranks, T_F=1, T_B=2, T_W=1, gain=1"))
    record_property("expected", H.expected_timeline(TWO_RANKS_TIMES, 2, "expected: two ranks, T_F=1, T_B=2, T_W=1, gain=1"))
    got = H.rows(res)
    pair = next((x for x in got[1] if x[0] == "F1s1&B0s2"), None)
    if pair is not None and pair[1] == 3.0:
        raise AssertionError(say(
            f"rank 1's pair F1s1&B0s2 started at 3, as soon as rank 1 was free and F1s0 (its forward's input) had "
            f"ended at 2; but its backward needs the gradient of B0s3, which ends at 6: a pair starts only when both "
            f"of its inputs are ready, so it runs from 6 to 8.\n  got {got}",
            zh=f"rank 1 的重叠对 F1s1&B0s2 在 3 开始，即 rank 1 一空闲、F1s0（它的前向的输入）在 2 结束之后；"
               f"但它的反向需要 B0s3 的梯度，而 B0s3 在 6 结束：重叠对只有在它的两个输入都就绪时才开始，"
               f"所以它从 6 运行到 8。\n  实际 {got}"))
    for r in range(2):
        assert got[r] == TWO_RANKS_TIMES[r], say(
            f"rank {r} (T_F=1, T_B=2, pair 2):\n  expected {TWO_RANKS_TIMES[r]}\n  got      {got[r]}."
            + H.duration_hint(res, 1.0, 2.0, 1.0, 1.0),
            zh=f"rank {r}（T_F=1、T_B=2、重叠对 2）：\n  预期 {TWO_RANKS_TIMES[r]}\n  实际 {got[r]}。"
               + H.duration_hint(res, 1.0, 2.0, 1.0, 1.0))
    assert float(res["total"]) == 20.0, say(f"total: expected 20.0, got {float(res['total'])}",
                                            zh=f"total：预期 20.0，实际 {float(res['total'])}")
    assert [float(x) for x in res["busy"]] == [12.0, 11.0], say(f"busy: expected [12.0, 11.0], got {res['busy']}",
                                                                zh=f"busy：预期 [12.0, 11.0]，实际 {res['busy']}")
    assert [float(x) for x in res["bubble"]] == [8.0, 9.0], say(
        f"bubble: expected total - busy = [8.0, 9.0], got {res['bubble']}",
        zh=f"bubble：预期 total - busy = [8.0, 9.0]，实际 {res['bubble']}")
    assert abs(float(res["bubble_fraction"]) - 17 / 40) < 1e-12, say(
        f"bubble_fraction: expected sum(bubble) / (p * total) = 17 / 40 = 0.425, got {res['bubble_fraction']}",
        zh=f"bubble_fraction：预期 sum(bubble) / (p * total) = 17 / 40 = 0.425，实际 {res['bubble_fraction']}")


# the same ranks, but rank 0 runs F1s0 after B0s3: rank 1's pair F1s1&B0s2 now has its backward's input at 6
# and its forward's at 7
FORWARD_LATE = [H.parse("F0s0 F0s3 B0s3 F1s0 F1s3 B1s3 B0s0 B1s0"),
                H.parse("F0s1 F0s2 F1s1&B0s2 F1s2 B1s2 B0s1 B1s1")]
FORWARD_LATE_TIMES = [
    [("F0s0", 0.0, 1.0), ("F0s3", 3.0, 4.0), ("B0s3", 4.0, 6.0), ("F1s0", 6.0, 7.0), ("F1s3", 10.0, 11.0),
     ("B1s3", 11.0, 13.0), ("B0s0", 17.0, 19.0), ("B1s0", 19.0, 21.0)],
    [("F0s1", 1.0, 2.0), ("F0s2", 2.0, 3.0), ("F1s1&B0s2", 7.0, 9.0), ("F1s2", 9.0, 10.0), ("B1s2", 13.0, 15.0),
     ("B0s1", 15.0, 17.0), ("B1s1", 17.0, 19.0)],
]


@pytest.mark.title(zh="重叠对等待它前向的输入")
def test_pair_waits_for_its_forward_input(record_property):
    res = _sim(FORWARD_LATE, 1.0, 2.0, 1.0, 1.0, say("a two-rank schedule with one pair", zh="一个带一个重叠对的两 rank 调度"))
    record_property("timeline", H.to_timeline(res, 2, "your simulate: two ranks, T_F=1, T_B=2, T_W=1, gain=1"))
    record_property("expected", H.expected_timeline(FORWARD_LATE_TIMES, 2, "expected: two ranks, T_F=1, T_B=2, T_W=1, gain=1"))
    got = H.rows(res)
    pair = next((x for x in got[1] if x[0] == "F1s1&B0s2"), None)
    if pair is not None and pair[1] == 6.0:
        raise AssertionError(say(
            f"rank 1's pair F1s1&B0s2 started at 6, when the gradient for its backward (B0s3) was ready; but its forward "
            f"needs F1s0, which ends at 7: a pair starts only when both of its inputs are ready, so it runs from 7 to 9."
            f"\n  got {got}",
            zh=f"rank 1 的重叠对 F1s1&B0s2 在 6 开始，即它的反向所需的梯度（B0s3）就绪时；但它的前向需要 F1s0，"
               f"而 F1s0 在 7 结束：重叠对只有在它的两个输入都就绪时才开始，所以它从 7 运行到 9。\n  实际 {got}"))
    for r in range(2):
        assert got[r] == FORWARD_LATE_TIMES[r], say(
            f"rank {r} (T_F=1, T_B=2, pair 2):\n  expected {FORWARD_LATE_TIMES[r]}\n  got      {got[r]}."
            + H.duration_hint(res, 1.0, 2.0, 1.0, 1.0),
            zh=f"rank {r}（T_F=1、T_B=2、重叠对 2）：\n  预期 {FORWARD_LATE_TIMES[r]}\n  实际 {got[r]}。"
               + H.duration_hint(res, 1.0, 2.0, 1.0, 1.0))
    assert float(res["total"]) == 21.0, say(f"total: expected 21.0, got {float(res['total'])}",
                                            zh=f"total：预期 21.0，实际 {float(res['total'])}")


PAIRS = H.parse("F0s0 F1s0 F0s1 F1s1&B0s1 F2s0&B1s1 B0s0 F2s1 B2s1 B1s0 B2s0")


@pytest.mark.title(zh="单个 rank、没有等待：每个重叠对耗时 T_F + T_B - gain，其他动作耗时各自的时间")
@pytest.mark.parametrize("gain", [0.0, 0.5, 1.0])
def test_pair_duration(gain, record_property):
    """One rank, no waiting: each pair lasts T_F + T_B - gain, every other action its own time."""
    res = _sim([PAIRS], 1.0, 2.0, 1.0, gain, say("a one-rank schedule with two pairs", zh="一个带两个重叠对的单 rank 调度"))
    pair = 3.0 - gain
    want, t = [], 0.0
    for a in PAIRS:
        d = pair if isinstance(a[0], tuple) else {"F": 1.0, "B": 2.0}[a[0]]
        want.append((H.label(a), t, t + d))
        t += d
    yours = H.to_timeline(res, 1, f"your simulate: one rank, two pairs, gain={gain:g}")
    if yours is not None:
        record_property("timeline", yours)
    record_property("expected", H.expected_timeline([want], 1, f"expected: one rank, two pairs, gain={gain:g}"))
    got = H.rows(res)[0]
    assert got == want, say(f"T_F=1, T_B=2, gain={gain:g} (a pair takes T_F + T_B - gain = {pair:g}), one rank, no waiting:"
                            f"\n  expected {want}\n  got      {got}." + H.duration_hint(res, 1.0, 2.0, 1.0, gain),
                            zh=f"T_F=1、T_B=2、gain={gain:g}（一个重叠对耗时 T_F + T_B - gain = {pair:g}），一个 rank，"
                               f"没有等待：\n  预期 {want}\n  实际 {got}。" + H.duration_hint(res, 1.0, 2.0, 1.0, gain))
    assert float(res["total"]) == t and [float(b) for b in res["bubble"]] == [0.0], say(
        f"total and bubble: expected {t:g} and [0.0], got {float(res['total']):g} and {res['bubble']}",
        zh=f"total 和 bubble：预期 {t:g} 和 [0.0]，实际 {float(res['total']):g} 和 {res['bubble']}")


# three ranks, one stage each: rank 1's pair sends its forward's output to rank 2 and its backward's
# gradient to rank 0, both of which are idle, waiting for it
THREE_RANKS = [H.parse("F0s0 F1s0 B0s0 B1s0"), H.parse("F0s1 F1s1&B0s1 B1s1"), H.parse("F0s2 B0s2 F1s2 B1s2")]
THREE_RANKS_TIMES = [
    [("F0s0", 0.0, 1.0), ("F1s0", 1.0, 2.0), ("B0s0", 7.5, 9.5), ("B1s0", 12.5, 14.5)],
    [("F0s1", 1.0, 2.0), ("F1s1&B0s1", 5.0, 7.5), ("B1s1", 10.5, 12.5)],
    [("F0s2", 2.0, 3.0), ("B0s2", 3.0, 5.0), ("F1s2", 7.5, 8.5), ("B1s2", 8.5, 10.5)],
]


@pytest.mark.title(zh="重叠对的两个输出在它结束时就绪")
def test_pair_outputs_ready_at_its_end(record_property):
    res = _sim(THREE_RANKS, 1.0, 2.0, 1.0, 0.5, say("a three-rank schedule with one pair", zh="一个带一个重叠对的三 rank 调度"))
    record_property("timeline", H.to_timeline(res, None, "your simulate: three ranks, T_F=1, T_B=2, T_W=1, gain=0.5"))
    record_property("expected", H.expected_timeline(THREE_RANKS_TIMES, None, "expected: three ranks, T_F=1, T_B=2, T_W=1, gain=0.5"))
    got = H.rows(res)
    pair = next((x for x in got[1] if x[0] == "F1s1&B0s1"), None)
    f_next = next((x for x in got[2] if x[0] == "F1s2"), None)
    b_next = next((x for x in got[0] if x[0] == "B0s0"), None)
    if pair is not None and pair[1] == 5.0:
        for user, early, half in ((f_next, 6.0, "forward"), (b_next, 7.0, "backward")):
            if user is not None and user[1] == early:
                half_zh = {"forward": "前向", "backward": "反向"}[half]
                raise AssertionError(say(
                    f"{user[0]} started at {early:g}, the pair F1s1&B0s1's start 5 + T_{half[0].upper()}, as if the pair "
                    f"ran its {half} half first and sent its result at once; but a pair's outputs are available only "
                    f"at its end: the pair runs from 5 to 7.5, so {user[0]} starts at 7.5.\n  got {got}",
                    zh=f"{user[0]} 在 {early:g} 开始，即重叠对 F1s1&B0s1 的开始时间 5 + T_{half[0].upper()}，仿佛"
                       f"这个重叠对先运行它的{half_zh}那一半并立即发送结果；但重叠对的输出只有在它结束时才可用："
                       f"这个重叠对从 5 运行到 7.5，所以 {user[0]} 在 7.5 开始。\n  实际 {got}"))
    for r in range(3):
        assert got[r] == THREE_RANKS_TIMES[r], say(
            f"rank {r} (T_F=1, T_B=2, pair 2.5; the pair's forward output and backward gradient are both available at "
            f"its end):\n  expected {THREE_RANKS_TIMES[r]}\n  got      {got[r]}." + H.duration_hint(res, 1.0, 2.0, 1.0, 0.5),
            zh=f"rank {r}（T_F=1、T_B=2、重叠对 2.5；重叠对的前向输出和反向梯度都在它结束时才可用）：\n"
               f"  预期 {THREE_RANKS_TIMES[r]}\n  实际 {got[r]}。" + H.duration_hint(res, 1.0, 2.0, 1.0, 0.5))
    assert float(res["total"]) == 14.5, say(f"total: expected 14.5, got {float(res['total'])}",
                                            zh=f"total：预期 14.5，实际 {float(res['total'])}")
    assert [float(x) for x in res["busy"]] == [6.0, 5.5, 6.0], say(f"busy: expected [6.0, 5.5, 6.0], got {res['busy']}",
                                                                   zh=f"busy：预期 [6.0, 5.5, 6.0]，实际 {res['busy']}")


@pytest.mark.title(zh="题面：没有要运行的动作时不耗时（total 为 0，bubble_fraction 为 0）；很短的调度与长的一样计时")
@pytest.mark.parametrize("sched, want", [
    ([], {"timeline": [], "total": 0.0, "busy": [], "bubble": [], "bubble_fraction": 0.0}),
    ([[]], {"timeline": [[]], "total": 0.0, "busy": [0.0], "bubble": [0.0], "bubble_fraction": 0.0}),
    ([[("F", 0, 0)], [("F", 0, 1)]], {"timeline": [[("F0s0", 0.0, 0.5)], [("F0s1", 0.5, 1.0)]], "total": 1.0,
                                      "busy": [0.5, 0.5], "bubble": [0.5, 0.5], "bubble_fraction": 0.5}),
], ids=["no ranks", "a rank without actions", "two forwards of 0.5"])
def test_empty_and_tiny_schedules(sched, want):
    """The statement: nothing to run takes no time (total 0, bubble_fraction 0); short steps are timed like long ones."""
    res = _sim(sched, 0.5, 1.0, 0.5, 0.0, say(f"the schedule {sched!r}", zh=f"调度 {sched!r}"))
    got = {"timeline": H.rows(res), "total": float(res["total"]), "busy": [float(x) for x in res["busy"]],
           "bubble": [float(x) for x in res["bubble"]], "bubble_fraction": float(res["bubble_fraction"])}
    assert got == want, say(f"simulate({sched!r}, tf=0.5, tb=1, tw=0.5):\n  expected {want}\n  got      {got}",
                            zh=f"simulate({sched!r}, tf=0.5, tb=1, tw=0.5)：\n  预期 {want}\n  实际 {got}")


@pytest.mark.title(zh="3 个 rank 的 1F1B，每个 rank 一个 stage（不是 V 形）：bubble_fraction 是 sum(bubble) / (p * total)，p 为 rank 数")
def test_bubble_fraction_is_over_ranks():
    """1F1B on 3 ranks, one stage each (not a V): bubble_fraction is sum(bubble) / (p * total) with p the number of ranks."""
    sched = H.baseline("1f1b", 3, 6)
    res = _sim(sched, 2.0, 4.0, 2.0, 0.0, say("1F1B on 3 ranks (p=3, m=6, T_F=2, T_B=4)",
                                              zh="3 个 rank 上的 1F1B（p=3、m=6、T_F=2、T_B=4）"))
    bubble = [float(b) for b in res["bubble"]]
    assert float(res["total"]) == 48.0 and bubble == [12.0] * 3, say(
        f"1F1B, p=3, m=6, T_F=2, T_B=4: expected total 48 and bubble (p-1)(T_F+T_B) = 12 per rank, got "
        f"{float(res['total']):g} and {bubble}",
        zh=f"1F1B，p=3、m=6、T_F=2、T_B=4：预期 total 48，每个 rank 的气泡 (p-1)(T_F+T_B) = 12，实际 "
           f"{float(res['total']):g} 和 {bubble}")
    got = float(res["bubble_fraction"])
    assert abs(got - 36 / 144) < 1e-12, say(
        f"bubble_fraction: expected sum(bubble) / (p * total) = 36 / (3 * 48) = 0.25, p = 3 ranks; got {got}"
        + (" (that is sum(bubble) / (S/2 * total) with S = 3 stages: divide by the number of ranks, which equals S/2 "
           "only for a V schedule)" if abs(got - 36 / 72) < 1e-12 else ""),
        zh=f"bubble_fraction：预期 sum(bubble) / (p * total) = 36 / (3 * 48) = 0.25，p = 3 个 rank；实际 {got}"
           + ("（那是 sum(bubble) / (S/2 * total)，S = 3 个 stage：应除以 rank 的个数，它只在 V 形调度中"
              "等于 S/2）" if abs(got - 36 / 72) < 1e-12 else ""))


# the Chinese of each `why` below (the message picks it by the learner's language when it is built)
WHY_ZH = {
    "W0s0 waits for I0s0, which comes after it on the same rank": "W0s0 等待 I0s0，而 I0s0 在同一个 rank 上排在它之后",
    "W0s0 after a full backward: its I never runs": "W0s0 在一个完整的反向之后：它的 I 从不运行",
    "the last stage's B0s1 waits for its own F0s1, listed after it": "最后一个 stage 的 B0s1 等待它自己的 F0s1，而 F0s1 列在它之后",
    "a cycle: rank 1's F1s1 needs F1s0, which rank 0 runs after B0s0, which needs B0s1, which rank 1 runs after F1s1":
        "一个环：rank 1 的 F1s1 需要 F1s0，rank 0 在 B0s0 之后才运行 F1s0，B0s0 需要 B0s1，而 rank 1 在 F1s1 之后才运行 B0s1",
    "B0s0 waits for the backward of micro-batch 0 on stage 1, which no rank runs":
        "B0s0 等待 stage 1 上微批次 0 的反向，但没有任何 rank 运行它",
    "the pair's backward B0s1 (the last stage) needs F0s1, which only this same pair computes: a pair waits for "
    "both of its inputs before it starts":
        "重叠对的反向 B0s1（最后一个 stage）需要 F0s1，而 F0s1 只由这同一个重叠对计算：重叠对要等它的两个输入都就绪才开始",
    "'X' is not a kind: F, B, I, W": "'X' 不是一个种类：F、B、I、W",
    "'b' is not a kind: F, B, I, W": "'b' 不是一个种类：F、B、I、W",
    "a pair is a forward, then a full backward": "重叠对是一个前向，然后是一个完整的反向",
    "a pair's backward is a full B": "重叠对的反向是完整的 B",
    "a pair of two backwards: a pair's first half is a forward": "两个反向组成的重叠对：重叠对的前一半是一个前向",
    "F0s0 appears twice": "F0s0 出现了两次",
    "F0s0 is listed on rank 0 and again on rank 1: a duplicate in the schedule, even across ranks":
        "F0s0 列在 rank 0 上，又列在 rank 1 上：这是调度中的重复，即使跨 rank 也算",
    "F0s0 runs alone and again as the forward half of a pair": "F0s0 单独运行了一次，又作为重叠对的前向那一半运行了一次",
    "B0s1 runs alone and again as the backward half of a pair": "B0s1 单独运行了一次，又作为重叠对的反向那一半运行了一次",
    "W0s0 appears twice": "W0s0 出现了两次",
    "I0s0 appears twice": "I0s0 出现了两次",
    "micro-batch 0 of stage 1 has two backwards, B0s1 and I0s1: which one would stage 0 wait for?":
        "stage 1 的微批次 0 有两个反向，B0s1 和 I0s1：stage 0 该等哪一个？",
    "a pair of two forwards: a pair is a forward, then a full backward": "两个前向组成的重叠对：重叠对是一个前向，然后是一个完整的反向",
    "a pair of a forward and a W: a pair's second half is a full backward B":
        "一个前向和一个 W 组成的重叠对：重叠对的后一半是一个完整的反向 B",
    "None is not an action": "None 不是一个动作",
    "a pair's halves are (kind, mb, stage): ('B', 0, 1, 0) has four items": "重叠对的两半是 (kind, mb, stage)：('B', 0, 1, 0) 有四项",
}


@pytest.mark.title(zh="死锁时抛出异常")
@pytest.mark.parametrize("sched, why", [
    ([H.parse("F0s0 W0s0 I0s0")], "W0s0 waits for I0s0, which comes after it on the same rank"),
    ([H.parse("F0s0 B0s0 W0s0")], "W0s0 after a full backward: its I never runs"),
    ([H.parse("B0s1 F0s0 F0s1 B0s0")], "the last stage's B0s1 waits for its own F0s1, listed after it"),
    ([H.parse("F0s0 B0s0 F1s0 B1s0"), H.parse("F1s1 F0s1 B0s1 B1s1")],
     "a cycle: rank 1's F1s1 needs F1s0, which rank 0 runs after B0s0, which needs B0s1, which rank 1 runs after F1s1"),
    ([H.parse("F0s0 F0s1 B0s0")], "B0s0 waits for the backward of micro-batch 0 on stage 1, which no rank runs"),
    ([H.parse("F0s0 F0s1&B0s1 B0s0")],
     "the pair's backward B0s1 (the last stage) needs F0s1, which only this same pair computes: a pair waits for "
     "both of its inputs before it starts"),
], ids=["W before its I", "W after a full B", "last stage B before its F", "cycle between ranks", "missing backward",
        "pair needs its own forward"])
def test_deadlock_raises(sched, why):
    H.expect_simulate_value_error(dualpipe, sched, say(f"simulate on\n{H.fmt_sched(sched)}\n",
                                                       zh=f"simulate 在\n{H.fmt_sched(sched)}\n上"), why, WHY_ZH.get(why, ""))


@pytest.mark.title(zh="格式错误的调度抛出异常")
@pytest.mark.parametrize("sched, why", [
    ([[("F", 0, 0), ("X", 0, 0)]], "'X' is not a kind: F, B, I, W"),
    ([[("F", 0, 0), ("b", 0, 0)]], "'b' is not a kind: F, B, I, W"),
    ([[("F", 0, 0), ("F", 0, 1), (("B", 0, 1), ("F", 1, 0))]], "a pair is a forward, then a full backward"),
    ([[("F", 0, 0), ("F", 0, 1), (("F", 1, 0), ("I", 0, 1))]], "a pair's backward is a full B"),
    ([[("F", 0, 0), ("F", 0, 1), ("F", 1, 0), ("F", 1, 1), (("B", 0, 1), ("B", 1, 1)), ("B", 0, 0), ("B", 1, 0)]],
     "a pair of two backwards: a pair's first half is a forward"),
    ([[("F", 0, 0), ("F", 0, 0), ("B", 0, 0)]], "F0s0 appears twice"),
    ([[("F", 0, 0), ("B", 0, 0)], [("F", 0, 0)]],
     "F0s0 is listed on rank 0 and again on rank 1: a duplicate in the schedule, even across ranks"),
    ([[("F", 0, 0), ("F", 0, 1), (("F", 0, 0), ("B", 0, 1)), ("B", 0, 0)]],
     "F0s0 runs alone and again as the forward half of a pair"),
    ([[("F", 0, 0), ("F", 0, 1), ("F", 1, 0), ("B", 0, 1), (("F", 1, 1), ("B", 0, 1)), ("B", 0, 0), ("B", 1, 1),
       ("B", 1, 0)]], "B0s1 runs alone and again as the backward half of a pair"),
    ([[("F", 0, 0), ("I", 0, 0), ("W", 0, 0), ("W", 0, 0)]], "W0s0 appears twice"),
    ([[("F", 0, 0), ("I", 0, 0), ("I", 0, 0), ("W", 0, 0)]], "I0s0 appears twice"),
    ([[("F", 0, 0), ("F", 0, 1), ("B", 0, 1), ("I", 0, 1), ("W", 0, 1), ("B", 0, 0)]],
     "micro-batch 0 of stage 1 has two backwards, B0s1 and I0s1: which one would stage 0 wait for?"),
    ([[("F", 0, 0), ("F", 0, 1), (("F", 1, 0), ("F", 1, 1)), ("B", 0, 1), ("B", 0, 0), ("B", 1, 1), ("B", 1, 0)]],
     "a pair of two forwards: a pair is a forward, then a full backward"),
    ([[("F", 0, 0), ("I", 0, 0), (("F", 1, 0), ("W", 0, 0)), ("B", 1, 0)]],
     "a pair of a forward and a W: a pair's second half is a full backward B"),
    ([[("F", 0, 0), None, ("B", 0, 0)]], "None is not an action"),
    ([[("F", 0, 0), ("F", 0, 1), (("F", 1, 0), ("B", 0, 1, 0)), ("B", 0, 0), ("B", 1, 1), ("B", 1, 0)]],
     "a pair's halves are (kind, mb, stage): ('B', 0, 1, 0) has four items"),
], ids=["unknown kind", "lowercase kind", "pair B then F", "pair with I", "pair of two B", "F twice",
        "F twice on two ranks", "F twice, once in a pair", "B twice, once in a pair", "W twice", "I twice",
        "B and I of one micro-batch", "pair of two F", "pair with W", "None", "pair half of four items"])
def test_malformed_raise(sched, why):
    H.expect_simulate_value_error(dualpipe, sched, f"simulate({sched!r})", why, WHY_ZH.get(why, ""))


def _raises_value_error(sched) -> bool:
    try:
        dualpipe.simulate(sched, 1.0, 2.0, 1.0, 0.0)
    except ValueError:
        return True
    except Exception:  # noqa: BLE001 - the test's own call reports what happened
        return False
    return False


@pytest.mark.title(zh="动作类型只能恰好是 F、B、I 或 W：由其中几个拼成的名字或空字符串都不是")
@pytest.mark.parametrize("kind", ["FB", "IW", ""], ids=repr)
def test_kinds_are_whole_names(kind):
    """A kind is exactly F, B, I or W: a name made of several of them, or the empty string, is no kind."""
    sched = [[("F", 0, 0), ("I", 0, 0), (kind, 0, 0), ("W", 0, 0)]]
    hint = hint_zh = ""
    if not _raises_value_error(sched) and _raises_value_error([[("F", 0, 0), ("I", 0, 0), ("X", 0, 0), ("W", 0, 0)]]):
        hint = (f" Your simulate refuses the kind 'X' but not {kind!r}, which is a substring of 'FBIW': compare the "
                f"whole kind (kind in ('F', 'B', 'I', 'W')), not `kind in 'FBIW'`.")
        hint_zh = (f" 你的 simulate 拒绝了种类 'X'，却没有拒绝 {kind!r}，它是 'FBIW' 的一个子串：应比较整个种类"
                   f"（kind in ('F', 'B', 'I', 'W')），而不是 `kind in 'FBIW'`。")
    H.expect_simulate_value_error(dualpipe, sched, f"simulate({sched!r})", f"{kind!r} is not a kind: F, B, I, W.{hint}",
                                  f"{kind!r} 不是一个种类：F、B、I、W。{hint_zh}")


def _formula(p, tf, tb, tw, gain):
    return (p - 1) * ((tf + tb - gain) + tb - 3 * tw)


@pytest.mark.title(zh="T_F = T_I = 1（T_B = 1 + T_W）：尖端 rank 的气泡是 (p-1)(T_F&B + T_B - 3T_W)，rank r 的少 (p-2-r)·gain")
@pytest.mark.parametrize("p,m", [(2, 4), (2, 5), (3, 6), (4, 8)])
@pytest.mark.parametrize("tw,gain", [(1.0, 0.0), (1.0, 1.0), (0.5, 0.25), (0.5, 1.0)])
def test_bubble_matches_the_published_formula(p, m, tw, gain):
    """T_F = T_I = 1 (T_B = 1 + T_W): the tip's bubble is (p-1)(T_F&B + T_B - 3T_W); rank r's is (p-2-r)·gain less."""
    tf, tb = 1.0, 1.0 + tw
    res = _sim(H.expected(p, m), tf, tb, tw, gain, say(f"DualPipeV's order for p={p}, m={m} (from the tests' table)",
                                                       zh=f"p={p}、m={m} 时 DualPipeV 的顺序（来自测试中的表）"))
    want_tip = _formula(p, tf, tb, tw, gain)
    want = [want_tip - gain * max(0, p - 2 - r) for r in range(p)]
    got = [float(b) for b in res["bubble"]]
    pairs = 2 * m - 2 * p - 1
    want_total = 2 * m * (tf + tb) - gain * pairs + want_tip
    assert got == want and float(res["total"]) == want_total, say(
        f"DualPipeV p={p}, m={m}, T_F=1, T_B={tb:g}, T_W={tw:g}, gain={gain:g} (pair {tf + tb - gain:g}): expected total "
        f"{want_total:g} and bubbles {want} (the tip rank p-1: (p-1)(T_F&B + T_B - 3T_W) = {want_tip:g}), got total "
        f"{float(res['total']):g} and bubbles {got}." + H.duration_hint(res, tf, tb, tw, gain),
        zh=f"DualPipeV p={p}、m={m}、T_F=1、T_B={tb:g}、T_W={tw:g}、gain={gain:g}（重叠对 {tf + tb - gain:g}）：预期 total "
           f"{want_total:g}，气泡 {want}（尖端 rank p-1：(p-1)(T_F&B + T_B - 3T_W) = {want_tip:g}），实际 total "
           f"{float(res['total']):g}，气泡 {got}。" + H.duration_hint(res, tf, tb, tw, gain))


@pytest.mark.title(zh="p = 4，m = 8，T_F = T_I = T_W = 1：题面中的表格")
def test_against_1f1b_and_zb_h1(record_property):
    """p = 4, m = 8, T_F = T_I = T_W = 1: the table of the statement."""
    p, m = 4, 8
    one = _sim(H.baseline("1f1b", p, m), 2.0, 4.0, 2.0, 0.0, say("1F1B on the same model (p=4, m=8, stage times doubled)",
                                                                 zh="同一模型上的 1F1B（p=4、m=8，stage 时间加倍）"))
    zb = _sim(H.baseline("zb-h1", p, m), 2.0, 4.0, 2.0, 0.0, say("ZB-H1 on the same model (p=4, m=8, stage times doubled)",
                                                                 zh="同一模型上的 ZB-H1（p=4、m=8，stage 时间加倍）"))
    assert float(one["total"]) == 66.0 and [float(b) for b in one["bubble"]] == [18.0] * 4, say(
        f"1F1B (T_F=2, T_B=4): expected total 66 and bubble (p-1)(T_F+T_B) = 18 per rank, got "
        f"{float(one['total']):g} and {[float(b) for b in one['bubble']]}",
        zh=f"1F1B（T_F=2、T_B=4）：预期 total 66，每个 rank 的气泡 (p-1)(T_F+T_B) = 18，实际 "
           f"{float(one['total']):g} 和 {[float(b) for b in one['bubble']]}")
    assert float(zb["total"]) == 54.0 and [float(b) for b in zb["bubble"]] == [6.0] * 4, say(
        f"ZB-H1 (T_F=2, T_I=2, T_W=2): expected total 54 and bubble (p-1)(T_F+T_I-T_W) = 6 per rank, got "
        f"{float(zb['total']):g} and {[float(b) for b in zb['bubble']]}" + H.duration_hint(zb, 2.0, 4.0, 2.0, 0.0),
        zh=f"ZB-H1（T_F=2、T_I=2、T_W=2）：预期 total 54，每个 rank 的气泡 (p-1)(T_F+T_I-T_W) = 6，实际 "
           f"{float(zb['total']):g} 和 {[float(b) for b in zb['bubble']]}" + H.duration_hint(zb, 2.0, 4.0, 2.0, 0.0))
    want = {0.0: (54.0, [6.0, 6.0, 6.0, 6.0]), 0.5: (49.0, [3.5, 4.0, 4.5, 4.5]), 1.0: (44.0, [1.0, 2.0, 3.0, 3.0])}
    for gain, (total, bubble) in want.items():
        res = _sim(H.expected(p, m), 1.0, 2.0, 1.0, gain, say(f"DualPipeV's order for p={p}, m={m}",
                                                              zh=f"p={p}、m={m} 时 DualPipeV 的顺序"))
        if gain == 1.0:
            record_property("timeline", H.to_timeline(res, p, "DualPipeV, p=4, m=8, T_F=T_I=T_W=1, gain=1"))
        got = [float(b) for b in res["bubble"]]
        assert float(res["total"]) == total and got == bubble, say(
            f"DualPipeV p=4, m=8, T_F=1, T_B=2, T_W=1, gain={gain:g}: expected total {total:g} and bubbles {bubble}, "
            f"got {float(res['total']):g} and {got}." + H.duration_hint(res, 1.0, 2.0, 1.0, gain),
            zh=f"DualPipeV p=4、m=8、T_F=1、T_B=2、T_W=1、gain={gain:g}：预期 total {total:g}，气泡 {bubble}，"
               f"实际 {float(res['total']):g} 和 {got}。" + H.duration_hint(res, 1.0, 2.0, 1.0, gain))


@pytest.mark.title(zh="你的调度在时间上的表现")
@pytest.mark.parametrize("p,m", [(2, 4), (3, 6), (4, 8)])
def test_your_schedule_in_time(p, m, record_property):
    sched = H.normalize(dualpipe.dualpipev_schedule(p, m), p, f"dualpipev_schedule({p}, {m})")
    stuck = H.dependency_walk(sched)
    assert not stuck, say(f"dualpipev_schedule({p}, {m}) cannot run to the end; stuck: {'; '.join(stuck)} {H.NOTATION}",
                          zh=f"dualpipev_schedule({p}, {m}) 无法运行到底；卡住的：{'；'.join(stuck)} {H.notation()}")
    res = _sim(sched, 1.0, 2.0, 1.0, 1.0, say(f"your dualpipev_schedule({p}, {m})", zh=f"你的 dualpipev_schedule({p}, {m})"))
    art = H.to_timeline(res, p, f"your DualPipeV in time, p={p}, m={m}: T_F=1, T_B=2, T_W=1, gain=1")
    if art is not None:
        record_property("timeline", art)
    assert sum(len(row) for row in res["timeline"]) == sum(len(row) for row in sched), say(
        "every action of the schedule must appear in the timeline", zh="调度中的每个动作都必须出现在 timeline 中")
    tip = float(res["bubble"][-1])
    assert tip == float(p - 1), say(
        f"your dualpipev_schedule({p}, {m}) simulated with T_F=1, T_B=2, T_W=1, gain=1: the last rank's bubble should be "
        f"(p-1)(T_F&B + T_B - 3T_W) = {p - 1}, got {tip:g}",
        zh=f"你的 dualpipev_schedule({p}, {m}) 以 T_F=1、T_B=2、T_W=1、gain=1 模拟：最后一个 rank 的气泡应为 "
           f"(p-1)(T_F&B + T_B - 3T_W) = {p - 1}，实际 {tip:g}")
