"""After a restore the standard library downloads last: Run is usable without it, in real Chromium.

The memory image holds every module the judge's runs import, so the page restores Python without
the standard library's zip (2.4 MB) and writes it in once it has downloaded (js/boot.mjs,
judge/engines/late_stdlib.py) on a first visit (later engines restore the image the worker kept, and
the standard library from the browser's caches, as before). Here its request is held back: every
problem without numpy is judged meanwhile, a Try it call answers, and a run whose code imports a
standard module the image lacks
waits for the zip (a static import) or is made again in the next engine once that one has it (a
dynamic one).
"""

from __future__ import annotations

import contextlib
from pathlib import Path

from judge.core.problem import load_problem
from tests.browser.conftest import RUN_TIMEOUT_MS, App, Served, real_problem_ids

STDLIB = "**/python_stdlib.zip"
WAITING = "Waiting for Python's standard library"


class Held:
    """The standard library's requests, held until released (then every request goes through)."""

    def __init__(self) -> None:
        self.routes: list = []
        self.released = False

    def __call__(self, route) -> None:
        if self.released:
            route.continue_()
        else:
            self.routes.append(route)

    def release(self) -> None:
        self.released = True
        for route in self.routes:
            with contextlib.suppress(Exception):  # the page that asked may be gone
                route.continue_()


def _open(browser, site: Path, problem_id: str, served: Served | None = None):
    """A first visit (a fresh profile: no kept image) with the standard library's requests held."""
    served = served or Served(site)
    held = Held()
    context = browser.new_context(viewport={"width": 1366, "height": 800})
    context.route(STDLIB, held)
    app = App(context.new_page(), served.url)
    app.open(problem_id)
    app.wait_ready()
    assert held.routes, "the worker did not ask for the standard library after the restore"
    assert app.page.evaluate("window.ppJudge.pool.primary.mode") == "snapshot"
    return served, context, app, held


def _close(served: Served | None, context, held: Held) -> None:
    held.release()
    context.close()
    if served is not None:
        served.stop()


def _without_numpy(problems_root: Path) -> list[str]:
    ids = []
    for problem_id in real_problem_ids():
        folder = problems_root / problem_id
        texts = [p.read_text(encoding="utf-8") for p in folder.rglob("*.py")
                 if "reference" not in p.parts and "secret" not in p.parts]
        if not any("import numpy" in t or "from numpy" in t for t in texts):
            ids.append(problem_id)
    return ids


def _first_run(browser, site: Path, served: Served, problem_id: str, code: str) -> tuple[str, dict]:
    """On a first visit, with the standard library held back: the verdict and Result of one run."""
    _, context, app, held = _open(browser, site, problem_id, served)
    try:
        app.set_code(code)
        verdict = app.run()
        assert not held.released and held.routes  # judged without the standard library
        assert not app.errors, app.errors
        return verdict, app.result(problem_id)
    finally:
        _close(None, context, held)


def test_every_problem_without_numpy_is_judged_before_the_standard_library_arrives(
        browser, site_dir: Path, problems_root: Path) -> None:
    ids = _without_numpy(problems_root)
    assert len(ids) >= 5, ids
    served = Served(site_dir)
    try:
        for problem_id in ids:  # each on a first visit: later engines restore a kept image, stdlib and all
            reference = load_problem(problems_root / problem_id).reference_path.read_text(encoding="utf-8")
            verdict, result = _first_run(browser, site_dir, served, problem_id, reference)
            assert verdict == "passed", (problem_id, result)
        # a failing run whose error is raised inside the standard library (a traceback through its
        # frames, whose source is not there yet) is reported as a failure like any other
        verdict, result = _first_run(browser, site_dir, served, "pp-schedule",
                                     "import re\n\ndef schedule(kind, p, m):\n    re.compile('(')\n")
        assert verdict == "failed", result
        failed = [t for t in result["tests"] if t["outcome"] != "passed"]
        assert any("missing )" in (t.get("message") or "") for t in failed), failed[0]
    finally:
        served.stop()


def test_try_it_answers_before_the_standard_library_arrives(browser, site_dir: Path, problems_root: Path) -> None:
    served, context, app, held = _open(browser, site_dir, "pp-schedule")
    try:
        app.set_code(load_problem(problems_root / "pp-schedule").reference_path.read_text(encoding="utf-8"))
        app.page.click("[data-testid=try-it] summary")
        app.page.fill("[data-testid=try-call]", "schedule('gpipe', 2, 2)")
        app.page.click("[data-testid=try-run]")
        app.page.wait_for_function(
            "() => document.querySelector('[data-testid=try-output]').innerText.includes(\"('F', 0)\")",
            timeout=60_000)
        assert not held.released and held.routes
        assert not app.errors, app.errors
    finally:
        _close(served, context, held)


def _waits_then_passes(browser, site: Path, problems_root: Path, code: str, engines: int) -> None:
    """The pp-schedule reference with ``code`` appended: the run says it waits, then passes once
    released, in ``engines`` engines (one per attempt)."""
    served, context, app, held = _open(browser, site, "pp-schedule")
    reference = load_problem(problems_root / "pp-schedule").reference_path.read_text(encoding="utf-8")
    summary = "[data-testid=result-summary]"
    try:
        app.set_code(reference + code)
        run = app.click_run()
        # a dynamic import is found by a first run that fails it: a whole run first, on a loaded machine
        app.page.wait_for_selector(f"{summary}[data-waiting]", timeout=RUN_TIMEOUT_MS)
        # what the summary waits for and what it says, read together: "engine" turns into "stdlib" as the
        # next engine's boot reaches the standard library, and two reads could straddle that
        waiting, text = app.page.evaluate("(selector) => { const s = document.querySelector(selector); "
                                          "return [s.dataset.waiting, s.innerText]; }", summary)
        if engines > 1 and waiting == "engine":
            # no spare was ready (the page's background work waits for runs, and a busy machine slows
            # it): the next engine restores the image its predecessor kept, which reads the standard
            # library as it boots, so it waits for the same download as a starting Python
            assert "Starting a fresh Python" in text
        else:
            app.page.wait_for_selector(f"{summary}[data-waiting=stdlib]", timeout=RUN_TIMEOUT_MS)
            assert WAITING in app.page.inner_text(summary)
        app.page.wait_for_timeout(300)
        assert app.page.get_attribute(summary, "data-status") == "running"
        held.release()
        assert app.wait_verdict(run) == "passed", app.result("pp-schedule")
        attempts = app.page.evaluate("window.ppJudge.pool.runs")
        assert len(attempts) == engines and len({a["engine"] for a in attempts}) == engines, attempts
        assert not app.errors, app.errors
    finally:
        _close(served, context, held)


def test_a_run_importing_a_standard_module_the_image_lacks_waits_for_it(browser, site_dir: Path,
                                                                        problems_root: Path) -> None:
    _waits_then_passes(browser, site_dir, problems_root, "\n\nimport wave  # not in the memory image\n", engines=1)


def test_a_run_that_imports_one_dynamically_is_made_again_once_it_is_in(browser, site_dir: Path,
                                                                       problems_root: Path) -> None:
    # the name is built at run time: no import statement shows it, so the run starts at once, fails
    # to import it, and is made again in the next engine once the standard library is in there
    _waits_then_passes(browser, site_dir, problems_root,
                       "\n\nimport importlib\nWAVE = importlib.import_module('wa' + 've')\n", engines=2)
