"""Helpers for the pp-schedule tests: readable formatting, hints for known mistakes, timelines.

The timeline attached to each test comes from a tiny unit-time simulation of the schedule under
test (every forward and backward takes one time unit): at each tick, a stage runs its next
operation if that operation's input is ready. A schedule that cannot finish is drawn up to the
point where it gets stuck.
"""

from __future__ import annotations

from typing import Any

from judge.artifacts import timeline
from judge.lang import say

KINDS = ("gpipe", "1f1b")


def shown(**values: Any) -> str:
    """A readable test id, ``p='4' (a str), m=4``: each value's repr, with its type when it is not an int
    (pytest's own id would be ``4-4`` for both ``('4', 4)`` and ``(4, 4)``)."""
    return ", ".join(f"{name}={value!r}" + ("" if type(value) is int else f" (a {type(value).__name__})")
                     for name, value in values.items())


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
    return _unit_run(sched)[0]


def stuck_stages(sched: list[list[tuple[str, int]]]) -> dict[int, str]:
    """The stages left with operations when no stage can start one: stage -> the operation it waits at."""
    nxt = _unit_run(sched)[1]
    return {s: f"{sched[s][k][0]}{sched[s][k][1]}" for s, k in enumerate(nxt) if k < len(sched[s])}


def _unit_run(sched: list[list[tuple[str, int]]]) -> tuple[list[list[tuple[str, int, float, float]]], list[int]]:
    """The unit-time run: the blocks per stage, and how far each stage got."""
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
            return rows, nxt
        for s, op, mb in started:
            rows[s].append((op, mb, float(tick), float(tick + 1)))
            nxt[s] += 1
        done.update(started)
        tick += 1


def attach(record_property: Any, sched: Any, title: str, want: list[list[tuple[str, int]]] | None = None) -> None:
    """Attach the unit-time timeline of `sched` to the test result (skipped if it is malformed), its
    stuck stages marked; with `want` (public tests only: the expected order is in the public file
    anyway), the expected timeline too, which the page and `-v` draw under yours when the test fails."""
    plain = _plain(sched)
    if plain is None or not plain or any(op not in ("F", "B") for stage in plain for op, _ in stage):
        return
    record_property("timeline", timeline(unit_timeline(plain), title=f"{title} (unit-time blocks)",
                                         stuck=stuck_stages(plain)))
    if want is not None:
        record_property("expected", timeline(unit_timeline(want), title=f"expected {title}"))


def _leading_forwards(ops: list[Any]) -> int:
    return next((k for k, op in enumerate(ops) if op[0] != "F"), len(ops))


def _one_f_one_b_shaped(ops: list[Any], m: int) -> bool:
    """True when `ops` is F0..F(m-1) and B0..B(m-1), each ascending, and after the first backward
    it alternates one backward, one forward until the forwards run out (any number of leading forwards)."""
    if [mb for op, mb in ops if op == "F"] != list(range(m)) or [mb for op, mb in ops if op == "B"] != list(range(m)):
        return False
    lead = _leading_forwards(ops)
    tail = [op for op, _ in ops[lead:]]
    steady = 2 * (m - lead)
    return tail[:steady] == ["B", "F"] * (m - lead) and all(op == "B" for op in tail[steady:])


def diagnose(kind: str, p: int, m: int, got: Any, expected: list[list[tuple[str, int]]]) -> str:
    """The likely mistake behind a whole wrong schedule, or '' when none is recognised.

    A diagnosis is given only when the learner's FULL order (every stage) matches it: "GPipe's
    order" only when every stage is F0..F(m-1) B0..B(m-1) and the off-by-one warm-up would not give
    the same order; "one warm-up forward too many" only when every stage is the 1F1B shape with one
    more leading forward than expected (capped at m) and it is not also GPipe's order. When both
    match (m <= 2), the message says what the order does, not which formula produced it.
    """
    sched = _plain(got)
    if sched is None or len(sched) != p or len(expected) != p:
        return ""
    mbs = [mb for stage in sched for _, mb in stage]
    if any(mb < 0 or mb >= m for mb in mbs):
        return say(f" (micro-batch numbers must be in 0..{m - 1}; with fewer micro-batches than stages the "
                   f"warm-up must be capped at m: min(p - s - 1, m) forwards)",
                   zh=f"（微批次编号必须在 0..{m - 1} 之内；微批次比 stage 少时，预热数量必须以 m 为上限："
                      f"min(p - s - 1, m) 个前向）")
    for stage in sched:
        if len(stage) != 2 * m or sorted(stage) != sorted([("F", i) for i in range(m)] + [("B", i) for i in range(m)]):
            return say(f" (each stage must run F0..F{m - 1} and B0..B{m - 1} exactly once each)",
                       zh=f"（每个 stage 必须把 F0..F{m - 1} 和 B0..B{m - 1} 各运行恰好一次）")
    if m > 1 and all([mb for op, mb in stage if op == "B"] == list(range(m - 1, -1, -1)) for stage in sched):
        return say(" (your backwards run in reverse order; this chapter's convention is ascending: B0 first)",
                   zh="（你的反向按相反的顺序运行；本章的约定是升序：B0 在先）")
    if kind != "1f1b" or not all(_one_f_one_b_shaped(stage, m) for stage in sched):
        return ""
    want = [_leading_forwards(stage) for stage in expected]
    lead = [_leading_forwards(stage) for stage in sched]
    off_by_one, gpipe = lead == [min(w + 1, m) for w in want], lead == [m] * p
    if off_by_one and gpipe:  # with m <= 2 both mistakes give this order: say only what it is
        return say(" (every stage runs one forward too many before its first backward)",
                   zh="（每个 stage 在第一个反向之前都多运行了一个前向）")
    if off_by_one:
        return say(" (every stage runs one warm-up forward too many: your warm-up looks like min(p - s, m))",
                   zh="（每个 stage 都多运行了一个预热前向：你的预热数量看起来是 min(p - s, m)）")
    if gpipe:
        return say(" (that is GPipe's order on every stage: in 1F1B stage s runs its first backward after "
                   "min(p - s - 1, m) warm-up forwards and one more forward)",
                   zh="（每个 stage 上都是 GPipe 的顺序：在 1F1B 中，stage s 先运行 min(p - s - 1, m) 个预热前向"
                      "和再一个前向，然后才运行它的第一个反向）")
    if lead == [max(w - 1, 0) for w in want]:
        return say(" (every stage runs one forward too few before its first backward)",
                   zh="（每个 stage 在第一个反向之前都少运行了一个前向）")
    return ""


def check_schedule(got: Any, expected: list[list[tuple[str, int]]], kind: str, p: int, m: int) -> None:
    """Assert that `got` equals `expected`, stage by stage, with a message for the learner."""
    where = f"schedule({kind!r}, p={p}, m={m})"
    assert isinstance(got, list), say(f"{where} must return a list of {p} lists, got {type(got).__name__}",
                                      zh=f"{where} 必须返回由 {p} 个列表组成的列表，实际得到 {type(got).__name__}")
    assert len(got) == p, say(f"{where} must return one list per stage ({p} lists), got {len(got)}",
                              zh=f"{where} 必须为每个 stage 返回一个列表（{p} 个列表），实际得到 {len(got)} 个")
    for s, (stage, want) in enumerate(zip(got, expected)):
        assert isinstance(stage, list), say(f"{where}, stage {s}: expected a list, got {type(stage).__name__}",
                                            zh=f"{where}，stage {s}：预期一个列表，实际得到 {type(stage).__name__}")
        ops = as_ops(stage)
        if ops != want:
            lead, want_lead = _leading_forwards([op for op in ops if isinstance(op, tuple)]), _leading_forwards(want)
            warm = min(p - s - 1, m)
            fact = (say(f"; stage {s} runs {lead} forwards before its first backward, 1F1B runs {want_lead}: "
                        f"min(p - s - 1, m) = {warm} warm-up forwards"
                        + (", then the first steady-state forward" if want_lead > warm else ""),
                        zh=f"；stage {s} 在第一个反向之前运行了 {lead} 个前向，1F1B 运行 {want_lead} 个："
                           f"min(p - s - 1, m) = {warm} 个预热前向"
                           + ("，然后是稳定阶段的第一个前向" if want_lead > warm else ""))
                    if kind == "1f1b" and lead != want_lead else "")
            diagnosis = diagnose(kind, p, m, got, expected)
            raise AssertionError(say(f"{where}, stage {s}: expected {fmt(want)}, got {fmt(ops)}{fact}{diagnosis}",
                                     zh=f"{where}，stage {s}：预期 {fmt(want)}，实际 {fmt(ops)}{fact}{diagnosis}"))
        for op in stage:
            assert isinstance(op, tuple) and len(op) == 2 and type(op[0]) is str and type(op[1]) is int, say(
                f"{where}, stage {s}: every operation must be a tuple (str 'F' or 'B', int micro-batch) like "
                f"('F', 0), got {op!r}" + (f" (a {type(op).__name__} of {', '.join(type(x).__name__ for x in op)})"
                                           if isinstance(op, (list, tuple)) else f" (a {type(op).__name__})"),
                zh=f"{where}，stage {s}：每个操作都必须是像 ('F', 0) 这样的元组（str 'F' 或 'B'，int 微批次编号），"
                   f"实际得到 {op!r}" + (f"（由 {', '.join(type(x).__name__ for x in op)} 组成的 {type(op).__name__}）"
                                      if isinstance(op, (list, tuple)) else f"（一个 {type(op).__name__}）"))


def check_every_operation_once(got: Any, kind: str, p: int, m: int) -> None:
    """Assert that `got` has p stages, each running F0..F(m-1) and B0..B(m-1) once (in any order):
    what the tests of a property check first, so that an empty or partial answer passes none."""
    where = f"schedule({kind!r}, p={p}, m={m})"
    assert isinstance(got, list) and len(got) == p, say(
        f"{where} must return one list per stage ({p} lists), got {fmt_value(got)}",
        zh=f"{where} 必须为每个 stage 返回一个列表（{p} 个列表），实际得到 {fmt_value(got)}")
    want = sorted([("F", i) for i in range(m)] + [("B", i) for i in range(m)])
    for s, stage in enumerate(got):
        ops = as_ops(stage) if isinstance(stage, list) else None
        assert ops is not None and sorted(map(repr, ops)) == sorted(map(repr, want)), say(
            f"{where}, stage {s}: must run every F0..F{m - 1} and B0..B{m - 1} exactly once, got "
            f"{fmt(ops) if ops is not None else fmt_value(stage)}",
            zh=f"{where}，stage {s}：必须把 F0..F{m - 1} 和 B0..B{m - 1} 每个都运行恰好一次，实际得到 "
               f"{fmt(ops) if ops is not None else fmt_value(stage)}")


def fmt_value(value: Any) -> str:
    text = repr(value)
    return f"{type(value).__name__} {text if len(text) <= 80 else text[:77] + '...'}"


def _raises_value_error(kind: Any, p: Any, m: Any) -> bool:
    import pp_sim

    try:
        pp_sim.schedule(kind, p, m)
    except ValueError:
        return True
    except Exception:  # noqa: BLE001 - only a ValueError counts as rejecting the input
        return False
    return False


def _diagnose_accepted(kind: Any, p: Any, m: Any, got: Any, also: tuple[Any, Any, Any, str] | None) -> str:
    """Why an invalid call returned, when a check supports it ('' otherwise).

    `also` is a call (kind, p, m, advice) that is invalid for the same reason: when it raises
    ValueError, this call should too, and the message says so. An unknown kind whose result equals
    what the code returns for "1f1b" or "gpipe" with the same sizes fell through to that branch.
    """
    import pp_sim

    if also is not None and _raises_value_error(*also[:3]):
        return say(f" (likely mistake: schedule({also[0]!r}, {also[1]!r}, {also[2]!r}) raises ValueError but this "
                   f"call does not: {also[3]})",
                   zh=f"（可能的错误：schedule({also[0]!r}, {also[1]!r}, {also[2]!r}) 会抛出 ValueError，而这次调用"
                      f"不会：{also[3]}）")
    if (kind not in KINDS and all(type(x) is int and x >= 1 for x in (p, m))):
        for known in KINDS:
            try:
                same = got == pp_sim.schedule(known, p, m)
            except Exception:  # noqa: BLE001 - the learner's code may fail here too; then no diagnosis
                same = False
            if same:
                return say(f" (likely mistake: the unknown kind {kind!r} is treated as {known!r}: your code returns "
                           f"the same order for both)",
                           zh=f"（可能的错误：未知的 kind {kind!r} 被当成了 {known!r}：你的代码对两者返回相同的顺序）")
    return ""


def expect_value_error(kind: Any, p: Any, m: Any, why: str, also: tuple[Any, Any, Any, str] | None = None) -> None:
    """Assert that pp_sim.schedule(kind, p, m) raises ValueError with a non-empty message.

    `also`: an invalid call (kind, p, m, advice) of the same kind of mistake, used for a diagnosis."""
    import pp_sim

    call = f"schedule({kind!r}, {p!r}, {m!r})"
    try:
        got = pp_sim.schedule(kind, p, m)
    except ValueError as exc:
        assert str(exc).strip(), say(f"{call} raised ValueError without a message; say what is wrong ({why})",
                                     zh=f"{call} 抛出的 ValueError 没有信息；请说明哪里不对（{why}）")
        return
    except Exception as exc:  # noqa: BLE001 - any other exception is the learner's mistake to report
        raise AssertionError(say(f"{call} should raise ValueError ({why}), "
                                 f"but raised {type(exc).__name__}: {exc}",
                                 zh=f"{call} 应当抛出 ValueError（{why}），"
                                    f"却抛出了 {type(exc).__name__}: {exc}")) from None
    diagnosis = _diagnose_accepted(kind, p, m, got, also)
    raise AssertionError(say(f"{call} should raise ValueError ({why}), but it returned {str(got)[:80]}{diagnosis}",
                             zh=f"{call} 应当抛出 ValueError（{why}），却返回了 {str(got)[:80]}{diagnosis}"))
