"""The model of this problem: a float64 MLP of Linear and Tanh layers cut into pipeline stages
(read-only support module).

Stage ``s`` of ``p`` holds two Linear layers: ``Linear, Tanh, Linear, Tanh`` (the last stage
drops its final Tanh, so the network ends in a Linear layer). Forward and backward of a stage
are given here; :class:`Stage` records each call in the rank's trace (``F`` takes 1 time unit,
``B`` takes 2) and hands back an :class:`Activation`, the memory the backward needs.

    y, act = stage.forward(mb, x)     # act: what this micro-batch's backward needs
    comm.stash[mb] = act              # keep it in the rank's activation memory
    ...
    act = comm.stash.pop(mb)          # take it out again (frees it) ...
    dx = stage.backward(mb, act, dy)  # ... and run the backward; weight gradients accumulate

The loss is the mean squared error over all elements, :func:`mse`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np

__all__ = ["Linear", "Tanh", "Activation", "Stage", "mse", "make_layers", "split_batch",
           "FORWARD_TIME", "BACKWARD_TIME"]

FORWARD_TIME = 1.0
BACKWARD_TIME = 2.0


class Linear:
    """``y = x @ W + b``; the backward accumulates ``dW`` and ``db``."""

    def __init__(self, W: np.ndarray, b: np.ndarray) -> None:
        self.W = np.array(W, dtype=np.float64)
        self.b = np.array(b, dtype=np.float64)
        self.dW = np.zeros_like(self.W)
        self.db = np.zeros_like(self.b)

    def forward(self, x: np.ndarray) -> np.ndarray:
        return x @ self.W + self.b

    def backward(self, x: np.ndarray, y: np.ndarray, dy: np.ndarray) -> np.ndarray:
        self.dW += x.T @ dy
        self.db += dy.sum(axis=0)
        return dy @ self.W.T

    def __repr__(self) -> str:
        return f"Linear({self.W.shape[0]} -> {self.W.shape[1]})"


class Tanh:
    """``y = tanh(x)``; its backward needs only the output ``y``."""

    def forward(self, x: np.ndarray) -> np.ndarray:
        return np.tanh(x)

    def backward(self, x: np.ndarray, y: np.ndarray, dy: np.ndarray) -> np.ndarray:
        return dy * (1.0 - y * y)

    def __repr__(self) -> str:
        return "Tanh()"


class _Recorder(Protocol):
    rank: int

    def record_compute(self, op: str, mb: int, duration: float) -> Any: ...


class Activation:
    """The inputs and outputs of a stage's layers for one micro-batch, kept for its backward."""

    def __init__(self, stage: Stage, mb: int, xs: list[np.ndarray], ys: list[np.ndarray]) -> None:
        self.stage = stage
        self.mb = mb
        self.xs = xs
        self.ys = ys
        self._saved = False   # set when stored in comm.stash
        self._used = False    # set by the backward

    def __repr__(self) -> str:
        return f"<Activation of micro-batch {self.mb} on stage {self.stage.rank}>"


class Stage:
    """The layers of one pipeline stage, bound to the rank that runs them."""

    def __init__(self, comm: _Recorder, layers: Sequence[Linear | Tanh]) -> None:
        self.comm = comm
        self.rank = comm.rank
        self.layers = list(layers)
        self._unsaved: list[Activation] = []

    def forward(self, mb: int, x: np.ndarray) -> tuple[np.ndarray, Activation]:
        """Forward of micro-batch ``mb``: returns the stage output and the activation to save."""
        __tracebackhide__ = True  # pytest: point at the caller's line
        mb = int(mb)
        if getattr(x, "_is_p2p_op", False):
            raise TypeError(f"stage {self.rank}: forward got {x!r} instead of an array; receive "
                            "with `x = yield comm.recv(src)`")
        self._check_saved()
        x = np.asarray(x, dtype=np.float64)
        xs, ys = [], []
        for layer in self.layers:
            xs.append(x)
            x = layer.forward(x)
            ys.append(x)
        self.comm.record_compute("F", mb, FORWARD_TIME)
        act = Activation(self, mb, xs, ys)
        self._unsaved.append(act)
        return x, act

    def backward(self, mb: int, act: Activation, dy: np.ndarray) -> np.ndarray:
        """Backward of micro-batch ``mb`` from the gradient ``dy`` of the stage output.

        Accumulates the layers' ``dW``/``db`` and returns the gradient of the stage input.
        """
        __tracebackhide__ = True  # pytest: point at the caller's line
        mb = int(mb)
        if getattr(dy, "_is_p2p_op", False):
            raise TypeError(f"stage {self.rank}: backward got {dy!r} instead of an array; receive "
                            "with `dy = yield comm.recv(src)`")
        if not isinstance(act, Activation) or act.stage is not self:
            raise TypeError(f"stage {self.rank}: backward needs the Activation returned by this "
                            f"stage's forward, got {act!r}")
        if act.mb != mb:
            raise ValueError(
                f"stage {self.rank}: backward of micro-batch {mb} was given the activation of "
                f"micro-batch {act.mb}; pair each backward with the activation saved by the forward "
                "of the same micro-batch")
        if act._used:
            raise ValueError(f"stage {self.rank}: the activation of micro-batch {mb} was already "
                             "used by a backward")
        self._check_saved()
        dy = np.asarray(dy, dtype=np.float64)
        for layer, x, y in zip(reversed(self.layers), reversed(act.xs), reversed(act.ys)):
            dy = layer.backward(x, y, dy)
        act._used = True
        self.comm.record_compute("B", mb, BACKWARD_TIME)
        return dy

    def _check_saved(self) -> None:
        __tracebackhide__ = True  # pytest: point at the caller's line
        self._unsaved = [a for a in self._unsaved if not a._saved]
        if self._unsaved:
            a = self._unsaved[0]
            raise RuntimeError(
                f"stage {self.rank}: the activation of micro-batch {a.mb} was not saved in "
                f"comm.stash before the next compute operation. Save it right after its forward "
                f"(comm.stash[{a.mb}] = act) and take it out for the backward "
                f"(act = comm.stash.pop({a.mb})): the stash is the stage's activation memory.")

    def __repr__(self) -> str:
        return f"Stage(rank={self.rank}, layers={self.layers})"


def mse(y: np.ndarray, t: np.ndarray) -> tuple[float, np.ndarray]:
    """Mean squared error over all elements and its gradient: ``(mean((y-t)**2), 2*(y-t)/y.size)``."""
    y = np.asarray(y, dtype=np.float64)
    d = y - np.asarray(t, dtype=np.float64)
    return float(np.mean(d * d)), 2.0 * d / d.size


def make_layers(dims: Sequence[int], num_stages: int, rng: np.random.Generator) -> list[list[Linear | Tanh]]:
    """Random layers for ``num_stages`` stages; ``dims`` has ``2 * num_stages + 1`` widths.

    Stage ``s`` is ``Linear(dims[2s], dims[2s+1]), Tanh, Linear(dims[2s+1], dims[2s+2]), Tanh``,
    without the final Tanh on the last stage.
    """
    if len(dims) != 2 * num_stages + 1:
        raise ValueError(f"need 2 * num_stages + 1 = {2 * num_stages + 1} widths, got {len(dims)}")
    stages = []
    for s in range(num_stages):
        layers: list[Linear | Tanh] = []
        for k in (2 * s, 2 * s + 1):
            fan_in, fan_out = int(dims[k]), int(dims[k + 1])
            W = rng.standard_normal((fan_in, fan_out)) / np.sqrt(fan_in)
            b = 0.1 * rng.standard_normal(fan_out)
            layers += [Linear(W, b), Tanh()]
        if s == num_stages - 1:
            layers.pop()
        stages.append(layers)
    return stages


def split_batch(a: np.ndarray, num_microbatches: int) -> list[np.ndarray]:
    """Split the rows of ``a`` into ``num_microbatches`` equal micro-batches."""
    a = np.asarray(a, dtype=np.float64)
    if num_microbatches < 1 or a.shape[0] % num_microbatches:
        raise ValueError(f"cannot split {a.shape[0]} rows into {num_microbatches} equal micro-batches")
    return [a[i].copy() for i in np.split(np.arange(a.shape[0]), num_microbatches)]
