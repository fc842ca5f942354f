"""Public tests for pp-1f1b-emulated: gradients, loss, 1F1B order, activation memory, isend and
wait, deadlock."""

from __future__ import annotations

import pp1f1b_harness as h
import pytest

from judge.lang import say

CASES = [(1, 1), (1, 3), (2, 1), (2, 4), (3, 2), (3, 5), (4, 8)]


@pytest.mark.title(zh="梯度与整个批次一次算出的相同")
@pytest.mark.parametrize("p,M", CASES)
def test_gradients_match_full_batch(p: int, M: int) -> None:
    import pp_1f1b
    h.assert_gradients(h.good_run(pp_1f1b.stage_loop, p, M))


@pytest.mark.title(zh="损失是整个批次的均方误差")
@pytest.mark.parametrize("p,M", CASES)
def test_loss_is_full_batch_mse(p: int, M: int) -> None:
    import pp_1f1b
    h.assert_loss(h.good_run(pp_1f1b.stage_loop, p, M))


@pytest.mark.title(zh="执行顺序是 1F1B")
@pytest.mark.parametrize("p,M", [(2, 4), (3, 2), (4, 8)])
def test_order_is_1f1b(p: int, M: int, record_property) -> None:
    import pp_1f1b
    h.attach_order(record_property, pp_1f1b.stage_loop, p, M,
                   f"p={p} stages, m={M} micro-batches (F = 1 unit, B = 2 units)")
    h.assert_order(h.good_run(pp_1f1b.stage_loop, p, M))


@pytest.mark.title(zh="激活显存")
@pytest.mark.parametrize("p,M", [(2, 4), (3, 5), (4, 8)])
def test_activation_memory(p: int, M: int) -> None:
    import pp_1f1b
    h.assert_memory(h.good_run(pp_1f1b.stage_loop, p, M))


@pytest.mark.title(zh="题面：blocking=False 时每次发送都用 isend，handle 在最后统一等待")
@pytest.mark.parametrize("p,M", [(2, 4), (3, 5), (4, 8)])
def test_isend_and_wait_at_the_end(p: int, M: int) -> None:
    """The statement: with blocking=False every send is an isend, and the handles are waited for at the end."""
    import pp_1f1b
    h.assert_communication(h.good_run(pp_1f1b.stage_loop, p, M))


@pytest.mark.title(zh="每次接收紧挨在用到它的计算之前，每次发送紧挨在产生它的计算之后")
@pytest.mark.parametrize("p,M", [(2, 2), (2, 4), (3, 5), (4, 8)])
def test_messages_at_their_compute(p: int, M: int) -> None:
    """Each receive right before the compute that uses it, each send right after the compute that made it.

    The statement: the activation is received right before its forward and the gradient right before its
    backward; the output is sent right after its forward, the input gradient right after its backward."""
    import pp_1f1b
    h.assert_placement(h.good_run(pp_1f1b.stage_loop, p, M))


@pytest.mark.title(zh="阻塞发送导致死锁")
@pytest.mark.parametrize("p,M", [(2, 2), (4, 6)])
def test_blocking_sends_deadlock(p: int, M: int, record_property) -> None:
    import pp_1f1b
    h.assert_blocking_deadlocks(pp_1f1b.stage_loop, p, M, record_property)


@pytest.mark.title(zh="p = 1 或 m = 1 时，blocking=True 与 blocking=False 一样能运行到底")
@pytest.mark.parametrize("p,M", [(1, 3), (2, 1), (3, 1)])
def test_blocking_without_a_cycle_runs_normally(p: int, M: int) -> None:
    """With p = 1 or m = 1, blocking=True runs to the end like blocking=False.

    The statement: blocking=True changes nothing but the sends, so with p = 1 or m = 1 it runs to the
    end with the same order, gradients, loss and memory as blocking=False."""
    import pp_1f1b
    run = h.assert_blocking_runs_without_a_cycle(pp_1f1b.stage_loop, p, M)
    h.assert_communication(run)
    h.assert_order(run)
    h.assert_gradients(run)
    h.assert_loss(run)
    h.assert_memory(run)


@pytest.mark.title(zh="最后一个 rank 以 float 返回损失，其余 rank 都返回 None")
@pytest.mark.parametrize("p,M", [(2, 4), (4, 2)])
def test_other_ranks_return_none(p: int, M: int) -> None:
    """The last rank returns the loss as a float, every other rank returns None."""
    import pp_1f1b
    run = h.good_run(pp_1f1b.stage_loop, p, M)
    h.assert_complete(run, say("what the ranks return", zh="各 rank 的返回值"))
    loss = run.loss
    assert isinstance(loss, float), say(f"p={p}, m={M}: the last rank's stage_loop must return the loss as a float, "
                                        f"got {loss!r} (a {type(loss).__name__})",
                                        zh=f"p={p}, m={M}：最后一个 rank 的 stage_loop 必须以 float 返回损失，"
                                        f"实际得到 {loss!r}（{type(loss).__name__}）")
    got = [comm.result for comm in run.world.ranks[:-1]]
    bad = {s: value for s, value in enumerate(got) if value is not None}
    returned = [bad[s] for s in sorted(bad)]
    assert not bad, say(f"p={p}, m={M}: stage_loop must return None on every rank but the last; rank(s) "
                        f"{sorted(bad)} returned {returned!r} (only the last rank computes "
                        f"the loss: return None on the other ranks)",
                        zh=f"p={p}, m={M}：除最后一个 rank 外，stage_loop 在每个 rank 上都必须返回 None；rank "
                        f"{sorted(bad)} 返回了 {returned!r}（只有最后一个 rank 计算损失：在其他 rank 上返回 None）")


@pytest.mark.title(zh="不传 blocking= 时，stage_loop 运行非阻塞的循环")
def test_blocking_defaults_to_false() -> None:
    """Called without blocking=, stage_loop runs the non-blocking loop.

    The signature's default is blocking=False, and the statement's example calls stage_loop without it."""
    import pp_1f1b
    try:
        run = h.run_pipeline(pp_1f1b.stage_loop, 2, 2, blocking=None)
    except Exception as e:  # noqa: BLE001 - reported to the learner
        why = ""
        if isinstance(e, h.p2p.DeadlockError) and "blocked in send(" in str(e):
            why = "\n" + say("Ranks are blocked in blocking sends: without the argument the loop must use isend "
                             "(blocking=False).", zh="有 rank 阻塞在阻塞发送中：不给这个参数时，循环必须用 isend"
                             "（blocking=False）。")
        elif isinstance(e, TypeError) and "blocking" in str(e):
            why = "\n" + say("The signature gives blocking a default: blocking: bool = False.",
                             zh="签名给了 blocking 一个默认值：blocking: bool = False。")
        pytest.fail(say(f"p=2, m=2: stage_loop called without blocking= (as in the statement's example) raised "
                        f"{type(e).__name__}: {e}{why}",
                        zh=f"p=2, m=2：不带 blocking= 调用 stage_loop（和题面的例子一样）时抛出了 "
                        f"{type(e).__name__}: {e}{why}"), pytrace=False)
    h.assert_communication(run)
