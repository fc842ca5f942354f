"""Browser benchmark: the web app against a bare Pyodide page, cold and on a repeat visit.

One run builds a ``self`` site (``python -m judge build``), copies the bare floor page
(``bench/floor/``) into it as ``bench-floor/`` so both load the *same* Pyodide files from the same
server, serves it with :func:`judge.commands.site.serve.make_server` on 127.0.0.1 (the real headers), and
drives Debian's Chromium with Playwright. Each repeat, interleaved (the floor first on odd repeats,
the app first on even ones):

- floor: a fresh browser profile; time from navigation to "numpy and pytest imported" in a Web
  Worker; then a reload in the same profile (HTTP cache);
- app, cold: a fresh browser profile; time from navigation to ``engine-status[data-state=ready]``
  (the engine restored from the site's memory snapshot: pytest and the judge imported, numpy still
  loading in the background); then, once the spare engine is up, numpy loaded, the problems
  prepared and the service worker installed (a learner reads the statement first), the first verdict of every problem with
  its reference solution (Run pressed in the page; timed in the page from the click to the
  verdict), then N re-runs as a learner makes them (each in the spare engine that took over,
  settled: booted, numpy loaded, problems prepared, never used; the numpy problem's first verdict is
  compared with these), then N warm re-runs, each followed by a bare ``pytest.main`` on the same tests in the
  same engine (the yardstick: the page asks the worker for one and times the round trip, which
  writes the same files and makes the same work directory; the engine also reports the runner's and
  pytest's own times);
- app, repeat visit: then a reload in the same profile (HTTP cache, V8's code cache, service
  worker); time to ready, and the verdict of a numpy problem when Run is pressed the moment the
  engine is ready (it waits for numpy); a second reload presses Run at ready on pp-schedule. The
  repeat visits follow a used page on purpose: V8 caches the optimised code of pyodide.asm.wasm
  that the first visit produced;
- throttled first visit: a fresh profile under Chromium's network emulation (CDP
  ``Network.emulateNetworkConditions``: 10 Mbit/s down and up, 20 ms latency), the app opened on
  ``AT_READY_PROBLEM`` and the floor page, side by side: time to a usable Run (the engine ready),
  time to a usable page (statement and editor: ``html[data-app-ready]``), and the bytes until the
  Run is usable. The server negotiates the precompressed twins (``judge serve``'s behaviour), for
  the app and the floor alike (the floor loads the same Pyodide files);
- "before": the same app from a copy of the site without the memory snapshot (the boot this
  replaced: Pyodide loads numpy and pytest, then imports and warms up): ready cold and on a repeat
  visit, and its bytes, so the snapshot's effect is measured in the same run (``--no-before``
  skips it).

Bytes are counted by the server: what it wrote to the socket for each request (headers and
body). A response served by the service worker or from the HTTP cache never reaches it, so it
counts 0. The server does not compress; ``gzip`` columns estimate what a host that gzips would
send. "Pyodide" bytes are the requests under ``pyodide/`` (runtime, standard library, packages,
the memory snapshot).

Times are medians over the repeats; every ratio is taken within one repeat (the same machine
state) and then the median of those ratios is reported. Absolute times on a shared machine are
noisy; compare ratios.

    python -m bench.browser [--problems DIR] [--repeats N] [--reruns N] [--only ID ...] [--no-before]
                            [--json FILE]
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import gzip
import json
import os
import re
import shutil
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import report  # noqa: E402
from judge.core.problem import Problem, discover_problems  # noqa: E402
from judge.engines import pyodide_dist  # noqa: E402

CHROMIUM = Path("/usr/lib/chromium/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--headless=new", "--disable-gpu", "--disable-dev-shm-usage"]
FLOOR_SOURCE = ROOT / "bench" / "floor"
FLOOR_DIR = "bench-floor"
BOOT_TIMEOUT_S = 240.0
RUN_TIMEOUT_S = 120.0
AT_READY_PROBLEM = "pp-schedule"  # preferred problem for "Run pressed the moment Python is ready"
NUMPY_PROBLEM = "pp-1f1b-emulated"  # preferred numpy problem (numpy loads after a restore)
RERUN_TARGET_PROBLEM = "pp-schedule"

THROTTLE = {"offline": False, "latency": 20, "downloadThroughput": 10e6 / 8, "uploadThroughput": 10e6 / 8}
ISSUE_24_BYTES = 23.6e6  # bytes until Run was usable on a first visit when issue 24 was filed

TARGETS = {
    "throttled_ready_vs_floor": 0.5,        # 10 Mbit/s first visit: app's Run usable / floor imported
    "throttled_bytes_vs_issue": 0.7,        # 10 Mbit/s first visit: bytes until Run is usable / 23.6 MB
    "ready_cold_vs_floor": 0.35,            # app ready, cold / floor imported, cold
    "ready_repeat_vs_floor_repeat": 0.2,    # app ready on a repeat visit / floor on a repeat visit (issue 24; was 0.3)
    "first_verdict_numpy_vs_rerun": 2.0,    # first verdict of the numpy problem, numpy loaded / a learner's re-run
    "rerun_vs_bare_pytest": 1.0,            # pp-schedule: warm re-run / bare pytest.main, same tests, same engine
    "repeat_pyodide_bytes": 0,              # network bytes for Pyodide files on a repeat visit
    "first_visit_bytes_vs_before": 1.0,     # all bytes of a first visit / the same without the snapshot
    "first_verdict_ms": 500.0,              # every problem, after ready (an earlier target, kept)
}

# Records when the app's engine status first says "ready" (performance.now(): from navigation).
INIT_SCRIPT = """
(() => {
  if (window.__benchObserver) return;
  window.__benchReadyAt = null;
  window.__benchPageAt = null;
  const mark = () => {
    if (window.__benchPageAt === null && document.documentElement.dataset.appReady === 'true') {
      window.__benchPageAt = performance.now();
    }
    if (window.__benchReadyAt !== null) return;
    const el = document.querySelector('[data-testid=engine-status]');
    if (el && el.dataset.state === 'ready') window.__benchReadyAt = performance.now();
  };
  window.__benchObserver = new MutationObserver(mark);
  window.__benchObserver.observe(document, {subtree: true, attributes: true,
                                            attributeFilter: ['data-state', 'data-app-ready']});
})();
"""

# Press Run and time the verdict in the page: from the click to the summary of the new run.
RUN_SCRIPT = """
async (timeoutMs) => {
  const summary = document.querySelector('[data-testid=result-summary]');
  const before = Number(summary.dataset.run);
  const done = new Promise((resolve, reject) => {
    const check = () => {
      const st = summary.dataset.status;
      if (Number(summary.dataset.run) === before + 1 && st && st !== 'running') { obs.disconnect(); resolve(); }
    };
    const obs = new MutationObserver(check);
    obs.observe(summary, {attributes: true});
    setTimeout(() => { obs.disconnect(); reject(new Error('no verdict within ' + timeoutMs + ' ms')); }, timeoutMs);
  });
  const t0 = performance.now();
  document.querySelector('[data-testid=run]').click();
  await done;
  return {ms: performance.now() - t0, status: summary.dataset.status};
}
"""

# A bare pytest.main on the current problem's tests with `text` as the code, in the primary engine:
# [milliseconds of the page's round trip, milliseconds of pytest.main inside the worker].
BARE_SCRIPT = """async (text) => {
  const t0 = performance.now();
  const ms = await window.ppJudge.pool.barePytest(window.ppJudge.workerProblem(window.ppJudge.state.current), text);
  return [performance.now() - t0, ms];
}"""

SET_CODE_SCRIPT = """text => {
  const view = window.ppJudge.editor.view;
  view.dispatch({changes: {from: 0, to: view.state.doc.length, insert: text}});
}"""


class BenchError(RuntimeError):
    """The benchmark could not run (no browser, a boot failed, a reference did not pass)."""


# ---------------------------------------------------------------------------------------------
# the server, counting bytes


class ByteLog:
    """Every response the server wrote: (path, status, bytes on the socket)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.entries: list[tuple[str, int, int]] = []

    def add(self, path: str, status: int, nbytes: int) -> None:
        with self.lock:
            self.entries.append((path, status, nbytes))

    def mark(self) -> int:
        with self.lock:
            return len(self.entries)

    def since(self, mark: int) -> list[tuple[str, int, int]]:
        with self.lock:
            return list(self.entries[mark:])


class _CountingWriter:
    def __init__(self, raw: Any) -> None:
        self.raw = raw
        self.count = 0

    def write(self, data: bytes) -> int:
        self.count += len(data)
        return self.raw.write(data)

    def flush(self) -> None:
        self.raw.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.raw, name)


def _counting_handler(base: type, log: ByteLog) -> type:
    class Counting(base):
        wfile: Any

        def setup(self) -> None:
            super().setup()
            self.wfile = _CountingWriter(self.wfile)

        def send_response(self, code: int, message: str | None = None) -> None:
            self._bench_status = code
            super().send_response(code, message)

        def handle_one_request(self) -> None:
            self.wfile.count = 0
            self._bench_status = 0
            super().handle_one_request()
            if getattr(self, "requestline", "") and self._bench_status:
                log.add(self.path.split("?", 1)[0], self._bench_status, self.wfile.count)

    return Counting


def _reference(problem: Any) -> str:
    """The reference solution's code (``judge check`` makes sure every problem has one)."""
    return (problem.path / "reference" / problem.entry).read_text(encoding="utf-8")


@contextmanager
def serving(site: Path, log: ByteLog) -> Iterator[str]:
    from judge.commands.site.serve import make_server, server_url

    server = make_server(site, "127.0.0.1", 0)
    partial: Any = server.RequestHandlerClass  # functools.partial of the handler class
    server.RequestHandlerClass = functools.partial(_counting_handler(partial.func, log), *partial.args,
                                                   **partial.keywords)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server_url(server)
    finally:
        server.shutdown()
        server.server_close()


class Sizes:
    """Byte totals of a list of server log entries, raw and as a gzipping host would send them."""

    def __init__(self, site: Path) -> None:
        self.site = site
        self._gz: dict[str, tuple[int, int]] = {}

    def _file(self, path: str) -> tuple[int, int]:
        if path not in self._gz:
            rel = path.lstrip("/") or "index.html"
            if rel.endswith("/"):
                rel += "index.html"
            file = self.site / rel
            data = file.read_bytes() if file.is_file() else b""
            self._gz[path] = (len(data), len(gzip.compress(data, 6)) if data else 0)
        return self._gz[path]

    def totals(self, entries: list[tuple[str, int, int]]) -> dict[str, Any]:
        out: dict[str, Any] = {"requests": 0, "bytes": 0, "gzip_bytes": 0, "pyodide_requests": 0, "pyodide_bytes": 0,
                               "pyodide_gzip_bytes": 0, "by_folder": {}}
        for path, status, nbytes in entries:
            gz = nbytes
            if status == 200:
                raw, packed = self._file(path)
                if raw and nbytes >= raw:
                    gz = nbytes - raw + packed  # headers as sent, the body gzipped
            pyodide = path.startswith("/pyodide/")
            parts = path.strip("/").split("/")
            folder = "/".join(parts[:2]) if pyodide else (parts[0] if len(parts) > 1 else "(top)")
            out["by_folder"][folder] = out["by_folder"].get(folder, 0) + nbytes
            out["requests"] += 1
            out["bytes"] += nbytes
            out["gzip_bytes"] += gz
            if pyodide:
                out["pyodide_requests"] += 1
                out["pyodide_bytes"] += nbytes
                out["pyodide_gzip_bytes"] += gz
        return out


# ---------------------------------------------------------------------------------------------
# browser


def _need_browser() -> None:
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        raise BenchError("Python Playwright is not installed (pip install -e '.[test]')") from None
    if not CHROMIUM.exists():
        raise BenchError(f"{CHROMIUM} is missing (apt-get install chromium)")


@contextmanager
def profile(pw: Any) -> Iterator[Any]:
    """A fresh browser profile on disk (empty HTTP cache, code cache and service workers)."""
    folder = Path(tempfile.mkdtemp(prefix="bench-browser-profile-"))
    context = pw.chromium.launch_persistent_context(
        str(folder), executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS,
        viewport={"width": 1366, "height": 800})
    try:
        context.add_init_script(INIT_SCRIPT)
        yield context
    finally:
        context.close()
        shutil.rmtree(folder, ignore_errors=True)


def _page(context: Any) -> Any:
    page = context.pages[0] if context.pages else context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page._bench_errors = errors  # noqa: SLF001 - our own note on the object
    return page


def _wait(page: Any, expression: str, timeout_s: float, what: str) -> Any:
    try:
        return page.wait_for_function(expression, timeout=timeout_s * 1000, polling=50).json_value()
    except Exception as exc:  # noqa: BLE001 - Playwright's TimeoutError and page crashes
        errors = getattr(page, "_bench_errors", [])
        raise BenchError(f"{what} did not happen within {timeout_s:.0f} s ({exc.__class__.__name__}); "
                         f"page errors: {errors[-3:]}") from None


def floor_visit(page: Any, url: str, reload: bool) -> dict[str, Any]:
    if reload:
        page.reload(wait_until="commit")
    else:
        page.goto(url, wait_until="commit")
    state = _wait(page, "window.floor && window.floor.state !== 'booting' && window.floor.state",
                  BOOT_TIMEOUT_S, "the floor page importing numpy and pytest")
    info = page.evaluate("window.floor")
    if state != "imported":
        raise BenchError(f"the floor page failed: {info.get('error')}")
    return {"ms": info["importedAt"], "timings": info["timings"]}


def app_ready(page: Any, url: str | None) -> dict[str, Any]:
    if url is None:
        page.reload(wait_until="commit")
    else:
        page.goto(url, wait_until="commit")
    ms = _wait(page, "window.__benchReadyAt", BOOT_TIMEOUT_S, "the app's engine becoming ready")
    timings = page.evaluate("window.ppJudge.pool.primary && window.ppJudge.pool.primary.timings")
    return {"ms": ms, "timings": timings}


def wait_settled(page: Any) -> None:
    """The spare engine is ready and the service worker is installed (the page is idle)."""
    _wait(page, "document.documentElement.dataset.offlineReady === 'true'", BOOT_TIMEOUT_S,
          "the service worker installing")
    _wait(page, "(() => { const p = window.ppJudge.pool; return p.noSpare || (p.spare && p.spare.state === 'ready'); })()",
          BOOT_TIMEOUT_S, "the spare engine becoming ready")
    _wait(page, "(() => { const p = window.ppJudge.pool; return !p.numpyWanted || [p.primary, p.spare].every((e) => "
                "!e || e.numpy === 'ready'); })()", BOOT_TIMEOUT_S, "numpy loading in the engines")
    _wait(page, "window.ppJudge.pool.primary.preparedAll === true", BOOT_TIMEOUT_S,
          "the engine preparing the problems")


def select(page: Any, problem_id: str) -> None:
    page.evaluate("id => { location.hash = '#/' + id; }", problem_id)
    _wait(page, f"window.ppJudge.state.current && window.ppJudge.state.current.id === {json.dumps(problem_id)}",
          30, f"selecting {problem_id}")


def run_once(page: Any, problem_id: str) -> float:
    result = page.evaluate(RUN_SCRIPT, RUN_TIMEOUT_S * 1000)
    if result["status"] != "passed":
        raise BenchError(f"{problem_id}: the reference solution's verdict in the browser is {result['status']!r}, "
                         "expected 'passed'")
    return float(result["ms"])


def app_verdicts(page: Any, problems: list[Problem], reruns: int) -> dict[str, dict[str, float]]:
    """Per problem: the first verdict, then warm re-runs alternating with bare pytest.main runs."""
    out: dict[str, dict[str, float]] = {}
    for problem in problems:
        select(page, problem.id)
        source = _reference(problem)
        page.evaluate(SET_CODE_SCRIPT, source)
        row: dict[str, float] = {"first_ms": run_once(page, problem.id),
                                 "first_engine_ms": page.evaluate("window.ppJudge.metrics.lastRunEngineMs")}
        # a learner's re-run: in the spare engine, settled (booted, numpy loaded, problems prepared)
        # but never used; the re-runs below follow a bare pytest.main of the same tests in their engine
        learner = []
        for _ in range(reruns):
            wait_settled(page)
            learner.append(run_once(page, problem.id))
        if learner:
            row["learner_rerun_ms"] = statistics.median(learner)
        runs, engine, bare, bare_py = [], [], [], []
        for _ in range(reruns):
            runs.append(run_once(page, problem.id))
            engine.append(page.evaluate("window.ppJudge.metrics.lastRunEngineMs"))
            round_trip, inside = page.evaluate(BARE_SCRIPT, source)
            bare.append(round_trip)
            bare_py.append(inside)
        if runs:
            row.update(rerun_ms=statistics.median(runs), rerun_engine_ms=statistics.median(engine),
                       bare_ms=statistics.median(bare), bare_pytest_ms=statistics.median(bare_py),
                       rerun_vs_bare_pytest=statistics.median(r / b for r, b in zip(runs, bare)))
        out[problem.id] = row
    return out


def uses_numpy(problem: Problem) -> bool:
    """Whether a problem's published files import numpy (its runs wait for numpy after a restore)."""
    files = [*problem.public_test_files, *problem.support_files]
    return any(re.search(r"^\s*(import|from)\s+numpy\b", f.read_text(encoding="utf-8"), re.M) for f in files)


# ---------------------------------------------------------------------------------------------
# one run


def build(problems_dir: Path, dest: Path) -> tuple[Path, float]:
    from judge.commands.site.build import build_site

    site = dest / "site"
    started = time.perf_counter()
    build_site(site, pyodide="self", problems_dir=problems_dir)
    seconds = time.perf_counter() - started
    shutil.copytree(FLOOR_SOURCE, site / FLOOR_DIR)
    return site, seconds


def site_config(site: Path) -> dict[str, Any]:
    text = (site / "index.html").read_text(encoding="utf-8")
    return json.loads(text.split('id="site-config">', 1)[1].split("</script>", 1)[0])


def before_copy(site: Path, dest: Path) -> Path:
    """A copy of ``site`` as the app was before the memory snapshot: the same files, but the
    configuration has no snapshot (the engine boots by loading numpy and pytest, importing and
    warming up) and the service worker does not precache the image."""
    shutil.copytree(site, dest)
    index = dest / "index.html"
    text = index.read_text(encoding="utf-8")
    config = site_config(dest)
    before = json.loads(json.dumps(config))
    image = before["pyodide"].pop("snapshot")["url"]
    old = json.dumps(config, ensure_ascii=False).replace("</", "<\\/")
    if old not in text:
        raise BenchError("could not find the site configuration in index.html to make the copy without the snapshot")
    index.write_text(text.replace(old, json.dumps(before, ensure_ascii=False).replace("</", "<\\/")), encoding="utf-8")
    (dest / image).unlink()
    sw = dest / "sw.js"
    sw_text = sw.read_text(encoding="utf-8")
    settings = sw_text.split("const SETTINGS = ", 1)[1].split(";\n", 1)[0]
    values = json.loads(settings)
    values["precache"] = [u for u in values["precache"] if u != image]
    sw.write_text(sw_text.replace(settings, json.dumps(values, indent=1)), encoding="utf-8")
    return dest


def measure(problems_dir: Path, repeats: int = 3, reruns: int = 10, only: list[str] | None = None,
            log: Any = print, before: bool = True, throttled: bool = True) -> dict[str, Any]:
    _need_browser()
    from playwright.sync_api import sync_playwright

    problems, errors = discover_problems(problems_dir)
    if errors or not problems:
        raise BenchError(f"cannot benchmark {problems_dir}: {errors or 'no problems'}")
    if only:
        unknown = set(only) - {p.id for p in problems}
        if unknown:
            raise BenchError(f"no such problem(s): {', '.join(sorted(unknown))}")
    chosen = [p for p in problems if not only or p.id in only]
    at_ready = next((p for p in chosen if p.id == AT_READY_PROBLEM), chosen[0])
    numpy_problems = [p for p in chosen if uses_numpy(p)]
    numpy_at_ready = next((p for p in numpy_problems if p.id == NUMPY_PROBLEM),
                          numpy_problems[0] if numpy_problems else None)

    load_before = os.getloadavg()
    scratch = Path(tempfile.mkdtemp(prefix="bench-browser-"))
    bytelog = ByteLog()
    rows: list[dict[str, Any]] = []
    try:
        site, build_s = build(problems_dir, scratch)
        index_url = site_config(site)["pyodide"]["indexURL"]
        snapshot = site_config(site)["pyodide"].get("snapshot")
        before = before and bool(snapshot)
        before_site = before_copy(site, scratch / "before") if before else None
        sizes = Sizes(site)
        before_sizes = Sizes(before_site) if before_site else None
        with contextlib.ExitStack() as stack:
            base = stack.enter_context(serving(site, bytelog))
            before_base = stack.enter_context(serving(before_site, bytelog)) if before_site else None
            pw = stack.enter_context(sync_playwright())
            floor_url = f"{base}{FLOOR_DIR}/index.html?index=../{index_url}"
            for r in range(repeats):
                row: dict[str, Any] = {}
                if throttled:
                    row["throttled"] = _throttled_pair(pw, base, floor_url, at_ready.id, bytelog, sizes)
                    t = row["throttled"]
                    log(f"  repeat {r + 1}/{repeats}, 10 Mbit/s first visit: app Run usable {t['app_ms'] / 1000:.2f} s "
                        f"(page {t['app_page_ms'] / 1000:.2f} s, {_until_ready(t) / 1e6:.2f} MB received), floor "
                        f"{t['floor_ms'] / 1000:.2f} s ({t['floor_bytes']['bytes'] / 1e6:.2f} MB)")
                order = ["floor", "app", "before"] if r % 2 == 0 else ["before", "app", "floor"]
                for which in order:
                    if which == "floor":
                        row["floor"] = _floor_pair(pw, floor_url, bytelog, sizes)
                    elif which == "app":
                        row["app"] = _app_pair(pw, base, chosen, at_ready, numpy_at_ready, reruns, bytelog, sizes)
                    elif before_base:
                        row["before"] = _ready_pair(pw, before_base, bytelog, before_sizes or sizes)
                f, a = row["floor"], row["app"]
                extra = (f", without the snapshot {row['before']['cold']['ms'] / 1000:.2f} s / "
                         f"{row['before']['repeat']['ms'] / 1000:.2f} s" if "before" in row else "")
                log(f"  repeat {r + 1}/{repeats}: floor {f['cold']['ms'] / 1000:.2f} s / "
                    f"{f['repeat']['ms'] / 1000:.2f} s, app ready {a['cold']['ms'] / 1000:.2f} s / "
                    f"{a['repeat']['ms'] / 1000:.2f} s{extra} (cold / repeat)")
                rows.append(row)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return summarise(rows, chosen, at_ready, numpy_at_ready, reruns, build_s, load_before, snapshot)


def _floor_pair(pw: Any, url: str, bytelog: ByteLog, sizes: Sizes) -> dict[str, Any]:
    with profile(pw) as context:
        page = _page(context)
        mark = bytelog.mark()
        cold = floor_visit(page, url, reload=False)
        cold["bytes"] = sizes.totals(bytelog.since(mark))
        mark = bytelog.mark()
        repeat = floor_visit(page, url, reload=True)
        repeat["bytes"] = sizes.totals(bytelog.since(mark))
    return {"cold": cold, "repeat": repeat}


def _ready_pair(pw: Any, base: str, bytelog: ByteLog, sizes: Sizes) -> dict[str, Any]:
    """Ready cold and on a repeat visit only (the copy of the app without the memory snapshot)."""
    with profile(pw) as context:
        page = _page(context)
        mark = bytelog.mark()
        cold = app_ready(page, base)
        wait_settled(page)
        cold["bytes"] = sizes.totals(bytelog.since(mark))
        mark = bytelog.mark()
        repeat = app_ready(page, None)
        wait_settled(page)
        repeat["bytes"] = sizes.totals(bytelog.since(mark))
    return {"cold": cold, "repeat": repeat}


def _throttle(context: Any, page: Any) -> Received:
    received = Received(context)
    cdp = context.new_cdp_session(page)
    cdp.send("Network.enable")
    cdp.send("Network.emulateNetworkConditions", THROTTLE)
    return received


class Received:
    """The bytes Chromium received for the responses it had finished by a moment of the page.

    The server's count says what it wrote, and a response it wrote in full may still be crossing the
    throttled line. Playwright's request events cover the page and its workers; each finished
    request has its timing (``responseEnd``: the last byte in) and its sizes as received (headers
    and encoded body; 0 for an answer from the HTTP cache). A request still in flight at that
    moment counts nothing.
    """

    def __init__(self, context: Any) -> None:
        self.finished: list[Any] = []
        context.on("requestfinished", lambda request: self.finished.append(request))

    def before(self, page: Any, page_ms: float) -> dict[str, Any]:
        """Bytes of the responses finished before ``page_ms`` (the page's clock), in all and by file."""
        until = page.evaluate("performance.timeOrigin") + page_ms
        by_file: dict[str, int] = {}
        for request in list(self.finished):
            timing = request.timing
            if timing["responseEnd"] < 0 or timing["startTime"] + timing["responseEnd"] > until:
                continue
            sizes = request.sizes()
            name = request.url.rsplit("/", 1)[-1].split("?")[0].split("#")[0] or "(page)"
            by_file[name] = by_file.get(name, 0) + sizes["responseBodySize"] + sizes["responseHeadersSize"]
        return {"bytes": sum(by_file.values()), "by_file": by_file}


def _throttled_pair(pw: Any, base: str, floor_url: str, problem_id: str, bytelog: ByteLog,
                    sizes: Sizes) -> dict[str, Any]:
    """A first visit at 10 Mbit/s: the app (Run usable, page usable, bytes until then) and the floor."""
    out: dict[str, Any] = {}
    with profile(pw) as context:
        page = _page(context)
        received = _throttle(context, page)
        mark = bytelog.mark()
        ready = app_ready(page, f"{base}#/{problem_id}")
        out["app_ms"] = ready["ms"]
        out["app_page_ms"] = page.evaluate("window.__benchPageAt")
        out["app_bytes"] = sizes.totals(bytelog.since(mark))  # what the server had written by then
        out["app_received"] = received.before(page, ready["ms"])  # the responses in by then
    with profile(pw) as context:
        page = _page(context)
        _throttle(context, page)
        mark = bytelog.mark()
        out["floor_ms"] = floor_visit(page, floor_url, reload=False)["ms"]
        out["floor_bytes"] = sizes.totals(bytelog.since(mark))
    return out


def _app_pair(pw: Any, base: str, problems: list[Problem], at_ready: Problem, numpy_at_ready: Problem | None,
              reruns: int, bytelog: ByteLog, sizes: Sizes) -> dict[str, Any]:
    """Cold visit; the verdicts in that page; then the repeat visits, which press Run the moment
    the engine is ready (a numpy problem first, then ``at_ready``).

    The repeat visits come after the page was used, as a learner's would: how much of
    pyodide.asm.wasm V8 has optimised, and so keeps in its code cache for the next visit, depends
    on how much Python ran (reloading a page that only booted gives a much smaller gain).
    """
    with profile(pw) as context:
        page = _page(context)
        mark = bytelog.mark()
        cold = app_ready(page, base)
        cold["mode"] = page.evaluate("window.ppJudge.pool.primary.mode")
        cold["bytes_to_ready"] = sizes.totals(bytelog.since(mark))
        if numpy_at_ready is not None:
            page.evaluate("window.ppJudge.pool.wantNumpy()")  # numpy loads for the problems that import it
        wait_settled(page)
        cold["bytes"] = sizes.totals(bytelog.since(mark))  # the whole first visit: boot, numpy, spare, precache
        cold["numpy_ms"] = page.evaluate("window.ppJudge.pool.primary.numpyMs")
        verdicts = app_verdicts(page, problems, reruns)
        first_at_ready = numpy_at_ready or at_ready
        select(page, first_at_ready.id)  # the repeat visit opens on this problem, its reference in the editor
        page.evaluate(SET_CODE_SCRIPT, _reference(first_at_ready))
        mark = bytelog.mark()
        repeat = app_ready(page, None)
        repeat["mode"] = page.evaluate("window.ppJudge.pool.primary.mode")
        at_ready_ms = run_once(page, first_at_ready.id)
        repeat["bytes_to_ready"] = sizes.totals(bytelog.since(mark))
        wait_settled(page)
        repeat["bytes"] = sizes.totals(bytelog.since(mark))
        repeat["verdict_at_ready_ms"] = {first_at_ready.id: at_ready_ms}
        if numpy_at_ready is not None and at_ready is not numpy_at_ready:
            select(page, at_ready.id)
            page.evaluate(SET_CODE_SCRIPT, _reference(at_ready))
            again = app_ready(page, None)
            repeat["verdict_at_ready_ms"][at_ready.id] = run_once(page, at_ready.id)
            repeat["second_repeat_ms"] = again["ms"]
            wait_settled(page)
        errors = page._bench_errors  # noqa: SLF001
    return {"cold": cold, "repeat": repeat, "verdicts": verdicts, "page_errors": errors}


# ---------------------------------------------------------------------------------------------
# summary


def _until_ready(throttled: dict[str, Any]) -> float:
    """The app's bytes until Run was usable: the responses Chromium had received by then (the
    server's count where that is missing, an older JSON)."""
    received = throttled.get("app_received", {}).get("bytes")
    return float(received) if received else float(throttled["app_bytes"]["bytes"])


def _median(values: list[float]) -> float:
    return float(statistics.median(values)) if values else float("nan")


def summarise(rows: list[dict[str, Any]], problems: list[Problem], at_ready: Problem, numpy_at_ready: Problem | None,
              reruns: int, build_s: float, load_before: tuple[float, float, float],
              snapshot: dict[str, Any] | None = None) -> dict[str, Any]:
    floor_cold = [r["floor"]["cold"]["ms"] for r in rows]
    floor_repeat = [r["floor"]["repeat"]["ms"] for r in rows]
    app_cold = [r["app"]["cold"]["ms"] for r in rows]
    app_repeat = [r["app"]["repeat"]["ms"] for r in rows]

    def per_problem(key: str) -> dict[str, float]:
        return {p.id: _median([r["app"]["verdicts"][p.id][key] for r in rows if key in r["app"]["verdicts"][p.id]])
                for p in problems}

    first, warm = per_problem("first_ms"), per_problem("rerun_ms")
    ratios = {
        "ready_cold_vs_floor": _median([a / f for a, f in zip(app_cold, floor_cold)]),
        "ready_repeat_vs_floor_repeat": _median([a / f for a, f in zip(app_repeat, floor_repeat)]),
        "repeat_vs_cold": _median([a / c for a, c in zip(app_repeat, app_cold)]),
        "floor_repeat_vs_cold": _median([a / c for a, c in zip(floor_repeat, floor_cold)]),
    }
    if numpy_at_ready is not None and reruns:
        # against a learner's re-run (a fresh engine that never ran these tests); the re-runs that
        # alternate with bare pytest.main follow one on the same tests in the same engine (warmer)
        numpy_rows = [r["app"]["verdicts"][numpy_at_ready.id] for r in rows]
        ratios["first_verdict_numpy_vs_rerun"] = _median([v["first_ms"] / v.get("learner_rerun_ms", v["rerun_ms"])
                                                          for v in numpy_rows])
        ratios["first_verdict_numpy_vs_warmed_rerun"] = _median([v["first_ms"] / v["rerun_ms"] for v in numpy_rows])
    before_rows = [r for r in rows if "before" in r]
    slow = [r["throttled"] for r in rows if "throttled" in r]
    throttled: dict[str, Any] = {}
    if slow:
        ratios["throttled_ready_vs_floor"] = _median([t["app_ms"] / t["floor_ms"] for t in slow])
        ratios["throttled_page_vs_floor"] = _median([t["app_page_ms"] / t["floor_ms"] for t in slow])
        ratios["throttled_bytes_vs_floor"] = _median([_until_ready(t) / t["floor_bytes"]["bytes"] for t in slow])
        ratios["throttled_bytes_vs_issue"] = _median([_until_ready(t) / ISSUE_24_BYTES for t in slow])
        throttled = {"app_ready_ms": _median([t["app_ms"] for t in slow]),
                     "app_page_ms": _median([t["app_page_ms"] for t in slow]),
                     "floor_ms": _median([t["floor_ms"] for t in slow]),
                     "app_bytes": _median([_until_ready(t) for t in slow]),
                     "app_bytes_written": _median([t["app_bytes"]["bytes"] for t in slow]),
                     "app_received_by_file": slow[0].get("app_received", {}).get("by_file", {}),
                     "floor_bytes": _median([t["floor_bytes"]["bytes"] for t in slow]),
                     "app_by_folder": slow[0]["app_bytes"]["by_folder"], "profile": THROTTLE,
                     "issue_bytes": ISSUE_24_BYTES}

    def before_ratio(top: Any, bottom: Any) -> float:
        return _median([top(r) / bottom(r) for r in before_rows])

    if before_rows:
        ratios["ready_cold_vs_before_cold"] = before_ratio(lambda r: r["app"]["cold"]["ms"],
                                                           lambda r: r["before"]["cold"]["ms"])
        ratios["ready_repeat_vs_before_repeat"] = before_ratio(lambda r: r["app"]["repeat"]["ms"],
                                                               lambda r: r["before"]["repeat"]["ms"])
        ratios["before_cold_vs_floor"] = before_ratio(lambda r: r["before"]["cold"]["ms"],
                                                      lambda r: r["floor"]["cold"]["ms"])
        ratios["before_repeat_vs_floor_repeat"] = before_ratio(lambda r: r["before"]["repeat"]["ms"],
                                                               lambda r: r["floor"]["repeat"]["ms"])
        ratios["first_visit_bytes_vs_before"] = before_ratio(lambda r: r["app"]["cold"]["bytes"]["bytes"],
                                                             lambda r: r["before"]["cold"]["bytes"]["bytes"])
        ratios["first_visit_gzip_bytes_vs_before"] = before_ratio(lambda r: r["app"]["cold"]["bytes"]["gzip_bytes"],
                                                                  lambda r: r["before"]["cold"]["bytes"]["gzip_bytes"])
    repeat_pyodide_bytes = max(r["app"]["repeat"]["bytes"]["pyodide_bytes"] for r in rows)
    rerun_vs_bare = per_problem("rerun_vs_bare_pytest")
    checks: dict[str, bool] = {key: ratios[key] <= TARGETS[key] for key in ("ready_cold_vs_floor", "ready_repeat_vs_floor_repeat",
                                                             "first_visit_bytes_vs_before") if key in ratios}
    checks["first_verdict_ms"] = max(first.values()) < TARGETS["first_verdict_ms"]
    checks["repeat_pyodide_bytes"] = repeat_pyodide_bytes <= TARGETS["repeat_pyodide_bytes"]
    for key in ("throttled_ready_vs_floor", "throttled_bytes_vs_issue"):
        if key in ratios:
            checks[key] = ratios[key] <= TARGETS[key]
    if "first_verdict_numpy_vs_rerun" in ratios:
        checks["first_verdict_numpy_vs_rerun"] = ratios["first_verdict_numpy_vs_rerun"] < TARGETS["first_verdict_numpy_vs_rerun"]
    if RERUN_TARGET_PROBLEM in rerun_vs_bare and reruns:
        checks["rerun_vs_bare_pytest"] = rerun_vs_bare[RERUN_TARGET_PROBLEM] <= TARGETS["rerun_vs_bare_pytest"]

    def timings(side: str, visit: str) -> dict[str, float]:
        found = [r[side][visit].get("timings") or {} for r in rows if side in r]
        keys = sorted({k for t in found for k, v in t.items() if isinstance(v, (int, float))})
        return {k: _median([t[k] for t in found if k in t]) for k in keys}

    sides = ["floor", "app"] + (["before"] if before_rows else [])
    median_bytes = {f"{side}_{visit}": {k: _median([r[side][visit]["bytes"][k] for r in rows if side in r])
                                        for k in ("bytes", "gzip_bytes", "pyodide_bytes", "pyodide_gzip_bytes",
                                                  "requests")}
                    for side in sides for visit in ("cold", "repeat")}
    extra_median: dict[str, Any] = {}
    if before_rows:
        extra_median = {"before_cold_ready_ms": _median([r["before"]["cold"]["ms"] for r in before_rows]),
                        "before_repeat_ready_ms": _median([r["before"]["repeat"]["ms"] for r in before_rows])}
    at_ready_ids = sorted({k for r in rows for k in r["app"]["repeat"]["verdict_at_ready_ms"]})
    return {
        "machine": {"nproc": os.cpu_count(), "load_before": [round(x, 2) for x in load_before],
                    "load_after": [round(x, 2) for x in os.getloadavg()], "chromium": str(CHROMIUM),
                    "pyodide": pyodide_dist.PYODIDE_VERSION},
        "repeats": len(rows), "reruns": reruns, "problems": [p.id for p in problems], "build_s": round(build_s, 2),
        "at_ready_problem": at_ready.id, "numpy_problem": numpy_at_ready.id if numpy_at_ready else None,
        "snapshot": snapshot,
        "modes": sorted({r["app"][v]["mode"] for r in rows for v in ("cold", "repeat")}),
        "median": {
            "floor_cold_ms": _median(floor_cold), "floor_repeat_ms": _median(floor_repeat),
            "app_cold_ready_ms": _median(app_cold), "app_repeat_ready_ms": _median(app_repeat),
            "app_numpy_loaded_ms": _median([r["app"]["cold"]["numpy_ms"] for r in rows
                                            if r["app"]["cold"].get("numpy_ms") is not None]),
            "verdict_at_ready_repeat_ms": {pid: _median([r["app"]["repeat"]["verdict_at_ready_ms"][pid] for r in rows
                                                         if pid in r["app"]["repeat"]["verdict_at_ready_ms"]])
                                           for pid in at_ready_ids},
            "first_verdict_ms": first, "rerun_median_ms": warm, "learner_rerun_ms": per_problem("learner_rerun_ms"),
            "first_engine_ms": per_problem("first_engine_ms"), "rerun_engine_ms": per_problem("rerun_engine_ms"),
            "bare_pytest_rerun_ms": per_problem("bare_ms"), "bare_pytest_inside_ms": per_problem("bare_pytest_ms"),
            "rerun_vs_bare_pytest": rerun_vs_bare,
            **extra_median,
            "bytes": median_bytes,
            "timings": {f"{side}_{visit}": timings(side, visit) for side in sides for visit in ("cold", "repeat")},
        },
        "ratios": ratios, "targets": TARGETS, "meets": checks,
        "throttled": throttled,
        "runs": rows,
    }


def _mb(n: float) -> str:
    return f"{n / 1e6:.2f} MB"


def print_table(data: dict[str, Any], out: Any = None) -> None:
    out = out or sys.stdout
    m, ratios, meets, targets = data["median"], data["ratios"], data["meets"], data["targets"]

    def verdict(key: str) -> str:
        if key not in meets:
            return ""
        return "meets" if meets[key] else "MISSES"

    def line(label: str, ms: float | None, ratio: float | None = None, key: str | None = None, unit: str = "s") -> None:
        value = "" if ms is None else (f"{ms / 1000:>9.2f}s" if unit == "s" else f"{ms:>8.0f}ms")
        r = "" if ratio is None else f"{ratio:>7.2f}"
        target = f"{'<= ' + str(targets[key]):>8}" if key else ""
        w(f"  {label:<52} {value:>10} {r:>7} {target:>8}  {verdict(key) if key else ''}")

    w = functools.partial(print, file=out)
    w(f"Browser ({len(data['problems'])} problems, {data['repeats']} repeats, {data['reruns']} warm re-runs; "
      f"Chromium headless, Pyodide {data['machine']['pyodide']}, nproc {data['machine']['nproc']}, "
      f"load {data['machine']['load_before'][0]:.2f} -> {data['machine']['load_after'][0]:.2f}; "
      f"engine boots: {', '.join(data['modes'])})")
    w(f"  {'measure':<52} {'median':>10} {'ratio':>7} {'target':>8}  verdict")
    line("floor: imported numpy+pytest, cold", m["floor_cold_ms"])
    line("floor: imported, repeat visit", m["floor_repeat_ms"], ratios["floor_repeat_vs_cold"])
    line("app: engine ready, cold (/ floor cold)", m["app_cold_ready_ms"], ratios["ready_cold_vs_floor"],
         "ready_cold_vs_floor")
    line("app: engine ready, repeat (/ floor repeat)", m["app_repeat_ready_ms"], ratios["ready_repeat_vs_floor_repeat"],
         "ready_repeat_vs_floor_repeat")
    line("app: ready, repeat (/ app cold)", None, ratios["repeat_vs_cold"])
    if m.get("app_numpy_loaded_ms") == m.get("app_numpy_loaded_ms"):  # not NaN
        line("app: numpy loaded in the background, after ready", m["app_numpy_loaded_ms"])
    if "before_cold_ready_ms" in m:
        line("before (no snapshot): ready cold (/ floor)", m["before_cold_ready_ms"], ratios["before_cold_vs_floor"])
        line("before (no snapshot): ready repeat (/ floor repeat)", m["before_repeat_ready_ms"],
             ratios["before_repeat_vs_floor_repeat"])
        line("app / before, cold", None, ratios["ready_cold_vs_before_cold"])
        line("app / before, repeat", None, ratios["ready_repeat_vs_before_repeat"])
    for key, label in (("app_cold", "app cold"), ("app_repeat", "app repeat"), ("floor_cold", "floor cold"),
                       ("floor_repeat", "floor repeat"), ("before_cold", "before cold"),
                       ("before_repeat", "before repeat")):
        t = m["timings"].get(key)
        if t:
            w(f"    in the worker, {label}: " + ", ".join(f"{k} {v / 1000:.2f}s" for k, v in t.items()))
    for pid, ms in m["verdict_at_ready_repeat_ms"].items():
        line(f"app: verdict when Run at ready, repeat ({pid})", ms, unit="ms")
    if "first_verdict_numpy_vs_rerun" in ratios:
        pid = data["numpy_problem"]
        line(f"{pid}: first verdict, numpy loaded (/ a learner's re-run)", m["first_verdict_ms"][pid],
             ratios["first_verdict_numpy_vs_rerun"], "first_verdict_numpy_vs_rerun", unit="ms")
        if "first_verdict_numpy_vs_warmed_rerun" in ratios:
            line(f"{pid}: first verdict (/ a re-run after a bare pytest.main)", None,
                 ratios["first_verdict_numpy_vs_warmed_rerun"])
    w(f"  {'per problem (ms, medians)':<30} {'first':>7} {'re-run':>7} {'runner':>7} {'bare':>7} {'pytest':>7} "
      f"{'re-run/bare':>11}")
    for pid, first in m["first_verdict_ms"].items():
        rerun, engine, bare, inside, ratio = (m[key].get(pid, float("nan")) for key in (
            "rerun_median_ms", "rerun_engine_ms", "bare_pytest_rerun_ms", "bare_pytest_inside_ms", "rerun_vs_bare_pytest"))
        mark = "" if first < targets["first_verdict_ms"] else "  first verdict >= 500 ms"
        if pid == RERUN_TARGET_PROBLEM and "rerun_vs_bare_pytest" in meets:
            mark += f"  (target <= {targets['rerun_vs_bare_pytest']}: {verdict('rerun_vs_bare_pytest')})"
        w(f"    {pid:<28} {first:>7.0f} {rerun:>7.0f} {engine:>7.0f} {bare:>7.0f} {inside:>7.0f} {ratio:>11.2f}{mark}")
    w("      (re-run: click to verdict in the page; runner: the judge's run inside the worker; bare: the page's round "
      "trip for a bare pytest.main on the same tests in the same engine; pytest: that pytest.main alone)")
    w(f"  {'bytes from the server':<52} {'all':>10} {'gzip':>10} {'Pyodide':>10} {'requests':>9}")
    for key, label in (("floor_cold", "floor, first visit"), ("floor_repeat", "floor, repeat visit"),
                       ("app_cold", "app, first visit (incl. numpy, spare, precache)"),
                       ("app_repeat", "app, repeat visit"), ("before_cold", "before (no snapshot), first visit"),
                       ("before_repeat", "before (no snapshot), repeat visit")):
        if key not in m["bytes"]:
            continue
        b = m["bytes"][key]
        w(f"  {'  ' + label:<52} {_mb(b['bytes']):>10} {_mb(b['gzip_bytes']):>10} {_mb(b['pyodide_bytes']):>10} "
          f"{b['requests']:>9.0f}")
    w(f"  repeat-visit Pyodide bytes: {m['bytes']['app_repeat']['pyodide_bytes']:.0f} "
      f"(target {targets['repeat_pyodide_bytes']}: {verdict('repeat_pyodide_bytes')})")
    t = data.get("throttled") or {}
    if t:
        w(f"  first visit at 10 Mbit/s (Chromium network emulation, {t['profile']['latency']} ms latency), "
          "side by side with the floor under the same throttle:")
        line("  app: Run usable (engine ready) (/ floor imported)", t["app_ready_ms"], ratios["throttled_ready_vs_floor"],
             "throttled_ready_vs_floor")
        line("  app: page usable (statement, editor) (/ floor)", t["app_page_ms"], ratios["throttled_page_vs_floor"])
        line("  floor: imported numpy+pytest", t["floor_ms"])
        w(f"    bytes until Run is usable (responses Chromium had received; the server had written "
          f"{_mb(t.get('app_bytes_written', t['app_bytes']))}): app {_mb(t['app_bytes'])}, floor {_mb(t['floor_bytes'])} "
          f"(app / floor {ratios['throttled_bytes_vs_floor']:.2f}); app / the {_mb(t['issue_bytes'])} of issue 24: "
          f"{ratios['throttled_bytes_vs_issue']:.2f} (target <= {targets['throttled_bytes_vs_issue']}: "
          f"{verdict('throttled_bytes_vs_issue')})")
        w("    app bytes by folder (written): " + ", ".join(
            f"{k} {_mb(v)}" for k, v in sorted(t["app_by_folder"].items(), key=lambda kv: -kv[1])[:6]))
        if t.get("app_received_by_file"):
            w("    app bytes received before Run was usable, by file: " + ", ".join(
                f"{k} {_mb(v)}" for k, v in sorted(t["app_received_by_file"].items(), key=lambda kv: -kv[1])[:6]))
    if "first_visit_bytes_vs_before" in ratios:
        w(f"  first-visit bytes / before (no snapshot): {ratios['first_visit_bytes_vs_before']:.2f} "
          f"(gzip {ratios['first_visit_gzip_bytes_vs_before']:.2f}; target <= "
          f"{targets['first_visit_bytes_vs_before']}: {verdict('first_visit_bytes_vs_before')})")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problems", type=Path, default=ROOT / "problems")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--reruns", type=int, default=10, help="warm re-runs per problem (median reported)")
    parser.add_argument("--only", nargs="*", help="only these problem ids")
    parser.add_argument("--no-before", "--no-plain", dest="no_before", action="store_true",
                        help="skip the same-run comparison with the app without the memory snapshot")
    parser.add_argument("--no-throttled", dest="no_throttled", action="store_true",
                        help="skip the first visit at 10 Mbit/s (app and floor)")
    parser.add_argument("--json", type=Path, help="also write the figures to this JSON file")
    args = parser.parse_args(argv)
    try:
        data = measure(args.problems, args.repeats, args.reruns, args.only,
                       log=lambda s: print(s, file=sys.stderr, flush=True), before=not args.no_before,
                       throttled=not args.no_throttled)
    except BenchError as exc:
        print(f"bench.browser: {exc}", file=sys.stderr)
        return 2
    report(data, print_table, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
