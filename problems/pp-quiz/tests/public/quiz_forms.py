"""The form each pp-quiz answer must have: what the public tests check.

A multiple-choice answer is one letter A-D, a number question takes an int or a float, an integer
question ("Return an integer.") an int; a number must also be plausible for what it measures (a
share of the time lies between 0 and 1, a count is at least 1). Whether an answer is RIGHT is not
checked here: the grader's hidden tests hold the answer key, and nothing shipped with the quiz is
derived from it.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

CHOICE = "choice"
NUMBER = "number"
INTEGER = "integer"  # a number question whose answer must be an int

QUESTIONS = [f"q{i}" for i in range(1, 13)]

# question -> (form, smallest plausible value, largest plausible value, what the value measures)
FORMS: dict[str, tuple[str, float | None, float | None, str]] = {
    "q1": (NUMBER, 0, 1, "a share of the total time"),
    "q2": (CHOICE, None, None, ""),
    "q3": (CHOICE, None, None, ""),
    "q4": (INTEGER, 1, None, "a number of micro-batches"),
    "q5": (NUMBER, 0, None, "idle time divided by busy time"),
    "q6": (INTEGER, 1, None, "a number of micro-batches"),
    "q7": (NUMBER, 0, None, "a factor by which a time shrinks"),
    "q8": (CHOICE, None, None, ""),
    "q9": (NUMBER, 0, None, "an amount of data"),
    "q10": (CHOICE, None, None, ""),
    "q11": (CHOICE, None, None, ""),
    "q12": (CHOICE, None, None, ""),
}


def read_answer(quiz: Any, name: str) -> Any:
    """``quiz.<name>()``, asserting that it has the form its question asks for (not that it is right)."""
    func = getattr(quiz, name, None)
    assert callable(func), f"quiz.py has no function {name}(); keep all twelve functions q1() ... q12()"
    answer = func()
    form, low, high, what = FORMS[name]
    assert answer is not None, f"{name}() returned None: replace the placeholder with your answer"
    if form == CHOICE:
        ok = isinstance(answer, str) and answer.strip().upper() in ("A", "B", "C", "D")
        assert ok, f"{name}() returned {answer!r}: answer with one letter, 'A', 'B', 'C' or 'D'"
        return answer
    if form == INTEGER:
        ok = isinstance(answer, numbers.Integral) and not isinstance(answer, bool)
        assert ok, (f"{name}() returned {answer!r} ({type(answer).__name__}): this question asks for an integer; "
                    "answer with an int, e.g. 5 (not 5.0)")
    else:
        ok = isinstance(answer, numbers.Real) and not isinstance(answer, bool)
        assert ok, (f"{name}() returned {answer!r} ({type(answer).__name__}): answer with a number, e.g. an "
                    "expression like 3 / 7 or a float right to 4 decimals")
    value = float(answer)
    plausible = math.isfinite(value) and (low is None or value >= low) and (high is None or value <= high)
    bounds = (f"between {low:g} and {high:g}" if high is not None else f"at least {low:g}")
    assert plausible, f"{name}() returned {value:g}, but {what} is {bounds}: check the question again"
    return answer
