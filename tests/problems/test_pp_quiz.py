"""Project tests for pp-quiz: the reference answers agree with answers worked out independently.

Numeric answers are measured on a small tick-by-tick pipeline simulator written here (or found by
brute-force search); choice answers are checked against the key below. The hashed answer key of the
hidden tests (tests/secret/_quiz_key.py) is checked against the same answers, and every "common
mistake" it explains is checked to really be wrong. Nothing shipped to learners (public tests and
their helper, starter, statement) holds the key, and the public tests pass or fail alike for every
answer of the right form, so they cannot be used to find the answers.
"""

from __future__ import annotations

import csv
import os
import re
import shutil
import sys
from fractions import Fraction
from pathlib import Path

import pytest

from judge.commands.grade import Options, grade_class
from judge.core.problem import discover_problems
from judge.engines import get_engine
from judge.sandbox import levels
from tests.problems.loading import load

PROBLEM = Path(__file__).resolve().parents[2] / "problems" / "pp-quiz"




ref = load("pp-quiz", "reference/quiz.py", "_pp_quiz_reference")
forms = load("pp-quiz", "tests/public/quiz_forms.py", "_pp_quiz_forms")


def _with_forms(relative: str, name: str):
    """Load a test file of pp-quiz that imports the public helper quiz_forms by name."""
    saved = sys.modules.get("quiz_forms")
    sys.modules["quiz_forms"] = forms
    try:
        return load("pp-quiz", relative, name)
    finally:
        if saved is None:
            sys.modules.pop("quiz_forms", None)
        else:
            sys.modules["quiz_forms"] = saved


key = _with_forms("tests/secret/_quiz_key.py", "_pp_quiz_key")


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
    assert forms.FORMS[name][0] == kind, name
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
# The tests accept the answer forms the statement allows and refuse the others; the public test
# checks only the form, the hidden one also the answer.


@pytest.fixture()
def quiz_tests(monkeypatch):
    monkeypatch.setitem(sys.modules, "quiz_forms", forms)  # both test files import it by this name
    monkeypatch.setitem(sys.modules, "_quiz_key", key)
    public = load("pp-quiz", "tests/public/test_quiz_public.py", "_pp_quiz_public_test")
    secret = load("pp-quiz", "tests/secret/test_quiz_secret.py", "_pp_quiz_secret_test")
    return public.test_answer_form, secret.test_answer


def _run(test, monkeypatch, name: str, answer: object) -> str:
    """'' when ``test`` accepts ``answer`` to ``name``, else its failure message."""
    fake = type(sys)("quiz")
    for q in QUESTIONS:
        setattr(fake, q, getattr(ref, q))
    setattr(fake, name, lambda: answer)
    monkeypatch.setitem(sys.modules, "quiz", fake)
    try:
        test(name)
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
# (question, answer, whether only its value is wrong: the public test, which checks the form, accepts it)
REFUSED = [
    ("q2", lambda: _right("q2") + ".", False), ("q2", lambda: f"{_right('q2')} the same", False),
    ("q3", lambda: "E", False), ("q3", lambda: 2, False), ("q10", lambda: ["A"], False),
    ("q1", lambda: f"{_right('q1'):.4f}", False), ("q1", lambda: True, False), ("q1", lambda: round(_right("q1"), 3), True),
    ("q7", lambda: "2", False), ("q4", lambda: float(_right("q4")), False), ("q6", lambda: float(_right("q6")), False),
    ("q6", lambda: 3 * (1 - 0.2) / 0.2, False), ("q6", lambda: Fraction(_right("q6")), False), ("q6", lambda: True, False),
    ("q4", lambda: str(_right("q4")), False), ("q1", lambda: 1.5, False), ("q4", lambda: 0, False),
    ("q9", lambda: float("nan"), False),
]


@pytest.mark.parametrize("name,make", ACCEPTED, ids=[f"{q}-{i}" for i, (q, _) in enumerate(ACCEPTED)])
def test_the_tests_accept_the_stated_forms(quiz_tests, monkeypatch, name, make):
    answer = make()
    for test in quiz_tests:
        assert _run(test, monkeypatch, name, answer) == "", (test.__module__, name, answer)


@pytest.mark.parametrize("name,make,value_only", REFUSED, ids=[f"{q}-{i}" for i, (q, _, _) in enumerate(REFUSED)])
def test_the_tests_refuse_other_forms(quiz_tests, monkeypatch, name, make, value_only):
    public, secret = quiz_tests
    answer = make()
    assert _run(secret, monkeypatch, name, answer), (name, answer)
    assert bool(_run(public, monkeypatch, name, answer)) != value_only, (name, answer)


def test_public_test_cannot_tell_answers_apart(quiz_tests, monkeypatch):
    """Every letter passes a choice question's public test; a number question's public test gives
    the same verdict for the right answer and for plausible wrong ones."""
    public, _ = quiz_tests
    for name in QUESTIONS:
        right = _right(name)
        if isinstance(right, str):
            for letter in "ABCD":
                assert _run(public, monkeypatch, name, letter) == "", (name, letter)
        else:
            others = [right + 1] if isinstance(right, int) else [right * 0.9, right * 1.1 if right * 1.1 <= 1 else right * 0.8]
            assert _run(public, monkeypatch, name, right) == "", name
            for other in others:
                assert _run(public, monkeypatch, name, other) == "", (name, other)


def test_nothing_shipped_holds_the_key():
    """The public tests, their helpers, the support modules, the starter and the statement name no
    hash of the key and import nothing from the hidden tests."""
    shipped = [*(PROBLEM / "tests" / "public").glob("*.py"), *(PROBLEM / "support").glob("*.py"),
               *(PROBLEM / "starter").glob("*.py"), PROBLEM / "README.md"]
    assert not list((PROBLEM / "tests" / "public").glob("_quiz_key*")), "the key must not be a public helper"
    for path in shipped:
        text = path.read_text(encoding="utf-8")
        assert "_quiz_key" not in text.replace("tests/secret/_quiz_key.py", ""), path
        for name, (_, digest, _) in key.KEY.items():
            assert digest not in text, (path, name)
        for name, wrong in key.MISCONCEPTIONS.items():
            for reason in wrong.values():
                assert reason not in text, (path, name, reason)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_messages_never_print_the_right_answer(quiz_tests, monkeypatch, lang):
    """Every known mistake and a plainly wrong answer: the hidden test's message never shows the right
    answer, in English or in Chinese."""
    from judge.lang import tests_language

    _, secret = quiz_tests
    with tests_language(lang):
        _check_no_answer_shown(secret, monkeypatch, lang)


def _check_no_answer_shown(secret, monkeypatch, lang: str) -> None:
    for name in QUESTIONS:
        right = _right(name)
        wrong = [n.split(":", 1)[1] for n in key.MISCONCEPTIONS.get(name, {})]
        if isinstance(right, str):
            answers = [*wrong, next(c for c in "ABCD" if c != right)]
            shows = re.compile("|".join(re.escape(t) for t in (f"'{right}'", f'"{right}"', f"answer is {right}",
                                                              f"answer: {right}", f"答案是 {right}",
                                                              f"答案是{right}", f"答案：{right}")))
        else:
            answers = [type(right)(float(w)) for w in wrong] + [right + 1]
            shows = re.compile(rf"{re.escape(f'{float(right):.4f}')}|(?<![\w.]){re.escape(f'{float(right):.6g}')}"
                               r"(?!\w|\.\d)")
        for answer in answers:
            message = _run(secret, monkeypatch, name, answer)
            assert message, (name, answer)
            assert not shows.search(message), (name, answer, message)
            if lang == "zh":
                assert any("\u4e00" <= ch <= "\u9fff" for ch in message), (name, answer, message)


# ------------------------------------------------------------------------------------------------
# At grading time the hidden tests sit beside the learner's code: the sandbox must keep the key out
# of its reach. The cracker looks for the key in sys.modules, by import and on disk, and tries
# answers against its hashes.

CRACKER = Path(__file__).resolve().parent / "fixtures" / "pp_quiz_key_cracker.py"


def test_the_cracker_finds_every_answer_when_it_can_read_the_key(monkeypatch):
    """The attack is real: with the key on its path it answers every question right."""
    monkeypatch.chdir(PROBLEM)
    cracker = _load_path(CRACKER)
    for name in QUESTIONS:
        assert key.is_right(name, getattr(cracker, name)()), name


def _load_path(path: Path):
    import importlib.util

    spec = importlib.util.spec_from_file_location("_pp_quiz_cracker", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.skipif(shutil.which("bwrap") is None and os.environ.get("CI") != "true",
                    reason="bubblewrap is not installed (in CI a missing bwrap is a failure)")
@pytest.mark.slow  # an attack, through judge grade end to end
def test_cracking_the_key_at_grading_time_earns_nothing(tmp_path):
    problems, errors = discover_problems(PROBLEM)
    assert not errors, errors
    submissions = tmp_path / "submissions"
    for student, code in (("cracker", CRACKER.read_text(encoding="utf-8")),
                          ("honest", (PROBLEM / "reference" / "quiz.py").read_text(encoding="utf-8"))):
        (submissions / student / "pp-quiz").mkdir(parents=True)
        (submissions / student / "pp-quiz" / "quiz.py").write_text(code, encoding="utf-8")
    engine = get_engine("native", sandbox=levels.choose("bubblewrap", grading=True))
    grade_class(submissions, tmp_path / "out", problems, Options(parallel=1, engine=engine))
    with (tmp_path / "out" / "grades.csv").open() as handle:
        rows = {row["student"]: row for row in csv.DictReader(handle)}
    assert rows["honest"]["pp-quiz"] == "10", rows["honest"]
    assert rows["cracker"]["pp-quiz"] == "0", rows["cracker"]
