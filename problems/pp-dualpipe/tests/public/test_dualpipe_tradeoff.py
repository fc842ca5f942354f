"""What DualPipeV buys and what it costs: your order, timed by your simulate and counted by your
peak_activations, against 1F1B and ZB-H1 on the same model (the statement's table)."""

import dualpipe
import dualpipe_helpers as H
import pytest


@pytest.mark.title(zh="DualPipeV 的权衡：你的顺序的一步时间、气泡和激活峰值，与 1F1B 和 ZB-H1 对比（题面中的表格，p = 4，m = 8）")
def test_tradeoff_against_1f1b_and_zb_h1(record_property):
    """DualPipeV's trade-off: your order's step time, bubble and peak activations against 1F1B and ZB-H1 (the statement's table, p = 4, m = 8)."""
    report = H.tradeoff_report(dualpipe, 4, 8, H.expected(4, 8), record_property)
    assert not report, report
