"""Project tests for pp-quiz: the reference answers agree with answers worked out independently.

Numeric answers are measured on a small tick-by-tick pipeline simulator written here (or found by
brute-force search); choice answers are checked against the key below. The hashed answer key that
the public tests ship (tests/public/_quiz_key.py) is checked against the same answers, and every
"common mistake" it explains is checked to really be wrong.
"""

from __future__ import annotations

import importlib.util
import sys
from fractions import Fraction
from pathlib import Path

import pytest

PROBLEM = Path(__file__).resolve().parents[2] / "problems" / "pp-quiz"


def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


ref = _load(PROBLEM / "reference" / "quiz.py", "_pp_quiz_reference")
key = _load(PROBLEM / "tests" / "public" / "_quiz_key.py", "_pp_quiz_key")


def _programs(kind: str, p: int, m: int, v: int) -> list[list[tuple[str, int, int]]]:
    """Per rank (op, micro-batch, virtual stage); interleaved in Megatron-LM's order."""
    progs = []
    for r in range(p):
        if kind == "gpipe":
            progs.append([("F", i, r) for i in range(m)] + [("B", i, r) for i in range(m)])
            continue
        if kind == "1f1b":
            fwd = [(i, r) for i in range(m)]
            bwd = list(fwd)
            warm = min(p - r - 1, m)
        else:
            fwd = [(i, c * p + r) for g in range(0, m, p) for c in range(v) for i in range(g, g + p)]
            bwd = [(i, c * p + r) for g in range(0, m, p) for c in range(v - 1, -1, -1) for i in range(g, g + p)]
            warm = min(2 * (p - r - 1) + (v - 1) * p, len(fwd))
        prog = [("F", *x) for x in fwd[:warm]]
        for k in range(len(fwd) - warm):
            prog += [("F", *fwd[warm + k]), ("B", *bwd[k])]
        prog += [("B", *x) for x in bwd[len(fwd) - warm:]]
        progs.append(prog)
    return progs


def simulate(kind: str, p: int, m: int, v: int = 1) -> dict:
    """Tick by tick. Interleaved: a chunk's F or B takes 1 tick; otherwise a stage's F or B takes
    v ticks, so that the same layers per rank cost the same time in both."""
    chunks = v if kind == "interleaved" else 1
    dur = v // chunks
    progs = _programs(kind, p, m, v)
    last = p * chunks - 1
    end: dict = {}
    start: dict = {}
    pos, free = [0] * p, [0] * p
    t = 0
    while any(pos[r] < len(progs[r]) for r in range(p)):
        for r in range(p):
            if pos[r] < len(progs[r]) and free[r] <= t:
                op, i, g = progs[r][pos[r]]
                need = (("F", i, g - 1) if g > 0 else None) if op == "F" else (("B", i, g + 1) if g < last else ("F", i, g))
                if need is None or end.get(need, t + 1) <= t:
                    start[(op, i, g)], end[(op, i, g)] = t, t + dur
                    free[r] = t + dur
                    pos[r] += 1
        t += 1
    total = max(end.values())
    busy = 2 * m * v
    peaks = []
    for r in range(p):
        events = sorted((start[k], 1) if k[0] == "F" else (end[k], -1) for k in start if k[2] % p == r)
        live = best = 0
        for _, d in events:
            live += d
            best = max(best, live)
        peaks.append(best)
    return {"idle": total - busy, "total": total, "busy": busy, "peaks": peaks}


def independent_answers() -> dict[str, object]:
    g88, o88 = simulate("gpipe", 8, 8), simulate("1f1b", 8, 8)
    g416, o416 = simulate("gpipe", 4, 16), simulate("1f1b", 4, 16)
    o412 = simulate("1f1b", 4, 12)
    m = 1
    while Fraction(3, m + 3) > Fraction(1, 5):
        m += 1
    plain, inter = simulate("1f1b", 4, 8, 2), simulate("interleaved", 4, 8, 2)
    return {
        "q1": g88["idle"] / g88["total"],
        "q2": "B" if Fraction(o88["idle"], o88["total"]) == Fraction(g88["idle"], g88["total"]) else "?",
        "q3": "B" if o416["peaks"][0] < g416["peaks"][0] else "?",
        "q4": o416["peaks"][0],
        "q5": o412["idle"] / o412["busy"],
        "q6": m,
        "q7": plain["idle"] / inter["idle"],
        "q8": "C",  # v chunks per rank: a micro-batch crosses each link v times each way
        "q9": 2048 * 1 * 4096 * 2 / 2**20,
        "q10": "A",  # ZB-H1: backward for inputs (B) and for weights (W)
        "q11": "C",  # paired blocking sends between neighbours in the steady state
        "q12": "D",  # DualPipe: bidirectional feeding, F/B overlap, two copies of parameters
    }


ANSWERS = independent_answers()
QUESTIONS = [f"q{i}" for i in range(1, 13)]


def test_independent_answers_are_plausible():
    # the simulator itself: GPipe and 1F1B bubble (p - 1)/(m + p - 1); interleaving v = 2 halves idle time
    assert ANSWERS["q1"] == pytest.approx(7 / 15)
    assert ANSWERS["q7"] == pytest.approx(2.0)
    assert all(ANSWERS[q] != "?" for q in QUESTIONS)


@pytest.mark.parametrize("name", QUESTIONS)
def test_reference_answer(name):
    got = getattr(ref, name)()
    assert key.normalise(got) == key.normalise(ANSWERS[name]), (name, got, ANSWERS[name])


@pytest.mark.parametrize("name", QUESTIONS)
def test_hashed_key_matches(name):
    assert key.is_right(name, ANSWERS[name]), name
    kind = key.KEY[name][0]
    assert kind == (key.CHOICE if isinstance(ANSWERS[name], str) else key.NUMBER), name


def test_misconceptions_are_wrong_answers():
    for name, wrong in key.MISCONCEPTIONS.items():
        for normalised in wrong:
            assert key.digest(name, normalised) != key.KEY[name][1], (name, normalised)


def test_questions_have_docstrings_and_readme_lists_them():
    readme = (PROBLEM / "README.md").read_text(encoding="utf-8")
    for name in QUESTIONS:
        assert (getattr(ref, name).__doc__ or "").strip(), name
        assert f"**{name}.**" in readme, name
