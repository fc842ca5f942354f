"""Results that no run produced: the time limit, Stop, a crashed or failed engine.

:func:`unfinished_result` is the one definition of these Results. Native Python code calls it
(``judge.engines.pyodide`` for the Node.js harness); the browser gets them from :func:`templates`, which the
site build renders into the site configuration and ``web/js/unfinished.mjs`` fills in, so the page
never spells out the Result format itself.
"""

from __future__ import annotations

import json
from typing import Any

from ..core.result import Result

#: reason -> message; ``{seconds}`` and ``{detail}`` are filled in.
MESSAGES: dict[str, str] = {
    "timeout": "",  # Result.timeout's own message
    "stopped": "stopped by you after {seconds} s",
    "crashed": "the Pyodide interpreter crashed during this run: {detail}",
    "engine-error": "the Python engine failed: {detail}",
    "unreadable": "the engine returned an unreadable result ({detail})",
}
REASONS = tuple(MESSAGES)

# Stands for the seconds while a template is rendered: a value no real run reports, formatted
# the same way by Python's ``{:g}`` and JavaScript's ``String()``.
_SECONDS_MARK = 86399.25


def unfinished_result(problem: str, reason: str, seconds: float = 0.0, detail: str = "") -> Result:
    """The Result of a run that ended without a Result of its own, for one of :data:`REASONS`.

    ``seconds`` is the time limit (``timeout``) or the time until Stop (``stopped``); other reasons
    have no duration. ``detail`` says what went wrong (``crashed``, ``engine-error``, ``unreadable``).
    """
    if reason not in MESSAGES:
        raise ValueError(f"unknown reason {reason!r}; expected one of {', '.join(REASONS)}")
    if reason == "timeout":
        return Result.timeout(problem, seconds)
    result = Result.error(problem, MESSAGES[reason].format(seconds=f"{seconds:g}", detail=detail))
    if reason == "stopped":
        result.duration = float(seconds)
    return result


def templates() -> dict[str, dict[str, Any]]:
    """reason -> the Result dict of :func:`unfinished_result` with ``{problem}``, ``{seconds}`` and
    ``{detail}`` slots: a string slot stands for its text, a field whose whole value is
    ``"{seconds}"`` for the number of seconds."""
    return {reason: _template(reason) for reason in REASONS}


def _template(reason: str) -> dict[str, Any]:
    data = unfinished_result("{problem}", reason, _SECONDS_MARK, "{detail}").to_dict()
    mark = f"{_SECONDS_MARK:g}"

    def walk(value: Any) -> Any:
        if isinstance(value, float) and value == _SECONDS_MARK:
            return "{seconds}"
        if isinstance(value, str):
            return value.replace(mark, "{seconds}")
        if isinstance(value, list):
            return [walk(v) for v in value]
        if isinstance(value, dict):
            return {k: walk(v) for k, v in value.items()}
        return value

    template = walk(data)
    if mark in json.dumps(template):
        raise AssertionError(f"the {reason} Result shows its seconds in a way the template cannot fill")
    return template
