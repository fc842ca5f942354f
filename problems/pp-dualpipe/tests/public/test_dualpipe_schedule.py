"""The DualPipeV order: exact per-rank lists, validity, sizes."""

import dualpipe
import dualpipe_helpers as H
import pytest

from judge.lang import say

EXPECTED = H.EXPECTED


@pytest.mark.title(zh="顺序与预期完全一致")
@pytest.mark.parametrize("p,m", list(EXPECTED))
def test_order_exact(p, m, record_property):
    got = H.normalize(dualpipe.dualpipev_schedule(p, m), p, f"dualpipev_schedule({p}, {m})")
    want = [H.parse(text) for text in EXPECTED[(p, m)]]
    H.attach(record_property, dualpipe, got, p, f"DualPipeV, p={p}, m={m}: T_F=1, T_B=2, T_W=1, gain=1",
             (1.0, 2.0, 1.0, 1.0), want)
    report = H.order_report(p, m, want, got)
    assert not report, report


@pytest.mark.title(zh="调度合法")
@pytest.mark.parametrize("p", [1, 2, 3, 4, 5])
@pytest.mark.parametrize("extra", [0, 1, 3, 6])
def test_schedule_is_valid(p, extra):
    m = 2 * p + extra
    got = H.normalize(dualpipe.dualpipev_schedule(p, m), p, f"dualpipev_schedule({p}, {m})")
    problem = H.check_schedule(got, p, m)
    assert problem is None, say(f"dualpipev_schedule({p}, {m}) is not a valid schedule: {problem} {H.NOTATION}\n{H.fmt_sched(got)}",
                                zh=f"dualpipev_schedule({p}, {m}) 不是一个有效的调度：{problem} {H.notation()}\n"
                                   f"{H.fmt_sched(got)}")


@pytest.mark.title(zh="每个 rank 每个 stage 运行 m 次前向；重叠对的个数是 2m - 3p + r + 1（最后一个 rank 是 2m - 2p - 1）")
@pytest.mark.parametrize("p", [2, 3, 5])
def test_phase_counts(p):
    """Every rank runs m forwards per stage; the number of pairs is 2m - 3p + r + 1 (2m - 2p - 1 on the last rank)."""
    m = 2 * p + 2
    got = H.normalize(dualpipe.dualpipev_schedule(p, m), p, f"dualpipev_schedule({p}, {m})")
    for r, row in enumerate(got):
        pairs = sum(isinstance(a[0], tuple) for a in row)
        want = 2 * m - 2 * p - 1 if r == p - 1 else 2 * m - 3 * p + r + 1
        assert pairs == want, say(
            f"dualpipev_schedule({p}, {m}) rank {r}: {pairs} overlapped pairs, expected {want}: phase 4 runs "
            f"m - 2p + r + 1 = {m - 2 * p + r + 1} times with two pairs each, phase 5 p - r - 1 = {p - r - 1} times "
            f"with one" + (" (and the last rank's very first main-loop step is not a pair)" if r == p - 1 else ""),
            zh=f"dualpipev_schedule({p}, {m}) rank {r}：{pairs} 个重叠对，预期 {want} 个：阶段 4 运行 "
               f"m - 2p + r + 1 = {m - 2 * p + r + 1} 次，每次两个重叠对，阶段 5 运行 p - r - 1 = {p - r - 1} 次，"
               f"每次一个" + ("（而且最后一个 rank 的主循环第一步不是重叠对）" if r == p - 1 else ""))


INVALID_SIZES = [(1, 1), (2, 3), (3, 5), (4, 7), (0, 4), (-1, 6)]


@pytest.mark.title(zh="不合法的规模抛出异常")
@pytest.mark.parametrize("p,m", INVALID_SIZES, ids=[f"p={p}, m={m}" for p, m in INVALID_SIZES])
def test_invalid_sizes_raise(p, m):
    try:
        got = dualpipe.dualpipev_schedule(p, m)
    except ValueError as exc:
        assert str(exc).strip(), say(f"dualpipev_schedule({p}, {m}) raised ValueError with an empty message; the message "
                                     f"should say what is wrong (here: DualPipeV needs p >= 1 ranks and m >= 2p micro-batches)",
                                     zh=f"dualpipev_schedule({p}, {m}) 抛出了信息为空的 ValueError；信息应说明哪里不对"
                                        f"（这里：DualPipeV 需要 p >= 1 个 rank 和 m >= 2p 个微批次）")
        return
    except Exception as exc:  # noqa: BLE001 - reported to the learner
        raise AssertionError(say(f"dualpipev_schedule({p}, {m}) should raise ValueError (p >= 1 and m >= 2p is required), "
                                 f"but raised {type(exc).__name__}: {exc}",
                                 zh=f"dualpipev_schedule({p}, {m}) 应抛出 ValueError（p >= 1，并且必须满足 m >= 2p），"
                                    f"但抛出了 {type(exc).__name__}: {exc}")) from None
    raise AssertionError(say(f"dualpipev_schedule({p}, {m}) should raise ValueError (p >= 1 and m >= 2p is required: "
                             f"DualPipeV needs at least one micro-batch per stage), but it returned {str(got)[:120]}",
                             zh=f"dualpipev_schedule({p}, {m}) 应抛出 ValueError（p >= 1，并且必须满足 m >= 2p：DualPipeV "
                                f"每个 stage 至少需要一个微批次），但它返回了 {str(got)[:120]}"))


@pytest.mark.title(zh="m = 2p 是 DualPipeV 的最小规模，能给出调度")
@pytest.mark.parametrize("p", [1, 2, 4])
def test_smallest_size_m_equal_to_2p_is_accepted(p):
    """m = 2p, DualPipeV's smallest size, gives a schedule"""
    m = 2 * p
    try:
        got = dualpipe.dualpipev_schedule(p, m)
    except ValueError as exc:
        raise AssertionError(say(f"dualpipev_schedule({p}, {m}) raised ValueError: {exc}; m = 2p is DualPipeV's smallest "
                                 "size and must be accepted (refuse only m < 2p)",
                                 zh=f"dualpipev_schedule({p}, {m}) 抛出了 ValueError：{exc}；m = 2p 是 DualPipeV 的最小规模，"
                                    "必须接受（只拒绝 m < 2p）")) from None
    assert isinstance(got, list) and len(got) == p, say(
        f"dualpipev_schedule({p}, {m}) should give one list of actions per rank, got {got!r}",
        zh=f"dualpipev_schedule({p}, {m}) 应为每个 rank 给出一个动作列表，实际得到 {got!r}")
