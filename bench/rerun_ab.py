"""Warm re-runs against bare ``pytest.main``, side by side for two (or more) built sites.

``bench.browser`` measures one site; comparing two versions of the engine that way puts minutes of
a shared machine's changing load between them. This serves every site given (each built with
``python -m judge build SITE`` from the version to compare), opens each in its own fresh browser
context in one Chromium, waits until every page is settled (spare ready, numpy loaded, problems
prepared, service worker installed), and then, problem by problem, lets the sites take turns:
per round and site, N warm re-runs (Run pressed in the page, timed from the click to the verdict),
each followed by a bare ``pytest.main`` on the same tests in the same engine (``pool.barePytest``,
the round trip timed from the page), exactly as ``bench.browser`` does. The ratio per problem is
the median of rerun / bare over the pairs; "engine" is the runner's own time in the worker over
pytest.main's own time there.

    python -m bench.rerun_ab [--reruns N] [--rounds R] [--only ID ...] [--json FILE] LABEL=SITE ...
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import sys
import threading
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import browser as bb  # noqa: E402
from judge.core.problem import discover_problems  # noqa: E402


def _serve(site: Path) -> tuple[Any, str]:
    from judge.commands.site.serve import make_server, server_url

    server = make_server(site, "127.0.0.1", 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, server_url(server)


def measure(sites: list[tuple[str, Path]], problems_dir: Path, reruns: int, rounds: int,
            only: list[str] | None, log: Any = print) -> dict[str, Any]:
    bb._need_browser()  # noqa: SLF001
    from playwright.sync_api import sync_playwright

    problems, errors = discover_problems(problems_dir)
    if errors:
        raise bb.BenchError(f"cannot benchmark {problems_dir}: {errors}")
    problems = [p for p in problems if not only or p.id in only]
    load_before = os.getloadavg()
    rows: dict[str, dict[str, dict[str, list[float]]]] = {
        label: {p.id: {"rerun": [], "bare": [], "engine": [], "bare_pytest": []} for p in problems}
        for label, _ in sites}
    with contextlib.ExitStack() as stack:
        servers = [_serve(site) for _, site in sites]
        for server, _ in servers:
            stack.callback(server.server_close)
            stack.callback(server.shutdown)
        pw = stack.enter_context(sync_playwright())
        chromium = pw.chromium.launch(executable_path=str(bb.CHROMIUM), args=bb.CHROMIUM_ARGS)
        stack.callback(chromium.close)
        pages = {}
        for (label, _), (_, url) in zip(sites, servers):
            page = chromium.new_context(viewport={"width": 1366, "height": 800}).new_page()
            page.add_init_script(bb.INIT_SCRIPT)
            page.goto(url, wait_until="commit")
            pages[label] = page
        for page in pages.values():
            bb._wait(page, "window.__benchReadyAt", bb.BOOT_TIMEOUT_S, "the engine becoming ready")  # noqa: SLF001
            page.evaluate("window.ppJudge.pool.wantNumpy()")
        for page in pages.values():
            bb.wait_settled(page)
        for problem in problems:
            source = bb._reference(problem)  # noqa: SLF001
            for page in pages.values():
                bb.select(page, problem.id)
                page.evaluate(bb.SET_CODE_SCRIPT, source)
                bb.run_once(page, problem.id)  # the first verdict: not a re-run
            for _ in range(rounds):
                for label, page in pages.items():
                    row = rows[label][problem.id]
                    for _ in range(max(1, reruns // rounds)):
                        row["rerun"].append(bb.run_once(page, problem.id))
                        row["engine"].append(page.evaluate("window.ppJudge.metrics.lastRunEngineMs"))
                        round_trip, inside = page.evaluate(bb.BARE_SCRIPT, source)
                        row["bare"].append(round_trip)
                        row["bare_pytest"].append(inside)
            log("  " + problem.id.ljust(20) + "  ".join(
                f"{label} {_ratio(rows[label][problem.id], 'rerun', 'bare'):.2f}" for label, _ in sites))
    summary = {label: {pid: {"rerun_ms": statistics.median(r["rerun"]), "bare_ms": statistics.median(r["bare"]),
                             "rerun_vs_bare_pytest": _ratio(r, "rerun", "bare"),
                             "engine_vs_bare_pytest": _ratio(r, "engine", "bare_pytest")}
                       for pid, r in per.items()} for label, per in rows.items()}
    return {"sites": {label: str(site) for label, site in sites}, "reruns": reruns, "rounds": rounds,
            "load_before": [round(x, 2) for x in load_before],
            "load_after": [round(x, 2) for x in os.getloadavg()], "nproc": os.cpu_count(),
            "summary": summary, "raw": rows}


def _ratio(row: dict[str, list[float]], top: str, bottom: str) -> float:
    return float(statistics.median(a / b for a, b in zip(row[top], row[bottom])))


def print_table(data: dict[str, Any], out: Any = None) -> None:
    out = out or sys.stdout
    labels = list(data["sites"])
    print(f"warm re-run / bare pytest.main, same tests, same engine (median of {data['reruns']} pairs; "
          f"load {data['load_before'][0]:.1f} -> {data['load_after'][0]:.1f} on {data['nproc']} cores)", file=out)
    print("problem".ljust(20) + "".join(f"{label:>26}" for label in labels), file=out)
    for pid in data["summary"][labels[0]]:
        cells = []
        for label in labels:
            s = data["summary"][label][pid]
            cells.append(f"{s['rerun_vs_bare_pytest']:.2f}x ({s['rerun_ms']:.0f}/{s['bare_ms']:.0f} ms)")
        print(pid.ljust(20) + "".join(f"{c:>26}" for c in cells), file=out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sites", nargs="+", help="LABEL=SITE_DIR, built with python -m judge build")
    parser.add_argument("--problems", type=Path, default=ROOT / "problems")
    parser.add_argument("--reruns", type=int, default=6, help="warm re-runs per problem and site")
    parser.add_argument("--rounds", type=int, default=2, help="turns per problem (the re-runs split between them)")
    parser.add_argument("--only", nargs="*", help="only these problem ids")
    parser.add_argument("--json", type=Path, help="also write the figures to this JSON file")
    args = parser.parse_args(argv)
    sites = []
    for spec in args.sites:
        label, _, folder = spec.partition("=")
        if not folder or not (Path(folder) / "index.html").is_file():
            parser.error(f"{spec}: give LABEL=SITE_DIR, a folder built with python -m judge build")
        sites.append((label, Path(folder)))
    try:
        data = measure(sites, args.problems, args.reruns, args.rounds, args.only,
                       log=lambda s: print(s, file=sys.stderr, flush=True))
    except bb.BenchError as exc:
        print(f"bench.rerun_ab: {exc}", file=sys.stderr)
        return 2
    print_table(data)
    if args.json:
        args.json.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
