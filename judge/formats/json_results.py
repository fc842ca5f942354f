"""``--json``: ``{"judge_version": ..., "results": [Result, ...]}`` (docs/result.md)."""

from __future__ import annotations

import json

from .. import __version__
from ..core.result import Result
from . import FormatContext


def render(results: list[Result], context: FormatContext) -> str:
    data = {"judge_version": __version__, "results": [r.to_dict() for r in results]}
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
