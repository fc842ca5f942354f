"""The learner's language, for a problem's tests: assertion messages and hints per language.

A test (or a helper module of the tests) picks its message's language with :func:`say`::

    from judge.lang import say

    assert got == want, say(f"the warm-up count is one over ({got} forwards, not {want})",
                            zh=f"预热数量多了一个（{got} 个前向，而不是 {want} 个）")

The English text comes first and is required; every other language is a keyword argument named
by its code (``zh``, ``pt_BR`` for ``pt-BR``). A language the call does not give reads in English,
so a missing translation is never an error. :func:`language` is the language itself, for a test
that would rather branch.

The runner (:func:`judge.core.runner.judge_source`) sets the language for one run, in the test
process: natively the judge's ``--lang`` (or the environment's language, as for the judge's own
words: :mod:`judge.i18n`), in the browser the page's chosen language. It is never read from the
learner's process or from anything the learner's code can change, and it changes words only: a
test's verdict must not depend on it (``tests/problems/test_hints.py`` runs the hints in every
language a problem's wrong solutions declare).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

_language = "en"


def language() -> str:
    """The learner's language during a run: ``en``, ``zh``, ``pt-BR``, ... (``en`` outside a run)."""
    return _language


def say(en: str, /, **translations: str) -> str:
    """``en`` in the learner's language: ``translations[lang]`` (``zh_CN`` also finds ``zh``), else ``en``."""
    given = {key.replace("_", "-").lower(): text for key, text in translations.items() if text}
    tag = _language.lower()
    for candidate in (tag, tag.split("-")[0]):
        if candidate in given:
            return given[candidate]
    return en


@contextmanager
def tests_language(lang: str | None) -> Iterator[None]:
    """Within the block (one run of a problem's tests), :func:`language` is ``lang`` (None: English)."""
    global _language
    from .i18n import normalize

    before, _language = _language, normalize(lang)
    try:
        yield
    finally:
        _language = before
