"""The learner's page, third pass (issue 35), besides the console (test_console.py): Stop shows as
stopped, an empty results area says what Run does, objectives that are right look right and a gated
one says what it waits for, the page's background work waits for a run and a first run that times
out while the page warms up is tried once more, the phone loop (sticky Run/Stop, back to the code,
timeline scroll cues, a top bar that fits, readable test titles), the progress overview and the text
size, hints on demand; in English and Chinese, with axe-core. No timing is asserted."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from tests.browser.conftest import BOOT_TIMEOUT_MS, App, Served
from tests.browser.test_page import LOOP, STUCK, axe, shots, sized

SUMMARY = "[data-testid=result-summary]"
LANGS = ["en", "zh"]
WORDS = {
    "en": {"stopped": "stopped", "right": "right", "waits": "it counts in full once", "empty": "Run saves your code",
           "progress": "solved", "stronger": "stronger hint"},
    "zh": {"stopped": "已停止", "right": "正确", "waits": "才全部计分", "empty": "运行会保存你的代码",
           "progress": "已解决", "stronger": "更明确的提示"},
}


@contextmanager
def language(app: App, lang: str) -> Iterator[None]:
    app.page.select_option("[data-testid=lang-select]", lang)
    try:
        yield
    finally:
        app.page.select_option("[data-testid=lang-select]", "en")


def no_axe_violation(app: App) -> None:
    found = axe(app)
    assert not found, json.dumps(found, indent=1)


@pytest.mark.parametrize("lang", LANGS)
def test_stop_shows_as_stopped_and_an_empty_results_area_says_what_run_does(app: App, lang: str) -> None:
    app.wait_ready()
    with language(app, lang):
        # a problem without a kept verdict: the results area says what Run will do
        app.page.evaluate("""() => { localStorage.removeItem('pp-judge:v1:result:bt-limits');
                                     window.ppJudge.state.lastResults.delete('bt-limits'); }""")
        app.select("pp-schedule")
        app.select("bt-limits")
        empty = app.page.inner_text("[data-testid=results-empty]")
        assert WORDS[lang]["empty"] in empty and "tests/public/" in empty
        no_axe_violation(app)
        shots(app, f"results-empty-{lang}", show=SUMMARY)
        app.set_code(LOOP)
        run = app.click_run()
        app.page.wait_for_function("() => window.ppJudge.pool.current && window.ppJudge.pool.current.startedAt")
        app.page.click("[data-testid=stop]")
        assert app.wait_verdict(run, timeout=10_000) == "stopped"
        assert app.page.text_content(f"{SUMMARY} .badge") == WORDS[lang]["stopped"]
        assert app.page.query_selector(f"{SUMMARY} .badge-error") is None
        no_axe_violation(app)
        shots(app, f"stopped-{lang}", show=SUMMARY)
        app.wait_ready()
        assert app.page.evaluate("window.ppJudge.i18n.missing()") == []


RESULT = {"problem": "x", "status": "failed", "passed": 4, "total": 6, "points": 4.5, "max_points": 10,
          "objectives": [
              {"id": "order", "title": "GPipe order", "points": 4, "max_points": 4, "passed": 2, "total": 2},
              {"id": "onefb", "title": "1F1B order", "points": 0.5, "max_points": 4, "passed": 2, "total": 2,
               "requires": ["grads"], "note": "counts as far as Gradients is right: 12% of it"},
              {"id": "grads", "title": "Gradients", "points": 0, "max_points": 2, "passed": 0, "total": 2,
               "note": "expected 2.0, got 0.0"}],
          "tests": [{"id": f"tests/public/t.py::test_{i}", "name": name, "file": "tests/public/t.py",
                     "visibility": "public", "outcome": outcome, "message": "", "traceback": [], "stdout": "",
                     "stderr": "", "artifacts": []}
                    for i, (name, outcome) in enumerate([
                        ("GPipe runs all forwards before the backwards", "passed"), ("test_gpipe_two", "passed"),
                        ("1F1B keeps at most p micro-batches in flight", "passed"), ("test_onefb", "passed"),
                        ("Gradients match a single-device run", "failed"), ("test_grads", "failed")])]}


@pytest.mark.parametrize("lang", LANGS)
def test_right_objectives_look_right_and_a_gated_one_says_what_it_waits_for(app: App, lang: str) -> None:
    app.wait_ready()
    with language(app, lang):
        app.select("bt-expected")
        states = app.page.evaluate("""async (result) => {
            const { renderResult } = await import('./js/results.js');
            const summary = document.querySelector('[data-testid=result-summary]');
            const list = document.querySelector('#test-list');
            renderResult(result, summary, list, {entry: 'x.py', goToLine: () => {}, width: () => 600});
            return [...summary.querySelectorAll('[data-objective]')].map((o) => ({
                id: o.dataset.objective, state: o.dataset.state,
                mark: o.querySelector('.objective-mark').textContent, text: o.innerText}));
        }""", RESULT)
        by = {s["id"]: s for s in states}
        assert by["order"]["state"] == "full" and by["order"]["mark"] == "✓"
        assert by["onefb"]["state"] == "gated" and by["onefb"]["mark"] == "✓"
        assert WORDS[lang]["right"] in by["onefb"]["text"] and WORDS[lang]["waits"] in by["onefb"]["text"]
        assert "Gradients" in by["onefb"]["text"] and "12%" not in by["onefb"]["text"]
        assert by["grads"]["state"] == "short" and by["grads"]["mark"] == "✗" and "expected 2.0" in by["grads"]["text"]
        # titles taken from docstrings read as prose, not as code
        fonts = app.page.evaluate("""() => [...document.querySelectorAll('.test-name')].map((n) =>
            [n.textContent, getComputedStyle(n).fontFamily])""")
        for name, font in fonts:
            assert ("mono" in font.lower()) == (" " not in name), (name, font)
        no_axe_violation(app)
        shots(app, f"objectives-{lang}", show="[data-testid=objectives]")
        assert app.page.evaluate("window.ppJudge.i18n.missing()") == []
        app.select("pp-schedule")  # the page draws its own result again


@pytest.mark.parametrize("lang", LANGS)
def test_the_phone_loop_keeps_run_and_stop_in_reach(app: App, lang: str) -> None:
    app.wait_ready()
    app.select("bt-expected")
    with language(app, lang), sized(app, 390, 844):
        app.page.click("#tab-code")
        # the top bar fits: its title shows and nothing (Import) is cut off
        bar = app.page.evaluate("""() => { const t = document.querySelector('.topbar');
            const r = (s) => document.querySelector(s).getBoundingClientRect();
            return {overflow: t.scrollWidth - t.clientWidth, brand: r('.brand').width,
                    importRight: r('label[for=import-zip-input]').right, width: innerWidth}; }""")
        assert bar["overflow"] <= 0 and bar["brand"] >= 60 and bar["importRight"] <= bar["width"], bar
        app.set_code(STUCK)
        assert app.run() == "failed"
        # scrolled down to the end of the results, Run and Stop are still on screen
        app.page.evaluate("window.scrollTo(0, document.body.scrollHeight)")
        app.page.wait_for_timeout(200)
        for button in ("run", "stop", "back-to-code"):
            box = app.page.locator(f"[data-testid={button}]").bounding_box()
            assert box and box["y"] >= 0 and box["y"] + box["height"] <= 844, (button, box)
        # a timeline wider than the phone says that it scrolls
        cue = app.page.locator("[data-testid=timeline-cue]:visible").first
        cue.scroll_into_view_if_needed()
        assert cue.is_visible()
        assert app.page.locator(".timeline-frame[data-more]").count() >= 1
        no_axe_violation(app)
        shots(app, f"phone-results-{lang}", widths=(390,), show="[data-testid=timeline-cue]")
        if app.page.is_visible("#tab-code"):
            app.page.click("#tab-code")  # (shots() leaves the phone on the statement)
        app.page.evaluate("window.scrollTo(0, document.body.scrollHeight)")
        # one tap back to the code
        app.page.click("[data-testid=back-to-code]")
        app.page.wait_for_function("() => { const r = document.querySelector('[data-testid=editor]').getBoundingClientRect();"
                                   " return r.top < innerHeight && r.bottom > 0; }")
        assert app.page.evaluate("() => !!document.activeElement.closest('[data-testid=editor]')")
        shots(app, f"phone-code-{lang}", widths=(390,))
        assert app.page.evaluate("window.ppJudge.i18n.missing()") == []
        app.page.click("#tab-statement")


@pytest.mark.parametrize("lang", LANGS)
def test_the_progress_overview_and_the_text_size(app: App, lang: str) -> None:
    app.wait_ready()
    with language(app, lang):
        app.page.evaluate("location.hash = '#/'")
        app.page.wait_for_selector("#home:not([hidden])")
        counts = app.page.evaluate("""() => { const s = {passed: 0, failing: 0};
            for (const p of window.ppJudge.state.problems) {
                const v = localStorage.getItem('pp-judge:v1:status:' + p.id); if (v in s) s[v] += 1; }
            return s; }""")
        overview = app.page.locator("[data-testid=progress-overview]")
        assert overview.get_attribute("data-solved") == str(counts["passed"])
        assert overview.get_attribute("data-tried") == str(counts["failing"])
        assert WORDS[lang]["progress"] in overview.inner_text()
        assert app.page.get_attribute("meta[name=description]", "content")
        no_axe_violation(app)
        shots(app, f"progress-{lang}", show="[data-testid=progress-overview]")
        app.select("bt-expected")
        if not app.page.is_visible("[data-testid=font-larger]"):
            app.page.click("#toggle-nav")
        app.page.click("[data-testid=font-larger]")
        assert app.page.evaluate("document.documentElement.dataset.textScale") == "1.15"
        size = app.page.evaluate("getComputedStyle(document.querySelector('.editor .cm-scroller')).fontSize")
        assert size.startswith("16.1")
        app.page.click("[data-testid=font-reset]")
        assert app.page.evaluate("document.documentElement.dataset.textScale") == "1"
        assert app.page.evaluate("window.ppJudge.i18n.missing()") == []


def test_background_work_waits_for_a_run_and_a_first_timeout_while_warming_up_is_tried_again(
        browser, served: Served) -> None:
    """A first visit: Run pressed as soon as Python is ready, on code that never ends. While it runs
    the offline copy does not run (not started, or paused) and no spare engine boots beside it; its time-out, while the page
    was still warming up, is tried once more and says so; afterwards the background work goes on."""
    context = browser.new_context(viewport={"width": 1366, "height": 800})
    try:
        app = App(context.new_page(), served.url)
        app.open("bt-limits")
        app.set_code(LOOP)
        app.wait_ready()
        run = app.click_run()
        app.page.wait_for_function("() => window.ppJudge.pool.current && window.ppJudge.pool.current.startedAt")
        during = app.page.evaluate("window.ppJudge.background()")
        # the offline copy either has not started or, started before Run on a loaded machine, is paused
        assert during["running"] and during["precache"] in ("waiting", "paused") and \
            during["spare"] in ("none", "paused"), during
        app.page.wait_for_selector(f"{SUMMARY}[data-retry=warming]", timeout=30_000)
        assert "still starting up" in app.page.inner_text(SUMMARY)
        during = app.page.evaluate("window.ppJudge.background()")
        assert during["precache"] in ("waiting", "paused") and during["spare"] in ("none", "paused"), during
        assert app.wait_verdict(run, timeout=BOOT_TIMEOUT_MS) == "timeout"
        assert "Tried twice" in app.page.inner_text(SUMMARY)
        # the background work goes on once the run is over
        app.page.wait_for_selector("html[data-offline-ready=true]", timeout=BOOT_TIMEOUT_MS)
        app.page.wait_for_function("() => window.ppJudge.pool.spare && window.ppJudge.pool.spare.state === 'ready'",
                                   timeout=BOOT_TIMEOUT_MS)
        # a later time-out is not tried again
        run = app.click_run()
        assert app.wait_verdict(run, timeout=60_000) == "timeout"
        assert "Tried twice" not in app.page.inner_text(SUMMARY)
        assert not app.errors, app.errors
    finally:
        context.close()


STATEMENT_WITH_HINTS = ("<h1>T</h1><p>Do it.</p><h2>Hint</h2><p>first hint</p><h2>Hint 2</h2><p>second hint body</p>"
                        "<h2>Points</h2><p>after the hints</p>")


@pytest.mark.parametrize("lang", LANGS)
def test_hints_on_demand_show_one_at_a_time(app: App, lang: str) -> None:
    """A statement's sections headed "Hint…" are folded away; a button shows the first, then offers a
    stronger one."""
    app.wait_ready()
    with language(app, lang):
        app.select("bt-expected")
        app.page.evaluate("""async (html) => {
            const { renderStatement } = await import('./js/statement.js');
            renderStatement(document.querySelector('#panel-statement'), html, 'hint-test-' + document.documentElement.lang);
        }""", STATEMENT_WITH_HINTS)
        statement = "#panel-statement"
        assert "after the hints" in app.page.inner_text(statement)
        assert "first hint" not in app.page.inner_text(statement)
        button = app.page.locator("[data-testid=hint-button]")
        assert ("1" in button.inner_text()) and ("2" in button.inner_text())
        button.click()
        assert "first hint" in app.page.inner_text(statement) and "second hint body" not in app.page.inner_text(statement)
        assert (WORDS[lang]["stronger"]) in button.inner_text()
        no_axe_violation(app)
        shots(app, f"hints-{lang}", show="[data-testid=hint-button]")
        button.click()
        assert "second hint body" in app.page.inner_text(statement)
        assert app.page.locator("[data-testid=hint-button]").count() == 0
        assert app.page.evaluate("window.ppJudge.i18n.missing()") == []
        app.select("pp-schedule")


def test_a_bundled_problems_hints_fold_in_english_and_chinese(app: App) -> None:
    """pp-schedule's own statement (README.md's "## Hint 1", "## Hint 2" and README.zh.md's "## 提示 1",
    "## 提示 2") is folded: the second hint only after the first, and how many were shown is kept when
    the language changes. (No other test opens these hints, so none has been shown yet.)"""
    app.wait_ready()
    statement, button, hints = "#panel-statement", "[data-testid=hint-button]", "[data-testid=hint]"
    app.page.select_option("[data-testid=lang-select]", "en")
    app.select("pp-schedule")
    assert app.page.locator(hints).count() == 2
    assert "Hint 1" not in app.page.inner_text(statement) and "What the tests check" in app.page.inner_text(statement)
    assert app.page.inner_text(button) == "Show a hint (1 of 2)"
    app.page.click(button)
    shown = app.page.inner_text(statement)
    assert "Hint 1" in shown and "Hint 2" not in shown
    assert app.page.inner_text(button) == "Show a stronger hint (2 of 2)"
    shots(app, "hints-bundled-en", show="[data-testid=hint]")
    with language(app, "zh"):
        assert app.page.locator(hints).count() == 2
        shown = app.page.inner_text(statement)
        assert "提示 1" in shown and "提示 2" not in shown, "one hint shown, in Chinese too"
        assert app.page.inner_text(button) == "显示更明确的提示（第 2 条，共 2 条）"
        shots(app, "hints-bundled-zh", show="[data-testid=hint]")
        app.page.click(button)
        assert "提示 2" in app.page.inner_text(statement)
        assert app.page.locator(button).count() == 0
    assert "Hint 2" in app.page.inner_text(statement) and app.page.locator(button).count() == 0
    assert not app.errors, app.errors


def _verdict(app: App, problem_id: str) -> dict[str, object]:
    result = app.result(problem_id)
    return {"status": result["status"], "points": result["points"],
            "tests": [(t["id"], t["outcome"], t["message"]) for t in result["tests"]]}


def test_the_next_engines_adopt_the_tests_the_first_compiled_and_judge_the_same(app: App, problems_root) -> None:
    """One engine per run: each run's engine is new. An engine that compiled the problems' tests before
    any learner code ran in it hands that code to the page, and the next engines adopt it instead of
    compiling the same tests again; they judge exactly as an engine that compiled for itself."""
    from tests.browser.test_page import _reference, _wrong

    app.wait_ready()
    app.select("pp-schedule")
    wrong = _wrong(problems_root, "pp-schedule", "warmup_off_by_one")
    app.set_code(wrong)
    assert app.run() == "failed"
    compiled_by_itself = _verdict(app, "pp-schedule")
    adopting = """() => { const e = window.ppJudge.pool.primary;
        return e && e.state === 'ready' && e.preparedAll && e.trace.some(t => t.type === 'adopted') }"""
    for _ in range(3):  # the engine after the next one at most: the next one may have been prepared already
        if app.page.evaluate(adopting):
            break
        assert app.run() == "failed"
        app.page.wait_for_function("() => { const p = window.ppJudge.pool; return p.primary && p.primary.preparedAll }",
                                   timeout=BOOT_TIMEOUT_MS)
    app.page.wait_for_function(adopting, timeout=BOOT_TIMEOUT_MS)
    adopted = app.page.evaluate("""() => Number(window.ppJudge.pool.primary.trace.find(t => t.type === 'adopted').text)""")
    assert adopted > 0
    assert app.page.evaluate("() => window.ppJudge.pool.compiled instanceof Uint8Array "
                             "&& window.ppJudge.pool.compiled.length > 0")
    engine = app.page.evaluate("() => window.ppJudge.pool.primary.id")
    assert app.run() == "failed"
    assert app.page.evaluate("() => window.ppJudge.pool.runs.at(-1).engine") == engine  # the adopting engine ran it
    assert _verdict(app, "pp-schedule") == compiled_by_itself
    app.set_code(_reference(problems_root, "pp-schedule"))
    assert app.run() == "passed"
