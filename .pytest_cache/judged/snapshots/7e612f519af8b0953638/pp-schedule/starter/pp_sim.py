"""Pipeline schedules: the per-stage order of forwards and backwards for GPipe and 1F1B.

Write schedule() below. The statement (README) gives the exact order each stage must follow.
"""

from __future__ import annotations

KINDS = ("gpipe", "1f1b")


def schedule(kind: str, p: int, m: int) -> list[list[tuple[str, int]]]:
    """Return, for each stage s = 0..p-1, the ordered list of operations it runs.

    An operation is a tuple ("F", i) (forward of micro-batch i) or ("B", i) (its backward),
    with i in 0..m-1. The result is a list of p lists, stage 0 first.

    kind: "gpipe" -- every stage runs F0 .. F(m-1), then B0 .. B(m-1).
          "1f1b"  -- stage s runs min(p - s - 1, m) warm-up forwards, then alternates one
                     forward and one backward, then runs the remaining backwards.
    p: number of pipeline stages, an int >= 1.
    m: number of micro-batches, an int >= 1.

    Raises ValueError (with a message saying what is wrong) for any other kind, or when p or m
    is not an int or is smaller than 1.

    >>> schedule("gpipe", 2, 2)
    [[('F', 0), ('F', 1), ('B', 0), ('B', 1)], [('F', 0), ('F', 1), ('B', 0), ('B', 1)]]
    """
    raise NotImplementedError("schedule() is not written yet: return one list of ('F', i) / ('B', i) per stage")
