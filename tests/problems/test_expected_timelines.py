"""Yours vs expected in every bundled problem whose public tests compare a timeline or an order with one
they hold (issue 24): a wrong solution's failing public test records the expected timeline beside the
learner's, the first difference (judge.artifacts) is where that wrong solution first departs, a
deadlocked run marks its stuck rows, and no secret test ever records an expected timeline.

pp-schedule's own case is tests/problems/test_pp_schedule.py. pp-bubble-math and pp-quiz have no
expected timeline to record: their public tests compare numbers and answers, and pp-bubble-math's
timelines come from a hidden simulation in its secret tests.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from judge.artifacts import EXPECTED, first_difference, first_timing_difference
from judge.core.problem import load_problem
from judge.core.result import Result
from judge.core.result import TestResult as Judged
from judge.core.wrong import wrong_source
from judge.formats.terminal import _timelines
from tests.conftest import ROOT
from tests.judged import judge_one, solution_job


@dataclass(frozen=True)
class Case:
    problem: str
    wrong: str
    test: str          # the end of the failing public test's id
    kind: str          # "order": the orders differ; "timing": same orders, another time
    at: tuple[int, int]  # (row, index) of the first difference
    yours: str | None  # the learner's block there (None: their row stops before it)
    expected: str
    stuck: dict[int, str] | None = None  # the learner's stuck rows, when their run deadlocks


CASES = [
    Case("pp-simulate", "backward_waits_own_forward", "test_two_stage_1f1b_timeline", "timing", (0, 2), "B0", "B0"),
    Case("pp-simulate", "forward_ignores_previous_stage", "test_two_stage_gpipe_timeline", "timing", (1, 0), "F0", "F0"),
    Case("pp-1f1b-emulated", "warmup_one_short", "test_order_is_1f1b[2-4]", "order", (0, 1), "B0", "F1"),
    Case("pp-1f1b-emulated", "blocking_send", "test_order_is_1f1b[2-4]", "order", (0, 2), None, "B0",
         {0: "send(to=1, tag='act 1')", 1: "send(to=0, tag='grad 0')"}),
    Case("pp-interleaved", "warmup_one_short", "test_schedule_exact[2-4-2]", "order", (1, 2), None, "F0c1",
         {0: "B0c1", 1: "B0c1"}),
    Case("pp-interleaved", "backward_forward_chunk_order", "test_schedule_exact[2-4-2]", "order", (1, 3), None,
         "B0c1", {0: "B0c0", 1: "B0c0"}),
    Case("pp-interleaved", "full_stage_durations", "test_simulate_worked_example", "timing", (0, 0), "F0c0", "F0c0"),
    Case("pp-zero-bubble", "warmup_off_by_one", "test_order_p4_m8", "order", (0, 3), None, "F3",
         {0: "B0", 1: "B0", 2: "B0", 3: "B0"}),
    Case("pp-zero-bubble", "w_right_after_b", "test_order_p4_m8", "order", (3, 2), "W0", "F1"),
    Case("pp-zero-bubble", "sim_b_waits_w", "test_hand_example", "timing", (0, 2), "B0", "B0"),
    Case("pp-dualpipe", "warmup_without_factor_two", "test_order_exact[2-4]", "order", (0, 2), "F0c1", "F2c0",
         {0: "F3s3&B1s0", 1: "F3s1&B1s2"}),
    Case("pp-dualpipe", "pair_ignores_gain", "test_pair_waits_for_both_inputs", "timing", (1, 2), "F1c0", "F1c0"),
    Case("pp-dualpipe", "pair_ignores_gain", "test_pair_duration[0.5]", "timing", (0, 3), "F1c1", "F1c1"),
    Case("pp-interleaved", "contiguous_virtual_stages", "test_simulate_any_order", "timing", (1, 0), "F0c0", "F0c0"),
]

def judged(problem_id: str, wrong: str) -> Result:
    """The wrong solution judged with the secret tests, through the shared cache (tests/judged.py): the job
    test_hints judges too, so each is judged once across xdist workers, modules and unchanged sessions."""
    problem = load_problem(ROOT / "problems" / problem_id)
    path = problem.path / "wrong" / f"{wrong}.diff"
    return judge_one(solution_job(problem.path, f"{problem.id}/wrong/{path.name}", wrong_source(problem, path)))


def artifacts(test: Judged) -> dict[str, Any]:
    return {a["name"]: a["value"] for a in test.artifacts}


def label(timeline: dict[str, Any], row: int, index: int) -> str | None:
    blocks = timeline["stages"][row]
    if index >= len(blocks):
        return None
    b = blocks[index]
    return f"{b['op']}{b['mb']}" + (f"c{b['chunk']}" if b.get("chunk") is not None else "")


@pytest.mark.parametrize("case", CASES, ids=[f"{c.problem}:{c.wrong}:{c.test}" for c in CASES])
def test_a_failing_public_test_draws_the_expected_timeline_from_where_the_wrong_solution_departs(
        case: Case) -> None:
    result = judged(case.problem, case.wrong)
    test = next((t for t in result.tests if t.id.endswith("::" + case.test)), None)
    assert test is not None, [t.id for t in result.tests]
    assert test.visibility == "public" and test.outcome == "failed", (test.visibility, test.outcome, test.message)
    found = artifacts(test)
    assert {"timeline", EXPECTED} <= found.keys(), sorted(found)
    yours, expected = found["timeline"], found[EXPECTED]
    assert expected["title"].lower().startswith("expected"), expected["title"]
    order = first_difference(yours, expected)
    mark = order if case.kind == "order" else first_timing_difference(yours, expected)
    assert (order is None) == (case.kind == "timing"), order
    assert mark == case.at
    row, index = mark
    assert label(yours, row, index) == case.yours and label(expected, row, index) == case.expected
    stuck = {s["row"]: s["waiting"] for s in yours.get("stuck", [])}
    assert stuck == (case.stuck or {})
    assert "stuck" not in expected  # the expected schedule runs to the end
    if case.kind == "timing":  # the same block, at another time: the times are what departs
        mine, want = yours["stages"][row][index], expected["stages"][row][index]
        assert (mine["start"], mine["end"]) != (want["start"], want["end"])
    # -v draws it: the expected timeline under yours, the difference in words
    text = "\n".join(_timelines(test))
    assert expected["title"] in text and "^" in text
    assert f"first difference: {yours.get('rows', 'stage')} {row}, operation {index + 1}: " in text
    assert all(f"stuck: waits for {waiting}" in text for waiting in stuck.values())


@pytest.mark.parametrize("problem_id,wrong", sorted({(c.problem, c.wrong) for c in CASES}))
def test_no_secret_test_records_an_expected_timeline(problem_id: str, wrong: str) -> None:
    """Secret tests draw the learner's timeline, never the expected one (their orders are hidden)."""
    result = judged(problem_id, wrong)
    secret = [t for t in result.tests if t.visibility == "secret"]
    assert secret
    assert [t.id for t in secret if EXPECTED in artifacts(t)] == []


def test_a_secret_test_draws_a_stuck_schedule_as_yours_only() -> None:
    """pp-interleaved's grid (secret): a warm-up one short deadlocks; the learner's schedule is drawn up to
    where it gets stuck, the stuck rank marked, and no expected timeline beside it."""
    result = judged("pp-interleaved", "warmup_one_short")
    test = next(t for t in result.tests if t.id.endswith("::test_grid_schedule[1-2]"))
    assert test.visibility == "secret" and test.outcome == "failed"
    found = artifacts(test)
    assert sorted(found) == ["timeline"]
    assert found["timeline"]["stuck"] == [{"row": 0, "waiting": "B0c1"}]
    # p = 1, m = 2, v = 2: no warm-up forward at all, so B0c1 comes right after F0c0, before its F0c1
    assert [label(found["timeline"], 0, i) for i in range(len(found["timeline"]["stages"][0]))] == ["F0c0"]
