"""Part 1: the backward of a Linear layer splits into B (input gradient) and W (weight gradient)."""

import numpy as np
import pytest
import zb_helpers as H
import zb_mlp
import zero_bubble


def _max_err(a, b) -> float:
    return float(np.max(np.abs(np.asarray(a, dtype=np.float64) - b)))


def test_backward_input():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(3, 5))
    w = rng.normal(size=(5, 4))
    g = rng.normal(size=(3, 4))
    got = zero_bubble.backward_input(g, w)
    assert np.shape(got) == x.shape, f"backward_input should return the shape of x {list(x.shape)}, got {list(np.shape(got))}"
    # d/dx of sum(g * (x @ w + b)) is g @ w.T; check it entry by entry against the definition
    want = np.zeros_like(x)
    for r in range(3):
        for c in range(5):
            want[r, c] = sum(g[r, j] * w[c, j] for j in range(4))
    err = _max_err(got, want)
    assert err < 1e-12, f"backward_input: max abs error {err:.3g}; for z = x @ W + b the input gradient is grad_z @ W.T"


def test_backward_weight():
    rng = np.random.default_rng(2)
    x = rng.normal(size=(3, 5))
    g = rng.normal(size=(3, 4))
    result = zero_bubble.backward_weight(g, x)
    assert isinstance(result, tuple) and len(result) == 2, "backward_weight should return a pair (grad_weight, grad_bias)"
    gw, gb = result
    assert np.shape(gw) == (5, 4), f"grad_weight should have the weight's shape [5, 4], got {list(np.shape(gw))}"
    assert np.shape(gb) == (4,), f"grad_bias should have the bias's shape [4], got {list(np.shape(gb))}"
    want_w = sum(np.outer(x[r], g[r]) for r in range(3))
    want_b = g[0] + g[1] + g[2]
    err_w, err_b = _max_err(gw, want_w), _max_err(gb, want_b)
    assert err_w < 1e-12, f"grad_weight: max abs error {err_w:.3g}; it is x.T @ grad_z (summed over the rows of the micro-batch)"
    assert err_b < 1e-12, f"grad_bias: max abs error {err_b:.3g}; it is grad_z summed over the rows"


def test_stage_backward_b_and_w():
    stages, xs, targets = H.make_problem(seed=3, p=1, m=1, width=4, rows=3, layers_per_stage=3)
    out, saved = zb_mlp.stage_forward(stages[0], xs[0])
    _, g = zb_mlp.loss_and_grad(out, targets[0])
    want_grads, _, want_in = H.reference_grads(stages, xs, targets)
    result = zero_bubble.stage_backward_b(stages[0], saved, g)
    assert isinstance(result, tuple) and len(result) == 2, "stage_backward_b should return (grad_in, w_state)"
    grad_in, w_state = result
    err = _max_err(grad_in, want_in[0])
    assert err < 1e-12, f"stage_backward_b: the input gradient is off by {err:.3g}; go through the layers in reverse: tanh_backward, then backward_input"
    assert len(w_state) == 3, f"w_state should have one (x_in, grad_z) pair per layer (3), got {len(w_state)}"
    for k in range(3):
        err = _max_err(w_state[k][0], saved[k][0])
        assert err == 0.0, f"w_state[{k}][0] should be layer {k}'s input x_in from `saved` (max abs difference {err:.3g})"
    w_grads = zero_bubble.stage_backward_w(w_state)
    problem = H.grads_mismatch([w_grads], want_grads)
    assert problem is None, f"stage_backward_w(stage_backward_b(...)[1]) gives the wrong weight gradients: {problem}"


def test_run_schedule_fused_order_matches_backprop():
    p, m = 3, 4
    stages, xs, targets = H.make_problem(seed=4, p=p, m=m)
    want, want_loss, _ = H.reference_grads(stages, xs, targets)
    sched = H.w_right_after_b(H.one_f_one_b(p, m))
    grads, loss = H.run_watched(stages, xs, targets, sched, "1F1B with W right after each B")
    assert abs(float(loss) - want_loss) < 1e-12, f"loss: expected {want_loss:.12g}, got {float(loss):.12g}"
    problem = H.grads_mismatch(grads, want)
    assert problem is None, (f"1F1B with W right after each B gives the wrong gradients: {problem}."
                             + H.grads_hint(stages, xs, targets, sched, grads))


@pytest.mark.parametrize("name", ["zb-h1", "all W at the end"])
def test_deferred_w_leaves_gradients_unchanged(name):
    p, m = 3, 4
    stages, xs, targets = H.make_problem(seed=5, p=p, m=m)
    fused, fused_loss = H.run_watched(stages, xs, targets, H.w_right_after_b(H.one_f_one_b(p, m)),
                                      "1F1B with W right after each B")
    sched = H.zb_h1(p, m) if name == "zb-h1" else H.w_at_end(H.one_f_one_b(p, m))
    grads, loss = H.run_watched(stages, xs, targets, sched, f"the schedule ({name})")
    want, _, _ = H.reference_grads(stages, xs, targets)
    problem = H.grads_mismatch(grads, want)
    assert problem is None, (f"schedule ({name}):\n{H.fmt_sched(sched)}\ngives the wrong gradients: {problem}."
                             + H.grads_hint(stages, xs, targets, sched, grads))
    problem = H.grads_mismatch(grads, [[(np.asarray(a), np.asarray(b)) for a, b in st] for st in fused])
    assert problem is None, f"deferring W changed the accumulated gradients versus W right after B: {problem}"
    assert abs(float(loss) - float(fused_loss)) < 1e-12, "the loss should not depend on when W runs"


def test_b_alone_feeds_the_previous_stage():
    # GPipe-like order with every W after every B of its stage: stage s-1's B's all run before stage
    # s runs any W, so the gradient sent back must come from B alone.
    p, m = 3, 3
    stages, xs, targets = H.make_problem(seed=6, p=p, m=m)
    sched = [[("F", i) for i in range(m)] + [("B", i) for i in range(m)] + [("W", i) for i in range(m)] for _ in range(p)]
    grads, _ = H.run_watched(stages, xs, targets, sched, "all F, then all B, then all W on every stage")
    want, _, _ = H.reference_grads(stages, xs, targets)
    problem = H.grads_mismatch(grads, want)
    assert problem is None, (f"all F, then all B, then all W on every stage gives the wrong gradients: {problem}."
                             + H.grads_hint(stages, xs, targets, sched, grads))


@pytest.mark.parametrize("p,m,seed", [(1, 5, 0), (2, 4, 1), (3, 3, 2), (4, 3, 8)])
def test_run_schedule_random_orders(p, m, seed):
    """Any valid order gives backprop's gradients: each stage runs its ops in list order, as soon as their inputs are ready."""
    stages, xs, targets = H.make_problem(seed=20 + seed, p=p, m=m)
    sched = H.random_valid_schedule(p, m, seed)
    want, want_loss, _ = H.reference_grads(stages, xs, targets)
    grads, loss = H.run_watched(stages, xs, targets, sched, f"a random valid order (p={p}, m={m})")
    problem = H.grads_mismatch(grads, want)
    assert problem is None, (f"run_schedule on a random valid order:\n{H.fmt_sched(sched)}\ngives the wrong gradients: "
                             f"{problem}." + H.grads_hint(stages, xs, targets, sched, grads))
    assert abs(float(loss) - want_loss) < 1e-12, f"loss: expected {want_loss:.12g}, got {float(loss):.12g}"


def _expect_value_error(sched, m: int, why: str) -> None:
    """run_schedule on a 2-stage model with ``m`` micro-batches and ``sched`` must raise ValueError."""
    __tracebackhide__ = True
    stages, xs, targets = H.make_problem(seed=7, p=2, m=m)
    try:
        got = zero_bubble.run_schedule(stages, xs, targets, sched)
    except ValueError:
        return
    except Exception as exc:  # noqa: BLE001 - reported to the learner
        what = f"raised {type(exc).__name__}: {exc}"
    else:
        what = f"returned {type(got).__name__} {str(got)[:80]}"
    raise AssertionError(f"run_schedule on a 2-stage model with {m} micro-batch(es) and the schedule\n"
                         f"{H.fmt_sched(sched)}\nshould raise ValueError ({why}), but it {what}.")


@pytest.mark.parametrize("sched, why", [
    ([[("F", 0), ("W", 0), ("B", 0)], [("F", 0), ("B", 0), ("W", 0)]], "stage 0's W0 waits for its B0, listed after it"),
    ([[("F", 0), ("B", 0), ("F", 1), ("B", 1), ("W", 0), ("W", 1)], [("F", 1), ("F", 0), ("B", 0), ("B", 1), ("W", 0), ("W", 1)]],
     "stage 1 waits for F1, which stage 0 runs after B0, which waits for stage 1's B0"),
], ids=["W before its B", "stages wait for each other"])
def test_run_schedule_rejects_deadlock(sched, why):
    """The statement: ValueError when no stage can make progress before all ops have run."""
    _expect_value_error(sched, max(i for ops in sched for _, i in ops) + 1,
                        why + ": no stage can make progress before all ops have run")


FULL = [("F", 0), ("B", 0), ("W", 0), ("F", 1), ("B", 1), ("W", 1)]


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
    _expect_value_error(sched, 2, why)


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
    assert not bad, ("stage_backward_b called backward_weight: B computes no weight gradient; the weight "
                     "gradients are stage_backward_w's job, when the schedule runs W")
    got = [c for c in calls if c in ("B", "W")]
    want = ["B", "B", "B", "W", "W", "W"]
    if got == want:
        problem = H.grads_mismatch(grads, H.reference_grads(stages, xs, targets)[0])
        assert problem is None, (f"run_schedule on one stage with the ops {H.fmt(sched[0])} gives the wrong gradients: "
                                 f"{problem}." + H.grads_hint(stages, xs, targets, sched, grads))
        return
    hint = ""
    if got == ["B", "W", "B", "W", "B", "W"]:
        hint = (" Each stage_backward_w call comes right after its stage_backward_b although every W is listed after "
                "all the B's: your run_schedule runs the weight pass at B time and only adds it in at W.")
    raise AssertionError(
        f"run_schedule on one stage with the ops {H.fmt(sched[0])} should call stage_backward_b for each B and "
        f"stage_backward_w for each W, in that order: B B B W W W (B for stage_backward_b, W for "
        f"stage_backward_w); it called {' '.join(got) or 'neither'}.{hint}")
