"""``--gradescope``: Gradescope's ``results.json`` (gradescope/autograder_samples, docs/specs.md).

One Gradescope test per judge test (see :mod:`._platform` for crashes, timeouts and tests that did
not run), named ``<problem>: <test name>``, with ``score``/``max_score`` from the Result's points
and ``status`` passed/failed. Public tests are ``visible``; secret tests take the problem's
``gradescope_secret_visibility`` (problem.toml; default ``after_due_date``). The top-level
``score`` is the sum of the tests' scores, exactly (:mod:`.points`). The top-level ``output``
(always visible) names only public outcomes and problem-level messages, so it gives nothing of a hidden test away.
"""

from __future__ import annotations

import json
from typing import Any

from ..core.result import Result
from . import FormatContext, points
from ._platform import Row, fence, rows, total
from .objectives import objective_lines

_WHEN = {"hidden": "not shown to students", "after_due_date": "shown after the due date",
         "after_published": "shown when the grades are published"}


def render(results: list[Result], context: FormatContext) -> str:
    tests: list[dict[str, Any]] = []
    summary: list[str] = []
    all_rows: list[Row] = []
    for number, result in enumerate(results, start=1):
        problem = context.problems.get(result.problem)
        secret_visibility = problem.gradescope_secret_visibility if problem else "after_due_date"
        problem_rows = rows(result, problem, context.feedback)
        all_rows += problem_rows
        tests += [_test(row, f"{number}.{index}", secret_visibility)
                  for index, row in enumerate(problem_rows, start=1)]
        summary.append(_summary(result, problem_rows, secret_visibility, problem.title if problem else ""))
    score, _ = total(all_rows)
    output = "\n".join(summary)
    if context.submission_error:
        output = f"**Your submission could not be read:** {context.submission_error}\n\n{output}"
    data = {"score": points.number(score), "execution_time": round(context.execution_time, 2), "output": output,
            "output_format": "md", "test_output_format": "md", "test_name_format": "text",
            "stdout_visibility": "hidden", "tests": tests}
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def _test(row: Row, number: str, secret_visibility: str) -> dict[str, Any]:
    return {"name": row.name, "name_format": "text", "number": number, "score": row.points,
            "max_score": row.max_points, "status": "passed" if row.passed else "failed",
            "output": _markdown(row), "output_format": "md",
            "visibility": secret_visibility if row.visibility == "secret" else "visible",
            "tags": [row.problem, row.visibility]}


def _markdown(row: Row) -> str:
    parts = [f"**{row.outcome}**" + (f" in `{row.file}`, line {row.line}" if row.line else "")]
    if row.message:
        parts.append(fence(row.message))
    if row.output:
        parts += ["Output:", fence(row.output)]
    return "\n\n".join(parts)


def _summary(result: Result, problem_rows: list[Row], secret_visibility: str, title: str) -> str:
    public = [r for r in problem_rows if r.visibility == "public"]
    secret = [r for r in problem_rows if r.visibility == "secret"]
    head = f"- **{result.problem}**" + (f" ({title})" if title else "")
    if not result.tests:
        return f"{head}: {problem_rows[0].message.splitlines()[0] if problem_rows[0].message else result.status}"
    text = f"{head}: public tests {sum(r.passed for r in public)} of {len(public)} passed"
    if secret and secret_visibility == "visible":
        text += f", secret tests {sum(r.passed for r in secret)} of {len(secret)} passed"
    elif secret:
        text += f"; {len(secret)} secret test(s), {_WHEN[secret_visibility]}"
    # points by objective would tell how hidden secret tests went: only when those are shown
    shown = secret_visibility == "visible" or not secret
    return "\n".join([text, *(f"  - {line}" for line in objective_lines(result) if shown)])
