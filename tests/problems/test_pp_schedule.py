"""Project tests for pp-schedule: the reference agrees with an independent implementation.

The independent implementation simulates each stage's choices step by step (GPipe: forwards
first; 1F1B: run a forward while the stage holds fewer than p - s un-backpropagated micro-batches)
instead of the reference's warm-up / steady-state / cool-down formula.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from judge.core.problem import load_problem
from tests.problems.loading import load

PROBLEM = Path(__file__).resolve().parents[2] / "problems" / "pp-schedule"




ref = load("pp-schedule", "reference/pp_sim.py", "_pp_schedule_reference")


def independent(kind: str, p: int, m: int) -> list[list[tuple[str, int]]]:
    out = []
    for s in range(p):
        limit = m if kind == "gpipe" else p - s
        fwd = bwd = 0
        stage = []
        for _ in range(2 * m):
            if fwd < m and fwd - bwd < limit:
                stage.append(("F", fwd))
                fwd += 1
            else:
                stage.append(("B", bwd))
                bwd += 1
        out.append(stage)
    return out


@pytest.mark.parametrize("kind", ["gpipe", "1f1b"])
def test_reference_matches_independent_on_grid(kind):
    for p in range(1, 9):
        for m in range(1, 33):
            assert ref.schedule(kind, p, m) == independent(kind, p, m), (kind, p, m)


def test_reference_properties():
    for p in range(1, 9):
        for m in range(1, 33):
            for s, stage in enumerate(ref.schedule("1f1b", p, m)):
                warmup = 0
                while warmup < len(stage) and stage[warmup][0] == "F":
                    warmup += 1
                assert warmup == min(p - s, m)  # min(p - s - 1, m) warm-ups + the first steady forward
                assert sorted(stage) == sorted([("F", i) for i in range(m)] + [("B", i) for i in range(m)])


@pytest.mark.parametrize("args", [("GPipe", 2, 2), ("zb", 2, 2), (None, 2, 2), ("1f1b", 0, 2), ("1f1b", 2, 0),
                                  ("1f1b", 2.0, 2), ("1f1b", 2, "2"), ("gpipe", True, 2)])
def test_reference_rejects_invalid_arguments(args):
    with pytest.raises(ValueError, match=r"\S"):
        ref.schedule(*args)


def test_problem_folder_is_complete():
    for rel in ["problem.toml", "README.md", "starter/pp_sim.py", "reference/pp_sim.py",
                "tests/public/test_schedule_public.py", "tests/secret/test_schedule_secret.py"]:
        assert (PROBLEM / rel).is_file(), rel
    assert len(load_problem(PROBLEM).wrong_files) >= 2


def test_a_failed_public_order_records_the_expected_timeline_and_a_secret_one_never():
    """Yours vs expected: the public tests record the expected order beside the learner's; the secret
    tests never do (their expected orders are not the learner's to see)."""
    from judge.core.problem import load_problem
    from judge.core.wrong import wrong_source
    from tests.conftest import ROOT
    from tests.judged import judge_one, solution_job

    problem = load_problem(ROOT / "problems" / "pp-schedule")
    source = wrong_source(problem, problem.path / "wrong" / "warmup_off_by_one.diff")
    # the job the hint and parity sweeps judge: one Result for all three (tests/judged.py)
    result = judge_one(solution_job(problem.path, "pp-schedule/wrong/warmup_off_by_one.diff", source))
    failed = [t for t in result.tests if t.outcome == "failed"]
    public = [t for t in failed if t.visibility == "public" and "worked_example" in t.id]
    assert public, [t.id for t in failed]
    names = {a["name"] for a in public[0].artifacts}
    assert names >= {"timeline", "expected"}, names
    expected = next(a["value"] for a in public[0].artifacts if a["name"] == "expected")
    assert [b["op"] + str(b["mb"]) for b in expected["stages"][0]][:5] == ["F0", "F1", "F2", "F3", "B0"]
    assert all(a["name"] != "expected" for t in result.tests if t.visibility == "secret" for a in t.artifacts)
