"""Test helpers for pp-1f1b-emulated: build a model, run the learner's loop on p emulated ranks,
compute the full-batch reference gradients, the expected 1F1B order, and timelines."""

from __future__ import annotations

from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from typing import Any

import mlp
import numpy as np
import p2p
import pytest

from judge.artifacts import timeline
from judge.lang import say


@dataclass(frozen=True)
class CommRecord:
    """One operation a rank yielded: its kind ("send", "isend", "recv", "wait"), its description
    (``send(to=1, tag='act 3')``), how many compute operations the rank had run before it, and the
    rank it sends to or receives from (None for a wait)."""

    kind: str
    text: str
    computes_before: int
    peer: int | None = None


def _recorded(gen: Any, comm: p2p.Comm, log: list[CommRecord]) -> Any:
    """``gen`` (a rank's program) passed through unchanged, with every yielded operation noted in
    ``log``. Anything that is not a generator is returned as it is (the runtime reports it)."""
    if not isinstance(gen, Generator):
        return gen

    def relay() -> Generator[Any, Any, Any]:
        __tracebackhide__ = True
        value = None
        while True:
            try:
                op = gen.send(value)
            except StopIteration as stop:
                return stop.value
            describe = getattr(op, "describe", None)
            text = describe() if getattr(op, "_is_p2p_op", False) and callable(describe) else repr(op)
            peer = getattr(op, "peer", None) if getattr(op, "_is_p2p_op", False) else None
            log.append(CommRecord(str(getattr(op, "kind", "?")), text, len(comm.trace),
                                  peer if isinstance(peer, int) else None))
            value = yield op

    return relay()


@dataclass
class PipelineRun:
    p: int
    M: int
    world: p2p.World
    layers: list[list[Any]]            # per stage, the layers holding the accumulated gradients
    params: list[tuple[np.ndarray, np.ndarray]]   # (W, b) of every Linear, before the step
    x: np.ndarray
    y: np.ndarray
    blocking: bool = False
    logs: list[list[CommRecord]] = field(default_factory=list)  # per rank, the operations it yielded

    @property
    def loss(self) -> Any:
        return self.world.ranks[-1].result


def make_problem(p: int, M: int, seed: int, rows: int) -> tuple[list[list[Any]], np.ndarray, np.ndarray]:
    """Layers for p stages and a batch of M * rows samples (all float64, seeded)."""
    rng = np.random.default_rng(1000 * seed + 31 * p + M)
    dims = [int(d) for d in rng.integers(2, 6, size=2 * p + 1)]
    layers = mlp.make_layers(dims, p, rng)
    x = rng.standard_normal((M * rows, dims[0]))
    y = rng.standard_normal((M * rows, dims[-1]))
    return layers, x, y


def _linears(layers: list[list[Any]]) -> list[Any]:
    return [layer for stage in layers for layer in stage if isinstance(layer, mlp.Linear)]


def run_pipeline(loop: Callable[..., Any], p: int, M: int, seed: int = 0, rows: int = 2,
                 blocking: bool | None = False) -> PipelineRun:
    """Run ``loop`` (the learner's ``stage_loop``) on p ranks. Raises what the run raises.

    ``blocking=None`` calls it without the argument (its default)."""
    __tracebackhide__ = True
    layers, x, y = make_problem(p, M, seed, rows)
    params = [(lin.W.copy(), lin.b.copy()) for lin in _linears(layers)]
    xs, ys = mlp.split_batch(x, M), mlp.split_batch(y, M)
    logs: list[list[CommRecord]] = [[] for _ in range(p)]

    def program(comm: p2p.Comm) -> Any:
        stage = mlp.Stage(comm, layers[comm.rank])
        chosen = {} if blocking is None else {"blocking": blocking}
        return _recorded(loop(comm, stage, M,
                              inputs=xs if comm.rank == 0 else None,
                              targets=ys if comm.rank == p - 1 else None,
                              **chosen), comm, logs[comm.rank])

    world = p2p.run(p, program, strict=False)  # handles never waited: assert_communication says so
    return PipelineRun(p, M, world, layers, params, x, y, bool(blocking), logs)


_RUNS: dict[tuple[Any, ...], Any] = {}  # good_run's runs, and what the failed ones raised


def good_run(loop: Callable[..., Any], p: int, M: int, seed: int = 0, rows: int = 2) -> PipelineRun:
    """A non-blocking run that must not deadlock (fails the test with an explanation if it does).

    Each size runs once: the tests that share it share its run, or what it raised (the learner's module
    is imported anew before each test, so its function is known by name, not by object)."""
    __tracebackhide__ = True
    key = (_name_of(loop), p, M, seed, rows)
    if key not in _RUNS:
        try:
            _RUNS[key] = run_pipeline(loop, p, M, seed, rows, blocking=False)
        except p2p.DeadlockError as e:
            _RUNS[key] = _Deadlocked(say(f"p={p}, m={M}: your loop deadlocked with blocking=False.",
                                         zh=f"p={p}, m={M}：你的循环在 blocking=False 时死锁了。")
                                     + f"\n{e}{_deadlock_hint(e.world)}")
        except Exception as e:  # noqa: BLE001 - raised again, with its traceback, in every test of the size
            _RUNS[key] = (e, e.__traceback__)
    found = _RUNS[key]
    if isinstance(found, _Deadlocked):
        pytest.fail(found.message, pytrace=False)
    if isinstance(found, tuple):
        raise found[0].with_traceback(found[1])
    return found


def _name_of(loop: Callable[..., Any]) -> Any:
    """The loop's module and name where it has them (the same across fresh imports), else the loop."""
    module, name = getattr(loop, "__module__", None), getattr(loop, "__qualname__", None)
    return (module, name) if isinstance(module, str) and isinstance(name, str) else loop


@dataclass(frozen=True)
class _Deadlocked:
    message: str


def _deadlock_hint(world: p2p.World | None) -> str:
    """What the operations the ranks are blocked in say about a deadlock with blocking=False."""
    pending = [op for op in getattr(world, "_pending", []) if op is not None]
    kinds = {getattr(op, "kind", "") for op in pending}
    if "send" in kinds:
        return "\n" + say("Some rank is blocked in a blocking send: with blocking=False every send must be a "
                          "non-blocking comm.isend.",
                          zh="有 rank 阻塞在阻塞发送中：blocking=False 时每次发送都必须是非阻塞的 comm.isend。")
    if "wait" in kinds:
        return "\n" + say("Some rank is blocked waiting for an isend handle: with blocking=False wait for the "
                          "handles only at the end, after the last backward.",
                          zh="有 rank 阻塞在等待 isend 的 handle：blocking=False 时只在最后、最后一个反向之后"
                          "等待这些 handle。")
    return ""


def full_batch_reference(params: list[tuple[np.ndarray, np.ndarray]], x: np.ndarray,
                         y: np.ndarray) -> tuple[float, list[tuple[np.ndarray, np.ndarray]]]:
    """Loss and (dW, db) of every Linear for the whole batch at once, no pipeline."""
    hs = [x]
    for k, (W, b) in enumerate(params):
        z = hs[-1] @ W + b
        hs.append(z if k == len(params) - 1 else np.tanh(z))
    diff = hs[-1] - y
    loss = float(np.sum(diff * diff) / diff.size)
    g = 2.0 * diff / diff.size
    grads = []
    for k in range(len(params) - 1, -1, -1):
        if k != len(params) - 1:
            g = g * (1.0 - hs[k + 1] ** 2)
        W, _ = params[k]
        grads.append((hs[k].T @ g, g.sum(axis=0)))
        g = g @ W.T
    return loss, grads[::-1]


# The 1F1B order of each stage for the public test sizes, written out (writing 1F1B orders is the
# problem pp-schedule); the hidden tests bring their own for other sizes.
EXPECTED_ORDERS = {
    (1, 3): ["F0 B0 F1 B1 F2 B2"],
    (2, 1): ["F0 B0", "F0 B0"],
    (3, 1): ["F0 B0", "F0 B0", "F0 B0"],
    (2, 2): [  # test_blocking_sends_deadlock's sizes too: its message names the order when no deadlock came
        "F0 F1 B0 B1",
        "F0 B0 F1 B1",
    ],
    (4, 6): [
        "F0 F1 F2 F3 B0 F4 B1 F5 B2 B3 B4 B5",
        "F0 F1 F2 B0 F3 B1 F4 B2 F5 B3 B4 B5",
        "F0 F1 B0 F2 B1 F3 B2 F4 B3 F5 B4 B5",
        "F0 B0 F1 B1 F2 B2 F3 B3 F4 B4 F5 B5",
    ],
    (2, 4): [
        "F0 F1 B0 F2 B1 F3 B2 B3",
        "F0 B0 F1 B1 F2 B2 F3 B3",
    ],
    (3, 2): [
        "F0 F1 B0 B1",
        "F0 F1 B0 B1",
        "F0 B0 F1 B1",
    ],
    (4, 8): [
        "F0 F1 F2 F3 B0 F4 B1 F5 B2 F6 B3 F7 B4 B5 B6 B7",
        "F0 F1 F2 B0 F3 B1 F4 B2 F5 B3 F6 B4 F7 B5 B6 B7",
        "F0 F1 B0 F2 B1 F3 B2 F4 B3 F5 B4 F6 B5 F7 B6 B7",
        "F0 B0 F1 B1 F2 B2 F3 B3 F4 B4 F5 B5 F6 B6 F7 B7",
    ],
}


def expected_order(p: int, s: int, M: int) -> list[str]:
    """Stage s's 1F1B order for p stages and M micro-batches, as labels 'F0', 'B0', ..."""
    if (p, M) in EXPECTED_ORDERS:
        return EXPECTED_ORDERS[(p, M)][s].split()
    from pp1f1b_orders import expected_order as generated  # only present with the hidden tests

    return generated(p, s, M)


def is_gpipe_order(order: list[str], M: int) -> bool:
    """True when every forward F0..F(M-1) comes before every backward B0..B(M-1), each ascending."""
    return order == [f"F{i}" for i in range(M)] + [f"B{i}" for i in range(M)]


def world_timeline(world: p2p.World, title: str, deadlocked: bool = False) -> dict[str, Any]:
    """The ranks' compute traces as a timeline; ``deadlocked``: the world stopped in a deadlock, and
    every rank still blocked is marked stuck with the operation it is blocked in."""
    stuck = {}
    if deadlocked:
        for r, op in enumerate(getattr(world, "_pending", [])):
            if op is not None:
                describe = getattr(op, "describe", None)
                stuck[r] = describe() if callable(describe) else str(getattr(op, "kind", "?"))
    return timeline([[(e.op, e.mb, e.start, e.end) for e in comm.trace] for comm in world.ranks],
                    title=title, stuck=stuck)


def order_timeline(orders: list[list[str]], title: str) -> dict[str, Any]:
    """Per-stage orders (labels 'F0', 'B0', ...) placed on the runtime's logical clock: a forward takes
    mlp.FORWARD_TIME, a backward mlp.BACKWARD_TIME, and each starts when its stage is free and its
    input has arrived (the forward's from the previous stage, the backward's from the next; the last
    stage's backward follows its own forward), as the messages of the statement's loop carry them."""
    p = len(orders)
    ends: dict[tuple[int, str], float] = {}
    rows: list[list[tuple[str, int, float, float]]] = [[] for _ in range(p)]
    clock, pos = [0.0] * p, [0] * p
    moved = True
    while moved:
        moved = False
        for s in range(p):
            while pos[s] < len(orders[s]):
                op = orders[s][pos[s]]
                need = (s - 1, op) if op[0] == "F" and s > 0 else (s + 1, op) if op[0] == "B" and s < p - 1 else None
                if need is not None and need not in ends:
                    break
                start = max(clock[s], ends[need] if need is not None else 0.0)
                clock[s] = start + (mlp.FORWARD_TIME if op[0] == "F" else mlp.BACKWARD_TIME)
                ends[(s, op)] = clock[s]
                rows[s].append((op[0], int(op[1:]), start, clock[s]))
                pos[s] += 1
                moved = True
    return timeline(rows, title=title)


def attach_order(record_property: Any, loop: Callable[..., Any], p: int, M: int, title: str) -> None:
    """Record your pipeline's compute as a timeline (a deadlocked run up to where it stopped, the
    blocked ranks marked stuck) and the expected 1F1B order placed on the same clock. Public tests
    only: the expected orders are the public table EXPECTED_ORDERS."""
    key = (_name_of(loop), p, M, 0, 2)
    try:
        good_run(loop, p, M)
    except (Exception, pytest.fail.Exception):  # noqa: BLE001 - the test itself reports what went wrong
        pass
    found = _RUNS.get(key)
    if isinstance(found, PipelineRun):
        record_property("timeline", world_timeline(found.world, f"your {title}"))
    elif isinstance(found, _Deadlocked):  # run it again for the world where it stopped
        try:
            run_pipeline(loop, p, M, blocking=False)
            return  # it did not deadlock this time: nothing to draw
        except p2p.DeadlockError as e:
            if e.world is None:
                return
            record_property("timeline", world_timeline(e.world, f"your {title} (up to the deadlock)", deadlocked=True))
        except Exception:  # noqa: BLE001 - the test reports the real failure
            return
    else:
        return
    record_property("expected", order_timeline([EXPECTED_ORDERS[(p, M)][s].split() for s in range(p)],
                                               f"expected 1F1B, {title}"))


def missing_computes(run: PipelineRun) -> str:
    """'' when every stage ran each forward F0..F(m-1) and each backward B0..B(m-1) once (in any order);
    else a sentence naming the first stage that did not."""
    M = run.M
    want = sorted([f"F{i}" for i in range(M)] + [f"B{i}" for i in range(M)])
    for s, comm in enumerate(run.world.ranks):
        got = comm.order()
        if sorted(got) != want:
            return say(f"stage {s} ran {fmt(got)}, not each of F0..F{M - 1} and B0..B{M - 1} once: every stage "
                       f"runs the forward and the backward of every micro-batch",
                       zh=f"stage {s} 运行了 {fmt(got)}，而不是 F0..F{M - 1} 和 B0..B{M - 1} 各一次：每个 stage "
                       f"都要运行每个微批次的前向和反向")
    return ""


def assert_complete(run: PipelineRun, what: str) -> None:
    """The run did the whole step (what the other checks of the test are about needs it)."""
    __tracebackhide__ = True
    missing = missing_computes(run)
    assert not missing, say(f"p={run.p}, m={run.M}: {missing} ({what} is checked on a complete step).",
                            zh=f"p={run.p}, m={run.M}：{missing}（{what}在完整的一步上检查）。")


def fmt(order: list[str]) -> str:
    return " ".join(order) if order else "(nothing)"


def gradient_problems(run: PipelineRun) -> list[str]:
    """Lines naming every Linear whose accumulated gradient differs from the full-batch one,
    followed by the likely cause (empty when all gradients match)."""
    _, ref = full_batch_reference(run.params, run.x, run.y)
    got = [(lin.dW, lin.db) for lin in _linears(run.layers)]
    per_stage = len(got) // run.p
    lines, kinds = [], set()
    for k, ((dW, db), (rW, rb)) in enumerate(zip(got, ref)):
        for name, g, r in (("dW", dW, rW), ("db", db, rb)):
            if np.allclose(g, r, rtol=1e-10, atol=1e-10):
                continue
            if not np.any(g):
                kinds.add("zero")
            elif run.M > 1 and np.allclose(g, run.M * r, rtol=1e-8, atol=1e-10):
                kinds.add("times M")
            else:
                kinds.add("other")
            err = float(np.max(np.abs(g - r)))
            lines.append(say(f"  stage {k // per_stage}, Linear {k % per_stage}, {name}: "
                             f"max |yours - full batch| = {err:.3g}",
                             zh=f"  stage {k // per_stage}，Linear {k % per_stage}，{name}："
                             f"max |你的 - 整个批次| = {err:.3g}"))
    if not lines:
        return []
    if kinds == {"times M"}:
        hint = say(f"Every wrong gradient is exactly m = {run.M} times the full-batch one: scale each "
                   f"micro-batch's loss and its gradient by 1/m.",
                   zh=f"每个错误的梯度都恰好是整个批次梯度的 m = {run.M} 倍：把每个微批次的损失和它的梯度乘以 1/m。")
    elif kinds == {"zero"}:
        hint = say("The wrong gradients are all zeros: no backward reached those layers.",
                   zh="错误的梯度全为零：没有反向到达这些层。")
    else:
        hint = say("Check that the backward of micro-batch i uses the activation saved by the forward "
                   "of micro-batch i and the gradient received for micro-batch i, and that the loss "
                   "gradient is scaled by 1/m.",
                   zh="检查微批次 i 的反向是否使用了微批次 i 的前向保存的激活和为微批次 i 接收的梯度，"
                   "以及损失的梯度是否乘以了 1/m。")
    return lines + [hint]


# -- checks shared by the public and secret tests ------------------------------------------
def assert_gradients(run: PipelineRun) -> None:
    __tracebackhide__ = True
    problems = gradient_problems(run)
    assert not problems, say(
        f"p={run.p} stages, m={run.M} micro-batches: the summed micro-batch gradients must equal "
        f"the full-batch gradient (atol = rtol = 1e-10), but these differ:",
        zh=f"p={run.p} 个 stage，m={run.M} 个微批次：各微批次的梯度之和必须等于整个批次的梯度"
        f"（atol = rtol = 1e-10），但这些不同：") + "\n" + "\n".join(problems)


def assert_loss(run: PipelineRun) -> None:
    __tracebackhide__ = True
    p, M = run.p, run.M
    ref, _ = full_batch_reference(run.params, run.x, run.y)
    got = run.loss
    assert isinstance(got, float), say(
        f"p={p}, m={M}: the last rank's stage_loop must return the loss as a float "
        f"(the sum over micro-batches of mse / m), got {'None' if got is None else 'a ' + type(got).__name__}",
        zh=f"p={p}, m={M}：最后一个 rank 的 stage_loop 必须以 float 返回损失（各微批次 mse / m 之和），"
        f"实际得到 {'None' if got is None else type(got).__name__}")
    got = float(got)
    hint = ""
    if M > 1 and abs(got - M * ref) <= 1e-10 * abs(M * ref):
        hint = say(f" That is m = {M} times too large: divide each micro-batch's loss by m.",
                   zh=f"大了 m = {M} 倍：把每个微批次的损失除以 m。")
    assert abs(got - ref) <= 1e-10 + 1e-10 * abs(ref), say(
        f"p={p}, m={M}: expected the full-batch mean squared error {ref:.10g}, got {got:.10g}.{hint}",
        zh=f"p={p}, m={M}：预期整个批次的均方误差 {ref:.10g}，实际 {got:.10g}。{hint}")


def assert_order(run: PipelineRun) -> None:
    __tracebackhide__ = True
    p, M = run.p, run.M
    for s, comm in enumerate(run.world.ranks):
        got, want = comm.order(), expected_order(p, s, M)
        if got == want:
            continue
        all_gpipe = M > 1 and all(is_gpipe_order(c.order(), M) for c in run.world.ranks)
        if all_gpipe and p < M:  # for m <= p a warm-up one too long is GPipe's order too: no claim then
            why = say("that is GPipe's order: 1F1B starts backwards as soon as the pipeline is full",
                      zh="这是 GPipe 的顺序：1F1B 在流水线灌满后立刻开始反向")
        elif [o[0] for o in got] == [o[0] for o in want]:
            why = say("the F/B pattern is right but the micro-batches are not: backwards run in "
                      "micro-batch order 0, 1, 2, ..., each with the oldest activation still saved",
                      zh="F/B 的排列是对的，但微批次不对：反向按微批次顺序 0, 1, 2, ... 运行，"
                      "每次用仍保存着的最早的激活")
        else:
            warm = next((i for i, o in enumerate(got) if o.startswith("B")), len(got))
            wanted = min(p - s - 1, M)
            first = f"F{wanted}" if wanted < M else None  # the steady state's first forward, before B0
            lead = wanted + (first is not None)
            off = "" if all_gpipe else _off_by_one(warm - lead)
            if warm != lead:
                why = say(f"stage {s} should run min(p - s - 1, m) = {wanted} warm-up forward{'' if wanted == 1 else 's'}"
                          + (f", then {first}, before its first backward" if first else " before its first backward")
                          + f" ({lead} forwards first; yours ran {warm}{off}), then alternate one "
                          f"forward and one backward, then drain the remaining backwards",
                          zh=f"stage {s} 应先运行 min(p - s - 1, m) = {wanted} 个预热前向"
                          + (f"，再运行 {first}，然后才是它的第一个反向" if first else "，然后才是它的第一个反向")
                          + f"（先 {lead} 个前向；你的运行了 {warm} 个{off}），然后交替一个前向和一个反向，"
                          f"最后排空剩下的反向")
            else:
                why = say(f"the warm-up is right ({lead} forwards first); after it, alternate one forward and one "
                          f"backward, then drain the remaining backwards",
                          zh=f"预热是对的（先 {lead} 个前向）；之后交替一个前向和一个反向，最后排空剩下的反向")
        pytest.fail(say(f"p={p}, m={M}, stage {s}: expected {fmt(want)}, got {fmt(got)} ({why})",
                        zh=f"p={p}, m={M}, stage {s}：预期 {fmt(want)}，实际 {fmt(got)}（{why}）"),
                    pytrace=False)


def order_peak(order: list[str]) -> int:
    """The most micro-batches between their forward and their backward that an order implies."""
    live = peak = 0
    for op in order:
        live += 1 if op.startswith("F") else -1
        peak = max(peak, live)
    return peak


def assert_memory(run: PipelineRun) -> None:
    __tracebackhide__ = True
    p, M = run.p, run.M
    assert_complete(run, say("the activation memory", zh="激活显存"))
    for s, comm in enumerate(run.world.ranks):
        if comm.peak_live > p - s:
            order = comm.order()
            needed = order_peak(order)
            if needed > p - s:  # the order itself keeps that many forwards waiting: the cause is the order
                gpipe = is_gpipe_order(order, M) and M > 1
                why = say(f"your order {fmt(order)} itself has {needed} forwards waiting for their backward at once"
                          + (" (that is GPipe's order)" if gpipe else "")
                          + f": run min(p - s - 1, m) = {min(p - s - 1, M)} warm-up forwards, then alternate one "
                          f"forward and one backward",
                          zh=f"你的顺序 {fmt(order)} 本身就有 {needed} 个前向同时在等它们的反向"
                          + ("（这是 GPipe 的顺序）" if gpipe else "")
                          + f"：先运行 min(p - s - 1, m) = {min(p - s - 1, M)} 个预热前向，然后交替一个前向和一个反向")
            else:  # the order allows p - s, so activations stay saved after their backward
                why = say("your order never needs more than that, so activations stay in comm.stash after their "
                          "backward: free each activation when its backward is done, act = comm.stash.pop(mb)",
                          zh="你的顺序从不需要更多，所以是激活在它的反向之后仍留在 comm.stash 中："
                          "每个激活在它的反向完成后就释放，act = comm.stash.pop(mb)")
            raise AssertionError(say(
                f"p={p}, m={M}: stage {s} held {comm.peak_live} activations at once; 1F1B needs at most "
                f"p - s = {p - s} (its warm-up forwards plus the one in flight); {why}.",
                zh=f"p={p}, m={M}：stage {s} 同时保存了 {comm.peak_live} 份激活；1F1B 最多需要 "
                f"p - s = {p - s} 份（预热的前向加上正在进行的一个）；{why}。"))
        assert len(comm.stash) == 0, say(
            f"p={p}, m={M}: after the step, stage {s} still holds the activations of micro-batches "
            f"{sorted(comm.stash, key=repr)}; take each one out of comm.stash for its backward "
            f"(act = comm.stash.pop(mb)).",
            zh=f"p={p}, m={M}：这一步结束后，stage {s} 仍保存着微批次 {sorted(comm.stash, key=repr)} 的激活；"
            f"在每个反向时把它从 comm.stash 中取出（act = comm.stash.pop(mb)）。")


def _where(comm: p2p.Comm, record: CommRecord) -> str:
    k = record.computes_before
    if k:
        return say(f"after {comm.trace[k - 1]}", zh=f"在 {comm.trace[k - 1]} 之后")
    return say("before any compute", zh="在任何计算之前")


def _sends(log: list[CommRecord], dst: int) -> list[CommRecord]:
    return [r for r in log if r.kind in ("send", "isend") and r.peer == dst]


def _recvs(log: list[CommRecord], src: int) -> list[CommRecord]:
    return [r for r in log if r.kind == "recv" and r.peer == src]


def message_counts(run: PipelineRun) -> list[str]:
    """Sentences naming each rank that did not send (or receive) one message per micro-batch and link."""
    p, M = run.p, run.M
    found = []
    for s, log in enumerate(run.logs):
        for peer, what, needed in ((s + 1, "activation", s < p - 1), (s - 1, "gradient", s > 0)):
            if not needed:
                continue
            for verb, got in (("sent", _sends(log, peer)), ("received", _recvs(log, peer))):
                if len(got) != M:
                    direction = "to" if verb == "sent" else "from"
                    found.append(say(f"rank {s} {verb} {len(got)} message(s) {direction} rank {peer}, not m = {M} "
                                     f"(one {what} per micro-batch)",
                                     zh=f"rank {s} {'向' if verb == 'sent' else '从'} rank {peer} "
                                     f"{'发送' if verb == 'sent' else '接收'}了 {len(got)} 条消息，而不是 m = {M} 条"
                                     f"（每个微批次一条{'激活' if what == 'activation' else '梯度'}）"))
    return found


def placement_problems(run: PipelineRun) -> list[str]:
    """Where a rank's messages are not at the compute they belong to: the k-th receive from rank s - 1
    right before the rank's k-th forward, the k-th from rank s + 1 right before its k-th backward, the
    k-th send to rank s + 1 right after its k-th forward, the k-th to rank s - 1 right after its k-th
    backward (one sentence per rank, at its first misplaced message)."""
    p = run.p
    found = []
    for s, (comm, log) in enumerate(zip(run.world.ranks, run.logs)):
        computes = {kind: [i for i, e in enumerate(comm.trace) if e.op == kind] for kind in "FB"}
        rules = []
        if s > 0:
            rules += [(_recvs(log, s - 1), "F", 0, "right before"), (_sends(log, s - 1), "B", 1, "right after")]
        if s < p - 1:
            rules += [(_recvs(log, s + 1), "B", 0, "right before"), (_sends(log, s + 1), "F", 1, "right after")]
        first = None
        for records, kind, offset, rule in rules:
            for k, (record, index) in enumerate(zip(records, computes[kind])):
                if record.computes_before != index + offset and (first is None or record.computes_before < first[0]):
                    name = "forward" if kind == "F" else "backward"
                    first = (record.computes_before, say(
                             f"rank {s} yielded {record.text} {_where(comm, record)}, but it belongs {rule} its "
                             f"{k + 1}{_ordinal(k + 1)} {name}, {comm.trace[index]}",
                             zh=f"rank {s} {_where(comm, record)} yield 了 {record.text}，但它应紧挨在它的第 {k + 1} 个"
                             f"{'前向' if kind == 'F' else '反向'} {comm.trace[index]} "
                             f"{'的前面' if rule == 'right before' else '的后面'}"))
                    break
        if first is not None:
            found.append(first[1])
    return found


def _ordinal(n: int) -> str:
    return "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")


PLACEMENT_RULE = ("receive each message right before the compute that uses it (the activation right before its "
                  "forward, the gradient right before its backward) and send each result right after the compute "
                  "that made it")
PLACEMENT_RULE_ZH = ("每条消息紧挨在用到它的计算之前接收（激活在它的前向之前，梯度在它的反向之前），"
                     "每个结果紧挨在算出它的计算之后发送")


def assert_communication(run: PipelineRun) -> None:
    """The statement's pattern: one message per micro-batch on every link, every send an isend when
    blocking=False (every send a blocking send when blocking=True), and the isend handles waited for
    only at the end, after the last compute operation of the rank."""
    __tracebackhide__ = True
    p, M = run.p, run.M
    assert_complete(run, say("how the ranks communicate", zh="各 rank 如何通信"))
    counts = message_counts(run)
    assert not counts, say(f"p={p}, m={M}: {counts[0]}.", zh=f"p={p}, m={M}：{counts[0]}。")
    for comm in run.world.ranks:
        shown = ", ".join(comm.unwaited[:3]) + (", ..." if len(comm.unwaited) > 3 else "")
        assert not comm.unwaited, say(
            f"p={p}, m={M}: {p2p.unwaited_message(comm.rank, comm.unwaited)}",
            zh=f"p={p}, m={M}：rank {comm.rank} 结束时还有 {len(comm.unwaited)} 个 isend 的 handle 从未等待"
            f"（{shown}）：在程序返回前，用 `yield h.wait()` 或 `yield comm.waitall(handles)` 完成每个非阻塞发送")
    for s, (comm, log) in enumerate(zip(run.world.ranks, run.logs)):
        last = len(comm.trace)
        for record in log:
            if record.kind == "send" and not run.blocking:
                pytest.fail(say(
                    f"p={p}, m={M}: rank {s} yielded the blocking {record.text} {_where(comm, record)}, "
                    f"but blocking=False asks for comm.isend for every send (h = yield comm.isend(dst, x)), "
                    f"activations and gradients alike.",
                    zh=f"p={p}, m={M}：rank {s} {_where(comm, record)} yield 了阻塞的 {record.text}，"
                    f"但 blocking=False 要求每次发送都用 comm.isend（h = yield comm.isend(dst, x)），"
                    f"激活和梯度都一样。"), pytrace=False)
            if record.kind == "isend" and run.blocking:
                pytest.fail(say(
                    f"p={p}, m={M}, blocking=True: rank {s} yielded {record.text} {_where(comm, record)}; "
                    f"with blocking=True every send must be the blocking `yield comm.send(dst, x)`.",
                    zh=f"p={p}, m={M}, blocking=True：rank {s} {_where(comm, record)} yield 了 {record.text}；"
                    f"blocking=True 时每次发送都必须是阻塞的 `yield comm.send(dst, x)`。"),
                    pytrace=False)
            if record.kind == "wait" and record.computes_before < last:
                pytest.fail(say(
                    f"p={p}, m={M}: rank {s} yielded {record.text} {_where(comm, record)}, before its last "
                    f"compute operation {comm.trace[-1]}. The statement: wait for the isend handles only at "
                    f"the end, after the last backward (yield comm.waitall(handles)).",
                    zh=f"p={p}, m={M}：rank {s} {_where(comm, record)} yield 了 {record.text}，在它的最后一个"
                    f"计算操作 {comm.trace[-1]} 之前。题面：只在最后、最后一个反向之后等待 isend 的 handle"
                    f"（yield comm.waitall(handles)）。"), pytrace=False)


def assert_placement(run: PipelineRun) -> None:
    """Every receive right before the compute that uses it, every send right after the compute that
    made it (the statement's rule, which decides who waits for whom)."""
    __tracebackhide__ = True
    assert_complete(run, say("where the messages go", zh="消息放在哪里"))
    counts = message_counts(run)
    assert not counts, say(f"p={run.p}, m={run.M}: {counts[0]}.", zh=f"p={run.p}, m={run.M}：{counts[0]}。")
    problems = placement_problems(run)
    more = len(problems) - 1
    assert not problems, say(
        f"p={run.p}, m={run.M}: {problems[0]}. The statement: {PLACEMENT_RULE}. Where the receives and "
        f"sends go decides which rank waits for which (and whether blocking sends deadlock)."
        + (f"\n(and {more} more rank(s) like it)" if more else ""),
        zh=f"p={run.p}, m={run.M}：{problems[0]}。题面：{PLACEMENT_RULE_ZH}。接收和发送放在哪里，决定了哪个 rank "
        f"等待哪个（以及阻塞发送是否死锁）。" + (f"\n（还有 {more} 个 rank 也是这样）" if more else ""))


def assert_blocking_runs_without_a_cycle(loop: Callable[..., Any], p: int, M: int) -> PipelineRun:
    """With p = 1 or m = 1 the blocking version has nothing to wait for in a cycle: it must run to the
    end and do exactly what blocking=False does."""
    __tracebackhide__ = True
    try:
        run = run_pipeline(loop, p, M, blocking=True)
    except Exception as e:  # noqa: BLE001 - reported to the learner
        pytest.fail(say(
            f"p={p}, m={M}, blocking=True: the run raised {type(e).__name__}: {e}\nWith p = 1 or m = 1 "
            f"no two ranks wait for each other, so the blocking version must finish like blocking=False "
            f"(the statement: use comm.send where you would otherwise isend, and change nothing else).",
            zh=f"p={p}, m={M}, blocking=True：运行抛出了 {type(e).__name__}: {e}\np = 1 或 m = 1 时没有两个 rank "
            f"互相等待，所以阻塞版本必须像 blocking=False 一样运行到底（题面：在原本用 isend 的地方用 comm.send，"
            f"其他什么都不改）。"),
            pytrace=False)
    return run


def assert_blocking_deadlocks(loop: Callable[..., Any], p: int, M: int, record_property: Any) -> None:
    __tracebackhide__ = True
    try:
        run = run_pipeline(loop, p, M, blocking=True)
    except p2p.DeadlockError as e:
        record_property("timeline", world_timeline(
            e.world, f"blocking sends, p={p}, m={M}: the compute done before the deadlock", deadlocked=True))
        msg = str(e)
        assert "send(to=" in msg, say(
            f"p={p}, m={M}: with blocking=True the deadlock should come from blocking sends, but "
            f"no rank is blocked in a send:\n{msg}",
            zh=f"p={p}, m={M}：blocking=True 时死锁应来自阻塞发送，但没有 rank 阻塞在发送中：\n{msg}")
        return
    record_property("timeline", world_timeline(run.world, f"blocking sends, p={p}, m={M}"))
    pytest.fail(say(
        f"p={p}, m={M}: with blocking=True (every send a blocking comm.send, where the non-blocking loop "
        f"puts its isend) the 1F1B loop should deadlock, but it finished. {_why_no_deadlock(run)}",
        zh=f"p={p}, m={M}：blocking=True 时（每次发送都是阻塞的 comm.send，放在非阻塞循环放 isend 的地方），"
        f"1F1B 循环应该死锁，但它运行完了。{_why_no_deadlock(run)}"),
        pytrace=False)


def _why_no_deadlock(run: PipelineRun) -> str:
    """Why a blocking run finished: only what the run shows (isends, misplaced messages, another order)."""
    p, M = run.p, run.M
    for s, (comm, log) in enumerate(zip(run.world.ranks, run.logs)):
        isend = next((r for r in log if r.kind == "isend"), None)
        if isend is not None:
            return say(f"Rank {s} yielded {isend.text} {_where(comm, isend)}: with blocking=True every send must be "
                       f"the blocking `yield comm.send(dst, x)`.",
                       zh=f"rank {s} {_where(comm, isend)} yield 了 {isend.text}：blocking=True 时每次发送都必须是"
                       f"阻塞的 `yield comm.send(dst, x)`。")
    orders = [comm.order() for comm in run.world.ranks]
    wanted = [expected_order(p, s, M) for s in range(p)]
    if orders != wanted:
        if all(is_gpipe_order(order, M) for order in orders):
            return say("Your order is GPipe's: with all forwards before any backward, blocking sends do not "
                       "deadlock; 1F1B's interleaving of forwards and backwards is what does.",
                       zh="你的顺序是 GPipe 的：所有前向都在反向之前时，阻塞发送不会死锁；"
                       "会死锁的是 1F1B 中前向和反向的交替。")
        s = next(s for s in range(p) if orders[s] != wanted[s])
        return say(f"Your order is not 1F1B's (stage {s}: expected {fmt(wanted[s])}, got {fmt(orders[s])}); the "
                   f"deadlock comes from 1F1B's order.",
                   zh=f"你的顺序不是 1F1B 的（stage {s}：预期 {fmt(wanted[s])}，实际 {fmt(orders[s])}）；"
                   f"死锁来自 1F1B 的顺序。")
    problems = placement_problems(run) or message_counts(run)
    if problems:
        return say(f"Your messages are not where the statement puts them: {problems[0]}. The statement: "
                   f"{PLACEMENT_RULE}; a message moved elsewhere changes who waits for whom, and here it lets "
                   f"the blocking sends complete.",
                   zh=f"你的消息不在题面规定的位置：{problems[0]}。题面：{PLACEMENT_RULE_ZH}；消息挪到别处会改变"
                   f"谁等待谁，这里它让阻塞发送得以完成。")
    return say("Your order is 1F1B's and every send is blocking: compare where your loop sends, receives and "
               "waits with the statement's loop.",
               zh="你的顺序是 1F1B 的，每次发送也都是阻塞的：把你的循环在哪里发送、接收和等待与题面的循环对照一下。")


def _off_by_one(extra: int) -> str:
    """The diagnosis when the warm-up count is off by exactly one (checked: the counts are compared)."""
    if extra == 1:
        return say(": the warm-up count is one over", zh="：预热数量多了一个")
    if extra == -1:
        return say(": the warm-up count is one short", zh="：预热数量少了一个")
    return ""
