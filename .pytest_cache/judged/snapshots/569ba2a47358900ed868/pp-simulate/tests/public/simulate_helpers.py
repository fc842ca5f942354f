"""Helpers for the pp-simulate tests: schedules, reading a SimResult, and checks with hints.

The tests pass their own schedules (the table SCHEDULES below) to your simulate(). `check_rules` checks the simulator's defining rules block by block:
every block of a stage in list order, the right duration, never two blocks at once on a stage,
never before its input is ready, and as early as those rules allow.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from judge.artifacts import timeline
from judge.lang import say

TOL = 1e-9


def shown(**values: Any) -> str:
    """A readable test id, ``p='4' (a str), m=4``: each value's repr, with its type when it is not an int
    (pytest's own id would be ``4-4`` for both ``('4', 4)`` and ``(4, 4)``)."""
    return ", ".join(f"{name}={value!r}" + ("" if type(value) is int else f" (a {type(value).__name__})")
                     for name, value in values.items())


# The GPipe and 1F1B orders the public tests simulate, written out (the tests do not compute them:
# writing those orders is the problem pp-schedule).
SCHEDULES = {
    ('1f1b', 2, 2): [
        "F0 F1 B0 B1",
        "F0 B0 F1 B1",
    ],
    ('gpipe', 2, 2): [
        "F0 F1 B0 B1",
        "F0 F1 B0 B1",
    ],
    ('1f1b', 4, 6): [
        "F0 F1 F2 F3 B0 F4 B1 F5 B2 B3 B4 B5",
        "F0 F1 F2 B0 F3 B1 F4 B2 F5 B3 B4 B5",
        "F0 F1 B0 F2 B1 F3 B2 F4 B3 F5 B4 B5",
        "F0 B0 F1 B1 F2 B2 F3 B3 F4 B4 F5 B5",
    ],
    ('gpipe', 4, 4): [
        "F0 F1 F2 F3 B0 B1 B2 B3",
        "F0 F1 F2 F3 B0 B1 B2 B3",
        "F0 F1 F2 F3 B0 B1 B2 B3",
        "F0 F1 F2 F3 B0 B1 B2 B3",
    ],
    ('1f1b', 4, 4): [
        "F0 F1 F2 F3 B0 B1 B2 B3",
        "F0 F1 F2 B0 F3 B1 B2 B3",
        "F0 F1 B0 F2 B1 F3 B2 B3",
        "F0 B0 F1 B1 F2 B2 F3 B3",
    ],
    ('gpipe', 4, 8): [
        "F0 F1 F2 F3 F4 F5 F6 F7 B0 B1 B2 B3 B4 B5 B6 B7",
        "F0 F1 F2 F3 F4 F5 F6 F7 B0 B1 B2 B3 B4 B5 B6 B7",
        "F0 F1 F2 F3 F4 F5 F6 F7 B0 B1 B2 B3 B4 B5 B6 B7",
        "F0 F1 F2 F3 F4 F5 F6 F7 B0 B1 B2 B3 B4 B5 B6 B7",
    ],
    ('1f1b', 4, 8): [
        "F0 F1 F2 F3 B0 F4 B1 F5 B2 F6 B3 F7 B4 B5 B6 B7",
        "F0 F1 F2 B0 F3 B1 F4 B2 F5 B3 F6 B4 F7 B5 B6 B7",
        "F0 F1 B0 F2 B1 F3 B2 F4 B3 F5 B4 F6 B5 F7 B6 B7",
        "F0 B0 F1 B1 F2 B2 F3 B3 F4 B4 F5 B5 F6 B6 F7 B7",
    ],
    ('gpipe', 4, 16): [
        ("F0 F1 F2 F3 F4 F5 F6 F7 F8 F9 F10 F11 F12 F13 F14 F15 B0 B1 B2 B3 B4 B5 B6 B7 B8 B9 "
         "B10 B11 B12 B13 B14 B15"),
        ("F0 F1 F2 F3 F4 F5 F6 F7 F8 F9 F10 F11 F12 F13 F14 F15 B0 B1 B2 B3 B4 B5 B6 B7 B8 B9 "
         "B10 B11 B12 B13 B14 B15"),
        ("F0 F1 F2 F3 F4 F5 F6 F7 F8 F9 F10 F11 F12 F13 F14 F15 B0 B1 B2 B3 B4 B5 B6 B7 B8 B9 "
         "B10 B11 B12 B13 B14 B15"),
        ("F0 F1 F2 F3 F4 F5 F6 F7 F8 F9 F10 F11 F12 F13 F14 F15 B0 B1 B2 B3 B4 B5 B6 B7 B8 B9 "
         "B10 B11 B12 B13 B14 B15"),
    ],
    ('1f1b', 4, 16): [
        ("F0 F1 F2 F3 B0 F4 B1 F5 B2 F6 B3 F7 B4 F8 B5 F9 B6 F10 B7 F11 B8 F12 B9 F13 B10 F14 "
         "B11 F15 B12 B13 B14 B15"),
        ("F0 F1 F2 B0 F3 B1 F4 B2 F5 B3 F6 B4 F7 B5 F8 B6 F9 B7 F10 B8 F11 B9 F12 B10 F13 B11 "
         "F14 B12 F15 B13 B14 B15"),
        ("F0 F1 B0 F2 B1 F3 B2 F4 B3 F5 B4 F6 B5 F7 B6 F8 B7 F9 B8 F10 B9 F11 B10 F12 B11 F13 "
         "B12 F14 B13 F15 B14 B15"),
        ("F0 B0 F1 B1 F2 B2 F3 B3 F4 B4 F5 B5 F6 B6 F7 B7 F8 B8 F9 B9 F10 B10 F11 B11 F12 B12 "
         "F13 B13 F14 B14 F15 B15"),
    ],
    ('gpipe', 4, 32): [
        ("F0 F1 F2 F3 F4 F5 F6 F7 F8 F9 F10 F11 F12 F13 F14 F15 F16 F17 F18 F19 F20 F21 F22 "
         "F23 F24 F25 F26 F27 F28 F29 F30 F31 B0 B1 B2 B3 B4 B5 B6 B7 B8 B9 B10 B11 B12 B13 "
         "B14 B15 B16 B17 B18 B19 B20 B21 B22 B23 B24 B25 B26 B27 B28 B29 B30 B31"),
        ("F0 F1 F2 F3 F4 F5 F6 F7 F8 F9 F10 F11 F12 F13 F14 F15 F16 F17 F18 F19 F20 F21 F22 "
         "F23 F24 F25 F26 F27 F28 F29 F30 F31 B0 B1 B2 B3 B4 B5 B6 B7 B8 B9 B10 B11 B12 B13 "
         "B14 B15 B16 B17 B18 B19 B20 B21 B22 B23 B24 B25 B26 B27 B28 B29 B30 B31"),
        ("F0 F1 F2 F3 F4 F5 F6 F7 F8 F9 F10 F11 F12 F13 F14 F15 F16 F17 F18 F19 F20 F21 F22 "
         "F23 F24 F25 F26 F27 F28 F29 F30 F31 B0 B1 B2 B3 B4 B5 B6 B7 B8 B9 B10 B11 B12 B13 "
         "B14 B15 B16 B17 B18 B19 B20 B21 B22 B23 B24 B25 B26 B27 B28 B29 B30 B31"),
        ("F0 F1 F2 F3 F4 F5 F6 F7 F8 F9 F10 F11 F12 F13 F14 F15 F16 F17 F18 F19 F20 F21 F22 "
         "F23 F24 F25 F26 F27 F28 F29 F30 F31 B0 B1 B2 B3 B4 B5 B6 B7 B8 B9 B10 B11 B12 B13 "
         "B14 B15 B16 B17 B18 B19 B20 B21 B22 B23 B24 B25 B26 B27 B28 B29 B30 B31"),
    ],
    ('1f1b', 4, 32): [
        ("F0 F1 F2 F3 B0 F4 B1 F5 B2 F6 B3 F7 B4 F8 B5 F9 B6 F10 B7 F11 B8 F12 B9 F13 B10 F14 "
         "B11 F15 B12 F16 B13 F17 B14 F18 B15 F19 B16 F20 B17 F21 B18 F22 B19 F23 B20 F24 B21 "
         "F25 B22 F26 B23 F27 B24 F28 B25 F29 B26 F30 B27 F31 B28 B29 B30 B31"),
        ("F0 F1 F2 B0 F3 B1 F4 B2 F5 B3 F6 B4 F7 B5 F8 B6 F9 B7 F10 B8 F11 B9 F12 B10 F13 B11 "
         "F14 B12 F15 B13 F16 B14 F17 B15 F18 B16 F19 B17 F20 B18 F21 B19 F22 B20 F23 B21 F24 "
         "B22 F25 B23 F26 B24 F27 B25 F28 B26 F29 B27 F30 B28 F31 B29 B30 B31"),
        ("F0 F1 B0 F2 B1 F3 B2 F4 B3 F5 B4 F6 B5 F7 B6 F8 B7 F9 B8 F10 B9 F11 B10 F12 B11 F13 "
         "B12 F14 B13 F15 B14 F16 B15 F17 B16 F18 B17 F19 B18 F20 B19 F21 B20 F22 B21 F23 B22 "
         "F24 B23 F25 B24 F26 B25 F27 B26 F28 B27 F29 B28 F30 B29 F31 B30 B31"),
        ("F0 B0 F1 B1 F2 B2 F3 B3 F4 B4 F5 B5 F6 B6 F7 B7 F8 B8 F9 B9 F10 B10 F11 B11 F12 B12 "
         "F13 B13 F14 B14 F15 B15 F16 B16 F17 B17 F18 B18 F19 B19 F20 B20 F21 B21 F22 B22 F23 "
         "B23 F24 B24 F25 B25 F26 B26 F27 B27 F28 B28 F29 B29 F30 B30 F31 B31"),
    ],
    ('1f1b', 4, 2): [
        "F0 F1 B0 B1",
        "F0 F1 B0 B1",
        "F0 F1 B0 B1",
        "F0 B0 F1 B1",
    ],
    ('gpipe', 1, 3): [
        "F0 F1 F2 B0 B1 B2",
    ],
    ('1f1b', 1, 3): [
        "F0 B0 F1 B1 F2 B2",
    ],
    ('1f1b', 3, 4): [
        "F0 F1 F2 B0 F3 B1 B2 B3",
        "F0 F1 B0 F2 B1 F3 B2 B3",
        "F0 B0 F1 B1 F2 B2 F3 B3",
    ],
}


def build(kind: str, p: int, m: int) -> list[list[tuple[str, int]]]:
    """The GPipe or 1F1B per-stage orders for (kind, p, m): from SCHEDULES above; the hidden tests
    bring their own orders for other sizes."""
    if (kind, p, m) in SCHEDULES:
        return [ops(text) for text in SCHEDULES[(kind, p, m)]]
    from simulate_oracle import orders  # only present with the hidden tests

    return orders(kind, p, m)


def ops(text: str) -> list[tuple[str, int]]:
    """'F0 F1 B0' -> [('F', 0), ('F', 1), ('B', 0)]."""
    return [(tok[0], int(tok[1:])) for tok in text.split()]


def num(x: float) -> str:
    """A time as the tests print it: 4 rather than 4.0, 2.75 as is."""
    return f"{float(x):g}"


@dataclass
class Sim:
    """A SimResult read into plain Python values."""

    timeline: list[list[tuple[str, int, float, float]]]
    total: float
    bubble: float
    peaks: list[int]


def read(result: Any) -> Sim:
    """Read the fields of a SimResult, with a clear message when one is missing or malformed."""
    for field in ("timeline", "total", "bubble", "peak_activations"):
        assert hasattr(result, field), say(
            f"simulate() must return a SimResult (the dataclass in pp_sim.py) with a field {field!r}; "
            f"got {type(result).__name__}",
            zh=f"simulate() 必须返回一个带有字段 {field!r} 的 SimResult（pp_sim.py 中的 dataclass）；"
               f"实际得到 {type(result).__name__}")
    rows = []
    for s, row in enumerate(result.timeline):
        blocks = []
        for block in row:
            try:
                op, mb, start, end = block
                blocks.append((str(op), int(mb), float(start), float(end)))
            except (TypeError, ValueError):
                raise AssertionError(say(f"timeline[{s}] must hold (op, mb, start, end) tuples, got {block!r}",
                                         zh=f"timeline[{s}] 必须存放 (op, mb, start, end) 元组，实际得到 {block!r}")
                                     ) from None
        rows.append(blocks)
    return Sim(rows, float(result.total), float(result.bubble), [int(x) for x in result.peak_activations])


def attach(record_property: Any, sim: Sim, title: str) -> None:
    """Attach the learner's timeline as an artifact (skipped if it cannot be drawn)."""
    try:
        record_property("timeline", timeline(sim.timeline, title=title))
    except (TypeError, ValueError):
        pass


def attach_expected(record_property: Any, want: list[list[tuple[str, int, float, float]]], title: str) -> None:
    """Record the expected blocks ``want`` beside your timeline (public tests only: they write the
    blocks out anyway); the page and ``-v`` draw them under yours when the test fails."""
    record_property("expected", timeline(want, title=f"expected {title}"))


def run(record_property: Any, sched: list[list[tuple[str, int]]], tf: float = 1.0, tb: float = 2.0,
        title: str = "") -> Sim:
    """pp_sim.simulate(sched, tf, tb), read and attached to the test."""
    import pp_sim

    sim = read(pp_sim.simulate(sched, tf=tf, tb=tb))
    attach(record_property, sim, f"{title}, tf={num(tf)}, tb={num(tb)} (your simulate)")
    return sim


def label(op: str, mb: int) -> str:
    return f"{op}{mb}"


def check_rules(sim: Sim, sched: list[list[tuple[str, int]]], tf: float, tb: float, where: str) -> None:
    """Assert that sim.timeline follows the simulator's rules for `sched`, block by block."""
    p = len(sched)
    assert len(sim.timeline) == p, say(f"{where}: expected a timeline with {p} stages, got {len(sim.timeline)}",
                                       zh=f"{where}：预期时间线有 {p} 个 stage，实际有 {len(sim.timeline)} 个")
    for s in range(p):
        got = [(op, mb) for op, mb, _, _ in sim.timeline[s]]
        want = list(sched[s])
        assert got == want, say(f"{where}, stage {s}: the timeline must list the stage's operations in the "
                                f"schedule's order {' '.join(label(*o) for o in want)}, got "
                                f"{' '.join(label(*o) for o in got)}",
                                zh=f"{where}，stage {s}：时间线必须按调度的顺序 {' '.join(label(*o) for o in want)} "
                                   f"列出这个 stage 的操作，实际是 {' '.join(label(*o) for o in got)}")
    ends = {(s, op, mb): end for s, row in enumerate(sim.timeline) for op, mb, _, end in row}
    for s, row in enumerate(sim.timeline):
        free = 0.0
        for op, mb, start, end in row:
            name = f"{where}, stage {s}, {label(op, mb)}"
            dur = tf if op == "F" else tb
            assert math.isclose(end - start, dur, abs_tol=TOL), say(
                f"{name}: runs from {num(start)} to {num(end)}, but a {'forward' if op == 'F' else 'backward'} "
                f"takes {'tf' if op == 'F' else 'tb'} = {num(dur)}",
                zh=f"{name}：从 {num(start)} 运行到 {num(end)}，但一次{'前向' if op == 'F' else '反向'}"
                   f"耗时 {'tf' if op == 'F' else 'tb'} = {num(dur)}")
            assert start >= free - TOL, say(
                f"{name}: starts at {num(start)} while the stage is still busy until {num(free)} "
                f"(a stage runs one operation at a time, in its list's order)",
                zh=f"{name}：在 {num(start)} 开始，而这个 stage 直到 {num(free)} 都还在忙碌"
                   f"（一个 stage 一次只运行一个操作，按它的列表的顺序）")
            if op == "F":
                need = (s - 1, "F", mb) if s > 0 else None
            else:
                need = (s + 1, "B", mb) if s < p - 1 else (s, "F", mb)
            ready = ends[need] if need is not None else 0.0
            if need is not None:
                hint = _dependency_hint(sim, s, op, mb, start, ends) if start < ready - TOL else ""
                assert start >= ready - TOL, say(
                    f"{name}: starts at {num(start)}, before its input {label(need[1], need[2])} on stage "
                    f"{need[0]} ends at {num(ready)}{hint}",
                    zh=f"{name}：在 {num(start)} 开始，早于它的输入——stage {need[0]} 上的 "
                       f"{label(need[1], need[2])}——在 {num(ready)} 结束{hint}")
            earliest = max(free, ready)
            hint = "" if math.isclose(start, earliest, abs_tol=TOL) else _dependency_hint(sim, s, op, mb, start, ends)
            assert math.isclose(start, earliest, abs_tol=TOL), say(
                f"{name}: starts at {num(start)}, but it could start at {num(earliest)} (the stage is free "
                f"at {num(free)}, its input is ready at {num(ready)}): start every operation as early as "
                f"the rules allow{hint}",
                zh=f"{name}：在 {num(start)} 开始，但它本可以在 {num(earliest)} 开始（这个 stage 在 {num(free)} "
                   f"空闲，它的输入在 {num(ready)} 就绪）：每个操作都要在规则允许的最早时刻开始{hint}")
            free = end


def _starts_when(sim: Sim, rule: Any) -> bool:
    """Whether EVERY block of the timeline starts at max(end of the stage's previous block, end of the
    block ``rule(s, op, mb)`` names (None: nothing)): the whole timeline follows that rule."""
    ends = {(s, op, mb): end for s, row in enumerate(sim.timeline) for op, mb, _, end in row}
    for s, row in enumerate(sim.timeline):
        free = 0.0
        for op, mb, start, end in row:
            need = rule(s, op, mb)
            if need is not None and need not in ends:
                return False
            if not math.isclose(start, max(free, ends[need] if need is not None else 0.0), abs_tol=TOL):
                return False
            free = end
    return True


def _dependency_hint(sim: Sim, s: int, op: str, mb: int, start: float, ends: dict) -> str:
    """Why a block starts at the wrong time: a wrong rule when the learner's WHOLE timeline follows
    it (and no other known wrong rule), else the rule the block breaks."""
    p = len(sim.timeline)

    def right(t: int, o: str, i: int) -> tuple[int, str, int] | None:
        if o == "F":
            return (t - 1, "F", i) if t > 0 else None
        return (t + 1, "B", i) if t < p - 1 else (t, "F", i)

    rules = {  # a wrong rule: how its backwards (B) or forwards (F) wait
        "own": lambda t, o, i: (t, "F", i) if o == "B" else right(t, o, i),
        "previous": lambda t, o, i: ((t - 1, "B", i) if t > 0 else (t, "F", i)) if o == "B" else right(t, o, i),
        "free": lambda t, o, i: None if o == "F" else right(t, o, i),
    }
    follows = {name for name, rule in rules.items() if _starts_when(sim, rule)}
    if op == "B" and follows == {"own"}:
        return say(f" (every backward of your timeline waits only for its own stage's forward: B{mb} on stage {s} "
                   f"also needs the gradient from B{mb} on stage {s + 1}, the next stage)",
                   zh=f"（你的时间线中每个反向都只等待它自己 stage 上的前向：stage {s} 上的 B{mb} "
                      f"还需要下一个 stage（stage {s + 1}）上 B{mb} 传回的梯度）")
    if op == "B" and follows == {"previous"}:
        then = (say(f"B{mb} on stage {s} waits for B{mb} on stage {s + 1}",
                    zh=f"stage {s} 上的 B{mb} 等待 stage {s + 1} 上的 B{mb}") if s < p - 1
                else say(f"B{mb} on the last stage waits only for its own F{mb}",
                         zh=f"最后一个 stage 上的 B{mb} 只等待它自己的 F{mb}"))
        return say(f" (every backward of your timeline waits for the previous stage's backward, as a forward does: "
                   f"gradients flow from the last stage back to stage 0, so {then})",
                   zh=f"（你的时间线中每个反向都像前向那样等待前一个 stage 的反向：梯度从最后一个 stage "
                      f"流回 stage 0，所以{then}）")
    if op == "F" and follows == {"free"}:
        return say(f" (every forward of your timeline starts as soon as its stage is free: F{mb} on stage {s} "
                   f"must also wait for the output of F{mb} on stage {s - 1}, the previous stage)",
                   zh=f"（你的时间线中每个前向都在它的 stage 一空闲就开始：stage {s} 上的 F{mb} "
                      f"还必须等待前一个 stage（stage {s - 1}）上 F{mb} 的输出）")
    if op == "B" and s < p - 1:
        return say(f" (B{mb} on stage {s} needs the gradient from B{mb} on stage {s + 1}, the next stage)",
                   zh=f"（stage {s} 上的 B{mb} 需要下一个 stage（stage {s + 1}）上 B{mb} 传回的梯度）")
    if op == "B":
        return say(f" (on the last stage, B{mb} waits for that stage's own F{mb})",
                   zh=f"（在最后一个 stage 上，B{mb} 等待这个 stage 自己的 F{mb}）")
    if s > 0:
        return say(f" (F{mb} on stage {s} needs the output of F{mb} on stage {s - 1})",
                   zh=f"（stage {s} 上的 F{mb} 需要 stage {s - 1} 上 F{mb} 的输出）")
    return ""


def check_blocks(sim: Sim, want: list[list[tuple[str, int, float, float]]], where: str) -> None:
    """Assert that the timeline equals `want` (times compared with a small tolerance)."""
    for s, (got_row, want_row) in enumerate(zip(sim.timeline, want)):
        for g, w in zip(got_row, want_row):
            same = g[:2] == w[:2] and all(math.isclose(a, b, abs_tol=TOL) for a, b in zip(g[2:], w[2:]))
            assert same, say(f"{where}, stage {s}: expected {label(*w[:2])} from {num(w[2])} to {num(w[3])}, "
                             f"got {label(*g[:2])} from {num(g[2])} to {num(g[3])}",
                             zh=f"{where}，stage {s}：预期 {label(*w[:2])} 从 {num(w[2])} 到 {num(w[3])}，"
                                f"实际 {label(*g[:2])} 从 {num(g[2])} 到 {num(g[3])}")
        assert len(got_row) == len(want_row), say(
            f"{where}, stage {s}: expected {len(want_row)} blocks, got {len(got_row)}",
            zh=f"{where}，stage {s}：预期 {len(want_row)} 个时间块，实际 {len(got_row)} 个")


def expected_peaks(sched: list[list[tuple[str, int]]]) -> list[int]:
    """Per stage, the most forwards whose backward has not run yet, following the list order."""
    peaks = []
    for row in sched:
        live = [0]
        for op, _ in row:
            live.append(live[-1] + (1 if op == "F" else -1))
        peaks.append(max(live))
    return peaks


def check_peaks(sim: Sim, sched: list[list[tuple[str, int]]], where: str, want: list[int] | None = None) -> None:
    """Assert peak_activations (computed from `sched` unless `want` is given)."""
    want = expected_peaks(sched) if want is None else want
    m = sum(1 for op, _ in sched[0] if op == "F")
    hint = ""
    if sim.peaks == [m] * len(sched) and want != sim.peaks:
        hint = say(" (every stage reaches m: does a backward free its micro-batch's activations?)",
                   zh="（每个 stage 都达到了 m：反向是否释放了它的微批次的激活？）")
    assert sim.peaks == want, say(f"{where}: expected peak_activations {want}, got {sim.peaks}{hint}",
                                  zh=f"{where}：预期 peak_activations {want}，实际 {sim.peaks}{hint}")


def bubble_of(sim: Sim) -> float:
    """Idle stage-time / (p * total), computed from the timeline itself."""
    p = len(sim.timeline)
    busy = sum(end - start for row in sim.timeline for _, _, start, end in row)
    return (p * sim.total - busy) / (p * sim.total)


def check_total(sim: Sim, want: float, where: str, why: str = "") -> None:
    """Assert total == want; name the mistake when total is the end of the last stage's last block."""
    hint = ""
    ends = [row[-1][3] for row in sim.timeline if row]
    if (len(ends) > 1 and math.isclose(sim.total, ends[-1], abs_tol=TOL)
            and not math.isclose(ends[-1], max(ends), abs_tol=TOL)):
        hint = say(f" (that is when the last stage finishes; stage {ends.index(max(ends))} finishes later, at "
                   f"{num(max(ends))}: T is the end of the last block of all stages)",
                   zh=f"（那是最后一个 stage 结束的时刻；stage {ends.index(max(ends))} 结束得更晚，在 "
                      f"{num(max(ends))}：T 是所有 stage 中最后一个时间块的结束时刻）")
    assert math.isclose(sim.total, want, rel_tol=1e-9, abs_tol=TOL), say(
        f"{where}: expected total {num(want)}{why}, got {num(sim.total)}{hint}",
        zh=f"{where}：预期 total {num(want)}{why}，实际 {num(sim.total)}{hint}")


def check_bubble(sim: Sim, want: float, where: str) -> None:
    """Assert bubble == want; name the formula the learner's bubble matches, computed from the
    learner's own timeline and total, when exactly one known wrong formula matches it."""
    p = len(sim.timeline)
    busy = sum(end - start for row in sim.timeline for _, _, start, end in row)
    idle = p * sim.total - busy
    readings = {}
    if p > 1 and sim.total > 0 and idle > TOL:
        readings[say(" (that is idle time / total: divide the idle stage-time by p * total)",
                     zh="（那是空闲时间 / total：要把各 stage 的空闲时间除以 p * total）")] = idle / sim.total
    if sim.total > 0:
        readings[say(" (that is the busy fraction: the bubble is the idle fraction)",
                     zh="（那是忙碌时间的占比：气泡是空闲时间的占比）")] = busy / (p * sim.total)
    if busy > 0 and idle > TOL:
        readings[say(" (that is idle / busy stage-time, the bubble relative to the work done; the bubble is the idle "
                     "share of all the stage-time, idle / (p * T))",
                     zh="（那是各 stage 的空闲时间 / 忙碌时间，即气泡与完成的工作之比；气泡是空闲时间在全部 "
                        "stage 时间中的占比，idle / (p * T)）")] = idle / busy
    matched = [hint for hint, value in readings.items() if math.isclose(sim.bubble, value, rel_tol=1e-6)]
    hint = matched[0] if len(matched) == 1 else ""
    if len(matched) > 1:  # two formulas give the same number here: say only what the bubble is
        hint = say(" (the bubble is the idle share of all the stage-time: idle / (p * T))",
                   zh="（气泡是空闲时间在全部 stage 时间中的占比：idle / (p * T)）")
    assert math.isclose(sim.bubble, want, rel_tol=1e-9, abs_tol=1e-12), say(
        f"{where}: expected bubble {want:.6f}, got {sim.bubble:.6f}{hint}",
        zh=f"{where}：预期 bubble {want:.6f}，实际 {sim.bubble:.6f}{hint}")


def expect_value_error(call: Any, what: str, why: str, diagnose: Any = None) -> None:
    """Assert that call() raises ValueError with a message; when it returns instead, the failure
    ends with ``diagnose()`` (a likely mistake, or "")."""
    try:
        got = call()
    except ValueError as exc:
        assert str(exc).strip(), say(f"{what} raised ValueError without a message; say what is wrong ({why})",
                                     zh=f"{what} 抛出的 ValueError 没有信息；请说明哪里不对（{why}）")
        return
    except Exception as exc:  # noqa: BLE001 - any other exception is the learner's mistake to report
        raise AssertionError(say(f"{what} should raise ValueError ({why}), but raised "
                                 f"{type(exc).__name__}: {exc}",
                                 zh=f"{what} 应当抛出 ValueError（{why}），却抛出了 "
                                    f"{type(exc).__name__}: {exc}")) from None
    diagnosis = diagnose() if diagnose else ''
    raise AssertionError(say(f"{what} should raise ValueError ({why}), but it returned {str(got)[:80]}{diagnosis}",
                             zh=f"{what} 应当抛出 ValueError（{why}），却返回了 {str(got)[:80]}{diagnosis}"))
