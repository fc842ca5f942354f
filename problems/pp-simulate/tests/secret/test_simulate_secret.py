"""Secret tests for pp-simulate: many sizes and durations against an oracle, arbitrary valid and
deadlocking orders, validation, and render() on wide and non-aligned timelines."""

from __future__ import annotations

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
    expect_value_error,
    ops,
    read,
    run,
)
from simulate_oracle import ballot_orders, close, oracle_render, oracle_simulate


def check_against_oracle(sim, sched, tf, tb, where):
    timeline, total, bubble, _ = oracle_simulate(sched, tf, tb)
    check_rules(sim, sched, tf, tb, where)
    check_blocks(sim, timeline, where)
    assert close(sim.total, total), f"{where}: expected total {total:g}, got {sim.total:g}"
    check_bubble(sim, bubble, where)
    check_peaks(sim, sched, where)


@pytest.mark.parametrize("kind, p, m, tf, tb", [
    ("gpipe", 1, 1, 1.0, 2.0), ("1f1b", 1, 5, 0.5, 0.75), ("1f1b", 2, 1, 1.0, 2.0),
    ("gpipe", 3, 2, 1.0, 1.0), ("1f1b", 3, 7, 0.3, 0.7), ("1f1b", 5, 3, 1.0, 2.0),
    ("gpipe", 6, 9, 2.0, 1.0), ("1f1b", 8, 8, 1.0, 2.0), ("1f1b", 8, 32, 1.0, 2.0),
    ("gpipe", 8, 32, 0.125, 0.375), ("1f1b", 7, 20, 3.0, 1.0),
])
def test_standard_schedules_match_oracle(record_property, kind, p, m, tf, tb):
    sched = build(kind, p, m)
    sim = run(record_property, sched, tf, tb, f"{kind}, p={p}, m={m}")
    check_against_oracle(sim, sched, tf, tb, f"{kind} p={p} m={m} tf={tf:g} tb={tb:g}")


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
            assert close(sim.total, want_total), f"{where}: expected total {want_total:g}, got {sim.total:g}"
            check_bubble(sim, (p - 1) / (m + p - 1), where)
            want_peaks = [m] * p if kind == "gpipe" else [min(p - s, m) for s in range(p)]
            check_peaks(sim, sched, where, want_peaks)


def test_each_stage_follows_its_own_list_order(record_property):
    """Stage 1 runs F1 before F0 and B1 before B0: a simulator must follow the list, not pick what is ready."""
    sched = [ops("F0 F1 B0 B1"), ops("F1 F0 B1 B0")]
    sim = run(record_property, sched, 1.0, 2.0, "custom order, p=2, m=2")
    check_against_oracle(sim, sched, 1.0, 2.0, "stage 1 order F1 F0 B1 B0")
    assert close(sim.total, 12.0), f"expected total 12, got {sim.total:g}"


def test_random_orders_run_or_deadlock_like_the_oracle(record_property):
    rng = np.random.default_rng(20240611)
    ran = stuck = 0
    for case in range(60):
        p = int(rng.integers(2, 5))
        m = int(rng.integers(1, 6))
        sched = ballot_orders(rng, p, m)
        text = " / ".join(" ".join(f"{op}{mb}" for op, mb in row) for row in sched)
        want = oracle_simulate(sched, 1.0, 2.0)
        if want is None:
            stuck += 1
            expect_value_error(lambda: pp_sim.simulate(sched), f"simulate([{text}])", "this order deadlocks")
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


@pytest.mark.parametrize("sched, why", [
    ([], "no stages"),
    ([[]], "no operations"),
    ([ops("F0 B0"), [("F", 0), ("X", 0)]], "unknown op 'X'"),
    ([[("F", 0), ("B", -1)]], "negative micro-batch"),
    ([[("F", 0.0), ("B", 0.0)]], "micro-batch is not an int"),
    ([ops("F0 F0 B0")], "F0 twice on a stage"),
    ([ops("F0 F1 B0 B1"), ops("F0 B0")], "stage 1 misses micro-batch 1"),
    ([ops("F0 F1 B0")], "F1 has no backward"),
])
def test_malformed_schedules_raise_value_error(sched, why):
    expect_value_error(lambda: pp_sim.simulate(sched), f"simulate({sched!r})", why)


@pytest.mark.parametrize("tf, tb", [(0.0, 2.0), (1.0, -2.0), (-1.0, 1.0), (float("nan"), 1.0), ("1", 2.0)])
def test_bad_durations_raise_value_error(tf, tb):
    sched = build("1f1b", 2, 2)
    expect_value_error(lambda: pp_sim.simulate(sched, tf=tf, tb=tb), f"simulate(..., tf={tf!r}, tb={tb!r})",
                       "tf and tb must be positive numbers")


def _result(kind, p, m, tf=1.0, tb=2.0):
    timeline, total, bubble, peaks = oracle_simulate(build(kind, p, m), tf, tb)
    return pp_sim.SimResult(timeline=timeline, total=total, bubble=bubble, peak_activations=peaks), timeline, total


@pytest.mark.parametrize("kind, p, m, tf, tb, unit", [
    ("1f1b", 4, 6, 1.0, 2.0, 1.0),     # the chapter's picture
    ("1f1b", 3, 10, 1.0, 2.0, 1.0),    # micro-batches 0..9: width 2
    ("1f1b", 3, 11, 1.0, 2.0, 1.0),    # micro-batch 10: width 3
    ("gpipe", 2, 101, 1.0, 1.0, 1.0),  # micro-batch 100: width 4
    ("1f1b", 11, 3, 1.0, 2.0, 1.0),    # stage 10: stage numbers right-justified
    ("1f1b", 3, 4, 0.5, 1.25, 0.25),   # float durations on a finer grid
    ("1f1b", 3, 4, 0.5, 1.25, 0.5),    # blocks not aligned with the cells: midpoint rule
    ("gpipe", 2, 3, 2.0, 4.0, 2.0),
])
def test_render_matches_the_encoding(record_property, kind, p, m, tf, tb, unit):
    res, timeline, total = _result(kind, p, m, tf, tb)
    want = oracle_render(timeline, total, unit)
    got = pp_sim.render(res, unit=unit)
    assert isinstance(got, str), f"render() must return a str, got {type(got).__name__}"
    got_lines, want_lines = got.split("\n"), want.split("\n")
    assert len(got_lines) == len(want_lines), (
        f"render() of {kind} p={p} m={m}: expected {len(want_lines)} lines (one per stage, no trailing "
        f"newline), got {len(got_lines)}")
    for s, (g, w) in enumerate(zip(got_lines, want_lines)):
        assert g == w, (f"render() of {kind} p={p} m={m} (tf={tf:g}, tb={tb:g}, unit={unit:g}), stage {s}:\n"
                        f"expected {w[:160]!r}\ngot      {g[:160]!r}")


@pytest.mark.parametrize("unit", [0.0, -1.0])
def test_render_rejects_a_non_positive_unit(unit):
    res, _, _ = _result("1f1b", 2, 2)
    expect_value_error(lambda: pp_sim.render(res, unit=unit), f"render(result, unit={unit:g})",
                       "unit must be a positive number")


def test_render_of_simulate_round_trip(record_property):
    """render(simulate(...)) for m = 12: the cells read back as the timeline."""
    sched = build("1f1b", 3, 12)
    sim = run(record_property, sched, 1.0, 2.0, "1F1B, p=3, m=12")
    check_against_oracle(sim, sched, 1.0, 2.0, "1F1B p=3 m=12")
    text = pp_sim.render(pp_sim.simulate(sched))
    timeline, total, _, _ = oracle_simulate(sched, 1.0, 2.0)
    assert text == oracle_render(timeline, total), (
        f"render(simulate(<1F1B orders, p=3, m=12>)):\nexpected\n{oracle_render(timeline, total)}\ngot\n{text}")
