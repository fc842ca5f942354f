"""Engine parity: every solution of every problem gets the same Result natively and in Pyodide.

For each problem folder in ``problems/`` (discovered at run time) and each solution kind
(reference, starter, every ``wrong/`` file), the test judges the code with the native engine (a
test process and a sandboxed learner process per case) and in Pyodide 0.27.7 under Node.js (one
harness call for all cases), both in session fixtures, then compares the Results with
:func:`judge.engines.pyodide.compare`. Only the cases a run selects are judged, and the Results come
from the tests' shared cache (tests/judged.py) when the judge, the problem and the code are unchanged.
Secret tests are included: the native grader runs them, so they must agree too.

It also checks that the comparison catches a real difference (a test asserting numpy's default
integer is int64, which is int32 in 32-bit wasm) and that the harness stops runaway code.

Needs ``node`` (Node.js 20) and, on the first run, npm and pip access to the package registries to
assemble the Pyodide distribution. Without node the module is skipped, except under ``CI=true``,
where a missing node fails.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from judge.core.problem import load_problem
from judge.core.wrong import WrongSolutionError, wrong_source
from judge.engines import pyodide as parity
from judge.engines.native import judge_many
from tests.conftest import folder_job
from tests.judged import judge_cached, solution_job

ROOT = Path(__file__).resolve().parents[2]
PROBLEMS = ROOT / "problems"
IN_CI = os.environ.get("CI") == "true"
NODE = shutil.which("node")
# Pyodide is slower than CPython, more so on a loaded 2-core machine: this test compares verdicts,
# it does not enforce time limits, so every job has tests.judged.TIME_FACTOR times the problem's limit.

pytestmark = pytest.mark.skipif(
    NODE is None and not IN_CI,
    reason="node (Node.js 20) is not installed: the Pyodide parity tests need it "
           "(CI installs it, and there a missing node is a failure, not a skip)")


@dataclass(frozen=True)
class Case:
    """One (problem, solution) pair; ``error`` is set when the problem folder does not load."""

    label: str
    problem_dir: Path
    source: str = ""
    time_limit: float = 10.0
    error: str = ""


def discover(root: Path) -> list[Case]:
    """Every solution of every problem folder under ``root`` now."""
    cases: list[Case] = []
    folders = sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith((".", "_"))) \
        if root.is_dir() else []
    for folder in folders:
        try:
            problem = load_problem(folder)
        except Exception as exc:  # noqa: BLE001 - reported as a failing case, readable
            cases.append(Case(f"{folder.name}/invalid", folder, error=f"problem folder does not load: {exc}"))
            continue
        solutions = [("reference", problem.reference_path), ("starter", problem.starter_path)]
        solutions += [(f"wrong/{path.name}", path) for path in problem.wrong_files]
        for kind, path in solutions:
            try:
                source = wrong_source(problem, path) if kind.startswith("wrong/") else path.read_text(encoding="utf-8")
            except WrongSolutionError as exc:
                cases.append(Case(f"{problem.id}/{kind}", folder, error=str(exc)))
                continue
            cases.append(Case(f"{problem.id}/{kind}", folder, source, float(problem.time_limit)))
    return cases


CASES = discover(PROBLEMS)


def _selected(request: pytest.FixtureRequest, test: str, cases: list[Case]) -> list[Case]:
    """The cases of ``test`` that this run selected (``-k pp-schedule`` judges one problem's)."""
    names = {item.name for item in request.session.items if getattr(item, "originalname", "") == test}
    return [c for c in cases if f"{test}[{c.label}]" in names and not c.error]


def _judge_both(cases: list[Case], lang: str | None = None) -> dict[str, tuple[dict[str, Any], dict[str, Any], Path]]:
    """label -> (native Result dict, Pyodide Result dict, the problem folder judged) of ``cases``: both
    engines judge the same job (a snapshot of the problem folder: edits made to problems/ during the
    session reach neither), through the tests' shared cache of Results (tests/judged.py)."""
    jobs = [solution_job(c.problem_dir, c.label, c.source, lang) for c in cases]
    native = judge_cached(jobs)
    pyodide = judge_cached(jobs, engine="pyodide") if jobs else []
    return {job.label: (n.to_dict(), p.to_dict(), job.problem.path) for job, n, p in zip(jobs, native, pyodide)}


@pytest.fixture(scope="session")
def case_runs(request: pytest.FixtureRequest) -> dict[str, tuple[dict[str, Any], dict[str, Any], Path]]:
    """label -> (native Result dict, Pyodide Result dict, problem folder) of every selected case."""
    _need_node()
    return _judge_both(_selected(request, "test_same_result_natively_and_in_pyodide", CASES))


def _need_node() -> None:
    if NODE is None:
        pytest.fail("node is not installed but CI=true: the Pyodide parity tests must run in CI; "
                    "install Node.js 20 (apt-get install nodejs npm) in .ci/run", pytrace=False)


PROBE_TEST = '''\
import numpy as np
import probe


def test_default_integer_is_int64():
    dtype = np.array([1]).dtype
    assert dtype == np.int64, f"numpy's default integer is {dtype}, this test expects int64"


def test_answer():
    assert probe.answer() == 42
'''


@pytest.fixture(scope="session")
def probe_problem(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A problem whose public test breaks parity on purpose (int64 vs wasm's int32)."""
    folder = tmp_path_factory.mktemp("parity") / "parity-probe"
    (folder / "starter").mkdir(parents=True)
    (folder / "reference").mkdir()
    (folder / "tests" / "public").mkdir(parents=True)
    (folder / "problem.toml").write_text(
        'format = 1\nid = "parity-probe"\ntitle = "Parity probe"\nsummary = "Breaks parity on purpose."\n'
        'order = 1\ndifficulty = "easy"\nentry = "probe.py"\ntime_limit = 5\ntags = []\n', encoding="utf-8")
    (folder / "README.md").write_text("# Parity probe\n", encoding="utf-8")
    (folder / "starter" / "probe.py").write_text("def answer():\n    return 0\n", encoding="utf-8")
    (folder / "reference" / "probe.py").write_text("def answer():\n    return 42\n", encoding="utf-8")
    (folder / "tests" / "public" / "test_probe.py").write_text(PROBE_TEST, encoding="utf-8")
    return folder


RUNAWAY = {
    # label: (source, time limit): an interruptible loop, an uninterruptible sleep (worker killed),
    # code that kills the interpreter, then a normal job
    # 5 s, not 1: in one full run the loop's worker was terminated after its 20 s of grace instead of
    # interrupted. An interrupt before the loop starts does stop the run (tried at 0.01 to 0.1 s); what an
    # interrupted run did next under load was pytest formatting the interrupt's every frame (since cut)
    "probe/loop": ("def answer():\n    while True:\n        pass\n", 5.0),
    "probe/sleep": ("import time\n\ndef answer():\n    time.sleep(60)\n", 1.0),
    "probe/exit": ("import os\n\ndef answer():\n    os._exit(3)\n", 10.0),
    "probe/after-kill": ("def answer():\n    return 42\n", 10.0),
}


@pytest.fixture(scope="session")
def pyodide_run(probe_problem: Path) -> dict[str, tuple[dict[str, Any], dict[str, Any]]]:
    """label -> (Result dict, harness record) for the probe's jobs, from one harness call (never cached:
    the records say how the harness stopped each run)."""
    _need_node()
    jobs = [folder_job(probe_problem, "def answer():\n    return 42\n", True, 30.0, "probe/reference")]
    jobs += [folder_job(probe_problem, source, True, limit, label) for label, (source, limit) in RUNAWAY.items()]
    # the interrupt must land, however late: with busy loops on every core it took longer than the
    # default 2 s of grace and the loop's worker was terminated instead (time.sleep's still must be)
    run = parity.run_harness(jobs, grace=20.0)
    return {job.label: (result, record) for job, result, record in zip(jobs, run.results, run.records)}


@pytest.fixture(scope="session")
def native_run(probe_problem: Path) -> dict[str, dict[str, Any]]:
    """label -> native Result dict of the probe."""
    jobs = [folder_job(probe_problem, "def answer():\n    return 42\n", True, 30.0, "probe/reference")]
    return {job.label: result.to_dict() for job, result in zip(jobs, judge_many(jobs, parallel=1))}


@pytest.mark.parametrize("case", CASES, ids=[c.label for c in CASES])
def test_same_result_natively_and_in_pyodide(case: Case, case_runs: dict[str, Any]) -> None:
    if case.error:
        pytest.fail(case.error, pytrace=False)
    native, pyodide, folder = case_runs[case.label]
    diff = parity.compare(native, pyodide, folder)
    if diff:
        pytest.fail(diff, pytrace=False)


def test_a_parity_break_is_caught_with_a_readable_diff(probe_problem: Path, pyodide_run: dict[str, Any],
                                                       native_run: dict[str, Any]) -> None:
    native = native_run["probe/reference"]
    pyodide, _ = pyodide_run["probe/reference"]
    assert native["status"] == "passed", native
    assert pyodide["status"] == "failed", pyodide
    diff = parity.compare(native, pyodide, probe_problem)
    assert "status: native 'passed'  |  pyodide 'failed'" in diff, diff
    assert "tests/public/test_probe.py::test_default_integer_is_int64" in diff, diff
    assert "outcome: native 'passed'  |  pyodide 'failed'" in diff, diff
    assert "numpy's default integer is int32, this test expects int64" in diff, diff
    assert "test_answer" not in diff, f"the test that agrees must not be reported:\n{diff}"


def test_runaway_and_crashing_code_do_not_lose_later_jobs(pyodide_run: dict[str, Any]) -> None:
    loop, loop_record = pyodide_run["probe/loop"]
    assert loop["status"] == "timeout" and loop["message"] == "timed out after 5 s", loop
    assert loop_record["interrupted"] and not loop_record["killed"], loop_record
    sleep, sleep_record = pyodide_run["probe/sleep"]
    assert sleep["status"] == "timeout", sleep
    assert sleep_record["killed"], f"time.sleep ignores the interrupt: the worker must be replaced {sleep_record}"
    crash, crash_record = pyodide_run["probe/exit"]
    assert crash["status"] == "error", crash
    assert crash["message"].startswith("the Pyodide interpreter crashed during this run"), crash
    assert crash_record["worker"] > sleep_record["worker"], (sleep_record, crash_record)
    after, after_record = pyodide_run["probe/after-kill"]
    outcomes = {t["name"]: t["outcome"] for t in after["tests"]}
    assert outcomes.get("answer") == "passed", after  # (the int64 probe test fails in Pyodide by design)
    assert after_record["worker"] > crash_record["worker"], (crash_record, after_record)


# Parity in the learner's language: for every problem, the first wrong solution that declares a Chinese
# hint, judged in Chinese by both engines (the tests' messages come from judge.lang, told by each
# engine's runner). One per problem, not all of them: which tests fail, and which hints are diagnosed,
# is the English sweep's parity above (the diagnosis does not depend on the language), every wrong
# solution's Chinese hint is checked natively by tests/problems/test_hints.py, and the words come from
# the same catalogs in both engines; what only this test sees (the language reaching each engine's
# runner and its catalogs, for each problem) one case a problem shows. All of them took 10 minutes.
def _has_chinese_hint(case: Case) -> bool:
    return "# hint[zh]:" in (case.problem_dir / "wrong" / case.label.split("/", 2)[2]).read_text(encoding="utf-8")


_CHINESE_HINTED = [c for c in CASES if c.label.split("/")[1:2] == ["wrong"] and not c.error and _has_chinese_hint(c)]
ZH_CASES = [c for i, c in enumerate(_CHINESE_HINTED) if i == 0 or c.problem_dir != _CHINESE_HINTED[i - 1].problem_dir]


@pytest.fixture(scope="session")
def chinese_runs(request: pytest.FixtureRequest) -> dict[str, tuple[dict[str, Any], dict[str, Any], Path]]:
    """label -> (native Result dict, Pyodide Result dict, problem folder) of every selected ZH_CASES case,
    judged with lang="zh"."""
    _need_node()
    return _judge_both(_selected(request, "test_same_result_in_chinese_natively_and_in_pyodide", ZH_CASES), "zh")


def _has_chinese(result: dict[str, Any]) -> bool:
    return any("\u4e00" <= ch <= "\u9fff" for test in result["tests"] for ch in test.get("message", ""))


def test_every_problem_with_chinese_hints_has_a_chinese_case() -> None:
    hinted = {c.problem_dir for c in _CHINESE_HINTED}
    assert len(hinted) >= 2 and {c.problem_dir for c in ZH_CASES} == hinted, [c.label for c in ZH_CASES]


@pytest.mark.parametrize("case", ZH_CASES, ids=[c.label for c in ZH_CASES])
def test_same_result_in_chinese_natively_and_in_pyodide(case: Case, chinese_runs: dict[str, Any]) -> None:
    native, pyodide, folder = chinese_runs[case.label]
    assert _has_chinese(native) and _has_chinese(pyodide), (
        f"{case.label} declares a Chinese hint but its messages are not in Chinese "
        f"(native {_has_chinese(native)}, Pyodide {_has_chinese(pyodide)})")
    diff = parity.compare(native, pyodide, folder)
    if diff:
        pytest.fail(diff, pytrace=False)
