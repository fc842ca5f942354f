"""A small dependency-driven pipeline simulator used by the tests (not part of your solution).

It plays a schedule (GPipe, 1F1B, or interleaved 1F1B) with exact fractions for time:

- every rank runs its operations one after another, in the order the schedule gives;
- an operation starts as soon as its rank is free AND the operation it depends on has finished
  (sends are instantaneous, no communication time);
- a forward of micro-batch i on virtual stage g needs the forward of i on stage g - 1;
  a backward on stage g needs the backward on stage g + 1 (the last stage's backward needs its
  own forward);
- a forward and a backward each take 1 time unit on a whole stage; with v chunks per rank
  (interleaved 1F1B) each chunk holds 1/v of the layers, so a chunk's forward or backward takes 1/v.

Virtual stage g = c * p + r lives on rank r as chunk c (the Megatron-LM layout). The interleaved
order is Megatron-LM's: micro-batches in groups of p, warm-up 2 (p - r - 1) + (v - 1) p chunk
forwards, then one forward / one backward, then the remaining backwards. It needs m % p == 0.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

Op = tuple[str, int, int]  # (op "F" or "B", micro-batch, chunk)


def stage_orders(kind: str, p: int, m: int, v: int = 1) -> list[list[Op]]:
    """The order of operations on each rank for ``kind`` in {"gpipe", "1f1b", "interleaved"}."""
    if kind == "interleaved" and v == 1:
        kind = "1f1b"
    orders: list[list[Op]] = []
    for r in range(p):
        if kind == "gpipe":
            ops = [("F", i, 0) for i in range(m)] + [("B", i, 0) for i in range(m)]
        elif kind == "1f1b":
            warm = min(p - r - 1, m)
            ops = [("F", i, 0) for i in range(warm)]
            for i in range(m - warm):
                ops += [("F", warm + i, 0), ("B", i, 0)]
            ops += [("B", i, 0) for i in range(m - warm, m)]
        elif kind == "interleaved":
            if m % p:
                raise ValueError(f"interleaved schedule needs m % p == 0, got p={p}, m={m}")
            total = m * v
            warm = min(2 * (p - r - 1) + (v - 1) * p, total)
            ops = [_virtual(k, p, v, True) for k in range(warm)]
            for i in range(total - warm):
                ops += [_virtual(warm + i, p, v, True), _virtual(i, p, v, False)]
            ops += [_virtual(k, p, v, False) for k in range(total - warm, total)]
        else:
            raise ValueError(f"unknown schedule kind {kind!r}")
        orders.append(ops)
    return orders


def _virtual(k: int, p: int, v: int, forward: bool) -> Op:
    """The k-th chunk operation of a rank: micro-batches go in groups of p, chunk by chunk."""
    group, within = divmod(k, p * v)
    chunk, offset = divmod(within, p)
    if not forward:
        chunk = v - 1 - chunk
    return ("F" if forward else "B", group * p + offset, chunk)


@dataclass
class SimResult:
    """What :func:`simulate` returns; times are exact ``Fraction`` values."""

    p: int
    m: int
    v: int
    blocks: list[list[tuple[str, int, Fraction, Fraction, int]]]  # per rank (op, mb, start, end, chunk)
    total: Fraction
    busy: list[Fraction]
    peak: list[int]  # most micro-batch chunks with activations held at once, per rank
    messages: list[tuple[str, int, int, int]] = field(default_factory=list)  # (op, mb, src, dst)

    def idle(self, r: int) -> Fraction:
        """Idle time of rank r between time 0 and the end of the whole schedule."""
        return self.total - self.busy[r]

    def link_volume(self, r: int) -> dict[int, int]:
        """Messages per micro-batch over the link rank r <-> r + 1: activations r -> r + 1 plus
        gradients r + 1 -> r (the wrap-around traffic rank p - 1 -> rank 0 of interleaving is a
        different link and is not counted)."""
        counts = dict.fromkeys(range(self.m), 0)
        for op, mb, src, dst in self.messages:
            if (op == "F" and (src, dst) == (r, r + 1)) or (op == "B" and (src, dst) == (r + 1, r)):
                counts[mb] += 1
        return counts

    def timeline(self, title: str = "") -> dict:
        """The blocks as a judge timeline artifact (floats, chunk only when v > 1)."""
        from judge.artifacts import timeline

        rows = [[(op, mb, float(a), float(b), c if self.v > 1 else None) for op, mb, a, b, c in row]
                for row in self.blocks]
        return timeline(rows, title=title)


def simulate(kind: str, p: int, m: int, v: int = 1) -> SimResult:
    """Play the schedule with unit stage times (1/v per chunk) and return what happened."""
    orders = stage_orders(kind, p, m, v)
    v_eff = v if kind == "interleaved" else 1
    step = Fraction(1, v_eff)
    last = p * v_eff - 1
    done: dict[tuple[str, int, int], Fraction] = {}
    pos = [0] * p
    free = [Fraction(0)] * p
    blocks: list[list[tuple[str, int, Fraction, Fraction, int]]] = [[] for _ in range(p)]
    messages: list[tuple[str, int, int, int]] = []
    progress = True
    while progress:
        progress = False
        for r in range(p):
            while pos[r] < len(orders[r]):
                op, mb, c = orders[r][pos[r]]
                g = c * p + r
                if op == "F":
                    dep = ("F", mb, g - 1) if g > 0 else None
                else:
                    dep = ("B", mb, g + 1) if g < last else ("F", mb, g)
                if dep is not None and dep not in done:
                    break  # wait for another rank
                start = max(free[r], done[dep]) if dep is not None else free[r]
                end = start + step
                done[(op, mb, g)] = end
                free[r] = end
                blocks[r].append((op, mb, start, end, c))
                if dep is not None and dep[2] % p != r:
                    messages.append((op, mb, dep[2] % p, r))
                pos[r] += 1
                progress = True
    if any(pos[r] < len(orders[r]) for r in range(p)):
        raise RuntimeError("schedule deadlocked")  # cannot happen for the schedules above
    peak = []
    for ops in orders:
        held = best = 0
        for op, _, _ in ops:
            held += 1 if op == "F" else -1
            best = max(best, held)
        peak.append(best)
    busy = [sum((b[3] - b[2] for b in row), Fraction(0)) for row in blocks]
    return SimResult(p, m, v_eff, blocks, max(free), busy, peak, messages)
