"""Project tests for pp-quiz: the reference answers agree with answers worked out independently.

Numeric answers are measured on a small tick-by-tick pipeline simulator written here (or found by
brute-force search); choice answers are checked against the key below. The hashed answer key that
the public tests ship (tests/public/_quiz_key.py) is checked against the same answers, and every
"common mistake" it explains is checked to really be wrong.
"""

from __future__ import annotations

import re
import sys
from fractions import Fraction
from pathlib import Path

import pytest

from tests.problems.loading import load

PROBLEM = Path(__file__).resolve().parents[2] / "problems" / "pp-quiz"




ref = load("pp-quiz", "reference/quiz.py", "_pp_quiz_reference")
key = load("pp-quiz", "tests/public/_quiz_key.py", "_pp_quiz_key")


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
    want = key.CHOICE if isinstance(ANSWERS[name], str) else key.INTEGER if isinstance(ANSWERS[name], int) else key.NUMBER
    assert kind == want, name
    # the question says which form it wants: "Return an integer." exactly for the INTEGER questions
    doc = " ".join(getattr(ref, name).__doc__.split())
    assert ("Return an integer" in doc) == (kind == key.INTEGER), name
    assert ("Return a number" in doc) == (kind == key.NUMBER), name


def test_misconceptions_are_wrong_answers():
    for name, wrong in key.MISCONCEPTIONS.items():
        for normalised in wrong:
            assert key.digest(name, normalised) != key.KEY[name][1], (name, normalised)


def test_questions_have_docstrings_and_readme_lists_them():
    readme = (PROBLEM / "README.md").read_text(encoding="utf-8")
    for name in QUESTIONS:
        assert (getattr(ref, name).__doc__ or "").strip(), name
        assert f"**{name}.**" in readme, name


# ------------------------------------------------------------------------------------------------
# The public test accepts the answer forms the statement allows and refuses the others.


@pytest.fixture()
def public_test(monkeypatch):
    monkeypatch.setitem(sys.modules, "_quiz_key", key)  # the public test imports it by this name
    return load("pp-quiz", "tests/public/test_quiz_public.py", "_pp_quiz_public_test")


def _run(public_test, monkeypatch, name: str, answer: object) -> str:
    """'' when the public test accepts ``answer`` to ``name``, else its failure message."""
    fake = type(sys)("quiz")
    for q in QUESTIONS:
        setattr(fake, q, getattr(ref, q))
    setattr(fake, name, lambda: answer)
    monkeypatch.setitem(sys.modules, "quiz", fake)
    try:
        public_test.test_answer(name)
    except AssertionError as exc:
        return str(exc) or "failed"
    return ""


def _right(name: str):
    return getattr(ref, name)()


ACCEPTED = [
    ("q2", lambda: _right("q2").lower()), ("q3", lambda: f"  {_right('q3')}\n"), ("q8", lambda: _right("q8")),
    ("q1", lambda: round(_right("q1"), 4)), ("q1", lambda: Fraction(7, 15)), ("q5", lambda: round(_right("q5"), 5)),
    ("q7", lambda: 2), ("q7", lambda: 2.0), ("q9", lambda: int(_right("q9"))),
    ("q4", lambda: _right("q4")), ("q6", lambda: _right("q6")),
]
REFUSED = [
    ("q2", lambda: _right("q2") + "."), ("q2", lambda: f"{_right('q2')} the same"), ("q3", lambda: "E"),
    ("q3", lambda: 2), ("q10", lambda: ["A"]), ("q1", lambda: f"{_right('q1'):.4f}"), ("q1", lambda: True),
    ("q1", lambda: round(_right("q1"), 3)), ("q7", lambda: "2"),
    ("q4", lambda: float(_right("q4"))), ("q6", lambda: float(_right("q6"))), ("q6", lambda: 3 * (1 - 0.2) / 0.2),
    ("q6", lambda: Fraction(_right("q6"))), ("q6", lambda: True), ("q4", lambda: str(_right("q4"))),
]


@pytest.mark.parametrize("name,make", ACCEPTED, ids=[f"{q}-{i}" for i, (q, _) in enumerate(ACCEPTED)])
def test_public_test_accepts_the_stated_forms(public_test, monkeypatch, name, make):
    answer = make()
    assert _run(public_test, monkeypatch, name, answer) == "", (name, answer)


@pytest.mark.parametrize("name,make", REFUSED, ids=[f"{q}-{i}" for i, (q, _) in enumerate(REFUSED)])
def test_public_test_refuses_other_forms(public_test, monkeypatch, name, make):
    answer = make()
    assert _run(public_test, monkeypatch, name, answer), (name, answer)


def test_messages_never_print_the_right_answer(public_test, monkeypatch):
    """Every known mistake and a plainly wrong answer: the message never shows the right answer."""
    for name in QUESTIONS:
        right = _right(name)
        wrong = [n.split(":", 1)[1] for n in key.MISCONCEPTIONS.get(name, {})]
        if isinstance(right, str):
            answers = [*wrong, next(c for c in "ABCD" if c != right)]
            shows = re.compile("|".join(re.escape(t) for t in (f"'{right}'", f'"{right}"', f"answer is {right}",
                                                              f"answer: {right}")))
        else:
            answers = [type(right)(float(w)) for w in wrong] + [right + 1]
            shows = re.compile(rf"{re.escape(f'{float(right):.4f}')}|(?<![\w.]){re.escape(f'{float(right):.6g}')}"
                               r"(?!\w|\.\d)")
        for answer in answers:
            message = _run(public_test, monkeypatch, name, answer)
            assert message, (name, answer)
            assert not shows.search(message), (name, answer, message)
