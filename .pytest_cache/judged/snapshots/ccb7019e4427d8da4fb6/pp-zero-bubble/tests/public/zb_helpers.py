"""Helpers for the public pp-zero-bubble tests: schedule checks, baseline schedules (written out), hints, numpy references."""

from __future__ import annotations

import numpy as np
from zb_mlp import init_stages

from judge.lang import say


def fmt(ops) -> str:
    """``[("F", 0), ("B", 0)]`` -> ``"F0 B0"``."""
    try:
        return " ".join(f"{op}{int(i)}" for op, i in ops)
    except (TypeError, ValueError):
        return repr(ops)


def fmt_sched(sched) -> str:
    return "\n".join(f"  stage {s}: {fmt(ops)}" for s, ops in enumerate(sched))


# ---------------------------------------------------------------- baseline schedules (not ZB-H1)

# 1F1B with a fused backward (F and B only), written out: writing 1F1B orders is the problem pp-schedule.
ONE_F_ONE_B = {
    (2, 2): [
        "F0 F1 B0 B1",
        "F0 B0 F1 B1",
    ],
    (3, 6): [
        "F0 F1 F2 B0 F3 B1 F4 B2 F5 B3 B4 B5",
        "F0 F1 B0 F2 B1 F3 B2 F4 B3 F5 B4 B5",
        "F0 B0 F1 B1 F2 B2 F3 B3 F4 B4 F5 B5",
    ],
    (4, 4): [
        "F0 F1 F2 F3 B0 B1 B2 B3",
        "F0 F1 F2 B0 F3 B1 B2 B3",
        "F0 F1 B0 F2 B1 F3 B2 B3",
        "F0 B0 F1 B1 F2 B2 F3 B3",
    ],
    (6, 9): [
        "F0 F1 F2 F3 F4 F5 B0 F6 B1 F7 B2 F8 B3 B4 B5 B6 B7 B8",
        "F0 F1 F2 F3 F4 B0 F5 B1 F6 B2 F7 B3 F8 B4 B5 B6 B7 B8",
        "F0 F1 F2 F3 B0 F4 B1 F5 B2 F6 B3 F7 B4 F8 B5 B6 B7 B8",
        "F0 F1 F2 B0 F3 B1 F4 B2 F5 B3 F6 B4 F7 B5 F8 B6 B7 B8",
        "F0 F1 B0 F2 B1 F3 B2 F4 B3 F5 B4 F6 B5 F7 B6 F8 B7 B8",
        "F0 B0 F1 B1 F2 B2 F3 B3 F4 B4 F5 B5 F6 B6 F7 B7 F8 B8",
    ],
    (3, 4): [
        "F0 F1 F2 B0 F3 B1 B2 B3",
        "F0 F1 B0 F2 B1 F3 B2 B3",
        "F0 B0 F1 B1 F2 B2 F3 B3",
    ],
    (2, 4): [
        "F0 F1 B0 F2 B1 F3 B2 B3",
        "F0 B0 F1 B1 F2 B2 F3 B3",
    ],
    (4, 8): [
        "F0 F1 F2 F3 B0 F4 B1 F5 B2 F6 B3 F7 B4 B5 B6 B7",
        "F0 F1 F2 B0 F3 B1 F4 B2 F5 B3 F6 B4 F7 B5 B6 B7",
        "F0 F1 B0 F2 B1 F3 B2 F4 B3 F5 B4 F6 B5 F7 B6 B7",
        "F0 B0 F1 B1 F2 B2 F3 B3 F4 B4 F5 B5 F6 B6 F7 B7",
    ],
}


def one_f_one_b(p: int, m: int) -> list[list[tuple[str, int]]]:
    """1F1B with a fused backward: only F and B ops (give B the time T_B + T_W). From the table
    ONE_F_ONE_B above; the hidden tests bring their own orders for other sizes."""
    if (p, m) in ONE_F_ONE_B:
        return parse(ONE_F_ONE_B[(p, m)])
    from zb_secret_ref import one_f_one_b as generated  # only present with the hidden tests

    return generated(p, m)


# ZB-H1 orders written out (the statement's worked example and a smaller one), for the simulator's tests:
# they time a given ZB-H1 order, whatever your zb_h1_schedule gives.
ZB_H1 = {
    (4, 8): [
        "F0 F1 F2 F3 B0 W0 F4 B1 W1 F5 B2 W2 F6 B3 W3 F7 B4 W4 B5 W5 B6 W6 B7 W7",
        "F0 F1 F2 B0 F3 B1 W0 F4 B2 W1 F5 B3 W2 F6 B4 W3 F7 B5 W4 B6 W5 B7 W6 W7",
        "F0 F1 B0 F2 B1 F3 B2 W0 F4 B3 W1 F5 B4 W2 F6 B5 W3 F7 B6 W4 B7 W5 W6 W7",
        "F0 B0 F1 B1 F2 B2 F3 B3 W0 F4 B4 W1 F5 B5 W2 F6 B6 W3 F7 B7 W4 W5 W6 W7",
    ],
    (3, 4): [
        "F0 F1 F2 B0 W0 F3 B1 W1 B2 W2 B3 W3",
        "F0 F1 B0 F2 B1 W0 F3 B2 W1 B3 W2 W3",
        "F0 B0 F1 B1 F2 B2 W0 F3 B3 W1 W2 W3",
    ],
    (2, 2): [
        "F0 F1 B0 W0 B1 W1",
        "F0 B0 F1 B1 W0 W1",
    ],
}


def parse(rows) -> list[list[tuple[str, int]]]:
    """``["F0 B0", "F0 B0"]`` -> ``[[("F", 0), ("B", 0)], [("F", 0), ("B", 0)]]``."""
    return [[(word[0], int(word[1:])) for word in text.split()] for text in rows]


def zb_h1(p: int, m: int) -> list[list[tuple[str, int]]]:
    """A ZB-H1 order from the table ZB_H1 above (the hidden tests bring their own for other sizes)."""
    if (p, m) in ZB_H1:
        return parse(ZB_H1[(p, m)])
    from zb_secret_ref import zb_h1_by_keys  # only present with the hidden tests

    return zb_h1_by_keys(p, m)


def random_valid_schedule(p: int, m: int, seed: int) -> list[list[tuple[str, int]]]:
    """A valid schedule in a random order: ops are taken one at a time, at random among those whose
    dependencies are already placed, and each goes to the end of its stage's list."""
    import random

    rnd = random.Random(seed)
    done: set[tuple[str, int, int]] = set()
    sched: list[list[tuple[str, int]]] = [[] for _ in range(p)]
    left = [(op, s, i) for s in range(p) for i in range(m) for op in "FBW"]

    def ready(op: str, s: int, i: int) -> bool:
        if op == "F":
            return s == 0 or ("F", s - 1, i) in done
        if op == "B":
            return ("F", s, i) in done and (s == p - 1 or ("B", s + 1, i) in done)
        return ("B", s, i) in done

    while left:
        op, s, i = rnd.choice([x for x in left if ready(*x)])
        left.remove((op, s, i))
        done.add((op, s, i))
        sched[s].append((op, i))
    return sched


def w_right_after_b(sched):
    """Insert ``W i`` right after every ``B i``: the split backward without any deferral."""
    return [[x for op, i in ops for x in ([(op, i), ("W", i)] if op == "B" else [(op, i)])] for ops in sched]


def w_at_end(sched):
    """Move every W to the end of its stage, in micro-batch order (maximal deferral)."""
    out = []
    for ops in sched:
        body = [(op, i) for op, i in ops if op != "W"]
        out.append(body + [("W", i) for op, i in body if op == "B"])
    return out


# ---------------------------------------------------------------- hints

def every_w_right_after_its_b(sched) -> bool:
    """Whether every ``B i`` of every stage is followed at once by its ``W i`` (W not deferred)."""
    try:
        return all(k + 1 < len(ops) and tuple(ops[k + 1]) == ("W", i)
                   for ops in sched for k, (op, i) in enumerate(ops) if op == "B")
    except (TypeError, ValueError):
        return False


def leading_forwards(ops) -> int:
    n = 0
    while n < len(ops) and ops[n][0] == "F":
        n += 1
    return n


def order_hint(p: int, s: int, m: int, got, want) -> str:
    """The likely mistake in stage s's order, or '' when none is recognised.

    Each diagnosis is stated only when its check holds: the number of forwards before the first B
    differs from ZB-H1's; a W comes before its own B; every W that follows a B is deferred by
    p - 1 - s > 0 instead of s; the order is ZB-H1's with each round's W and F swapped; every W comes
    right after its own B on a stage s > 0 (W not deferred) while the forwards and backwards alone
    are in ZB-H1's order.
    """
    try:
        got = [(str(op), int(i)) for op, i in got]
        want = [(str(op), int(i)) for op, i in want]
    except (TypeError, ValueError):
        return ""
    lead, want_lead = leading_forwards(got), leading_forwards(want)
    if lead != want_lead:
        return say(f" Stage {s} runs {lead} forwards before its first B; ZB-H1, like 1F1B, runs f_s = min(p - s, m) = "
                   f"{want_lead}: w_s = min(p - s - 1, m) warm-up forwards, then the first steady-state forward.",
                   zh=f" stage {s} 在它的第一个 B 之前运行了 {lead} 个前向；ZB-H1 和 1F1B 一样，运行 f_s = min(p - s, m) = "
                      f"{want_lead} 个：w_s = min(p - s - 1, m) 个预热前向，然后是稳定阶段的第一个前向。")
    if sorted(got) != sorted(want):
        return ""
    pos = {op: k for k, op in enumerate(got)}
    early = [i for i in range(m) if pos[("W", i)] < pos[("B", i)]]
    if early:
        return say(f" W{early[0]} comes before its own B{early[0]}: W needs the gradient that B computes, so each "
                   f"round is B i, then W (i - s), then F.",
                   zh=f" W{early[0]} 排在它自己的 B{early[0]} 之前：W 需要 B 算出的梯度，所以每一轮是 B i，"
                      f"然后 W (i - s)，然后 F。")

    def deferrals(ops) -> set[int]:  # i - j for every W j that comes right after a B i
        return {ops[k - 1][1] - i for k, (op, i) in enumerate(ops) if op == "W" and k and ops[k - 1][0] == "B"}

    if 0 < p - 1 - s != s and deferrals(got) == {p - 1 - s} and deferrals(want) == {s}:
        return say(f" Stage {s} runs W (i - {p - 1 - s}) after B i, deferring its W's by p - 1 - s = {p - 1 - s}; ZB-H1 "
                   f"defers them by s = {s}: the first stage not at all, the last stage the most.",
                   zh=f" stage {s} 在 B i 之后运行 W (i - {p - 1 - s})，把它的 W 推迟了 p - 1 - s = {p - 1 - s}；ZB-H1 "
                      f"把它们推迟 s = {s}：第一个 stage 完全不推迟，最后一个 stage 推迟得最多。")
    swapped = list(want)  # each round's F before its W: B i, F, W instead of B i, W, F
    for k in range(len(swapped) - 2):
        if swapped[k][0] == "B" and swapped[k + 1][0] == "W" and swapped[k + 2][0] == "F":
            swapped[k + 1], swapped[k + 2] = swapped[k + 2], swapped[k + 1]
    if swapped != want and got == swapped:
        return say(" Each round runs its forward before its W; a round is B i, then W (i - s), then F: running the "
                   "forward first makes the stage hold one more micro-batch between F and W.",
                   zh=" 每一轮都在它的 W 之前运行前向；一轮是 B i，然后 W (i - s)，然后 F：先运行前向会让该 stage "
                      "在 F 和 W 之间多持有一个微批次。")
    same_fb = [op for op in got if op[0] != "W"] == [op for op in want if op[0] != "W"]
    if s > 0 and same_fb and all(pos[("W", i)] == pos[("B", i)] + 1 for i in range(m)):
        return say(f" Every W comes right after its own B: W is not deferred (that is 1F1B with a split backward); "
                   f"on stage {s} the W that follows B i is W (i - {s}).",
                   zh=f" 每个 W 都紧跟在它自己的 B 之后：W 没有被推迟（那是带拆分的反向的 1F1B）；"
                      f"在 stage {s} 上，跟在 B i 后面的 W 是 W (i - {s})。")
    return ""


# ---------------------------------------------------------------- schedule checks

def check_schedule(sched, p: int, m: int) -> str | None:
    """Return a description of the first problem found in ``sched``, or None if it is valid.

    Valid: p stages; each stage holds F i, B i and W i exactly once for every i in range(m); on a
    stage F i comes before B i and B i before W i; and the stages can all run to completion when F
    waits for the previous stage's F, B for the next stage's B (the last stage's for its own F) and
    W for its own B.
    """
    if not isinstance(sched, list) or len(sched) != p:
        return say(f"expected a list of {p} stages, got {type(sched).__name__} of length {len(sched) if hasattr(sched, '__len__') else '?'}",
                   zh=f"预期一个由 {p} 个 stage 组成的列表，实际得到长度为 "
                      f"{len(sched) if hasattr(sched, '__len__') else '?'} 的 {type(sched).__name__}")
    for s, ops in enumerate(sched):
        pos = {}
        for k, item in enumerate(ops):
            try:
                op, i = item
                i = int(i)
            except (TypeError, ValueError):
                return say(f"stage {s}: entry {k} is {item!r}, expected a pair like ('F', 0)",
                           zh=f"stage {s}：第 {k} 项是 {item!r}，预期一个像 ('F', 0) 这样的二元组")
            if op not in ("F", "B", "W") or not 0 <= i < m:
                return say(f"stage {s}: entry {k} is {item!r}; ops are 'F', 'B', 'W' on micro-batches 0..{m - 1}",
                           zh=f"stage {s}：第 {k} 项是 {item!r}；操作是微批次 0..{m - 1} 上的 'F'、'B'、'W'")
            if (op, i) in pos:
                return say(f"stage {s}: {op}{i} appears twice", zh=f"stage {s}：{op}{i} 在一个 stage 上出现了两次")
            pos[(op, i)] = k
        for i in range(m):
            for op in "FBW":
                if (op, i) not in pos:
                    return say(f"stage {s}: {op}{i} is missing", zh=f"stage {s}：缺少 {op}{i}")
            if pos[("B", i)] < pos[("F", i)]:
                return say(f"stage {s}: B{i} (position {pos[('B', i)]}) comes before F{i} (position {pos[('F', i)]})",
                           zh=f"stage {s}：B{i}（位置 {pos[('B', i)]}）排在 F{i}（位置 {pos[('F', i)]}）之前")
            if pos[("W", i)] < pos[("B", i)]:
                return say(f"stage {s}: W{i} (position {pos[('W', i)]}) comes before its B{i} (position {pos[('B', i)]}); "
                           f"W needs the output gradient that B computes",
                           zh=f"stage {s}：W{i}（位置 {pos[('W', i)]}）排在它的 B{i}（位置 {pos[('B', i)]}）之前；"
                              f"W 需要 B 算出的输出梯度")
    stuck = dependency_deadlock(sched)
    if stuck:
        return say("the stages cannot all finish (each waits for another): next ops " + stuck,
                   zh="各 stage 无法全部完成（互相等待）：下一个操作 " + stuck)
    return None


def dependency_deadlock(sched) -> str | None:
    """Order the ops by dependencies only (no times); describe the stuck ops if there is a cycle."""
    pos = _walk(sched)
    left = [f"stage {s}: {sched[s][pos[s]][0]}{sched[s][pos[s]][1]}" for s in range(len(sched)) if pos[s] < len(sched[s])]
    return ", ".join(left) or None


def _walk(sched) -> list[int]:
    """How far each stage's list gets when the ops run in dependency order (no times)."""
    p = len(sched)
    done: set[tuple[str, int, int]] = set()
    pos = [0] * p
    changed = True
    while changed:
        changed = False
        for s in range(p):
            while pos[s] < len(sched[s]):
                op, i = sched[s][pos[s]]
                need = {"F": ("F", s - 1, i) if s else None,
                        "B": ("B", s + 1, i) if s < p - 1 else ("F", s, i),
                        "W": ("B", s, i)}[op]
                if need is not None and need not in done:
                    break
                done.add((op, s, i))
                pos[s] += 1
                changed = True
    return pos


def try_timeline(sched, title: str) -> dict | None:
    """Your simulate's run of ``sched`` with unit times as a timeline artifact, or None if the schedule is
    not made of ("F" | "B" | "W", int) pairs or your simulate raises (the tests report the real failure).
    A schedule that deadlocks is never simulated whole: the ops that can run (each stage's list up to
    where the tests' dependency walk gets stuck) are, and the stuck stages are marked with the op each
    waits at."""
    import zero_bubble

    from judge.artifacts import timeline

    try:
        plain = [[(str(op), int(i)) for op, i in ops] for ops in sched]
        if any(op not in ("F", "B", "W") for ops in plain for op, _ in ops):
            return None
        pos = _walk(plain)
        stuck = {s: f"{plain[s][k][0]}{plain[s][k][1]}" for s, k in enumerate(pos) if k < len(plain[s])}
        runnable = [ops[:pos[s]] for s, ops in enumerate(plain)] if stuck else plain
        res = zero_bubble.simulate(runnable, 1.0, 1.0, 1.0)
        return timeline(res["timeline"], title=title + (" (up to where it gets stuck)" if stuck else ""),
                        stuck=stuck)
    except Exception:  # noqa: BLE001 - the picture is a bonus
        return None


def attach(record_property, got, title: str, want=None) -> None:
    """Record your schedule as a timeline (timed by your simulate, unit times); with ``want`` (public tests
    only: the expected orders are in the public test file anyway), the expected order too, timed the
    same way, which the page and ``-v`` draw under yours when the test fails."""
    art = try_timeline(got, f"your {title}, T_F = T_B = T_W = 1")
    if art is None:
        return
    record_property("timeline", art)
    if want is not None:
        expected = try_timeline(want, f"expected {title} (timed by your simulate)")
        if expected is not None:
            record_property("expected", expected)


def peaks(ops) -> tuple[int, int]:
    """(max #micro-batches with F done and B not done, max #micro-batches with F done and W not done)."""
    f = b = w = 0
    peak_b = peak_w = 0
    for op, _ in ops:
        f += op == "F"
        b += op == "B"
        w += op == "W"
        peak_b = max(peak_b, f - b)
        peak_w = max(peak_w, f - w)
    return peak_b, peak_w


def simulate_named(sched, tf, tb, tw, label):
    """Run the learner's simulate on the schedule called ``label``; if it raises, say which schedule it was."""
    import zero_bubble

    try:
        return zero_bubble.simulate(sched, tf, tb, tw)
    except Exception as exc:  # noqa: BLE001 - reported to the learner with the schedule
        m = sum(op == "F" for op, _ in sched[0])
        fused = all(op != "W" for ops in sched for op, _ in ops)
        valid = (dependency_deadlock(sched) is None) if fused else (check_schedule(sched, len(sched), m) is None)
        raise AssertionError(say(
            f"simulate raised {type(exc).__name__}({exc}) on {label}, T_F={tf:g}, T_B={tb:g}, T_W={tw:g}"
            + (", a valid schedule" if valid else "") + f":\n{fmt_sched(sched)}\n"
            + ("It has no W ops (the backward is fused into B): B waits only for the next stage's B, "
               "never for a W." if fused and valid else
               "B waits only for the next stage's B (not its W), and W only for its own stage's B." if valid else ""),
            zh=f"simulate 在 {label} 上（T_F={tf:g}、T_B={tb:g}、T_W={tw:g}）抛出了 {type(exc).__name__}({exc})"
               + ("，这是一个有效的调度" if valid else "") + f"：\n{fmt_sched(sched)}\n"
               + ("它没有 W 操作（反向融合在 B 里）：B 只等待下一个 stage 的 B，从不等待 W。" if fused and valid else
                  "B 只等待下一个 stage 的 B（不等它的 W），W 只等待它自己 stage 的 B。" if valid else "")
        )) from None


# ---------------------------------------------------------------- numpy references

def make_problem(seed: int, p: int, m: int, width: int = 4, rows: int = 3, layers_per_stage: int = 2):
    rng = np.random.default_rng(seed)
    stages = init_stages(rng, p, width, layers_per_stage)
    xs = [rng.normal(size=(rows, width)).astype(np.float64) for _ in range(m)]
    targets = [rng.normal(0.0, 0.5, size=(rows, width)).astype(np.float64) for _ in range(m)]
    return stages, xs, targets


def reference_grads(stages, xs, targets):
    """Whole-model backprop, one micro-batch at a time, weight gradients computed on the spot.

    Returns (grads, loss, input_grads) with grads[s][k] = (dW, db) summed over micro-batches.
    """
    layers = [(s, k, w, b) for s, stage in enumerate(stages) for k, (w, b) in enumerate(stage)]
    grads = [[[np.zeros_like(w), np.zeros_like(b)] for w, b in stage] for stage in stages]
    loss = 0.0
    input_grads = []
    for x, t in zip(xs, targets):
        inputs, outs = [], []
        h = x
        for _, _, w, b in layers:
            inputs.append(h)
            h = np.tanh(h @ w + b)
            outs.append(h)
        loss += 0.5 * float(((h - t) ** 2).sum())
        g = h - t
        for idx in reversed(range(len(layers))):
            s, k, w, _ = layers[idx]
            gz = g * (1.0 - outs[idx] ** 2)
            grads[s][k][0] += np.einsum("ri,rj->ij", inputs[idx], gz)
            grads[s][k][1] += gz.sum(axis=0)
            g = gz @ w.T
        input_grads.append(g)
    return grads, loss, input_grads


def _layer_values(stages, xs, targets):
    """Per stage, layer and micro-batch: the layer's input x_in and its grad_z, by whole-model backprop."""
    layers = [(s, k, w, b) for s, stage in enumerate(stages) for k, (w, b) in enumerate(stage)]
    x_in = [[[None] * len(xs) for _ in stage] for stage in stages]
    grad_z = [[[None] * len(xs) for _ in stage] for stage in stages]
    for i, (x, t) in enumerate(zip(xs, targets)):
        outs, h = [], x
        for s, k, w, b in layers:
            x_in[s][k][i] = h
            h = np.tanh(h @ w + b)
            outs.append(h)
        g = h - t
        for idx in reversed(range(len(layers))):
            s, k, w, _ = layers[idx]
            grad_z[s][k][i] = g * (1.0 - outs[idx] ** 2)
            g = grad_z[s][k][i] @ w.T
    return x_in, grad_z


def latest_input_grads(stages, xs, targets, sched):
    """The weight gradients a run_schedule gets when each W reads the layer inputs of its stage's most recent
    forward (one cache per stage, like a module that keeps ``self.x``) instead of its own micro-batch's."""
    x_in, grad_z = _layer_values(stages, xs, targets)
    grads = [[[np.zeros_like(w), np.zeros_like(b)] for w, b in stage] for stage in stages]
    for s, ops in enumerate(sched):
        latest = None
        for op, i in ops:
            if op == "F":
                latest = i
            elif op == "W" and latest is not None:
                for k in range(len(stages[s])):
                    grads[s][k][0] += x_in[s][k][latest].T @ grad_z[s][k][i]
                    grads[s][k][1] += grad_z[s][k][i].sum(axis=0)
    return grads


def grads_hint(stages, xs, targets, sched, got) -> str:
    """The likely mistake behind wrong gradients, or '' when none is recognised (each one checked)."""
    try:
        if grads_mismatch(got, latest_input_grads(stages, xs, targets, sched), tol=1e-9) is None:
            return say(" These are the gradients you get when each W reads the layer inputs of its stage's most recent "
                       "forward: W must use the x_in saved for its own micro-batch (keep saved per (stage, micro-batch)).",
                       zh=" 这是每个 W 读取它所在 stage 最近一次前向的层输入时得到的梯度：W 必须使用为它自己的微批次"
                          "保存的 x_in（按 (stage, micro-batch) 分别保存）。")
    except Exception:  # noqa: BLE001 - no hint for gradients of another shape
        pass
    return ""


def grads_mismatch(got, want, tol: float = 1e-12) -> str | None:
    """Describe the first weight gradient that differs from ``want`` by more than ``tol``."""
    if not isinstance(got, (list, tuple)) or len(got) != len(want):
        return say(f"expected grads as a list of {len(want)} stages, got {type(got).__name__}",
                   zh=f"预期 grads 是一个由 {len(want)} 个 stage 组成的列表，实际得到 {type(got).__name__}")
    for s, (gs, ws) in enumerate(zip(got, want)):
        if len(gs) != len(ws):
            return say(f"stage {s}: expected {len(ws)} layers of gradients, got {len(gs)}",
                       zh=f"stage {s}：预期 {len(ws)} 层的梯度，实际 {len(gs)} 层")
        for k, (g, w) in enumerate(zip(gs, ws)):
            for name, a, b in (("grad_weight", g[0], w[0]), ("grad_bias", g[1], w[1])):
                a = np.asarray(a, dtype=np.float64)
                if a.shape != b.shape:
                    return say(f"stage {s} layer {k} {name}: expected shape {list(b.shape)}, got {list(a.shape)}",
                               zh=f"stage {s} 第 {k} 层 {name}：预期形状 {list(b.shape)}，实际 {list(a.shape)}")
                err = float(np.max(np.abs(a - b)))
                if not err <= tol:
                    return say(f"stage {s} layer {k} {name}: max abs error {err:.3g} (tolerance {tol:g})",
                               zh=f"stage {s} 第 {k} 层 {name}：最大绝对误差 {err:.3g}（容差 {tol:g}）")
    return None


# ---------------------------------------------------------------- run_schedule, watched

def run_watched(stages, xs, targets, sched, what: str):
    """The learner's ``run_schedule(stages, xs, targets, sched)`` on a valid schedule, watched.

    Returns ``(grads, loss)``. Raises AssertionError when it raises, or when a stage ran its B and W
    passes (``stage_backward_b`` and ``stage_backward_w``, watched by their module-level names) in
    another order than its list gives them. A B call is given to a stage by the layers it is passed,
    a W call by the layer input in the ``w_state`` it is passed (one a B returned); when some call
    cannot be placed, the order is not judged (the gradients still are).
    """
    import zero_bubble

    __tracebackhide__ = True
    real_b, real_w = zero_bubble.stage_backward_b, zero_bubble.stage_backward_w
    events: list[tuple[int | None, str]] = []
    handed: list[tuple[np.ndarray, int | None]] = []  # the first layer input of each w_state a B returned, its stage
    inside: list[int | None] = []

    def same(a, b) -> bool:
        try:
            a = np.asarray(a, dtype=np.float64)
            return a.shape == b.shape and bool(np.array_equal(a, b))
        except (TypeError, ValueError):
            return False

    def stage_of(layers) -> int | None:
        for s, stage in enumerate(stages):
            try:
                if len(layers) == len(stage) and all(same(got[0], want[0]) for got, want in zip(layers, stage)):
                    return s
            except (TypeError, IndexError, KeyError):
                return None
        return None

    def watched_b(layers, *args, **kwargs):
        s = stage_of(layers)
        events.append((s, "B"))
        inside.append(s)
        try:
            result = real_b(layers, *args, **kwargs)
        finally:
            inside.pop()
        try:
            handed.append((np.array(result[1][0][0], dtype=np.float64), s))
        except (TypeError, ValueError, IndexError, KeyError):
            pass
        return result

    def watched_w(w_state, *args, **kwargs):
        if inside:  # called from within a B pass
            s = inside[-1]
        else:
            try:
                s = next((t for x, t in handed if same(w_state[0][0], x)), None)
            except (TypeError, IndexError, KeyError):
                s = None
        events.append((s, "W"))
        return real_w(w_state, *args, **kwargs)

    zero_bubble.stage_backward_b, zero_bubble.stage_backward_w = watched_b, watched_w
    try:
        got = zero_bubble.run_schedule(stages, xs, targets, sched)
    except Exception as exc:  # noqa: BLE001 - reported to the learner with the schedule
        raise AssertionError(say(f"run_schedule raised {type(exc).__name__}({exc}) on {what}, a valid schedule (every "
                                 f"stage lists F i, B i, W i once for each micro-batch, and they can all run):\n"
                                 f"{fmt_sched(sched)}",
                                 zh=f"run_schedule 在 {what} 上抛出了 {type(exc).__name__}({exc})，这是一个有效的调度"
                                    f"（每个 stage 为每个微批次各列出一次 F i、B i、W i，而且它们都能运行）：\n"
                                    f"{fmt_sched(sched)}")) from None
    finally:
        zero_bubble.stage_backward_b, zero_bubble.stage_backward_w = real_b, real_w
    if not (isinstance(got, tuple) and len(got) == 2):
        raise AssertionError(say(f"run_schedule should return a pair (grads, loss); on {what} it returned "
                                 f"{type(got).__name__} {str(got)[:120]}",
                                 zh=f"run_schedule 应返回一个二元组 (grads, loss)；在 {what} 上它返回了 "
                                    f"{type(got).__name__} {str(got)[:120]}"))
    if all(s is not None for s, _ in events):
        for s, ops in enumerate(sched):
            want = [op for op, _ in ops if op in ("B", "W")]
            ran = [kind for owner, kind in events if owner == s]
            if ran != want:
                raise AssertionError(say(
                    f"run_schedule on {what}: stage {s} lists its B and W ops in the order {' '.join(want)}, but it "
                    f"ran them (stage_backward_b for a B, stage_backward_w for a W) in the order "
                    f"{' '.join(ran) or '(none)'}." + _order_hint(ran, want) + f"\n{fmt_sched(sched)}",
                    zh=f"run_schedule 在 {what} 上：stage {s} 列出它的 B 和 W 操作的顺序是 {' '.join(want)}，但它"
                       f"运行它们（B 用 stage_backward_b，W 用 stage_backward_w）的顺序是 "
                       f"{' '.join(ran) or '（没有）'}。" + _order_hint(ran, want) + f"\n{fmt_sched(sched)}"))
    return got


def _order_hint(ran: list[str], want: list[str]) -> str:
    """The likely mistake when a stage's B and W passes ran in another order, or '' (each one checked)."""
    if ran.count("B") == want.count("B") and ran.count("W") == want.count("W") and ran == ["B", "W"] * (len(ran) // 2):
        return say(" Each weight pass ran right after its B although the list defers it: run stage_backward_w when "
                   "the schedule reaches the W (that is the point of the split), not at its B.",
                   zh=" 每个参数梯度的计算都紧跟在它的 B 之后运行，尽管列表推迟了它：应在调度走到 W 时才运行 "
                      "stage_backward_w（这正是拆分的意义），而不是在它的 B 时就运行。")
    if ran.count("W") != want.count("W"):
        return say(f" It ran {ran.count('W')} W passes; the list has {want.count('W')}: one stage_backward_w call per W.",
                   zh=f" 它运行了 {ran.count('W')} 次 W；列表中有 {want.count('W')} 个：每个 W 调用一次 stage_backward_w。")
    return ""
