"""The page's language switch (issue 25): the statements in the language chosen, remembered, by
default the browser's; a problem without a translation shows the English statement under a note;
switching never touches the learner's code."""

from __future__ import annotations

from tests.browser.conftest import App, Served

MINE = '"""Mine."""\n\n\ndef num_warmup(p, m, v, rank):\n    return 42\n'
STATEMENT = "#panel-statement"


def _shown(app: App, lang: str) -> None:
    app.page.wait_for_selector(f"{STATEMENT}[data-lang='{lang}']", timeout=10_000)


def test_the_language_switch_keeps_the_code_is_remembered_and_defaults_to_the_browsers(
        browser, served: Served) -> None:
    context = browser.new_context(viewport={"width": 1366, "height": 800}, locale="zh-CN")
    try:
        app = App(context.new_page(), served.url)
        app.open("pp-interleaved")
        _shown(app, "zh")  # the browser's language, nothing chosen yet
        assert "交错" in app.page.inner_text(STATEMENT)
        assert app.page.get_attribute("html", "lang") == "zh"
        options = app.page.eval_on_selector_all("[data-testid=lang-select] option", "os => os.map(o => o.value)")
        assert options == ["en", "zh"]
        app.set_code(MINE)
        app.page.select_option("[data-testid=lang-select]", "en")
        _shown(app, "en")
        assert "Interleaved 1F1B" in app.page.inner_text(STATEMENT) and app.code() == MINE
        app.page.select_option("[data-testid=lang-select]", "zh")
        _shown(app, "zh")
        assert app.code() == MINE, "switching the language keeps the learner's code"
        app.select("bt-limits")  # a fixture problem, never translated: English, with a note
        _shown(app, "en")
        assert app.page.is_visible("[data-testid=statement-note]")
        app.select("pp-interleaved")
        app.page.select_option("[data-testid=lang-select]", "en")
        app.open("pp-interleaved")  # a reload: the choice is remembered over the browser's language
        _shown(app, "en")
        assert app.code() == MINE and not app.page.is_visible("[data-testid=statement-note]")
        assert not app.errors, app.errors
    finally:
        context.close()


def test_the_tests_messages_follow_the_pages_language(browser, served: Served, problems_root) -> None:
    """The worker hands the page's language to the tests (judge.lang): a problem whose tests give their
    hints in Chinese shows them in Chinese, and in English once the page is switched to English."""
    from judge.core.problem import load_problem
    from judge.core.wrong import wrong_source

    problem = load_problem(problems_root / "pp-interleaved")
    wrong = wrong_source(problem, problem.path / "wrong" / "warmup_one_short.diff")
    context = browser.new_context(viewport={"width": 1366, "height": 800}, locale="zh-CN")
    try:
        app = App(context.new_page(), served.url)
        app.open("pp-interleaved")
        _shown(app, "zh")
        app.set_code(wrong)
        assert app.run() == "failed"
        said = _messages(app.result("pp-interleaved"))
        assert "预热前向少了一个" in said and "one warm-up forward short" not in said, said[:2000]
        app.page.select_option("[data-testid=lang-select]", "en")
        _shown(app, "en")
        assert app.run() == "failed"
        said = _messages(app.result("pp-interleaved"))
        assert "one warm-up forward short" in said and "预热" not in said, said[:2000]
        assert not app.errors, app.errors
    finally:
        context.close()


def _messages(result: dict) -> str:
    return "\n".join(t.get("message", "") for t in result["tests"] if t["outcome"] != "passed")
