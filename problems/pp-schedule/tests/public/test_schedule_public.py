"""Public tests for pp-schedule: GPipe and 1F1B per-stage orders, edge cases, and validation."""

from __future__ import annotations

import pp_sim
import pytest
from schedule_helpers import as_ops, attach, check_every_operation_once, check_schedule, expect_value_error, fmt, shown

from judge.lang import say


def ops(text: str) -> list[tuple[str, int]]:
    """'F0 F1 B0' -> [('F', 0), ('F', 1), ('B', 0)]."""
    return [(tok[0], int(tok[1:])) for tok in text.split()]


@pytest.mark.title(zh="GPipe：先全部前向，再全部反向")
def test_gpipe_all_forwards_then_all_backwards(record_property):
    got = pp_sim.schedule("gpipe", 3, 4)
    want = ops("F0 F1 F2 F3 B0 B1 B2 B3")
    attach(record_property, got, "GPipe, p=3, m=4", [want] * 3)
    check_schedule(got, [want] * 3, "gpipe", 3, 4)


@pytest.mark.title(zh="题面的示例：p = 4 个 stage，m = 6 个微批次")
def test_1f1b_worked_example(record_property):
    """The statement's example: p = 4 stages, m = 6 micro-batches."""
    got = pp_sim.schedule("1f1b", 4, 6)
    want = [
        ops("F0 F1 F2 F3 B0 F4 B1 F5 B2 B3 B4 B5"),
        ops("F0 F1 F2 B0 F3 B1 F4 B2 F5 B3 B4 B5"),
        ops("F0 F1 B0 F2 B1 F3 B2 F4 B3 F5 B4 B5"),
        ops("F0 B0 F1 B1 F2 B2 F3 B3 F4 B4 F5 B5"),
    ]
    attach(record_property, got, "1F1B, p=4, m=6", want)
    check_schedule(got, want, "1f1b", 4, 6)


@pytest.mark.title(zh="1F1B：4 个 stage，4 个微批次")
def test_1f1b_four_stages_four_microbatches(record_property):
    got = pp_sim.schedule("1f1b", 4, 4)
    want = [
        ops("F0 F1 F2 F3 B0 B1 B2 B3"),
        ops("F0 F1 F2 B0 F3 B1 B2 B3"),
        ops("F0 F1 B0 F2 B1 F3 B2 B3"),
        ops("F0 B0 F1 B1 F2 B2 F3 B3"),
    ]
    attach(record_property, got, "1F1B, p=4, m=4", want)
    check_schedule(got, want, "1f1b", 4, 4)


@pytest.mark.title(zh="m < p：预热上限为 m，所以前面的 stage 先全部前向，再全部反向")
@pytest.mark.points(3)  # the warm-up capped at m, the public case of it
def test_1f1b_fewer_microbatches_than_stages(record_property):
    """m < p: the warm-up is capped at m, so the first stages run all forwards, then all backwards."""
    got = pp_sim.schedule("1f1b", 4, 2)
    want = [ops("F0 F1 B0 B1"), ops("F0 F1 B0 B1"), ops("F0 F1 B0 B1"), ops("F0 B0 F1 B1")]
    attach(record_property, got, "1F1B, p=4, m=2", want)
    check_schedule(got, want, "1f1b", 4, 2)


@pytest.mark.title(zh="只有一个 stage")
@pytest.mark.parametrize("kind, want", [("gpipe", "F0 F1 F2 B0 B1 B2"), ("1f1b", "F0 B0 F1 B1 F2 B2")])
def test_single_stage(record_property, kind, want):
    got = pp_sim.schedule(kind, 1, 3)
    attach(record_property, got, f"{kind}, p=1, m=3", [ops(want)])
    check_schedule(got, [ops(want)], kind, 1, 3)


@pytest.mark.title(zh="只有一个微批次")
@pytest.mark.parametrize("kind", ["gpipe", "1f1b"])
def test_single_microbatch(record_property, kind):
    got = pp_sim.schedule(kind, 3, 1)
    attach(record_property, got, f"{kind}, p=3, m=1", [ops("F0 B0")] * 3)
    check_schedule(got, [ops("F0 B0")] * 3, kind, 3, 1)


@pytest.mark.title(zh="操作是 (str, int) 元组")
@pytest.mark.parametrize("kind", ["gpipe", "1f1b"])
def test_operations_are_tuples_of_str_and_int(record_property, kind):
    got = pp_sim.schedule(kind, 2, 3)
    attach(record_property, got, f"{kind}, p=2, m=3")
    check_every_operation_once(got, kind, 2, 3)
    for s, stage in enumerate(got):
        for op in stage:
            assert isinstance(op, tuple) and len(op) == 2, say(
                f"stage {s}: every operation must be a 2-tuple like ('F', 0), got {op!r}",
                zh=f"stage {s}：每个操作都必须是像 ('F', 0) 这样的二元组，实际得到 {op!r}")
            assert op[0] in ("F", "B") and type(op[1]) is int, say(
                f"stage {s}: an operation is ('F' or 'B', int micro-batch), got {op!r}",
                zh=f"stage {s}：一个操作是（'F' 或 'B'，int 微批次编号），实际得到 {op!r}")


@pytest.mark.title(zh="1F1B 的要点：stage s 同时持有的未反向微批次从不超过 min(p - s, m) 个")
def test_1f1b_keeps_at_most_p_minus_s_microbatches_in_flight(record_property):
    """The point of 1F1B: stage s never holds more than min(p - s, m) un-backpropagated micro-batches."""
    p, m = 4, 8
    got = pp_sim.schedule("1f1b", p, m)
    attach(record_property, got, f"1F1B, p={p}, m={m}")
    check_every_operation_once(got, "1f1b", p, m)
    for s, stage in enumerate(got):
        live = peak = 0
        for op, _ in as_ops(stage):
            live += 1 if op == "F" else -1
            peak = max(peak, live)
        assert peak == min(p - s, m), say(
            f"stage {s}: at most {min(p - s, m)} forwards should be waiting for their backward at any time, "
            f"your order reaches {peak}: {fmt(as_ops(stage))}",
            zh=f"stage {s}：任何时刻最多应有 {min(p - s, m)} 个前向在等待它们的反向，"
               f"你的顺序达到了 {peak} 个：{fmt(as_ops(stage))}")


@pytest.mark.title(zh="未知的调度类型抛出 ValueError")
@pytest.mark.parametrize("kind", ["GPipe", "interleaved", "", None], ids=lambda kind: shown(kind=kind))
def test_unknown_kind_raises_value_error(kind):
    expect_value_error(kind, 4, 4, say('kind must be "gpipe" or "1f1b"', zh='kind 必须是 "gpipe" 或 "1f1b"'))


SIZES_BELOW_ONE = [(kind, p, m) for p, m in [(0, 4), (4, 0), (-1, 4), (4, -3)] for kind in ("gpipe", "1f1b")]


@pytest.mark.title(zh="两种调度都一样：空流水线（p = 0）或没有微批次（m = 0）是错误，而不是返回 []")
@pytest.mark.parametrize("kind, p, m", SIZES_BELOW_ONE, ids=[f"{kind}, p={p}, m={m}" for kind, p, m in SIZES_BELOW_ONE])
def test_sizes_below_one_raise_value_error(kind, p, m):
    """For both kinds: an empty pipeline (p = 0) or no micro-batches (m = 0) is an error, not []."""
    other = "1f1b" if kind == "gpipe" else "gpipe"
    expect_value_error(kind, p, m, say("p and m must be at least 1", zh="p 和 m 必须至少为 1"),
                       also=(other, p, m, say("check p and m for every kind", zh="对每种 kind 都要检查 p 和 m")))


NON_INT_SIZES = [(4.0, 4), (4, 2.5), ("4", 4), (4, None)]


@pytest.mark.title(zh="不是 int 的规模抛出 ValueError")
@pytest.mark.parametrize("p, m", NON_INT_SIZES, ids=[shown(p=p, m=m) for p, m in NON_INT_SIZES])
def test_non_int_sizes_raise_value_error(p, m):
    expect_value_error("gpipe", p, m, say("p and m must be ints", zh="p 和 m 必须是 int"))
