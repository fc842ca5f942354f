"""``--prairielearn``: PrairieLearn's external-grader ``results.json`` (PrairieLearn docs/externalGrading.md).

``score`` is the fraction of the points earned (0..1); ``points``/``max_points`` and one entry of
``tests`` per judge test (see :mod:`._platform`) are what ``<pl-external-grader-results>`` shows.
A submission that could not be read at all is ``gradable: false`` with the reason in
``format_errors``: PrairieLearn then awards and costs nothing. The file must stay under 1 MB,
so captured output is capped per test.
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
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


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
