"""Every wrong/ solution of every problem gets its own hint, and no other wrong solution's hint (of any problem).

A hint is a diagnosis: it must appear for the mistake it names and must not fire for a different
mistake. Each wrong solution declares the phrase(s) its messages must contain in comments
``# hint: <phrase>`` (several lines for several phrases): in a ``wrong/*.py`` anywhere, in a
``wrong/*.diff`` above its ``---`` line, with the ``# judge:`` declarations. Every wrong solution is judged
natively, with the secret tests, as ``python -m judge check`` does (through the tests' shared Results,
:func:`tests.judged.solution_job`); the phrases are looked up in the messages of its failing tests (and
the run's own message). Only the cases a run selects are judged (``-k pp-schedule`` judges one problem's).

The tests' messages may be in the learner's language (:mod:`judge.lang`); a translated hint is declared
``# hint[zh]: <phrase>``. The same rule holds in every language some wrong solution declares hints in:
the problems that declare any are judged again in that language, and each wrong solution must say its
phrases in it (its English ones when it has no translation: the fallback) and no other's.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from judge.commands import hints
from judge.core.problem import Problem, discover_problems
from judge.core.wrong import wrong_source
from tests.judged import judge_cached, solution_job

PROBLEMS = Path(__file__).resolve().parents[2] / "problems"

def _problems() -> list[Problem]:
    problems, errors = discover_problems(PROBLEMS)
    assert not errors, errors
    return problems


def hint_phrases(problem: Problem, path: Path, lang: str = "en") -> list[str]:
    return hints.hint_phrases(path, lang)


ALL = [(problem, path) for problem in _problems() for path in problem.wrong_files]
IDS = [f"{problem.id}/{path.name}" for problem, path in ALL]
# the languages some wrong solution declares hints in, and the problems (ids) that declare them
def hint_languages(path: Path) -> set[str]:
    """The languages besides English a wrong solution declares hints in (``# hint[zh]: ...``)."""
    return {language for _, language, _ in hints._DECLARATION.findall(hints._header(path)) if language}


TRANSLATED = {lang: {p.id for p, path in ALL if lang in hint_languages(path)}
              for lang in sorted({lang for _, path in ALL for lang in hint_languages(path)})}
CASES = [("en", problem, path) for problem, path in ALL] + [
    (lang, problem, path) for lang, ids in TRANSLATED.items() for problem, path in ALL if problem.id in ids]
CASE_IDS = [f"{lang}-{problem.id}/{path.name}" for lang, problem, path in CASES]


def test_some_hints_are_translated():
    assert "zh" in TRANSLATED and {"pp-1f1b-emulated", "pp-interleaved"} <= TRANSLATED["zh"]


@pytest.fixture(scope="module")
def messages(request: pytest.FixtureRequest) -> dict[tuple[str, str], str]:
    """Per language and wrong solution of the cases this run selected: the messages of its failing tests
    and of the run, one per line (judged in one batch, or read from the shared cache)."""
    selected = {item.name for item in request.session.items
                if getattr(item, "originalname", "") == "test_own_hint_appears_and_no_other"}
    cases = [case for case, case_id in zip(CASES, CASE_IDS)
             if f"test_own_hint_appears_and_no_other[{case_id}]" in selected]
    jobs = [solution_job(problem.path, f"{problem.id}/wrong/{path.name}", wrong_source(problem, path), lang)
            for lang, problem, path in cases]
    return {(lang, f"{problem.id}/{path.name}"): hints.messages(result)
            for (lang, problem, path), result in zip(cases, judge_cached(jobs))}


def test_every_wrong_solution_declares_a_hint():
    missing = [key for key, (problem, path) in zip(IDS, ALL) if not hint_phrases(problem, path)]
    assert not missing, f"wrong/ solutions without a '# hint: <phrase>' comment: {missing}"


@pytest.mark.slow
@pytest.mark.parametrize("lang, problem, path", CASES, ids=CASE_IDS)
def test_own_hint_appears_and_no_other(lang, problem, path, messages):
    text = messages[(lang, f"{problem.id}/{path.name}")]
    assert text, f"{problem.id}/{path.name}: no failure messages at all"
    for phrase in hint_phrases(problem, path, lang):
        assert phrase in text, (f"{problem.id}/{path.name} ({lang}): expected its hint {phrase!r} in the messages, "
                                f"got:\n{text[:3000]}")
    own = hint_phrases(problem, path, lang) + hints.shared_phrases(path, lang)
    for phrase in hints.shared_phrases(path, lang):
        assert phrase in text, f"{problem.id}/{path.name} ({lang}): expected the shared hint {phrase!r} in the messages"
    for other_problem, other in ALL:
        if other == path:
            continue
        for phrase in hint_phrases(other_problem, other, lang):
            if phrase in own:
                continue
            assert phrase not in text, (f"{problem.id}/{path.name} ({lang}): the hint of {other_problem.id}/wrong/"
                                        f"{other.name} ({phrase!r}) fires for a different mistake:\n"
                                        + "\n".join(line for line in text.splitlines() if phrase in line)[:2000])


@pytest.mark.parametrize("lang", ["en", *TRANSLATED])
def test_hint_phrases_are_distinct_within_a_problem(lang):
    for problem in _problems():
        seen: dict[str, str] = {}
        for path in problem.wrong_files:
            for phrase in hint_phrases(problem, path, lang):
                assert phrase not in seen or seen[phrase] == path.name, (
                    f"{problem.id} ({lang}): {path.name} and {seen.get(phrase)} declare the same hint {phrase!r}")
                seen[phrase] = path.name
