"""Part 2: the dependency-driven simulator."""

import pytest
import zb_helpers as H
import zero_bubble

from judge.artifacts import timeline


def _rows(res):
    return [[(str(op), int(i), float(a), float(b)) for op, i, a, b in row] for row in res["timeline"]]


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
        assert got[s] == want[s], f"stage {s}: expected {want[s]}, got {got[s]}"
    assert float(res["total"]) == 9.5, f"total: expected 9.5, got {float(res['total'])}"
    assert [float(x) for x in res["busy"]] == [7.0, 7.0], f"busy: expected [7.0, 7.0], got {res['busy']}"
    assert [float(x) for x in res["bubble"]] == [2.5, 2.5], f"bubble: expected [2.5, 2.5] (total - busy), got {res['bubble']}"
    frac = float(res["bubble_fraction"])
    assert abs(frac - 5.0 / 19.0) < 1e-12, f"bubble_fraction: expected sum(bubble) / (p * total) = 5/19, got {frac}"


def test_b_waits_for_next_stage_b_not_w():
    # Stage 1 runs W0 late; stage 0's B0 may start as soon as stage 1's B0 is done.
    sched = [[("F", 0), ("B", 0), ("W", 0)], [("F", 0), ("B", 0), ("W", 0)]]
    res = zero_bubble.simulate(sched, 1.0, 1.0, 3.0)
    got = _rows(res)
    assert got[0][1] == ("B", 0, 3.0, 4.0), (
        f"stage 0's B0 should run from 3 to 4 (right after stage 1's B0 ends at 3), got {got[0][1]}. "
        "B passes the input gradient back; it does not wait for the next stage's W.")
    assert float(res["total"]) == 7.0, f"total: expected 7.0 (stage 0's W0 ends at 7), got {float(res['total'])}"


def test_w_waits_for_its_own_b_only():
    sched = [[("F", 0), ("F", 1), ("B", 0), ("B", 1), ("W", 0), ("W", 1)]]
    res = zero_bubble.simulate(sched, 1.0, 1.0, 1.0)
    assert float(res["total"]) == 6.0 and [float(b) for b in res["bubble"]] == [0.0], (
        f"one stage, six unit ops in a row: expected total 6 and bubble [0.0], got {float(res['total'])} and {res['bubble']}")


def test_runs_ops_in_list_order():
    # W0 is listed before F1 on stage 0, so F1 (and stage 1's F1) must wait for it.
    sched = [[("F", 0), ("B", 0), ("W", 0), ("F", 1), ("B", 1), ("W", 1)], [("F", 0), ("B", 0), ("W", 0), ("F", 1), ("B", 1), ("W", 1)]]
    res = zero_bubble.simulate(sched, 1.0, 1.0, 1.0)
    got = _rows(res)
    assert got[0][3] == ("F", 1, 5.0, 6.0), f"stage 0's F1 should run from 5 to 6 (after its W0), got {got[0][3]}"
    assert float(res["total"]) == 10.0, f"total: expected 10.0, got {float(res['total'])}"


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
    assert got == want, f"simulate({sched!r}, tf=0.5, tb=1, tw=1):\n  expected {want}\n  got      {got}"


@pytest.mark.parametrize("sched", [
    [[("F", 0), ("W", 0), ("B", 0)]],
    [[("F", 0), ("B", 0), ("W", 0)], [("B", 0), ("F", 0), ("W", 0)]],
], ids=["W before its B", "last stage B before its F"])
def test_deadlock_raises(sched):
    with pytest.raises(ValueError):
        zero_bubble.simulate(sched, 1.0, 1.0, 1.0)


@pytest.mark.parametrize("p,m", [(2, 4), (4, 8)])
def test_fused_1f1b_bubble(p, m):
    res = H.simulate_named(H.one_f_one_b(p, m), 1.0, 2.0, 1.0, f"1F1B with a fused backward (F and B only), p={p}, m={m}")
    got = [float(b) for b in res["bubble"]]
    assert got == [3.0 * (p - 1)] * p, (
        f"1F1B (F and B only, T_F = 1, T_B = 2) with p={p}, m={m}: expected bubble (p - 1)(T_F + T_B) = {3 * (p - 1)} "
        f"per stage, got {got}")


@pytest.mark.parametrize("p,m", [(2, 4), (4, 8)])
def test_split_1f1b_bubble(p, m):
    """1F1B with W right after each B: B no longer carries W back up the pipeline, so the bubble is (p - 1)(T_F + T_B)."""
    sched = H.w_right_after_b(H.one_f_one_b(p, m))
    res = H.simulate_named(sched, 1.0, 1.0, 1.0, f"1F1B with W right after each B, p={p}, m={m}")
    got = [float(b) for b in res["bubble"]]
    assert got == [2.0 * (p - 1)] * p, (
        f"1F1B with W right after each B, unit times, p={p}, m={m}: expected bubble (p - 1)(T_F + T_B) = {2 * (p - 1)} "
        f"per stage, got {got}")


@pytest.mark.parametrize("p,m", list(H.ZB_H1), ids=[f"p{p}-m{m}" for p, m in H.ZB_H1])
def test_given_zb_h1_bubble(p, m, record_property):
    """The ZB-H1 orders written out in the tests (the statement's worked example among them), timed: p - 1 per stage."""
    sched = H.zb_h1(p, m)
    res = H.simulate_named(sched, 1.0, 1.0, 1.0, f"the ZB-H1 order for p={p}, m={m} (from the tests' table)")
    record_property("timeline", timeline(res["timeline"], title=f"the ZB-H1 order, p={p}, m={m}, unit times"))
    got = [float(b) for b in res["bubble"]]
    assert float(res["total"]) == 3 * m + p - 1 and got == [float(p - 1)] * p, (
        f"ZB-H1 with p={p}, m={m} and unit times: expected total 3m + p - 1 = {3 * m + p - 1} and bubble p - 1 = {p - 1} "
        f"on every stage, got total {float(res['total']):g} and bubbles {got}\n{H.fmt_sched(sched)}")


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
        raise AssertionError(f"simulate({H.fmt_sched(sched).strip()}) should raise ValueError ({why}), but raised "
                             f"{type(exc).__name__}: {exc}") from None
    raise AssertionError(f"simulate({H.fmt_sched(sched).strip()}) should raise ValueError ({why}), but it "
                         f"returned a result with total {got.get('total') if isinstance(got, dict) else got!r}")


def _raises_value_error(sched) -> tuple[bool, str]:
    """(True, "") if simulate raises ValueError on ``sched``; else (False, what it did instead)."""
    try:
        got = zero_bubble.simulate(sched, 1.0, 1.0, 1.0)
    except ValueError:
        return True, ""
    except Exception as exc:  # noqa: BLE001 - reported to the learner
        return False, f"raised {type(exc).__name__}: {exc}"
    return False, f"returned a result with total {got.get('total') if isinstance(got, dict) else got!r}"


@pytest.mark.parametrize("name", ["FB", "BW", ""], ids=repr)
def test_op_names_are_whole_names(name):
    """The statement: ValueError if an op name is not F, B or W, so also for a name made of several of them."""
    sched = [[("F", 0), ("B", 0), (name, 0), ("W", 0)]]
    raised, what = _raises_value_error(sched)
    if raised:
        return
    hint = ""
    if _raises_value_error([[("F", 0), ("B", 0), ("X", 0), ("W", 0)]])[0]:
        hint = (f" Your simulate rejects the op name 'X' but not {name!r}, which is a substring of 'FBW': compare "
                f"the whole name (op in ('F', 'B', 'W')), not `op in 'FBW'`.")
    raise AssertionError(f"simulate on a stage with the ops F0 B0 ({name!r}, 0) W0 should raise ValueError ({name!r} "
                         f"is not an op name: ops are 'F', 'B' and 'W'), but it {what}.{hint}")


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
        ran = (f" Your timeline runs stage {s}'s {name}{i} from {hit[0][2]:g} to {hit[0][3]:g}, as if the op it "
               f"waits for had run: an op whose dependency is not in the schedule can never start.")
    raise AssertionError(
        f"simulate on\n{H.fmt_sched(sched)}\nshould raise ValueError: stage {s}'s {name}{i} waits for stage "
        f"{dep[1]}'s {dep[0]}{dep[2]}, which is not in the schedule, so it can never start. Instead it {what}.{ran}")
