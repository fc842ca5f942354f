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

Optional ``"stuck": [{"row": int, "waiting": str}, ...]`` names the rows that could not go on (a
deadlocked schedule drawn up to where it stopped) and the operation each one waits for (``"B0"``);
``timeline(..., stuck={1: "B0"})`` writes it. Both front ends mark those rows as stuck.

Yours vs expected: a *public* test whose expected order is public anyway (the public test file
holds it) may record the expected timeline beside the learner's, under the name ``"expected"``::

    record_property("timeline", timeline(yours, title="your 1F1B, p=4 m=4"))
    record_property("expected", timeline(want, title="expected 1F1B, p=4 m=4"))

When such a test fails, the page and ``judge -v`` draw the expected timeline under the learner's
and mark the first difference on both (:func:`first_difference`; when the order of operations is
the same on every row, the first block at another time, :func:`first_timing_difference`). Neither
ever shows an expected timeline of a secret test, but record it only in public tests: the Result of
a secret test reaches other outputs too (``judge check`` fails a problem whose secret test does).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

TIMELINE = "timeline"
EXPECTED = "expected"  # the name of the expected timeline artifact (beside the learner's "timeline")
OPS = ("F", "B", "W")


def block(op: str, mb: int, start: float, end: float, chunk: int | None = None) -> dict[str, Any]:
    """One busy interval of a stage: operation ``op`` on micro-batch ``mb``."""
    if op not in OPS:
        raise ValueError(f"timeline op must be one of {OPS}, got {op!r}")
    return {"op": op, "mb": int(mb), "start": float(start), "end": float(end),
            "chunk": None if chunk is None else int(chunk)}


ROW_KINDS = ("stage", "rank")


def timeline(stages: Sequence[Iterable[Mapping[str, Any] | Sequence[Any]]], title: str = "",
             rows: str = "stage", stuck: Mapping[int, str] | None = None) -> dict[str, Any]:
    """Build a timeline artifact.

    Each row is an iterable of blocks, either dicts with the keys of :func:`block` or tuples
    ``(op, mb, start, end)`` / ``(op, mb, start, end, chunk)``. ``rows`` says what a row is:
    ``"stage"`` or ``"rank"``. ``stuck`` maps the rows that could not go on to the operation each
    waits for (``{1: "B0"}``).
    """
    if rows not in ROW_KINDS:
        raise ValueError(f"timeline rows must be one of {ROW_KINDS}, got {rows!r}")
    built = []
    for stage in stages:
        row = [block(**b) if isinstance(b, Mapping) else block(*b) for b in stage]
        row.sort(key=lambda b: (b["start"], b["end"]))
        built.append(row)
    total = max((b["end"] for row in built for b in row), default=0.0)
    artifact: dict[str, Any] = {"type": TIMELINE, "title": str(title), "total": total, "rows": rows, "stages": built}
    if stuck:
        artifact["stuck"] = [{"row": int(r), "waiting": str(w)} for r, w in sorted(stuck.items())]
    return artifact


def first_difference(yours: Mapping[str, Any], expected: Mapping[str, Any]) -> tuple[int, int] | None:
    """Where two timelines first differ: ``(row, index)`` of the earliest block, in time, at which a
    row's order of operations departs from the expected one (one of the two may have no block
    there: a row that stops early, or goes on too long); ``None`` when every row has the same order.
    """
    mine, want = yours.get("stages", []), expected.get("stages", [])
    best: tuple[float, int, int] | None = None
    for r in range(max(len(mine), len(want))):
        a = mine[r] if r < len(mine) else []
        b = want[r] if r < len(want) else []
        k = next((i for i in range(max(len(a), len(b)))
                  if i >= len(a) or i >= len(b) or _label(a[i]) != _label(b[i])), None)
        if k is None:
            continue
        when = min([float(row[k]["start"]) for row in (a, b) if k < len(row)]
                   or [float(a[-1]["end"]) if a else 0.0])
        if best is None or (when, r) < best[:2]:
            best = (when, r, k)
    return None if best is None else (best[1], best[2])


def first_timing_difference(yours: Mapping[str, Any], expected: Mapping[str, Any],
                            tolerance: float = 1e-9) -> tuple[int, int] | None:
    """Where two timelines with the same order of operations first differ in time: ``(row, index)`` of
    the earliest block, in time, whose start or end differs from the expected one by more than
    ``tolerance``; ``None`` when every block of every row is where it is expected (or a row's order
    differs: that is :func:`first_difference`'s to say)."""
    if first_difference(yours, expected) is not None:
        return None
    best: tuple[float, int, int] | None = None
    for r, (a, b) in enumerate(zip(yours.get("stages", []), expected.get("stages", []))):
        k = next((i for i, (x, y) in enumerate(zip(a, b))
                  if abs(float(x["start"]) - float(y["start"])) > tolerance
                  or abs(float(x["end"]) - float(y["end"])) > tolerance), None)
        if k is None:
            continue
        when = min(float(a[k]["start"]), float(b[k]["start"]))
        if best is None or (when, r) < best[:2]:
            best = (when, r, k)
    return None if best is None else (best[1], best[2])


def render_timeline_text(artifact: Mapping[str, Any], width: int = 72,
                         mark: tuple[int, int] | None = None) -> str:
    """Render a timeline as text, one line per stage, one column per time unit when it fits.

    Forward blocks show as ``F<mb>``, backward as ``B<mb>``, weight-gradient as ``W<mb>``;
    idle time is ``.``. Blocks are drawn in slots wide enough for the largest label, so
    micro-batch numbers above 9 stay readable. A timeline too wide for that is listed block by
    block with its start times, and each idle gap as ``..<duration>``. ``mark`` = ``(row, index)``
    points at one block (``^`` under it; ``>F2<`` when listed): the first difference from the
    expected timeline. A stuck row ends with what it waits for.
    """
    stages = artifact.get("stages", [])
    total = float(artifact.get("total", 0.0))
    lines = [artifact.get("title", "")] if artifact.get("title") else []
    stuck = {int(s["row"]): str(s["waiting"]) for s in artifact.get("stuck", []) or []}
    name = artifact.get("rows", "stage")
    if stages and total <= 0 and stuck:  # stuck before anything ran
        return "\n".join(lines + [f"{name} {i} ||" + _stuck_note(stuck, i) for i in range(len(stages))])
    if not stages or total <= 0:
        return "\n".join(lines + ["(empty timeline)"])
    unit = _time_unit(stages)
    slots = round(total / unit)
    label_width = max(len(_label(b)) for row in stages for b in row)
    if slots * label_width > width * 4:
        return "\n".join(lines + [_compact_line(f"{name} {i}", row, mark[1] if mark and mark[0] == i else None)
                                  + _stuck_note(stuck, i) for i, row in enumerate(stages)])
    for i, row in enumerate(stages):
        cells = ["." * label_width] * slots
        for b in row:
            first = round(b["start"] / unit)
            last = max(first + 1, round(b["end"] / unit))
            for k in range(first, min(last, slots)):
                cells[k] = _label(b).ljust(label_width)
        prefix = f"{name} {i} |"
        lines.append(f"{prefix}{' '.join(cells)}|" + _stuck_note(stuck, i))
        if mark and mark[0] == i:
            index = mark[1]
            slot = (round(row[index]["start"] / unit) if index < len(row)
                    else (round(row[-1]["end"] / unit) if row else 0))
            lines.append(" " * (len(prefix) + slot * (label_width + 1)) + "^" * label_width)
    return "\n".join(lines)


def _stuck_note(stuck: Mapping[int, str], row: int) -> str:
    return f"  stuck: waits for {stuck[row]}" if row in stuck else ""


def _label(b: Mapping[str, Any]) -> str:
    chunk = b.get("chunk")
    return f"{b['op']}{b['mb']}" + (f"c{chunk}" if chunk is not None else "")


def _time_unit(stages: Sequence[Sequence[Mapping[str, Any]]]) -> float:
    durations = [b["end"] - b["start"] for row in stages for b in row if b["end"] > b["start"]]
    return min(durations) if durations else 1.0


def _compact_line(name: str, row: Sequence[Mapping[str, Any]], mark: int | None = None) -> str:
    parts, clock = [], 0.0
    for index, b in enumerate(row):
        if b["start"] > clock + 1e-9:
            parts.append(f"..{b['start'] - clock:g}")
        label = f"{_label(b)}@{b['start']:g}"
        parts.append(f">{label}<" if index == mark else label)
        clock = max(clock, b["end"])
    if mark is not None and mark >= len(row):
        parts.append("><")
    return f"{name} | " + " ".join(parts)
