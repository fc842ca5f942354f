"""peak_activations: activations stored by F and freed by B or I, counted per rank."""

import dualpipe
import dualpipe_helpers as H
import pytest

from judge.lang import say


def _peaks(sched, what):
    return H.peaks_named(dualpipe, sched, what)


@pytest.mark.title(zh="手算的示例")
@pytest.mark.parametrize("text, want", [
    ("F0s0 F0s1 F1s0&B0s1 F1s1&B0s0 B1s1 B1s0", 2),
    ("F0s0 F0s1 I0s1 F1s0 W0s1 F1s1&B0s0 B1s1 B1s0", 2),
    ("F0s0 F1s0 F0s1 F1s1 B0s1 B1s1 I0s0 I1s0 W0s0 W1s0", 4),
    ("F0s0 F0s1 I0s1 B0s0 F1s0 F1s1 F2s0", 3),
], ids=["pairs", "every kind", "all forwards first", "peak after the last action"])
def test_hand_examples(text, want):
    sched = [H.parse(text)]
    got = _peaks(sched, say("a one-rank schedule", zh="一个单 rank 的调度"))
    assert got == [want], say(f"peak_activations([{text}]): expected [{want}], got {got}. F stores one micro-batch's "
                              f"activations, B or I frees them, W changes nothing; count after each action."
                              + H.memory_hint(sched, got),
                              zh=f"peak_activations([{text}])：预期 [{want}]，实际 {got}。F 保存一个微批次的激活，"
                                 f"B 或 I 释放它们，W 不改变任何东西；在每个动作之后计数。" + H.memory_hint(sched, got))


@pytest.mark.title(zh="DualPipeV 的激活峰值")
@pytest.mark.parametrize("p,m", [(1, 2), (2, 4), (2, 5), (3, 6), (4, 8)])
def test_dualpipev_peaks(p, m):
    sched = H.expected(p, m)
    got = _peaks(sched, say(f"DualPipeV's order for p={p}, m={m}", zh=f"p={p}、m={m} 时 DualPipeV 的顺序"))
    want = [2 * p] * (p - 1) + [2 * p + 1]
    assert got == want, say(f"peak_activations of DualPipeV, p={p}, m={m}: expected 2p = {2 * p} on ranks 0..p-2 and "
                            f"2p + 1 = {2 * p + 1} on the last rank, got {got}." + H.memory_hint(sched, got),
                            zh=f"DualPipeV 的 peak_activations，p={p}、m={m}：预期 rank 0..p-2 上为 2p = {2 * p}，"
                               f"最后一个 rank 上为 2p + 1 = {2 * p + 1}，实际 {got}。" + H.memory_hint(sched, got))


@pytest.mark.title(zh="对照调度的激活峰值")
@pytest.mark.parametrize("name", ["1f1b", "zb-h1"])
def test_baseline_peaks(name):
    p, m = 4, 8
    sched = H.baseline(name, p, m)
    got = _peaks(sched, say(f"{name} for p={p}, m={m}", zh=f"p={p}、m={m} 时的 {name}"))
    assert got == [4, 3, 2, 1], say(f"peak_activations of {name.upper()} (p=4, m=8, one stage per rank): expected "
                                    f"[4, 3, 2, 1] (p - s on stage s), got {got}",
                                    zh=f"{name.upper()} 的 peak_activations（p=4、m=8，每个 rank 一个 stage）：预期 "
                                       f"[4, 3, 2, 1]（stage s 上为 p - s），实际 {got}")


@pytest.mark.title(zh="返回 int 的列表")
def test_returns_a_list_of_ints():
    sched = H.expected(2, 4)
    try:
        got = dualpipe.peak_activations(sched)
    except Exception as exc:  # noqa: BLE001 - reported to the learner
        raise AssertionError(say(f"peak_activations on DualPipeV's order for p=2, m=4 raised {type(exc).__name__}: {exc}",
                                 zh=f"peak_activations 在 p=2、m=4 时 DualPipeV 的顺序上抛出了 "
                                    f"{type(exc).__name__}: {exc}")) from None
    ok = isinstance(got, list) and all(isinstance(x, int) and not isinstance(x, bool) for x in got)
    assert ok, say(f"peak_activations(DualPipeV's order for p=2, m=4) should return a list of ints, one count per rank "
                   f"([4, 5]); got {type(got).__name__} {got!r:.120}"
                   + (f" with {sorted({type(x).__name__ for x in got})} items" if isinstance(got, (list, tuple)) and got
                      else ""),
                   zh=f"peak_activations(p=2、m=4 时 DualPipeV 的顺序) 应返回一个 int 列表，每个 rank 一个计数"
                      f"（[4, 5]）；实际得到 {type(got).__name__} {got!r:.120}"
                      + (f"，其元素类型为 {sorted({type(x).__name__ for x in got})}"
                         if isinstance(got, (list, tuple)) and got else ""))
    assert len(got) == 2, say(f"peak_activations(DualPipeV's order for p=2, m=4) should give one count per rank, 2; got {got!r}",
                              zh=f"peak_activations(p=2、m=4 时 DualPipeV 的顺序) 应给出每个 rank 一个计数，共 2 个；"
                                 f"实际得到 {got!r}")
