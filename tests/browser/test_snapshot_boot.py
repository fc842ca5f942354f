"""The engine boots from the site's memory snapshot, loads numpy afterwards, and falls back.

A `self` site ships a memory snapshot of Pyodide with pytest and the judge imported (see
judge/engines/pyodide_snapshot.py); the worker restores it, is ready, and loads numpy in the
background. A run that needs numpy before then waits for it, and the page says so. The worker
keeps the decompressed image for the next boot; a kept image that cannot be restored is dropped
for the site's file. When the site's image cannot be used (a changed or corrupt file, an image
Pyodide refuses), the worker boots the plain way and the page works as before. Each case here
gets its own server (origin) and browser context.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import json
import re
import shutil
from pathlib import Path

import pytest

from judge.core.problem import load_problem
from tests.browser.conftest import RUN_TIMEOUT_MS, App, Served

NUMPY_PROBLEM = "pp-1f1b-emulated"


def _config(site: Path) -> dict:
    text = (site / "index.html").read_text(encoding="utf-8")
    return json.loads(re.search(r'id="site-config">(.*?)</script>', text, re.S).group(1))


def _set_config(site: Path, config: dict) -> None:
    index = site / "index.html"
    text = index.read_text(encoding="utf-8")
    match = re.search(r'id="site-config">(.*?)</script>', text, re.S)
    payload = json.dumps(config, ensure_ascii=False).replace("</", "<\\/")
    index.write_text(text[:match.start(1)] + payload + text[match.end(1):], encoding="utf-8")


def _engine(app: App) -> dict:
    return app.page.evaluate("""() => { const p = window.ppJudge.pool.primary;
        return {mode: p.mode, snapshotError: p.snapshotError, numpy: p.numpy}; }""")


def _open(browser, site: Path, problem_id: str, route=None):
    served = Served(site)
    context = browser.new_context(viewport={"width": 1366, "height": 800})
    if route:
        context.route(*route)
    app = App(context.new_page(), served.url)
    return served, context, app


def test_the_engine_restores_the_snapshot_and_loads_numpy_in_the_background(app: App, site_dir: Path) -> None:
    snapshot = _config(site_dir)["pyodide"]["snapshot"]
    image = (site_dir / snapshot["url"]).read_bytes()
    assert image[:2] == b"\x1f\x8b" and hashlib.sha256(image).hexdigest() == snapshot["sha256"]
    app.wait_ready()  # the page is shared: an earlier test's last run may have left a spare still booting
    assert _engine(app)["mode"] == "snapshot", _engine(app)
    app.select(NUMPY_PROBLEM)  # numpy loads once a problem that imports it is open (never for the others)
    app.page.wait_for_function("() => window.ppJudge.pool.primary.numpy === 'ready'", timeout=RUN_TIMEOUT_MS)
    assert app.page.inner_text("[data-testid=engine-status]").strip() == "Python ready"


def test_a_restore_mounts_the_plain_standard_library_and_imports_from_it(browser, site_dir: Path,
                                                                      problems_root: Path) -> None:
    """The image is made and restored with the distribution's plain standard library: the first visit
    never downloads the compiled twin (1.9 MB more), and a module the image never imported still
    imports (compiled from its source) in a run."""
    pyodide = _config(site_dir)["pyodide"]
    stdlib = pyodide["snapshot"]["stdLibURL"]
    assert stdlib == f"{pyodide['indexURL']}python_stdlib.zip" and stdlib != pyodide["stdLibURL"]
    sw = (site_dir / "sw.js").read_text(encoding="utf-8")
    assert f'"{stdlib}"' in sw and f'"{pyodide["stdLibURL"]}"' not in sw  # what the boot uses is precached
    served, context, app = _open(browser, site_dir, "pp-schedule")
    requested: list[str] = []
    context.on("request", lambda request: requested.append(request.url))
    try:
        app.open("pp-schedule")
        app.wait_ready()
        assert _engine(app)["mode"] == "snapshot"
        reference = load_problem(problems_root / "pp-schedule").reference_path.read_text(encoding="utf-8")
        app.set_code(reference + "\n\nimport pickletools, statistics, wave  # never imported in the image\n")
        assert app.run() == "passed", app.result("pp-schedule")
        assert any(url.endswith(stdlib) for url in requested), requested
        assert not any(url.endswith(pyodide["stdLibURL"]) for url in requested)
        assert not app.errors, app.errors
    finally:
        context.close()
        served.stop()


def test_a_reload_restores_the_image_the_worker_kept_and_a_bad_one_is_dropped(browser, site_dir: Path,
                                                                              problems_root: Path) -> None:
    served, context, app = _open(browser, site_dir, "pp-schedule")
    size = _config(site_dir)["pyodide"]["snapshot"]["imageSize"]
    try:
        app.open("pp-schedule")
        app.wait_ready()
        assert app.page.evaluate("window.ppJudge.pool.primary.imageSource") == "site"
        # the worker says when the image is on disk (the write may take a while on a busy machine)
        app.page.wait_for_function("() => window.ppJudge.pool.primary.imageSettled", timeout=RUN_TIMEOUT_MS)
        assert app.page.evaluate("window.ppJudge.pool.primary.imageKept"), "the worker tried and could not keep it"
        app.page.wait_for_function("() => window.ppJudge.pool.spare && window.ppJudge.pool.spare.state === 'ready'",
                                   timeout=RUN_TIMEOUT_MS)
        app.page.reload()
        app.wait_ready()
        assert _engine(app)["mode"] == "snapshot"
        assert app.page.evaluate("window.ppJudge.pool.primary.imageSource") == "kept"
        # the spare reads the kept image too: let it finish (a worker reading it holds a lock on it)
        app.page.wait_for_function("() => window.ppJudge.pool.spare && window.ppJudge.pool.spare.state === 'ready'",
                                   timeout=RUN_TIMEOUT_MS)
        # a damaged kept image (the right size, wrong bytes): restoring it fails, the site's file is used
        app.page.evaluate("""async (size) => {
            const folder = await (await navigator.storage.getDirectory()).getDirectoryHandle("pp-judge-image");
            for await (const name of folder.keys()) {
                const writable = await (await folder.getFileHandle(name)).createWritable();
                await writable.write(new Uint8Array(size).fill(7));
                await writable.close();
            }
        }""", size)
        app.page.reload()
        app.wait_ready()
        engine = _engine(app)
        assert engine["mode"] == "snapshot" and engine["snapshotError"] is None, engine
        assert app.page.evaluate("window.ppJudge.pool.primary.imageSource") == "site"
        problem = load_problem(problems_root / "pp-schedule")
        app.set_code(problem.reference_path.read_text(encoding="utf-8"))
        assert app.run() == "passed", app.result("pp-schedule")
        assert not app.errors, app.errors
    finally:
        context.close()
        served.stop()


def test_a_run_that_needs_numpy_waits_for_it_and_the_page_says_so(browser, site_dir: Path,
                                                                 problems_root: Path) -> None:
    held = []  # numpy's wheel is held back until the run has said that it waits
    released = []

    def hold(route):
        if released:
            route.continue_()
        else:
            held.append(route)

    served, context, app = _open(browser, site_dir, NUMPY_PROBLEM, ("**/numpy-*.whl", hold))
    try:
        app.open(NUMPY_PROBLEM)
        problem = load_problem(problems_root / NUMPY_PROBLEM)
        app.set_code(problem.reference_path.read_text(encoding="utf-8"))
        app.wait_ready()
        assert _engine(app)["numpy"] == "loading"
        assert "numpy" in app.page.inner_text("[data-testid=engine-status]")
        run = app.click_run()
        app.page.wait_for_selector("[data-testid=result-summary][data-waiting=numpy]", timeout=10_000)
        assert "Waiting for numpy" in app.page.inner_text("[data-testid=result-summary]")
        for _ in range(300):  # numpy's wheel is requested once the standard library is in
            if held:
                break
            app.page.wait_for_timeout(100)
        assert app.page.get_attribute("[data-testid=result-summary]", "data-status") == "running"
        assert held, "the worker's request for numpy's wheel was not seen"
        released.append(True)  # later engines (one per run) load numpy at once
        for route in held:
            route.continue_()
        assert app.wait_verdict(run) == "passed", app.result(NUMPY_PROBLEM)
        assert app.page.get_attribute("[data-testid=result-summary]", "data-waiting") is None
        app.wait_ready()  # the engine that ran is gone (one run per engine); its successor loads numpy too
        app.page.wait_for_function("window.ppJudge.pool.primary && window.ppJudge.pool.primary.numpy === 'ready'",
                                   timeout=120_000)
        assert not app.errors, app.errors
    finally:
        for route in held:
            with contextlib.suppress(Exception):  # already continued
                route.continue_()
        context.close()
        served.stop()


def _changed_file(site: Path) -> str:
    """Corrupt the image: its sha256 no longer matches the site's configuration."""
    image = site / _config(site)["pyodide"]["snapshot"]["url"]
    data = bytearray(image.read_bytes())
    data[len(data) // 2] ^= 0xFF
    image.write_bytes(bytes(data))
    _drop_twins(image)
    return "sha256"


def _drop_twins(path: Path) -> None:
    """A changed file's precompressed twins are stale: remove them (the server then sends the file)."""
    for suffix in (".br", ".gz"):
        path.with_name(path.name + suffix).unlink(missing_ok=True)


def _unrestorable_image(site: Path) -> str:
    """An image with the right sha256 that Pyodide refuses (a broken header): restoring itself fails."""
    config = _config(site)
    snapshot = config["pyodide"]["snapshot"]
    path = site / snapshot["url"]
    image = bytearray(gzip.decompress(path.read_bytes()))
    image[0:4] = b"\0\0\0\0"  # the magic number
    packed = gzip.compress(bytes(image), 1)
    path.write_bytes(packed)
    _drop_twins(path)
    snapshot.update(sha256=hashlib.sha256(packed).hexdigest(), size=len(packed),
                    imageSha256=hashlib.sha256(image).hexdigest())
    _set_config(site, config)
    return "magic"


@pytest.mark.parametrize("corrupt", [_changed_file, _unrestorable_image], ids=["changed-file", "unrestorable-image"])
def test_when_the_snapshot_cannot_be_restored_the_engine_boots_the_plain_way(browser, site_dir: Path, tmp_path: Path,
                                                                             problems_root: Path, corrupt) -> None:
    site = tmp_path / "site"
    shutil.copytree(site_dir, site)
    reason = corrupt(site)
    served, context, app = _open(browser, site, NUMPY_PROBLEM)
    try:
        app.open(NUMPY_PROBLEM)
        app.wait_ready()
        engine = _engine(app)
        assert engine["mode"] == "plain" and reason in engine["snapshotError"], engine
        assert engine["numpy"] == "ready"  # the plain boot loads it at once
        for problem_id in (NUMPY_PROBLEM, "pp-schedule"):
            problem = load_problem(problems_root / problem_id)
            app.select(problem_id)
            app.set_code(problem.reference_path.read_text(encoding="utf-8"))
            assert app.run() == "passed", app.result(problem_id)
        # the spare boots the same way, and takes over after a hard stop
        app.page.wait_for_function("() => window.ppJudge.pool.spare && window.ppJudge.pool.spare.state === 'ready'",
                                   timeout=RUN_TIMEOUT_MS)
        assert app.page.evaluate("window.ppJudge.pool.spare.mode") == "plain"
        assert not app.errors, app.errors
    finally:
        context.close()
        served.stop()
