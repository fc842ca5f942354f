"""The in-process runner (the browser engine's path): tampering does not outlive its run."""

from __future__ import annotations

import json

import pytest

from judge.core.runner import judge_source_json
from tests.conftest import FIXTURE_PROBLEMS, SOLUTIONS

PROBLEM = str(FIXTURE_PROBLEMS / "fx-add")


def test_a_patched_collector_is_restored_for_the_next_run():
    import judge.core.collector

    original = judge.core.collector.Collector.pytest_runtest_logreport
    first = json.loads(judge_source_json(PROBLEM, (SOLUTIONS / "patch_collector.py").read_text()))
    assert first["status"] == "error" and "Collector.pytest_runtest_logreport was replaced" in first["message"]
    assert judge.core.collector.Collector.pytest_runtest_logreport is original
    second = json.loads(judge_source_json(PROBLEM, (SOLUTIONS / "partly_failing.py").read_text(), True))
    assert second["status"] == "failed" and second["passed"] == 3


def test_a_patched_import_is_restored_even_when_the_import_fails():
    import builtins

    original = builtins.__import__
    source = (SOLUTIONS / "patch_test_module.py").read_text() + "\nraise RuntimeError('boom')\n"
    result = json.loads(judge_source_json(PROBLEM, source))
    assert result["status"] == "error" and "builtins.__import__" in result["message"]
    assert builtins.__import__ is original


def test_the_guard_is_off_after_a_run_in_this_process(tmp_path):
    from judge.core import guard

    json.loads(judge_source_json(PROBLEM, (SOLUTIONS / "write_outside.py").read_text()))
    assert guard.active_root() is None
    (tmp_path / "still-writable.txt").write_text("ok")


def test_timelines_name_their_rows_and_wide_ones_keep_idle_gaps():
    from judge.artifacts import render_timeline_text, timeline

    art = timeline([[("F", 0, 0, 1), ("B", 0, 3, 5)], [("F", 0, 1, 2), ("B", 0, 2, 3)]], "demo", rows="rank")
    assert render_timeline_text(art).splitlines()[1:] == ["rank 0 |F0 .. .. B0 B0|", "rank 1 |.. F0 B0 .. ..|"]
    assert render_timeline_text(art, width=1).splitlines()[1:] == ["rank 0 | F0@0 ..2 B0@3",
                                                                   "rank 1 | ..1 F0@1 B0@2"]
    assert render_timeline_text({k: v for k, v in art.items() if k != "rows"}).splitlines()[1].startswith("stage 0")
    with pytest.raises(ValueError, match="rows must be one of"):
        timeline([], rows="gpu")
