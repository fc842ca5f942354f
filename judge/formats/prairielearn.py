"""``--prairielearn``: PrairieLearn's external-grader ``results.json`` (PrairieLearn docs/externalGrading.md).

``score`` is the fraction of the points earned (0..1); ``points``/``max_points`` and one entry of
``tests`` per judge test (see :mod:`._platform`) are what ``<pl-external-grader-results>`` shows.
A submission that could not be read at all is ``gradable: false`` with the reason in
``format_errors``: PrairieLearn then awards and costs nothing. The file must stay under 1 MB
(PrairieLearn refuses a larger one, and the student sees a grading error instead of their result),
so captured output is capped per test, and where a problem of a few hundred failing tests would
still be larger, each test's message and output are cut shorter, a step at a time, and the
message says so.
"""

from __future__ import annotations

import json
from typing import Any

from ..core.result import Result
from ..i18n import _
from . import FormatContext
from ._platform import Row, outcome_word, rows, total
from .objectives import objective_lines
from .points import number


def render(results: list[Result], context: FormatContext) -> str:
    if context.submission_error:
        data: dict[str, Any] = {"gradable": False, "format_errors": [context.submission_error],
                                "message": _("Your submission could not be read: {error}").format(
                                    error=context.submission_error)}
        return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    all_rows: list[Row] = []
    for result in results:
        all_rows += rows(result, context.problems.get(result.problem), context.feedback)
    points, max_points = total(all_rows)
    single = len(results) == 1
    data = {"gradable": True, "score": round(float(points / max_points), 4) if max_points else 0.0,
            "points": number(points), "max_points": number(max_points), "message": _message(results),
            "tests": [_test(row, single) for row in all_rows]}
    text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    for message_cap, output_cap in _CAPS:
        if len(text.encode()) <= SIZE_BUDGET:
            break
        data["tests"] = [{**test, "message": _cut(test["message"], message_cap), "output": _cut(test["output"],
                                                                                             output_cap)}
                         for test in data["tests"]]
        data["message"] = _message(results) + "\n" + _("(Each test's message and output are cut short here, to fit "
                                                       "PrairieLearn's limit: run the judge for all of it.)")
        text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    return text


SIZE_BUDGET = 900_000  # bytes of results.json: PrairieLearn takes at most 1 MB
# characters of each test's message and output, a step at a time, until the file fits
_CAPS = ((1000, 500), (300, 100), (100, 0), (0, 0))


def _cut(text: str, cap: int) -> str:
    return text if len(text) <= cap else text[:cap].rstrip() + " …"


def _test(row: Row, single_problem: bool) -> dict[str, Any]:
    name = row.name.split(": ", 1)[1] if single_problem and ": " in row.name else row.name
    kind = (_("the whole problem") if row.whole_problem else
            _("public test") if row.visibility == "public" else _("secret test"))
    return {"name": name, "description": kind + ("" if row.passed else f", {outcome_word(row.outcome)}"),
            "points": row.points, "max_points": row.max_points, "message": row.message, "output": row.output}


def _message(results: list[Result]) -> str:
    lines = []
    for result in results:
        verdict = {"passed": _("all tests passed"),
                   "failed": _("{passed} of {total} tests passed").format(passed=result.passed, total=result.total),
                   "timeout": _("timed out"), "error": _("could not be judged")}[result.status]
        reason = f" ({result.message.splitlines()[0]})" if result.message else ""
        lines.append(f"{result.problem}: {verdict}{reason}")
        lines += [f"  {line}" for line in objective_lines(result)]
    return "\n".join(lines)
