"""Hosting without custom headers (GitHub Pages): the service worker makes the page cross-origin isolated.

GitHub Pages cannot send Cross-Origin-Opener-Policy / Cross-Origin-Embedder-Policy. The site is served
here the way such a host serves it (right MIME types, a short Cache-Control, no isolation headers): the
first load is not isolated; once the service worker controls the page, a reload is, because the worker
adds the headers to what it serves. A statement image from the problem's assets/ loads in both, under
``require-corp`` too.
"""

from __future__ import annotations

import functools
import http.server
import shutil
import threading
from collections.abc import Iterator

import pytest

from judge.commands.site.serve import MIME_TYPES
from tests.browser.conftest import BOOT_TIMEOUT_MS
from tests.conftest import FIXTURE_PROBLEMS

SVG = '<svg xmlns="http://www.w3.org/2000/svg" width="40" height="20"><rect width="40" height="20"/></svg>\n'


class PlainHost(http.server.SimpleHTTPRequestHandler):
    """Static files as GitHub Pages sends them: MIME types and max-age=600, nothing else."""

    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map, **MIME_TYPES}

    def end_headers(self) -> None:
        self.send_header("Cache-Control", "max-age=600")
        super().end_headers()

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - stdlib signature
        pass


@pytest.fixture(scope="module")
def plain_site(tmp_path_factory) -> Iterator[str]:
    from judge.commands.site.build import build_site

    root = tmp_path_factory.mktemp("plain")
    folder = root / "problems" / "fx-add"
    shutil.copytree(FIXTURE_PROBLEMS / "fx-add", folder, ignore=shutil.ignore_patterns("__pycache__"))
    (folder / "assets").mkdir()
    (folder / "assets" / "box.svg").write_text(SVG, encoding="utf-8")
    readme = folder / "README.md"
    readme.write_text(readme.read_text() + "\n![a box](assets/box.svg)\n", encoding="utf-8")
    site = root / "site"
    build_site(site, pyodide="self", problems_dir=root / "problems")
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(PlainHost, directory=str(site)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


def test_a_host_without_headers_is_isolated_from_the_second_load_on(browser, plain_site: str) -> None:
    context = browser.new_context()
    try:
        page = context.new_page()
        page.goto(plain_site + "#/fx-add")
        page.wait_for_selector("html[data-app-ready=true]", timeout=60_000)
        assert page.evaluate("self.crossOriginIsolated") is False
        _assert_image_shows(page)
        page.wait_for_selector("[data-testid=engine-status][data-state=ready]", timeout=BOOT_TIMEOUT_MS)
        page.wait_for_selector("html[data-offline-ready=true]", timeout=BOOT_TIMEOUT_MS)
        page.reload()
        page.wait_for_selector("html[data-app-ready=true]", timeout=60_000)
        assert page.evaluate("self.crossOriginIsolated") is True
        assert page.evaluate("typeof SharedArrayBuffer") == "function"
        _assert_image_shows(page)
        page.wait_for_selector("[data-testid=engine-status][data-state=ready]", timeout=BOOT_TIMEOUT_MS)
    finally:
        context.close()


def _assert_image_shows(page) -> None:
    image = page.wait_for_selector("img[alt='a box']", timeout=30_000)
    page.wait_for_function("img => img.complete", arg=image, timeout=30_000)
    assert image.evaluate("img => img.naturalWidth") == 40, image.get_attribute("src")
    assert "/assets/problem-fx-add-" in image.evaluate("img => img.src")
