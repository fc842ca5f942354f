"""Public tests for pp-quiz: each question's answer, with a hint (not the answer) when it is wrong."""

from __future__ import annotations

import numbers

import _quiz_key as key
import pytest

QUESTIONS = [f"q{i}" for i in range(1, 13)]


@pytest.mark.parametrize("name", QUESTIONS)
def test_answer(name):
    import quiz

    func = getattr(quiz, name, None)
    assert callable(func), f"quiz.py has no function {name}(); keep all twelve functions q1() ... q12()"
    answer = func()
    kind, _, hint = key.KEY[name]
    assert answer is not None, f"{name}() returned None: replace the placeholder with your answer"
    if kind == key.CHOICE:
        ok = isinstance(answer, str) and answer.strip().upper() in ("A", "B", "C", "D")
        assert ok, f"{name}() returned {answer!r}: answer with one letter, 'A', 'B', 'C' or 'D'"
    elif kind == key.INTEGER:
        ok = isinstance(answer, numbers.Integral) and not isinstance(answer, bool)
        assert ok, (f"{name}() returned {answer!r} ({type(answer).__name__}): this question asks for an integer; "
                    "answer with an int, e.g. 5 (not 5.0)")
    else:
        ok = isinstance(answer, numbers.Real) and not isinstance(answer, bool)
        assert ok, (f"{name}() returned {answer!r} ({type(answer).__name__}): answer with a number, e.g. an "
                    "expression like 3 / 7 or a float right to 4 decimals")
    if key.is_right(name, answer):
        return
    shown = answer.strip().upper() if isinstance(answer, str) else f"{float(answer):.6g}"
    why = key.MISCONCEPTIONS.get(name, {}).get(key.normalise(answer))
    msg = f"{name}: {shown} is not right."
    if why:
        msg += f" A common mistake: {why}."
    msg += f" Hint: {hint}"
    raise AssertionError(msg)

