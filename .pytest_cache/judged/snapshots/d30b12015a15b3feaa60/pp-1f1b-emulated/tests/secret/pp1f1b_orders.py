"""The 1F1B order for any size, for the hidden pp-1f1b-emulated tests (not shown to learners)."""

from __future__ import annotations


def expected_order(p: int, s: int, m: int) -> list[str]:
    """1F1B on stage s: min(p - s - 1, m) warm-up forwards, then F/B pairs, then the remaining B."""
    w = min(p - s - 1, m)
    order = [f"F{i}" for i in range(w)]
    for i in range(m - w):
        order += [f"F{w + i}", f"B{i}"]
    return order + [f"B{i}" for i in range(m - w, m)]
