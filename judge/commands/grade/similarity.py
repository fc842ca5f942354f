"""Similar code across the class: pairs of students whose code for a problem overlaps, with copydetect.

copydetect (a winnowing fingerprint detector, the MOSS algorithm) tokenises each submitted entry
file with Pygments (names and literals folded), fingerprints it, and discards the fingerprints of
the problem's starter (code every student was given). For each problem, every pair of students
who changed the starter is compared; a pair is reported when either side's share of overlapping
tokens is at least the threshold (``--similarity``, default 0.8). Byte-identical code is 1.0.

copydetect is an optional dependency (``pip install "pp-judge[similarity]"``): without it
:func:`similar_pairs` returns ``None`` and the report says how to get it.
"""

from __future__ import annotations

import csv
import importlib.util
import io
import itertools
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...core.problem import Problem
from .feedback import untouched
from .model import ClassGrades, cell

NOISE_CHARACTERS = 25  # copydetect's k: fingerprints span this many characters of tokenised code
WINDOW = 1  # copydetect's winnowing window (1: every fingerprint)
INSTALL_HINT = 'pip install "pp-judge[similarity]"'


@dataclass(frozen=True)
class Pair:
    """Two students' code for one problem, and how much of each overlaps the other (0..1)."""

    problem: str
    first: str
    second: str
    first_share: float
    second_share: float
    identical: bool = False  # byte-identical code

    @property
    def similarity(self) -> float:
        return max(self.first_share, self.second_share)


def similar_pairs(grades: ClassGrades) -> list[Pair] | None:
    """Pairs at or above the threshold, most similar first; ``None`` when copydetect is not installed
    or the report was not asked for."""
    threshold = grades.options.similarity
    if threshold is None or importlib.util.find_spec("copydetect") is None:
        return None
    pairs: list[Pair] = []
    for problem in grades.problems:
        codes = {g.student: g.submission.sources[problem.id] for g in grades.graded
                 if problem.id in g.submission.sources and not untouched(g, problem)}
        if len(codes) < 2:
            continue  # no pair to compare (and copydetect's import, matplotlib's included, takes seconds)
        from copydetect import CodeFingerprint, compare_files

        boilerplate = np.array(sorted(_fingerprint(CodeFingerprint, problem, problem.starter).hashes))
        prints = {student: _fingerprint(CodeFingerprint, problem, code, boilerplate)
                  for student, code in codes.items()}
        for first, second in itertools.combinations(sorted(prints), 2):
            if codes[first] == codes[second]:
                shares = (1.0, 1.0)
            else:
                _, shares, _ = compare_files(prints[first], prints[second])
            pair = Pair(problem.id, first, second, float(shares[0]), float(shares[1]), codes[first] == codes[second])
            if pair.similarity >= threshold:
                pairs.append(pair)
    return sorted(pairs, key=lambda p: (-p.similarity, p.problem, p.first, p.second))


def _fingerprint(kind: Any, problem: Problem, code: str, boilerplate: Any = None) -> Any:
    # the lexer named, not found from the file name: that search loads every lexer and reads the installed
    # packages' entry points (1.5 s here, once a run)
    return kind(problem.entry, NOISE_CHARACTERS, WINDOW, boilerplate=boilerplate, language="python",
                fp=io.StringIO(code))


def identical_groups(pairs: list[Pair]) -> list[tuple[str, list[str]]]:
    """Per problem, the groups of students who handed in byte-identical code (each group sorted)."""
    groups: dict[tuple[str, str], set[str]] = {}  # (problem, code's first student) -> students
    first_of: dict[tuple[str, str], str] = {}
    for pair in (p for p in pairs if p.identical):
        root = first_of.setdefault((pair.problem, pair.first), pair.first)
        first_of.setdefault((pair.problem, pair.second), root)
        groups.setdefault((pair.problem, root), {root}).add(pair.second)
    return sorted((problem, sorted(students)) for (problem, _), students in groups.items())


def similarity_csv(pairs: list[Pair]) -> str:
    """``problem, student_a, student_b, share_a, share_b`` (shares of each one's code found in the other's)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow(["problem", "student_a", "student_b", "share_a", "share_b"])
    for pair in pairs:
        writer.writerow([pair.problem, cell(pair.first), cell(pair.second), f"{pair.first_share:.2f}",
                         f"{pair.second_share:.2f}"])
    return buffer.getvalue()
