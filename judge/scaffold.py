"""``python -m judge new <id>``: scaffold a valid problem folder for an instructor to fill in.

The folder validates at once; ``python -m judge check`` then lists what is still to do (the TODO
in the statement, no wrong/ solution yet).
"""

from __future__ import annotations

from pathlib import Path

from .problem import ID_PATTERN

_FILES = {
    "problem.toml": '''format = 1
id = "{id}"
title = "{title}"
summary = "One line that says what the learner will write."
order = 100
difficulty = "easy"
entry = "solution.py"
time_limit = 10
tags = []
''',
    "README.md": '''# {title}

TODO: the idea, the task, the function signatures, a worked example, and what the tests check.
Math works inline as \\( p - 1 \\) and displayed as $$ \\frac{{p-1}}{{m+p-1}} $$.
''',
    "starter/solution.py": '''"""Starter code: what the learner sees first. It must import, and fail the tests."""


def answer(p: int, m: int) -> float:
    """Return the bubble fraction of a GPipe schedule with p stages and m micro-batches."""
    raise NotImplementedError("write answer(p, m)")
''',
    "reference/solution.py": '''"""Reference solution: passes every test; never published."""


def answer(p: int, m: int) -> float:
    return (p - 1) / (m + p - 1)
''',
    "tests/public/test_answer.py": '''"""Public tests: shown to the learner."""

import solution


def test_answer_small():
    """p = 4, m = 4 gives 3/7"""
    got = solution.answer(4, 4)
    assert abs(got - 3 / 7) < 1e-12, f"answer(4, 4): expected 3/7 = {{3 / 7:.4f}}, got {{got!r}}"
''',
    "tests/secret/test_answer_secret.py": '''"""Secret tests: native grading only, never shipped to the site."""

import solution


def test_answer_one_stage():
    """one stage has no bubble"""
    assert solution.answer(1, 8) == 0, "with p = 1 there is nothing to wait for: expected 0"
''',
}


def scaffold(root: Path, problem_id: str) -> Path:
    """Create ``root/problem_id`` from the template; raise ValueError if it cannot."""
    if not ID_PATTERN.match(problem_id):
        raise ValueError(f"{problem_id!r} is not a valid id: use lowercase letters, digits and '-'")
    folder = root / problem_id
    if folder.exists():
        raise ValueError(f"{folder} already exists; choose another id")
    title = problem_id.replace("-", " ").capitalize()
    for name, text in _FILES.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text.format(id=problem_id, title=title), encoding="utf-8")
    (folder / "wrong").mkdir()
    return folder
