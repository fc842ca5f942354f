"""Timelines as the runner's reports draw them."""

from __future__ import annotations

import pytest


def test_timelines_name_their_rows_and_wide_ones_keep_idle_gaps():
    from judge.artifacts import render_timeline_text, timeline

    art = timeline([[("F", 0, 0, 1), ("B", 0, 3, 5)], [("F", 0, 1, 2), ("B", 0, 2, 3)]], "demo", rows="rank")
    assert render_timeline_text(art).splitlines()[1:] == ["rank 0 |F0 .. .. B0 B0|", "rank 1 |.. F0 B0 .. ..|"]
    assert render_timeline_text(art, width=1).splitlines()[1:] == ["rank 0 | F0@0 ..2 B0@3",
                                                                   "rank 1 | ..1 F0@1 B0@2"]
    assert render_timeline_text({k: v for k, v in art.items() if k != "rows"}).splitlines()[1].startswith("stage 0")
    with pytest.raises(ValueError, match="rows must be one of"):
        timeline([], rows="gpu")
