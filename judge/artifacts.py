"""Artifacts that tests attach to a result with pytest's ``record_property``.

A test calls ``record_property("timeline", timeline(stages, title=...))``; the collector puts
the value into the test's ``artifacts`` list. The browser draws a timeline as SVG, the terminal
report prints :func:`render_timeline_text`.

Timeline format (JSON)::

    {"type": "timeline", "title": str, "total": float, "rows": "stage" | "rank",
     "stages": [[{"op": "F"|"B"|"W", "mb": int, "start": float, "end": float,
                  "chunk": int | None}, ...],   # one list per row, in time order
                ...]}

``rows`` names what a row is: a pipeline stage (the default), or a rank that holds several stages
(interleaved 1F1B, DualPipe); both the terminal and the browser label rows with it. A timeline
without ``rows`` (written before it existed) reads as stages.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

TIMELINE = "timeline"
OPS = ("F", "B", "W")


def block(op: str, mb: int, start: float, end: float, chunk: int | None = None) -> dict[str, Any]:
    """One busy interval of a stage: operation ``op`` on micro-batch ``mb``."""
    if op not in OPS:
        raise ValueError(f"timeline op must be one of {OPS}, got {op!r}")
    return {"op": op, "mb": int(mb), "start": float(start), "end": float(end),
            "chunk": None if chunk is None else int(chunk)}


ROW_KINDS = ("stage", "rank")


def timeline(stages: Sequence[Iterable[Mapping[str, Any] | Sequence[Any]]], title: str = "",
             rows: str = "stage") -> dict[str, Any]:
    """Build a timeline artifact.

    Each row is an iterable of blocks, either dicts with the keys of :func:`block` or tuples
    ``(op, mb, start, end)`` / ``(op, mb, start, end, chunk)``. ``rows`` says what a row is:
    ``"stage"`` or ``"rank"``.
    """
    if rows not in ROW_KINDS:
        raise ValueError(f"timeline rows must be one of {ROW_KINDS}, got {rows!r}")
    built = []
    for stage in stages:
        row = [block(**b) if isinstance(b, Mapping) else block(*b) for b in stage]
        row.sort(key=lambda b: (b["start"], b["end"]))
        built.append(row)
    total = max((b["end"] for row in built for b in row), default=0.0)
    return {"type": TIMELINE, "title": str(title), "total": total, "rows": rows, "stages": built}


def render_timeline_text(artifact: Mapping[str, Any], width: int = 72) -> str:
    """Render a timeline as text, one line per stage, one column per time unit when it fits.

    Forward blocks show as ``F<mb>``, backward as ``B<mb>``, weight-gradient as ``W<mb>``;
    idle time is ``.``. Blocks are drawn in slots wide enough for the largest label, so
    micro-batch numbers above 9 stay readable. A timeline too wide for that is listed block by
    block with its start times, and each idle gap as ``..<duration>``.
    """
    stages = artifact.get("stages", [])
    total = float(artifact.get("total", 0.0))
    lines = [artifact.get("title", "")] if artifact.get("title") else []
    if not stages or total <= 0:
        return "\n".join(lines + ["(empty timeline)"])
    unit = _time_unit(stages)
    slots = round(total / unit)
    label_width = max(len(_label(b)) for row in stages for b in row)
    name = artifact.get("rows", "stage")
    if slots * label_width > width * 4:
        return "\n".join(lines + [_compact_line(f"{name} {i}", row) for i, row in enumerate(stages)])
    for i, row in enumerate(stages):
        cells = ["." * label_width] * slots
        for b in row:
            first = round(b["start"] / unit)
            last = max(first + 1, round(b["end"] / unit))
            for k in range(first, min(last, slots)):
                cells[k] = _label(b).ljust(label_width)
        lines.append(f"{name} {i} |{' '.join(cells)}|")
    return "\n".join(lines)


def _label(b: Mapping[str, Any]) -> str:
    chunk = b.get("chunk")
    return f"{b['op']}{b['mb']}" + (f"c{chunk}" if chunk is not None else "")


def _time_unit(stages: Sequence[Sequence[Mapping[str, Any]]]) -> float:
    durations = [b["end"] - b["start"] for row in stages for b in row if b["end"] > b["start"]]
    return min(durations) if durations else 1.0


def _compact_line(name: str, row: Sequence[Mapping[str, Any]]) -> str:
    parts, clock = [], 0.0
    for b in row:
        if b["start"] > clock + 1e-9:
            parts.append(f"..{b['start'] - clock:g}")
        parts.append(f"{_label(b)}@{b['start']:g}")
        clock = max(clock, b["end"])
    return f"{name} | " + " ".join(parts)
