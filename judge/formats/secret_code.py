"""What a student may see of a secret test: its code never, whatever the feedback level.

Messages of secret tests can quote their code (an assertion's source line, pytest's ``where``
detail); these helpers find the lines of a problem's secret test files and hide any message line
that quotes one. Used by every output a student reads: the platform formats and ``judge grade``'s
feedback.
"""

from __future__ import annotations

import dataclasses
import re

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


_PARAMETERS = re.compile(r"\s*\[[^\]]*\]\s*$")


def secret_names(tests: list[TestResult]) -> dict[str, str]:
    """What a student is told a secret test is called when only names are shown: its name without the case's
    parameters (``bubble [p=4, v=2, target=0.1]`` would publish the secret inputs), numbered where several
    cases share it (``bubble (case 2)``). By test id."""
    bare = {t.id: _PARAMETERS.sub("", t.name) or t.name for t in tests}
    count: dict[str, int] = {}
    for name in bare.values():
        count[name] = count.get(name, 0) + 1
    seen: dict[str, int] = {}
    shown = {}
    for ident, name in bare.items():
        seen[name] = seen.get(name, 0) + 1
        shown[ident] = f"{name} (case {seen[name]})" if count[name] > 1 else name
    return shown
