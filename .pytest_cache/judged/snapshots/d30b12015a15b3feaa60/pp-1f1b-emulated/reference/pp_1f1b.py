"""1F1B pipeline training step of an MLP, one rank per stage, with emulated point-to-point messages.

Reference solution.
"""

from __future__ import annotations

from collections.abc import Generator, Sequence
from typing import Any

import numpy as np
import p2p
from mlp import Stage, mse


def stage_loop(comm: p2p.Comm, stage: Stage, num_microbatches: int,
               inputs: Sequence[np.ndarray] | None = None,
               targets: Sequence[np.ndarray] | None = None,
               blocking: bool = False) -> Generator[p2p.Op, Any, float | None]:
    """The 1F1B loop of rank ``comm.rank`` (a generator: yield every communication operation).

    Returns the summed loss (equal to the full-batch mean squared error) on the last rank and
    ``None`` on the others.
    """
    s, p, M = comm.rank, comm.size, num_microbatches
    first, last = s == 0, s == p - 1
    handles: list[p2p.Handle] = []
    output_grads: dict[int, np.ndarray] = {}   # last stage: loss gradient until the backward
    total_loss = 0.0

    def send(dst: int, x: np.ndarray, tag: str) -> Generator[p2p.Op, Any, None]:
        if blocking:
            yield comm.send(dst, x, tag=tag)
        else:
            handles.append((yield comm.isend(dst, x, tag=tag)))

    def forward(mb: int) -> Generator[p2p.Op, Any, None]:
        nonlocal total_loss
        x = inputs[mb] if first else (yield comm.recv(s - 1, tag=f"act {mb}"))
        y, act = stage.forward(mb, x)
        comm.stash[mb] = act
        if last:
            loss, dy = mse(y, targets[mb])
            total_loss += loss / M
            output_grads[mb] = dy / M
        else:
            yield from send(s + 1, y, f"act {mb}")

    def backward(mb: int) -> Generator[p2p.Op, Any, None]:
        dy = output_grads.pop(mb) if last else (yield comm.recv(s + 1, tag=f"grad {mb}"))
        act = comm.stash.pop(mb)
        dx = stage.backward(mb, act, dy)
        if not first:
            yield from send(s - 1, dx, f"grad {mb}")

    warmup = min(p - s - 1, M)
    for mb in range(warmup):
        yield from forward(mb)
    for i in range(M - warmup):
        yield from forward(warmup + i)
        yield from backward(i)
    for mb in range(M - warmup, M):
        yield from backward(mb)
    yield comm.waitall(handles)
    return total_loss if last else None
