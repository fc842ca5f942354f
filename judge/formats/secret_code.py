"""What a student may see of a secret test: its code never, whatever the feedback level.

Messages of secret tests can quote their code (an assertion's source line, pytest's ``where``
detail); these helpers find the lines of a problem's secret test files and hide any message line
that quotes one. Used by every output a student reads: the platform formats and ``judge grade``'s
feedback.
"""

from __future__ import annotations

import dataclasses

from ..core.problem import Problem
from ..core.result import TestResult

HIDDEN_LINE = "(a line of the secret test's code is not shown)"


def secret_code_lines(problem: Problem | None) -> set[str]:
    """The non-trivial lines of the problem's secret test files (never shown to a student)."""
    if problem is None:
        return set()
    lines: set[str] = set()
    for path in problem.secret_test_files:
        lines.update(line.strip() for line in path.read_text(encoding="utf-8").splitlines()
                     if len(line.strip()) >= 8)
    return lines


def quotes_code(line: str, hidden: set[str]) -> bool:
    """Whether a message line shows test code (an assertion, pytest's detail, or a secret line)."""
    return line.lstrip(" +").startswith(("assert ", "where ")) or any(code in line for code in hidden)


def hide_code(message: str, hidden: set[str]) -> str:
    """``message`` with every line that quotes secret test code replaced by a note."""
    return "\n".join(HIDDEN_LINE if quotes_code(line, hidden) else line for line in message.splitlines())


def without_code(test: TestResult, hidden: set[str]) -> TestResult:
    """``test`` with its message's lines that quote secret test code replaced by a note."""
    return dataclasses.replace(test, message=hide_code(test.message, hidden)) if hidden else test
