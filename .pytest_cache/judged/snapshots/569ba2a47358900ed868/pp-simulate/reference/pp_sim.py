"""A dependency-driven pipeline simulator: timeline, bubble fraction, peak activations, and a picture."""

from __future__ import annotations

import math

from sim_result import SimResult

OPS = ("F", "B")

Block = tuple[str, int, float, float]


# ---------------------------------------------------------------------------- simulation


def simulate(sched: list[list[tuple[str, int]]], tf: float = 1.0, tb: float = 2.0) -> SimResult:
    """Run `sched` (one list of ("F", i) / ("B", i) per stage) and time every operation.

    A forward takes tf, a backward tb. F i on stage s > 0 starts after F i on stage s - 1 ends;
    B i on stage s < p - 1 starts after B i on stage s + 1 ends; B i on the last stage starts after
    that stage's F i ends. A stage runs one operation at a time, in its list's order, each as early
    as these rules allow.

    Raises ValueError when tf or tb is not a positive number, when the schedule is malformed (no
    stages, an operation other than ("F", i) / ("B", i) with an int i >= 0, an operation twice on a
    stage, stages that do not all hold F i and B i for the same micro-batches), or when it deadlocks.
    """
    durations = {"F": _positive("tf", tf), "B": _positive("tb", tb)}
    ops = _validated(sched)
    p = len(ops)
    end: dict[tuple[int, str, int], float] = {}
    timeline: list[list[Block]] = [[] for _ in range(p)]
    nxt = [0] * p
    free = [0.0] * p
    progress = True
    while progress:
        progress = False
        for s in range(p):
            while nxt[s] < len(ops[s]):
                op, mb = ops[s][nxt[s]]
                need = _input_of(s, op, mb, p)
                if need is not None and need not in end:
                    break
                start = free[s] if need is None else max(free[s], end[need])
                finish = start + durations[op]
                timeline[s].append((op, mb, start, finish))
                end[(s, op, mb)] = free[s] = finish
                nxt[s] += 1
                progress = True
    stuck = [s for s in range(p) if nxt[s] < len(ops[s])]
    if stuck:
        waits = "; ".join(_describe_wait(s, *ops[s][nxt[s]], p) for s in stuck)
        raise ValueError(f"the schedule deadlocks: {waits}")
    total = max(free)
    busy = sum(b[3] - b[2] for row in timeline for b in row)
    bubble = (p * total - busy) / (p * total)
    return SimResult(timeline, total, bubble, [_peak_live(row) for row in ops])


def _positive(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be a positive number, got {value!r}")
    return float(value)


def _validated(sched: object) -> list[list[tuple[str, int]]]:
    """The schedule as lists of (op, mb) tuples, or ValueError saying what is malformed."""
    if not isinstance(sched, (list, tuple)):
        raise ValueError("the schedule must be a list with one list of operations per stage")
    stages = []
    for s, row in enumerate(sched):
        ops = []
        for item in row:
            if (not isinstance(item, (list, tuple)) or len(item) != 2 or item[0] not in OPS
                    or isinstance(item[1], bool) or not isinstance(item[1], int) or item[1] < 0):
                raise ValueError(f"stage {s}: an operation must be ('F', i) or ('B', i) with an int i >= 0, "
                                 f"got {item!r}")
            ops.append((item[0], int(item[1])))
        if len(set(ops)) != len(ops):
            listed = " ".join(f"{op}{mb}" for op, mb in ops)
            raise ValueError(f"stage {s} lists the same operation more than once: {listed}")
        stages.append(ops)
    for s, ops in enumerate(stages):
        if {mb for op, mb in ops if op == "F"} != {mb for op, mb in ops if op == "B"}:
            raise ValueError(f"stage {s} must run both F i and B i for every micro-batch i it runs")
    if len({frozenset(ops) for ops in stages}) > 1:
        raise ValueError("the stages must all run F i and B i for the same micro-batches")
    if not any(stages):  # no stages, or stages without operations
        raise ValueError("the schedule has no operations")
    return stages


def _input_of(s: int, op: str, mb: int, p: int) -> tuple[int, str, int] | None:
    """The operation whose end (s, op, mb) waits for, or None for a forward on stage 0."""
    if op == "F":
        return (s - 1, "F", mb) if s > 0 else None
    return (s + 1, "B", mb) if s < p - 1 else (s, "F", mb)


def _describe_wait(s: int, op: str, mb: int, p: int) -> str:
    ws, wop, wmb = _input_of(s, op, mb, p)
    return f"stage {s} is stuck at {op}{mb}, which needs {wop}{wmb} on stage {ws}"


def _peak_live(ops: list[tuple[str, int]]) -> int:
    live = peak = 0
    for op, _ in ops:
        live += 1 if op == "F" else -1
        peak = max(peak, live)
    return peak


# ---------------------------------------------------------------------------- rendering


def render(result: SimResult, unit: float = 1.0) -> str:
    """Draw result.timeline as text, one line per stage and one fixed-width cell per `unit` of time.

    Cell k of a stage covers [k * unit, (k + 1) * unit) and shows the block running at its midpoint
    (k + 0.5) * unit as the op letter followed by the micro-batch number, left-justified to width
    W = 1 + len(str(largest micro-batch number)); an idle cell is W dots. Cells are separated by one
    space; a line is "stage <s> |<cells>|" with s right-justified to the width of p - 1. There are n
    cells, the smallest n with n * unit >= total - 1e-9. Lines are joined with "\\n" (no final newline).
    Raises ValueError when unit is not a positive number.
    """
    unit = _positive("unit", unit)
    rows = result.timeline
    width = 1 + len(str(max(mb for row in rows for _, mb, _, _ in row)))
    cells = math.ceil(result.total / unit - 1e-9)
    stage_width = len(str(len(rows) - 1))
    lines = []
    for s, row in enumerate(rows):
        text = []
        for k in range(cells):
            mid = (k + 0.5) * unit
            label = next((f"{op}{mb}" for op, mb, start, end in row if start <= mid < end), "")
            text.append(label.ljust(width) if label else "." * width)
        lines.append(f"stage {s:>{stage_width}} |{' '.join(text)}|")
    return "\n".join(lines)
