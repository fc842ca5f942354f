"""Secret tests for pp-schedule: many sizes against an oracle, large m, and more invalid inputs."""

from __future__ import annotations

import pp_sim
import pytest
from schedule_helpers import as_ops, attach, check_schedule, expect_value_error, shown

from judge.lang import say


def oracle(kind: str, p: int, m: int) -> list[list[tuple[str, int]]]:
    """Expected orders. 1F1B is written as an in-flight limit: stage s runs the next forward while
    fewer than min(p - s, m) micro-batches wait for their backward, else the next backward."""
    if kind == "gpipe":
        return [[("F", i) for i in range(m)] + [("B", i) for i in range(m)] for _ in range(p)]
    stages = []
    for s in range(p):
        limit, f, b, row = p - s, 0, 0, []
        while b < m:
            if f < m and f - b < limit:
                row.append(("F", f))
                f += 1
            else:
                row.append(("B", b))
                b += 1
        stages.append(row)
    return stages


CASES = [(1, 1), (1, 5), (2, 1), (2, 2), (2, 7), (3, 2), (3, 3), (3, 10), (4, 1), (4, 3), (4, 5),
         (4, 16), (5, 32), (6, 4), (7, 3), (8, 8), (8, 9), (8, 64)]


@pytest.mark.title(zh="与预期顺序一致")
@pytest.mark.parametrize("kind", ["gpipe", "1f1b"])
@pytest.mark.parametrize("p, m", CASES)
def test_matches_expected_order(record_property, kind, p, m):
    got = pp_sim.schedule(kind, p, m)
    attach(record_property, got, f"{kind}, p={p}, m={m}")
    check_schedule(got, oracle(kind, p, m), kind, p, m)


# The whole order, for every size: half of each order's objective (docs/grading.md, what mistakes cost),
# so an order right only for the common sizes (a 1F1B warm-up never capped at m) loses much of it.
@pytest.mark.title(zh="最多 8 个 stage 的每种规模")
@pytest.mark.points(24)
@pytest.mark.parametrize("kind", ["gpipe", "1f1b"])
def test_every_size_up_to_eight_stages(record_property, kind):
    for p in range(1, 9):
        for m in range(1, 21):
            got = pp_sim.schedule(kind, p, m)
            want = oracle(kind, p, m)
            if not isinstance(got, list) or [as_ops(stage) for stage in got] != want:
                attach(record_property, got, f"{kind}, p={p}, m={m}")
            check_schedule(got, want, kind, p, m)


@pytest.mark.title(zh="更多未知的调度类型")
@pytest.mark.parametrize("kind", ["1F1B", "gpipe ", 3, ("gpipe",)], ids=lambda kind: shown(kind=kind))
def test_more_unknown_kinds(kind):
    expect_value_error(kind, 2, 2, say('kind must be exactly "gpipe" or "1f1b"', zh='kind 必须恰好是 "gpipe" 或 "1f1b"'))


MORE_INVALID_SIZES = [(0, 0), (-5, -5), (1.0, 1), (2, "8"), ([2], 2), (True, 2), (2, True), (False, 2),
                      (2, False), (3, 1.0), ("3", 1)]


@pytest.mark.title(zh="更多不合法的规模")
@pytest.mark.parametrize("p, m", MORE_INVALID_SIZES, ids=[shown(p=p, m=m) for p, m in MORE_INVALID_SIZES])
def test_more_invalid_sizes(p, m):
    # the same value as the other size, with a valid size beside it: p and m are checked alike
    mirror = (m, p) if p != m else None
    bad = "m" if isinstance(p, int) and not isinstance(p, bool) and p >= 1 else "p"
    good = "p" if bad == "m" else "m"
    also = None if mirror is None else ("1f1b", *mirror, say(f"check {bad} as you check {good}",
                                                             zh=f"像检查 {good} 那样检查 {bad}"))
    expect_value_error("1f1b", p, m, say("p and m must be ints >= 1", zh="p 和 m 必须是 >= 1 的 int"), also=also)
