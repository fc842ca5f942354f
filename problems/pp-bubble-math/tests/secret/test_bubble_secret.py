"""Secret tests for pp-bubble-math: more sizes, hard rounding boundaries, more input checks."""

from __future__ import annotations

import math
import re
from fractions import Fraction

import _pipeline_sim as sim  # lives in tests/public
import pytest


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


def _expect(what: str, got, expected: Fraction, wrong: dict[str, Fraction]) -> None:
    assert got is not None, f"{what}: expected {float(expected):.6g}, got None"
    got_f, exp_f = float(got), float(expected)
    ok = _close(got_f, exp_f)
    if not ok:
        reason = next((text for text, value in wrong.items() if _close(got_f, float(value))), "")
        raise AssertionError(f"{what}: expected {exp_f:.6g}, got {got_f:.6g}" + (f" ({reason})" if reason else ""))


PS = (1, 2, 3, 5, 7, 8)  # every grid test holds p = 1 (no bubble) and larger p


@pytest.mark.parametrize("m", [1, 2, 3, 7, 16, 31, 32])
def test_bubble_grid(m):
    import bubble_math

    for p in PS:
        frac, over = Fraction(p - 1, m + p - 1), Fraction(p - 1, m)
        _expect(f"bubble_fraction(p={p}, m={m})", bubble_math.bubble_fraction(p, m), frac,
                {"that is the bubble over the ideal time, (p - 1) / m": over})
        _expect(f"bubble_over_ideal(p={p}, m={m})", bubble_math.bubble_over_ideal(p, m), over,
                {"that is the fraction of the total time, (p - 1) / (m + p - 1)": frac})


@pytest.mark.parametrize("m", [1, 2, 3, 7, 16, 31, 32])
def test_interleaved_grid(m):
    import bubble_math

    for p in PS:
        frac, over = Fraction(p - 1, m + p - 1), Fraction(p - 1, m)
        for v in (1, 2, 3, 4):
            ifrac, iover = Fraction(p - 1, v * m + p - 1), Fraction(p - 1, v * m)
            _expect(f"interleaved_bubble_fraction(p={p}, m={m}, v={v})",
                    bubble_math.interleaved_bubble_fraction(p, m, v), ifrac,
                    {"that is plain 1F1B, not divided by v": frac, "that is the bubble over the ideal time": iover})
            _expect(f"interleaved_bubble_over_ideal(p={p}, m={m}, v={v})",
                    bubble_math.interleaved_bubble_over_ideal(p, m, v), iover,
                    {"that is plain 1F1B, not divided by v": over, "that is the fraction of the total": ifrac})


@pytest.mark.parametrize("kind", ["gpipe", "1f1b"])
@pytest.mark.parametrize("p,m", [(5, 3), (5, 16), (8, 8), (8, 12)])
def test_simulator_more_sizes(kind, p, m, record_property):
    import bubble_math

    run = sim.simulate(kind, p, m)
    record_property("timeline", run.timeline(f"{kind}, p={p}, m={m}"))
    idle, total, busy = run.idle(0), run.total, run.busy[0]
    _expect(f"{kind} p={p} m={m}: simulator idle {idle} of total {total}, so bubble_fraction",
            bubble_math.bubble_fraction(p, m), idle / total, {"that is idle / busy": idle / busy})
    _expect(f"{kind} p={p} m={m}: simulator idle {idle} for busy {busy}, so bubble_over_ideal",
            bubble_math.bubble_over_ideal(p, m), idle / busy, {"that is idle / total": idle / total})


@pytest.mark.parametrize("kind", ["gpipe", "1f1b"])
@pytest.mark.parametrize("p,m", [(5, 3), (5, 16), (8, 8), (8, 12), (1, 4)])
def test_simulator_more_sizes_peaks(kind, p, m, record_property):
    import bubble_math

    run = sim.simulate(kind, p, m)
    record_property("timeline", run.timeline(f"{kind}, p={p}, m={m}"))
    got = [bubble_math.peak_activations(kind, p, m, s) for s in range(p)]
    ok = got == run.peak
    assert ok, f"{kind} p={p} m={m}: simulator peaks per stage {run.peak}, peak_activations gave {got}"


@pytest.mark.parametrize("p,m,v", [(2, 6, 4), (3, 3, 3), (5, 10, 2), (8, 8, 2), (4, 12, 3)])
def test_interleaved_simulator_more_sizes(p, m, v, record_property):
    import bubble_math

    run = sim.simulate("interleaved", p, m, v)
    record_property("timeline", run.timeline(f"interleaved 1F1B, p={p}, m={m}, v={v}"))
    for r in range(p):
        idle, total, busy = run.idle(r), run.total, run.busy[r]
        _expect(f"interleaved p={p} m={m} v={v}: rank {r} idle {idle} of total {total}, so "
                "interleaved_bubble_fraction", bubble_math.interleaved_bubble_fraction(p, m, v), idle / total,
                {"that is plain 1F1B: divide the bubble time by v": Fraction(p - 1, m + p - 1),
                 "that is idle / busy": idle / busy})
        _expect(f"interleaved p={p} m={m} v={v}: rank {r} idle {idle} for busy {busy}, so "
                "interleaved_bubble_over_ideal", bubble_math.interleaved_bubble_over_ideal(p, m, v), idle / busy,
                {"that is plain 1F1B: divide the bubble time by v": Fraction(p - 1, m),
                 "that is idle / total": idle / total})


@pytest.mark.parametrize("p,m,v", [(2, 6, 4), (3, 3, 3), (5, 10, 2), (8, 8, 2), (4, 12, 3)])
def test_interleaved_link_volume_matches_simulator(p, m, v, record_property):
    import bubble_math

    run = sim.simulate("interleaved", p, m, v)
    record_property("timeline", run.timeline(f"interleaved 1F1B, p={p}, m={m}, v={v}"))
    counts = set(run.link_volume(p - 2).values())
    got = bubble_math.p2p_elements_per_microbatch(3, 2, 5, v)
    ok = counts == {got // 30} and got % 30 == 0
    assert ok, (f"interleaved p={p} v={v}: each micro-batch makes {sorted(counts)} transfers over the link "
                f"rank {p - 2} <-> rank {p - 1}, i.e. {[c * 30 for c in sorted(counts)]} elements for "
                f"s*b*h = 30, but p2p_elements_per_microbatch(3, 2, 5, {v}) gave {got!r}")


def _defining_min(p: int, target: float) -> int:
    m = 1
    while (p - 1) / (m + p - 1) > target:
        m += 1
    return m


@pytest.mark.parametrize("p,target", [
    (10, 0.072), (12, 0.088), (7, 0.24), (13, 0.48), (4, 0.03), (7, 0.6), (8, 0.7), (11, 0.08), (10, 0.009),
])
def test_min_microbatches_hard_boundaries(p, target):
    import bubble_math

    expected = _defining_min(p, target)
    got = bubble_math.min_microbatches(p, target)
    ok = got == expected
    why = (f" (one too many: with m = {expected} the bubble is {p - 1}/{expected + p - 1}, exactly the target; a "
           "floating-point closed form can land just above an integer, so check the candidate against the "
           "inequality itself)" if got == expected + 1 else "")
    assert ok, f"min_microbatches(p={p}, target={target}): expected {expected}, got {got!r}{why}"


def test_min_microbatches_grid():
    import bubble_math

    for p in (1, 2, 3, 5, 8, 16):
        for k in range(1, 100, 7):
            target = k / 100
            expected = _defining_min(p, target)
            got = bubble_math.min_microbatches(p, target)
            ok = got == expected
            assert ok, (f"min_microbatches(p={p}, target={target}): expected {expected}, got {got!r}: the "
                        f"smallest m >= 1 with (p - 1) / (m + p - 1) <= target")


def test_peak_activations_all_stages():
    import bubble_math

    for p in (2, 5, 8):
        for m in (1, 3, 8, 20):
            gpipe = [bubble_math.peak_activations("gpipe", p, m, s) for s in range(p)]
            ofob = [bubble_math.peak_activations("1f1b", p, m, s) for s in range(p)]
            ok = gpipe == [m] * p and ofob == [min(p - s, m) for s in range(p)]
            assert ok, (f"p={p} m={m}: expected GPipe peaks {[m] * p} and 1F1B peaks "
                        f"{[min(p - s, m) for s in range(p)]} (stage 0 first), got {gpipe} and {ofob}")


def test_p2p_large_values_exact():
    import bubble_math

    got = bubble_math.p2p_elements_per_microbatch(8192, 4, 12288, 4)
    expected = 2 * 4 * 8192 * 4 * 12288
    ok = got == expected
    msg = f"p2p_elements_per_microbatch(8192, 4, 12288, 4): expected {expected}, got {got!r}"
    if isinstance(got, (int, float)) and not isinstance(got, bool) and got == expected // 4:
        msg += " (with v chunks per rank a micro-batch crosses the link v times in each direction)"
    elif isinstance(got, float) and got == float(expected):
        msg += " (the right value, but as a float: return an int, computed with exact integer arithmetic)"
    elif isinstance(got, float) and math.isclose(got, expected, rel_tol=1e-6):
        msg += " (close but not exact: compute with integers, not floats)"
    assert ok, msg


def test_p2p_exact_beyond_float_precision():
    """Past 2**53 a float can no longer hold every integer: only integer arithmetic stays exact."""
    import bubble_math

    s, b, h, v = 2**20 + 1, 2**20 + 3, 2**14 + 1, 3
    expected = 2 * v * s * b * h  # about 1.1e17, above 2**53
    got = bubble_math.p2p_elements_per_microbatch(s, b, h, v)
    ok = type(got) is int and got == expected
    msg = f"p2p_elements_per_microbatch({s}, {b}, {h}, {v}): expected the int {expected}, got {got!r}"
    if type(got) is int and got != expected and got == int(float(expected)):
        msg += (" (that is the exact count rounded to a float: a step of the computation goes through a float, "
                "such as a / division; compute with integers only)")
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


@pytest.mark.parametrize("name,args,arg", MORE_INVALID, ids=[f"{name}{args!r} (wrong {arg})" for name, args, arg in MORE_INVALID])
def test_more_invalid_input(name, args, arg):
    import bubble_math

    call = f"{name}{args!r}"
    try:
        result = getattr(bubble_math, name)(*args)
    except ValueError as exc:
        assert _names_argument(str(exc), arg), (
            f"{call} raised ValueError({str(exc)!r}), which does not name the argument {arg!r} that is wrong; "
            f"say which argument is wrong and why")
        return
    except Exception as exc:  # noqa: BLE001 - reported to the learner
        raise AssertionError(f"{call} should raise ValueError, but raised {type(exc).__name__}: {exc}") from None
    raise AssertionError(f"{call} should raise ValueError, but returned {result!r}")


# ---------------------------------------------------------------------------------------------
# moved from the public tests: the simulator (_pipeline_sim.py) plays the very schedules other
# problems ask the learner to write, so it is not shown to learners.


def _check_value(what: str, got, expected: float, hints: list[tuple[float, str]]) -> None:
    """Assert ``got`` is close to ``expected``; otherwise explain, naming a known mistake if it fits."""
    assert got is not None, f"{what}: expected {expected!r}, got None (did you forget to return?)"
    got = float(got)
    if _close(got, expected):
        return
    reason = next((text for value, text in hints if _close(got, value)), "")
    msg = f"{what}: expected {expected:.6g}, got {got:.6g}"
    assert False, msg + (f" ({reason})" if reason else "")


def _frac_str(x) -> str:
    return f"{x.numerator}/{x.denominator}" if x.denominator != 1 else str(x.numerator)


_SWAPPED = "you swapped the two: idle / total is the fraction, idle / busy is over ideal"
_IS_OVER_IDEAL = "that is idle / busy, the bubble over the ideal time; the fraction of the total divides by the total"
_IS_FRACTION = "that is idle / total, the fraction of the total time; the bubble over the ideal divides by the busy time"


def _swapped(fraction, over, args: tuple, of_total: float, of_busy: float) -> bool:
    """Whether the learner's fraction gives idle / busy AND its over-ideal gives idle / total."""
    try:
        return _close(float(fraction(*args)), of_busy) and _close(float(over(*args)), of_total)
    except Exception:  # noqa: BLE001 - the learner's code may fail here too; then no diagnosis
        return False


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
            f"{name} p={p} m={m}: the simulator measures on stage {r} idle {_frac_str(idle)} of a total "
            f"{_frac_str(total)}, so bubble_fraction", bubble_math.bubble_fraction(p, m), of_total,
            [(of_busy, _SWAPPED if swapped else _IS_OVER_IDEAL)])
        _check_value(
            f"{name} p={p} m={m}: the simulator measures on stage {r} idle {_frac_str(idle)} for "
            f"{_frac_str(busy)} of work, so bubble_over_ideal", bubble_math.bubble_over_ideal(p, m), of_busy,
            [(of_total, _SWAPPED if swapped else _IS_FRACTION)])


@pytest.mark.parametrize("p,m,v", [(2, 2, 2), (2, 4, 3), (4, 4, 2), (4, 8, 2), (3, 6, 2), (4, 8, 4)])
def test_interleaved_matches_simulator(p, m, v, record_property):
    import bubble_math

    run = sim.simulate("interleaved", p, m, v)
    record_property("timeline", run.timeline(f"interleaved 1F1B, p={p}, m={m}, v={v} (chunk F/B take 1/{v})"))
    plain = sim.simulate("1f1b", p, m)
    no_v = [(float(plain.idle(0) / plain.total), "that is what plain 1F1B measures: interleaving divides "
             "the bubble time by v"), (float(plain.idle(0) / plain.busy[0]), "that is what plain 1F1B "
             "measures: interleaving divides the bubble time by v")]
    for r in range(p):
        idle, total, busy = run.idle(r), run.total, run.busy[r]
        of_total, of_busy = float(idle / total), float(idle / busy)
        swapped = _swapped(bubble_math.interleaved_bubble_fraction, bubble_math.interleaved_bubble_over_ideal,
                           (p, m, v), of_total, of_busy)
        _check_value(
            f"interleaved p={p} m={m} v={v}: the simulator measures on rank {r} idle {_frac_str(idle)} of a "
            f"total {_frac_str(total)}, so interleaved_bubble_fraction",
            bubble_math.interleaved_bubble_fraction(p, m, v), of_total,
            [(of_busy, _SWAPPED if swapped else _IS_OVER_IDEAL)] + no_v)
        _check_value(
            f"interleaved p={p} m={m} v={v}: the simulator measures on rank {r} idle {_frac_str(idle)} for "
            f"{_frac_str(busy)} of work, so interleaved_bubble_over_ideal",
            bubble_math.interleaved_bubble_over_ideal(p, m, v), of_busy,
            [(of_total, _SWAPPED if swapped else _IS_FRACTION)] + no_v)


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
    assert ok, (
        f"{name} p={p} m={m}: counting forwards done minus backwards done on each stage, the simulator "
        f"finds peaks {measured} (stage 0 first), your peak_activations gave {got}")


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
            assert ok, (
                f"{kind} p={p} v={v}: on the link rank {r} <-> rank {r + 1} micro-batch {mb} makes {messages} "
                f"transfers (activations forward + gradients backward) of s*b*h = {s * b * h} elements = "
                f"{messages * s * b * h}, but p2p_elements_per_microbatch({s}, {b}, {h}, {v}) gave {got!r}")


# ---------------------------------------------------------------------------------------------
# every closed form against the same simulated schedules: one consistent model of the pipeline


@pytest.mark.parametrize("p,m", [(2, 2), (2, 6), (3, 3), (3, 9), (4, 4), (4, 8), (5, 10)])
def test_closed_forms_match_the_simulated_schedules(p, m, record_property):
    """Every closed form against the same simulated schedules

    For one (p, m): GPipe, 1F1B and interleaved 1F1B (v = 2) played by the simulator, and every
    closed form compared with what it measures (bubble, peaks, link volume)."""
    import bubble_math

    v = 2
    runs = {kind: sim.simulate(kind, p, m) for kind in ("gpipe", "1f1b")}
    runs["interleaved"] = sim.simulate("interleaved", p, m, v)
    record_property("timeline", runs["1f1b"].timeline(f"1F1B, p={p}, m={m}"))
    where = f"p={p} m={m}"
    for kind in ("gpipe", "1f1b"):
        run = runs[kind]
        idle, total, busy = run.idle(0), run.total, run.busy[0]
        _expect(f"{kind} {where}: the simulator measures idle {_frac_str(idle)} of a total {_frac_str(total)}, "
                "so bubble_fraction", bubble_math.bubble_fraction(p, m), idle / total,
                {"that is idle / busy, the bubble over the ideal time": idle / busy})
        _expect(f"{kind} {where}: the simulator measures idle {_frac_str(idle)} for {_frac_str(busy)} of work, "
                "so bubble_over_ideal", bubble_math.bubble_over_ideal(p, m), idle / busy,
                {"that is idle / total, the fraction of the total time": idle / total})
        peaks = [bubble_math.peak_activations(kind, p, m, s) for s in range(p)]
        assert peaks == run.peak, (f"{kind} {where}: the simulator finds peaks {run.peak} (stage 0 first), "
                                   f"peak_activations gave {peaks}")
    run = runs["interleaved"]
    idle, total, busy = run.idle(0), run.total, run.busy[0]
    plain = runs["1f1b"]
    _expect(f"interleaved v={v} {where}: the simulator measures idle {_frac_str(idle)} of a total "
            f"{_frac_str(total)}, so interleaved_bubble_fraction", bubble_math.interleaved_bubble_fraction(p, m, v),
            idle / total, {"that is what plain 1F1B measures: interleaving divides the bubble time by v":
                           plain.idle(0) / plain.total})
    _expect(f"interleaved v={v} {where}: the simulator measures idle {_frac_str(idle)} for {_frac_str(busy)} of "
            "work, so interleaved_bubble_over_ideal", bubble_math.interleaved_bubble_over_ideal(p, m, v), idle / busy,
            {"that is what plain 1F1B measures: interleaving divides the bubble time by v":
             plain.idle(0) / plain.busy[0]})
    for chunks, played in ((1, runs["1f1b"]), (v, run)):
        counts = set(played.link_volume(0).values())
        got = bubble_math.p2p_elements_per_microbatch(3, 2, 5, chunks)
        assert counts == {got // 30} and got % 30 == 0, (
            f"{where}, v={chunks}: each micro-batch makes {sorted(counts)} transfers over the link rank 0 <-> rank 1, "
            f"i.e. {[c * 30 for c in sorted(counts)]} elements for s*b*h = 30, but "
            f"p2p_elements_per_microbatch(3, 2, 5, {chunks}) gave {got!r}")
