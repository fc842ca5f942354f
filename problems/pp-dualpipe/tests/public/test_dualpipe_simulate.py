"""The simulator: durations, dependencies, errors, and the bubble against 1F1B and ZB-H1."""

import dualpipe
import dualpipe_helpers as H
import pytest


def _sim(sched, tf, tb, tw, gain, what):
    return H.simulate_named(dualpipe, sched, tf, tb, tw, gain, what)


# one rank holding stages 0 and 1: every kind of action once
ONE_RANK = H.parse("F0s0 F0s1 I0s1 F1s0 W0s1 F1s1&B0s0 B1s1 B1s0")
ONE_RANK_TIMES = [("F0s0", 0.0, 1.0), ("F0s1", 1.0, 2.0), ("I0s1", 2.0, 3.5), ("F1s0", 3.5, 4.5), ("W0s1", 4.5, 5.0),
                  ("F1s1&B0s0", 5.0, 7.5), ("B1s1", 7.5, 9.5), ("B1s0", 9.5, 11.5)]


def test_durations_one_rank(record_property):
    res = _sim([ONE_RANK], 1.0, 2.0, 0.5, 0.5, "a one-rank schedule with every kind of action")
    record_property("timeline", H.to_timeline(res, 1, "your simulate: one rank, T_F=1, T_B=2, T_W=0.5, gain=0.5"))
    record_property("expected", H.expected_timeline([ONE_RANK_TIMES], 1, "expected: one rank, T_F=1, T_B=2, T_W=0.5, gain=0.5"))
    got = H.rows(res)[0]
    hint = H.duration_hint(res, 1.0, 2.0, 0.5, 0.5)
    assert got == ONE_RANK_TIMES, (
        f"T_F=1, T_B=2, T_W=0.5, gain=0.5 (F 1, B 2, I 1.5, W 0.5, pair 2.5), one rank, no waiting:\n"
        f"  expected {ONE_RANK_TIMES}\n  got      {got}.{hint}")
    assert float(res["total"]) == 11.5, f"total: expected 11.5, got {float(res['total'])}"
    assert [float(x) for x in res["busy"]] == [11.5] and [float(x) for x in res["bubble"]] == [0.0], (
        f"busy and bubble: expected [11.5] and [0.0], got {res['busy']} and {res['bubble']}")
    assert float(res["bubble_fraction"]) == 0.0, f"bubble_fraction: expected 0.0, got {res['bubble_fraction']}"


ONE_RANK_TIMES_NO_GAIN = [("F0s0", 0.0, 1.0), ("F0s1", 1.0, 2.0), ("I0s1", 2.0, 3.5), ("F1s0", 3.5, 4.5),
                          ("W0s1", 4.5, 5.0), ("F1s1&B0s0", 5.0, 8.0), ("B1s1", 8.0, 10.0), ("B1s0", 10.0, 12.0)]


def test_gain_defaults_to_zero():
    """simulate(sched, tf, tb, tw): gain is optional, 0.0 by default (a pair then takes T_F + T_B)."""
    try:
        res = dualpipe.simulate([ONE_RANK], 1.0, 2.0, 0.5)
    except TypeError as exc:
        raise AssertionError(f"simulate(sched, 1.0, 2.0, 0.5) without gain raised TypeError: {exc}. The signature is "
                             f"simulate(sched, tf, tb, tw, gain=0.0): gain is optional and defaults to 0.0") from None
    got = H.rows(res)[0]
    assert got == ONE_RANK_TIMES_NO_GAIN, (
        f"simulate(sched, 1.0, 2.0, 0.5) without gain should run as with gain=0.0 (pair T_F + T_B = 3):\n"
        f"  expected {ONE_RANK_TIMES_NO_GAIN}\n  got      {got}")


def _as_lists(sched):
    """The same schedule with every action (and each half of a pair) written as a list."""
    return [[[list(x) for x in a] if isinstance(a[0], tuple) else list(a) for a in row] for row in sched]


@pytest.mark.parametrize("written", ["tuples", "lists"])
def test_timeline_lists_actions_as_given(written):
    """Each timeline entry is (action, start, end) with the action exactly as the schedule lists it (a list stays a list)."""
    sched = TWO_RANKS if written == "tuples" else _as_lists(TWO_RANKS)
    res = _sim(sched, 1.0, 2.0, 1.0, 1.0, f"a two-rank schedule with one pair, its actions written as {written}")
    for r, row in enumerate(sched):
        got = [entry[0] for entry in res["timeline"][r]]
        for k, (want, action) in enumerate(zip(row, got, strict=False)):
            if action == want and type(action) is type(want):
                continue
            hint = ""
            if isinstance(want[0], str) and isinstance(action, (tuple, list)) and list(action) == [tuple(want)]:
                hint = " That is the tuple of the action's parts: a single action is the action itself."
            elif H.label(action) == H.label(want):
                hint = (f" It is the same action rebuilt as a {type(action).__name__}: put the schedule's own action "
                        f"object in the timeline.")
            raise AssertionError(
                f"simulate's timeline[{r}][{k}] should hold the action exactly as the schedule lists it, {want!r} (a "
                f"{type(want).__name__}); got {action!r} (a {type(action).__name__}).{hint}\n{H.fmt_sched(sched)}")
        assert len(got) == len(row), f"timeline[{r}] should list the rank's {len(row)} actions; it lists {len(got)}"


# two ranks (stages 0..3), T_B = 3 and T_W = 2, so T_I = 1: stage 2's B0s2 needs the gradient of I0s3, which
# is sent when I0s3 ends (at 5), not after the W0s3 rank 0 runs next; rank 1 runs the last action
W_AFTER_I = [H.parse("F0s0 F0s3 I0s3 W0s3 I0s0"), H.parse("F0s1 F0s2 B0s2 I0s1 W0s1")]
W_AFTER_I_TIMES = [
    [("F0s0", 0.0, 1.0), ("F0s3", 3.0, 4.0), ("I0s3", 4.0, 5.0), ("W0s3", 5.0, 7.0), ("I0s0", 9.0, 10.0)],
    [("F0s1", 1.0, 2.0), ("F0s2", 2.0, 3.0), ("B0s2", 5.0, 8.0), ("I0s1", 8.0, 9.0), ("W0s1", 9.0, 11.0)],
]


def test_w_does_not_delay_its_i(record_property):
    """The input gradient of an I is sent when the I ends: the previous stage's backward never waits for the W."""
    res = _sim(W_AFTER_I, 1.0, 3.0, 2.0, 0.0, "a two-rank schedule with I and W")
    record_property("timeline", H.to_timeline(res, 2, "your simulate: two ranks, T_F=1, T_B=3, T_W=2 (T_I=1)"))
    record_property("expected", H.expected_timeline(W_AFTER_I_TIMES, 2, "expected: two ranks, T_F=1, T_B=3, T_W=2 (T_I=1)"))
    got = H.rows(res)
    b02 = next((x for x in got[1] if x[0] == "B0s2"), None)
    if b02 is not None and b02[1] == 7.0:
        raise AssertionError(
            "rank 1's B0s2 started at 7, when W0s3 ended; but it needs only the input gradient of stage 3, which I0s3 "
            f"sends when it ends, at 5: a W never delays the gradient of its I, so B0s2 runs from 5 to 8.\n  got {got}")
    for r in range(2):
        assert got[r] == W_AFTER_I_TIMES[r], (
            f"rank {r} (T_F=1, T_B=3, I 1, W 2):\n  expected {W_AFTER_I_TIMES[r]}\n  got      {got[r]}."
            + H.duration_hint(res, 1.0, 3.0, 2.0, 0.0))
    total = float(res["total"])
    assert total == 11.0, (f"total: expected 11.0, the time the last action ends (rank 1's W0s1; rank 0 is done at 10), "
                           f"got {total:g}" + (" (rank 0's end: the total is the latest end over every rank)"
                                               if total == 10.0 else ""))
    assert [float(x) for x in res["busy"]] == [6.0, 8.0], f"busy: expected [6.0, 8.0], got {res['busy']}"
    assert [float(x) for x in res["bubble"]] == [5.0, 3.0], f"bubble: expected total - busy = [5.0, 3.0], got {res['bubble']}"
    assert abs(float(res["bubble_fraction"]) - 8 / 22) < 1e-12, (
        f"bubble_fraction: expected sum(bubble) / (p * total) = 8 / 22, got {res['bubble_fraction']}")


# two ranks (stages 0..3): rank 1's pair F1s1&B0s2 has its forward's input at 2 but its backward's at 6
TWO_RANKS = [H.parse("F0s0 F1s0 F0s3 B0s3 F1s3 B1s3 B0s0 B1s0"),
             H.parse("F0s1 F0s2 F1s1&B0s2 F1s2 B1s2 B0s1 B1s1")]
TWO_RANKS_TIMES = [
    [("F0s0", 0.0, 1.0), ("F1s0", 1.0, 2.0), ("F0s3", 3.0, 4.0), ("B0s3", 4.0, 6.0), ("F1s3", 9.0, 10.0),
     ("B1s3", 10.0, 12.0), ("B0s0", 16.0, 18.0), ("B1s0", 18.0, 20.0)],
    [("F0s1", 1.0, 2.0), ("F0s2", 2.0, 3.0), ("F1s1&B0s2", 6.0, 8.0), ("F1s2", 8.0, 9.0), ("B1s2", 12.0, 14.0),
     ("B0s1", 14.0, 16.0), ("B1s1", 16.0, 18.0)],
]


def test_pair_waits_for_both_inputs(record_property):
    res = _sim(TWO_RANKS, 1.0, 2.0, 1.0, 1.0, "a two-rank schedule with one pair")
    record_property("timeline", H.to_timeline(res, 2, "your simulate: two ranks, T_F=1, T_B=2, T_W=1, gain=1"))
    record_property("expected", H.expected_timeline(TWO_RANKS_TIMES, 2, "expected: two ranks, T_F=1, T_B=2, T_W=1, gain=1"))
    got = H.rows(res)
    pair = next((x for x in got[1] if x[0] == "F1s1&B0s2"), None)
    if pair is not None and pair[1] == 3.0:
        raise AssertionError(
            f"rank 1's pair F1s1&B0s2 started at 3, as soon as rank 1 was free and F1s0 (its forward's input) had "
            f"ended at 2; but its backward needs the gradient of B0s3, which ends at 6: a pair starts only when both "
            f"of its inputs are ready, so it runs from 6 to 8.\n  got {got}")
    for r in range(2):
        assert got[r] == TWO_RANKS_TIMES[r], (
            f"rank {r} (T_F=1, T_B=2, pair 2):\n  expected {TWO_RANKS_TIMES[r]}\n  got      {got[r]}."
            + H.duration_hint(res, 1.0, 2.0, 1.0, 1.0))
    assert float(res["total"]) == 20.0, f"total: expected 20.0, got {float(res['total'])}"
    assert [float(x) for x in res["busy"]] == [12.0, 11.0], f"busy: expected [12.0, 11.0], got {res['busy']}"
    assert [float(x) for x in res["bubble"]] == [8.0, 9.0], f"bubble: expected total - busy = [8.0, 9.0], got {res['bubble']}"
    assert abs(float(res["bubble_fraction"]) - 17 / 40) < 1e-12, (
        f"bubble_fraction: expected sum(bubble) / (p * total) = 17 / 40 = 0.425, got {res['bubble_fraction']}")


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


def test_pair_waits_for_its_forward_input(record_property):
    res = _sim(FORWARD_LATE, 1.0, 2.0, 1.0, 1.0, "a two-rank schedule with one pair")
    record_property("timeline", H.to_timeline(res, 2, "your simulate: two ranks, T_F=1, T_B=2, T_W=1, gain=1"))
    record_property("expected", H.expected_timeline(FORWARD_LATE_TIMES, 2, "expected: two ranks, T_F=1, T_B=2, T_W=1, gain=1"))
    got = H.rows(res)
    pair = next((x for x in got[1] if x[0] == "F1s1&B0s2"), None)
    if pair is not None and pair[1] == 6.0:
        raise AssertionError(
            f"rank 1's pair F1s1&B0s2 started at 6, when the gradient for its backward (B0s3) was ready; but its forward "
            f"needs F1s0, which ends at 7: a pair starts only when both of its inputs are ready, so it runs from 7 to 9."
            f"\n  got {got}")
    for r in range(2):
        assert got[r] == FORWARD_LATE_TIMES[r], (
            f"rank {r} (T_F=1, T_B=2, pair 2):\n  expected {FORWARD_LATE_TIMES[r]}\n  got      {got[r]}."
            + H.duration_hint(res, 1.0, 2.0, 1.0, 1.0))
    assert float(res["total"]) == 21.0, f"total: expected 21.0, got {float(res['total'])}"


PAIRS = H.parse("F0s0 F1s0 F0s1 F1s1&B0s1 F2s0&B1s1 B0s0 F2s1 B2s1 B1s0 B2s0")


@pytest.mark.parametrize("gain", [0.0, 0.5, 1.0])
def test_pair_duration(gain, record_property):
    """One rank, no waiting: each pair lasts T_F + T_B - gain, every other action its own time."""
    res = _sim([PAIRS], 1.0, 2.0, 1.0, gain, "a one-rank schedule with two pairs")
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
    assert got == want, (f"T_F=1, T_B=2, gain={gain:g} (a pair takes T_F + T_B - gain = {pair:g}), one rank, no waiting:"
                         f"\n  expected {want}\n  got      {got}." + H.duration_hint(res, 1.0, 2.0, 1.0, gain))
    assert float(res["total"]) == t and [float(b) for b in res["bubble"]] == [0.0], (
        f"total and bubble: expected {t:g} and [0.0], got {float(res['total']):g} and {res['bubble']}")


# three ranks, one stage each: rank 1's pair sends its forward's output to rank 2 and its backward's
# gradient to rank 0, both of which are idle, waiting for it
THREE_RANKS = [H.parse("F0s0 F1s0 B0s0 B1s0"), H.parse("F0s1 F1s1&B0s1 B1s1"), H.parse("F0s2 B0s2 F1s2 B1s2")]
THREE_RANKS_TIMES = [
    [("F0s0", 0.0, 1.0), ("F1s0", 1.0, 2.0), ("B0s0", 7.5, 9.5), ("B1s0", 12.5, 14.5)],
    [("F0s1", 1.0, 2.0), ("F1s1&B0s1", 5.0, 7.5), ("B1s1", 10.5, 12.5)],
    [("F0s2", 2.0, 3.0), ("B0s2", 3.0, 5.0), ("F1s2", 7.5, 8.5), ("B1s2", 8.5, 10.5)],
]


def test_pair_outputs_ready_at_its_end(record_property):
    res = _sim(THREE_RANKS, 1.0, 2.0, 1.0, 0.5, "a three-rank schedule with one pair")
    record_property("timeline", H.to_timeline(res, None, "your simulate: three ranks, T_F=1, T_B=2, T_W=1, gain=0.5"))
    record_property("expected", H.expected_timeline(THREE_RANKS_TIMES, None, "expected: three ranks, T_F=1, T_B=2, T_W=1, gain=0.5"))
    got = H.rows(res)
    pair = next((x for x in got[1] if x[0] == "F1s1&B0s1"), None)
    f_next = next((x for x in got[2] if x[0] == "F1s2"), None)
    b_next = next((x for x in got[0] if x[0] == "B0s0"), None)
    if pair is not None and pair[1] == 5.0:
        for user, early, half in ((f_next, 6.0, "forward"), (b_next, 7.0, "backward")):
            if user is not None and user[1] == early:
                raise AssertionError(
                    f"{user[0]} started at {early:g}, the pair F1s1&B0s1's start 5 + T_{half[0].upper()}, as if the pair "
                    f"ran its {half} half first and sent its result at once; but a pair's outputs are available only "
                    f"at its end: the pair runs from 5 to 7.5, so {user[0]} starts at 7.5.\n  got {got}")
    for r in range(3):
        assert got[r] == THREE_RANKS_TIMES[r], (
            f"rank {r} (T_F=1, T_B=2, pair 2.5; the pair's forward output and backward gradient are both available at "
            f"its end):\n  expected {THREE_RANKS_TIMES[r]}\n  got      {got[r]}." + H.duration_hint(res, 1.0, 2.0, 1.0, 0.5))
    assert float(res["total"]) == 14.5, f"total: expected 14.5, got {float(res['total'])}"
    assert [float(x) for x in res["busy"]] == [6.0, 5.5, 6.0], f"busy: expected [6.0, 5.5, 6.0], got {res['busy']}"


@pytest.mark.parametrize("sched, want", [
    ([], {"timeline": [], "total": 0.0, "busy": [], "bubble": [], "bubble_fraction": 0.0}),
    ([[]], {"timeline": [[]], "total": 0.0, "busy": [0.0], "bubble": [0.0], "bubble_fraction": 0.0}),
    ([[("F", 0, 0)], [("F", 0, 1)]], {"timeline": [[("F0s0", 0.0, 0.5)], [("F0s1", 0.5, 1.0)]], "total": 1.0,
                                      "busy": [0.5, 0.5], "bubble": [0.5, 0.5], "bubble_fraction": 0.5}),
], ids=["no ranks", "a rank without actions", "two forwards of 0.5"])
def test_empty_and_tiny_schedules(sched, want):
    """The statement: nothing to run takes no time (total 0, bubble_fraction 0); short steps are timed like long ones."""
    res = _sim(sched, 0.5, 1.0, 0.5, 0.0, f"the schedule {sched!r}")
    got = {"timeline": H.rows(res), "total": float(res["total"]), "busy": [float(x) for x in res["busy"]],
           "bubble": [float(x) for x in res["bubble"]], "bubble_fraction": float(res["bubble_fraction"])}
    assert got == want, f"simulate({sched!r}, tf=0.5, tb=1, tw=0.5):\n  expected {want}\n  got      {got}"


def test_bubble_fraction_is_over_ranks():
    """1F1B on 3 ranks, one stage each (not a V): bubble_fraction is sum(bubble) / (p * total) with p the number of ranks."""
    sched = H.baseline("1f1b", 3, 6)
    res = _sim(sched, 2.0, 4.0, 2.0, 0.0, "1F1B on 3 ranks (p=3, m=6, T_F=2, T_B=4)")
    bubble = [float(b) for b in res["bubble"]]
    assert float(res["total"]) == 48.0 and bubble == [12.0] * 3, (
        f"1F1B, p=3, m=6, T_F=2, T_B=4: expected total 48 and bubble (p-1)(T_F+T_B) = 12 per rank, got "
        f"{float(res['total']):g} and {bubble}")
    got = float(res["bubble_fraction"])
    assert abs(got - 36 / 144) < 1e-12, (
        f"bubble_fraction: expected sum(bubble) / (p * total) = 36 / (3 * 48) = 0.25, p = 3 ranks; got {got}"
        + (" (that is sum(bubble) / (S/2 * total) with S = 3 stages: divide by the number of ranks, which equals S/2 "
           "only for a V schedule)" if abs(got - 36 / 72) < 1e-12 else ""))


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
    H.expect_simulate_value_error(dualpipe, sched, f"simulate on\n{H.fmt_sched(sched)}\n", why)


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
    H.expect_simulate_value_error(dualpipe, sched, f"simulate({sched!r})", why)


def _raises_value_error(sched) -> bool:
    try:
        dualpipe.simulate(sched, 1.0, 2.0, 1.0, 0.0)
    except ValueError:
        return True
    except Exception:  # noqa: BLE001 - the test's own call reports what happened
        return False
    return False


@pytest.mark.parametrize("kind", ["FB", "IW", ""], ids=repr)
def test_kinds_are_whole_names(kind):
    """A kind is exactly F, B, I or W: a name made of several of them, or the empty string, is no kind."""
    sched = [[("F", 0, 0), ("I", 0, 0), (kind, 0, 0), ("W", 0, 0)]]
    hint = ""
    if not _raises_value_error(sched) and _raises_value_error([[("F", 0, 0), ("I", 0, 0), ("X", 0, 0), ("W", 0, 0)]]):
        hint = (f" Your simulate refuses the kind 'X' but not {kind!r}, which is a substring of 'FBIW': compare the "
                f"whole kind (kind in ('F', 'B', 'I', 'W')), not `kind in 'FBIW'`.")
    H.expect_simulate_value_error(dualpipe, sched, f"simulate({sched!r})", f"{kind!r} is not a kind: F, B, I, W.{hint}")


def _formula(p, tf, tb, tw, gain):
    return (p - 1) * ((tf + tb - gain) + tb - 3 * tw)


@pytest.mark.parametrize("p,m", [(2, 4), (2, 5), (3, 6), (4, 8)])
@pytest.mark.parametrize("tw,gain", [(1.0, 0.0), (1.0, 1.0), (0.5, 0.25), (0.5, 1.0)])
def test_bubble_matches_the_published_formula(p, m, tw, gain):
    """T_F = T_I = 1 (T_B = 1 + T_W): the tip's bubble is (p-1)(T_F&B + T_B - 3T_W); rank r's is (p-2-r)·gain less."""
    tf, tb = 1.0, 1.0 + tw
    res = _sim(H.expected(p, m), tf, tb, tw, gain, f"DualPipeV's order for p={p}, m={m} (from the tests' table)")
    want_tip = _formula(p, tf, tb, tw, gain)
    want = [want_tip - gain * max(0, p - 2 - r) for r in range(p)]
    got = [float(b) for b in res["bubble"]]
    pairs = 2 * m - 2 * p - 1
    want_total = 2 * m * (tf + tb) - gain * pairs + want_tip
    assert got == want and float(res["total"]) == want_total, (
        f"DualPipeV p={p}, m={m}, T_F=1, T_B={tb:g}, T_W={tw:g}, gain={gain:g} (pair {tf + tb - gain:g}): expected total "
        f"{want_total:g} and bubbles {want} (the tip rank p-1: (p-1)(T_F&B + T_B - 3T_W) = {want_tip:g}), got total "
        f"{float(res['total']):g} and bubbles {got}." + H.duration_hint(res, tf, tb, tw, gain))


def test_against_1f1b_and_zb_h1(record_property):
    """p = 4, m = 8, T_F = T_I = T_W = 1: the table of the statement."""
    p, m = 4, 8
    one = _sim(H.baseline("1f1b", p, m), 2.0, 4.0, 2.0, 0.0, "1F1B on the same model (p=4, m=8, stage times doubled)")
    zb = _sim(H.baseline("zb-h1", p, m), 2.0, 4.0, 2.0, 0.0, "ZB-H1 on the same model (p=4, m=8, stage times doubled)")
    assert float(one["total"]) == 66.0 and [float(b) for b in one["bubble"]] == [18.0] * 4, (
        f"1F1B (T_F=2, T_B=4): expected total 66 and bubble (p-1)(T_F+T_B) = 18 per rank, got "
        f"{float(one['total']):g} and {[float(b) for b in one['bubble']]}")
    assert float(zb["total"]) == 54.0 and [float(b) for b in zb["bubble"]] == [6.0] * 4, (
        f"ZB-H1 (T_F=2, T_I=2, T_W=2): expected total 54 and bubble (p-1)(T_F+T_I-T_W) = 6 per rank, got "
        f"{float(zb['total']):g} and {[float(b) for b in zb['bubble']]}" + H.duration_hint(zb, 2.0, 4.0, 2.0, 0.0))
    want = {0.0: (54.0, [6.0, 6.0, 6.0, 6.0]), 0.5: (49.0, [3.5, 4.0, 4.5, 4.5]), 1.0: (44.0, [1.0, 2.0, 3.0, 3.0])}
    for gain, (total, bubble) in want.items():
        res = _sim(H.expected(p, m), 1.0, 2.0, 1.0, gain, f"DualPipeV's order for p={p}, m={m}")
        if gain == 1.0:
            record_property("timeline", H.to_timeline(res, p, "DualPipeV, p=4, m=8, T_F=T_I=T_W=1, gain=1"))
        got = [float(b) for b in res["bubble"]]
        assert float(res["total"]) == total and got == bubble, (
            f"DualPipeV p=4, m=8, T_F=1, T_B=2, T_W=1, gain={gain:g}: expected total {total:g} and bubbles {bubble}, "
            f"got {float(res['total']):g} and {got}." + H.duration_hint(res, 1.0, 2.0, 1.0, gain))


@pytest.mark.parametrize("p,m", [(2, 4), (3, 6), (4, 8)])
def test_your_schedule_in_time(p, m, record_property):
    sched = H.normalize(dualpipe.dualpipev_schedule(p, m), p, f"dualpipev_schedule({p}, {m})")
    stuck = H.dependency_walk(sched)
    assert not stuck, f"dualpipev_schedule({p}, {m}) cannot run to the end; stuck: {'; '.join(stuck)} {H.NOTATION}"
    res = _sim(sched, 1.0, 2.0, 1.0, 1.0, f"your dualpipev_schedule({p}, {m})")
    art = H.to_timeline(res, p, f"your DualPipeV in time, p={p}, m={m}: T_F=1, T_B=2, T_W=1, gain=1")
    if art is not None:
        record_property("timeline", art)
    assert sum(len(row) for row in res["timeline"]) == sum(len(row) for row in sched), (
        "every action of the schedule must appear in the timeline")
    tip = float(res["bubble"][-1])
    assert tip == float(p - 1), (
        f"your dualpipev_schedule({p}, {m}) simulated with T_F=1, T_B=2, T_W=1, gain=1: the last rank's bubble should be "
        f"(p-1)(T_F&B + T_B - 3T_W) = {p - 1}, got {tip:g}")
