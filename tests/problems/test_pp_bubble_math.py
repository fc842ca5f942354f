"""Project tests for pp-bubble-math: the reference agrees with an independent implementation.

The independent implementation is a discrete-time (tick by tick) pipeline simulator with integer
times, written separately from both the reference's closed forms and the event-driven simulator in
the problem's tests/secret/_pipeline_sim.py (which is checked against it too). Bubble sizes, peak
activations (counted over time, not over the op order) and link transfers are measured, not derived.
"""

from __future__ import annotations

import math
from fractions import Fraction
from pathlib import Path

import pytest

from tests.problems.loading import load

PROBLEM = Path(__file__).resolve().parents[2] / "problems" / "pp-bubble-math"




ref = load("pp-bubble-math", "reference/bubble_math.py", "_pp_bubble_math_reference")
helper_sim = load("pp-bubble-math", "tests/secret/_pipeline_sim.py", "_pp_bubble_math_helper_sim")


def rank_programs(kind: str, p: int, m: int, v: int) -> list[list[tuple[str, int, int]]]:
    """Per rank, the (op, micro-batch, virtual stage) sequence. Interleaved: Megatron-LM order."""
    programs = []
    for r in range(p):
        if kind == "gpipe":
            prog = [("F", i, r) for i in range(m)] + [("B", i, r) for i in range(m)]
        elif kind == "1f1b" or v == 1:
            # run a forward whenever fewer than p - r micro-batches are in flight, else a backward
            prog, f, b = [], 0, 0
            while b < m:
                if f < m and f - b < p - r:
                    prog.append(("F", f, r))
                    f += 1
                else:
                    prog.append(("B", b, r))
                    b += 1
        else:
            fwd = [(i, c * p + r) for g in range(0, m, p) for c in range(v) for i in range(g, g + p)]
            bwd = [(i, c * p + r) for g in range(0, m, p) for c in reversed(range(v)) for i in range(g, g + p)]
            warm = min(2 * (p - r - 1) + (v - 1) * p, len(fwd))
            prog = [("F",) + x for x in fwd[:warm]]
            for k in range(len(fwd) - warm):
                prog += [("F",) + fwd[warm + k], ("B",) + bwd[k]]
            prog += [("B",) + x for x in bwd[len(fwd) - warm:]]
        programs.append(prog)
    return programs


def tick_simulation(kind: str, p: int, m: int, v: int = 1) -> dict:
    """Every op takes one tick (a chunk op when interleaved); advance time one tick at a time."""
    progs = rank_programs(kind, p, m, v)
    stages = p * (v if kind == "interleaved" else 1)
    end: dict[tuple[str, int, int], int] = {}
    start: dict[tuple[str, int, int], int] = {}
    nxt = [0] * p
    free_at = [0] * p
    transfers: list[tuple[str, int, int, int]] = []
    t = 0
    while any(nxt[r] < len(progs[r]) for r in range(p)):
        for r in range(p):
            if nxt[r] == len(progs[r]) or free_at[r] > t:
                continue
            op, i, g = progs[r][nxt[r]]
            need = ("F", i, g - 1) if op == "F" and g > 0 else None
            if op == "B":
                need = ("B", i, g + 1) if g < stages - 1 else ("F", i, g)
            if need is not None and end.get(need, math.inf) > t:
                continue
            start[(op, i, g)], end[(op, i, g)] = t, t + 1
            free_at[r] = t + 1
            nxt[r] += 1
            if need is not None and need[2] % p != r:
                transfers.append((op, i, need[2] % p, r))
        t += 1
        assert t < 10_000, "tick simulation did not finish"
    total = max(end.values())
    busy = [len(prog) for prog in progs]
    peaks = []
    for r in range(p):
        # +1 when a forward starts, -1 when a backward ends; at equal times the end comes first
        events = sorted((start[k], 1) if k[0] == "F" else (end[k], -1) for k in start if k[2] % p == r)
        live = best = 0
        for _, delta in events:
            live += delta
            best = max(best, live)
        peaks.append(best)
    return {"total": total, "busy": busy, "peaks": peaks, "transfers": transfers}


def _close(a: float, b: float) -> bool:
    return math.isclose(float(a), float(b), rel_tol=1e-12, abs_tol=1e-15)


@pytest.mark.parametrize("kind", ["gpipe", "1f1b"])
def test_bubble_and_peaks_match_tick_simulation(kind):
    for p in range(1, 9):
        for m in range(1, 33):
            run = tick_simulation(kind, p, m)
            for r in range(p):
                idle = run["total"] - run["busy"][r]
                assert _close(ref.bubble_fraction(p, m), Fraction(idle, run["total"])), (kind, p, m, r)
                assert _close(ref.bubble_over_ideal(p, m), Fraction(idle, run["busy"][r])), (kind, p, m, r)
            assert [ref.peak_activations(kind, p, m, s) for s in range(p)] == run["peaks"], (kind, p, m)


def test_interleaved_matches_tick_simulation():
    for p in range(1, 9):
        for v in range(1, 5):
            for m in range(p, 33, p):
                run = tick_simulation("interleaved", p, m, v)
                for r in range(p):
                    idle = run["total"] - run["busy"][r]
                    assert _close(ref.interleaved_bubble_fraction(p, m, v), Fraction(idle, run["total"])), (p, m, v)
                    assert _close(ref.interleaved_bubble_over_ideal(p, m, v), Fraction(idle, run["busy"][r])), (p, m, v)
                for r in range(p - 1):
                    per_mb = [0] * m
                    for op, i, src, dst in run["transfers"]:
                        if (op, src, dst) in (("F", r, r + 1), ("B", r + 1, r)):
                            per_mb[i] += 1
                    assert all(ref.p2p_elements_per_microbatch(3, 2, 5, v) == n * 30 for n in per_mb), (p, m, v)


def test_formulas_on_full_grid_exact_fractions():
    for p in range(1, 9):
        for m in range(1, 33):
            busy = Fraction(m)
            for v in range(1, 5):
                idle = Fraction(p - 1, v)  # ramp of p - 1 chunk steps, each 1/v of a stage
                assert _close(ref.interleaved_bubble_fraction(p, m, v), idle / (idle + busy)), (p, m, v)
                assert _close(ref.interleaved_bubble_over_ideal(p, m, v), idle / busy), (p, m, v)


def test_helper_simulator_agrees_with_tick_simulation():
    cases = [(k, p, m, 1) for k in ("gpipe", "1f1b") for p in (1, 2, 3, 5, 8) for m in (1, 2, 5, 8, 13)]
    cases += [("interleaved", p, m, v) for p in (1, 2, 3, 4) for v in (2, 3, 4) for m in (p, 2 * p, 4 * p)]
    for kind, p, m, v in cases:
        mine = tick_simulation(kind, p, m, v)
        theirs = helper_sim.simulate(kind, p, m, v)
        scale = v if kind == "interleaved" else 1  # helper: a chunk op takes 1/v, here 1 tick
        assert theirs.total * scale == mine["total"], (kind, p, m, v)
        assert [b * scale for b in theirs.busy] == mine["busy"], (kind, p, m, v)
        assert theirs.peak == mine["peaks"], (kind, p, m, v)
        assert sorted(theirs.messages) == sorted(mine["transfers"]), (kind, p, m, v)


def _min_m_decimal(p: int, target: str) -> int:
    t = Fraction(target)  # the decimal the user typed, exactly
    m = 1
    while Fraction(p - 1, m + p - 1) > t:
        m += 1
    return m


def test_min_microbatches_against_exact_decimal_search():
    targets = [f"0.{k:02d}" for k in range(1, 100)] + [f"0.{k:03d}" for k in range(1, 1000, 13)]
    targets += ["0.072", "0.088", "0.009", "0.018", "0.036", "0.011", "0.022", "0.044"]
    for p in range(1, 13):
        for target in targets:
            assert ref.min_microbatches(p, float(target)) == _min_m_decimal(p, target), (p, target)


def test_p2p_formula():
    for s in (1, 7, 1024):
        for b in (1, 3):
            for h in (1, 64, 4096):
                for v in (1, 2, 3, 4):
                    assert ref.p2p_elements_per_microbatch(s, b, h, v) == 2 * v * s * b * h
    assert ref.p2p_elements_per_microbatch(8, 2, 4) == 128


@pytest.mark.parametrize("call", [
    lambda: ref.bubble_fraction(0, 1), lambda: ref.bubble_over_ideal(1, 0),
    lambda: ref.interleaved_bubble_fraction(2, 2, 0), lambda: ref.interleaved_bubble_over_ideal(2, 0, 1),
    lambda: ref.peak_activations("gpipe", 2, 2, 2), lambda: ref.peak_activations("GPipe!", 2, 2, 0),
    lambda: ref.min_microbatches(2, 0), lambda: ref.min_microbatches(2, 1), lambda: ref.min_microbatches(0, 0.5),
    lambda: ref.p2p_elements_per_microbatch(1, 1, 0),
])
def test_reference_validates(call):
    with pytest.raises(ValueError):
        call()


def _boundary_targets() -> list[float]:
    """Targets at, and one or two floats either side of, exact bubble fractions (p - 1) / (m + p - 1)."""
    targets = set()
    for p in range(2, 20):
        for m in range(1, 120, 3):
            exact = (p - 1) / (m + p - 1)
            below = above = exact
            targets.add(exact)
            for _ in range(2):
                below, above = math.nextafter(below, 0.0), math.nextafter(above, 1.0)
                targets.update((below, above))
    return sorted(t for t in targets if 0.0 < t < 1.0)


def test_declared_equivalent_mutants_behave_like_the_reference():
    """reference/equivalent-mutants.toml: each declared mutant gives the reference's answers on a grid
    of targets at and around exact boundaries, not only on the problem's tests."""
    import tomllib

    source = (PROBLEM / "reference" / "bubble_math.py").read_text(encoding="utf-8")
    declared = tomllib.loads((PROBLEM / "reference" / "equivalent-mutants.toml").read_text(encoding="utf-8"))
    cases = [(p, t) for p in range(1, 20) for t in _boundary_targets()[::11]]
    want = [ref.min_microbatches(p, t) for p, t in cases]
    assert declared["equivalent"]
    for entry in declared["equivalent"]:
        assert entry["function"] == "min_microbatches" and source.count(entry["code"]) == 1, entry
        namespace: dict = {}
        exec(compile(source.replace(entry["code"], entry["mutant"]), "mutant", "exec"), namespace)
        got = [namespace["min_microbatches"](p, t) for p, t in cases]
        assert got == want, entry["mutant"]
