"""Tampering in the web app: no run leaves anything behind (docs/hostile-input.md).

One page of a site with fx-add, pp-simulate, pp-bubble-math and pp-1f1b-emulated. Each tampering
fixture runs (the hostile ones of fx-add whose verdict is voided, and the three tricks on real
problems), then the honest wrong solution ``problems/pp-simulate/wrong/bubble_over_total.diff``: the
tampering run gets the native voided verdict, the engine that ran it is replaced, and the later
Result equals the native one. Honest code that changes global state passes, keeps its engine (the
restore alone cleans up), and the later Result is still the native one.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from judge.core.problem import load_problem
from judge.engines import pyodide as parity
from judge.engines.native import Job, judge_isolated
from tests.browser.conftest import App, Served
from tests.conftest import FIXTURE_PROBLEMS, PROBLEMS, SOLUTIONS
from tests.test_tamper import HONEST, LATER, TRICKS, TRICKS_DIR, VOIDED, tamper_fixtures

CASES = [(name, "fx-add", SOLUTIONS / f"{name}.py") for name in tamper_fixtures()] + [
    (name, problem_id, TRICKS_DIR / f"{name}.py") for name, (problem_id, _) in sorted(TRICKS.items())]
HONEST_CASES = [("honest_state", "fx-add", SOLUTIONS / "honest_state.py")] + [
    (name, problem_id, TRICKS_DIR / f"{name}.py") for name, problem_id in sorted(HONEST.items())]


@pytest.fixture(scope="module")
def page_app(browser, tmp_path_factory) -> App:
    from judge.commands.site.build import build_site

    problems = tmp_path_factory.mktemp("tamper-problems")
    for folder in (LATER[0], PROBLEMS / "pp-bubble-math", PROBLEMS / "pp-1f1b-emulated", FIXTURE_PROBLEMS / "fx-add"):
        shutil.copytree(folder, problems / folder.name, ignore=shutil.ignore_patterns("__pycache__"))
    site = tmp_path_factory.mktemp("tamper-site") / "site"
    build_site(site, pyodide="self", problems_dir=problems)
    served = Served(site)
    context = browser.new_context(viewport={"width": 1366, "height": 800})
    app = App(context.new_page(), served.url)
    app.open()
    app.wait_ready()
    yield app
    context.close()
    served.stop()


@pytest.fixture(scope="module")
def later_native() -> dict:
    """The native Result of the later run (public tests: the page has no secret tests)."""
    return judge_isolated(Job(load_problem(LATER[0]), None, include_secret=False, source=LATER[1])).to_dict()


def run_code(app: App, problem_id: str, source: str) -> dict:
    app.select(problem_id)
    app.set_code(source)
    app.run()
    return app.result(problem_id)


def path_of(problem_id: str) -> Path:
    return FIXTURE_PROBLEMS / problem_id if problem_id == "fx-add" else PROBLEMS / problem_id


def engine_id(app: App) -> int | None:
    return app.page.evaluate("window.ppJudge.pool.primary ? window.ppJudge.pool.primary.id : null")


def run_later(app: App, later_native: dict, after: str) -> None:
    later = run_code(app, LATER[0].name, LATER[1])
    diff = parity.compare(later_native, later, LATER[0])
    assert not diff, f"after {after}, in the same page:\n{diff}"


@pytest.mark.parametrize("name,problem_id,path", CASES, ids=[c[0] for c in CASES])
def test_tampering_is_voided_and_the_next_run_gets_the_native_result(page_app: App, later_native: dict,
                                                                   name: str, problem_id: str, path: Path) -> None:
    engine = engine_id(page_app)
    result = run_code(page_app, problem_id, path.read_text(encoding="utf-8"))
    assert result["status"] == "error" and result["tests"] == [], result
    assert result["message"].startswith(VOIDED), result["message"]
    if name in TRICKS:
        assert TRICKS[name][1] in result["message"], result["message"]
    native = judge_isolated(Job(load_problem(path_of(problem_id)), path, include_secret=False)).to_dict()
    diff = parity.compare(native, result, path_of(problem_id))
    assert not diff, diff
    assert "engine_dirty" not in result  # the page strips the engine's note
    run_later(page_app, later_native, name)
    assert engine_id(page_app) != engine, "the engine that ran the tampering code must be replaced"


@pytest.mark.parametrize("name,problem_id,path", HONEST_CASES, ids=[c[0] for c in HONEST_CASES])
def test_honest_state_changes_pass_and_leave_nothing_behind(page_app: App, later_native: dict,
                                                            name: str, problem_id: str, path: Path) -> None:
    page_app.wait_ready()
    engine = engine_id(page_app)
    result = run_code(page_app, problem_id, path.read_text(encoding="utf-8"))
    assert result["status"] == "passed" and result["passed"] == result["total"] > 0, result
    run_later(page_app, later_native, name)
    assert engine_id(page_app) == engine, "honest code must not cost the page its engine"
