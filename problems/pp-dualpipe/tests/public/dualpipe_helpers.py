"""Helpers for the pp-dualpipe tests: notation, schedule checks, the likely mistake, timelines.

Actions are written ``F3s0`` for ``("F", 3, 0)`` (forward of micro-batch 3 on stage 0) and
``F3s0&B1s5`` for the overlapped pair ``(("F", 3, 0), ("B", 1, 5))``.
"""

from __future__ import annotations

from typing import Any

from judge.lang import say

NOTATION = "(F3s0 = forward of micro-batch 3 on stage 0; F3s0&B1s5 = an overlapped pair; I/W = input/weight gradient)"


def notation() -> str:
    """NOTATION in the learner's language."""
    return say(NOTATION, zh="（F3s0 = stage 0 上微批次 3 的前向；F3s0&B1s5 = 一个重叠对；I/W = 输入梯度/参数梯度）")


# ---------------------------------------------------------------- notation

def label(action: Any) -> str:
    try:
        if isinstance(action[0], (tuple, list)):
            return "&".join(label(a) for a in action)
        kind, mb, stage = action
        return f"{kind}{int(mb)}s{int(stage)}"
    except (TypeError, ValueError, IndexError):
        return repr(action)


def fmt(row) -> str:
    return " ".join(label(a) for a in row)


def fmt_sched(sched) -> str:
    return "\n".join(f"  rank {r}: {fmt(row)}" for r, row in enumerate(sched))


def parse(text: str) -> list:
    """``"F0s0 F1s1&B0s0"`` -> ``[("F", 0, 0), (("F", 1, 1), ("B", 0, 0))]``."""
    def one(word: str):
        kind, rest = word[0], word[1:]
        mb, stage = rest.split("s")
        return (kind, int(mb), int(stage))

    return [tuple(one(w) for w in word.split("&")) if "&" in word else one(word) for word in text.split()]


def normalize(sched: Any, p: int, what: str) -> list[list]:
    """The learner's schedule as lists of tuples (lists accepted); AssertionError if it is not one."""
    if not isinstance(sched, (list, tuple)) or len(sched) != p:
        raise AssertionError(say(
            f"{what} should return a list of {p} per-rank lists, got "
            f"{type(sched).__name__}{' of length ' + str(len(sched)) if hasattr(sched, '__len__') else ''}",
            zh=f"{what} 应返回一个由 {p} 个列表（每个 rank 一个）组成的列表，实际得到 "
               f"{type(sched).__name__}{'，长度为 ' + str(len(sched)) if hasattr(sched, '__len__') else ''}"))
    out = []
    for r, row in enumerate(sched):
        if not isinstance(row, (list, tuple)):
            raise AssertionError(say(f"{what}: rank {r}'s entry should be a list of actions, got {row!r:.80}",
                                     zh=f"{what}：rank {r} 的那一项应是一个动作列表，实际得到 {row!r:.80}"))
        new = []
        for k, a in enumerate(row):
            try:
                if isinstance(a, (list, tuple)) and len(a) == 2 and all(isinstance(x, (list, tuple)) for x in a):
                    new.append(tuple((str(x[0]), int(x[1]), int(x[2])) for x in a))
                elif isinstance(a, (list, tuple)) and len(a) == 3 and isinstance(a[0], str):
                    new.append((a[0], int(a[1]), int(a[2])))
                else:
                    raise ValueError
            except (TypeError, ValueError, IndexError):
                raise AssertionError(say(
                    f"{what}: rank {r}, action {k} is {a!r:.80}; expected (kind, mb, stage) or a "
                    f"pair ((\"F\", mb, stage), (\"B\", mb, stage))",
                    zh=f"{what}：rank {r} 的动作 {k} 是 {a!r:.80}；预期 (kind, mb, stage) 或一个"
                       f"重叠对 ((\"F\", mb, stage), (\"B\", mb, stage))")) from None
        out.append(new)
    return out


def singles(action) -> tuple:
    return tuple(action) if isinstance(action[0], tuple) else (action,)


# ---------------------------------------------------------------- the likely mistake in an order

def _down_forwards_before_up(row, r: int) -> int:
    n = 0
    for a in row:
        for kind, _, stage in singles(a):
            if kind == "F" and stage != r:
                return n
            if kind == "F" and stage == r:
                n += 1
    return n


def order_hint(p: int, m: int, r: int, got: list, want: list) -> str:
    """The likely mistake in rank r's order, or '' when none is recognised. Each diagnosis is given
    only when its check holds."""
    lead, want_lead = _down_forwards_before_up(got, r), _down_forwards_before_up(want, r)
    if lead != want_lead:
        return say(f"rank {r} runs {lead} forwards of its down stage before the first forward of its up stage "
                   f"{2 * p - 1 - r}; DualPipeV runs 2(p - r - 1) + 1 = {want_lead} (phase 1's 2(p - r - 1), then "
                   f"phase 2 starts with one more)",
                   zh=f"rank {r} 在它的上行 stage {2 * p - 1 - r} 的第一个前向之前运行了 {lead} 个下行 stage 的前向；"
                      f"DualPipeV 运行 2(p - r - 1) + 1 = {want_lead} 个（阶段 1 的 2(p - r - 1) 个，然后阶段 2 "
                      f"再以一个开头）")
    if r == p - 1:
        for k in range(len(want) - 1):
            a, b = want[k], want[k + 1]
            if (not isinstance(a[0], tuple) and not isinstance(b[0], tuple) and a[0] == "F" and b[0] == "B"
                    and a[2] == p - 1 and b[2] == p and (a, b) in got):
                return say(f"the last rank does not overlap its first main-loop step: it runs {label(a)} then "
                           f"{label(b)} as two actions, not the pair {label(a)}&{label(b)}",
                           zh=f"最后一个 rank 的主循环第一步不做重叠：它把 {label(a)} 和 {label(b)} 作为两个动作"
                              f"先后运行，而不是重叠对 {label(a)}&{label(b)}")

    def no_w(row, merge_i: bool):
        out = []
        for a in row:
            if not isinstance(a[0], tuple) and a[0] == "W":
                continue
            if merge_i and not isinstance(a[0], tuple) and a[0] == "I":
                a = ("B", a[1], a[2])
            out.append(a)
        return out

    if no_w(got, False) != no_w(want, False) and no_w(got, True) == no_w(want, True):
        turned = [k for k, (a, b) in enumerate(zip(no_w(got, False), no_w(want, False))) if a != b]
        to_b = all(not isinstance(b[0], tuple) and b[0] == "I" and a[0] == "B"
                   for a, b in ((no_w(got, False)[k], no_w(want, False)[k]) for k in turned))
        # phase 6's I's are the first r + 1 I's of the down and up stages after the last pair
        last_pair = max((k for k, a in enumerate(no_w(want, False)) if isinstance(a[0], tuple)), default=-1)
        phase6_i = [k for k, a in enumerate(no_w(want, False)) if k > last_pair and a[0] == "I"][:r + 1]
        if r > 0 and to_b and turned == phase6_i:
            return say(f"phase 6 never switches to I: of its 2(r + 1) = {2 * (r + 1)} backwards the first r + 1 = {r + 1} "
                       f"are full B, the last r + 1 = {r + 1} only I (the input-gradient half, whose W is deferred)",
                       zh=f"阶段 6 从未切换到 I：它的 2(r + 1) = {2 * (r + 1)} 个反向中，前 r + 1 = {r + 1} 个是完整的 B，"
                          f"后 r + 1 = {r + 1} 个只是 I（输入梯度那一半，它的 W 被推迟）")
        if r > 0 and to_b and turned == phase6_i[:1]:
            return say(f"phase 6 switches to I one step late: of its 2(r + 1) = {2 * (r + 1)} backwards the first "
                       f"r + 1 = {r + 1} are full B, then I from the ({r + 2})th on",
                       zh=f"阶段 6 切换到 I 晚了一步：它的 2(r + 1) = {2 * (r + 1)} 个反向中，前 r + 1 = {r + 1} 个"
                          f"是完整的 B，从第 ({r + 2}) 个起是 I")
        return say("a B/I mix-up: phases 3 and 7 run I, phases 4 and 5 full B, and phase 6 runs r + 1 full B, "
                   "then r + 1 I (the input-gradient half, whose W is deferred)",
                   zh="B 和 I 混淆了：阶段 3 和 7 运行 I，阶段 4 和 5 运行完整的 B，阶段 6 先运行 r + 1 个完整的 B，"
                      "再运行 r + 1 个 I（输入梯度那一半，它的 W 被推迟）")
    if no_w(got, False) == no_w(want, False) and sorted(got, key=repr) == sorted(want, key=repr):
        return say("the W passes owed run oldest first (first in, first out): each W is the W of the earliest I "
                   "whose W has not run yet",
                   zh="欠下的 W 按最早的先运行（先进先出）：每个 W 都是最早一个 W 还没运行的 I 的 W")
    return ""


def order_report(p: int, m: int, want: list, got: list) -> str:
    """'' when equal; otherwise the first difference of each wrong rank and the likely mistake."""
    lines = []
    first_hint = ""
    for r, (w, g) in enumerate(zip(want, got)):
        if w == g:
            continue
        first = next((i for i, (a, b) in enumerate(zip(w, g)) if a != b), min(len(w), len(g)))
        lo, hi = max(0, first - 3), first + 6
        text = say(f"rank {r}: first difference at action {first}:\n    expected ... {fmt(w[lo:hi])} ...\n"
                   f"    got      ... {fmt(g[lo:hi])} ...",
                   zh=f"rank {r}：第一个不同在动作 {first}：\n    预期 ... {fmt(w[lo:hi])} ...\n"
                      f"    实际 ... {fmt(g[lo:hi])} ...")
        hint = order_hint(p, m, r, g, w)
        first_hint = first_hint or hint
        lines.append(text + (say(f"\n    likely mistake: {hint}", zh=f"\n    可能的错误：{hint}") if hint else ""))
    if not lines:
        return ""
    wrong = [r for r, (w, g) in enumerate(zip(want, got)) if w != g]
    return (say(f"dualpipev_schedule({p}, {m}): wrong order on rank{'s' if len(wrong) > 1 else ''} "
                f"{', '.join(map(str, wrong))}" + (f"; likely mistake: {first_hint}" if first_hint else ""),
                zh=f"dualpipev_schedule({p}, {m})：rank {', '.join(map(str, wrong))} 的顺序不对"
                   + (f"；可能的错误：{first_hint}" if first_hint else ""))
            + f"\n{notation()}\n" + "\n".join(lines))


# ---------------------------------------------------------------- schedule checks

def dependency_walk(sched) -> list[str]:
    """Run the actions in dependency order only (no times). Return the stuck actions, [] if none."""
    pos = _walk(sched)
    return [say(f"rank {r} at {label(sched[r][pos[r]])}", zh=f"rank {r} 卡在 {label(sched[r][pos[r]])}")
            for r in range(len(sched)) if pos[r] < len(sched[r])]


def _walk(sched) -> list[int]:
    """How far each rank's list gets when the actions run in dependency order (no times)."""
    last = max((s for row in sched for a in row for _, _, s in singles(a)), default=0)
    done: set = set()
    pos = [0] * len(sched)

    def ready(kind, mb, stage):
        if kind == "F":
            return stage == 0 or ("F", mb, stage - 1) in done
        if kind in ("B", "I"):
            return ("F", mb, stage) in done if stage == last else ("G", mb, stage + 1) in done
        return ("I", mb, stage) in done

    moved = True
    while moved:
        moved = False
        for r, row in enumerate(sched):
            while pos[r] < len(row) and all(ready(*a) for a in singles(row[pos[r]])):
                for kind, mb, stage in singles(row[pos[r]]):
                    done.add(("F" if kind == "F" else "G", mb, stage))
                    if kind == "I":
                        done.add(("I", mb, stage))
                pos[r] += 1
                moved = True
    return pos


def try_timeline(module, sched, p: int, title: str, times: tuple[float, float, float, float]) -> dict | None:
    """Your simulate's run of ``sched`` (``times`` = T_F, T_B, T_W, gain) as a timeline artifact, or None if
    it raises (the tests report the real failure; the simulation has its own tests). A schedule that
    deadlocks is never simulated whole: the actions that can run (each rank's list up to where the
    tests' dependency walk gets stuck) are, and the stuck ranks are marked with the action each waits at."""
    pos = _walk(sched)
    stuck = {r: label(row[pos[r]]) for r, row in enumerate(sched) if pos[r] < len(row)}
    runnable = [row[:pos[r]] for r, row in enumerate(sched)] if stuck else sched
    try:
        art = to_timeline(module.simulate(runnable, *times), p, title + (" (up to where it gets stuck)" if stuck else ""))
    except Exception:  # noqa: BLE001 - the picture is a bonus
        return None
    if art is not None and stuck:
        art["stuck"] = [{"row": r, "waiting": w} for r, w in sorted(stuck.items())]
    return art


def attach(record_property, module, got, p: int, title: str, times: tuple[float, float, float, float],
           want=None) -> None:
    """Record your schedule as a timeline (timed by your simulate); with ``want`` (public tests only: the
    expected lists are in the public test file anyway), the expected schedule too, timed the same way,
    which the page and ``-v`` draw under yours when the test fails."""
    art = try_timeline(module, got, p, f"your {title}", times)
    if art is None:
        return
    record_property("timeline", art)
    if want is not None:
        expected = try_timeline(module, want, p, f"expected {title} (timed by your simulate)", times)
        if expected is not None:
            record_property("expected", expected)


def check_schedule(sched, p: int, m: int) -> str | None:
    """A description of the first problem of a DualPipeV-shaped schedule, or None if it is valid."""
    for r, row in enumerate(sched):
        stages = {r, 2 * p - 1 - r}
        seen: dict = {}
        for k, a in enumerate(row):
            for kind, mb, stage in singles(a):
                if kind not in ("F", "B", "I", "W") or stage not in stages or not 0 <= mb < m:
                    return say(f"rank {r}, action {k} ({label(a)}): rank {r} holds stages {sorted(stages)}, micro-batches "
                               f"are 0..{m - 1} and kinds F, B, I, W",
                               zh=f"rank {r} 的动作 {k}（{label(a)}）：rank {r} 持有 stage {sorted(stages)}，微批次"
                                  f"是 0..{m - 1}，种类是 F、B、I、W")
                if (kind, mb, stage) in seen:
                    return say(f"rank {r}: {kind}{mb}s{stage} appears twice",
                               zh=f"rank {r}：{kind}{mb}s{stage} 出现了两次")
                seen[(kind, mb, stage)] = k
        for stage in sorted(stages):
            for mb in range(m):
                f = seen.get(("F", mb, stage))
                back = [x for x in ("B", "I") if (x, mb, stage) in seen]
                if f is None or len(back) != 1:
                    return say(f"rank {r}: stage {stage}, micro-batch {mb} needs one F and one backward (B or I); "
                               f"found F: {'yes' if f is not None else 'no'}, backwards: {back or 'none'}",
                               zh=f"rank {r}：stage {stage} 的微批次 {mb} 需要一个 F 和一个反向（B 或 I）；"
                                  f"找到 F：{'有' if f is not None else '没有'}，反向：{back or '没有'}")
                if seen[(back[0], mb, stage)] < f:
                    return say(f"rank {r}: {back[0]}{mb}s{stage} comes before F{mb}s{stage}",
                               zh=f"rank {r}：{back[0]}{mb}s{stage} 排在 F{mb}s{stage} 之前")
                w = seen.get(("W", mb, stage))
                if back == ["I"] and w is None:
                    return say(f"rank {r}: I{mb}s{stage} has no W{mb}s{stage} (every I needs its W)",
                               zh=f"rank {r}：I{mb}s{stage} 没有 W{mb}s{stage}（每个 I 都需要它的 W）")
                if back == ["B"] and w is not None:
                    return say(f"rank {r}: W{mb}s{stage} after a full backward B{mb}s{stage} (B already includes W)",
                               zh=f"rank {r}：完整的反向 B{mb}s{stage} 之后还有 W{mb}s{stage}（B 已经包含了 W）")
                if w is not None and w < seen[("I", mb, stage)]:
                    return say(f"rank {r}: W{mb}s{stage} comes before its I{mb}s{stage}",
                               zh=f"rank {r}：W{mb}s{stage} 排在它的 I{mb}s{stage} 之前")
    stuck = dependency_walk(sched)
    if stuck:
        return say("the ranks cannot all finish (each waits for another): " + "; ".join(stuck),
                   zh="各 rank 无法全部完成（互相等待）：" + "；".join(stuck))
    return None


# ---------------------------------------------------------------- simulation helpers

def simulate_named(module, sched, tf, tb, tw, gain, what: str) -> dict:
    """``module.simulate``; if it raises, say which schedule it was and whether it can run to the end."""
    try:
        res = module.simulate(sched, tf, tb, tw, gain)
    except Exception as exc:  # noqa: BLE001 - reported to the learner with the schedule
        stuck = dependency_walk(sched)
        verdict = (say(f"that schedule deadlocks ({'; '.join(stuck)})", zh=f"这个调度会死锁（{'；'.join(stuck)}）")
                   if stuck else
                   say("that schedule runs to the end (the tests walked its dependencies), so simulate must run all of it",
                       zh="这个调度能运行到底（测试按依赖走过了它），所以 simulate 必须把它全部运行完"))
        raise AssertionError(say(f"simulate raised {type(exc).__name__}({exc}) on {what} with T_F={tf:g}, T_B={tb:g}, "
                                 f"T_W={tw:g}, gain={gain:g}:\n{fmt_sched(sched)}\n{verdict}",
                                 zh=f"simulate 在 {what} 上（T_F={tf:g}、T_B={tb:g}、T_W={tw:g}、gain={gain:g}）"
                                    f"抛出了 {type(exc).__name__}({exc})：\n{fmt_sched(sched)}\n{verdict}")) from None
    if not isinstance(res, dict) or any(k not in res for k in ("timeline", "total", "busy", "bubble", "bubble_fraction")):
        raise AssertionError(say(f"simulate should return a dict with keys timeline, total, busy, bubble, bubble_fraction; "
                                 f"got {res!r:.200}",
                                 zh=f"simulate 应返回一个带有键 timeline、total、busy、bubble、bubble_fraction 的 dict；"
                                    f"实际得到 {res!r:.200}"))
    return res


def expect_simulate_value_error(module, sched, what: str, why: str, why_zh: str = "") -> None:
    """``module.simulate(sched, ...)`` must raise ValueError; ``what`` names the call in the failure
    (ending in a line break when it shows the schedule on lines of its own); ``why_zh`` is ``why`` in Chinese."""
    __tracebackhide__ = True
    sep = "" if what.endswith("\n") else " "
    what += sep
    try:
        got = module.simulate(sched, 1.0, 2.0, 1.0, 0.0)
    except ValueError:
        return
    except Exception as exc:  # noqa: BLE001 - reported to the learner
        raise AssertionError(say(f"{what}should raise ValueError ({why}), but raised "
                                 f"{type(exc).__name__}: {exc}",
                                 zh=f"{what}应抛出 ValueError（{why_zh or why}），但抛出了 "
                                    f"{type(exc).__name__}: {exc}")) from None
    raise AssertionError(say(f"{what}should raise ValueError ({why}); it returned {str(got)[:200]}",
                             zh=f"{what}应抛出 ValueError（{why_zh or why}）；它返回了 {str(got)[:200]}"))


def rows(res) -> list[list[tuple]]:
    """The result's timeline as [(label, start, end)] per rank, plain Python values."""
    out = []
    for row in res["timeline"]:
        out.append([(label(a), float(s), float(e)) for a, s, e in row])
    return out


def duration_hint(res, tf, tb, tw, gain) -> str:
    """Name a wrong duration of an I or a pair in the result, or ''."""
    for row in res["timeline"]:
        for a, s, e in row:
            d = float(e) - float(s)
            pair = isinstance(a[0], (tuple, list))
            if pair and gain and d == tf + tb:
                return say(f" An overlapped pair costs T_F + T_B - gain = {tf + tb - gain:g} ({label(a)} took {d:g}): "
                           f"overlapping is what saves `gain`.",
                           zh=f" 一个重叠对耗时 T_F + T_B - gain = {tf + tb - gain:g}（{label(a)} 用了 {d:g}）："
                              f"省下 `gain` 的正是重叠。")
            if not pair and a[0] == "I" and tw and d == tb:
                return say(f" I costs T_B - T_W = {tb - tw:g} ({label(a)} took {d:g}): I is only the input-gradient "
                           f"half of the backward, W is the other half.",
                           zh=f" I 耗时 T_B - T_W = {tb - tw:g}（{label(a)} 用了 {d:g}）：I 只是反向中输入梯度"
                              f"那一半，W 是另一半。")
    return ""


def expected_timeline(times, p: int | None, title: str) -> dict | None:
    """The expected timeline of a test that writes its times out (rows of (label, start, end), as
    :func:`rows` gives them), drawn as :func:`to_timeline` draws yours. Public tests only."""
    res = {"timeline": [[(parse(text)[0], start, end) for text, start, end in row] for row in times]}
    return to_timeline(res, p, title)


def to_timeline(res, p: int | None, title: str) -> dict | None:
    """A judge timeline from a simulate result: a pair is drawn as its F half then its B half, I as B;
    with ``p`` given, chunk 0 is a rank's down stage and chunk 1 its up stage."""
    from judge.artifacts import timeline

    try:
        stages = []
        for r, row in enumerate(res["timeline"]):
            blocks = []
            for a, s, e in row:
                s, e = float(s), float(e)
                parts = singles(tuple(tuple(x) for x in a) if isinstance(a[0], (tuple, list)) else tuple(a))
                half = (e - s) / len(parts)
                for k, (kind, mb, stage) in enumerate(parts):
                    chunk = None if p is None else (0 if int(stage) == r else 1)
                    blocks.append(("B" if kind == "I" else kind, int(mb), s + k * half, s + (k + 1) * half, chunk))
            stages.append(blocks)
        return timeline(stages, rows="rank",
                        title=title + ("; c0 = the rank's down stage r, c1 = its up stage 2p-1-r" if p is not None else "")
                        + "; a pair is drawn as its F half then its B half, I as B")
    except Exception:  # the picture is a bonus; the tests report the real failure
        return None


# ---------------------------------------------------------------- memory

def peaks_pair_split(sched) -> list[int]:
    """Peaks counted as if a pair stored its forward before freeing its backward (not the rule)."""
    out = []
    for row in sched:
        held = peak = 0
        for a in row:
            for kind, _, _ in singles(a):
                held += {"F": 1, "B": -1, "I": -1}.get(kind, 0)
                peak = max(peak, held)
        out.append(peak)
    return out


def peaks_before_each_action(sched) -> list[int]:
    """Peaks counted before each action instead of after it (not the rule)."""
    out = []
    for row in sched:
        held = peak = 0
        for a in row:
            peak = max(peak, held)
            held += sum({"F": 1, "B": -1, "I": -1}.get(kind, 0) for kind, _, _ in singles(a))
        out.append(peak)
    return out


def peaks_w_frees(sched) -> list[int]:
    """Peaks counted as if W, the weight-gradient half, freed the activations instead of I (not the rule)."""
    out = []
    for row in sched:
        held = peak = 0
        for a in row:
            held += sum({"F": 1, "B": -1, "W": -1}.get(kind, 0) for kind, _, _ in singles(a))
            peak = max(peak, held)
        out.append(peak)
    return out


def _peaks_right(sched) -> list[int]:
    out = []
    for row in sched:
        held = peak = 0
        for a in row:
            held += sum({"F": 1, "B": -1, "I": -1}.get(kind, 0) for kind, _, _ in singles(a))
            peak = max(peak, held)
        out.append(peak)
    return out


W_FREES_HINT = ("That is what you get when W frees the activations: here the input-gradient half I (or the full "
                "backward B) frees them, W, the weight-gradient half, changes nothing, so an I that runs before "
                "its W has already freed its micro-batch.")
W_FREES_HINT_ZH = ("那是让 W 释放激活得到的结果：这里释放激活的是输入梯度那一半 I（或完整的反向 B），权重梯度那一半 W "
                   "不改变任何东西，所以在它的 W 之前运行的 I 已经释放了它的微批次。")


def memory_hint(sched, got) -> str:
    """A diagnosis for peaks ``got``, given only when exactly one known mistake gives them (a hint must not
    blame the pair's order when the mistake is which half of the backward frees the activations)."""
    try:
        got = [int(x) for x in got]
    except (TypeError, ValueError):
        return ""
    if got == _peaks_right(sched):
        return ""
    w_frees, pair_split = peaks_w_frees(sched), peaks_pair_split(sched)
    if got == w_frees and got == pair_split:  # this schedule cannot tell the two apart: name both
        return say(" Either W frees the activations in your count (it must not: I or B does), or a pair's forward "
                   "is counted before its backward (a pair stores and frees in one action).",
                   zh=" 要么你的计数里是 W 释放激活（不应如此：释放的是 I 或 B），要么把重叠对的前向算在了它的反向之前"
                      "（重叠对在一个动作中保存并释放）。")
    if got == w_frees:
        return say(" " + W_FREES_HINT, zh=" " + W_FREES_HINT_ZH)
    if got == peaks_before_each_action(sched) != peaks_pair_split(sched):
        return say(" That is the count taken before each action: take it after each one, so that a peak the last "
                   "action reaches counts too.",
                   zh=" 那是在每个动作之前取的计数：应在每个动作之后取，这样最后一个动作达到的峰值也算在内。")
    if got == peaks_pair_split(sched):
        return say(" That is what you get by counting a pair's forward before its backward: a pair frees its "
                   "backward's activations in the same action that stores its forward's, so after it the count "
                   "is unchanged.",
                   zh=" 那是把重叠对的前向算在它的反向之前得到的结果：重叠对在保存它的前向的激活的同一个动作中"
                      "释放它的反向的激活，所以它之后计数不变。")
    return ""


def peaks_named(module, sched, what: str) -> list[int]:
    """``module.peak_activations(sched)`` as ints; if it raises, say on which schedule."""
    try:
        got = module.peak_activations(sched)
        return [int(x) for x in got]
    except Exception as exc:  # noqa: BLE001 - reported to the learner
        raise AssertionError(say(f"peak_activations on {what} raised {type(exc).__name__}: {exc}\n{fmt_sched(sched)}",
                                 zh=f"peak_activations 在 {what} 上抛出了 {type(exc).__name__}: {exc}\n"
                                    f"{fmt_sched(sched)}")) from None


# ---------------------------------------------------------------- the trade-off: against 1F1B and ZB-H1

TRADEOFF_GAINS = (0.0, 0.5, 1.0)


def tradeoff_expected(p: int, m: int) -> list[tuple]:
    """The comparison table for p ranks and m >= 2p micro-batches, T_F = T_I = T_W = 1 (1F1B and ZB-H1 on
    stages twice as long): rows (name, step time, bubble per rank, peak activations per rank), the peaks
    in activations of one DualPipeV stage (a 1F1B or ZB-H1 stage is two, so its count is doubled)."""
    rows = [("1F1B", 6.0 * (m + p - 1), [6.0 * (p - 1)] * p, [2 * (p - s) for s in range(p)]),
            ("ZB-H1", 6.0 * m + 2.0 * (p - 1), [2.0 * (p - 1)] * p, [2 * (p - s) for s in range(p)])]
    for gain in TRADEOFF_GAINS:
        tip = (p - 1) * (2.0 - gain)  # (p-1)(T_F&B + T_B - 3T_W)
        rows.append((f"DualPipeV, gain {gain:g}", 6.0 * m - gain * (2 * m - 2 * p - 1) + tip,
                     [tip - gain * max(0, p - 2 - r) for r in range(p)], [2 * p] * (p - 1) + [2 * p + 1]))
    return rows


def _cells(values) -> str:
    return " ".join(f"{v:g}" for v in values)


def tradeoff_table(rows) -> str:
    """Rows of :func:`tradeoff_expected` as aligned text (the schedule names stay in English: they are names)."""
    head = (say("schedule", zh="调度"), say("step time", zh="一步的时间"), say("bubble per rank", zh="每个 rank 的气泡"),
            say("peak activations per rank", zh="每个 rank 的激活峰值"))
    lines = [head] + [(name, f"{total:g}", _cells(bubble), _cells(peaks)) for name, total, bubble, peaks in rows]
    widths = [max(_width(line[k]) for line in lines) for k in range(4)]
    return "\n".join("    " + "  ".join(cell + " " * (w - _width(cell)) for cell, w in zip(line, widths)).rstrip()
                     for line in lines)


def _width(text: str) -> int:
    """Columns ``text`` takes in a terminal: Chinese characters take two."""
    import unicodedata

    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def tradeoff_report(module, p: int, m: int, want_order: list, record_property=None) -> str:
    """'' when the learner's own comparison (their order, timed by their simulate and counted by their
    peak_activations, beside the tests' 1F1B and ZB-H1 orders timed and counted by the same functions)
    gives the expected table; else both tables, what differs and, for each, the diagnosis its own check
    confirms."""
    want = tradeoff_expected(p, m)
    try:
        ours = module.dualpipev_schedule(p, m)
    except Exception as exc:  # noqa: BLE001 - reported to the learner
        return say(f"dualpipev_schedule({p}, {m}) raised {type(exc).__name__}: {exc}; the comparison with 1F1B and "
                   f"ZB-H1 needs your order (m = {m} >= 2p = {2 * p} is a valid size)",
                   zh=f"dualpipev_schedule({p}, {m}) 抛出了 {type(exc).__name__}: {exc}；与 1F1B 和 ZB-H1 的比较需要"
                      f"你的顺序（m = {m} >= 2p = {2 * p} 是合法的规模）")
    ours = normalize(ours, p, f"dualpipev_schedule({p}, {m})")
    runs = []  # per row of the table: (schedule, its peaks, simulate's result, T_F, T_B, T_W, gain, scale)
    for name in ("1F1B", "ZB-H1"):
        sched = baseline(name.lower(), p, m)
        res = simulate_named(module, sched, 2.0, 4.0, 2.0, 0.0, say(f"{name} on the same model (p={p}, m={m}, stage "
                                                                    f"times doubled)",
                                                                    zh=f"同一模型上的 {name}（p={p}、m={m}，stage 时间加倍）"))
        peaks = peaks_named(module, sched, say(f"{name} (p={p}, m={m})", zh=f"{name}（p={p}、m={m}）"))
        runs.append((sched, peaks, res, 2.0, 4.0, 2.0, 0.0, 2))  # a 1F1B or ZB-H1 stage is two DualPipeV stages
    peaks = peaks_named(module, ours, say(f"your dualpipev_schedule({p}, {m})", zh=f"你的 dualpipev_schedule({p}, {m})"))
    for gain in TRADEOFF_GAINS:
        res = simulate_named(module, ours, 1.0, 2.0, 1.0, gain, say(f"your dualpipev_schedule({p}, {m})",
                                                                   zh=f"你的 dualpipev_schedule({p}, {m})"))
        runs.append((ours, peaks, res, 1.0, 2.0, 1.0, gain, 1))
        if record_property is not None and gain == 1.0:
            art = to_timeline(res, p, f"your DualPipeV in time, p={p}, m={m}: T_F=1, T_B=2, T_W=1, gain=1")
            if art is not None:
                record_property("timeline", art)
    got = [(name, float(res["total"]), [float(b) for b in res["bubble"]], [scale * x for x in peaks])
           for (name, *_), (_, peaks, res, *_, scale) in zip(want, runs)]
    if got == want:
        return ""
    notes: list[str] = []
    dualpipev_differs = False
    for row, wanted, (sched, peaks, res, tf, tb, tw, gain, scale) in zip(got, want, runs):
        name, total, bubble, peak = row
        _, w_total, w_bubble, w_peak = wanted
        dualpipev_differs = dualpipev_differs or (sched is ours and row != wanted)
        if (total, bubble) != (w_total, w_bubble):
            notes.append(say(f"{name}: step time {total:g} and bubbles {_cells(bubble)}, expected {w_total:g} and "
                             f"{_cells(w_bubble)}.",
                             zh=f"{name}：一步的时间 {total:g}，气泡 {_cells(bubble)}，预期 {w_total:g} 和 "
                                f"{_cells(w_bubble)}。") + duration_hint(res, tf, tb, tw, gain))
        if peak != w_peak:
            unit = "" if scale == 1 else say(f" (your peak_activations gave {_cells(peaks)}, counted in 1F1B stages)",
                                             zh=f"（你的 peak_activations 给出 {_cells(peaks)}，以 1F1B stage 计）")
            note = say(f"peak activations of {name.split(',')[0]}: {_cells(peak)}{unit}, expected {_cells(w_peak)}.",
                       zh=f"{name.split(',')[0]} 的激活峰值：{_cells(peak)}{unit}，预期 {_cells(w_peak)}。")
            notes.append(note + memory_hint(sched, peaks))
    notes = list(dict.fromkeys(notes))  # DualPipeV's peaks are the same in its three rows: said once
    if dualpipev_differs and ours != want_order:
        notes.append(say(f"Your dualpipev_schedule({p}, {m}) is not DualPipeV's order (the order tests show where it "
                         f"differs), and the DualPipeV rows time and count your order.",
                         zh=f"你的 dualpipev_schedule({p}, {m}) 不是 DualPipeV 的顺序（顺序的测试会显示哪里不同），"
                            f"而 DualPipeV 这几行计时和计数的正是你的顺序。"))
    return (say(f"DualPipeV against 1F1B and ZB-H1, p={p}, m={m}, T_F=T_I=T_W=1 (1F1B and ZB-H1 on stages twice as "
                f"long), timed by your simulate and counted by your peak_activations, in activations of one DualPipeV "
                f"stage (a 1F1B or ZB-H1 stage holds two):\n  expected\n{tradeoff_table(want)}\n  got\n"
                f"{tradeoff_table(got)}\n",
                zh=f"DualPipeV 与 1F1B 和 ZB-H1 对比，p={p}、m={m}、T_F=T_I=T_W=1（1F1B 和 ZB-H1 的 stage 耗时加倍），"
                   f"由你的 simulate 计时、由你的 peak_activations 计数，以一个 DualPipeV stage 的激活为单位（一个 "
                   f"1F1B 或 ZB-H1 stage 持有两份）：\n  预期\n{tradeoff_table(want)}\n  实际\n"
                   f"{tradeoff_table(got)}\n")
            + "\n".join("  " + n.strip() for n in notes))


# ---------------------------------------------------------------- DualPipeV orders (written out)

# The exact orders the public tests expect (the statement's rules, and PyTorch 2.13's ScheduleDualPipeV).
EXPECTED = {
    (1, 2): [
        "F0s0 F0s1 F1s0 B0s1 F1s1&B0s0 B1s1 I1s0 W1s0",
    ],
    (1, 3): [
        "F0s0 F0s1 F1s0 B0s1 F1s1&B0s0 F2s0&B1s1 F2s1&B1s0 B2s1 I2s0 W2s0",
    ],
    (2, 4): [
        "F0s0 F1s0 F2s0 F0s3 I0s3 W0s3 F1s3 F3s0&B1s3 F2s3&B0s0 B2s3 F3s3&B1s0 B3s3 I2s0 W2s0 I3s0 W3s0",
        "F0s1 F0s2 F1s1 F1s2 F2s1 B0s2 F2s2&B0s1 F3s1&B1s2 F3s2&B1s1 B2s2 B2s1 I3s2 I3s1 W3s2 W3s1",
    ],
    (2, 5): [
        "F0s0 F1s0 F2s0 F0s3 I0s3 W0s3 F1s3 F3s0&B1s3 F2s3&B0s0 F4s0&B2s3 F3s3&B1s0 B3s3 F4s3&B2s0 B4s3 I3s0 W3s0 I4s0 W4s0",
        "F0s1 F0s2 F1s1 F1s2 F2s1 B0s2 F2s2&B0s1 F3s1&B1s2 F3s2&B1s1 F4s1&B2s2 F4s2&B2s1 B3s2 B3s1 I4s2 I4s1 W4s2 W4s1",
    ],
    # the worked example of the statement
    (3, 6): [
        "F0s0 F1s0 F2s0 F3s0 F4s0 F0s5 I0s5 W0s5 F1s5 I1s5 W1s5 F2s5 F5s0&B2s5 F3s5&B0s0 B3s5 F4s5&B1s0 B4s5 "
        "F5s5&B2s0 B5s5 I3s0 W3s0 I4s0 W4s0 I5s0 W5s0",
        "F0s1 F1s1 F2s1 F0s4 F3s1 F1s4 I0s4 W0s4 F2s4 F4s1&B1s4 F3s4&B0s1 F5s1&B2s4 F4s4&B1s1 B3s4 F5s4&B2s1 B4s4 "
        "B3s1 I5s4 I4s1 W5s4 I5s1 W4s1 W5s1",
        "F0s2 F0s3 F1s2 F1s3 F2s2 F2s3 F3s2 B0s3 F3s3&B0s2 F4s2&B1s3 F4s3&B1s2 F5s2&B2s3 F5s3&B2s2 B3s3 B3s2 B4s3 "
        "I4s2 I5s3 I5s2 W4s2 W5s3 W5s2",
    ],
    (3, 7): [
        "F0s0 F1s0 F2s0 F3s0 F4s0 F0s5 I0s5 W0s5 F1s5 I1s5 W1s5 F2s5 F5s0&B2s5 F3s5&B0s0 F6s0&B3s5 F4s5&B1s0 B4s5 "
        "F5s5&B2s0 B5s5 F6s5&B3s0 B6s5 I4s0 W4s0 I5s0 W5s0 I6s0 W6s0",
        "F0s1 F1s1 F2s1 F0s4 F3s1 F1s4 I0s4 W0s4 F2s4 F4s1&B1s4 F3s4&B0s1 F5s1&B2s4 F4s4&B1s1 F6s1&B3s4 F5s4&B2s1 "
        "B4s4 F6s4&B3s1 B5s4 B4s1 I6s4 I5s1 W6s4 I6s1 W5s1 W6s1",
        "F0s2 F0s3 F1s2 F1s3 F2s2 F2s3 F3s2 B0s3 F3s3&B0s2 F4s2&B1s3 F4s3&B1s2 F5s2&B2s3 F5s3&B2s2 F6s2&B3s3 "
        "F6s3&B3s2 B4s3 B4s2 B5s3 I5s2 I6s3 I6s2 W5s2 W6s3 W6s2",
    ],
    (4, 8): [
        "F0s0 F1s0 F2s0 F3s0 F4s0 F5s0 F6s0 F0s7 I0s7 W0s7 F1s7 I1s7 W1s7 F2s7 I2s7 W2s7 F3s7 F7s0&B3s7 F4s7&B0s0 "
        "B4s7 F5s7&B1s0 B5s7 F6s7&B2s0 B6s7 F7s7&B3s0 B7s7 I4s0 W4s0 I5s0 W5s0 I6s0 W6s0 I7s0 W7s0",
        "F0s1 F1s1 F2s1 F3s1 F4s1 F0s6 F5s1 F1s6 I0s6 W0s6 F2s6 I1s6 W1s6 F3s6 F6s1&B2s6 F4s6&B0s1 F7s1&B3s6 "
        "F5s6&B1s1 B4s6 F6s6&B2s1 B5s6 F7s6&B3s1 B6s6 B4s1 I7s6 I5s1 W7s6 I6s1 W5s1 I7s1 W6s1 W7s1",
        "F0s2 F1s2 F2s2 F0s5 F3s2 F1s5 F4s2 F2s5 I0s5 W0s5 F3s5 F5s2&B1s5 F4s5&B0s2 F6s2&B2s5 F5s5&B1s2 F7s2&B3s5 "
        "F6s5&B2s2 B4s5 F7s5&B3s2 B5s5 B4s2 B6s5 I5s2 I7s5 I6s2 W5s2 I7s2 W7s5 W6s2 W7s2",
        "F0s3 F0s4 F1s3 F1s4 F2s3 F2s4 F3s3 F3s4 F4s3 B0s4 F4s4&B0s3 F5s3&B1s4 F5s4&B1s3 F6s3&B2s4 F6s4&B2s3 "
        "F7s3&B3s4 F7s4&B3s3 B4s4 B4s3 B5s4 B5s3 I6s4 I6s3 I7s4 I7s3 W6s4 W6s3 W7s4 W7s3",
    ],
    (5, 10): [
        "F0s0 F1s0 F2s0 F3s0 F4s0 F5s0 F6s0 F7s0 F8s0 F0s9 I0s9 W0s9 F1s9 I1s9 W1s9 F2s9 I2s9 W2s9 F3s9 I3s9 W3s9 "
        "F4s9 F9s0&B4s9 F5s9&B0s0 B5s9 F6s9&B1s0 B6s9 F7s9&B2s0 B7s9 F8s9&B3s0 B8s9 F9s9&B4s0 B9s9 I5s0 W5s0 I6s0 "
        "W6s0 I7s0 W7s0 I8s0 W8s0 I9s0 W9s0",
        "F0s1 F1s1 F2s1 F3s1 F4s1 F5s1 F6s1 F0s8 F7s1 F1s8 I0s8 W0s8 F2s8 I1s8 W1s8 F3s8 I2s8 W2s8 F4s8 F8s1&B3s8 "
        "F5s8&B0s1 F9s1&B4s8 F6s8&B1s1 B5s8 F7s8&B2s1 B6s8 F8s8&B3s1 B7s8 F9s8&B4s1 B8s8 B5s1 I9s8 I6s1 W9s8 I7s1 "
        "W6s1 I8s1 W7s1 I9s1 W8s1 W9s1",
        "F0s2 F1s2 F2s2 F3s2 F4s2 F0s7 F5s2 F1s7 F6s2 F2s7 I0s7 W0s7 F3s7 I1s7 W1s7 F4s7 F7s2&B2s7 F5s7&B0s2 "
        "F8s2&B3s7 F6s7&B1s2 F9s2&B4s7 F7s7&B2s2 B5s7 F8s7&B3s2 B6s7 F9s7&B4s2 B7s7 B5s2 B8s7 I6s2 I9s7 I7s2 W6s2 "
        "I8s2 W9s7 I9s2 W7s2 W8s2 W9s2",
        "F0s3 F1s3 F2s3 F0s6 F3s3 F1s6 F4s3 F2s6 F5s3 F3s6 I0s6 W0s6 F4s6 F6s3&B1s6 F5s6&B0s3 F7s3&B2s6 F6s6&B1s3 "
        "F8s3&B3s6 F7s6&B2s3 F9s3&B4s6 F8s6&B3s3 B5s6 F9s6&B4s3 B6s6 B5s3 B7s6 B6s3 I8s6 I7s3 I9s6 I8s3 W8s6 I9s3 "
        "W7s3 W9s6 W8s3 W9s3",
        "F0s4 F0s5 F1s4 F1s5 F2s4 F2s5 F3s4 F3s5 F4s4 F4s5 F5s4 B0s5 F5s5&B0s4 F6s4&B1s5 F6s5&B1s4 F7s4&B2s5 "
        "F7s5&B2s4 F8s4&B3s5 F8s5&B3s4 F9s4&B4s5 F9s5&B4s4 B5s5 B5s4 B6s5 B6s4 B7s5 I7s4 I8s5 I8s4 I9s5 I9s4 W7s4 "
        "W8s5 W8s4 W9s5 W9s4",
    ],
}


def expected(p: int, m: int) -> list[list]:
    return [parse(text) for text in EXPECTED[(p, m)]]


# ---------------------------------------------------------------- baselines on the same model (written out)

# 1F1B with full backwards on p ranks, stage s on rank s (one stage = two DualPipeV stages of the same
# model). Writing these orders is the problem pp-schedule; the hidden tests bring their own for other sizes.
ONE_F_ONE_B = {
    (3, 6): [
        "F0s0 F1s0 F2s0 B0s0 F3s0 B1s0 F4s0 B2s0 F5s0 B3s0 B4s0 B5s0",
        "F0s1 F1s1 B0s1 F2s1 B1s1 F3s1 B2s1 F4s1 B3s1 F5s1 B4s1 B5s1",
        "F0s2 B0s2 F1s2 B1s2 F2s2 B2s2 F3s2 B3s2 F4s2 B4s2 F5s2 B5s2",
    ],
    (4, 8): [
        "F0s0 F1s0 F2s0 F3s0 B0s0 F4s0 B1s0 F5s0 B2s0 F6s0 B3s0 F7s0 B4s0 B5s0 B6s0 B7s0",
        "F0s1 F1s1 F2s1 B0s1 F3s1 B1s1 F4s1 B2s1 F5s1 B3s1 F6s1 B4s1 F7s1 B5s1 B6s1 B7s1",
        "F0s2 F1s2 B0s2 F2s2 B1s2 F3s2 B2s2 F4s2 B3s2 F5s2 B4s2 F6s2 B5s2 F7s2 B6s2 B7s2",
        "F0s3 B0s3 F1s3 B1s3 F2s3 B2s3 F3s3 B3s3 F4s3 B4s3 F5s3 B5s3 F6s3 B6s3 F7s3 B7s3",
    ],
}

# ZB-H1 (the problem pp-zero-bubble) with I for its input-gradient pass, same layout.
ZB_H1 = {
    (3, 6): [
        "F0s0 F1s0 F2s0 I0s0 W0s0 F3s0 I1s0 W1s0 F4s0 I2s0 W2s0 F5s0 I3s0 W3s0 I4s0 W4s0 I5s0 W5s0",
        "F0s1 F1s1 I0s1 F2s1 I1s1 W0s1 F3s1 I2s1 W1s1 F4s1 I3s1 W2s1 F5s1 I4s1 W3s1 I5s1 W4s1 W5s1",
        "F0s2 I0s2 F1s2 I1s2 F2s2 I2s2 W0s2 F3s2 I3s2 W1s2 F4s2 I4s2 W2s2 F5s2 I5s2 W3s2 W4s2 W5s2",
    ],
    (4, 8): [
        "F0s0 F1s0 F2s0 F3s0 I0s0 W0s0 F4s0 I1s0 W1s0 F5s0 I2s0 W2s0 F6s0 I3s0 W3s0 F7s0 I4s0 W4s0 I5s0 W5s0 I6s0 W6s0 I7s0 W7s0",
        "F0s1 F1s1 F2s1 I0s1 F3s1 I1s1 W0s1 F4s1 I2s1 W1s1 F5s1 I3s1 W2s1 F6s1 I4s1 W3s1 F7s1 I5s1 W4s1 I6s1 W5s1 I7s1 W6s1 W7s1",
        "F0s2 F1s2 I0s2 F2s2 I1s2 F3s2 I2s2 W0s2 F4s2 I3s2 W1s2 F5s2 I4s2 W2s2 F6s2 I5s2 W3s2 F7s2 I6s2 W4s2 I7s2 W5s2 W6s2 W7s2",
        "F0s3 I0s3 F1s3 I1s3 F2s3 I2s3 F3s3 I3s3 W0s3 F4s3 I4s3 W1s3 F5s3 I5s3 W2s3 F6s3 I6s3 W3s3 F7s3 I7s3 W4s3 W5s3 W6s3 W7s3",
    ],
}


def baseline(name: str, p: int, m: int) -> list[list]:
    """1F1B ("1f1b") or ZB-H1 ("zb-h1") on p ranks, from the tables above; the hidden tests add sizes."""
    table = ONE_F_ONE_B if name == "1f1b" else ZB_H1
    if (p, m) in table:
        return [parse(text) for text in table[(p, m)]]
    import dualpipe_oracle  # only present with the hidden tests

    return dualpipe_oracle.baseline(name, p, m)
