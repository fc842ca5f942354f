"""A finding: what ``judge check`` or a problem folder's validation found, as data.

A :class:`Finding` carries a ``kind`` (one word of :data:`FindingKind`, never translated: tests and
tools tell findings apart by it), the file it is about and its line when known, and the message a
person reads (free to change or be translated). ``str(finding)`` is how it is printed:
``path:line: message`` when it has a line, the message alone otherwise (a message without a line
names its file itself when it reads better). Runs in both engines.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

FindingKind = Literal[
    # a problem folder that does not load (judge.core.problem)
    "not-a-folder", "no-problems-folder", "missing-file", "unreadable-file", "invalid-toml", "syntax-error",
    "no-tests", "name-clash", "duplicate-id", "unknown-field", "missing-field", "wrong-type", "bad-value",
    "bad-boundary", "bad-objective", "bad-equivalent-mutant", "symbolic-link",
    # the folder's files (judge check)
    "fill-in", "todo", "broken-link", "remote-image", "link-not-on-site", "unreadable-translation",
    "signature-mismatch", "link-targets-differ", "statement-languages", "missing-translation",
    "leaking-asset", "cut-test-name", "secret-expected-timeline", "untranslated-title",
    # the reference
    "reference-fails", "import-failure", "reference-time", "reference-slow", "objective-without-tests",
    "nondeterministic",
    # the starter, the wrong solutions, the degenerate variants
    "no-wrong-solutions", "invalid-wrong-solution", "not-judged", "passes-every-test", "fails-as-expected",
    "unmet-expectation", "unmet-hint", "degenerate-earns", "degenerate-earns-nothing",
]
FINDING_KINDS: tuple[FindingKind, ...] = get_args(FindingKind)


@dataclass(frozen=True)
class Finding:
    """One thing found about a problem folder: its kind, where, and what a person reads."""

    kind: FindingKind
    path: str = ""  # the file, relative to the problem folder when it is in it ("" when none)
    line: int = 0  # 1-based; 0 when not about one line
    message: str = ""

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.message}" if self.path and self.line else self.message


def kinds(findings: list[Finding] | tuple[Finding, ...]) -> list[FindingKind]:
    """The kinds of ``findings``, in order (what tests compare)."""
    return [finding.kind for finding in findings]
