"""End-to-end tests of the web app in headless Chromium against a served `self` build.

One page boots Python once and is reused by the tests in this file, in order; the offline test
uses its own server (another origin, so its own service worker) and its own browser context.
"""

from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path

import jsonschema
import pytest

from judge.core.problem import Problem, load_problem
from judge.core.wrong import wrong_source
from judge.engines import Job
from tests.browser.conftest import RUN_TIMEOUT_MS, App, Served, real_problem_ids
from tests.conftest import judge_isolated, run_cli

LOOP = '"""Never returns."""\n\n\ndef answer() -> int:\n    while True:\n        pass\n'
# Ignores SIGINT, so the interrupt cannot land: the page must terminate the worker and use the spare.
STUBBORN = ('"""Ignores the interrupt."""\nimport signal\n\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\n\n\n'
            'def answer() -> int:\n    while True:\n        pass\n')


SCHEMA = json.loads((Path(__file__).resolve().parents[2] / "judge" / "core" / "schema" / "result.schema.json").read_text())


def valid(result: dict) -> dict:
    """The page's Result, checked against the Result JSON Schema."""
    jsonschema.validate(result, SCHEMA)
    return result


def comparable(result: dict) -> dict:
    """What must agree between the browser and the native judge (messages may differ: 32-bit wasm)."""
    return {
        "problem": result["problem"], "status": result["status"], "passed": result["passed"],
        "total": result["total"],
        "tests": [(t["id"], t["name"], t["file"], t["visibility"], t["outcome"]) for t in result["tests"]],
    }


@pytest.mark.parametrize("problem_id", real_problem_ids())
def test_reference_passes_and_starter_fails_like_native(app: App, problems_root: Path, problem_id: str) -> None:
    problem = load_problem(problems_root / problem_id)
    app.select(problem_id)
    reference = problem.reference_path.read_text(encoding="utf-8")
    for label, source in (("reference", reference), ("starter", problem.starter)):
        app.set_code(source)
        status = app.run()
        in_page = valid(app.result(problem_id))
        native = judge_isolated(Job(problem, source=source, include_secret=False)).to_dict()
        assert comparable(in_page) == comparable(native), f"{problem_id} {label}: browser and native verdicts differ"
        assert app.outcomes_in_page() == {t["id"]: t["outcome"] for t in native["tests"]}
        assert app.page.locator("[data-testid=test-result]").count() == len(native["tests"])
        assert status == native["status"]
        if label == "reference":
            assert status == "passed", f"{problem_id}: the reference does not pass in the browser: {in_page['message']}"
            # public tests only, scored over the objectives they check: the reference earns full points
            assert in_page["points"] == in_page["max_points"] == problem.points, f"{problem_id}: {in_page['points']}"
            assert app.page.get_attribute(f"[data-problem-id='{problem_id}'] .state", "data-state") == "passed"
            app.screenshot(f"reference-{problem_id}")
        else:
            assert status != "passed", f"{problem_id}: the starter passes in the browser"
            assert app.page.get_attribute(f"[data-problem-id='{problem_id}'] .state", "data-state") == "failing"
    assert not app.errors, app.errors


def test_extra_package_installed_with_micropip(app: App, problems_root: Path) -> None:
    problem = load_problem(problems_root / "bt-limits")
    app.select("bt-limits")
    app.set_code(problem.reference_path.read_text(encoding="utf-8"))
    assert app.run() == "passed", app.result("bt-limits")


def test_time_limit_stops_an_infinite_loop_and_the_next_run_works(app: App, problems_root: Path) -> None:
    problem = load_problem(problems_root / "bt-limits")
    app.select("bt-limits")
    app.set_code(LOOP)
    assert app.run() == "timeout"
    result = valid(app.result("bt-limits"))
    assert result["message"] == "timed out after 4 s"
    assert "timed out after 4 s" in app.page.inner_text("[data-testid=result-summary]").lower()
    app.set_code(problem.reference_path.read_text(encoding="utf-8"))
    assert app.run() == "passed"


def test_uninterruptible_code_is_killed_and_a_spare_engine_takes_over(app: App, problems_root: Path) -> None:
    problem = load_problem(problems_root / "bt-limits")
    app.select("bt-limits")
    engine_before = app.page.evaluate("window.ppJudge.pool.primary.id")
    app.set_code(STUBBORN)
    assert app.run() == "timeout"
    # the page stays responsive while the stuck worker is replaced
    assert app.page.evaluate("1 + 1") == 2
    app.set_code(problem.reference_path.read_text(encoding="utf-8"))
    assert app.run() == "passed"
    assert app.page.evaluate("window.ppJudge.pool.primary.id") != engine_before


def test_stop_button_stops_a_run(app: App, problems_root: Path) -> None:
    problem = load_problem(problems_root / "bt-limits")
    app.select("bt-limits")
    app.set_code(LOOP)
    run = app.click_run()
    app.page.wait_for_selector("[data-testid=engine-status][data-state=running]")
    app.page.wait_for_function("() => window.ppJudge.pool.current && window.ppJudge.pool.current.startedAt")
    assert app.page.is_enabled("[data-testid=stop]")
    app.page.click("[data-testid=stop]")
    assert app.wait_verdict(run, timeout=10_000) == "stopped"
    assert "stopped" in valid(app.result("bt-limits"))["message"]
    app.set_code(problem.reference_path.read_text(encoding="utf-8"))
    assert app.run() == "passed"


def test_ctrl_enter_runs_and_traceback_jumps_to_the_editor_line(app: App, problems_root: Path) -> None:
    app.select("pp-schedule")
    source = '"""Fails on line 5."""\n\n\ndef schedule(kind, p, m):\n    raise ValueError("line five")\n'
    app.set_code(source)
    before = app.run_count()
    app.page.click("[data-testid=editor] .cm-content")
    app.page.keyboard.press("Control+Enter")
    assert app.wait_verdict(before + 1) in ("failed", "error")
    link = app.page.locator("[data-testid=test-result] .frame-link", has_text="pp_sim.py:5").first
    link.scroll_into_view_if_needed()
    link.click()
    cursor_line = app.page.evaluate(
        "() => { const s = window.ppJudge.editor.view.state; return s.doc.lineAt(s.selection.main.head).number; }")
    assert cursor_line == 5


def test_keyboard_tab_indents_and_escape_tab_leaves_the_editor(app: App) -> None:
    app.select("pp-schedule")
    app.set_code("x = 1\n")
    app.page.click("[data-testid=editor] .cm-content")
    in_editor = "() => !!document.activeElement.closest('[data-testid=editor]')"
    app.page.keyboard.press("Control+End")
    app.page.keyboard.press("Tab")
    assert app.page.evaluate(in_editor)
    assert app.code() == "x = 1\n    "
    app.page.keyboard.press("Escape")
    app.page.keyboard.press("Tab")
    assert not app.page.evaluate(in_editor)


def test_a_refused_save_warns_and_keeps_the_code(app: App) -> None:
    app.select("pp-schedule")
    app.page.evaluate("""() => {
        window.__realSetItem = Storage.prototype.setItem;
        Storage.prototype.setItem = function () { throw new DOMException("full", "QuotaExceededError"); };
    }""")
    try:
        app.set_code("# not saved yet\n")
        assert app.page.is_visible("#banner[data-kind=warning]")
        assert "Download all" in app.page.inner_text("#banner")
        assert app.code() == "# not saved yet\n"
    finally:
        app.page.evaluate("() => { Storage.prototype.setItem = window.__realSetItem; }")
    app.set_code("# saved now\n")  # the next edit retries and succeeds
    assert app.page.is_hidden("#banner")
    assert app.page.evaluate("localStorage.getItem('pp-judge:v1:code:pp-schedule')") == "# saved now\n"


def solution_code(problem: Problem, kind: str) -> str:
    """The reference's code, or the first wrong/ solution's (a diff applied to the reference)."""
    if kind == "reference":
        assert problem.reference_path is not None
        return problem.reference_path.read_text(encoding="utf-8")
    return wrong_source(problem, problem.wrong_files[0])


def test_zip_export_judges_natively_to_the_same_verdicts(app: App, problems_root: Path, tmp_path: Path) -> None:
    chosen = {"pp-schedule": "reference", "pp-bubble-math": "wrong"}
    browser_results = {}
    for pid, kind in chosen.items():
        problem = load_problem(problems_root / pid)
        source = solution_code(problem, kind)
        app.select(pid)
        app.set_code(source)
        app.run()
        browser_results[pid] = app.result(pid)
    with app.page.expect_download() as info:
        app.page.click("#export-zip")
    archive = tmp_path / "practice.zip"
    info.value.save_as(archive)
    names = set(zipfile.ZipFile(archive).namelist())
    expected = {f"{p.name}/{load_problem(p).entry}" for p in problems_root.iterdir()}
    assert names == expected
    practice = tmp_path / "practice"
    zipfile.ZipFile(archive).extractall(practice)
    for pid, kind in chosen.items():
        problem = load_problem(problems_root / pid)
        exported = (practice / pid / problem.entry).read_text(encoding="utf-8")
        want = solution_code(problem, kind)
        assert exported == want
    out = tmp_path / "native.json"
    proc = run_cli(str(practice), "--public-only", "--json", str(out), "-j", "2")
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr
    native = {r["problem"]: r for r in json.loads(out.read_text())["results"]}
    for pid in chosen:
        assert comparable(native[pid]) == comparable(browser_results[pid]), pid
    assert browser_results["pp-schedule"]["status"] == "passed"
    assert browser_results["pp-bubble-math"]["status"] == "failed"

    # importing the zip restores the code
    app.select("pp-schedule")
    app.set_code("# overwritten\n")
    app.page.set_input_files("#import-zip-input", str(archive))
    app.page.wait_for_function("() => !window.ppJudge.editor.getText().startsWith('# overwritten')")
    assert app.code() == (practice / "pp-schedule" / "pp_sim.py").read_text(encoding="utf-8")


def test_reset_asks_then_restores_the_starter(app: App, problems_root: Path) -> None:
    problem = load_problem(problems_root / "pp-schedule")
    app.select("pp-schedule")
    app.set_code("# keep me\n")
    app.accept_dialogs = False
    seen = len(app.dialogs_seen)
    try:
        app.page.click("[data-testid=reset]")
    finally:
        app.accept_dialogs = True
    assert len(app.dialogs_seen) == seen + 1 and "starter" in app.dialogs_seen[-1]
    assert app.code() == "# keep me\n"
    app.page.click("[data-testid=reset]")  # accepted this time
    assert app.code() == problem.starter


def test_reload_keeps_the_code_and_the_problem_states(app: App) -> None:
    app.select("pp-schedule")
    app.page.click("[data-testid=editor] .cm-content")
    app.page.keyboard.press("Control+End")
    app.page.keyboard.type("\n# typed before the reload 123")
    typed = app.code()
    assert typed.endswith("# typed before the reload 123")
    state_before = app.page.get_attribute("[data-problem-id='pp-schedule'] .state", "data-state")
    app.page.reload()
    app.page.wait_for_selector("html[data-app-ready=true]")
    assert app.page.evaluate("window.ppJudge.state.current.id") == "pp-schedule"
    assert app.code() == typed
    assert app.page.get_attribute("[data-problem-id='pp-schedule'] .state", "data-state") == state_before
    app.wait_ready()


def test_works_offline_on_a_second_visit(browser, site_dir: Path, problems_root: Path) -> None:
    served = Served(site_dir)  # its own origin, so its own service worker
    context = browser.new_context(viewport={"width": 1366, "height": 800})
    try:
        page = context.new_page()
        app = App(page, served.url)
        app.open("pp-schedule")
        app.wait_ready()
        page.wait_for_selector("html[data-offline-ready=true]", timeout=RUN_TIMEOUT_MS)
        served.stop()  # the network is gone: only the service worker's cache can serve the site
        page.reload()
        page.wait_for_selector("html[data-app-ready=true]", timeout=60_000)
        app.wait_ready()
        problem = load_problem(problems_root / "pp-schedule")
        app.set_code(problem.reference_path.read_text(encoding="utf-8"))
        assert app.run() == "passed"
        assert not app.errors, app.errors
    finally:
        context.close()
        served.stop()


def test_a_new_build_is_offered_then_taken_on_request(browser, tmp_path: Path, problems_root: Path) -> None:
    from judge.commands.site.build import build_site

    first, second = tmp_path / "first", tmp_path / "second"
    for folder, ids in ((first, ["pp-schedule"]), (second, ["pp-schedule", "bt-limits"])):
        for pid in ids:
            shutil.copytree(problems_root / pid, folder / pid)
    site = tmp_path / "site"
    build_site(site, pyodide="self", problems_dir=first)
    served = Served(site)
    context = browser.new_context(viewport={"width": 1366, "height": 800})
    try:
        page = context.new_page()
        app = App(page, served.url + "?spare=0")
        app.open()
        app.wait_ready()
        page.wait_for_selector("html[data-offline-ready=true]", timeout=RUN_TIMEOUT_MS)
        old_build = page.evaluate("window.ppJudge.config.build")
        build_site(site, pyodide="self", problems_dir=second)  # a new deployment
        page.reload()
        page.wait_for_selector("html[data-app-ready=true]")
        assert page.evaluate("window.ppJudge.config.build") == old_build  # served by the installed worker
        app.wait_ready()
        page.wait_for_selector("#banner[data-key=update]:not([hidden])", timeout=RUN_TIMEOUT_MS)
        with page.expect_navigation():
            page.click("#banner button:has-text('Reload to update')")
        page.wait_for_selector("html[data-app-ready=true]")
        assert page.evaluate("window.ppJudge.config.build") != old_build
        assert page.locator("[data-testid=problem-link]").count() == 2
    finally:
        context.close()
        served.stop()
