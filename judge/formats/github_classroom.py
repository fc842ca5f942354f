"""``--github-classroom``: GitHub Classroom autograding runner results, within the platform's limits.

What classroom-resources/autograding-grading-reporter does with them (its src/ files):

- ``main.js``: for each name of its ``runners`` input, reads the environment variable
  ``<NAME in capitals>_RESULTS``, base64-decodes it and parses the JSON ``{version: 1, status:
  pass|fail|error, max_score, tests: [{name, status, score, message, test_code, filename, line_no,
  duration}]}``; the step fails when a runner's status is ``fail`` or ``error``;
- ``notify-classroom.js``: over the runners whose ``max_score`` is not 0, adds up ``max_score`` and
  every test's ``score``, left to right in JavaScript doubles, prints ``Total points: X/Y`` and
  writes ``Points X/Y`` to the check run, which is what Classroom records;
- ``console-results.js`` prints each test's name (and, in some versions, the message of a test
  that did not pass; in others only of one with status ``error``) and per runner ``Total points for
  NAME: passed / tests x max_score``; ``aggregate-results.js`` prints a table from the same pass
  counts. These count entries, not points: with one entry per test of equal weight they agree
  with the points, so entries are merged only when nothing else makes a result fit.

So the judge hands it one runner per problem (:func:`runner_name`), each worth the problem's
points, and:

- each runner's encoded result is at most :data:`ENCODED_BUDGET` bytes and all of them together
  at most :data:`TOTAL_BUDGET`: Linux refuses an environment string over 128 KiB (MAX_ARG_STRLEN,
  ``Argument list too long``) and a process whose environment passes ARG_MAX. A result that would
  be larger is made smaller a step at a time (shorter messages, the passed tests as one entry, the
  problem as one entry);
- the scores are the rows of :mod:`._platform` (two decimals, adding up exactly), and where adding
  them up in doubles would not give the judge's total to the last bit, the last nonzero score is
  moved by the few units in the last place it takes (:func:`_fold_exactly`), so ``Points`` reads
  ``95.25``, never ``95.24999999999999``.

:func:`render` (``judge PATH --github-classroom FILE``) is one runner holding every problem;
:func:`runner_outputs` is what the export's workflow passes to the reporter (``--github-output``).
"""

from __future__ import annotations

import base64
import json
import math
from collections.abc import Iterable
from decimal import Decimal
from typing import Any

from ..core.result import Result
from . import FormatContext
from ._platform import Row, rows, total
from .objectives import objective_lines
from .points import ZERO, exact, number, text

ENCODED_BUDGET = 96 * 1024  # bytes of base64 per runner: under MAX_ARG_STRLEN (128 KiB) with room for its name
TOTAL_BUDGET = 1024 * 1024  # bytes of base64 for every runner: half of the usual ARG_MAX (2 MiB)
_STATUS = {"passed": "pass", "failed": "fail", "skipped": "fail", "error": "error"}
# how a runner's result is made smaller, a step at a time: (characters of a failed test's message, of an
# errored one's, the passed tests as one entry, the problem as one entry)
_LEVELS = ((1500, 1500, False, False), (300, 300, False, False), (0, 300, False, False), (0, 120, True, False),
           (0, 120, True, True))
_NUDGES = 16  # units in the last place tried either way to make the doubles add up


def runner_name(problem_id: str) -> str:
    """The reporter's runner name for a problem: its id with ``_`` for ``-`` (``pp_schedule``)."""
    return problem_id.replace("-", "_")


def render(results: list[Result], context: FormatContext) -> str:
    """One runner's result for every problem (no size limit: it is a file)."""
    data = _runner(results, context, budget=None)
    _fold_exactly([data])
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def runner_outputs(results: list[Result], context: FormatContext) -> dict[str, str]:
    """Per problem, its runner name and the base64 value of its ``<NAME>_RESULTS`` variable."""
    budget = min(ENCODED_BUDGET, TOTAL_BUDGET // max(1, len(results)))
    runners = [_runner([result], context, budget) for result in results]
    _fold_exactly(runners)
    return {runner_name(r.problem): encode(data) for r, data in zip(results, runners)}


def encode(data: dict[str, Any]) -> str:
    """The runner result as the reporter decodes it: base64 of UTF-8 JSON."""
    compact = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return base64.b64encode(compact.encode("utf-8")).decode("ascii")


def _runner(results: list[Result], context: FormatContext, budget: int | None) -> dict[str, Any]:
    """The runner's result, at the first level of :data:`_LEVELS` that fits ``budget``."""
    by_problem = [(result, rows(result, context.problems.get(result.problem), context.feedback))
                  for result in results]
    all_rows = [row for _, problem_rows in by_problem for row in problem_rows]
    data: dict[str, Any] = {}
    for failed_cap, error_cap, merge_passed, merge_all in _LEVELS:
        caps = {"error": error_cap, "failed": failed_cap}
        tests: list[dict[str, Any]] = []
        for result, problem_rows in by_problem:
            entries = ([_problem_entry(result, problem_rows, error_cap)] if merge_all
                       else _entries(problem_rows, caps, merge_passed))
            tests += _with_objectives(entries, result)
        data = {"version": 1, "status": _status(results, all_rows, context),
                "max_score": number(total(all_rows)[1]), "tests": tests}
        if budget is None or len(encode(data)) <= budget:
            break
    return data


def _with_objectives(entries: list[dict[str, Any]], result: Result) -> list[dict[str, Any]]:
    """The problem's points by objective at the top of the message of its first entry that did not
    pass (the reporter prints messages of those only); nothing to say when every entry passed."""
    lines = objective_lines(result)
    first = next((e for e in entries if e["status"] != "pass"), None)
    if first is not None and lines:
        head = "Points by objective:\n" + "\n".join(f"  {line}" for line in lines)
        first["message"] = head + (f"\n\n{first['message']}" if first["message"] else "")
    return entries


def _status(results: list[Result], all_rows: list[Row], context: FormatContext) -> str:
    if context.submission_error or any(r.status in ("error", "timeout") for r in results):
        return "error"
    return "pass" if all_rows and all(r.passed for r in all_rows) else "fail"


def _entries(problem_rows: list[Row], caps: dict[str, int], merge_passed: bool) -> list[dict[str, Any]]:
    if not merge_passed:
        return [_test(row, caps.get(row.outcome, 0)) for row in problem_rows]
    passed = [row for row in problem_rows if row.passed]
    merged = ([{"name": f"{passed[0].problem}: {len(passed)} test(s) passed", "status": "pass",
                "score": number(_sum(r.points for r in passed)), "message": "", "line_no": 0}] if passed else [])
    return merged + [_test(row, caps.get(row.outcome, 0)) for row in problem_rows if not row.passed]


def _problem_entry(result: Result, problem_rows: list[Row], cap: int) -> dict[str, Any]:
    points, worth = total(problem_rows)
    failing = [row.name.split(": ", 1)[-1] for row in problem_rows if not row.passed]
    message = (f"{len(problem_rows) - len(failing)} of {len(problem_rows)} passed; did not pass: "
               + ", ".join(failing)) if failing else ""
    return {"name": f"{result.problem}: {text(points)} of {text(worth)} points",
            "status": "pass" if not failing else ("error" if result.status in ("error", "timeout") else "fail"),
            "score": number(points), "message": _cut(message, cap * 4), "line_no": 0}


def _test(row: Row, cap: int) -> dict[str, Any]:
    message = "\n\n".join(part for part in (row.message, f"Output:\n{row.output}" if row.output else "") if part)
    return {"name": row.name, "status": _STATUS.get(row.outcome, "fail"), "score": row.points,
            "message": _cut(message, cap), "test_code": "", "filename": row.file, "line_no": row.line,
            "duration": round(row.duration, 4)}


def _cut(message: str, cap: int) -> str:
    if not cap:
        return ""
    return message if len(message) <= cap else message[:cap].rstrip() + " … (cut short; run the judge for all of it)"


def _sum(values: Iterable[float]) -> Decimal:
    return sum((exact(v) for v in values), ZERO)


def _fold_exactly(runners: list[dict[str, Any]]) -> None:
    """Make the reporter's left-to-right sums in doubles equal the exact totals (see the module docstring)."""
    counted = [r for r in runners if r["max_score"]]
    scores = [test for r in counted for test in r["tests"]]
    _nudge_last(scores, "score", float(_sum(t["score"] for t in scores)))
    _nudge_last(counted, "max_score", float(_sum(r["max_score"] for r in counted)))


def _nudge_last(items: list[dict[str, Any]], key: str, target: float) -> None:
    """Change the last nonzero ``item[key]`` by a few ulps so that adding them all up gives ``target``."""
    nonzero = [i for i, item in enumerate(items) if item[key]]
    if not nonzero:
        return
    last = nonzero[-1]
    before = 0.0
    for item in items[:last]:
        before += item[key]
    guess = target - before
    for step in range(_NUDGES + 1):
        for candidate in {_ulps(guess, step), _ulps(guess, -step)}:
            if before + candidate == target and candidate >= 0:
                items[last][key] = candidate
                return


def _ulps(value: float, steps: int) -> float:
    direction = math.inf if steps > 0 else -math.inf
    for _ in range(abs(steps)):
        value = math.nextafter(value, direction)
    return value
