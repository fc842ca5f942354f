"""Hidden-test oracle for pp-dualpipe, written independently of the reference.

- The DualPipeV order is built in two passes: first each rank's phases as tokens without micro-batch
  numbers (the phase-6 switch to I written as DeepSeek's code does it, by rank parity), then the
  numbers are filled in by per-(stage, kind) counters and the W tokens resolved from a queue.
- Times come from a memoised longest-path recursion over the dependency graph.
- 1F1B and ZB-H1 on one stage per rank, for the comparisons.
"""

from __future__ import annotations

import functools
import random
import sys


def dualpipev(p: int, m: int) -> list[list]:
    return [_number(_tokens(p, m, r), r, 2 * p - 1 - r) for r in range(p)]


def _tokens(p: int, m: int, r: int) -> list:
    t: list = []
    t += [("F", 0)] * (2 * (p - r - 1))
    t += [("F", 0), ("F", 1)] * (r + 1)
    t += [("I", 1), ("W",), ("F", 1)] * (p - r - 1)
    for i in range(m - 2 * p + r + 1):
        t += [("F", 0), ("B", 1)] if (i == 0 and r == p - 1) else [("P", 0, 1)]
        t.append(("P", 1, 0))
    t += [("B", 1), ("P", 1, 0)] * (p - r - 1)
    zb = False
    half = (r + 1) // 2
    for i in range(r + 1):
        if i == half and r % 2 == 1:
            zb = True
        t.append(("I" if zb else "B", 1))
        if i == half and r % 2 == 0:
            zb = True
        t.append(("I" if zb else "B", 0))
    t += [("W",), ("I", 0)] * (p - r - 1)
    t += [("W",)] * (r + 1)
    return t


def _number(tokens: list, down: int, up: int) -> list:
    stage = {0: down, 1: up}
    nf = {0: 0, 1: 0}
    nb = {0: 0, 1: 0}
    queue: list = []
    out: list = []
    for tok in tokens:
        if tok[0] == "F":
            out.append(("F", nf[tok[1]], stage[tok[1]]))
            nf[tok[1]] += 1
        elif tok[0] in ("B", "I"):
            out.append((tok[0], nb[tok[1]], stage[tok[1]]))
            if tok[0] == "I":
                queue.append(("W", nb[tok[1]], stage[tok[1]]))
            nb[tok[1]] += 1
        elif tok[0] == "W":
            if queue:
                out.append(queue.pop(0))
        else:
            _, f, b = tok
            out.append((("F", nf[f], stage[f]), ("B", nb[b], stage[b])))
            nf[f] += 1
            nb[b] += 1
    return out


def baseline(name: str, p: int, m: int) -> list[list]:
    """1F1B (full B) or ZB-H1 (I, deferred W) on p ranks, stage s = rank s."""
    out = []
    for s in range(p):
        ops = []
        f = back = w = 0
        while back < m:
            if f < m and f - back < p - s:
                ops.append(("F", f, s))
                f += 1
                continue
            ops.append(("B" if name == "1f1b" else "I", back, s))
            back += 1
            if name != "1f1b" and back - 1 >= s:
                ops.append(("W", w, s))
                w += 1
            if f < m:
                ops.append(("F", f, s))
                f += 1
        ops += [("W", j, s) for j in range(w, m)] if name != "1f1b" else []
        out.append(ops)
    return out


def _subs(a):
    return tuple(a) if isinstance(a[0], tuple) else (a,)


def times(sched, tf, tb, tw, gain):
    """[(label-free action, start, end)] per rank, total; None on a cycle."""
    last = max(s for row in sched for a in row for _, _, s in _subs(a))
    where = {}
    for r, row in enumerate(sched):
        for k, a in enumerate(row):
            for kind, mb, s in _subs(a):
                where[("G" if kind in "BI" else kind, mb, s)] = (r, k)
                if kind == "I":
                    where[("I", mb, s)] = (r, k)
    dur = {"F": tf, "B": tb, "I": tb - tw, "W": tw}
    active: set = set()

    class Cycle(Exception):
        pass

    @functools.cache
    def end(r: int, k: int) -> float:
        if (r, k) in active:
            raise Cycle
        active.add((r, k))
        a = sched[r][k]
        t = end(r, k - 1) if k else 0.0
        for kind, mb, s in _subs(a):
            if kind == "F":
                need = ("F", mb, s - 1) if s else None
            elif kind in "BI":
                need = ("F", mb, s) if s == last else ("G", mb, s + 1)
            else:
                need = ("I", mb, s)
            if need is not None:
                if need not in where:
                    raise Cycle
                t = max(t, end(*where[need]))
        active.discard((r, k))
        return t + (tf + tb - gain if isinstance(a[0], tuple) else dur[a[0]])

    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, 20000))
    try:
        ends = [[end(r, k) for k in range(len(row))] for r, row in enumerate(sched)]
    except Cycle:
        return None
    finally:
        sys.setrecursionlimit(old)
    tl = []
    for row, e_row in zip(sched, ends):
        tl.append([(a, e - (tf + tb - gain if isinstance(a[0], tuple) else dur[a[0]]), e) for a, e in zip(row, e_row)])
    return tl, max(e for row in ends for e in row)


def random_schedule(p: int, m: int, seed: int) -> list[list]:
    """A random valid schedule on the V layout: actions picked in a feasible global order, ready
    forward-backward couples of a rank sometimes merged into a pair, some backwards split into I and W."""
    rnd = random.Random(seed)
    n = 2 * p
    rank_of = {s: min(s, n - 1 - s) for s in range(n)}
    done: set = set()
    todo = {("F", j, s) for j in range(m) for s in range(n)} | {("X", j, s) for j in range(m) for s in range(n)}
    owed: list = []
    sched = [[] for _ in range(p)]

    def ready(kind, j, s):
        if kind == "F":
            return s == 0 or ("F", j, s - 1) in done
        return ("F", j, s) in done if s == n - 1 else ("G", j, s + 1) in done

    while todo or owed:
        options = sorted(x for x in todo if ready(*x))
        w_options = list(owed)
        if w_options and (not options or rnd.random() < 0.25):
            w = w_options[rnd.randrange(len(w_options))]
            owed.remove(w)
            sched[rank_of[w[2]]].append(w)
            continue
        kind, j, s = options[rnd.randrange(len(options))]
        r = rank_of[s]
        todo.discard((kind, j, s))
        if kind == "F":
            partner = [x for x in options if x[0] == "X" and rank_of[x[2]] == r and x in todo]
            if partner and rnd.random() < 0.5:
                _, j2, s2 = partner[rnd.randrange(len(partner))]
                todo.discard(("X", j2, s2))
                sched[r].append((("F", j, s), ("B", j2, s2)))
                done.add(("G", j2, s2))
            else:
                sched[r].append(("F", j, s))
            done.add(("F", j, s))
        else:
            b = "I" if rnd.random() < 0.5 else "B"
            sched[r].append((b, j, s))
            done.add(("G", j, s))
            if b == "I":
                owed.append(("W", j, s))
    return sched
