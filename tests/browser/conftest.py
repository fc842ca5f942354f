"""Fixtures for the web app's end-to-end tests: one `self` site build, one server, one browser.

The site is built once per session from ``problems/`` plus the small fixture problems under
``tests/browser/fixtures/problems``: ``bt-limits`` (a 4 s time limit and an extra package, so the
time-limit, Stop and micropip paths are quick to exercise) and ``bt-expected`` (public tests that
record the expected timeline beside yours, a stuck schedule, objectives, a secret test). It is served by :func:`judge.commands.site.serve.make_server`
on 127.0.0.1 with the real COOP/COEP headers, and driven by Debian's Chromium through Playwright.

Set ``PP_JUDGE_SCREENSHOTS=<folder>`` to save screenshots of what the tests see.
"""

from __future__ import annotations

import os
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import PROBLEMS, ROOT

collect_ignore = ["fixtures"]  # the fixture problem's tests run inside the judge, not here

CHROMIUM = Path("/usr/lib/chromium/chromium")
FIXTURE_PROBLEMS = ROOT / "tests" / "browser" / "fixtures" / "problems"
BOOT_TIMEOUT_MS = 180_000  # a cold Pyodide boot on a loaded 2-core machine, with a wide margin
RUN_TIMEOUT_MS = 120_000


def real_problem_ids() -> list[str]:
    return sorted(p.name for p in PROBLEMS.iterdir() if (p / "problem.toml").is_file())


def _need_browser() -> None:
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        _missing("Python Playwright is not installed (pip install -e '.[test]')")
    if not CHROMIUM.exists():
        _missing(f"{CHROMIUM} is missing (apt-get install chromium)")


def _missing(why: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"browser tests cannot run: {why}")
    pytest.skip(f"browser tests skipped: {why}")


@pytest.fixture(scope="session")
def problems_root(tmp_path_factory) -> Path:
    """problems/ plus the browser-test fixture problem, in one folder."""
    root = tmp_path_factory.mktemp("site-problems")
    for source in (PROBLEMS, FIXTURE_PROBLEMS):
        for folder in sorted(source.iterdir()):
            if (folder / "problem.toml").is_file():
                shutil.copytree(folder, root / folder.name, ignore=shutil.ignore_patterns("__pycache__"))
    return root


@pytest.fixture(scope="session")
def site_dir(tmp_path_factory, problems_root) -> Path:
    from judge.commands.site.build import build_site

    site = tmp_path_factory.mktemp("site") / "site"
    build_site(site, pyodide="self", problems_dir=problems_root)
    return site


class Served:
    """A running server for a site folder (background thread)."""

    def __init__(self, site: Path) -> None:
        from judge.commands.site.serve import make_server, server_url

        self.server = make_server(site, "127.0.0.1", 0)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.url = server_url(self.server)

    def stop(self) -> None:
        if self.thread.is_alive():
            self.server.shutdown()
            self.server.server_close()


@pytest.fixture(scope="session")
def served(site_dir) -> Iterator[Served]:
    s = Served(site_dir)
    yield s
    s.stop()


@pytest.fixture(scope="session")
def browser() -> Iterator[object]:
    _need_browser()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=str(CHROMIUM),
                               args=["--no-sandbox", "--headless=new", "--disable-gpu", "--disable-dev-shm-usage"])
        yield b
        b.close()


class App:
    """A page of the web app, with helpers that go through the page's UI and test hooks."""

    def __init__(self, page, base_url: str) -> None:
        self.page = page
        self.base_url = base_url
        self.errors: list[str] = []
        self.accept_dialogs = True  # confirm() answers; dialogs_seen records their messages
        self.dialogs_seen: list[str] = []
        page.on("pageerror", lambda exc: self.errors.append(str(exc)))
        page.on("dialog", self._on_dialog)

    def _on_dialog(self, dialog) -> None:
        self.dialogs_seen.append(dialog.message)
        if self.accept_dialogs:
            dialog.accept()
        else:
            dialog.dismiss()

    def open(self, problem_id: str = "") -> None:
        self.page.goto(self.base_url + (f"#/{problem_id}" if problem_id else ""))
        self.page.wait_for_selector("html[data-app-ready=true]", timeout=60_000)

    def wait_ready(self) -> None:
        self.page.wait_for_selector("[data-testid=engine-status][data-state=ready]", timeout=BOOT_TIMEOUT_MS)

    def select(self, problem_id: str) -> None:
        link = f"[data-testid=problem-link][data-problem-id='{problem_id}']"
        if self.page.is_visible(link):
            self.page.click(link)
        else:  # the problem list is a closed drawer on narrow screens
            self.page.evaluate("id => { location.hash = '#/' + id; }", problem_id)
        self.page.wait_for_function("id => window.ppJudge.state.current && window.ppJudge.state.current.id === id",
                                    arg=problem_id)

    def code(self) -> str:
        return self.page.evaluate("window.ppJudge.editor.getText()")

    def set_code(self, text: str) -> None:
        """Replace the editor's text through a normal edit transaction (saved like typing)."""
        self.page.evaluate("""text => {
            const view = window.ppJudge.editor.view;
            view.dispatch({changes: {from: 0, to: view.state.doc.length, insert: text}});
        }""", text)

    def run_count(self) -> int:
        return int(self.page.get_attribute("[data-testid=result-summary]", "data-run"))

    def click_run(self) -> int:
        before = self.run_count()
        if not self.page.is_visible("[data-testid=run]") and self.page.is_visible("#tab-code"):
            self.page.click("#tab-code")  # phones: the editor is a tab of its own
        self.page.click("[data-testid=run]")
        self.page.wait_for_selector(f"[data-testid=result-summary][data-run='{before + 1}']", timeout=10_000)
        return before + 1

    def wait_verdict(self, run: int, timeout: int = RUN_TIMEOUT_MS) -> str:
        self.page.wait_for_selector(
            f"[data-testid=result-summary][data-run='{run}']:not([data-status=running]):not([data-status=''])",
            timeout=timeout)
        return self.page.get_attribute("[data-testid=result-summary]", "data-status")

    def run(self, timeout: int = RUN_TIMEOUT_MS) -> str:
        return self.wait_verdict(self.click_run(), timeout)

    def result(self, problem_id: str) -> dict:
        """The Result (JSON object) the page shows for a problem."""
        return self.page.evaluate("id => window.ppJudge.state.lastResults.get(id)", problem_id)

    def outcomes_in_page(self) -> dict[str, str]:
        """Test id -> outcome, as the results panel shows them."""
        return {el.get_attribute("data-test-id"): el.get_attribute("data-outcome")
                for el in self.page.query_selector_all("[data-testid=test-result]")}

    def screenshot(self, name: str) -> None:
        folder = os.environ.get("PP_JUDGE_SCREENSHOTS")
        if folder:
            Path(folder).mkdir(parents=True, exist_ok=True)
            self.page.screenshot(path=str(Path(folder) / f"{name}.png"), full_page=False)


@pytest.fixture(scope="session")
def app_context(browser, served) -> Iterator[object]:
    context = browser.new_context(viewport={"width": 1366, "height": 800}, accept_downloads=True)
    yield context
    context.close()


@pytest.fixture(scope="session")
def app(app_context, served) -> App:
    """One page for the whole session: Python boots once and the tests reuse it."""
    page = app_context.new_page()
    a = App(page, served.url)
    a.open()
    a.wait_ready()
    return a
