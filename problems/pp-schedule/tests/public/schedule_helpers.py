"""Helpers for the pp-schedule tests: readable formatting, hints for known mistakes, timelines.

The timeline attached to each test comes from a tiny unit-time simulation of the schedule under
test (every forward and backward takes one time unit): at each tick, a stage runs its next
operation if that operation's input is ready. A schedule that cannot finish is drawn up to the
point where it gets stuck.
"""

from __future__ import annotations

from typing import Any

from judge.artifacts import timeline


def as_ops(stage: Any) -> list[tuple[Any, Any]]:
    """A stage's operations as a list of 2-tuples (lists become tuples), for comparison."""
    return [tuple(op) if isinstance(op, (list, tuple)) else op for op in stage]


def fmt(stage: Any) -> str:
    """Operations as 'F0 F1 B0 ...', the way the statement writes them."""
    parts = []
    for op in stage:
        if isinstance(op, (list, tuple)) and len(op) == 2:
            parts.append(f"{op[0]}{op[1]}")
        else:
            parts.append(repr(op))
    return " ".join(parts) if parts else "(nothing)"


def _plain(sched: Any) -> list[list[tuple[str, int]]] | None:
    """The schedule as plain ('F'|'B', int) tuples, or None if it is not shaped like one."""
    try:
        return [[(str(op), int(mb)) for op, mb in stage] for stage in sched]
    except (TypeError, ValueError):
        return None


def unit_timeline(sched: list[list[tuple[str, int]]]) -> list[list[tuple[str, int, float, float]]]:
    """Blocks (op, mb, start, end) per stage, every operation taking one time unit."""
    p = len(sched)
    done: set[tuple[int, str, int]] = set()
    nxt = [0] * p
    rows: list[list[tuple[str, int, float, float]]] = [[] for _ in range(p)]
    tick = 0
    while True:
        started = []
        for s in range(p):
            if nxt[s] >= len(sched[s]):
                continue
            op, mb = sched[s][nxt[s]]
            if op == "F":
                need = (s - 1, "F", mb) if s > 0 else None
            elif op == "B":
                need = (s + 1, "B", mb) if s < p - 1 else (s, "F", mb)
            else:
                continue  # an unknown operation blocks its stage
            if need is None or need in done:
                started.append((s, op, mb))
        if not started:
            return rows
        for s, op, mb in started:
            rows[s].append((op, mb, float(tick), float(tick + 1)))
            nxt[s] += 1
        done.update(started)
        tick += 1


def attach(record_property: Any, sched: Any, title: str) -> None:
    """Attach the unit-time timeline of `sched` to the test result (skipped if it is malformed)."""
    plain = _plain(sched)
    if plain is None or not plain or any(op not in ("F", "B") for stage in plain for op, _ in stage):
        return
    record_property("timeline", timeline(unit_timeline(plain), title=f"{title} (unit-time blocks)"))


def hint(kind: str, p: int, m: int, s: int, got: list[Any]) -> str:
    """A likely mistake behind a wrong stage list, or '' when none is recognised."""
    ops = [op for op in got if isinstance(op, tuple) and len(op) == 2]
    mbs = [mb for _, mb in ops if isinstance(mb, int)]
    forwards = [mb for op, mb in ops if op == "F"]
    backwards = [mb for op, mb in ops if op == "B"]
    if any(mb < 0 or mb >= m for mb in mbs):
        return (f" (micro-batch numbers must be in 0..{m - 1}; with m < p the warm-up must be capped: "
                f"min(p - s - 1, m) forwards)")
    if len(backwards) > 1 and backwards == sorted(backwards, reverse=True):
        return " (your backwards run in reverse order; this chapter's convention is ascending: B0 first)"
    if len(got) != 2 * m or sorted(forwards) != list(range(m)) or sorted(backwards) != list(range(m)):
        return f" (each stage must run F0..F{m - 1} and B0..B{m - 1} exactly once each)"
    first_b = next((k for k, op in enumerate(ops) if op[0] == "B"), len(ops))
    if kind == "gpipe" and first_b < m:
        return " (GPipe runs all m forwards before the first backward)"
    if kind == "1f1b":
        want = min(p - s, m)
        if first_b == m and want < m:
            return " (that is GPipe's order: in 1F1B the first backward comes right after the warm-up and one more forward)"
        if first_b == want + 1:
            return (f" (one forward too many before the first backward: stage {s} does min(p - s - 1, m) = "
                    f"{min(p - s - 1, m)} warm-up forwards, not p - s)")
        if first_b != want:
            return (f" (stage {s} should run {want} forwards before its first backward: "
                    f"min(p - s - 1, m) warm-up forwards plus the first steady-state forward)")
    return ""


def check_schedule(got: Any, expected: list[list[tuple[str, int]]], kind: str, p: int, m: int) -> None:
    """Assert that `got` equals `expected`, stage by stage, with a message for the learner."""
    where = f"schedule({kind!r}, p={p}, m={m})"
    assert isinstance(got, list), f"{where} must return a list of {p} lists, got {type(got).__name__}"
    assert len(got) == p, f"{where} must return one list per stage ({p} lists), got {len(got)}"
    for s, (stage, want) in enumerate(zip(got, expected)):
        assert isinstance(stage, list), f"{where}, stage {s}: expected a list, got {type(stage).__name__}"
        ops = as_ops(stage)
        assert ops == want, (f"{where}, stage {s}: expected {fmt(want)}, got {fmt(ops)}"
                             f"{hint(kind, p, m, s, ops)}")


def expect_value_error(kind: Any, p: Any, m: Any, why: str) -> None:
    """Assert that pp_sim.schedule(kind, p, m) raises ValueError with a non-empty message."""
    import pp_sim

    call = f"schedule({kind!r}, {p!r}, {m!r})"
    try:
        got = pp_sim.schedule(kind, p, m)
    except ValueError as exc:
        assert str(exc).strip(), f"{call} raised ValueError without a message; say what is wrong ({why})"
        return
    except Exception as exc:  # noqa: BLE001 - any other exception is the learner's mistake to report
        raise AssertionError(f"{call} should raise ValueError ({why}), "
                             f"but raised {type(exc).__name__}: {exc}") from None
    raise AssertionError(f"{call} should raise ValueError ({why}), but it returned {str(got)[:80]}")
