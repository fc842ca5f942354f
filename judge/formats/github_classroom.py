"""``--github-classroom``: GitHub Classroom autograding runner results, within the platform's limits.

What classroom-resources/autograding-grading-reporter (the ``@v1`` release the workflow uses; its
src/ files) does with them:

- ``main.js``: for each name of its ``runners`` input (split at commas), reads the environment
  variable ``<NAME in capitals>_RESULTS``, base64-decodes it and parses the JSON ``{version: 1,
  status: pass|fail|error, max_score, tests: [{name, status, score, message, test_code, filename,
  line_no, duration}]}``; the step fails when a runner's status is ``fail`` or ``error``;
- ``notify-classroom.js``: over the runners whose ``max_score`` is not 0, adds up ``max_score`` and
  every test's ``score``, left to right in JavaScript doubles, and writes ``Points X/Y`` as a
  notice: that is what Classroom records;
- ``console-results.js`` and ``aggregate-results.js`` print the log a student reads: per runner
  ``Total points for NAME: S/max_score`` and a table whose ``Total`` row adds those S up, where S is
  ``(tests with status pass / tests) x max_score`` (``helpers/test-helpers.js``): it counts entries,
  not points. With tests of unequal weights, or a problem that earned part of its points, one runner
  per problem would log another total than ``Points`` (9.17 in the log for 13.33 points).

So each problem is two runners (:func:`runner_names`): ``<id>_earned``, holding the tests that
earned points (status ``pass``, ``max_score`` what they earned), and ``<id>_lost``, holding the
others (score 0, ``max_score`` what they were worth). In both, S is the runner's points exactly
(``1 x earned``, ``0 x lost``), so the log's ``Total`` is ``Points``, and ``Points X/Y`` is what
the problems earned of what they are worth. A runner with nothing to hold has one entry worth 0
(``no points earned`` or ``no points lost``), since an empty one would log ``NaN``.

- each runner's encoded result is at most :data:`ENCODED_BUDGET` bytes and all of them together
  at most :data:`TOTAL_BUDGET`: Linux refuses an environment string over 128 KiB (MAX_ARG_STRLEN,
  ``Argument list too long``) and GitHub limits what a job's outputs may hold. A result that would
  be larger is made smaller a step at a time (shorter messages, then one entry per runner);
- the scores are the rows of :mod:`._platform` (two decimals, adding up exactly), and where adding
  them up in doubles would not give the judge's total to the last bit, the last nonzero score (and
  ``max_score``) is moved by the few units in the last place it takes (:func:`_fold_exactly`), so
  ``Points`` reads ``95.25``, never ``95.24999999999999``.

:func:`render` (``judge PATH --github-classroom FILE``) is one runner holding every problem;
:func:`runner_outputs` is what the export's workflow passes to the reporter (``--github-output``).
"""

from __future__ import annotations

import base64
import json
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from ..core.result import Result
from ..i18n import _, ngettext
from . import FormatContext
from ._platform import Row, rows, total
from .objectives import objective_lines
from .points import ZERO, exact, number, text

ENCODED_BUDGET = 96 * 1024  # bytes of base64 per runner: under MAX_ARG_STRLEN (128 KiB) with room for its name
# bytes of base64 for every runner: GitHub counts a job's outputs (at most 1 MB) in UTF-16, 2 bytes a character
TOTAL_BUDGET = 512 * 1024
_STATUS = {"passed": "pass", "failed": "fail", "skipped": "fail", "error": "error"}
# how a runner's result is made smaller, a step at a time: characters of a failed test's message, of an
# errored one's; past the last, the runner is one entry
_CAPS = ((1500, 1500), (300, 300), (0, 300), (0, 120))
_NUDGES = 16  # units in the last place tried either way to make the doubles add up


@dataclass
class _Problem:
    """One problem's rows, split into those that earned points and the others."""

    result: Result
    earned: list[Row]
    lost: list[Row]
    status: str  # pass | fail | error: the problem's, as the reporter reads a runner's


def runner_names(problem_id: str) -> tuple[str, str]:
    """The reporter's two runners for a problem: ``pp_schedule_earned`` and ``pp_schedule_lost``."""
    base = problem_id.replace("-", "_")
    return f"{base}_earned", f"{base}_lost"


def render(results: list[Result], context: FormatContext) -> str:
    """One runner's result for every problem (no size limit: it is a file)."""
    by_problem = [(result, rows(result, context.problems.get(result.problem), context.feedback))
                  for result in results]
    all_rows = [row for _, problem_rows in by_problem for row in problem_rows]
    tests = [entry for result, problem_rows in by_problem
             for entry in _with_objectives([_test(row, 1500) for row in problem_rows], result)]
    data = {"version": 1, "status": _status(results, all_rows, context),
            "max_score": number(total(all_rows)[1]), "tests": tests}
    _fold_exactly([data], log=False)
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def runner_outputs(results: list[Result], context: FormatContext) -> dict[str, str]:
    """Per problem, its two runner names and the base64 values of their ``<NAME>_RESULTS`` variables."""
    problems = [_split(result, context) for result in results]
    earned = [_earned_fitting(p) for p in problems]
    left = TOTAL_BUDGET - sum(len(encode(runner)) for runner in earned)
    budget = min(ENCODED_BUDGET, max(0, left) // max(1, len(problems)))
    lost = [_lost_runner(p, budget) for p in problems]
    runners = [runner for pair in zip(earned, lost) for runner in pair]
    _fold_exactly(runners, log=True)
    names = [name for p in problems for name in runner_names(p.result.problem)]
    return {name: encode(data) for name, data in zip(names, runners)}


def encode(data: dict[str, Any]) -> str:
    """The runner result as the reporter decodes it: base64 of UTF-8 JSON."""
    compact = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return base64.b64encode(compact.encode("utf-8")).decode("ascii")


def _split(result: Result, context: FormatContext) -> _Problem:
    problem_rows = rows(result, context.problems.get(result.problem), context.feedback)
    earned: list[Row] = []
    lost: list[Row] = []
    for row in problem_rows:
        (earned if row.points > 0 or (row.passed and not row.max_points) else lost).append(row)
    return _Problem(result, earned, lost, _status([result], problem_rows, context))


def _earned_fitting(problem: _Problem) -> dict[str, Any]:
    runner = _earned_runner(problem, merged=False)
    return runner if len(encode(runner)) <= ENCODED_BUDGET else _earned_runner(problem, merged=True)


def _earned_runner(problem: _Problem, merged: bool) -> dict[str, Any]:
    """The tests that earned points, each ``pass`` (``merged``: as one entry)."""
    pid, earned = problem.result.problem, problem.earned
    points = total(earned)[0]
    if not earned:
        tests = [_placeholder(f"{pid}: " + _("no points earned"), "fail")]  # why is in its lost runner
    elif merged:
        tests = [_placeholder(f"{pid}: " + ngettext("{n} test passed, {points} points", "{n} tests passed, {points} "
                                                    "points", len(earned)).format(n=len(earned), points=text(points)),
                              "pass", points)]
    else:
        tests = [{**_test(row, 0), "status": "pass"} for row in earned]  # what earned points, passed
    return {"version": 1, "status": "pass" if earned else tests[0]["status"], "max_score": number(points),
            "tests": tests}


def _lost_runner(problem: _Problem, budget: int) -> dict[str, Any]:
    """The tests that earned nothing, score 0, at the first level of :data:`_CAPS` that fits ``budget``."""
    pid, lost = problem.result.problem, problem.lost
    worth = total(lost)[1]
    data: dict[str, Any] = {"version": 1, "status": problem.status if lost else "pass", "max_score": number(worth)}
    if not lost:
        return {**data, "tests": [_placeholder(f"{pid}: " + _("no points lost"), "pass")]}
    for failed_cap, error_cap in _CAPS:
        caps = {"error": error_cap, "failed": failed_cap}
        data["tests"] = _with_objectives([_lost_test(row, caps.get(row.outcome, 0)) for row in lost], problem.result)
        if len(encode(data)) <= budget:
            return data
    data["tests"] = _with_objectives([_lost_entry(problem, _CAPS[-1][1])], problem.result)
    return data


def _lost_test(row: Row, cap: int) -> dict[str, Any]:
    entry = _test(row, cap)
    if row.passed:  # it passed, yet its objective earned nothing until the ones it requires do
        entry["status"] = "fail"
        entry["message"] = _("passed, but earned none of its points (its objective needs others first)")
    return entry


def _lost_entry(problem: _Problem, cap: int) -> dict[str, Any]:
    lost, every = problem.lost, len(problem.earned) + len(problem.lost)
    names = ", ".join(row.name.split(": ", 1)[-1] for row in lost)
    message = _("{earned} of {every} earned their points; did not: {names}").format(
        earned=every - len(lost), every=every, names=names)
    name = ngettext("{n} test lost {points} points", "{n} tests lost {points} points", len(lost)).format(
        n=len(lost), points=text(total(lost)[1]))
    return {**_placeholder(f"{problem.result.problem}: {name}", "error" if problem.status == "error" else "fail"),
            "message": _cut(message, cap * 4)}


def _placeholder(name: str, status: str, points: Decimal = ZERO) -> dict[str, Any]:
    return {"name": name, "status": status, "score": number(points), "message": "", "line_no": 0}


def _with_objectives(entries: list[dict[str, Any]], result: Result) -> list[dict[str, Any]]:
    """The problem's points by objective at the top of the message of its first entry that did not
    pass (the reporter prints messages of those only); nothing to say when every entry passed."""
    lines = objective_lines(result)
    first = next((e for e in entries if e["status"] != "pass"), None)
    if first is not None and lines:
        head = _("Points by objective:") + "\n" + "\n".join(f"  {line}" for line in lines)
        first["message"] = head + (f"\n\n{first['message']}" if first["message"] else "")
    return entries


def _status(results: list[Result], all_rows: list[Row], context: FormatContext) -> str:
    if context.submission_error or any(r.status in ("error", "timeout") for r in results):
        return "error"
    return "pass" if all_rows and all(r.passed for r in all_rows) else "fail"


def _test(row: Row, cap: int) -> dict[str, Any]:
    output = _("Output:") + f"\n{row.output}" if row.output else ""
    message = "\n\n".join(part for part in (row.message, output) if part)
    return {"name": inert(row.name), "status": _STATUS.get(row.outcome, "fail"), "score": row.points,
            "message": _cut(message, cap), "test_code": "", "filename": inert(row.file), "line_no": row.line,
            "duration": round(row.duration, 4)}


def _cut(message: str, cap: int) -> str:
    if not cap:
        return ""
    cut = message if len(message) <= cap else message[:cap].rstrip() + _(" … (cut short; run the judge for all of it)")
    return inert(cut)


# a line the Actions runner reads as a workflow command: ``::name ...::`` after blanks (a line ends at
# \n or \r), and the older ``##[name]`` anywhere in a line
_COMMAND_LINE = re.compile(r"(^|[\n\r])([^\S\n\r]*)::")


def inert(text: str) -> str:
    """``text`` with nothing the Actions runner would run when the reporter prints it to the job's log.

    The reporter prints an errored entry's message as it is, so each of its lines is a line of the log,
    and the runner runs every line that starts with ``::`` (``::notice title=Autograding complete::Points
    3/3``, ``::stop-commands::`` so that the reporter's own notice is not one): such a line is quoted
    with ``| ``, and ``##[`` is broken by an invisible space."""
    return _COMMAND_LINE.sub(r"\1\2| ::", text).replace("##[", "#\u200b#[")


def _sum(values: Iterable[float]) -> Decimal:
    return sum((exact(v) for v in values), ZERO)


def _fold_exactly(runners: list[dict[str, Any]], log: bool) -> None:
    """Make the reporter's left-to-right sums in doubles equal the exact totals (see the module docstring):
    the tests' scores and the ``max_score`` of the counted runners, and (``log``) the log's ``Total``,
    which adds up each runner's share of passed entries times its ``max_score``."""
    counted = [r for r in runners if r["max_score"]]
    scores = [test for r in counted for test in r["tests"]]
    points = float(_sum(t["score"] for t in scores))
    _nudge(scores, "score", points, _last(scores, lambda t: bool(t["score"])))
    if log:  # an all-pass runner logs its max_score; every other runner here logs 0
        _nudge(runners, "max_score", points, _last(runners, lambda r: bool(r["max_score"]) and _all_pass(r)),
               counts=_all_pass)
    _nudge(counted, "max_score", float(_sum(r["max_score"] for r in counted)),
           _last(counted, lambda r: not (log and _all_pass(r))))


def _all_pass(runner: dict[str, Any]) -> bool:
    return all(test["status"] == "pass" for test in runner["tests"])


def _last(items: list[dict[str, Any]], eligible: Any) -> int | None:
    return next((i for i in range(len(items) - 1, -1, -1) if eligible(items[i])), None)


def _nudge(items: list[dict[str, Any]], key: str, target: float, index: int | None, counts: Any = None) -> None:
    """Move ``items[index][key]`` by a few ulps so that adding up ``item[key]`` left to right, over the
    items that ``counts`` (all by default), gives ``target``; unchanged when no such value is near."""
    if index is None:
        return
    start = items[index][key]
    guess = target - _left_to_right(items[:index], key, counts)  # right when nothing after it counts
    for base in dict.fromkeys((guess, start)):
        for step in range(_NUDGES + 1):
            for candidate in dict.fromkeys((_ulps(base, step), _ulps(base, -step))):
                items[index][key] = candidate
                if candidate >= 0 and _left_to_right(items, key, counts) == target:
                    return
    items[index][key] = start


def _left_to_right(items: list[dict[str, Any]], key: str, counts: Any) -> float:
    added = 0.0
    for item in items:
        if counts is None or counts(item):
            added += item[key]
    return added


def _ulps(value: float, steps: int) -> float:
    direction = math.inf if steps > 0 else -math.inf
    for _step in range(abs(steps)):
        value = math.nextafter(value, direction)
    return value
