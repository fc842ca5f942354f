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


def test_same_order_at_other_times_marks_the_first_block_at_another_time():
    """Yours vs expected when the orders agree (a simulator's mistake): the earliest block, in time, whose
    start or end differs is the first difference, and -v gives both times."""
    from judge.artifacts import first_difference, first_timing_difference, timeline
    from judge.core.result import TestResult
    from judge.formats.terminal import _timelines

    want = timeline([[("F", 0, 0, 1), ("F", 1, 1, 2), ("B", 0, 4, 6)], [("F", 0, 1, 2), ("B", 0, 2, 4)]], "expected x")
    yours = timeline([[("F", 0, 0, 1), ("F", 1, 1, 2), ("B", 0, 2, 4)], [("F", 0, 1, 2), ("B", 0, 2, 4)]], "yours")
    assert first_difference(yours, want) is None
    assert first_timing_difference(yours, want) == (0, 2)
    assert first_timing_difference(want, want) is None
    reordered = timeline([[("F", 1, 0, 1), ("F", 0, 1, 2), ("B", 0, 4, 6)], [("F", 0, 1, 2), ("B", 0, 2, 4)]])
    assert first_timing_difference(reordered, want) is None  # an order difference is first_difference's
    test = TestResult(id="t.py::test_x", name="x", file="t.py", visibility="public", outcome="failed",
                      artifacts=[{"name": "timeline", "value": yours}, {"name": "expected", "value": want}])
    text = "\n".join(_timelines(test))
    assert "same order of operations as expected (the timing differs)" in text
    assert "first difference: stage 0, operation 3: yours B0 [2, 4], expected B0 [4, 6]" in text
    same = TestResult(id="t.py::test_y", name="y", file="t.py", visibility="public", outcome="failed",
                      artifacts=[{"name": "timeline", "value": want}, {"name": "expected", "value": want}])
    assert "first difference" not in "\n".join(_timelines(same)) and "timing differs" not in "\n".join(_timelines(same))


def test_a_timeline_stuck_before_anything_ran_still_names_its_stuck_rows():
    from judge.artifacts import render_timeline_text, timeline

    art = timeline([[], []], "stuck at once", stuck={0: "B0", 1: "F0"})
    assert render_timeline_text(art).splitlines() == ["stuck at once", "stage 0 ||  stuck: waits for B0",
                                                      "stage 1 ||  stuck: waits for F0"]
    assert render_timeline_text(timeline([[]], "nothing")).splitlines() == ["nothing", "(empty timeline)"]


def test_control_characters_in_a_learners_words_are_shown_not_obeyed():
    """Escape codes in a message or the output would rewrite the terminal (or the feedback file in it)
    that shows them; tab and newline are the learner's layout and stay."""
    from judge.core.result import visible_controls

    forged = "\x1b[2K\r\x1b[1Aall passed\x07\r\nnext\tcolumn\x7f\x9b"
    assert visible_controls(forged) == "\u241b[2K\u240d\u241b[1Aall passed\u2407\nnext\tcolumn\u2421\ufffd"
    assert not any(ord(c) < 32 and c not in "\t\n" for c in visible_controls("".join(map(chr, range(160)))))


def test_bidirectional_overrides_in_a_learners_words_are_shown_not_obeyed():
    """U+202E and its kin ("Trojan Source") reorder what follows them on the line wherever text is shown raw (a
    terminal, a feedback file in an editor, a Markdown table's row): a learner's message could make the points
    after it read otherwise. They are shown as escapes; the marks a language needs (U+200E, U+200F) stay."""
    from judge.core.result import visible_controls

    forged = "expected 42, got \u202e4 fo 0\u202c | \u20660.5\u2069 \u202a\u202b\u202d\u2067\u2068 \u200f\u05e9\u200e"
    assert visible_controls(forged) == ("expected 42, got \\u202e4 fo 0\\u202c | \\u20660.5\\u2069 "
                                        "\\u202a\\u202b\\u202d\\u2067\\u2068 \u200f\u05e9\u200e")
