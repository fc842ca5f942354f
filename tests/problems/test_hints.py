"""Every wrong/ solution of every problem gets its own hint, and no other wrong solution's hint (of any problem).

A hint is a diagnosis: it must appear for the mistake it names and must not fire for a different
mistake. Each wrong solution declares the phrase(s) its messages must contain in comments
``# hint: <phrase>`` (several lines for several phrases): in a ``wrong/*.py`` anywhere, in a
``wrong/*.diff`` above its ``---`` line, with the ``# judge:`` declarations. Every wrong solution is judged
natively, with the secret tests, exactly as ``python -m judge check`` does; the phrases are looked
up in the messages of its failing tests (and the run's own message).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from judge.commands import hints
from judge.core.problem import Problem, discover_problems
from judge.core.wrong import wrong_source
from judge.engines.native import Job, judge_many

PROBLEMS = Path(__file__).resolve().parents[2] / "problems"

def _problems() -> list[Problem]:
    problems, errors = discover_problems(PROBLEMS)
    assert not errors, errors
    return problems


def hint_phrases(problem: Problem, path: Path) -> list[str]:
    return hints.hint_phrases(path)


ALL = [(problem, path) for problem in _problems() for path in problem.wrong_files]
IDS = [f"{problem.id}/{path.name}" for problem, path in ALL]


@pytest.fixture(scope="module")
def messages() -> dict[str, str]:
    """Per wrong solution: the messages of its failing tests and of the run, one per line."""
    jobs = [Job(problem, None, include_secret=True, source=wrong_source(problem, path)) for problem, path in ALL]
    results = judge_many(jobs, parallel=2)
    out = {}
    for key, result in zip(IDS, results):
        out[key] = hints.messages(result)
    return out


def test_every_wrong_solution_declares_a_hint():
    missing = [key for key, (problem, path) in zip(IDS, ALL) if not hint_phrases(problem, path)]
    assert not missing, f"wrong/ solutions without a '# hint: <phrase>' comment: {missing}"


@pytest.mark.parametrize("problem, path", ALL, ids=IDS)
def test_own_hint_appears_and_no_other(problem, path, messages):
    text = messages[f"{problem.id}/{path.name}"]
    assert text, f"{problem.id}/{path.name}: no failure messages at all"
    for phrase in hint_phrases(problem, path):
        assert phrase in text, (f"{problem.id}/{path.name}: expected its hint {phrase!r} in the messages, got:\n"
                                f"{text[:3000]}")
    own = hint_phrases(problem, path) + hints.shared_phrases(path)
    for phrase in hints.shared_phrases(path):
        assert phrase in text, f"{problem.id}/{path.name}: expected the shared hint {phrase!r} in the messages"
    for other_problem, other in ALL:
        if other == path:
            continue
        for phrase in hint_phrases(other_problem, other):
            if phrase in own:
                continue
            assert phrase not in text, (f"{problem.id}/{path.name}: the hint of {other_problem.id}/wrong/{other.name} "
                                        f"({phrase!r}) fires for a different mistake:\n"
                                        + "\n".join(line for line in text.splitlines() if phrase in line)[:2000])


def test_hint_phrases_are_distinct_within_a_problem():
    for problem in _problems():
        seen: dict[str, str] = {}
        for path in problem.wrong_files:
            for phrase in hint_phrases(problem, path):
                assert phrase not in seen or seen[phrase] == path.name, (
                    f"{problem.id}: {path.name} and {seen.get(phrase)} declare the same hint {phrase!r}")
                seen[phrase] = path.name
