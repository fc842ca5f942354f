"""A tiny tanh MLP split into pipeline stages (read-only support module for pp-zero-bubble).

Shapes and conventions used by ``zero_bubble.py``:

* A *layer* is a pair ``(weight, bias)`` with ``weight`` of shape ``(d_in, d_out)`` and ``bias`` of
  shape ``(d_out,)``, both float64. It computes ``z = x @ weight + bias`` and then ``a = tanh(z)``.
* A *stage* is a list of layers applied in order; the model is a list of stages.
* A micro-batch ``x`` has shape ``(rows, d_in)``. The loss of a micro-batch is
  ``0.5 * sum((y - target) ** 2)`` where ``y`` is the output of the last stage; the loss of a
  step is the sum over micro-batches, so weight gradients are sums over micro-batches too.
"""

from __future__ import annotations

import numpy as np

Layer = tuple[np.ndarray, np.ndarray]


def init_stages(rng: np.random.Generator, p: int, width: int, layers_per_stage: int = 2) -> list[list[Layer]]:
    """Random parameters for ``p`` stages of ``layers_per_stage`` layers of size ``width x width``."""
    scale = 1.0 / np.sqrt(width)
    return [[(rng.normal(0.0, scale, size=(width, width)).astype(np.float64),
              rng.normal(0.0, 0.1, size=(width,)).astype(np.float64))
             for _ in range(layers_per_stage)]
            for _ in range(p)]


def linear_forward(x: np.ndarray, weight: np.ndarray, bias: np.ndarray) -> np.ndarray:
    """``z = x @ weight + bias``."""
    return x @ weight + bias


def stage_forward(layers: list[Layer], x: np.ndarray) -> tuple[np.ndarray, list[tuple[np.ndarray, np.ndarray]]]:
    """Run one stage on one micro-batch.

    Returns ``(out, saved)`` where ``saved[k] = (x_in, a)`` holds, for layer ``k``, its input
    ``x_in`` and its output ``a = tanh(x_in @ weight + bias)``. ``saved`` is exactly what the
    backward passes of this micro-batch need; keep one per micro-batch.
    """
    saved = []
    h = x
    for weight, bias in layers:
        a = np.tanh(linear_forward(h, weight, bias))
        saved.append((h, a))
        h = a
    return h, saved


def tanh_backward(grad_a: np.ndarray, a: np.ndarray) -> np.ndarray:
    """Gradient with respect to ``z`` given the gradient with respect to ``a = tanh(z)``."""
    return grad_a * (1.0 - a * a)


def loss_and_grad(y: np.ndarray, target: np.ndarray) -> tuple[float, np.ndarray]:
    """``0.5 * sum((y - target) ** 2)`` and its gradient ``y - target``."""
    diff = y - target
    return float(0.5 * np.sum(diff * diff)), diff
