"""The page's language switch (issue 25): the statements and the page's own words in the language
chosen, remembered, by default the browser's; a problem without a translation shows the English
statement under a note; switching never touches the learner's code or the Result shown."""

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
        # the page's own words too, in Chinese from the start
        assert app.page.inner_text("[data-testid=run]").startswith("运行")
        assert app.page.inner_text("#tab-statement") == "题面" and app.page.title().endswith("流水线并行练习")
        options = app.page.eval_on_selector_all("[data-testid=lang-select] option", "os => os.map(o => o.value)")
        assert options == ["en", "zh"]
        # the problem's title is its Chinese statement's heading: in the list, above the statement, in the tab
        link_title = "[data-testid=problem-link][data-problem-id=pp-interleaved] .problem-title"
        assert app.page.inner_text(link_title) == "带虚拟 stage 的交错 1F1B"
        assert app.page.text_content("#problem-title") == "带虚拟 stage 的交错 1F1B"
        assert app.page.title().startswith("带虚拟 stage 的交错 1F1B · ")
        app.set_code(MINE)
        app.page.select_option("[data-testid=lang-select]", "en")
        _shown(app, "en")
        assert "Interleaved 1F1B" in app.page.inner_text(STATEMENT) and app.code() == MINE
        assert app.page.inner_text(link_title) == app.page.text_content("#problem-title") == \
            "Interleaved 1F1B with virtual stages"
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


# ------------------------------------------------------------------------------------------------
# the page's own words (the judge's catalogs, web/js/i18n.js)

def _words(app: App) -> dict[str, str]:
    """What the interface says: the Run button, the engine's status, the summary, the outcome words."""
    page = app.page
    return {
        "run": page.inner_text("[data-testid=run]").split("\n")[0].strip(),
        "status": page.inner_text("[data-testid=engine-status]").strip(),
        "summary": page.inner_text("[data-testid=result-summary]"),
        "outcomes": " ".join(page.locator("[data-testid=test-result] .visually-hidden").all_text_contents()),
        "skip": page.text_content("#skip-link").strip(),
        "tab": page.inner_text("#tab-tests"),
    }


def test_the_pages_words_switch_language_live_keep_the_code_and_the_result_and_are_remembered(
        browser, served: Served) -> None:
    from tests.browser.test_page import axe

    context = browser.new_context(viewport={"width": 1366, "height": 800}, locale="en-US")
    try:
        app = App(context.new_page(), served.url)
        app.open("bt-expected")
        app.wait_ready()
        assert app.page.get_attribute("html", "lang") == "en"
        mine = app.code() + "\n# mine\n"  # the starter: one of three public tests passes
        app.set_code(mine)
        assert app.run() == "failed"
        app.wait_ready()  # the next engine (one engine per run)
        english = _words(app)
        assert english["run"] == "Run" and english["status"] == "Python ready" and english["tab"] == "Public tests"
        assert "1 of 3 public tests passed" in english["summary"] and "1 / 5 points" in english["summary"]
        assert "failed" in english["outcomes"] and "passed" in english["outcomes"]
        run = app.run_count()

        app.page.select_option("[data-testid=lang-select]", "zh")
        app.page.wait_for_selector("html[lang=zh]")
        chinese = _words(app)
        assert chinese["run"] == "运行" and chinese["status"] == "Python 已就绪" and chinese["tab"] == "公开测试"
        assert "3 个公开测试中通过 1 个" in chinese["summary"] and "1 / 5 分" in chinese["summary"]
        assert "未通过" in chinese["summary"], "the verdict's badge"
        assert "未通过" in chinese["outcomes"] and "通过" in chinese["outcomes"] and "failed" not in chinese["outcomes"]
        assert app.page.get_attribute("[data-testid=run]", "title") == "运行公开测试（Ctrl+Enter）"
        assert app.page.inner_text("#save-state") == "已保存在此浏览器中"
        assert app.page.inner_text("[data-testid=time-limit]") == "时间限制 6 秒"
        assert "第一处不同" in app.page.inner_text("[data-testid=difference-note]")
        assert app.code() == mine and app.run_count() == run, "the same code and the same Result, in Chinese"
        assert app.page.get_attribute("[data-testid=result-summary]", "data-status") == "failed"
        assert app.page.evaluate("window.ppJudge.i18n.missing()") == [], "every word shown has a translation"
        violations = axe(app)
        assert violations == [], violations

        app.page.select_option("[data-testid=lang-select]", "en")
        app.page.wait_for_selector("html[lang=en]")
        assert _words(app) == english, "and back, word for word"
        assert app.code() == mine

        app.page.select_option("[data-testid=lang-select]", "zh")
        app.page.reload()  # the choice is remembered, the result kept
        app.page.wait_for_selector("html[data-app-ready=true]")
        assert app.page.get_attribute("html", "lang") == "zh"
        assert _words(app)["run"] == "运行" and app.code() == mine
        assert "你上一次运行的结果" in app.page.inner_text("[data-testid=kept-result]")
        assert "3 个公开测试中通过 1 个" in app.page.inner_text("[data-testid=result-summary]")
        app.wait_ready()
        assert app.page.inner_text("[data-testid=engine-status]").strip() == "Python 已就绪"
        assert app.page.evaluate("window.ppJudge.i18n.missing()") == []
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


def test_try_its_refusals_are_in_the_pages_language(browser, served: Served) -> None:
    context = browser.new_context(viewport={"width": 1366, "height": 800}, locale="en-US")
    output = "[data-testid=try-output]"
    try:
        app = App(context.new_page(), served.url)
        app.open("bt-expected")
        app.wait_ready()
        app.page.click("[data-testid=try-it] summary")
        for call, english, chinese in [
                ("order(p, 3)", "Cannot call that: type the arguments as values", "无法这样调用：参数请写成值"),
                ("order(*[2, 3])", "Cannot call that: * and ** arguments are not supported here", "这里不支持 * 和 ** 参数"),
                ("order(2,", "Cannot call that: that is not Python (", "这不是合法的 Python（")]:
            app.page.select_option("[data-testid=lang-select]", "en")
            app.page.wait_for_selector("html[lang=en]")
            app.page.fill("[data-testid=try-call]", call)
            app.page.click("[data-testid=try-run]")
            app.page.wait_for_function(f"() => document.querySelector('{output}').innerText.includes({english!r})",
                                       timeout=60_000)
            app.page.select_option("[data-testid=lang-select]", "zh")  # the answer shown again, in Chinese
            app.page.wait_for_function(f"() => document.querySelector('{output}').innerText.includes({chinese!r})")
            assert "Cannot call" not in app.page.inner_text(output)
            assert app.page.evaluate("window.ppJudge.i18n.missing()") == []
            app.wait_ready()
    finally:
        context.close()
