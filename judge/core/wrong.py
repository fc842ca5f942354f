"""Wrong solutions: their code and what ``check`` expects of them (see docs/problem-format.md).

A wrong solution is ``wrong/<name>.py``, a full replacement of the entry file, or
``wrong/<name>.diff``, a unified diff applied to ``reference/<entry>`` (so a one-line mistake
stays one line, and cannot drift from the reference). Either may declare how it must fail::

    # judge: expect status=error
    # judge: caught-by test_warmup_order, test_small
    # judge: loses at-least 30%       (a conceptual mistake)
    # judge: loses at-most 20%        (a slip in a detail)

Without ``expect``, the status must be ``failed``: the code imports and runs, and a test
catches the mistake. ``caught-by`` names tests (function names, or full test ids) of which at
least one must fail or error. ``loses at-least N%`` says the mistake must cost at least that
share of the problem's points (a conceptual mistake should cost much), ``loses at-most N%`` that
it may cost no more (a slip in an argument check, a type or a message should cost little); both
may be declared, giving a range (see docs/grading.md). In a ``.diff`` the declarations go above
the ``---`` line.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .problem import Problem
from .result import Result, Status

EXPECTABLE: tuple[Status, ...] = ("failed", "error", "timeout")
_DIRECTIVE = re.compile(r"^#\s*judge:\s*(.*?)\s*$")
_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


class WrongSolutionError(ValueError):
    """A wrong solution cannot be used: its diff does not apply, or a declaration is invalid."""


@dataclass(frozen=True)
class Expectation:
    """How a wrong solution must fail."""

    status: Status = "failed"
    caught_by: tuple[str, ...] = ()
    loses: float = 0.0  # the least share of the problem's points the mistake must cost (0..1)
    loses_at_most: float | None = None  # the most it may cost (0..1), None: no bound


@dataclass(frozen=True)
class WrongSolution:
    """A wrong solution's code, ready to judge, and its expectation."""

    label: str  # "wrong/<file name>"
    path: Path
    source: str
    expectation: Expectation


def load_wrong(problem: Problem, path: Path) -> WrongSolution:
    """Read ``path`` (a ``.py`` or ``.diff`` under ``wrong/``); raises :class:`WrongSolutionError`."""
    label = f"wrong/{path.name}"
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise WrongSolutionError(f"{label}: cannot be read as UTF-8 text ({exc})") from None
    if path.suffix == ".diff":
        if problem.reference_path is None:
            raise WrongSolutionError(f"{label}: a diff needs reference/{problem.entry} to apply to")
        preamble = text.split("\n--- ", 1)[0] if not text.startswith("--- ") else ""
        expectation = parse_expectation(preamble, label)
        try:
            source = apply_unified_diff(problem.reference_path.read_text(encoding="utf-8"), text)
        except WrongSolutionError as exc:
            raise WrongSolutionError(f"{label} no longer applies to reference/{problem.entry}: {exc}") from None
        return WrongSolution(label, path, source, expectation)
    return WrongSolution(label, path, text, parse_expectation(text, label))


def wrong_source(problem: Problem, path: Path) -> str:
    """The code of the wrong solution at ``path`` (a diff applied to the reference)."""
    return load_wrong(problem, path).source


def parse_expectation(text: str, label: str = "wrong solution") -> Expectation:
    """The ``# judge:`` declarations of ``text``; unknown or malformed ones are errors."""
    status: Status = "failed"
    caught_by: list[str] = []
    loses = 0.0
    at_most: float | None = None
    for number, line in enumerate(text.splitlines(), 1):
        match = _DIRECTIVE.match(line)
        if not match:
            continue
        words = match.group(1)
        if words.startswith("expect "):
            status = _expected_status(words[len("expect "):].strip(), f"{label}:{number}")
        elif words.startswith("caught-by "):
            caught_by += [name.strip() for name in words[len("caught-by "):].split(",") if name.strip()]
        elif words.startswith("loses "):
            bound, share = _share_lost(words[len("loses "):].strip(), f"{label}:{number}")
            if bound == "at-least":
                loses = share
            else:
                at_most = share
        else:
            raise WrongSolutionError(f"{label}:{number}: unknown declaration {line.strip()!r} (expected "
                                     "`# judge: expect status=...`, `# judge: caught-by TEST, ...`, "
                                     "`# judge: loses at-least N%` or `# judge: loses at-most N%`)")
    if at_most is not None and at_most < loses:
        raise WrongSolutionError(f"{label}: declares it loses at least {loses:.0%} and at most {at_most:.0%}: "
                                 "no share of the points can be both")
    return Expectation(status, tuple(caught_by), loses, at_most)


def _share_lost(words: str, where: str) -> tuple[str, float]:
    """``at-least N%`` (0 < N <= 100) or ``at-most N%`` (0 <= N < 100): the bound and N as a share."""
    match = re.fullmatch(r"(at-least|at-most)\s+(\d+(?:\.\d+)?)\s*%", words)
    valid = match is not None and (0 < float(match.group(2)) <= 100 if match.group(1) == "at-least"
                                   else 0 <= float(match.group(2)) < 100)
    if not match or not valid:
        raise WrongSolutionError(f"{where}: `# judge: loses {words}` must be `loses at-least N%` (0 < N <= 100, "
                                 "a conceptual mistake) or `loses at-most N%` (0 <= N < 100, a slip)")
    return match.group(1), float(match.group(2)) / 100


def _expected_status(words: str, where: str) -> Status:
    key, _, value = words.partition("=")
    for status in EXPECTABLE:
        if key.strip() == "status" and value.strip() == status:
            return status
    raise WrongSolutionError(f"{where}: `# judge: expect {words}` must be `expect status=` followed by one of "
                             f"{', '.join(EXPECTABLE)}")


def unmet(expectation: Expectation, result: Result, describe: Callable[[str], str] | None = None) -> list[str]:
    """How ``result`` fails to meet ``expectation`` (empty when it meets it).

    ``describe`` turns the Result's message into the detail shown (default: its first line).
    """
    problems = []
    if result.status != expectation.status:
        message = (result.message or "").strip()
        detail = (describe or _first_line)(message) if message else ""
        problems.append(f"gives status {result.status}, not {expectation.status}" + (f" ({detail})" if detail else ""))
    for name in expectation.caught_by:
        matching = [t for t in result.tests if name in (t.id, _function_name(t.id))]
        if not matching:
            problems.append(f"declares it is caught by {name}, but no test has that name")
        elif all(t.outcome in ("passed", "skipped") for t in matching):
            problems.append(f"declares it is caught by {name}, but that test passes")
    if expectation.loses and result.max_points and result.points > result.max_points * (1 - expectation.loses) + 1e-9:
        share = result.points / result.max_points
        problems.append(f"keeps {result.points:g} of {result.max_points:g} points ({share:.0%}), "
                        f"but it must lose at least {expectation.loses:.0%}: give the objective it gets wrong "
                        "more of the points, or test it more")
    at_most = expectation.loses_at_most
    if at_most is not None and result.max_points and result.points < result.max_points * (1 - at_most) - 1e-9:
        share = result.points / result.max_points
        problems.append(f"keeps {result.points:g} of {result.max_points:g} points ({share:.0%}), "
                        f"but as a slip it may lose at most {at_most:.0%}: put the detail it gets wrong in an "
                        "objective of its own with few points (one that `requires` the main ones), or make "
                        "fewer tests depend on it")
    return problems


def _first_line(text: str) -> str:
    return text.splitlines()[0]


def _function_name(test_id: str) -> str:
    return test_id.rsplit("::", 1)[-1].split("[", 1)[0]


# ---------------------------------------------------------------------------------------------
# unified diffs


@dataclass
class _Hunk:
    header: str
    old_start: int  # 1-based line number in the original (the line after which, for an empty old side)
    old: list[str]
    new: list[str]


def apply_unified_diff(original: str, diff: str) -> str:
    """``original`` with the one-file unified diff ``diff`` applied.

    Every hunk's old lines (context and removals) must match exactly; a hunk may have moved
    (the original changed elsewhere), and is then applied where its old lines are, nearest to
    where the header says. Raises :class:`WrongSolutionError` otherwise.
    """
    lines = original.splitlines(keepends=True)
    out: list[str] = []
    position = 0  # lines of the original consumed so far
    for hunk in _parse_hunks(diff):
        start = _locate(lines, hunk, position)
        out += lines[position:start] + hunk.new
        position = start + len(hunk.old)
    return "".join(out + lines[position:])


def _parse_hunks(diff: str) -> list[_Hunk]:
    rows = diff.splitlines(keepends=True)
    starts = [i for i, row in enumerate(rows) if row.startswith("--- ")]
    if not starts:
        raise WrongSolutionError("not a unified diff (no `---` line); make it with `diff -u`")
    if len(starts) > 1:
        raise WrongSolutionError("the diff changes more than one file; it may only change the entry file")
    index = starts[0] + 1
    if index >= len(rows) or not rows[index].startswith("+++ "):
        raise WrongSolutionError("the `---` line is not followed by a `+++` line")
    hunks = []
    index += 1
    while index < len(rows):
        hunk, index = _parse_hunk(rows, index)
        hunks.append(hunk)
    if not hunks:
        raise WrongSolutionError("the diff has no hunks (it changes nothing)")
    return hunks


def _parse_hunk(rows: list[str], index: int) -> tuple[_Hunk, int]:
    header = rows[index].rstrip("\r\n")
    match = _HUNK.match(header)
    if not match:
        raise WrongSolutionError(f"expected a hunk header `@@ -a,b +c,d @@`, found {header!r}")
    old_count = int(match.group(2)) if match.group(2) is not None else 1
    new_count = int(match.group(4)) if match.group(4) is not None else 1
    hunk = _Hunk(header, int(match.group(1)), [], [])
    index += 1
    while index < len(rows) and (len(hunk.old) < old_count or len(hunk.new) < new_count):
        row = rows[index]
        tag, text = (row[0], row[1:]) if row not in ("\n", "\r\n") else (" ", row)
        if tag not in " -+\\":
            break
        if tag == "\\":  # "\ No newline at end of file": the line before has no line ending
            _drop_line_ending(hunk, rows[index - 1][0])
        else:
            if tag in " -":
                hunk.old.append(text)
            if tag in " +":
                hunk.new.append(text)
        index += 1
    if index < len(rows) and rows[index].startswith("\\"):
        _drop_line_ending(hunk, rows[index - 1][0])
        index += 1
    if len(hunk.old) != old_count or len(hunk.new) != new_count:
        raise WrongSolutionError(f"hunk {header}: has {len(hunk.old)} old and {len(hunk.new)} new lines, "
                                 f"the header says {old_count} and {new_count} (the diff was edited by hand?)")
    return hunk, index


def _drop_line_ending(hunk: _Hunk, tag: str) -> None:
    for side in ([hunk.old] if tag == "-" else [hunk.new] if tag == "+" else [hunk.old, hunk.new]):
        if side:
            side[-1] = side[-1].rstrip("\r\n")


def _locate(lines: list[str], hunk: _Hunk, position: int) -> int:
    """Where in ``lines`` (at or after ``position``) the hunk's old lines are, nearest to its header."""
    wanted = hunk.old_start - 1 if hunk.old else hunk.old_start
    size = len(hunk.old)
    candidates = [i for i in range(position, len(lines) - size + 1) if lines[i:i + size] == hunk.old]
    if not candidates:
        seen = "".join(lines[max(0, wanted):wanted + size]) or "(the end of the file)\n"
        raise WrongSolutionError(f"hunk {hunk.header}: its lines are not in the reference any more; the diff "
                                 f"expects\n{''.join(hunk.old)}where the reference has\n{seen}"
                                 "Make the diff again from the reference and the intended wrong code.")
    return min(candidates, key=lambda i: abs(i - wanted))
