"""Zero-bubble pipeline parallelism (ZB-H1): split the backward into B and W, then schedule W late.

Fill in every function below; the statement (README) gives the exact rules. The support module
``zb_mlp`` (read-only, next to this file) has the forward pass, ``tanh_backward`` and the loss.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from zb_mlp import loss_and_grad, stage_forward, tanh_backward  # noqa: F401  (you will need these)

Op = tuple[str, int]
Layer = tuple[np.ndarray, np.ndarray]


# ----------------------------------------------------------------------------------------------
# Part 1: the split backward in numpy
# ----------------------------------------------------------------------------------------------

def backward_input(grad_out: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """B for ``z = x @ weight + bias``.

    ``grad_out`` is dL/dz, shape ``(rows, d_out)``; ``weight`` has shape ``(d_in, d_out)``.
    Return dL/dx, shape ``(rows, d_in)``.
    """
    raise NotImplementedError("backward_input: return the gradient with respect to the layer input x")


def backward_weight(grad_out: np.ndarray, x_in: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """W for ``z = x @ weight + bias``.

    ``grad_out`` is dL/dz, shape ``(rows, d_out)``; ``x_in`` is the layer input, shape ``(rows, d_in)``.
    Return ``(grad_weight, grad_bias)`` with shapes ``(d_in, d_out)`` and ``(d_out,)``, summed over rows.
    """
    raise NotImplementedError("backward_weight: return (grad_weight, grad_bias)")


def stage_backward_b(layers: list[Layer], saved: list[tuple[np.ndarray, np.ndarray]],
                     grad_out: np.ndarray) -> tuple[np.ndarray, list[tuple[np.ndarray, np.ndarray]]]:
    """B for a whole stage and one micro-batch.

    ``saved`` is what ``zb_mlp.stage_forward`` returned for this micro-batch (``saved[k] = (x_in, a)``)
    and ``grad_out`` is dL/d(stage output). Return ``(grad_in, w_state)``: ``grad_in`` is
    dL/d(stage input), and ``w_state[k] = (x_in_k, grad_z_k)`` is what layer k's W needs.
    Compute no weight gradient here.
    """
    raise NotImplementedError("stage_backward_b: walk the layers in reverse with tanh_backward and backward_input")


def stage_backward_w(w_state: list[tuple[np.ndarray, np.ndarray]]) -> list[tuple[np.ndarray, np.ndarray]]:
    """W for a whole stage and one micro-batch: ``[(grad_weight_k, grad_bias_k) for each layer k]``."""
    raise NotImplementedError("stage_backward_w: apply backward_weight to every layer's (x_in, grad_z)")


def run_schedule(stages: list[list[Layer]], xs: list[np.ndarray], targets: list[np.ndarray],
                 sched: list[list[Op]]) -> tuple[list[list[tuple[np.ndarray, np.ndarray]]], float]:
    """Execute the per-stage op lists ``sched`` on the model ``stages`` for micro-batches ``xs``.

    Return ``(grads, loss)``: ``grads[s][k] = (grad_weight, grad_bias)`` of stage s layer k, summed
    over micro-batches, and the summed loss. Raise ``ValueError`` if the schedule cannot finish.
    """
    raise NotImplementedError("run_schedule: run each stage's next op as soon as its input is ready")


# ----------------------------------------------------------------------------------------------
# Part 2: the ZB-H1 schedule and a dependency-driven simulator
# ----------------------------------------------------------------------------------------------

def zb_h1_schedule(p: int, m: int) -> list[list[Op]]:
    """ZB-H1 order for ``p`` stages and ``m`` micro-batches: one list of ``("F"|"B"|"W", mb)`` per stage."""
    raise NotImplementedError("zb_h1_schedule: warm-up as in 1F1B, then rounds of B i, W (i - s), F")


def simulate(sched: list[list[Op]], tf: float, tb: float, tw: float) -> dict[str, Any]:
    """Play ``sched`` out in time with op durations ``tf``, ``tb``, ``tw``.

    Return ``{"timeline": [[(op, mb, start, end), ...] per stage], "total": float,
    "busy": [float per stage], "bubble": [float per stage], "bubble_fraction": float}``.
    Raise ``ValueError`` if the schedule deadlocks.
    """
    raise NotImplementedError("simulate: start each op when its stage is free and its dependency is done")
