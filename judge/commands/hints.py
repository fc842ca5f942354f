"""``# hint: <phrase>`` declarations of wrong solutions, and whether a run's messages say them.

A wrong solution (``wrong/*.py``, or a ``wrong/*.diff`` above its ``---`` line) may declare the
phrase(s) its failure messages must contain, one ``# hint:`` line each: the diagnosis a learner
who made that mistake should read. :func:`unmet_hints` says which declared phrases a Result's
messages (its own and its failing tests') do not contain, so that a hint which appears nowhere
is a finding, not silently OK. ``judge check`` is the place to report them (see the closing note
of issue 23); ``tests/problems/test_hints.py`` holds the project's own problems to it.

A hint in another language (the tests' messages per language: :mod:`judge.lang`) is declared as
``# hint[zh]: <phrase>`` (and ``# hint-shared[zh]: ...``): in that language those lines replace the
English ones; a wrong solution without them is expected to say its English phrases there too (the
untranslated message's fallback).
"""

from __future__ import annotations

import re
from pathlib import Path

from ..core.result import Result

_DECLARATION = re.compile(r"^\s*#\s*(hint|hint-shared)(?:\[([A-Za-z0-9_-]+)\])?:\s*(.+?)\s*$", re.MULTILINE)


def _declared(path: Path, kind: str, lang: str | None) -> list[str]:
    found = [(language, phrase) for k, language, phrase in _DECLARATION.findall(_header(path)) if k == kind]
    tag = (lang or "en").replace("_", "-")
    for candidate in dict.fromkeys((tag, tag.split("-")[0])):
        translated = [phrase for language, phrase in found if language.replace("_", "-") == candidate]
        if translated and candidate != "en":
            return translated
    return [phrase for language, phrase in found if not language]


def hint_phrases(path: Path, lang: str | None = None) -> list[str]:
    """The phrases a wrong solution declares (none for a diff whose header has no ``# hint:`` line); in
    ``lang``, its ``# hint[lang]:`` phrases when it has any, else the English ones."""
    return _declared(path, "hint", lang)


def shared_phrases(path: Path, lang: str | None = None) -> list[str]:
    """``# hint-shared: <phrase>``: another mistake's hint that rightly fires for this one too (a symptom
    both share, such as a deadlock reported for a schedule that runs); it must appear in the messages."""
    return _declared(path, "hint-shared", lang)


def _header(path: Path) -> str:
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".diff":
        text = "" if text.startswith("--- ") else text.split("\n--- ", 1)[0]
    return text


def messages(result: Result) -> str:
    """The run's message and its failing tests' messages, one after the other."""
    parts = [result.message] + [t.message for t in result.tests if t.outcome != "passed"]
    return "\n".join(part for part in parts if part)


def unmet_hints(path: Path, result: Result, lang: str | None = None) -> list[str]:
    """Findings for each phrase ``path`` declares (in ``lang``, default the judge's active language, in
    which the tests were told to speak) that ``result``'s messages do not contain."""
    from ..i18n import current_language

    lang = lang or current_language()
    said = messages(result)
    return [f"{path.parent.name}/{path.name} declares the hint {phrase!r}, which no failure message says: "
            "fix the hint line or the message the test gives"
            for phrase in hint_phrases(path, lang) + shared_phrases(path, lang) if phrase not in said]
