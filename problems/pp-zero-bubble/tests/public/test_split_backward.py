"""Part 1: the backward of a Linear layer splits into B (input gradient) and W (weight gradient)."""

import numpy as np
import pytest
import zb_helpers as H
import zb_mlp
import zero_bubble

from judge.lang import say


def _max_err(a, b) -> float:
    return float(np.max(np.abs(np.asarray(a, dtype=np.float64) - b)))


@pytest.mark.title(zh="输入梯度（B）")
def test_backward_input():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(3, 5))
    w = rng.normal(size=(5, 4))
    g = rng.normal(size=(3, 4))
    got = zero_bubble.backward_input(g, w)
    assert np.shape(got) == x.shape, say(f"backward_input should return the shape of x {list(x.shape)}, got {list(np.shape(got))}",
                                         zh=f"backward_input 应返回 x 的形状 {list(x.shape)}，实际 {list(np.shape(got))}")
    # d/dx of sum(g * (x @ w + b)) is g @ w.T; check it entry by entry against the definition
    want = np.zeros_like(x)
    for r in range(3):
        for c in range(5):
            want[r, c] = sum(g[r, j] * w[c, j] for j in range(4))
    err = _max_err(got, want)
    assert err < 1e-12, say(f"backward_input: max abs error {err:.3g}; for z = x @ W + b the input gradient is grad_z @ W.T",
                            zh=f"backward_input：最大绝对误差 {err:.3g}；对 z = x @ W + b，输入梯度是 grad_z @ W.T")


@pytest.mark.title(zh="参数梯度（W）")
def test_backward_weight():
    rng = np.random.default_rng(2)
    x = rng.normal(size=(3, 5))
    g = rng.normal(size=(3, 4))
    result = zero_bubble.backward_weight(g, x)
    assert isinstance(result, tuple) and len(result) == 2, say("backward_weight should return a pair (grad_weight, grad_bias)",
                                                               zh="backward_weight 应返回一个二元组 (grad_weight, grad_bias)")
    gw, gb = result
    assert np.shape(gw) == (5, 4), say(f"grad_weight should have the weight's shape [5, 4], got {list(np.shape(gw))}",
                                       zh=f"grad_weight 应与权重形状相同 [5, 4]，实际 {list(np.shape(gw))}")
    assert np.shape(gb) == (4,), say(f"grad_bias should have the bias's shape [4], got {list(np.shape(gb))}",
                                     zh=f"grad_bias 应与偏置形状相同 [4]，实际 {list(np.shape(gb))}")
    want_w = sum(np.outer(x[r], g[r]) for r in range(3))
    want_b = g[0] + g[1] + g[2]
    err_w, err_b = _max_err(gw, want_w), _max_err(gb, want_b)
    assert err_w < 1e-12, say(f"grad_weight: max abs error {err_w:.3g}; it is x.T @ grad_z (summed over the rows of the micro-batch)",
                              zh=f"grad_weight：最大绝对误差 {err_w:.3g}；它是 x.T @ grad_z（对微批次的各行求和）")
    assert err_b < 1e-12, say(f"grad_bias: max abs error {err_b:.3g}; it is grad_z summed over the rows",
                              zh=f"grad_bias：最大绝对误差 {err_b:.3g}；它是 grad_z 对各行求和")


@pytest.mark.title(zh="一个 stage 的 B 和 W")
def test_stage_backward_b_and_w():
    stages, xs, targets = H.make_problem(seed=3, p=1, m=1, width=4, rows=3, layers_per_stage=3)
    out, saved = zb_mlp.stage_forward(stages[0], xs[0])
    _, g = zb_mlp.loss_and_grad(out, targets[0])
    want_grads, _, want_in = H.reference_grads(stages, xs, targets)
    result = zero_bubble.stage_backward_b(stages[0], saved, g)
    assert isinstance(result, tuple) and len(result) == 2, say("stage_backward_b should return (grad_in, w_state)",
                                                               zh="stage_backward_b 应返回 (grad_in, w_state)")
    grad_in, w_state = result
    err = _max_err(grad_in, want_in[0])
    assert err < 1e-12, say(f"stage_backward_b: the input gradient is off by {err:.3g}; go through the layers in reverse: tanh_backward, then backward_input",
                            zh=f"stage_backward_b：输入梯度偏差 {err:.3g}；按相反的顺序经过各层：先 tanh_backward，"
                               f"再 backward_input")
    assert len(w_state) == 3, say(f"w_state should have one (x_in, grad_z) pair per layer (3), got {len(w_state)}",
                                  zh=f"w_state 应每层有一个 (x_in, grad_z) 对（3 个），实际 {len(w_state)} 个")
    for k in range(3):
        err = _max_err(w_state[k][0], saved[k][0])
        assert err == 0.0, say(f"w_state[{k}][0] should be layer {k}'s input x_in from `saved` (max abs difference {err:.3g})",
                               zh=f"w_state[{k}][0] 应是 `saved` 中第 {k} 层的输入 x_in（最大绝对差 {err:.3g}）")
    w_grads = zero_bubble.stage_backward_w(w_state)
    problem = H.grads_mismatch([w_grads], want_grads)
    assert problem is None, say(f"stage_backward_w(stage_backward_b(...)[1]) gives the wrong weight gradients: {problem}",
                                zh=f"stage_backward_w(stage_backward_b(...)[1]) 给出的参数梯度不对：{problem}")


@pytest.mark.title(zh="run_schedule：融合的顺序与反向传播一致")
def test_run_schedule_fused_order_matches_backprop():
    p, m = 3, 4
    stages, xs, targets = H.make_problem(seed=4, p=p, m=m)
    want, want_loss, _ = H.reference_grads(stages, xs, targets)
    sched = H.w_right_after_b(H.one_f_one_b(p, m))
    grads, loss = H.run_watched(stages, xs, targets, sched, say("1F1B with W right after each B",
                                                                zh="每个 B 之后紧跟 W 的 1F1B"))
    assert abs(float(loss) - want_loss) < 1e-12, say(f"loss: expected {want_loss:.12g}, got {float(loss):.12g}",
                                                     zh=f"损失：预期 {want_loss:.12g}，实际 {float(loss):.12g}")
    problem = H.grads_mismatch(grads, want)
    hint = H.grads_hint(stages, xs, targets, sched, grads) if problem is not None else ""
    assert problem is None, say(f"1F1B with W right after each B gives the wrong gradients: {problem}." + hint,
                                zh=f"每个 B 之后紧跟 W 的 1F1B 给出的梯度不对：{problem}。" + hint)


@pytest.mark.title(zh="推迟的 W 不改变梯度")
@pytest.mark.parametrize("name", ["zb-h1", "all W at the end"])
def test_deferred_w_leaves_gradients_unchanged(name):
    p, m = 3, 4
    stages, xs, targets = H.make_problem(seed=5, p=p, m=m)
    fused, fused_loss = H.run_watched(stages, xs, targets, H.w_right_after_b(H.one_f_one_b(p, m)),
                                      say("1F1B with W right after each B", zh="每个 B 之后紧跟 W 的 1F1B"))
    sched = H.zb_h1(p, m) if name == "zb-h1" else H.w_at_end(H.one_f_one_b(p, m))
    grads, loss = H.run_watched(stages, xs, targets, sched, say(f"the schedule ({name})", zh=f"调度（{name}）"))
    want, _, _ = H.reference_grads(stages, xs, targets)
    problem = H.grads_mismatch(grads, want)
    hint = H.grads_hint(stages, xs, targets, sched, grads) if problem is not None else ""
    assert problem is None, say(f"schedule ({name}):\n{H.fmt_sched(sched)}\ngives the wrong gradients: {problem}." + hint,
                                zh=f"调度（{name}）：\n{H.fmt_sched(sched)}\n给出的梯度不对：{problem}。" + hint)
    problem = H.grads_mismatch(grads, [[(np.asarray(a), np.asarray(b)) for a, b in st] for st in fused])
    assert problem is None, say(f"deferring W changed the accumulated gradients versus W right after B: {problem}",
                                zh=f"推迟 W 改变了累加的梯度（与 B 之后紧跟 W 相比）：{problem}")
    assert abs(float(loss) - float(fused_loss)) < 1e-12, say("the loss should not depend on when W runs",
                                                             zh="损失不应取决于 W 何时运行")


@pytest.mark.title(zh="只靠 B 就能把梯度传给上一个 stage")
def test_b_alone_feeds_the_previous_stage():
    # GPipe-like order with every W after every B of its stage: stage s-1's B's all run before stage
    # s runs any W, so the gradient sent back must come from B alone.
    p, m = 3, 3
    stages, xs, targets = H.make_problem(seed=6, p=p, m=m)
    sched = [[("F", i) for i in range(m)] + [("B", i) for i in range(m)] + [("W", i) for i in range(m)] for _ in range(p)]
    grads, _ = H.run_watched(stages, xs, targets, sched, say("all F, then all B, then all W on every stage",
                                                             zh="每个 stage 上先全部 F，再全部 B，再全部 W"))
    want, _, _ = H.reference_grads(stages, xs, targets)
    problem = H.grads_mismatch(grads, want)
    hint = H.grads_hint(stages, xs, targets, sched, grads) if problem is not None else ""
    assert problem is None, say(f"all F, then all B, then all W on every stage gives the wrong gradients: {problem}." + hint,
                                zh=f"每个 stage 上先全部 F，再全部 B，再全部 W，给出的梯度不对：{problem}。" + hint)


@pytest.mark.title(zh="任何合法顺序都得到反向传播的梯度：每个 stage 按列表顺序运行操作，输入一就绪就运行")
@pytest.mark.parametrize("p,m,seed", [(1, 5, 0), (2, 4, 1), (3, 3, 2), (4, 3, 8)])
def test_run_schedule_random_orders(p, m, seed):
    """Any valid order gives backprop's gradients: each stage runs its ops in list order, as soon as their inputs are ready."""
    stages, xs, targets = H.make_problem(seed=20 + seed, p=p, m=m)
    sched = H.random_valid_schedule(p, m, seed)
    want, want_loss, _ = H.reference_grads(stages, xs, targets)
    grads, loss = H.run_watched(stages, xs, targets, sched, say(f"a random valid order (p={p}, m={m})",
                                                                zh=f"一个随机的有效顺序（p={p}、m={m}）"))
    problem = H.grads_mismatch(grads, want)
    hint = H.grads_hint(stages, xs, targets, sched, grads) if problem is not None else ""
    assert problem is None, say(f"run_schedule on a random valid order:\n{H.fmt_sched(sched)}\ngives the wrong gradients: "
                                f"{problem}." + hint,
                                zh=f"run_schedule 在一个随机的有效顺序上：\n{H.fmt_sched(sched)}\n给出的梯度不对："
                                   f"{problem}。" + hint)
    assert abs(float(loss) - want_loss) < 1e-12, say(f"loss: expected {want_loss:.12g}, got {float(loss):.12g}",
                                                     zh=f"损失：预期 {want_loss:.12g}，实际 {float(loss):.12g}")


def _expect_value_error(sched, m: int, why: str, why_zh: str = "") -> None:
    """run_schedule on a 2-stage model with ``m`` micro-batches and ``sched`` must raise ValueError."""
    __tracebackhide__ = True
    stages, xs, targets = H.make_problem(seed=7, p=2, m=m)
    try:
        got = zero_bubble.run_schedule(stages, xs, targets, sched)
    except ValueError:
        return
    except Exception as exc:  # noqa: BLE001 - reported to the learner
        what = f"raised {type(exc).__name__}: {exc}"
        what_zh = f"抛出了 {type(exc).__name__}: {exc}"
    else:
        what = f"returned {type(got).__name__} {str(got)[:80]}"
        what_zh = f"返回了 {type(got).__name__} {str(got)[:80]}"
    raise AssertionError(say(f"run_schedule on a 2-stage model with {m} micro-batch(es) and the schedule\n"
                             f"{H.fmt_sched(sched)}\nshould raise ValueError ({why}), but it {what}.",
                             zh=f"run_schedule 在一个 2 个 stage、{m} 个微批次的模型和调度\n"
                                f"{H.fmt_sched(sched)}\n上应抛出 ValueError（{why_zh or why}），但它{what_zh}。"))


# the Chinese of each `why` below (picked by the learner's language when the message is built)
WHY_ZH = {
    "stage 0's W0 waits for its B0, listed after it": "stage 0 的 W0 等待它的 B0，而 B0 列在它之后",
    "stage 1 waits for F1, which stage 0 runs after B0, which waits for stage 1's B0":
        "stage 1 等待 F1，stage 0 在 B0 之后才运行 F1，而 B0 等待 stage 1 的 B0",
    "stage 1 has no B1: the schedule is incomplete": "stage 1 没有 B1：调度不完整",
    "stage 1 has no W1: its weight gradient would be missing": "stage 1 没有 W1：它的参数梯度会缺失",
    "stage 1 never runs micro-batch 1": "stage 1 从不运行微批次 1",
    "W1 appears twice on stage 1": "W1 在 stage 1 上出现了两次",
    "F0 appears twice on stage 1, apart": "F0 在 stage 1 上出现了两次，不相邻",
    "'w' is not an op name: ops are 'F', 'B', 'W'": "'w' 不是一个操作名：操作是 'F'、'B'、'W'",
    "'FB' is not an op name": "'FB' 不是一个操作名",
    "micro-batch 2 does not exist: there are 2, numbered 0 and 1": "微批次 2 不存在：共有 2 个，编号为 0 和 1",
    "micro-batch -1 does not exist: there are 2, numbered 0 and 1": "微批次 -1 不存在：共有 2 个，编号为 0 和 1",
    "the model has 2 stages and the schedule 1": "模型有 2 个 stage，而调度只有 1 个",
}


@pytest.mark.title(zh="题面：所有操作运行完之前没有 stage 能前进时，抛出 ValueError")
@pytest.mark.parametrize("sched, why", [
    ([[("F", 0), ("W", 0), ("B", 0)], [("F", 0), ("B", 0), ("W", 0)]], "stage 0's W0 waits for its B0, listed after it"),
    ([[("F", 0), ("B", 0), ("F", 1), ("B", 1), ("W", 0), ("W", 1)], [("F", 1), ("F", 0), ("B", 0), ("B", 1), ("W", 0), ("W", 1)]],
     "stage 1 waits for F1, which stage 0 runs after B0, which waits for stage 1's B0"),
], ids=["W before its B", "stages wait for each other"])
def test_run_schedule_rejects_deadlock(sched, why):
    """The statement: ValueError when no stage can make progress before all ops have run."""
    _expect_value_error(sched, max(i for ops in sched for _, i in ops) + 1,
                        why + ": no stage can make progress before all ops have run",
                        WHY_ZH.get(why, why) + "：在所有操作运行完之前，没有任何 stage 能继续推进")


FULL = [("F", 0), ("B", 0), ("W", 0), ("F", 1), ("B", 1), ("W", 1)]


@pytest.mark.title(zh="题面：每个 stage 必须对每个微批次 i 恰好列出一次 F i、B i 和 W i，不能有别的，否则抛出 ValueError")
@pytest.mark.parametrize("sched, why", [
    ([FULL, [("F", 0), ("B", 0), ("W", 0), ("F", 1), ("W", 1)]], "stage 1 has no B1: the schedule is incomplete"),
    ([FULL, [("F", 0), ("B", 0), ("W", 0), ("F", 1), ("B", 1)]], "stage 1 has no W1: its weight gradient would be missing"),
    ([FULL, [("F", 0), ("B", 0), ("W", 0)]], "stage 1 never runs micro-batch 1"),
    ([FULL, [("F", 0), ("B", 0), ("W", 0), ("F", 1), ("B", 1), ("W", 1), ("W", 1)]], "W1 appears twice on stage 1"),
    ([FULL, [("F", 0), ("B", 0), ("F", 1), ("W", 0), ("B", 1), ("F", 0), ("W", 1)]], "F0 appears twice on stage 1, apart"),
    ([FULL, [("F", 0), ("B", 0), ("w", 0), ("F", 1), ("B", 1), ("W", 1)]], "'w' is not an op name: ops are 'F', 'B', 'W'"),
    ([FULL, [("F", 0), ("B", 0), ("FB", 0), ("W", 0), ("F", 1), ("B", 1), ("W", 1)]], "'FB' is not an op name"),
    ([FULL + [("F", 2), ("B", 2), ("W", 2)], FULL + [("F", 2), ("B", 2), ("W", 2)]],
     "micro-batch 2 does not exist: there are 2, numbered 0 and 1"),
    ([[("F", -1), ("B", -1), ("W", -1)] + FULL[3:], [("F", -1), ("B", -1), ("W", -1)] + FULL[3:]],
     "micro-batch -1 does not exist: there are 2, numbered 0 and 1"),
    ([FULL], "the model has 2 stages and the schedule 1"),
], ids=["stage 1 has no B1", "stage 1 has no W1", "micro-batch missing", "W twice", "F twice, apart", "lowercase w",
        "FB", "micro-batch too large", "negative micro-batch", "too few stages"])
def test_run_schedule_rejects_malformed(sched, why):
    """The statement: ValueError unless every stage lists F i, B i and W i exactly once for each micro-batch i, and nothing else."""
    _expect_value_error(sched, 2, why, WHY_ZH.get(why, ""))


@pytest.mark.title(zh="每个参数梯度在调度走到它的 W 时才计算，而不是在它的 B 时")
def test_w_runs_when_listed(monkeypatch):
    """Each weight pass runs when the schedule reaches its W, not at its B.

    The statement: ("W", i) runs stage_backward_w on the w_state of (s, i), and stage_backward_b
    computes no weight gradient: with every W listed after every B, all the B passes run before any
    W pass."""
    calls: list[str] = []
    inside: list[str] = []
    real = {name: getattr(zero_bubble, name) for name in ("stage_backward_b", "stage_backward_w", "backward_weight")}

    def spy(name, tag):
        def call(*args, **kwargs):
            if tag:
                calls.append(tag)
            else:
                calls.append("backward_weight" + (" inside stage_backward_b" if inside[-1:] == ["B"] else ""))
            inside.append(tag)
            try:
                return real[name](*args, **kwargs)
            finally:
                inside.pop()
        return call

    monkeypatch.setattr(zero_bubble, "stage_backward_b", spy("stage_backward_b", "B"))
    monkeypatch.setattr(zero_bubble, "stage_backward_w", spy("stage_backward_w", "W"))
    monkeypatch.setattr(zero_bubble, "backward_weight", spy("backward_weight", ""))
    stages, xs, targets = H.make_problem(seed=8, p=1, m=3)
    sched = [[("F", 0), ("F", 1), ("F", 2), ("B", 0), ("B", 1), ("B", 2), ("W", 0), ("W", 1), ("W", 2)]]
    grads, _ = zero_bubble.run_schedule(stages, xs, targets, sched)
    monkeypatch.undo()
    bad = [c for c in calls if c.endswith("inside stage_backward_b")]
    assert not bad, say("stage_backward_b called backward_weight: B computes no weight gradient; the weight "
                        "gradients are stage_backward_w's job, when the schedule runs W",
                        zh="stage_backward_b 调用了 backward_weight：B 不计算参数梯度；参数梯度是 stage_backward_w "
                           "的工作，在调度运行 W 时计算")
    got = [c for c in calls if c in ("B", "W")]
    want = ["B", "B", "B", "W", "W", "W"]
    if got == want:
        problem = H.grads_mismatch(grads, H.reference_grads(stages, xs, targets)[0])
        hint = H.grads_hint(stages, xs, targets, sched, grads) if problem is not None else ""
        assert problem is None, say(f"run_schedule on one stage with the ops {H.fmt(sched[0])} gives the wrong gradients: "
                                    f"{problem}." + hint,
                                    zh=f"run_schedule 在操作为 {H.fmt(sched[0])} 的一个 stage 上给出的梯度不对："
                                       f"{problem}。" + hint)
        return
    hint = ""
    if got == ["B", "W", "B", "W", "B", "W"]:
        hint = say(" Each stage_backward_w call comes right after its stage_backward_b although every W is listed after "
                   "all the B's: your run_schedule runs the weight pass at B time and only adds it in at W.",
                   zh=" 每次 stage_backward_w 调用都紧跟在它的 stage_backward_b 之后，尽管每个 W 都列在所有 B 之后："
                      "你的 run_schedule 在 B 时就运行参数梯度的计算，到 W 时才把它加进去。")
    raise AssertionError(say(
        f"run_schedule on one stage with the ops {H.fmt(sched[0])} should call stage_backward_b for each B and "
        f"stage_backward_w for each W, in that order: B B B W W W (B for stage_backward_b, W for "
        f"stage_backward_w); it called {' '.join(got) or 'neither'}.{hint}",
        zh=f"run_schedule 在操作为 {H.fmt(sched[0])} 的一个 stage 上应为每个 B 调用 stage_backward_b，为每个 W "
           f"调用 stage_backward_w，按这个顺序：B B B W W W（B 表示 stage_backward_b，W 表示 "
           f"stage_backward_w）；它调用的是 {' '.join(got) or '两者都没有'}。{hint}"))
