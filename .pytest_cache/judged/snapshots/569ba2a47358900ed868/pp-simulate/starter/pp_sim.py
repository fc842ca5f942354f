"""A dependency-driven pipeline simulator: timeline, bubble fraction, peak activations, and a picture.

SimResult (imported from the support module sim_result.py) is the result type simulate() must
return: keep importing it. Write simulate()
and render(). (To try GPipe and 1F1B here, paste your schedule() from pp-schedule into this file;
the tests do not call it: they pass their own orders.)
"""

from __future__ import annotations

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

    Returns SimResult(timeline, total, bubble, peak_activations):
      timeline[s] = [(op, mb, start, end), ...] for stage s in execution order (floats for times),
      total = the end of the last block, bubble = idle stage-time / (p * total),
      peak_activations[s] = most micro-batches whose F has run on stage s and whose B has not.

    Raises ValueError when tf or tb is not a positive number, when the schedule is malformed (no
    stages, an operation other than ("F", i) / ("B", i) with an int i >= 0, an operation twice on a
    stage, stages that do not all hold F i and B i for the same micro-batches), or when it deadlocks.

    >>> simulate([[("F", 0), ("F", 1), ("B", 0), ("B", 1)], [("F", 0), ("B", 0), ("F", 1), ("B", 1)]]).total
    9.0
    """
    raise NotImplementedError("simulate() is not written yet: time each operation of the schedule (see the README)")


# ---------------------------------------------------------------------------- rendering


def render(result: SimResult, unit: float = 1.0) -> str:
    """Draw result.timeline as text, one line per stage and one fixed-width cell per `unit` of time.

    Cell k of a stage covers [k * unit, (k + 1) * unit) and shows the block running at its midpoint
    (k + 0.5) * unit as the op letter followed by the micro-batch number, left-justified to width
    W = 1 + len(str(largest micro-batch number)); an idle cell is W dots. Cells are separated by one
    space; a line is "stage <s> |<cells>|" with s right-justified to the width of p - 1. There are n
    cells, the smallest n with n * unit >= total - 1e-9. Lines are joined with "\\n" (no final newline).
    Raises ValueError when unit is not a positive number.

    >>> print(render(simulate([[("F", 0), ("F", 1), ("B", 0), ("B", 1)], [("F", 0), ("B", 0), ("F", 1), ("B", 1)]])))
    stage 0 |F0 F1 .. .. B0 B0 .. B1 B1|
    stage 1 |.. F0 B0 B0 F1 B1 B1 .. ..|
    """
    raise NotImplementedError("render() is not written yet: one fixed-width cell per time unit (see the README)")
