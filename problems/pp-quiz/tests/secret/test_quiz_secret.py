"""Hidden tests for pp-quiz: each question's answer against the key, with a hint (never the answer)."""

from __future__ import annotations

import _quiz_key as key
import pytest
from quiz_forms import QUESTIONS, read_answer

from judge.lang import say


@pytest.mark.title(zh="答案正确")
@pytest.mark.parametrize("name", QUESTIONS)
def test_answer(name):
    """The answer is right"""
    import quiz

    answer = read_answer(quiz, name)  # the form the question asks for, as the public test checks
    if key.is_right(name, answer):
        return
    _, _, hint = key.KEY[name]
    shown = answer.strip().upper() if isinstance(answer, str) else f"{float(answer):.6g}"
    why = key.MISCONCEPTIONS.get(name, {}).get(key.normalise(answer))
    msg = f"{name}: {shown} is not right."
    if why:
        msg += f" A common mistake: {why}."
    msg += f" Hint: {hint}"
    why_zh = key.MISCONCEPTIONS_ZH.get(name, {}).get(key.normalise(answer))
    msg_zh = f"{name}：{shown} 不对。"
    if why_zh:
        msg_zh += f"一个常见的错误：{why_zh}。"
    msg_zh += f"提示：{key.HINTS_ZH[name]}"
    raise AssertionError(say(msg, zh=msg_zh))
