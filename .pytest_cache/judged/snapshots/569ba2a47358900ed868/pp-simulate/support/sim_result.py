"""The result type of simulate() (read-only support module).

The tests and your pp_sim.py both import it from here, so simulate() can return it and the tests
can hand one to render(). Keep importing it in pp_sim.py: ``from sim_result import SimResult``.
"""

from __future__ import annotations

from dataclasses import dataclass

Block = tuple[str, int, float, float]


@dataclass
class SimResult:
    """What simulate() returns.

    timeline: per stage (stage 0 first), its blocks (op, mb, start, end) in execution order.
    total: the time at which the last block ends.
    bubble: idle stage-time / (p * total), a float in [0, 1).
    peak_activations: per stage, the largest number of micro-batches whose forward has run
        on that stage and whose backward has not yet.
    """

    timeline: list[list[Block]]
    total: float
    bubble: float
    peak_activations: list[int]
