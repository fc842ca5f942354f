"""Secret tests for pp-1f1b-emulated: other sizes, seeds and micro-batch sizes, m < p, p up to 8."""

from __future__ import annotations

import pp1f1b_harness as h
import pytest

# (p, M, seed, rows per micro-batch)
CASES = [(1, 5, 1, 3), (2, 2, 2, 1), (3, 1, 3, 2), (4, 3, 4, 1), (5, 5, 5, 2), (6, 12, 6, 1),
         (8, 5, 7, 2), (8, 16, 8, 1)]


@pytest.mark.title(zh="梯度与损失（更多规模）")
@pytest.mark.parametrize("p,M,seed,rows", CASES)
def test_gradients_and_loss(p: int, M: int, seed: int, rows: int) -> None:
    import pp_1f1b
    run = h.good_run(pp_1f1b.stage_loop, p, M, seed, rows)
    h.assert_gradients(run)
    h.assert_loss(run)


@pytest.mark.title(zh="执行顺序与激活显存（更多规模）")
@pytest.mark.parametrize("p,M,seed,rows", CASES)
def test_order_and_memory(p: int, M: int, seed: int, rows: int, record_property) -> None:
    import pp_1f1b
    run = h.good_run(pp_1f1b.stage_loop, p, M, seed, rows)
    record_property("timeline", h.world_timeline(
        run.world, f"your pipeline: p={p} stages, m={M} micro-batches (F = 1 unit, B = 2 units)"))
    h.assert_order(run)
    h.assert_memory(run)


@pytest.mark.title(zh="阻塞发送导致死锁（更多规模）")
@pytest.mark.parametrize("p,M", [(3, 5), (8, 9)])
def test_blocking_sends_deadlock_more(p: int, M: int, record_property) -> None:
    import pp_1f1b
    h.assert_blocking_deadlocks(pp_1f1b.stage_loop, p, M, record_property)


@pytest.mark.title(zh="isend 与最后的等待（更多规模）")
@pytest.mark.parametrize("p,M,seed,rows", [c for c in CASES if c[0] >= 2 and c[1] >= 2])
def test_isend_and_wait_at_the_end_more(p: int, M: int, seed: int, rows: int) -> None:
    import pp_1f1b
    h.assert_communication(h.good_run(pp_1f1b.stage_loop, p, M, seed, rows))


@pytest.mark.title(zh="消息紧挨着各自的计算（更多规模）")
@pytest.mark.parametrize("p,M,seed,rows", [c for c in CASES if c[0] >= 2])
def test_messages_at_their_compute_more(p: int, M: int, seed: int, rows: int) -> None:
    import pp_1f1b
    h.assert_placement(h.good_run(pp_1f1b.stage_loop, p, M, seed, rows))


@pytest.mark.title(zh="没有环时阻塞发送也能运行（更多规模）")
@pytest.mark.parametrize("p,M", [(1, 4), (5, 1), (8, 1)])
def test_blocking_without_a_cycle_more(p: int, M: int) -> None:
    import pp_1f1b
    run = h.assert_blocking_runs_without_a_cycle(pp_1f1b.stage_loop, p, M)
    h.assert_communication(run)
    h.assert_order(run)
    h.assert_gradients(run)
    h.assert_loss(run)
    h.assert_memory(run)
