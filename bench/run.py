"""Run every benchmark (native and browser) and print one table: ``python -m bench.run``.

- native (:mod:`bench.native`): ``python -m judge`` over every problem's reference against bare
  pytest over the same tests in one process, cold processes, median ratios (default ``-j``
  <= 1.0, ``-j 1`` <= 1.3);
- boundary (:mod:`bench.boundary`): the codec's cost per value, a call across the trust boundary at
  every sandbox level against a direct call, and per problem the round trips and their share;
- time limits (:mod:`bench.limits`): each reference's CPU time against its limit (>= 10x headroom),
  and a job's cost at each sandbox level (bubblewrap, user with ``--user-python``, plain);
- class grading (:mod:`bench.grade`): ``judge grade`` on N synthetic submissions against a shell loop
  of ``python -m judge`` (<= 0.4x), with the peak memory of each;
- browser (:mod:`bench.browser`): the web app against a bare Pyodide page that loads the same
  files, cold and on a repeat visit, first verdicts, warm re-runs against bare ``pytest.main`` in
  the same engine, bytes, and the same app without its memory snapshot.

Beside the targets, the floors no isolation can get under (:func:`floors`): judging itself with no
process boundary and no start-up, alone and spread over every core.

The figures go to ``bench/results/latest.json`` (or ``--json FILE``) with the machine they came
from (CPU count, load average before and after). Ratios are taken within one run; absolute times
on a shared machine are noisy.

    python -m bench.run [--problems DIR] [--native-repeats N] [--browser-repeats N] [--reruns N]
                        [--grade-submissions N] [--only ID ...] [--skip-native] [--skip-boundary]
                        [--skip-grade] [--skip-browser] [--skip-limits] [--limits-only ID ...]
                        [--user-python PATH] [--no-before] [--json FILE]
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import statistics
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import boundary, browser, grade, limits, native  # noqa: E402

DEFAULT_JSON = ROOT / "bench" / "results" / "latest.json"


def machine() -> dict[str, Any]:
    return {"nproc": os.cpu_count(), "load": [round(x, 2) for x in os.getloadavg()],
            "platform": platform.platform(), "python": platform.python_version(),
            "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problems", type=Path, default=ROOT / "problems")
    parser.add_argument("--native-repeats", type=int, default=5)
    parser.add_argument("--browser-repeats", type=int, default=3)
    parser.add_argument("--reruns", type=int, default=10, help="warm re-runs per problem in the browser")
    parser.add_argument("--only", nargs="*", help="browser: only these problem ids")
    parser.add_argument("--skip-native", action="store_true")
    parser.add_argument("--grade-submissions", type=int, default=200, help="class grading: submissions")
    parser.add_argument("--skip-boundary", action="store_true")
    parser.add_argument("--skip-limits", action="store_true")
    parser.add_argument("--limits-only", nargs="*", default=None,
                        help="time limits: only these problem ids (default: every problem)")
    parser.add_argument("--user-python", help="isolation per job: a Python an unprivileged identity can run, with "
                        "the judge installed (the user level is measured only with it)")
    parser.add_argument("--skip-grade", action="store_true")
    parser.add_argument("--skip-browser", action="store_true")
    parser.add_argument("--no-before", "--no-plain", dest="no_before", action="store_true",
                        help="browser: skip the same-run comparison with the app without the memory snapshot")
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON)
    args = parser.parse_args(argv)

    data: dict[str, Any] = {"machine": machine()}
    progress = lambda s: print(s, file=sys.stderr, flush=True)  # noqa: E731
    if not args.skip_native:
        progress(f"native: {args.native_repeats} repeats...")
        data["native"] = native.measure(args.problems, args.native_repeats)
    if not args.skip_boundary:
        progress("boundary: the codec, calls at each sandbox level, every problem's reference...")
        data["boundary"] = boundary.measure(args.problems, 2000)
    if not args.skip_limits:
        progress("time limits: each reference's CPU time against its limit, a job at each sandbox level...")
        data["limits"] = limits.measure(args.problems, args.limits_only, 1, args.user_python)
    if not args.skip_grade:
        progress(f"class grading: {args.grade_submissions} submissions, judge grade against a loop...")
        data["grade"] = grade.measure(args.problems, args.grade_submissions)
    if not args.skip_browser:
        progress(f"browser: {args.browser_repeats} repeats (a cold boot takes a few seconds each)...")
        try:
            data["browser"] = browser.measure(args.problems, args.browser_repeats, args.reruns, args.only,
                                              log=progress, before=not args.no_before)
        except browser.BenchError as exc:
            print(f"bench.run: browser benchmark failed: {exc}", file=sys.stderr)
            return 2
    data["machine"]["load_after"] = [round(x, 2) for x in os.getloadavg()]

    m = data["machine"]
    print(f"Machine: {m['nproc']} CPUs, load {m['load'][0]:.2f} -> {m['load_after'][0]:.2f}, {m['platform']}, "
          f"Python {m['python']}, {m['date']}")
    if "native" in data:
        native.print_table(data["native"])
    for name, module in (("boundary", boundary), ("limits", limits), ("grade", grade), ("browser", browser)):
        if name in data:
            module.print_table(data[name])
    data["floors"] = floors(data)
    if data["floors"]:
        print(floors_line(data["floors"]))
    print(summary_line(data))
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(data, indent=2) + "\n")
    print(f"Figures written to {args.json}")
    return 0


def floors(data: dict[str, Any]) -> dict[str, float]:
    """The ratios no isolation can get under: judging itself (the judge in one warm interpreter, no process
    boundary, no start-up) against bare pytest, alone and spread over every core, and class grading's
    (the references' judging spread over every core against the loop's ``python -m judge`` per
    submission). A target below its floor needs judging to cost less, not the sandbox."""
    if "native" not in data:
        return {}
    native_data = data["native"]
    one, cores = native_data["one_interpreter"], native_data["cpus"] or 1
    loop = statistics.median(native_data["judge_s"])
    return {"native_serial": round(one["ratio"], 3), "native": round(one["ratio"] / cores, 3),
            "grade": round(one["judge_s"] / cores / loop, 3)}


def floors_line(found: dict[str, float]) -> str:
    return ("Floors (judging itself, no boundary, no start-up, every core busy): "
            f"-j 1 >= {found['native_serial']:.2f}x, the default -j >= {found['native']:.2f}x bare pytest; "
            f"class grading >= {found['grade']:.2f}x the loop (the references)")


def summary_line(data: dict[str, Any]) -> str:
    meets: dict[str, bool] = {}
    if "native" in data:
        meets["native"] = data["native"]["median_ratio"] <= data["native"]["target_ratio"]
        meets["native_serial"] = data["native"]["median_ratio_serial"] <= data["native"]["target_ratio_serial"]
    if "grade" in data:
        meets["grade"] = data["grade"]["ratio"] <= data["grade"]["target_ratio"]
    if "limits" in data:
        meets.update({f"headroom.{row['problem']}": (row["headroom"] or 0) >= data["limits"]["target_headroom"]
                      for row in data["limits"]["headroom"]})
    if "browser" in data:
        meets.update({f"browser.{k}": v for k, v in data["browser"]["meets"].items()})
    missed = [k for k, ok in meets.items() if not ok]
    return (f"Targets: {len(meets) - len(missed)} of {len(meets)} met"
            + (f"; missed: {', '.join(missed)}" if missed else ""))


if __name__ == "__main__":
    sys.exit(main())
