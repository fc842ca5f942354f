"""Project tests for pp-1f1b-emulated: the reference loop and the p2p runtime against independent
implementations.

Independent pieces written here, differently from the problem's code:

* gradients: per-sample backpropagation (one row at a time, outer products) for the whole grid,
  and complex-step differentiation (no backpropagation at all) for a few small cases;
* the 1F1B order: a greedy rule ("forward while fewer than p - s micro-batches are in flight,
  else backward") instead of warm-up / steady / drain loops;
* the clock: start/end times from the dependency recurrence over the expected orders;
* peak activation memory: counted while replaying the greedy order.

The grid covers p = 1..8 and M = 1..32, subsampled to keep the run to about a second.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.problems.loading import load, support

PROBLEM = Path(__file__).resolve().parents[2] / "problems" / "pp-1f1b-emulated"




ref = load("pp-1f1b-emulated", "reference/pp_1f1b.py")
p2p, mlp = support("pp-1f1b-emulated", "p2p"), support("pp-1f1b-emulated", "mlp")

GRID = sorted({(p, M) for p in range(1, 9)
               for M in (1, 2, 3, p - 1, p, p + 1, 2 * p + 3, 17, 32) if 1 <= M <= 32})


# ---------------------------------------------------------------- independent implementations

def greedy_order(p: int, s: int, M: int) -> list[str]:
    """1F1B as a greedy rule: forward while fewer than p - s micro-batches are in flight."""
    order, f, b = [], 0, 0
    while b < M:
        if f < M and f - b < p - s:
            order.append(f"F{f}")
            f += 1
        else:
            order.append(f"B{b}")
            b += 1
    return order


def peak_in_flight(order: list[str]) -> int:
    live = peak = 0
    for op in order:
        live += 1 if op[0] == "F" else -1
        peak = max(peak, live)
    return peak


def dependency_times(p: int, M: int, tf: float = 1.0, tb: float = 2.0) -> list[list[tuple[str, float, float]]]:
    """(label, start, end) per stage: an op starts when its stage is free and its input exists."""
    orders = [greedy_order(p, s, M) for s in range(p)]
    end: dict[tuple[int, str], float] = {}
    pos, free = [0] * p, [0.0] * p
    rows: list[list[tuple[str, float, float]]] = [[] for _ in range(p)]
    while any(pos[s] < len(orders[s]) for s in range(p)):
        moved = False
        for s in range(p):
            while pos[s] < len(orders[s]):
                label = orders[s][pos[s]]
                if label[0] == "F":
                    dep = (s - 1, label) if s > 0 else None
                else:
                    dep = (s + 1, label) if s < p - 1 else None
                if dep is not None and dep not in end:
                    break
                start = max(free[s], end[dep] if dep else 0.0)
                free[s] = start + (tf if label[0] == "F" else tb)
                end[(s, label)] = free[s]
                rows[s].append((label, start, free[s]))
                pos[s] += 1
                moved = True
        assert moved, "dependency cycle in the expected orders"
    return rows


def per_sample_gradients(params, x, y):
    """Loss and (dW, db) of every Linear by backpropagating one sample at a time."""
    n_out = y.shape[1]
    count = x.shape[0] * n_out
    grads = [(np.zeros_like(W), np.zeros_like(b)) for W, b in params]
    loss = 0.0
    for r in range(x.shape[0]):
        acts = [x[r]]
        for k, (W, b) in enumerate(params):
            z = W.T @ acts[-1] + b
            acts.append(z if k == len(params) - 1 else np.tanh(z))
        err = acts[-1] - y[r]
        loss += float(err @ err) / count
        delta = 2.0 * err / count
        for k in reversed(range(len(params))):
            if k < len(params) - 1:
                delta = delta * (1.0 - acts[k + 1] ** 2)
            grads[k][0][...] += np.outer(acts[k], delta)
            grads[k][1][...] += delta
            delta = params[k][0] @ delta
    return loss, grads


def complex_step_gradients(params, x, y, h: float = 1e-30):
    """d loss / d parameter by the complex-step method, one parameter at a time."""
    def loss(ps):
        a = x.astype(np.complex128)
        for k, (W, b) in enumerate(ps):
            a = a @ W + b
            if k < len(ps) - 1:
                a = np.tanh(a)
        d = a - y
        return np.sum(d * d) / d.size

    cparams = [(W.astype(np.complex128), b.astype(np.complex128)) for W, b in params]
    grads = []
    for W, b in cparams:
        out = []
        for arr in (W, b):
            g = np.zeros(arr.shape)
            for idx in np.ndindex(*arr.shape):
                arr[idx] += 1j * h
                g[idx] = loss(cparams).imag / h
                arr[idx] -= 1j * h
            out.append(g)
        grads.append(tuple(out))
    return grads


# ---------------------------------------------------------------- running the reference

def make_case(p: int, M: int, rows: int, seed: int):
    rng = np.random.default_rng([seed, p, M])
    dims = [int(d) for d in rng.integers(2, 5, size=2 * p + 1)]
    layers = mlp.make_layers(dims, p, rng)
    x = rng.standard_normal((M * rows, dims[0]))
    y = rng.standard_normal((M * rows, dims[-1]))
    return layers, x, y


def run_reference(p: int, M: int, rows: int = 1, seed: int = 0, blocking: bool = False):
    layers, x, y = make_case(p, M, rows, seed)
    linears = [layer for stage in layers for layer in stage if isinstance(layer, mlp.Linear)]
    params = [(lin.W.copy(), lin.b.copy()) for lin in linears]
    xs, ys = mlp.split_batch(x, M), mlp.split_batch(y, M)

    def program(comm):
        return ref.stage_loop(comm, mlp.Stage(comm, layers[comm.rank]), M,
                              inputs=xs if comm.rank == 0 else None,
                              targets=ys if comm.rank == p - 1 else None, blocking=blocking)

    world = p2p.run(p, program)
    return world, linears, params, x, y


# ---------------------------------------------------------------- tests of the reference

def test_grid_gradients_order_clock_memory():
    for p, M in GRID:
        world, linears, params, x, y = run_reference(p, M, rows=1 + (p + M) % 3, seed=p * M)
        loss, grads = per_sample_gradients(params, x, y)
        assert abs(world.ranks[-1].result - loss) <= 1e-12 * max(1.0, loss), (p, M)
        for lin, (gW, gb) in zip(linears, grads):
            assert np.allclose(lin.dW, gW, rtol=1e-10, atol=1e-12), (p, M)
            assert np.allclose(lin.db, gb, rtol=1e-10, atol=1e-12), (p, M)
        times = dependency_times(p, M)
        for s, comm in enumerate(world.ranks):
            assert comm.order() == greedy_order(p, s, M), (p, M, s)
            assert [(str(e), e.start, e.end) for e in comm.trace] == times[s], (p, M, s)
            assert comm.peak_live == peak_in_flight(greedy_order(p, s, M)) == min(p - s, M), (p, M, s)
            assert len(comm.stash) == 0
            assert comm.result is None or s == p - 1


@pytest.mark.parametrize("p,M", [(1, 3), (2, 2), (3, 4)])
def test_gradients_match_complex_step(p, M):
    world, linears, params, x, y = run_reference(p, M, rows=2, seed=7)
    for lin, (gW, gb) in zip(linears, complex_step_gradients(params, x, y)):
        assert np.allclose(lin.dW, gW, rtol=1e-10, atol=1e-12)
        assert np.allclose(lin.db, gb, rtol=1e-10, atol=1e-12)


def test_blocking_deadlocks_exactly_when_1f1b_interleaves():
    for p, M in GRID:
        if p == 1 or M == 1:
            world, *_ = run_reference(p, M, blocking=True)  # no cycle: completes
            assert all(c.finished for c in world.ranks)
            continue
        with pytest.raises(p2p.DeadlockError) as info:
            run_reference(p, M, blocking=True)
        msg = str(info.value)
        for r in range(p):
            assert f"rank {r} blocked in" in msg or f"rank {r} has finished" in msg, (p, M, r, msg)
        assert "waiting cycle: rank" in msg and "blocking send" in msg
        # the last two ranks always end in the classic send/send cycle
        assert f"rank {p - 1} blocked in send(to={p - 2}, tag='grad 0')" in msg, msg
        assert info.value.world is not None


# ---------------------------------------------------------------- tests of the runtime

def test_fifo_per_pair_and_copies():
    sent = np.arange(3.0)

    def program(comm):
        if comm.rank == 0:
            hs = []
            for i in range(4):
                sent[0] = i
                hs.append((yield comm.isend(1, sent, tag=i)))
            yield comm.waitall(hs)
            assert all(h.done for h in hs)
        else:
            got = []
            for i in range(4):
                got.append((yield comm.recv(0, tag=i)))
            return [float(g[0]) for g in got]

    world = p2p.run(2, program)
    assert world.ranks[1].result == [0.0, 1.0, 2.0, 3.0]  # copies taken at send time, in order


def test_send_send_deadlock_message_and_isend_fix():
    def blocking(comm):
        other = 1 - comm.rank
        yield comm.send(other, comm.rank, tag=f"x{comm.rank}")
        yield comm.recv(other)

    with pytest.raises(p2p.DeadlockError) as info:
        p2p.run(2, blocking)
    msg = str(info.value)
    assert "rank 0 blocked in send(to=1, tag='x0')" in msg
    assert "rank 1 blocked in send(to=0, tag='x1')" in msg
    assert "waiting cycle: rank 0 -> rank 1 -> rank 0" in msg
    assert "matching recv" in msg

    def nonblocking(comm):
        other = 1 - comm.rank
        h = yield comm.isend(other, comm.rank)
        got = yield comm.recv(other)
        yield h.wait()
        return got

    world = p2p.run(2, nonblocking)
    assert [c.result for c in world.ranks] == [1, 0]


def test_recv_from_finished_rank_and_all_recv_deadlock():
    def program(comm):
        if comm.rank == 1:
            yield comm.recv(0)

    with pytest.raises(p2p.DeadlockError, match="rank 0 has finished"):
        p2p.run(2, program)

    def ring(comm):
        yield comm.recv((comm.rank + 1) % comm.size)

    with pytest.raises(p2p.DeadlockError, match="is ever sent|never sent"):
        p2p.run(3, ring)


@pytest.mark.parametrize("program,match", [
    (lambda comm: iter(()), "not a generator"),
    (lambda comm: (yield 42), "may only yield"),
    (lambda comm: (yield comm.isend(1 - comm.rank, 0)), "never waited"),
    (lambda comm: (yield comm.recv(comm.rank)), "with itself"),
    (lambda comm: (yield comm.recv(5)), "ranks are 0..1"),
])
def test_misuse_errors(program, match):
    with pytest.raises((p2p.P2PError, TypeError), match=match):
        p2p.run(2, program)


def test_more_misuse_errors():
    def tag_mismatch(comm):
        if comm.rank == 0:
            yield comm.send(1, 0, tag="a")
        else:
            yield comm.recv(0, tag="b")

    with pytest.raises(p2p.P2PError, match="oldest message from rank 0 has tag='a'"):
        p2p.run(2, tag_mismatch)

    def unreceived(comm):
        if comm.rank == 0:
            yield comm.isend(1, 0)  # the handle is never waited on
        yield from ()

    with pytest.raises(p2p.P2PError, match="never waited|never received"):
        p2p.run(2, unreceived)

    def not_yielded(comm):
        comm.send(1 - comm.rank, 0)
        yield from ()

    with pytest.raises(p2p.P2PError, match="never yielded"):
        p2p.run(2, not_yielded)

    def used_without_yield(comm):
        x = comm.recv(1 - comm.rank)
        np.asarray(x)
        yield from ()

    with pytest.raises(TypeError, match="without `yield`"):
        p2p.run(2, used_without_yield)


def test_stage_checks_and_stash_records():
    layers = mlp.make_layers([2, 3, 2], 1, np.random.default_rng(0))
    x = np.ones((2, 2))

    def unsaved(comm):
        stage = mlp.Stage(comm, layers[0])
        stage.forward(0, x)
        stage.forward(1, x)
        yield from ()

    with pytest.raises(RuntimeError, match="not saved in comm.stash"):
        p2p.run(1, unsaved)

    def mismatch(comm):
        stage = mlp.Stage(comm, layers[0])
        for mb in range(2):
            y, comm.stash[mb] = stage.forward(mb, x)
        stage.backward(0, comm.stash.pop(1), np.ones_like(y))
        yield from ()

    with pytest.raises(ValueError, match="given the activation of micro-batch 1"):
        p2p.run(1, mismatch)

    def fine(comm):
        stage = mlp.Stage(comm, layers[0])
        for mb in range(3):
            y, comm.stash[mb] = stage.forward(mb, x)
        for mb in range(3):
            stage.backward(mb, comm.stash.pop(mb), np.ones_like(y))
        yield from ()

    comm = p2p.run(1, fine).ranks[0]
    assert comm.order() == ["F0", "F1", "F2", "B0", "B1", "B2"]
    assert comm.peak_live == 3
    assert [n for _, n in comm.live_history] == [0, 1, 2, 3, 2, 1, 0]
    assert [(e.start, e.end) for e in comm.trace] == [(0, 1), (1, 2), (2, 3), (3, 5), (5, 7), (7, 9)]


def test_activation_saved_inside_a_tuple_counts_as_saved():
    """Storing (act, x) in comm.stash is saving the activation: the loop passes every test."""
    from judge.core.problem import load_problem
    from tests.judged import judge_one, solution_job

    problem = load_problem(PROBLEM)
    source = problem.reference_path.read_text(encoding="utf-8")
    assert "comm.stash[mb] = act" in source and "act = comm.stash.pop(mb)" in source
    source = source.replace("comm.stash[mb] = act", "comm.stash[mb] = (act, mb)")
    source = source.replace("act = comm.stash.pop(mb)", "act, _ = comm.stash.pop(mb)")
    result = judge_one(solution_job(PROBLEM, "pp-1f1b-emulated/activation in a tuple", source))
    failing = [(t.name, t.message[:300]) for t in result.tests if t.outcome != "passed"]
    assert result.status == "passed", (result.status, result.message, failing[:3])


def test_deadlock_hints_only_say_what_the_run_shows():
    """The prefetching loop (the gradient of B_i received before the forward that precedes it) is told that
    its receive is misplaced, never that its order is GPipe's (for p = 2, m = 2 rank 0's 1F1B order is
    GPipe's) nor that it uses isend with blocking=True (it does not)."""
    from judge.core.problem import load_problem
    from judge.core.wrong import load_wrong
    from tests.judged import judge_one, solution_job

    problem = load_problem(PROBLEM)
    wrong = load_wrong(problem, PROBLEM / "wrong" / "recv_grad_before_forward.diff")
    # the job the hint and parity sweeps judge: one Result for all three (tests/judged.py)
    result = judge_one(solution_job(PROBLEM, "pp-1f1b-emulated/wrong/recv_grad_before_forward.diff", wrong.source))
    failing = {t.id.rsplit("::", 1)[-1]: t.message for t in result.tests if t.outcome != "passed"}
    deadlock = [m for name, m in failing.items() if "test_blocking_sends_deadlock" in name]
    assert deadlock and all("belongs right before its" in m for m in deadlock), failing
    assert not any("GPipe" in m or "every send must be the blocking" in m for m in failing.values()), failing
    assert {name.split("[")[0] for name in failing} == {
        "test_messages_at_their_compute", "test_messages_at_their_compute_more", "test_blocking_sends_deadlock",
        "test_blocking_sends_deadlock_more"}, sorted(failing)
