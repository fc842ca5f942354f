"""Zero-bubble pipeline parallelism (ZB-H1): split the backward into B and W, then schedule W late.

Part 1 (numpy): a Linear layer's backward splits into ``backward_input`` (B, needed by the previous
stage right away) and ``backward_weight`` (W, needed only by the optimizer at the end of the step).
``run_schedule`` executes a per-stage list of F/B/W operations on a tanh MLP and accumulates the
weight gradients.

Part 2 (schedule): ``zb_h1_schedule`` writes the ZB-H1 order of F, B and W on each stage and
``simulate`` plays a schedule out in time with dependency-driven start times.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from zb_mlp import loss_and_grad, stage_forward, tanh_backward

Op = tuple[str, int]
Layer = tuple[np.ndarray, np.ndarray]


# ----------------------------------------------------------------------------------------------
# Part 1: the split backward in numpy
# ----------------------------------------------------------------------------------------------

def backward_input(grad_out: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """B for ``z = x @ weight + bias``: the gradient with respect to ``x``."""
    return grad_out @ weight.T


def backward_weight(grad_out: np.ndarray, x_in: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """W for ``z = x @ weight + bias``: ``(grad_weight, grad_bias)``."""
    return x_in.T @ grad_out, grad_out.sum(axis=0)


def stage_backward_b(layers: list[Layer], saved: list[tuple[np.ndarray, np.ndarray]],
                     grad_out: np.ndarray) -> tuple[np.ndarray, list[tuple[np.ndarray, np.ndarray]]]:
    """B for a whole stage: returns ``(grad_in, w_state)`` with ``w_state[k] = (x_in_k, grad_z_k)``."""
    w_state: list[tuple[np.ndarray, np.ndarray]] = [None] * len(layers)  # type: ignore[list-item]
    g = grad_out
    for k in range(len(layers) - 1, -1, -1):
        x_in, a = saved[k]
        grad_z = tanh_backward(g, a)
        w_state[k] = (x_in, grad_z)
        g = backward_input(grad_z, layers[k][0])
    return g, w_state


def stage_backward_w(w_state: list[tuple[np.ndarray, np.ndarray]]) -> list[tuple[np.ndarray, np.ndarray]]:
    """W for a whole stage: ``[(grad_weight_k, grad_bias_k) for each layer k]``."""
    return [backward_weight(grad_z, x_in) for x_in, grad_z in w_state]


def run_schedule(stages: list[list[Layer]], xs: list[np.ndarray], targets: list[np.ndarray],
                 sched: list[list[Op]]) -> tuple[list[list[tuple[np.ndarray, np.ndarray]]], float]:
    """Execute ``sched`` and return ``(grads, loss)``; ``grads[s][k] = (grad_weight, grad_bias)``."""
    p, m = len(stages), len(xs)
    if len(sched) != p:
        raise ValueError(f"schedule has {len(sched)} stages, the model has {p}")
    for s, ops in enumerate(sched):
        listed = set()
        for op, i in ops:
            if op not in ("F", "B", "W") or i not in range(m):
                raise ValueError(f"stage {s}: {(op, i)!r} is not an op: ops are ('F'|'B'|'W', i) with i in range({m})")
            if (op, i) in listed:
                raise ValueError(f"stage {s}: {op}{i} appears twice")
            listed.add((op, i))
        if len(listed) != 3 * m:
            missing = [f"{op}{i}" for i in range(m) for op in "FBW" if (op, i) not in listed]
            raise ValueError(f"stage {s}: the schedule is incomplete, {', '.join(missing)} missing")
    grads = [[(np.zeros_like(w), np.zeros_like(b)) for w, b in layers] for layers in stages]
    acts: dict[tuple[int, int], np.ndarray] = {}      # output of stage s for mb i (sent forward)
    grads_in: dict[tuple[int, int], np.ndarray] = {}  # grad wrt input of stage s for mb i (sent back)
    saved: dict[tuple[int, int], Any] = {}
    outputs: dict[int, np.ndarray] = {}
    w_states: dict[tuple[int, int], Any] = {}
    loss = 0.0
    pos = [0] * p
    moved = True
    while moved:
        moved = False
        for s in range(p):
            while pos[s] < len(sched[s]):
                op, i = sched[s][pos[s]]
                if op == "F":
                    if s > 0 and (s - 1, i) not in acts:
                        break
                    x = xs[i] if s == 0 else acts[(s - 1, i)]
                    out, saved[(s, i)] = stage_forward(stages[s], x)
                    if s == p - 1:
                        outputs[i] = out
                    else:
                        acts[(s, i)] = out
                elif op == "B":
                    if (s, i) not in saved or (s < p - 1 and (s + 1, i) not in grads_in):
                        break
                    if s == p - 1:
                        mb_loss, g = loss_and_grad(outputs.pop(i), targets[i])
                        loss += mb_loss
                    else:
                        g = grads_in.pop((s + 1, i))
                    grads_in[(s, i)], w_states[(s, i)] = stage_backward_b(stages[s], saved.pop((s, i)), g)
                else:  # "W" (the op names were checked above)
                    if (s, i) not in w_states:
                        break
                    for k, (gw, gb) in enumerate(stage_backward_w(w_states.pop((s, i)))):
                        grads[s][k][0][...] += gw
                        grads[s][k][1][...] += gb
                pos[s] += 1
                moved = True
    _raise_if_stuck(sched, pos)
    return grads, loss


def _raise_if_stuck(sched: list[list[Op]], pos: list[int]) -> None:
    """ValueError naming each stage's next op when some stage has not run all of its ops (a deadlock)."""
    stuck = [f"stage {s}: {ops[pos[s]]!r}" for s, ops in enumerate(sched) if pos[s] < len(ops)]
    if stuck:
        raise ValueError("schedule deadlocks; next ops waiting forever: " + ", ".join(stuck))


# ----------------------------------------------------------------------------------------------
# Part 2: the ZB-H1 schedule and a dependency-driven simulator
# ----------------------------------------------------------------------------------------------

def zb_h1_schedule(p: int, m: int) -> list[list[Op]]:
    """ZB-H1 order on each of ``p`` stages for ``m`` micro-batches.

    Stage ``s`` runs ``min(p - s, m)`` warm-up forwards, then for ``i = 0 .. m-1``: ``B i``, then
    ``W (i - s)`` if ``i >= s``, then the next forward if any is left; the remaining W's close it.
    """
    sched = []
    for s in range(p):
        warmup = min(p - s, m)
        ops: list[Op] = [("F", i) for i in range(warmup)]
        next_f, next_w = warmup, 0
        for i in range(m):
            ops.append(("B", i))
            if i >= s:
                ops.append(("W", next_w))
                next_w += 1
            if next_f < m:
                ops.append(("F", next_f))
                next_f += 1
        ops.extend(("W", j) for j in range(next_w, m))
        sched.append(ops)
    return sched


def simulate(sched: list[list[Op]], tf: float, tb: float, tw: float) -> dict[str, Any]:
    """Play ``sched`` out in time; see the statement for the dependency rules and the result keys."""
    p = len(sched)
    duration = {"F": float(tf), "B": float(tb), "W": float(tw)}
    for s, ops in enumerate(sched):
        seen = set()
        for op, i in ops:
            if op not in duration:
                raise ValueError(f"stage {s}: unknown op {op!r}")
            if (op, i) in seen:
                raise ValueError(f"stage {s}: {op}{i} appears twice")
            seen.add((op, i))
    end: dict[tuple[str, int, int], float] = {}
    free = [0.0] * p
    pos = [0] * p
    timeline: list[list[tuple[str, int, float, float]]] = [[] for _ in range(p)]
    progressed = True
    while progressed:
        progressed = False
        for s in range(p):
            while pos[s] < len(sched[s]):
                op, i = sched[s][pos[s]]
                if op == "F":
                    dep = ("F", s - 1, i) if s > 0 else None
                elif op == "B":
                    dep = ("B", s + 1, i) if s < p - 1 else ("F", s, i)
                else:
                    dep = ("B", s, i)
                if dep is not None and dep not in end:
                    break
                start = max(free[s], end[dep]) if dep is not None else free[s]
                finish = start + duration[op]
                end[(op, s, i)] = finish
                free[s] = finish
                timeline[s].append((op, int(i), start, finish))
                pos[s] += 1
                progressed = True
    _raise_if_stuck(sched, pos)
    total = max(free, default=0.0)
    busy = [sum(e - b for _, _, b, e in row) for row in timeline]
    bubble = [total - x for x in busy]
    fraction = sum(bubble) / (p * total) if total > 0 else 0.0
    return {"timeline": timeline, "total": total, "busy": busy, "bubble": bubble, "bubble_fraction": fraction}
