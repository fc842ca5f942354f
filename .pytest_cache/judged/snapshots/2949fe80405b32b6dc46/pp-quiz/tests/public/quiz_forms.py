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

from judge.lang import say

CHOICE = "choice"
NUMBER = "number"
INTEGER = "integer"  # a number question whose answer must be an int

QUESTIONS = [f"q{i}" for i in range(1, 13)]

# what a value measures, in Chinese (FORMS's fourth field)
WHAT_ZH = {
    "a share of the total time": "总时间中的占比",
    "a number of micro-batches": "微批次的个数",
    "idle time divided by busy time": "空闲时间除以忙碌时间",
    "a factor by which a time shrinks": "时间缩小的倍数",
    "an amount of data": "数据量",
}

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
    assert callable(func), say(f"quiz.py has no function {name}(); keep all twelve functions q1() ... q12()",
                               zh=f"quiz.py 中没有函数 {name}()；请保留全部十二个函数 q1() ... q12()")
    answer = func()
    form, low, high, what = FORMS[name]
    assert answer is not None, say(f"{name}() returned None: replace the placeholder with your answer",
                                   zh=f"{name}() 返回了 None：请把占位符换成你的答案")
    if form == CHOICE:
        ok = isinstance(answer, str) and answer.strip().upper() in ("A", "B", "C", "D")
        assert ok, say(f"{name}() returned {answer!r}: answer with one letter, 'A', 'B', 'C' or 'D'",
                       zh=f"{name}() 返回了 {answer!r}：请用一个字母作答，'A'、'B'、'C' 或 'D'")
        return answer
    if form == INTEGER:
        ok = isinstance(answer, numbers.Integral) and not isinstance(answer, bool)
        assert ok, say(f"{name}() returned {answer!r} ({type(answer).__name__}): this question asks for an integer; "
                       "answer with an int, e.g. 5 (not 5.0)",
                       zh=f"{name}() 返回了 {answer!r}（{type(answer).__name__}）：这道题要求一个整数；"
                          "请用 int 作答，例如 5（不是 5.0）")
    else:
        ok = isinstance(answer, numbers.Real) and not isinstance(answer, bool)
        assert ok, say(f"{name}() returned {answer!r} ({type(answer).__name__}): answer with a number, e.g. an "
                       "expression like 3 / 7 or a float right to 4 decimals",
                       zh=f"{name}() 返回了 {answer!r}（{type(answer).__name__}）：请用一个数作答，例如 3 / 7 "
                          "这样的表达式，或精确到小数点后 4 位的 float")
    value = float(answer)
    plausible = math.isfinite(value) and (low is None or value >= low) and (high is None or value <= high)
    bounds = (f"between {low:g} and {high:g}" if high is not None else f"at least {low:g}")
    bounds_zh = (f"在 {low:g} 和 {high:g} 之间" if high is not None else f"至少为 {low:g}")
    assert plausible, say(f"{name}() returned {value:g}, but {what} is {bounds}: check the question again",
                          zh=f"{name}() 返回了 {value:g}，但{WHAT_ZH.get(what, what)}应{bounds_zh}：请再读一遍题目")
    return answer
