"""1F1B pipeline training step of an MLP, one rank per stage, with emulated point-to-point messages.

Write :func:`stage_loop`, the program every rank runs. The runtime (``p2p``) and the model
(``mlp``) are given; see the README for their API. Run this file to try your loop on 3 ranks.
"""

from __future__ import annotations

from collections.abc import Generator, Sequence
from typing import Any

import numpy as np
import p2p
from mlp import Stage


def stage_loop(comm: p2p.Comm, stage: Stage, num_microbatches: int,
               inputs: Sequence[np.ndarray] | None = None,
               targets: Sequence[np.ndarray] | None = None,
               blocking: bool = False) -> Generator[p2p.Op, Any, float | None]:
    """The 1F1B loop of rank ``comm.rank`` of ``comm.size`` (a generator).

    Args:
        comm: this rank's communicator. Yield its operations:
            ``x = yield comm.recv(src)``, ``h = yield comm.isend(dst, x)``,
            ``yield comm.send(dst, x)``, ``yield comm.waitall(handles)``.
            ``comm.stash`` is the rank's activation memory (a dict micro-batch -> activation).
        stage: this rank's layers. ``y, act = stage.forward(mb, x)`` and
            ``dx = stage.backward(mb, act, dy)`` (the backward accumulates the weight gradients).
        num_microbatches: m, the number of micro-batches.
        inputs: on rank 0, the m input micro-batches; ``None`` on the other ranks.
        targets: on the last rank, the m target micro-batches; ``None`` on the other ranks.
        blocking: if True, send with the blocking ``comm.send`` where you would otherwise use
            ``comm.isend`` (the 1F1B loop then deadlocks; the tests check that it does).

    Returns:
        On the last rank, the loss as a float: the sum over micro-batches of ``mse / m`` (equal
        to the full-batch mean squared error). ``None`` on the other ranks.

    Stage s runs ``min(p - s - 1, m)`` warm-up forwards, then alternates one forward and one
    backward, then runs the remaining backwards. Save every activation with
    ``comm.stash[mb] = act`` right after its forward, and free it with ``comm.stash.pop(mb)``
    for its backward. Before returning, wait for every isend handle.
    """
    s, p, M = comm.rank, comm.size, num_microbatches
    raise NotImplementedError(
        f"stage_loop (rank {s} of {p}, m={M}) is not written yet: warm-up forwards, then one "
        "forward and one backward at a time, then the remaining backwards (see the README)")
    yield  # the `yield` makes this function a generator, as the runtime requires


if __name__ == "__main__":
    import mlp

    p, M = 3, 4
    rng = np.random.default_rng(0)
    layers = mlp.make_layers([3, 4, 4, 4, 4, 4, 2], p, rng)
    x, y = rng.standard_normal((2 * M, 3)), rng.standard_normal((2 * M, 2))
    xs, ys = mlp.split_batch(x, M), mlp.split_batch(y, M)

    def program(comm: p2p.Comm) -> Generator[p2p.Op, Any, float | None]:
        return stage_loop(comm, Stage(comm, layers[comm.rank]), M,
                          inputs=xs if comm.rank == 0 else None,
                          targets=ys if comm.rank == p - 1 else None)

    world = p2p.run(p, program)
    for comm in world.ranks:
        print(f"stage {comm.rank}: {' '.join(comm.order())}   peak activations {comm.peak_live}")
    print("loss", world.ranks[-1].result)
