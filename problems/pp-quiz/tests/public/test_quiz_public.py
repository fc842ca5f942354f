"""Public tests for pp-quiz: each answer has the form its question asks for.

These tests cannot tell whether an answer is right: the answer key is only in the grader's hidden
tests, which award the marks (see the statement).
"""

from __future__ import annotations

import pytest
from quiz_forms import QUESTIONS, read_answer


@pytest.mark.title(zh="答案符合题目要求的形式")
@pytest.mark.parametrize("name", QUESTIONS)
def test_answer_form(name):
    """The answer has the form its question asks for

    One letter A-D, a number, or an int, with a plausible value; not whether it is right."""
    import quiz

    read_answer(quiz, name)
