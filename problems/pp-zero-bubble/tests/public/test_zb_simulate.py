"""Part 2: the dependency-driven simulator."""

import pytest
import zb_helpers as H
import zero_bubble

from judge.artifacts import timeline
from judge.lang import say


def _rows(res):
    return [[(str(op), int(i), float(a), float(b)) for op, i, a, b in row] for row in res["timeline"]]


@pytest.mark.title(zh="手算的示例")
def test_hand_example(record_property):
    sched = [[("F", 0), ("F", 1), ("B", 0), ("W", 0), ("B", 1), ("W", 1)],
             [("F", 0), ("B", 0), ("F", 1), ("B", 1), ("W", 0), ("W", 1)]]
    res = zero_bubble.simulate(sched, 1.0, 2.0, 0.5)
    want = [[("F", 0, 0.0, 1.0), ("F", 1, 1.0, 2.0), ("B", 0, 4.0, 6.0), ("W", 0, 6.0, 6.5), ("B", 1, 7.0, 9.0), ("W", 1, 9.0, 9.5)],
            [("F", 0, 1.0, 2.0), ("B", 0, 2.0, 4.0), ("F", 1, 4.0, 5.0), ("B", 1, 5.0, 7.0), ("W", 0, 7.0, 7.5), ("W", 1, 7.5, 8.0)]]
    try:
        record_property("timeline", timeline(res["timeline"], title="your simulate: hand example, T_F=1, T_B=2, T_W=0.5"))
    except (TypeError, ValueError, KeyError):
        pass  # not drawable: the checks below say what is wrong
    record_property("expected", timeline(want, title="expected: hand example, T_F=1, T_B=2, T_W=0.5"))
    got = _rows(res)
    for s in range(2):
        assert got[s] == want[s], say(f"stage {s}: expected {want[s]}, got {got[s]}",
                                      zh=f"stage {s}：预期 {want[s]}，实际 {got[s]}")
    assert float(res["total"]) == 9.5, say(f"total: expected 9.5, got {float(res['total'])}",
                                           zh=f"total：预期 9.5，实际 {float(res['total'])}")
    assert [float(x) for x in res["busy"]] == [7.0, 7.0], say(f"busy: expected [7.0, 7.0], got {res['busy']}",
                                                              zh=f"busy：预期 [7.0, 7.0]，实际 {res['busy']}")
    assert [float(x) for x in res["bubble"]] == [2.5, 2.5], say(
        f"bubble: expected [2.5, 2.5] (total - busy), got {res['bubble']}",
        zh=f"bubble：预期 [2.5, 2.5]（total - busy），实际 {res['bubble']}")
    frac = float(res["bubble_fraction"])
    assert abs(frac - 5.0 / 19.0) < 1e-12, say(f"bubble_fraction: expected sum(bubble) / (p * total) = 5/19, got {frac}",
                                               zh=f"bubble_fraction：预期 sum(bubble) / (p * total) = 5/19，实际 {frac}")


@pytest.mark.title(zh="B 等待下一个 stage 的 B，而不是 W")
def test_b_waits_for_next_stage_b_not_w():
    # Stage 1 runs W0 late; stage 0's B0 may start as soon as stage 1's B0 is done.
    sched = [[("F", 0), ("B", 0), ("W", 0)], [("F", 0), ("B", 0), ("W", 0)]]
    res = zero_bubble.simulate(sched, 1.0, 1.0, 3.0)
    got = _rows(res)
    assert got[0][1] == ("B", 0, 3.0, 4.0), say(
        f"stage 0's B0 should run from 3 to 4 (right after stage 1's B0 ends at 3), got {got[0][1]}. "
        "B passes the input gradient back; it does not wait for the next stage's W.",
        zh=f"stage 0 的 B0 应从 3 运行到 4（紧接在 stage 1 的 B0 于 3 结束之后），实际 {got[0][1]}。"
           "B 把输入梯度传回去；它不等待下一个 stage 的 W。")
    assert float(res["total"]) == 7.0, say(f"total: expected 7.0 (stage 0's W0 ends at 7), got {float(res['total'])}",
                                           zh=f"total：预期 7.0（stage 0 的 W0 在 7 结束），实际 {float(res['total'])}")


@pytest.mark.title(zh="W 只等待它自己的 B")
def test_w_waits_for_its_own_b_only():
    sched = [[("F", 0), ("F", 1), ("B", 0), ("B", 1), ("W", 0), ("W", 1)]]
    res = zero_bubble.simulate(sched, 1.0, 1.0, 1.0)
    assert float(res["total"]) == 6.0 and [float(b) for b in res["bubble"]] == [0.0], say(
        f"one stage, six unit ops in a row: expected total 6 and bubble [0.0], got {float(res['total'])} and {res['bubble']}",
        zh=f"一个 stage，连续六个单位时间的操作：预期 total 6 和 bubble [0.0]，实际 {float(res['total'])} 和 {res['bubble']}")


@pytest.mark.title(zh="按列表顺序运行操作")
def test_runs_ops_in_list_order():
    # W0 is listed before F1 on stage 0, so F1 (and stage 1's F1) must wait for it.
    sched = [[("F", 0), ("B", 0), ("W", 0), ("F", 1), ("B", 1), ("W", 1)], [("F", 0), ("B", 0), ("W", 0), ("F", 1), ("B", 1), ("W", 1)]]
    res = zero_bubble.simulate(sched, 1.0, 1.0, 1.0)
    got = _rows(res)
    assert got[0][3] == ("F", 1, 5.0, 6.0), say(f"stage 0's F1 should run from 5 to 6 (after its W0), got {got[0][3]}",
                                                zh=f"stage 0 的 F1 应从 5 运行到 6（在它的 W0 之后），实际 {got[0][3]}")
    assert float(res["total"]) == 10.0, say(f"total: expected 10.0, got {float(res['total'])}",
                                            zh=f"total：预期 10.0，实际 {float(res['total'])}")


@pytest.mark.title(zh="题面：没有要运行的操作时不耗时（total 为 0，bubble_fraction 为 0）；很短的调度与长的一样计时")
@pytest.mark.parametrize("sched, want", [
    ([], {"timeline": [], "total": 0.0, "busy": [], "bubble": [], "bubble_fraction": 0.0}),
    ([[]], {"timeline": [[]], "total": 0.0, "busy": [0.0], "bubble": [0.0], "bubble_fraction": 0.0}),
    ([[("F", 0)], [("F", 0)]], {"timeline": [[("F", 0, 0.0, 0.5)], [("F", 0, 0.5, 1.0)]], "total": 1.0,
                                "busy": [0.5, 0.5], "bubble": [0.5, 0.5], "bubble_fraction": 0.5}),
], ids=["no stages", "a stage without ops", "two forwards of 0.5"])
def test_empty_and_tiny_schedules(sched, want):
    """The statement: nothing to run takes no time (total 0, bubble_fraction 0); short steps are timed like long ones."""
    res = zero_bubble.simulate(sched, 0.5, 1.0, 1.0)
    got = {"timeline": _rows(res), "total": float(res["total"]), "busy": [float(x) for x in res["busy"]],
           "bubble": [float(x) for x in res["bubble"]], "bubble_fraction": float(res["bubble_fraction"])}
    assert got == want, say(f"simulate({sched!r}, tf=0.5, tb=1, tw=1):\n  expected {want}\n  got      {got}",
                            zh=f"simulate({sched!r}, tf=0.5, tb=1, tw=1)：\n  预期 {want}\n  实际 {got}")


@pytest.mark.title(zh="死锁时抛出异常")
@pytest.mark.parametrize("sched", [
    [[("F", 0), ("W", 0), ("B", 0)]],
    [[("F", 0), ("B", 0), ("W", 0)], [("B", 0), ("F", 0), ("W", 0)]],
], ids=["W before its B", "last stage B before its F"])
def test_deadlock_raises(sched):
    with pytest.raises(ValueError):
        zero_bubble.simulate(sched, 1.0, 1.0, 1.0)


@pytest.mark.title(zh="融合反向的 1F1B 的气泡")
@pytest.mark.parametrize("p,m", [(2, 4), (4, 8)])
def test_fused_1f1b_bubble(p, m):
    res = H.simulate_named(H.one_f_one_b(p, m), 1.0, 2.0, 1.0,
                           say(f"1F1B with a fused backward (F and B only), p={p}, m={m}",
                               zh=f"融合反向的 1F1B（只有 F 和 B），p={p}、m={m}"))
    got = [float(b) for b in res["bubble"]]
    assert got == [3.0 * (p - 1)] * p, say(
        f"1F1B (F and B only, T_F = 1, T_B = 2) with p={p}, m={m}: expected bubble (p - 1)(T_F + T_B) = {3 * (p - 1)} "
        f"per stage, got {got}",
        zh=f"p={p}、m={m} 的 1F1B（只有 F 和 B，T_F = 1，T_B = 2）：预期每个 stage 的气泡 (p - 1)(T_F + T_B) = "
           f"{3 * (p - 1)}，实际 {got}")


@pytest.mark.title(zh="每个 B 之后紧跟 W 的 1F1B：B 不再把 W 带回流水线上游，气泡是 (p - 1)(T_F + T_B)")
@pytest.mark.parametrize("p,m", [(2, 4), (4, 8)])
def test_split_1f1b_bubble(p, m):
    """1F1B with W right after each B: B no longer carries W back up the pipeline, so the bubble is (p - 1)(T_F + T_B)."""
    sched = H.w_right_after_b(H.one_f_one_b(p, m))
    res = H.simulate_named(sched, 1.0, 1.0, 1.0, say(f"1F1B with W right after each B, p={p}, m={m}",
                                                     zh=f"每个 B 之后紧跟 W 的 1F1B，p={p}、m={m}"))
    got = [float(b) for b in res["bubble"]]
    assert got == [2.0 * (p - 1)] * p, say(
        f"1F1B with W right after each B, unit times, p={p}, m={m}: expected bubble (p - 1)(T_F + T_B) = {2 * (p - 1)} "
        f"per stage, got {got}",
        zh=f"每个 B 之后紧跟 W 的 1F1B，单位时间，p={p}、m={m}：预期每个 stage 的气泡 (p - 1)(T_F + T_B) = "
           f"{2 * (p - 1)}，实际 {got}")


@pytest.mark.title(zh="测试中写出的 ZB-H1 顺序（包括题面的示例）计时：每个 stage 空闲 p - 1")
@pytest.mark.parametrize("p,m", list(H.ZB_H1), ids=[f"p{p}-m{m}" for p, m in H.ZB_H1])
def test_given_zb_h1_bubble(p, m, record_property):
    """The ZB-H1 orders written out in the tests (the statement's worked example among them), timed: p - 1 per stage."""
    sched = H.zb_h1(p, m)
    res = H.simulate_named(sched, 1.0, 1.0, 1.0, say(f"the ZB-H1 order for p={p}, m={m} (from the tests' table)",
                                                     zh=f"p={p}、m={m} 时 ZB-H1 的顺序（来自测试中的表）"))
    record_property("timeline", timeline(res["timeline"], title=f"the ZB-H1 order, p={p}, m={m}, unit times"))
    got = [float(b) for b in res["bubble"]]
    assert float(res["total"]) == 3 * m + p - 1 and got == [float(p - 1)] * p, say(
        f"ZB-H1 with p={p}, m={m} and unit times: expected total 3m + p - 1 = {3 * m + p - 1} and bubble p - 1 = {p - 1} "
        f"on every stage, got total {float(res['total']):g} and bubbles {got}\n{H.fmt_sched(sched)}",
        zh=f"p={p}、m={m}、单位时间下的 ZB-H1：预期 total 3m + p - 1 = {3 * m + p - 1}，每个 stage 上的气泡 p - 1 = "
           f"{p - 1}，实际 total {float(res['total']):g}，气泡 {got}\n{H.fmt_sched(sched)}")


def _why_zh(why: str) -> str:
    """A ``why`` of test_malformed_schedules_raise in Chinese."""
    if " appears twice on " in why:
        op, where = why.split(" appears twice on ")
        return f"{op} 在{'一个 stage ' if where == 'a stage' else ' ' + where + ' '}上出现了两次"
    if " is not an op name: " in why:
        return why.split(" is not an op name: ")[0] + " 不是一个操作名：操作是 'F'、'B' 和 'W'"
    return why


@pytest.mark.title(zh="题面：操作名不是 F、B、W，或同一 stage 上一个操作列出两次时，抛出 ValueError")
@pytest.mark.parametrize("sched, why", [
    ([[("F", 0), ("B", 0), ("w", 0)]], "'w' is not an op name: ops are 'F', 'B' and 'W'"),
    ([[("F", 0), ("X", 0), ("B", 0)]], "'X' is not an op name: ops are 'F', 'B' and 'W'"),
    ([[("F", 0), ("B", 0), ("W", 0), ("W", 0)]], "W0 appears twice on a stage"),
    ([[("F", 0), ("F", 0), ("B", 0), ("W", 0)]], "F0 appears twice on a stage"),
    ([[("F", 0), ("B", 0), ("B", 0), ("W", 0)]], "B0 appears twice on a stage"),
    ([[("F", 0), ("B", 0), ("W", 0), ("F", 1), ("F", 0), ("B", 1), ("W", 1)]], "F0 appears twice on a stage"),
    ([[("F", 0), ("F", 1), ("B", 0), ("B", 1), ("W", 0), ("B", 0), ("W", 1)]], "B0 appears twice on a stage"),
    ([[("F", 0), ("B", 0)], [("F", 0), ("B", 0), ("W", 0), ("F", 1), ("B", 1), ("W", 0)]], "W0 appears twice on stage 1"),
], ids=["lowercase w", "unknown op", "W twice", "F twice", "B twice", "F twice, apart", "B twice, apart",
        "W twice, apart"])
def test_malformed_schedules_raise(sched, why):
    """The statement: ValueError for an op name other than F, B, W and for an op listed twice on a stage."""
    try:
        got = zero_bubble.simulate(sched, 1.0, 1.0, 1.0)
    except ValueError:
        return
    except Exception as exc:  # noqa: BLE001 - reported to the learner
        raise AssertionError(say(f"simulate({H.fmt_sched(sched).strip()}) should raise ValueError ({why}), but raised "
                                 f"{type(exc).__name__}: {exc}",
                                 zh=f"simulate({H.fmt_sched(sched).strip()}) 应抛出 ValueError（{_why_zh(why)}），"
                                    f"但抛出了 {type(exc).__name__}: {exc}")) from None
    raise AssertionError(say(f"simulate({H.fmt_sched(sched).strip()}) should raise ValueError ({why}), but it "
                             f"returned a result with total {got.get('total') if isinstance(got, dict) else got!r}",
                             zh=f"simulate({H.fmt_sched(sched).strip()}) 应抛出 ValueError（{_why_zh(why)}），但它"
                                f"返回了一个 total 为 {got.get('total') if isinstance(got, dict) else got!r} 的结果"))


def _raises_value_error(sched) -> tuple[bool, str]:
    """(True, "") if simulate raises ValueError on ``sched``; else (False, what it did instead)."""
    try:
        got = zero_bubble.simulate(sched, 1.0, 1.0, 1.0)
    except ValueError:
        return True, ""
    except Exception as exc:  # noqa: BLE001 - reported to the learner
        return False, say(f"raised {type(exc).__name__}: {exc}", zh=f"抛出了 {type(exc).__name__}: {exc}")
    return False, say(f"returned a result with total {got.get('total') if isinstance(got, dict) else got!r}",
                      zh=f"返回了一个 total 为 {got.get('total') if isinstance(got, dict) else got!r} 的结果")


@pytest.mark.title(zh="题面：操作名不是 F、B 或 W 时抛出 ValueError，由其中几个拼成的名字也是")
@pytest.mark.parametrize("name", ["FB", "BW", ""], ids=repr)
def test_op_names_are_whole_names(name):
    """The statement: ValueError if an op name is not F, B or W, so also for a name made of several of them."""
    sched = [[("F", 0), ("B", 0), (name, 0), ("W", 0)]]
    raised, what = _raises_value_error(sched)
    if raised:
        return
    hint = ""
    if _raises_value_error([[("F", 0), ("B", 0), ("X", 0), ("W", 0)]])[0]:
        hint = say(f" Your simulate rejects the op name 'X' but not {name!r}, which is a substring of 'FBW': compare "
                   f"the whole name (op in ('F', 'B', 'W')), not `op in 'FBW'`.",
                   zh=f" 你的 simulate 拒绝了操作名 'X'，却没有拒绝 {name!r}，它是 'FBW' 的一个子串：应比较整个名字"
                      f"（op in ('F', 'B', 'W')），而不是 `op in 'FBW'`。")
    raise AssertionError(say(f"simulate on a stage with the ops F0 B0 ({name!r}, 0) W0 should raise ValueError ({name!r} "
                             f"is not an op name: ops are 'F', 'B' and 'W'), but it {what}.{hint}",
                             zh=f"simulate 在操作为 F0 B0 ({name!r}, 0) W0 的 stage 上应抛出 ValueError（{name!r} "
                                f"不是一个操作名：操作是 'F'、'B' 和 'W'），但它{what}。{hint}"))


@pytest.mark.title(zh="题面：有操作永远无法开始时抛出 ValueError，它等待的操作不在调度中时也是")
@pytest.mark.parametrize("sched, op, dep", [
    ([[("F", 0), ("B", 0), ("W", 0)], [("F", 0)]], ("B", 0, 0), ("B", 1, 0)),
    ([[("B", 0), ("W", 0)], [("F", 0), ("B", 0), ("W", 0)]], ("F", 1, 0), ("F", 0, 0)),
    ([[("F", 0), ("W", 0)]], ("W", 0, 0), ("B", 0, 0)),
], ids=["stage 1 has no B0", "stage 0 has no F0", "W0 without its B0"])
def test_missing_dependency_raises(sched, op, dep):
    """The statement: ValueError if some ops can never start, also when the op they wait for is not in the schedule."""
    raised, what = _raises_value_error(sched)
    if raised:
        return
    name, s, i = op
    ran = ""
    try:
        res = zero_bubble.simulate(sched, 1.0, 1.0, 1.0)
        row = [(str(o), int(j), float(a), float(b)) for o, j, a, b in res["timeline"][s]]
        hit = [r for r in row if r[:2] == (name, i)]
    except Exception:  # noqa: BLE001 - the message above already says what simulate did
        hit = []
    if hit:
        ran = say(f" Your timeline runs stage {s}'s {name}{i} from {hit[0][2]:g} to {hit[0][3]:g}, as if the op it "
                  f"waits for had run: an op whose dependency is not in the schedule can never start.",
                  zh=f" 你的时间线让 stage {s} 的 {name}{i} 从 {hit[0][2]:g} 运行到 {hit[0][3]:g}，仿佛它等待的操作"
                     f"已经运行过：一个依赖不在调度中的操作永远无法开始。")
    raise AssertionError(say(
        f"simulate on\n{H.fmt_sched(sched)}\nshould raise ValueError: stage {s}'s {name}{i} waits for stage "
        f"{dep[1]}'s {dep[0]}{dep[2]}, which is not in the schedule, so it can never start. Instead it {what}.{ran}",
        zh=f"simulate 在\n{H.fmt_sched(sched)}\n上应抛出 ValueError：stage {s} 的 {name}{i} 等待 stage "
           f"{dep[1]} 的 {dep[0]}{dep[2]}，而它不在调度中，所以永远无法开始。它却{what}。{ran}"))
