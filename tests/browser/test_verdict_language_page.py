"""The page's verdict in Chinese (issue 33): with the page in Chinese, a failing solution of every
problem shows no English objective title, partial-credit note or test title (the native outputs:
tests/test_verdict_language.py, whose English detectors this test shares)."""

from __future__ import annotations

from judge.core.problem import load_problem
from tests.browser.conftest import App, Served, real_problem_ids
from tests.test_verdict_language import ENGLISH_NOTES, english_run, english_titles, failing_solution


def test_the_pages_verdict_is_chinese_for_a_failing_solution_of_every_problem(
        browser, served: Served, problems_root) -> None:
    context = browser.new_context(viewport={"width": 1366, "height": 800}, locale="zh-CN")
    gated = 0
    try:
        app = App(context.new_page(), served.url)
        app.open()
        for ident in real_problem_ids():
            problem = load_problem(problems_root / ident)
            app.select(ident)  # waits until the page shows it (a hash change alone does not)
            app.page.wait_for_selector("#panel-statement[data-lang='zh']", timeout=10_000)
            app.set_code(failing_solution(problem))
            if _verdict(app) == "passed":  # a mistake only the secret tests see (pp-quiz): the starter fails
                app.set_code(problem.starter)
                assert _verdict(app) == "failed", ident
            texts = [app.page.inner_text("[data-testid=result-summary]"),
                     *app.page.locator("[data-testid=test-result] .test-name").all_text_contents()]
            whole = "\n".join(texts)
            assert app.page.locator("[data-testid=objectives] .objective-title").count() > 0, (ident, texts[0])
            english = [t for t in [*english_titles(problem), *ENGLISH_NOTES] if t in whole]
            assert not english, f"{ident}: English on the Chinese page: {english[:5]}"
            parts = [*app.page.locator("[data-testid=objectives] .objective-title").all_text_contents(),
                     *app.page.locator("[data-testid=objectives] .objective-note").all_text_contents(),
                     *app.page.locator("[data-testid=test-result] .test-name").all_text_contents()]
            runs = [(text, english_run(text)) for text in parts if english_run(text)]
            assert not runs, f"{ident}: {runs[:5]}"
            gated += app.page.locator("[data-testid=objectives] [data-state=gated]").count()
        assert gated, "some objective is right and waits for another (its note names what it waits for)"
        assert not app.errors, app.errors
    finally:
        context.close()


def _verdict(app: App, tries: int = 3) -> str:
    """The page's verdict of the code in the editor, run again when a busy machine timed it out."""
    for _ in range(tries):
        verdict = app.run()
        app.wait_ready()
        if verdict != "timeout":
            break
    return verdict
