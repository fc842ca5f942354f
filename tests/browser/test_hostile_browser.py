"""Hostile code in the browser: the page gives a clear non-pass verdict, keeps the code, and the
next run works (docs/hostile-input.md). Runs after test_web_app.py on the same booted page.

The learner's code shares the browser's one interpreter with the tests, so a run that tampers with
the judge can fool its own verdict (browser verdicts are for learning); what it must never do is
change a later run's Result: every run gets an engine no earlier run has used."""

from __future__ import annotations

from pathlib import Path

import pytest

from judge.core.problem import load_problem
from tests.browser.conftest import App

CRASH = '"""Ends the interpreter."""\nimport os\n\n\ndef answer() -> int:\n    os._exit(0)\n'
SYNTAX = 'def answer() -> int\n    return 42\n'
FAKE = ('print(\'{"schema_version": 1, "status": "passed", "score": 1.0}\')\n'
        'print("==== 2 passed in 0.01s ====")\n\n\ndef answer() -> int:\n    return 41\n')
TAMPER = ('import judge.core.collector as c\n\n_orig = c.Collector.pytest_runtest_logreport\n\n\n'
          'def _pass(self, report):\n    report.outcome = "passed"\n    return _orig(self, report)\n\n\n'
          'c.Collector.pytest_runtest_logreport = _pass\n\n\ndef answer() -> int:\n    return 0\n')
OUTSIDE = ('def answer() -> int:\n    with open("/home/pyodide/escape.txt", "w") as f:\n'
           '        f.write("x")\n    return 42\n')
#: a tamper that would outlive its run in a reused interpreter: every later report marked passed
STICKY = ('import sys\n\nfor _name, _module in list(sys.modules.items()):\n'
          '    if _name == "judge.core.collector":\n'
          '        _orig = _module.Collector.pytest_runtest_logreport\n\n'
          '        def _pass(self, report, _orig=_orig):\n            report.outcome = "passed"\n'
          '            return _orig(self, report)\n\n'
          '        _module.Collector.pytest_runtest_logreport = _pass\n\n\n'
          'def answer() -> int:\n    return 0\n')


@pytest.fixture
def reference(problems_root: Path) -> str:
    return load_problem(problems_root / "bt-limits").reference_path.read_text(encoding="utf-8")


@pytest.mark.parametrize("code,status,words", [
    (SYNTAX, "error", "SyntaxError"),
    (FAKE, "failed", "expected 42, got 41"),
    (OUTSIDE, "failed", "writing outside the learner's folder"),
])
def test_hostile_code_gets_a_clear_verdict(app: App, reference: str, code: str, status: str, words: str) -> None:
    app.select("bt-limits")
    app.set_code(code)
    assert app.run() == status
    result = app.result("bt-limits")
    text = result["message"] + " ".join(t["message"] for t in result["tests"])
    assert words in text
    assert words in app.page.inner_text("#results") or words in app.page.inner_text("body")
    app.set_code(reference)
    assert app.run() == "passed"


@pytest.mark.parametrize("attack", [TAMPER, STICKY], ids=["patch-collector", "patch-from-sys-modules"])
def test_a_run_that_blinded_the_check_changes_no_later_result(app: App, attack: str, problems_root: Path) -> None:
    from judge.core.wrong import wrong_source
    from judge.engines import Job
    from judge.engines import pyodide as parity
    from tests.conftest import judge_isolated

    problem = load_problem(problems_root / "pp-schedule")
    wrong = wrong_source(problem, problem.path / "wrong" / "warmup_off_by_one.diff")
    app.select("pp-schedule")
    app.set_code(attack)
    app.run()  # whatever it gets for itself (the browser's verdicts are for learning)
    app.set_code(wrong)
    assert app.run() == "failed"
    later = app.result("pp-schedule")
    native = judge_isolated(Job(problem, source=wrong, include_secret=False)).to_dict()
    assert not parity.compare(native, later, problem_dir=problem.path)
    assert 0 < later["passed"] < later["total"] and later["sandbox"] == "browser"


def test_a_crashing_interpreter_gives_an_error_keeps_the_code_and_recovers(app: App, reference: str) -> None:
    app.select("bt-limits")
    app.set_code(CRASH)
    assert app.run() == "error"
    assert app.page.evaluate("1 + 1") == 2  # the page stays responsive
    assert app.code() == CRASH  # nothing lost
    app.set_code(reference)
    assert app.run() == "passed"


def test_two_tabs_last_write_wins_and_other_problems_are_untouched(app: App, app_context) -> None:
    app.select("pp-quiz")
    app.set_code("# quiz answers from tab one\n")
    app.select("pp-schedule")
    app.set_code("# schedule from tab one\n")
    other = App(app_context.new_page(), app.base_url)
    try:
        other.open("pp-schedule")
        other.select("pp-schedule")
        assert other.code() == "# schedule from tab one\n"
        other.set_code("# schedule from tab two\n")
        other.page.wait_for_timeout(300)
    finally:
        other.page.close()
    app.page.reload()
    app.page.wait_for_selector("html[data-app-ready=true]")
    app.select("pp-schedule")
    assert app.code() == "# schedule from tab two\n"
    app.select("pp-quiz")
    assert app.code() == "# quiz answers from tab one\n"
    app.wait_ready()
