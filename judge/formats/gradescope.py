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
from ..core.titles import problem_title
from ..i18n import N_, _, current_language, ngettext
from . import FormatContext, points
from ._platform import Row, outcome_word, rows, total
from .markdown import code_span, fence, plain_text
from .objectives import objective_lines

_WHEN = {"hidden": N_("not shown to students"), "after_due_date": N_("shown after the due date"),
         "after_published": N_("shown when the grades are published")}


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
        title = problem_title(problem, current_language()) if problem else ""
        summary.append(_summary(result, problem_rows, secret_visibility, title))
    score = total(all_rows)[0]
    output = "\n".join(summary)
    if context.submission_error:
        error = plain_text(context.submission_error)
        output = _("**Your submission could not be read:** {error}").format(error=error) \
            + f"\n\n{output}"
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
    where = _(" in `{file}`, line {line}").format(file=row.file, line=row.line) if row.line else ""
    parts = [f"**{outcome_word(row.outcome)}**" + where]
    if row.message:
        parts.append(fence(row.message))
    if row.output:
        parts += [_("Output:"), fence(row.output)]
    return "\n\n".join(parts)


def _summary(result: Result, problem_rows: list[Row], secret_visibility: str, title: str) -> str:
    public = [r for r in problem_rows if r.visibility == "public"]
    secret = [r for r in problem_rows if r.visibility == "secret"]
    head = f"- **{result.problem}**" + (f" ({title})" if title else "")
    if not result.tests:
        first = problem_rows[0].message.splitlines()[0] if problem_rows[0].message.strip() else ""
        return f"{head}: {code_span(first) if first else result.status}"  # the first line may be the learner's
    text = head + _(": public tests {passed} of {total} passed").format(passed=sum(r.passed for r in public),
                                                                          total=len(public))
    if secret and secret_visibility == "visible":
        text += _(", secret tests {passed} of {total} passed").format(passed=sum(r.passed for r in secret),
                                                                      total=len(secret))
    elif secret:
        text += ngettext("; {n} secret test, {when}", "; {n} secret tests, {when}", len(secret)).format(
            n=len(secret), when=_(_WHEN[secret_visibility]))
    # points by objective would tell how hidden secret tests went: only when those are shown
    shown = secret_visibility == "visible" or not secret
    return "\n".join([text, *(f"  - {line}" for line in objective_lines(result, quote=code_span) if shown)])
