"""The learner's page, second pass (issue 24): verdicts, yours vs expected, keyboard, editor, results
pane, accessibility (axe-core), first visit, Try it, and the smaller fixes.

Most tests share the session's page (conftest's ``app``: Python boots once) and resize it when they
need another width; the first-visit tests use a fresh browser context of their own. No timing is
asserted anywhere (speed is bench/'s business).
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from judge.core.problem import load_problem
from tests.browser.conftest import BOOT_TIMEOUT_MS, App, Served
from tests.conftest import ROOT

AXE = ROOT / "tests" / "browser" / "vendor" / "axe.min.js"
LOOP = '"""Never returns."""\n\n\ndef answer() -> int:\n    while True:\n        pass\n'
# bt-expected: stage 1 runs its backward before its forward, so both stages get stuck
STUCK = ('def order(p, m):\n    return [[("F", 0), ("B", 0), ("F", 1), ("B", 1)], [("B", 0), ("F", 0), ("F", 1), ("B", 1)]]\n')
TRY_CODE = ('def order(p, m):\n    print("ordering", p, m)\n    return [[("F", i) for i in range(m)] for _ in range(p)]\n\n\n'
            'def boom(x):\n    return 1 // x\n\n\ndef forever():\n    while True:\n        pass\n')
SCHEDULE_LOOP = 'def schedule(kind, p, m):\n    while True:\n        pass\n'
GPIPE_ONLY = 'def schedule(kind, p, m):\n    return [[("F", i) for i in range(m)] + [("B", i) for i in range(m)] for _ in range(p)]\n'
SCREENS = (390, 1024, 1440)


def _reference(problems_root: Path, pid: str) -> str:
    problem = load_problem(problems_root / pid)
    assert problem.reference_path is not None
    return problem.reference_path.read_text(encoding="utf-8")


@contextmanager
def sized(app: App, width: int, height: int = 800) -> Iterator[None]:
    before = app.page.viewport_size
    app.page.set_viewport_size({"width": width, "height": height})
    try:
        yield
    finally:
        app.page.set_viewport_size(before)


def shots(app: App, name: str, widths: tuple[int, ...] = SCREENS, show: str | None = None) -> None:
    """Screenshots of the current state at each width (only with PP_JUDGE_SCREENSHOTS=DIR), ``show``
    (a selector) scrolled into view."""
    if not os.environ.get("PP_JUDGE_SCREENSHOTS"):
        return
    for width in widths:
        with sized(app, width, 844 if width < 700 else 800):
            if width < 700 and app.page.is_visible("#tab-code"):
                app.page.click("#tab-code")
            if show:
                target = app.page.locator(show).first
                if not target.is_visible() and app.page.is_visible("#tab-statement"):
                    app.page.click("#tab-statement")  # (what to show is in the statement: hints)
                target.scroll_into_view_if_needed()
            app.page.wait_for_timeout(300)
            app.screenshot(f"{name}-{width}")
            if width < 700 and app.page.is_visible("#tab-statement"):
                app.page.click("#tab-statement")


def active(app: App) -> str:
    return app.page.evaluate("""() => { const a = document.activeElement;
        return a ? (a.id || a.dataset.testid || a.className || a.tagName) : ''; }""")


def in_editor(app: App) -> bool:
    return app.page.evaluate("() => !!document.activeElement.closest('[data-testid=editor]')")


# ------------------------------------------------------------------------------------------------
# 1. the verdict


def test_a_pass_says_public_tests_links_the_next_exercise_and_survives_a_reload(app: App, problems_root: Path) -> None:
    app.select("bt-limits")
    app.set_code(_reference(problems_root, "bt-limits"))
    assert app.run() == "passed"
    summary = app.page.inner_text("[data-testid=result-summary]")
    assert "All 2 public tests passed" in summary
    assert "grader also runs tests that are not shown" in summary
    link = app.page.locator("[data-testid=next-exercise]")
    assert link.get_attribute("href") == "#/bt-expected"
    shots(app, "verdict-passed")
    app.page.reload()
    app.page.wait_for_selector("html[data-app-ready=true]")
    assert app.page.evaluate("window.ppJudge.state.current.id") == "bt-limits"
    assert app.page.get_attribute("[data-testid=result-summary]", "data-status") == "passed"
    assert app.page.is_visible("[data-testid=kept-result]")
    assert "All 2 public tests passed" in app.page.inner_text("[data-testid=result-summary]")
    assert app.page.locator("[data-testid=test-result]").count() == 2
    app.wait_ready()


def test_points_by_objective_are_shown_with_why_points_were_lost(app: App) -> None:
    app.select("bt-expected")
    app.set_code(load_problem(ROOT / "tests/browser/fixtures/problems/bt-expected").starter)
    assert app.run() == "failed"
    objectives = app.page.inner_text("[data-testid=objectives]")
    assert "1F1B order 0 / 4 points · order(2, 3) is" in objectives
    assert "One list per stage 1 / 1 points · right" in objectives
    assert app.page.get_attribute("[data-objective=shape]", "data-state") == "full"
    assert app.page.get_attribute("[data-objective=order]", "data-state") == "short"
    summary = app.page.inner_text("[data-testid=result-summary]")
    assert "1 of 3 public tests passed" in summary and "1 / 5 points" in summary


# ------------------------------------------------------------------------------------------------
# 2. yours vs expected


def test_a_failed_schedule_draws_the_expected_timeline_under_yours(app: App) -> None:
    app.select("bt-expected")
    app.set_code(load_problem(ROOT / "tests/browser/fixtures/problems/bt-expected").starter)
    with sized(app, 1024):  # drawn for the pane's width at 1024 px
        assert app.run() == "failed"
    first = app.page.locator("[data-testid=test-result][data-test-id$='test_order_two_stages']")
    compare = first.locator("[data-testid=timeline-compare]")
    assert compare.count() == 1
    captions = compare.locator("figcaption").all_inner_texts()
    assert captions[0].startswith("Yours") and captions[1].startswith("expected 1F1B")
    assert compare.locator("[data-testid=first-difference]").count() == 2  # on both
    note = compare.locator("[data-testid=difference-note]").inner_text()
    assert "stage 0, operation 3: yours F2, expected B0" in note
    # a test that passed draws no expected timeline
    fits = compare.evaluate("""(box) => [...box.querySelectorAll('.timeline-scroll')].every(
        (s) => s.scrollWidth <= s.clientWidth + 1)""")
    assert fits, "the two timelines do not fit the results pane at 1024 px"
    passed = app.page.locator("[data-testid=test-result][data-outcome=passed]")
    assert passed.locator("[data-testid=timeline-compare]").count() == 0
    shots(app, "yours-vs-expected", show="[data-testid=timeline-compare]")


def test_a_stuck_stage_is_marked_as_stuck(app: App) -> None:
    app.select("bt-expected")
    app.set_code(STUCK)
    assert app.run() == "failed"
    first = app.page.locator("[data-testid=test-result][data-test-id$='test_order_two_stages']")
    stuck = first.locator("[data-testid=timeline-compare] figure").first.locator("[data-testid=stuck-row]")
    assert stuck.count() == 2
    assert "stuck: waits for B0" in first.inner_text()
    shots(app, "stuck-stage", show="[data-testid=stuck-row]")


def _wrong(problems_root: Path, pid: str, name: str) -> str:
    from judge.core.wrong import wrong_source

    problem = load_problem(problems_root / pid)
    return wrong_source(problem, problem.path / "wrong" / f"{name}.diff")


def test_interleaved_draws_the_expected_schedule_under_a_stuck_one(app: App, problems_root: Path) -> None:
    """pp-interleaved with a warm-up one forward short: the exact-order test draws the expected schedule under
    yours, the first difference marked on both, and yours stuck where its ranks wait for B0c1."""
    app.select("pp-interleaved")
    app.set_code(_wrong(problems_root, "pp-interleaved", "warmup_one_short"))
    with sized(app, 1024):
        assert app.run() == "failed"
    test = app.page.locator("[data-testid=test-result][data-test-id$='test_schedule_exact[2-4-2]']")
    compare = test.locator("[data-testid=timeline-compare]")
    assert compare.count() == 1
    captions = compare.locator("figcaption").all_inner_texts()
    assert captions[0].startswith("Yours: your interleaved 1F1B, p=2 m=4 v=2 (up to where it gets stuck)"), captions
    assert captions[1].startswith("expected interleaved 1F1B, p=2 m=4 v=2"), captions
    assert compare.locator("[data-testid=first-difference]").count() == 2  # on both
    note = compare.locator("[data-testid=difference-note]").inner_text()
    assert "rank 1, operation 3: yours has nothing, expected F0c1" in note, note
    stuck = compare.locator("figure").first.locator("[data-testid=stuck-row]")
    assert stuck.count() == 2
    assert "stuck: waits for B0c1" in test.inner_text()
    assert compare.locator("figure").nth(1).locator("[data-testid=stuck-row]").count() == 0
    shots(app, "interleaved-yours-vs-expected", show="[data-testid=timeline-compare]")


def test_a_simulator_that_times_a_block_wrong_marks_that_block(app: App, problems_root: Path) -> None:
    """pp-simulate, a backward that waits only for its own forward: same order as expected, so the first block
    at another time is marked, with both times."""
    app.select("pp-simulate")
    app.set_code(_wrong(problems_root, "pp-simulate", "backward_waits_own_forward"))
    assert app.run() == "failed"
    test = app.page.locator("[data-testid=test-result][data-test-id$='test_two_stage_1f1b_timeline']")
    compare = test.locator("[data-testid=timeline-compare]")
    assert compare.count() == 1
    assert compare.locator("[data-testid=first-difference]").count() == 2
    note = compare.locator("[data-testid=difference-note]").inner_text()
    assert "stage 0, operation 3: yours B0 from 2 to 4, expected B0 from 4 to 6" in note, note


RENDER = """async ([yours, expected]) => {
    const tl = await import(new URL('js/timeline.js', document.baseURI).href);
    const box = document.createElement('div');
    box.append(expected ? tl.renderComparison(yours, expected, 800) : tl.renderTimeline(yours, 800));
    document.body.append(box);
    const out = {text: box.innerText, stuck: box.querySelectorAll('[data-testid=stuck-row]').length,
                 rows: box.querySelectorAll('.tl-stage').length, marks: box.querySelectorAll('[data-testid=first-difference]').length,
                 label: [...box.querySelectorAll('svg')].map((s) => s.getAttribute('aria-label'))};
    box.remove();
    return out;
}"""


def test_a_timeline_stuck_before_anything_ran_draws_its_rows_and_what_they_wait_for(app: App) -> None:
    stuck = {"title": "your 1F1B", "total": 0, "stages": [[], []],
             "stuck": [{"row": 0, "waiting": "B0"}, {"row": 1, "waiting": "F0"}]}
    out = app.page.evaluate(RENDER, [stuck, None])
    assert "(empty timeline)" not in out["text"]
    assert out["rows"] == 2 and out["stuck"] == 2
    assert "stuck: waits for B0" in out["text"] and "stuck: waits for F0" in out["text"]
    assert "nothing ran" in out["label"][0] and "idle (bubble)" not in out["text"]
    # a timeline with nothing in it and nothing stuck is still called empty
    assert "(empty timeline)" in app.page.evaluate(RENDER, [{"total": 0, "stages": [[], []]}, None])["text"]


def test_an_expected_timeline_the_same_as_yours_says_the_failure_is_elsewhere(app: App) -> None:
    blocks = [[{"op": "F", "mb": 0, "start": 0, "end": 1}, {"op": "B", "mb": 0, "start": 1, "end": 3}]]
    same = app.page.evaluate(RENDER, [{"total": 3, "stages": blocks}, {"total": 3, "stages": blocks}])
    assert "the same as the expected one" in same["text"] and "timing differs" not in same["text"]
    assert same["marks"] == 0
    later = [[{"op": "F", "mb": 0, "start": 0, "end": 1}, {"op": "B", "mb": 0, "start": 2, "end": 4}]]
    moved = app.page.evaluate(RENDER, [{"total": 4, "stages": later}, {"total": 3, "stages": blocks}])
    assert "yours B0 from 2 to 4, expected B0 from 1 to 3" in moved["text"] and moved["marks"] == 2


def test_the_terminal_draws_yours_vs_expected_but_never_a_secret_tests_expected(tmp_path: Path) -> None:
    from tests.conftest import run_cli

    problems = tmp_path / "problems"
    shutil.copytree(ROOT / "tests/browser/fixtures/problems/bt-expected", problems / "bt-expected")
    proc = run_cli(str(tmp_path / "practice"), "--problems", str(problems), "-v")
    out = proc.stdout
    assert "expected 1F1B, p=2 m=3" in out and "first difference: stage 0, operation 3: yours F2, expected B0" in out
    assert "^^" in out
    assert "your SECRET-ORDER" in out  # the learner's own timeline of the secret test ...
    assert "expected SECRET-ORDER" not in out  # ... but never its expected one


# ------------------------------------------------------------------------------------------------
# 3. keyboard


def test_skip_to_the_editor_focuses_the_editor(app: App) -> None:
    app.select("pp-schedule")
    first = app.page.evaluate("""() => [...document.querySelectorAll('a[href], button, input, [tabindex]')]
        .find((el) => el.tabIndex >= 0 && !el.disabled).id""")
    assert first == "skip-link"  # the first Tab stop
    app.page.focus("#skip-link")
    app.page.keyboard.press("Enter")
    assert in_editor(app)
    assert app.page.evaluate("window.ppJudge.state.current.id") == "pp-schedule"


def test_run_and_stop_by_keyboard_keep_the_focus_and_esc_stops(app: App, problems_root: Path) -> None:
    app.select("bt-limits")
    app.set_code(_reference(problems_root, "bt-limits"))
    app.page.focus("[data-testid=run]")
    before = app.run_count()
    app.page.keyboard.press("Enter")
    app.wait_verdict(before + 1)
    assert active(app) == "run"
    app.set_code(LOOP)
    app.page.focus("[data-testid=run]")
    app.page.keyboard.press("Enter")
    app.page.wait_for_function("() => window.ppJudge.pool.current && window.ppJudge.pool.current.startedAt")
    assert active(app) == "run"  # still on Run while the tests run
    app.page.keyboard.press("Shift+Tab")  # Stop is just before Run
    assert active(app) == "stop"
    app.page.keyboard.press("Enter")
    assert app.wait_verdict(before + 2, timeout=10_000) == "stopped"
    assert active(app) == "run"  # Stop is disabled now: the focus moved to Run, not to the page
    app.page.focus("[data-testid=run]")
    app.page.keyboard.press("Enter")
    app.page.wait_for_function("() => window.ppJudge.pool.current && window.ppJudge.pool.current.startedAt")
    app.page.keyboard.press("Escape")
    assert app.wait_verdict(before + 3, timeout=10_000) == "stopped"
    assert "stopped" in app.result("bt-limits")["message"]
    app.wait_ready()


def test_the_drawer_takes_the_focus_and_closes_on_esc(app: App) -> None:
    app.select("pp-schedule")
    with sized(app, 1024):
        app.page.click("#toggle-nav")
        app.page.wait_for_function("() => document.activeElement.closest('#problem-nav') !== null")
        assert app.page.get_attribute("#toggle-nav", "aria-expanded") == "true"
        shots(app, "drawer", (1024,))
        app.page.keyboard.press("Escape")
        assert app.page.get_attribute("#toggle-nav", "aria-expanded") == "false"
        assert active(app) == "toggle-nav"


def test_the_way_out_of_the_editor_is_visible_and_described(app: App) -> None:
    app.select("pp-schedule")
    app.page.click("[data-testid=editor] .cm-content")
    help_text = app.page.inner_text("[data-testid=editor-help]")
    assert "Esc, then Tab" in help_text and app.page.is_visible("[data-testid=editor-help]")
    assert app.page.get_attribute("[data-testid=editor] .cm-content", "aria-describedby") == "editor-help"
    app.page.keyboard.press("Escape")
    app.page.keyboard.press("Tab")
    assert not in_editor(app)


# ------------------------------------------------------------------------------------------------
# 4. editor


def test_long_lines_wrap_under_their_indentation(app: App) -> None:
    app.select("pp-schedule")
    with sized(app, 1280):
        long = "def f():\n        result = " + " + ".join(f"value_{i}" for i in range(40)) + "\n"
        app.set_code(long)
        rects = app.page.evaluate("""() => {
            const line = [...document.querySelectorAll('[data-testid=editor] .cm-line')][1];
            const range = document.createRange();
            range.selectNodeContents(line);
            const rects = [...range.getClientRects()].filter((r) => r.width > 0);
            const lefts = [...new Set(rects.map((r) => Math.round(r.top)))].map(
                (top) => Math.min(...rects.filter((r) => Math.round(r.top) === top).map((r) => r.left)));
            return {lefts, lineLeft: line.getBoundingClientRect().left};
        }""")
        lefts = rects["lefts"]
        assert len(lefts) >= 2, "the long line did not wrap"
        first, second = lefts[0], lefts[1]
        # 8 spaces of indentation + 4 columns of hanging indent: the continuation is indented past the code
        assert second - first > 100, rects


# ------------------------------------------------------------------------------------------------
# 5. results pane


def test_the_results_pane_is_roomy_resizable_and_the_timeline_is_not_cut_off(app: App, problems_root: Path) -> None:
    app.select("pp-schedule")
    with sized(app, 1280, 800):
        height = app.page.evaluate("document.getElementById('results').getBoundingClientRect().height")
        assert height >= 330, height
        app.page.focus("[data-testid=splitter]")
        app.page.keyboard.press("ArrowUp")
        app.page.keyboard.press("ArrowUp")
        taller = app.page.evaluate("document.getElementById('results').getBoundingClientRect().height")
        assert taller > height + 40
        app.page.keyboard.press("ArrowDown")
        app.page.keyboard.press("ArrowDown")
    with sized(app, 1024, 768):
        app.set_code(GPIPE_ONLY)  # the 1F1B tests fail and draw their timelines
        assert app.run() == "failed"
        app.page.evaluate("""() => { for (const d of document.querySelectorAll('[data-testid=test-result] details'))
            d.open = true; }""")
        fit = app.page.evaluate("""() => {
            const pane = document.getElementById('results').getBoundingClientRect();
            return [...document.querySelectorAll('.timeline-scroll')].map((s) => {
                const r = s.getBoundingClientRect();
                return {inside: r.right <= pane.right + 1, scrolls: s.scrollWidth > s.clientWidth + 1,
                        focusable: s.tabIndex === 0};
            });
        }""")
        assert fit, "no timeline drawn"
        assert all(f["inside"] and f["focusable"] for f in fit), fit
        shots(app, "timeline-1024", (1024,), show=".timeline-scroll")


# ------------------------------------------------------------------------------------------------
# 6. accessibility (axe-core, in the browser)


def axe(app: App) -> list[dict]:
    app.page.add_script_tag(content=AXE.read_text(encoding="utf-8"))
    result = app.page.evaluate("""async () => {
        const r = await axe.run(document, {resultTypes: ['violations']});
        return r.violations.map((v) => ({id: v.id, impact: v.impact,
            nodes: v.nodes.slice(0, 5).map((n) => n.target.join(' ') + ': ' + (n.any[0] || n.all[0] || {}).message)}));
    }""")
    return [v for v in result if v["impact"] in ("serious", "critical")]


@pytest.mark.parametrize("colour", ["light", "dark"])
def test_no_serious_axe_violation_on_the_main_states(app: App, problems_root: Path, colour: str) -> None:
    app.page.emulate_media(color_scheme=colour)
    try:
        found: dict[str, list[dict]] = {}
        app.page.evaluate("location.hash = '#/'")
        app.page.wait_for_selector("#home:not([hidden])")
        found["home"] = axe(app)
        app.select("pp-schedule")
        found["statement"] = axe(app)
        app.page.click("#tab-tests")
        found["public tests"] = axe(app)
        app.page.click("#tab-statement")
        app.set_code(load_problem(problems_root / "pp-schedule").starter)
        assert app.run() == "failed"
        found["failed"] = axe(app)
        if colour == "dark":
            shots(app, "dark-failed")
        app.set_code(SCHEDULE_LOOP)  # pp-schedule's 10 s limit: still running while axe looks
        run = app.click_run()
        app.page.wait_for_function("() => window.ppJudge.pool.current && window.ppJudge.pool.current.startedAt")
        found["running"] = axe(app)
        if app.page.is_enabled("[data-testid=stop]"):
            app.page.click("[data-testid=stop]")
        app.wait_verdict(run, timeout=20_000)
        app.select("bt-limits")
        app.set_code(_reference(problems_root, "bt-limits"))
        assert app.run() == "passed"
        found["passed"] = axe(app)
        with sized(app, 390, 844):
            found["phone"] = axe(app)
        bad = {state: v for state, v in found.items() if v}
        assert not bad, json.dumps(bad, indent=1)
    finally:
        app.page.emulate_media(color_scheme="light")
        app.wait_ready()


def test_typing_announces_nothing(app: App) -> None:
    app.select("pp-schedule")
    app.page.click("[data-testid=editor] .cm-content")
    app.page.evaluate("""() => {
        window.__announced = [];
        const live = [...document.querySelectorAll('[aria-live], [role=status], [role=alert]')];
        const obs = new MutationObserver((records) => {
            for (const r of records) {
                const region = live.find((el) => el.contains(r.target));
                if (region && !region.closest('.cm-editor')) window.__announced.push(region.className || region.id);
            }
        });
        for (const el of live) obs.observe(el, {subtree: true, childList: true, characterData: true});
        window.__obs = obs;
    }""")
    app.page.keyboard.press("Control+End")
    app.page.keyboard.type("\n# six keystrokes", delay=20)
    app.page.wait_for_timeout(200)
    announced = app.page.evaluate("() => { window.__obs.disconnect(); return window.__announced; }")
    assert announced == [], announced


# ------------------------------------------------------------------------------------------------
# 7. first visit


def throttled_page(context):
    """A new page of ``context`` on a 10 Mbit/s line with 20 ms latency (Chromium's network emulation)."""
    page = context.new_page()
    cdp = context.new_cdp_session(page)
    cdp.send("Network.enable")
    cdp.send("Network.emulateNetworkConditions", {"offline": False, "latency": 20,
                                                  "downloadThroughput": 10e6 / 8, "uploadThroughput": 10e6 / 8})
    return page


def test_a_slow_first_visit_is_usable_at_once_and_shows_bytes_of_bytes(browser, site_dir: Path) -> None:
    served = Served(site_dir)
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    try:
        page = throttled_page(context)
        app = App(page, served.url)
        # not goto's "load" and its 30 s: on a machine busy with other tests the throttled load took longer
        # (seen once in a full run); the app says when it is usable
        page.goto(served.url + "#/pp-schedule", wait_until="commit")
        page.wait_for_selector("html[data-app-ready=true]", timeout=120_000)
        # the statement and the editor work while Python downloads
        assert page.get_attribute("[data-testid=engine-status]", "data-state") == "booting"
        assert "GPipe" in page.inner_text("#panel-statement")
        page.click("[data-testid=editor] .cm-content")
        page.keyboard.type("# typed while Python loads")
        assert "# typed while Python loads" in app.code()
        page.wait_for_selector("[data-testid=boot-progress]:not([hidden])", timeout=60_000)
        text = page.get_attribute("[data-testid=boot-progress]", "aria-valuetext")
        assert "of" in text and "MB" in text, text
        assert "Python is still loading" in page.inner_text("[data-testid=result-summary]")
        app.screenshot("first-visit-1280")
        app.wait_ready()
        assert page.is_hidden("[data-testid=boot-progress]")
        # numpy only for the problems that need it: pp-schedule does not
        assert page.evaluate("window.ppJudge.pool.primary.numpy") is None
    finally:
        context.close()
        served.stop()


def test_a_first_visit_fetches_the_pages_own_files_at_once_and_once_and_python_after_them(
        browser, site_dir: Path) -> None:
    """index.html preloads the page's modules, the problem manifest and KaTeX's common faces, so
    they do not wait for one another; each is fetched once (a preload the page does not use would
    be a second download); Python's downloads start once the manifest is in: held back, the
    manifest holds them back (the order is observed by cause, not by the requests' clocks, which
    a loaded machine skews)."""
    from judge.commands.site.build import MATH_FONTS, page_modules

    index = (site_dir / "index.html").read_text(encoding="utf-8")
    config = json.loads(re.search(r'id="site-config">(.*?)</script>', index, re.S).group(1))
    own = [*page_modules(site_dir), config["manifest"], *MATH_FONTS]
    served = Served(site_dir)
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    requests: list = []
    held: dict = {}  # the manifest and the largest page module, held back until released
    try:
        def hold(path: str):
            return lambda route: held.setdefault(path, route)

        for path in (config["manifest"], "vendor/codemirror.js"):
            context.route(served.url + path, hold(path))
        page = throttled_page(context)
        context.on("request", lambda request: requests.append(request))
        app = App(page, served.url)
        page.goto(served.url + "#/pp-schedule", wait_until="commit")  # its load waits for what is held
        for _ in range(600):  # the page asks for both at once; a loaded machine takes its time
            if len(held) == 2:
                break
            page.wait_for_timeout(100)
        assert config["manifest"] in held, "the manifest was not asked for while a page module was still loading"
        held["vendor/codemirror.js"].continue_()  # the page's code runs; its problem list is still held back
        page.wait_for_function("() => window.ppJudge && window.ppJudge.pool", timeout=60_000)
        page.wait_for_timeout(3000)  # what the page starts meanwhile, without its problem list
        python = [r.url for r in requests if "/pyodide/" in r.url or r.url.endswith(".wasm")]
        assert not python, f"Python's downloads started before the page had its problem list: {python}"
        held[config["manifest"]].continue_()
        page.wait_for_selector("html[data-app-ready=true]", timeout=60_000)
        app.wait_ready()

        def from_the_page(request) -> bool:  # not the service worker's precache, which starts at ready
            try:
                return request.frame is not None
            except Exception:  # noqa: BLE001 - Playwright raises for a service worker's request
                return False

        by_path = {path: [r for r in requests if r.url == served.url + path and from_the_page(r)] for path in own}
        assert {path: len(found) for path, found in by_path.items()} == dict.fromkeys(own, 1)
        assert any(r.url.endswith("/pyodide.asm.wasm") for r in requests), "Python's runtime was never requested"
    finally:
        context.close()
        served.stop()


def test_the_server_sends_precompressed_twins_to_browsers_that_accept_them(site_dir: Path) -> None:
    import urllib.request

    import brotli

    served = Served(site_dir)
    try:
        config = json.loads((site_dir / "index.html").read_text().split('id="site-config">', 1)[1]
                            .split("</script>", 1)[0])
        wasm = config["pyodide"]["indexURL"] + "pyodide.asm.wasm"
        request = urllib.request.Request(served.url + wasm, headers={"Accept-Encoding": "gzip, br"})
        with urllib.request.urlopen(request) as response:
            body = response.read()
            assert response.headers["Content-Encoding"] == "br"
            assert response.headers["Content-Type"] == "application/wasm"
            assert response.headers["Vary"] == "Accept-Encoding"
        assert brotli.decompress(body) == (site_dir / wasm).read_bytes()
        assert len(body) < 0.5 * (site_dir / wasm).stat().st_size
        with urllib.request.urlopen(served.url + wasm) as response:  # no Accept-Encoding: the file itself
            assert response.headers.get("Content-Encoding") is None
            assert response.read() == (site_dir / wasm).read_bytes()
    finally:
        served.stop()


# ------------------------------------------------------------------------------------------------
# 8. Try it


def test_try_it_calls_your_function_and_shows_the_value_and_prints(app: App) -> None:
    app.select("bt-expected")
    app.set_code(TRY_CODE)
    app.page.click("[data-testid=try-it] summary")
    app.page.fill("[data-testid=try-call]", "order(2, 3)")
    app.page.click("[data-testid=try-run]")
    app.page.wait_for_selector("[data-testid=try-output][data-status=ok]", timeout=60_000)
    out = app.page.text_content("[data-testid=try-output]")
    assert "Returned (list)" in out and "[[('F', 0), ('F', 1), ('F', 2)], [('F', 0), ('F', 1), ('F', 2)]]" in out
    assert "ordering 2 3" in out
    shots(app, "try-it", show="[data-testid=try-output]")
    app.page.fill("[data-testid=try-call]", "boom(0)")
    app.page.press("[data-testid=try-call]", "Enter")
    app.page.wait_for_selector("[data-testid=try-output][data-status=error]", timeout=60_000)
    assert "ZeroDivisionError" in app.page.text_content("[data-testid=try-output]")
    assert "order.py:" in app.page.text_content("[data-testid=try-output]")
    app.page.fill("[data-testid=try-call]", "__import__('os').getcwd()")
    app.page.click("[data-testid=try-run]")
    app.page.wait_for_function("() => document.querySelector('[data-testid=try-output]').innerText.includes("
                               "'Cannot call that: write a call of one of your functions, like f(1, 2)')")
    # the same limits and Stop as a run
    app.wait_ready()
    app.page.fill("[data-testid=try-call]", "forever()")
    app.page.click("[data-testid=try-run]")
    app.page.wait_for_function("() => window.ppJudge.pool.current && window.ppJudge.pool.current.startedAt")
    app.page.click("[data-testid=stop]")
    app.page.wait_for_function("() => document.querySelector('[data-testid=try-output]').innerText.includes('Stopped')",
                               timeout=10_000)
    app.wait_ready()


# ------------------------------------------------------------------------------------------------
# 9. smaller


def test_another_problems_page_cannot_stop_a_run_and_the_time_limit_shows_first(app: App) -> None:
    # a problem with a long limit (and no numpy to wait for): the steps below, on a loaded machine, took
    # longer than bt-limits' 4 s, and the run had ended by its time limit before Stop could be pressed
    app.select("pp-interleaved")
    assert app.page.inner_text("[data-testid=time-limit]") == "time limit 20 s"
    app.set_code("while True:  # never imported\n    pass\n")
    run = app.click_run()
    app.page.wait_for_function("() => window.ppJudge.pool.current && window.ppJudge.pool.current.startedAt")
    app.select("bt-limits")
    assert app.page.is_disabled("[data-testid=stop]")
    assert "are running" in app.page.inner_text("[data-testid=other-run]")
    app.page.keyboard.press("Escape")  # does not stop the other problem's run either
    assert app.page.evaluate("window.ppJudge.pool.current !== null")
    app.select("pp-interleaved")
    assert app.page.is_enabled("[data-testid=stop]")
    app.page.click("[data-testid=stop]")
    assert app.wait_verdict(run, timeout=10_000) == "stopped"
    app.wait_ready()


def test_tests_that_share_a_name_are_told_apart(app: App) -> None:
    names = app.page.evaluate("""async () => {
        const { renderResult } = await import('./js/results.js');
        const test = (id) => ({id, name: 'test single stage', file: 'tests/public/t.py', visibility: 'public',
                               outcome: 'passed', message: '', traceback: [], stdout: '', stderr: '', artifacts: []});
        const result = {problem: 'x', status: 'passed', passed: 2, total: 2, tests: [
            test('tests/public/t.py::test_single_stage[4-4]'), test("tests/public/t.py::test_single_stage['4'-4]"),
            {...test('tests/public/t.py::test_other'), name: 'test other'}]};
        const summary = document.createElement('div'), list = document.createElement('ol');
        renderResult(result, summary, list, {entry: 'x.py', goToLine: () => {}, width: () => 600});
        return [...list.querySelectorAll('.test-name')].map((n) => n.textContent);
    }""")
    assert names == ["test single stage [4-4]", "test single stage ['4'-4]", "test other"]


# ------------------------------------------------------------------------------------------------
# 10. after a hard stop

# Ignores SIGINT: no interrupt can end it, so Stop must end its engine.
STUBBORN = ('"""Ignores the interrupt."""\nimport signal\n\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\n\n\n'
            'def answer() -> int:\n    while True:\n        pass\n')
ENGINES = """() => { const p = window.ppJudge.pool; const e = (x) => x ? {id: x.id, state: x.state} : null;
    return {primary: e(p.primary), spare: e(p.spare), runs: p.runs}; }"""
# Records, from now on, what the results summary and the engine status said while a run waited.
WATCH_WAITING = """() => {
    window.__waiting = [];
    const summary = document.querySelector('[data-testid=result-summary]');
    const status = document.querySelector('[data-testid=engine-status]');
    const note = () => { const pool = window.ppJudge.pool, run = pool.current;
        const booting = Boolean(run && !run.engine && !(pool.primary && pool.primary.state === 'ready'));
        if (summary.dataset.waiting) window.__waiting.push({waiting: summary.dataset.waiting,
            summary: summary.innerText, status: status.innerText, state: status.dataset.state, booting}); };
    window.__waitingObserver = new MutationObserver(note);
    window.__waitingObserver.observe(document.body, {subtree: true, childList: true, characterData: true,
                                                     attributes: true});
}"""


def _hard_stop(app: App) -> None:
    app.set_code(STUBBORN)
    run = app.click_run()
    app.page.wait_for_function("() => window.ppJudge.pool.current && window.ppJudge.pool.current.startedAt")
    app.page.click("[data-testid=stop]")
    assert app.wait_verdict(run, timeout=10_000) == "stopped"
    assert "stopped" in app.result("bt-limits")["message"]


def test_after_a_hard_stop_the_ready_spare_runs_the_next_run_at_once(app: App, problems_root: Path) -> None:
    app.select("bt-limits")
    app.page.wait_for_function("""() => { const p = window.ppJudge.pool;
        return p.primary && p.primary.state === 'ready' && p.spare && p.spare.state === 'ready'; }""",
                               timeout=BOOT_TIMEOUT_MS)
    before = app.page.evaluate(ENGINES)
    _hard_stop(app)
    after = app.page.evaluate(ENGINES)
    # the stuck engine is gone and the spare that was ready took over: nothing boots in between
    assert after["primary"] == {"id": before["spare"]["id"], "state": "ready"}
    assert after["runs"][-1] == {"engine": before["primary"]["id"], "waited": False}
    app.set_code(_reference(problems_root, "bt-limits"))
    assert app.run() == "passed"
    assert app.page.evaluate(ENGINES)["runs"][-1] == {"engine": before["spare"]["id"], "waited": False}
    assert not app.errors, app.errors


# Stop, then Run again as soon as the page lets it (in the page, so no engine can boot in between).
STOP_THEN_RUN = """async (text) => {
    document.querySelector('[data-testid=stop]').click();
    while (window.ppJudge.state.running) await new Promise((resolve) => setTimeout(resolve, 0));
    const view = window.ppJudge.editor.view;
    view.dispatch({changes: {from: 0, to: view.state.doc.length, insert: text}});
    document.querySelector('[data-testid=run]').click();
}"""


def test_a_run_that_waits_for_a_fresh_engine_says_so(app_context, served: Served, problems_root: Path) -> None:
    page = app_context.new_page()
    try:
        lone = App(page, served.url + "?spare=0")  # no spare: after a hard stop the next run waits for a boot
        lone.open("bt-limits")
        lone.wait_ready()
        lone.set_code(STUBBORN)
        stuck = lone.click_run()
        lone.page.wait_for_function("() => window.ppJudge.pool.current && window.ppJudge.pool.current.startedAt")
        lone.page.evaluate(WATCH_WAITING)
        lone.page.evaluate(STOP_THEN_RUN, _reference(problems_root, "bt-limits"))
        assert lone.wait_verdict(stuck + 1) == "passed"
        assert lone.result("bt-limits")["status"] == "passed"
        seen = lone.page.evaluate("window.__waiting")
        assert seen, "the run never said it was waiting"
        assert {s["waiting"] for s in seen} == {"engine"}
        assert all("Starting a fresh Python" in s["summary"] and "then running the tests" in s["summary"]
                   for s in seen)
        # the status line says it too, for as long as the run waits for its engine to boot
        waiting = [s for s in seen if s["booting"]]
        assert waiting, seen
        assert [s for s in waiting if "Starting a fresh Python" not in s["status"] or s["state"] != "booting"] == []
        assert lone.page.get_attribute("[data-testid=result-summary]", "data-waiting") is None
        assert lone.page.evaluate(ENGINES)["runs"][-1]["waited"] is True
        assert not lone.errors, lone.errors
    finally:
        page.close()
