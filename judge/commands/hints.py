"""``# hint: <phrase>`` declarations of wrong solutions, and whether a run's messages say them.

A wrong solution (``wrong/*.py``, or a ``wrong/*.diff`` above its ``---`` line) may declare the
phrase(s) its failure messages must contain, one ``# hint:`` line each: the diagnosis a learner
who made that mistake should read. :func:`unmet_hints` says which declared phrases a Result's
messages (its own and its failing tests') do not contain, so that a hint which appears nowhere
is a finding, not silently OK. ``judge check`` is the place to report them (see the closing note
of issue 23); ``tests/problems/test_hints.py`` holds the project's own problems to it.
"""

from __future__ import annotations

import re
from pathlib import Path

from ..core.result import Result

_HINT = re.compile(r"^\s*#\s*hint:\s*(.+?)\s*$", re.MULTILINE)
_SHARED = re.compile(r"^\s*#\s*hint-shared:\s*(.+?)\s*$", re.MULTILINE)


def hint_phrases(path: Path) -> list[str]:
    """The phrases a wrong solution declares (none for a diff whose header has no ``# hint:`` line)."""
    return _HINT.findall(_header(path))


def shared_phrases(path: Path) -> list[str]:
    """``# hint-shared: <phrase>``: another mistake's hint that rightly fires for this one too (a symptom
    both share, such as a deadlock reported for a schedule that runs); it must appear in the messages."""
    return _SHARED.findall(_header(path))


def _header(path: Path) -> str:
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".diff":
        text = "" if text.startswith("--- ") else text.split("\n--- ", 1)[0]
    return text


def messages(result: Result) -> str:
    """The run's message and its failing tests' messages, one after the other."""
    parts = [result.message] + [t.message for t in result.tests if t.outcome != "passed"]
    return "\n".join(part for part in parts if part)


def unmet_hints(path: Path, result: Result) -> list[str]:
    """Findings for each phrase ``path`` declares that ``result``'s messages do not contain."""
    said = messages(result)
    return [f"{path.parent.name}/{path.name} declares the hint {phrase!r}, which no failure message says: "
            "fix the hint line or the message the test gives"
            for phrase in hint_phrases(path) + shared_phrases(path) if phrase not in said]
