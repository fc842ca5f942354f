"""Grades that tampering cannot buy (docs/hostile-input.md), natively and in one long-lived interpreter.

- Three one-line tricks against real problems (tests/fixtures/tricks/) each buy full or partial
  credit without :mod:`judge.core.integrity`; with it, each run is an error with no test credited whose
  message names what was changed and by which file.
- Honest code that uses math, numpy, functools and dataclasses and changes global state (random
  seeds, recursion limit, numpy's error and print settings, environment, warnings filters, decimal
  context, chdir) passes, and all of that state is put back after the run.
- In-process, as in the browser's one interpreter: after any tampering run, an honest wrong
  solution of another problem gets exactly its native Result.
"""

from __future__ import annotations

import decimal
import json
import os
import random
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

from judge.core.problem import load_problem
from judge.core.runner import judge_source_json
from judge.core.wrong import wrong_source
from judge.engines import pyodide as parity
from judge.engines.native import Job, judge_isolated, judge_many
from tests.conftest import FIXTURE_PROBLEMS, PROBLEMS, ROOT, SOLUTIONS

TRICKS_DIR = ROOT / "tests" / "fixtures" / "tricks"
#: fixture -> (problem, what the message must name)
TRICKS = {
    "pp_bubble_math_isclose": ("pp-bubble-math", "math.isclose was replaced by bubble_math.py"),
    "pp_1f1b_allclose": ("pp-1f1b-emulated", "numpy.allclose was replaced by pp_1f1b.py"),
    "pp_simulate_standin_helpers": ("pp-simulate", ("simulate_helpers in sys.modules is a stand-in, not "
                                                    "tests/public/simulate_helpers.py (put there by pp_sim.py)")),
}
HONEST = {"pp_bubble_math_honest_state": "pp-bubble-math"}
#: the honest wrong solution judged after each trick: (problem folder, its code)
LATER = (PROBLEMS / "pp-simulate",
         wrong_source(load_problem(PROBLEMS / "pp-simulate"), PROBLEMS / "pp-simulate" / "wrong" / "bubble_over_total.diff"))
VOIDED = "the code changed what the tests rely on, so no verdict is given: "


def tamper_fixtures() -> list[str]:
    """The hostile fixtures whose golden Result is a voided verdict (the tampering class)."""
    return sorted(p.stem for p in (ROOT / "tests" / "golden").glob("*.json")
                  if json.loads(p.read_text())["message"].startswith(VOIDED))


@pytest.mark.parametrize("include_secret", [False, True], ids=["public", "secret"])
@pytest.mark.parametrize("trick", sorted(TRICKS))
def test_a_trick_on_a_real_problem_voids_the_verdict(trick: str, include_secret: bool) -> None:
    problem_id, names = TRICKS[trick]
    result = judge_isolated(Job(load_problem(PROBLEMS / problem_id), TRICKS_DIR / f"{trick}.py",
                                include_secret=include_secret))
    assert result.status == "error", result.to_dict()
    assert result.tests == [] and result.passed == 0 and result.score == 0.0
    assert result.message.startswith(VOIDED) and names in result.message, result.message


def test_honest_code_that_changes_global_state_passes() -> None:
    for fixture, problem_id in HONEST.items():
        result = judge_isolated(Job(load_problem(PROBLEMS / problem_id), TRICKS_DIR / f"{fixture}.py"))
        assert result.status == "passed" and result.passed == result.total > 0, result.to_dict()


def test_honest_global_state_is_put_back_after_an_in_process_run() -> None:
    before = _global_state()
    for source, problem in [((SOLUTIONS / "honest_state.py"), FIXTURE_PROBLEMS / "fx-add"),
                            (TRICKS_DIR / "pp_bubble_math_honest_state.py", PROBLEMS / "pp-bubble-math")]:
        result = json.loads(judge_source_json(str(problem), source.read_text(encoding="utf-8"), True))
        assert result["status"] == "passed", result["message"]
        assert "engine_dirty" not in result  # honest: the browser keeps this engine
        assert _global_state() == before
        assert not {"adder", "bubble_math", "_pipeline_sim", "test_add"} & set(sys.modules)


def _global_state() -> dict:
    return {"recursion": sys.getrecursionlimit(), "random": random.getstate(), "np_err": np.geterr(),
            "np_print": np.get_printoptions(), "np_random": repr(np.random.get_state()),
            "environ": dict(os.environ), "filters": list(warnings.filters), "cwd": os.getcwd(),
            "decimal": decimal.getcontext().prec, "trace": sys.gettrace(), "meta_path": list(sys.meta_path),
            "path_hooks": list(sys.path_hooks), "path": list(sys.path),
            "modules": {k: m for k, m in sys.modules.items() if k in _MODULES_BEFORE}}


_MODULES_BEFORE = set(sys.modules)


@pytest.fixture(scope="module")
def later_native() -> dict:
    """The native Result of the honest wrong solution judged after each tampering run."""
    problem_dir, source = LATER
    return judge_isolated(Job(load_problem(problem_dir), None, include_secret=True, source=source)).to_dict()


def _in_process(problem_dir: Path, source: Path | str) -> dict:
    """Judge ``source`` (a file, or code) in this interpreter, as the browser does."""
    code = source.read_text(encoding="utf-8") if isinstance(source, Path) else source
    return json.loads(judge_source_json(str(problem_dir), code, True))


@pytest.mark.parametrize("fixture", [*tamper_fixtures(), *sorted(TRICKS)])
def test_after_tampering_in_the_same_interpreter_the_next_result_is_the_native_one(fixture: str,
                                                                                   later_native: dict) -> None:
    if fixture in TRICKS:
        tampered = _in_process(PROBLEMS / TRICKS[fixture][0], TRICKS_DIR / f"{fixture}.py")
    else:
        tampered = _in_process(FIXTURE_PROBLEMS / "fx-add", SOLUTIONS / f"{fixture}.py")
    assert tampered["status"] == "error" and tampered["tests"] == [], tampered
    assert tampered.get("engine_dirty"), "a tampering run must tell the browser to replace its engine"
    problem_dir, source = LATER
    later = _in_process(problem_dir, source)
    assert "engine_dirty" not in later
    diff = parity.compare(later_native, later, problem_dir)
    assert not diff, diff


def test_every_real_trick_buys_nothing_and_every_wrong_solution_keeps_its_verdict() -> None:
    """The three tricks, interleaved with every solution of their problems, in one interpreter."""
    plan = []
    for trick, (problem_id, _) in sorted(TRICKS.items()):
        problem = load_problem(PROBLEMS / problem_id)
        plan.append((problem, TRICKS_DIR / f"{trick}.py"))
        plan += [(problem, problem.reference_path), *((problem, path) for path in problem.wrong_files)]
    sources = [wrong_source(problem, path) if path.suffix == ".diff" else path.read_text(encoding="utf-8")
               for problem, path in plan]
    native = judge_many([Job(problem, None, source=source) for (problem, _), source in zip(plan, sources)], parallel=2)
    for (problem, path), source, expected in zip(plan, sources, native):
        got = json.loads(judge_source_json(str(problem.path), source, True))
        got.pop("engine_dirty", None)
        diff = parity.compare(expected.to_dict(), got, problem.path)
        assert not diff, f"{problem.id} {path.name}:\n{diff}"
