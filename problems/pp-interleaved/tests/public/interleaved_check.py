"""Helpers for the interleaved 1F1B tests: formatting, comparing schedules, explaining mistakes.

Ops are written ``F<mb>c<chunk>`` / ``B<mb>c<chunk>``: ``F2c1`` is the forward of micro-batch 2
on the rank's local chunk 1 (the same labels the timeline uses).
"""

from __future__ import annotations

from typing import Any

from judge.lang import say

NOTATION = "(F<mb>c<chunk> = forward of micro-batch <mb> on the rank's local chunk <chunk>)"
NOTATION_ZH = "（F<mb>c<chunk> = 微批次 <mb> 在该 rank 的本地模型块 <chunk> 上的前向）"


def notation() -> str:
    return say(NOTATION, zh=NOTATION_ZH)


def likely(hint: str) -> str:
    """The frame of a diagnosis: ``likely mistake: <hint>``."""
    return say(f"likely mistake: {hint}", zh=f"可能的错误：{hint}")
FULL_LIST_LIMIT = 40  # longer lists are shown around their first difference only


def label(op: tuple[int, str, int]) -> str:
    chunk, kind, mb = op
    return f"{kind}{mb}c{chunk}"


def fmt(ops: list[tuple[int, str, int]]) -> str:
    return " ".join(label(op) for op in ops)


def parse(text: str) -> list[tuple[int, str, int]]:
    """``"F0c0 B1c2"`` -> ``[(0, "F", 0), (2, "B", 1)]``."""
    ops = []
    for word in text.split():
        mb, chunk = word[1:].split("c")
        ops.append((int(chunk), word[0], int(mb)))
    return ops


def normalize(sched: Any, p: int) -> list[list[tuple[int, str, int]]]:
    """Turn the learner's schedule into plain lists of (int, str, int), or fail with a clear message."""
    assert isinstance(sched, (list, tuple)), (
        f"interleaved_schedule must return a list with one list per rank, got {type(sched).__name__}")
    assert len(sched) == p, f"expected one list per rank ({p} ranks), got {len(sched)} lists"
    out = []
    for rank, ops in enumerate(sched):
        row = []
        for i, op in enumerate(ops):
            try:
                chunk, kind, mb = op
                row.append((int(chunk), str(kind), int(mb)))
            except (TypeError, ValueError):
                raise AssertionError(
                    f"rank {rank}, position {i}: every op must be a tuple (chunk, op, micro_batch), got {op!r}"
                ) from None
        out.append(row)
    return out


def warmup_formula(p: int, m: int, v: int, rank: int) -> int:
    if v == 1:
        return min(p - rank - 1, m)
    return min(2 * (p - rank - 1) + (v - 1) * p, m * v)


def leading_forwards(ops: list[tuple[int, str, int]]) -> int:
    n = 0
    for _, kind, _ in ops:
        if kind != "F":
            break
        n += 1
    return n


def warmup_hint(p: int, m: int, v: int, rank: int, got: int) -> str:
    """Name the likely mistake behind ``got`` warm-up forwards, only when exactly one known mistake gives
    that count at this rank (at some ranks two mistakes give the same count: then no guess)."""
    want = warmup_formula(p, m, v, rank)
    known = [
        (v > 1 and got == min(2 * (p - rank - 1), m * v),
         say("the warm-up is missing the (v - 1) * p term: every rank must first run chunks 0..v-2 for p "
             "micro-batches each", zh="预热缺少 (v - 1) * p 这一项：每个 rank 都要先让模型块 0..v-2 各运行 p 个微批次")),
        (v > 1 and got == 2 * (p - rank - 1) + (v - 1) * p,
         say(f"the warm-up is not capped at m * v = {m * v}", zh=f"预热数量没有以 m * v = {m * v} 为上限")),
        (v > 1 and got == min(p - rank - 1 + (v - 1) * p, m * v),
         say("the rank term is 2 * (p - r - 1), not p - r - 1", zh="rank 那一项是 2 * (p - r - 1)，不是 p - r - 1")),
        (got == want - 1, say(f"one warm-up forward short: rank {rank} runs {want}",
                              zh=f"预热前向少了一个：rank {rank} 运行 {want} 个")),
        (got == want + 1, say(f"one warm-up forward too many: rank {rank} runs {want}",
                              zh=f"预热前向多了一个：rank {rank} 运行 {want} 个")),
        (v == 1 and got == min(2 * (p - rank - 1), m),
         say("with v = 1 the schedule is plain 1F1B: min(p - r - 1, m) warm-ups, not the interleaved 2 * (p - r - 1)",
             zh="v = 1 时调度就是普通的 1F1B：min(p - r - 1, m) 个预热，而不是交错调度的 2 * (p - r - 1)")),
    ]
    matching = [text for matches, text in known if matches]
    return matching[0] if len(matching) == 1 else ""


def rank_hint(p: int, m: int, v: int, rank: int, expected: list, got: list) -> str:
    """The likely mistake behind a wrong per-rank list, or '' when no known pattern matches."""
    bad_chunks = [c for c, _, _ in got if not 0 <= c < v]
    if bad_chunks:
        return _no_chunk(bad_chunks[0], v) + _without_mod(p, got)
    bad_mbs = [mb for _, _, mb in got if not 0 <= mb < m]
    if bad_mbs:
        lead = leading_forwards(got)
        capped = lead > m * v
        return say(f"micro-batch {bad_mbs[0]} does not exist (micro-batches are 0..{m - 1})"
                   + (f": the list starts with {lead} forwards, more than the m * v = {m * v} there are; is the "
                      f"warm-up count capped at m * v = {m * v}?" if capped else ""),
                   zh=f"微批次 {bad_mbs[0]} 不存在（微批次是 0..{m - 1}）"
                   + (f"：列表以 {lead} 个前向开头，比总共的 m * v = {m * v} 个还多；预热数量是否以 "
                      f"m * v = {m * v} 为上限？" if capped else ""))
    if len(got) != len(expected):
        return say(f"each rank runs 2 * m * v = {len(expected)} ops (one F and one B per chunk and micro-batch)",
                   zh=f"每个 rank 运行 2 * m * v = {len(expected)} 个操作（每个模型块和微批次一个 F 和一个 B）")
    want_w = warmup_formula(p, m, v, rank)
    got_lead = leading_forwards(got)
    want_lead = leading_forwards(expected)
    if got_lead != want_lead:
        if got_lead == 0:
            return say(f"the list starts with a backward; expected {want_w} warm-up forwards first",
                       zh=f"列表以反向开头；预期先有 {want_w} 个预热前向")
        # all forwards first can mean m*v - 1 or m*v warm-ups: try both
        candidates = [got_lead - 1] if got_lead < m * v else [m * v - 1, m * v]
        hint = next((h for h in (warmup_hint(p, m, v, rank, w) for w in candidates) if h), "")
        if want_w == m * v:
            want_text = say(f"all {want_lead} forwards before the first backward (the warm-up is capped at m * v)",
                            zh=f"第一个反向之前是全部 {want_lead} 个前向（预热数量以 m * v 为上限）")
        else:
            want_text = say(f"{want_lead} forwards before the first backward ({want_w} warm-up forwards, "
                            f"then the first forward-backward pair)",
                            zh=f"第一个反向之前有 {want_lead} 个前向（{want_w} 个预热前向，然后是第一对前向-反向）")
        return (say(f"expected {want_text}, got {got_lead}", zh=f"预期{want_text}，实际 {got_lead} 个")
                + (say(f": {hint}", zh=f"：{hint}") if hint else ""))
    want_b = [c for c, kind, _ in expected if kind == "B"]
    got_b = [c for c, kind, _ in got if kind == "B"]
    want_f = [c for c, kind, _ in expected if kind == "F"]
    if v > 1 and got_b != want_b and got_b == want_f:
        return _backwards_in_forward_order()
    got_f = [c for c, kind, _ in got if kind == "F"]
    if got_f != want_f:
        return say("the forwards should visit the chunks in groups of p micro-batches: chunk (k mod p*v) // p",
                   zh="前向应按每组 p 个微批次依次经过各模型块：模型块 (k mod p*v) // p")
    if got_b != want_b:
        return say("the k-th backward runs chunk v - 1 - (k mod p*v) // p",
                   zh="第 k 个反向运行模型块 v - 1 - (k mod p*v) // p")
    return ""


def _no_chunk(chunk: int, v: int) -> str:
    return say(f"local chunk {chunk} does not exist (chunks are 0..{v - 1})",
               zh=f"本地模型块 {chunk} 不存在（模型块是 0..{v - 1}）")


def _backwards_in_forward_order() -> str:
    return say("the backwards run the chunks in forward order; the k-th backward runs chunk "
               "v - 1 - (k mod p*v) // p (the gradient enters at the last chunk)",
               zh="反向按前向的顺序经过各模型块；第 k 个反向运行模型块 v - 1 - (k mod p*v) // p"
               "（梯度从最后一个模型块进入）")


FORWARD_RULE = "the k-th forward runs chunk (k mod p*v) // p on micro-batch (k // (p*v)) * p + k mod p"
BACKWARD_RULE = "the k-th backward runs chunk v - 1 - (k mod p*v) // p on micro-batch (k // (p*v)) * p + k mod p"
FORWARD_RULE_ZH = "第 k 个前向在微批次 (k // (p*v)) * p + k mod p 上运行模型块 (k mod p*v) // p"
BACKWARD_RULE_ZH = "第 k 个反向在微批次 (k // (p*v)) * p + k mod p 上运行模型块 v - 1 - (k mod p*v) // p"


def chunk_sequence(kind: str, p: int, m: int, v: int) -> list[tuple[int, str, int]]:
    """The statement's formulas: a rank's forwards (kind "F") or backwards ("B"), in the order it runs them."""
    out = []
    for k in range(m * v):
        group, pos = k // (p * v), (k % (p * v)) // p
        out.append((pos if kind == "F" else v - 1 - pos, kind, group * p + k % p))
    return out


def _without_mod(p: int, ops: list) -> str:
    """The diagnosis 'k // p without mod p*v' when the forwards' chunks are exactly k // p, else ''."""
    chunks = [c for c, kind, _ in ops if kind == "F"]
    if chunks and chunks == [k // p for k in range(len(chunks))]:
        return say(": the k-th forward runs chunk (k mod p*v) // p; k // p without the 'mod p*v' keeps growing",
                   zh="：第 k 个前向运行模型块 (k mod p*v) // p；k // p 少了 'mod p*v' 就会一直增大")
    return ""


def _order_hint(kind: str, p: int, m: int, v: int, got: list) -> str:
    """The mistake behind a wrong sequence of forwards or backwards, when ``got`` is exactly what it makes."""
    if any(not 0 <= c < v for c, _, _ in got):
        c = next(c for c, _, _ in got if not 0 <= c < v)
        return _no_chunk(c, v) + _without_mod(p, got)
    if len(got) != m * v:
        return say(f"a rank runs m * v = {m * v} {'forwards' if kind == 'F' else 'backwards'}, one per chunk and "
                   f"micro-batch", zh=f"一个 rank 运行 m * v = {m * v} 个{'前向' if kind == 'F' else '反向'}，"
                   f"每个模型块和微批次一个")
    if kind == "B" and v > 1 and got == [(c, "B", mb) for c, _, mb in chunk_sequence("F", p, m, v)]:
        return _backwards_in_forward_order()
    depth_first = [((k % v) if kind == "F" else v - 1 - k % v, kind, k // v) for k in range(m * v)]
    if v > 1 and got == depth_first:
        return say("each micro-batch goes through all its chunks before the next one starts; Megatron runs one "
                   "chunk for a group of p micro-batches, then the next chunk for the same group",
                   zh="每个微批次先经过它的全部模型块，下一个微批次才开始；Megatron 是让一组 p 个微批次运行一个模型块，"
                   "再让同一组运行下一个模型块")
    return ""


def order_report(kind: str, p: int, m: int, v: int, rank: int, got_ops: list) -> str:
    """'' when rank ``rank``'s forwards (or backwards) in ``got_ops`` come in the statement's order; else what
    was expected, what the list has, and the mistake when it is recognised."""
    want = chunk_sequence(kind, p, m, v)
    got = [op for op in got_ops if op[1] == kind]
    if got == want:
        return ""
    name, rule = ("forwards", FORWARD_RULE) if kind == "F" else ("backwards", BACKWARD_RULE)
    rule_zh = FORWARD_RULE_ZH if kind == "F" else BACKWARD_RULE_ZH
    if max(len(want), len(got)) <= FULL_LIST_LIMIT:
        shown = say(f"expected {fmt(want)}\n        got      {fmt(got)}",
                    zh=f"预期 {fmt(want)}\n        实际 {fmt(got)}")
    else:
        first = next((i for i, (a, b) in enumerate(zip(want, got)) if a != b), min(len(want), len(got)))
        lo, hi = max(0, first - 4), first + 8
        shown = say(f"first difference at position {first}: expected {_show(want, lo, hi)}\n        got "
                    f"{_show(got, lo, hi)}",
                    zh=f"第一处不同在位置 {first}：预期 {_show(want, lo, hi)}\n        实际 {_show(got, lo, hi)}")
    hint = _order_hint(kind, p, m, v, got)
    return (say(f"interleaved_schedule(p={p}, m={m}, v={v}), rank {rank}: its {name}, in the order it runs them, "
                f"are not the statement's ({rule}) {NOTATION}",
                zh=f"interleaved_schedule(p={p}, m={m}, v={v})，rank {rank}：它的{'前向' if kind == 'F' else '反向'}"
                f"按运行顺序与题面的不同（{rule_zh}）{NOTATION_ZH}")
            + f"\n        {shown}" + (f"\n        {likely(hint)}" if hint else ""))


def _show(ops: list, start: int, stop: int) -> str:
    text = fmt(ops[start:stop])
    return ("... " if start > 0 else "") + text + (" ..." if stop < len(ops) else "")


def schedule_report(p: int, m: int, v: int, expected: list, got: list, max_ranks: int = 8) -> str:
    """'' when ``got`` equals ``expected``; otherwise a message whose first line names the wrong
    ranks and the likely mistake, followed by the expected and produced list of each wrong rank."""
    wrong, details, first_hint = [], [], ""
    for rank in range(p):
        want, have = expected[rank], got[rank]
        if want == have:
            continue
        wrong.append(rank)
        hint = rank_hint(p, m, v, rank, want, have)
        first_hint = first_hint or hint
        if len(details) >= max_ranks:
            continue
        if max(len(want), len(have)) <= FULL_LIST_LIMIT:
            text = say(f"rank {rank}: expected {fmt(want)}\n        got      {fmt(have)}",
                       zh=f"rank {rank}：预期 {fmt(want)}\n        实际 {fmt(have)}")
        else:
            first = next((i for i, (a, b) in enumerate(zip(want, have)) if a != b), min(len(want), len(have)))
            lo, hi = max(0, first - 4), first + 8
            text = say(f"rank {rank}: first difference at position {first}: "
                       f"expected {_show(want, lo, hi)}\n        got {_show(have, lo, hi)}",
                       zh=f"rank {rank}：第一处不同在位置 {first}："
                       f"预期 {_show(want, lo, hi)}\n        实际 {_show(have, lo, hi)}")
        details.append(text + (f"\n        {likely(hint)}" if hint else ""))
    if not wrong:
        return ""
    ranks = ", ".join(map(str, wrong))
    head = (say(f"interleaved_schedule(p={p}, m={m}, v={v}): wrong order on rank{'s' if len(wrong) > 1 else ''} "
                f"{ranks}", zh=f"interleaved_schedule(p={p}, m={m}, v={v})：rank {ranks} 的顺序不对")
            + (say(f"; likely mistake: {first_hint}", zh=f"；可能的错误：{first_hint}") if first_hint else ""))
    return "\n".join([head, notation()] + details)


def assert_schedule(p: int, m: int, v: int, expected: list, got: list) -> None:
    report = schedule_report(p, m, v, expected, got)
    assert not report, report


def stuck_ops(sched: list, p: int, v: int) -> list[str]:
    """Run the lists in dependency order without timing; return, per rank that cannot finish,
    the op it is stuck at (empty when the schedule runs to the end). Used so that the tests never
    hand a deadlocking schedule to your simulate_interleaved by accident."""
    pos = _walk(sched, p, v)
    return [f"rank {r} at {label(sched[r][pos[r]])}" for r in range(p) if pos[r] < len(sched[r])]


def runnable_part(sched: list, p: int, v: int) -> tuple[list, dict[int, str]]:
    """The part of ``sched`` that can run (each rank's list up to where the dependency walk gets stuck;
    all of it when nothing does) and the stuck ranks, each with the op it waits at."""
    pos = _walk(sched, p, v)
    stuck = {r: label(sched[r][pos[r]]) for r in range(p) if pos[r] < len(sched[r])}
    return ([row[:pos[r]] for r, row in enumerate(sched)] if stuck else sched), stuck


def _walk(sched: list, p: int, v: int) -> list[int]:
    """How far each rank's list gets when the ops run in dependency order (no timing)."""
    last = p * v - 1
    done: set[tuple[int, str, int]] = set()
    pos = [0] * p
    moved = True
    while moved:
        moved = False
        for r in range(p):
            while pos[r] < len(sched[r]):
                chunk, kind, mb = sched[r][pos[r]]
                g = chunk * p + r
                if kind == "F":
                    dep = (g - 1, "F", mb) if g > 0 else None
                else:
                    dep = (g + 1, "B", mb) if g < last else (g, "F", mb)
                if dep is not None and dep not in done:
                    break
                done.add((g, kind, mb))
                pos[r] += 1
                moved = True
    return pos


def timeline_artifact(rows: list, title: str, stuck: dict[int, str] | None = None) -> dict:
    """A judge timeline from simulate_interleaved's rows of (chunk, op, mb, start, end); ``stuck`` maps
    the ranks that cannot go on to the op each waits at."""
    from judge.artifacts import timeline
    return timeline([[(op, mb, start, end, chunk) for chunk, op, mb, start, end in row] for row in rows],
                    title=title, rows="rank", stuck=stuck)


def try_timeline(module: Any, sched: list, p: int, v: int, title: str) -> dict | None:
    """The learner's own simulation of ``sched`` as a timeline artifact, or None if it does not run.

    A schedule that deadlocks is never simulated whole: the ops that can run (each rank's list up to
    where the tests' dependency walk gets stuck) are, and the stuck ranks are marked with the op each
    waits at."""
    runnable, stuck = runnable_part(sched, p, v)
    try:
        rows, _, _ = module.simulate_interleaved(runnable, p, v)
        return timeline_artifact(rows, title + (" (up to where it gets stuck)" if stuck else ""), stuck)
    except Exception:  # the test reports the real failure; the picture is a bonus
        return None


def attach(record_property: Any, module: Any, got: list, p: int, v: int, title: str,
           want: list | None = None) -> None:
    """Record the learner's schedule as a timeline (timed by their simulate_interleaved); with ``want``
    (public tests only: the expected lists are in the public test file anyway), the expected schedule
    too, timed the same way, which the page and ``-v`` draw under yours when the test fails."""
    art = try_timeline(module, got, p, v, f"your {title}")
    if art is None:
        return
    record_property("timeline", art)
    if want is not None:
        expected = try_timeline(module, want, p, v, f"expected {title} (timed by your simulate_interleaved)")
        if expected is not None:
            record_property("expected", expected)


def simulate(module: Any, sched: list, p: int, v: int, what: str, tf: float = 1.0, tb: float = 2.0):
    """``module.simulate_interleaved(sched, p, v, tf=tf, tb=tb)``; if it raises, the failure says
    which schedule was simulated (``what``) and whether the tests' own walk of its dependencies
    finishes (then a deadlock error is the simulation's mistake, not the schedule's)."""
    try:
        return module.simulate_interleaved(sched, p, v, tf=tf, tb=tb)
    except Exception as exc:  # noqa: BLE001 - reported to the learner with the schedule
        stuck = stuck_ops(sched, p, v)
        shown = "\n".join(f"  rank {r}: {fmt(row)}" for r, row in enumerate(sched[:8]))
        verdict = (say(f"that schedule deadlocks ({'; '.join(stuck)})", zh=f"这个调度会死锁（{'; '.join(stuck)}）")
                   if stuck else
                   say("that schedule runs to the end (the tests walked its dependencies: no op waits for one "
                       "that waits for it), so your simulation must run every op of it; an op starts when its "
                       "rank is free and its dependency has finished",
                       zh="这个调度能运行到底（测试沿它的依赖走了一遍：没有操作等待一个在等它的操作），所以你的模拟"
                       "必须运行它的每个操作；一个操作在它的 rank 空闲、且它依赖的操作完成时开始"))
        raise AssertionError(say(f"simulate_interleaved on {what} (p={p}, v={v}, tf={tf:g}, tb={tb:g}) raised "
                                 f"{type(exc).__name__}: {exc}",
                                 zh=f"对{what}（p={p}, v={v}, tf={tf:g}, tb={tb:g}）调用 simulate_interleaved 抛出了 "
                                 f"{type(exc).__name__}: {exc}")
                             + f"\n{shown}\n{verdict} {notation()}") from None


def expect_value_error(module: Any, name: str, *args: Any) -> None:
    """``module.<name>(*args)`` must raise ValueError; otherwise say what it did instead."""
    call = f"{name}{args!r}"
    try:
        result = getattr(module, name)(*args)
    except ValueError:
        return
    except Exception as exc:  # noqa: BLE001 - reported to the learner
        raise AssertionError(say(f"{call} should raise ValueError, but raised {type(exc).__name__}: {exc}",
                                 zh=f"{call} 应抛出 ValueError，但抛出了 {type(exc).__name__}: {exc}")) from None
    raise AssertionError(say(f"{call} should raise ValueError, but returned {str(result)[:80]}",
                             zh=f"{call} 应抛出 ValueError，但返回了 {str(result)[:80]}"))
