"""``--github-classroom``: the result of a GitHub Classroom autograding runner.

The shape the classroom-resources runners (autograding-command-grader, autograding-python-grader)
write and classroom-resources/autograding-grading-reporter reads, base64-encoded, from the
``<RUNNER>_RESULTS`` environment variable: ``{version: 1, status: pass|fail|error, max_score,
tests: [{name, status, score, message, test_code, filename, line_no, duration}]}``. The reporter
adds up the tests' ``score`` against the top-level ``max_score``. ``python -m judge.commands.export.run
github-classroom ... --github-output`` also writes ``result=<base64>`` to ``$GITHUB_OUTPUT``.
"""

from __future__ import annotations

import json
from typing import Any

from ..core.result import Result
from . import FormatContext
from ._platform import Row, rows, total

_STATUS = {"passed": "pass", "failed": "fail", "skipped": "fail", "error": "error"}


def render(results: list[Result], context: FormatContext) -> str:
    all_rows: list[Row] = []
    for result in results:
        all_rows += rows(result, context.problems.get(result.problem), context.feedback)
    _, max_points = total(all_rows)
    data = {"version": 1, "status": _status(results, all_rows, context), "max_score": max_points,
            "tests": [_test(row) for row in all_rows]}
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def _status(results: list[Result], all_rows: list[Row], context: FormatContext) -> str:
    if context.submission_error or any(r.status in ("error", "timeout") for r in results):
        return "error"
    return "pass" if all_rows and all(r.passed for r in all_rows) else "fail"


def _test(row: Row) -> dict[str, Any]:
    message = "\n\n".join(part for part in (row.message, f"Output:\n{row.output}" if row.output else "") if part)
    return {"name": row.name, "status": _STATUS.get(row.outcome, "fail"), "score": row.points,
            "message": message, "test_code": "", "filename": row.file, "line_no": row.line,
            "duration": round(row.duration, 4)}
