"""Where the judge's own test suite spends its time: ``python -m bench.suite [PYTEST ARGS ...]``.

Runs ``python -m pytest`` with the given arguments (none: the full suite, as CI runs it) and the
recording plugin :mod:`tests.suite_profile`, samples the machine's CPU use from ``/proc/stat`` while it
runs, then prints:

- the run: wall time, tests, the machine's cores and how busy they were (all processes, the suite's
  and any other: a figure taken beside other work says so);
- each pytest-xdist worker: the tests it ran, its busy time and when it finished (a worker that
  finishes long before the others shows a group that holds the run up);
- each area (a test module; the browser and Pyodide tests are marked): tests, wall time summed over
  its tests, CPU time (the worker's and its waited-for processes'), and the CPU time of the worker's
  living descendants meanwhile (Chromium and Playwright's driver);
- the tests that took longest, set-up included (a session fixture's cost lands on the first test
  that asks for it).

``--from FILE`` summarises a profile recorded before (``--profile FILE`` keeps a run's) instead of
running the suite. The figures go to ``bench/results/suite.json`` (or ``--json FILE``). Absolute times
move from run to run on a shared machine: compare runs taken side by side.

    python -m bench.suite [--from PROFILE | --profile FILE] [--top N] [--json FILE] [PYTEST ARGS ...]
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import report  # noqa: E402
from tests.suite_profile import ENVIRONMENT  # noqa: E402

PROC_STAT = Path("/proc/stat")


class CpuSampler:
    """The machine's busy and total CPU ticks between :meth:`start` and :meth:`stop` (``/proc/stat``)."""

    def __init__(self) -> None:
        self.first: tuple[int, int] | None = None
        self.last: tuple[int, int] | None = None

    @staticmethod
    def read() -> tuple[int, int] | None:
        """(busy, total) ticks of all cores since boot; None where ``/proc/stat`` is missing."""
        try:
            fields = [int(value) for value in PROC_STAT.read_text().splitlines()[0].split()[1:]]
        except (OSError, ValueError, IndexError):
            return None
        idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
        return sum(fields) - idle, sum(fields)

    def start(self) -> None:
        self.first = self.read()

    def stop(self) -> None:
        self.last = self.read()

    def busy_share(self) -> float | None:
        """The share of the machine's CPU time that was busy, 0..1."""
        if self.first is None or self.last is None or self.last[1] == self.first[1]:
            return None
        return (self.last[0] - self.first[0]) / (self.last[1] - self.first[1])


def run_suite(pytest_args: list[str], profile: Path) -> tuple[int, float, float | None]:
    """Run the suite recording into ``profile``: (pytest's exit status, wall seconds, machine busy share)."""
    env = dict(os.environ, **{ENVIRONMENT: str(profile)})
    sampler = CpuSampler()
    sampler.start()
    started = time.monotonic()
    status = subprocess.call([sys.executable, "-m", "pytest", "-p", "tests.suite_profile", *pytest_args],
                             cwd=ROOT, env=env)
    wall = time.monotonic() - started
    sampler.stop()
    return status, wall, sampler.busy_share()


def area_of(node_id: str) -> str:
    """The module a test belongs to, with the browser and Pyodide tests named as such."""
    module = node_id.split("::")[0]
    if module.startswith("tests/browser/") or module.endswith("test_bench_browser.py"):
        return f"{module} (browser)"
    if module.startswith("tests/parity/") and not module.endswith("test_compare.py"):
        return f"{module} (pyodide)"
    return module


def summarise(records: list[dict[str, Any]], top: int) -> dict[str, Any]:
    """Per worker, per area and the longest tests of the recorded ``records``."""
    if not records:
        return {"tests": 0, "workers": [], "areas": [], "longest": []}
    origin = min(r["start"] for r in records)
    workers = []
    for name in sorted({r["worker"] for r in records}):
        mine = [r for r in records if r["worker"] == name]
        workers.append({"worker": name, "tests": len(mine), "busy_s": round(sum(r["wall"] for r in mine), 1),
                        "finished_s": round(max(r["start"] + r["wall"] for r in mine) - origin, 1)})
    areas: dict[str, list[float]] = collections.defaultdict(lambda: [0, 0.0, 0.0, 0.0])
    for record in records:
        area = areas[area_of(record["id"])]
        area[0] += 1
        area[1] += record["wall"]
        area[2] += record["cpu"]
        area[3] += record.get("descendants", 0.0)  # profiles before Chromium's CPU was recorded lack it
    ordered = sorted(areas.items(), key=lambda item: -item[1][1])
    rows = [{"area": name, "tests": int(count), "wall_s": round(wall, 1), "cpu_s": round(cpu, 1),
             "descendants_cpu_s": round(others, 1)} for name, (count, wall, cpu, others) in ordered]
    longest = sorted(records, key=lambda r: -r["wall"])[:top]
    return {"tests": len(records), "wall_sum_s": round(sum(r["wall"] for r in records), 1),
            "cpu_sum_s": round(sum(r["cpu"] for r in records), 1),
            "descendants_cpu_sum_s": round(sum(r.get("descendants", 0.0) for r in records), 1),
            "workers": workers, "areas": rows,
            "longest": [{"test": r["id"], "worker": r["worker"], "wall_s": round(r["wall"], 1),
                         "cpu_s": round(r["cpu"], 1), "descendants_cpu_s": round(r.get("descendants", 0.0), 1),
                         "started_s": round(r["start"] - origin, 1)} for r in longest]}


def read_profile(path: Path) -> list[dict[str, Any]]:
    """The records of a profile file (a line that does not read, as a write cut short, is skipped)."""
    records = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return records


def print_table(data: dict[str, Any]) -> None:
    run = data.get("run", {})
    if run:
        busy = run["machine_busy"]
        print(f"suite: {data['tests']} tests in {run['wall_s']:.0f} s (pytest exit status {run['status']}); "
              f"{run['cores']} cores, " + (f"{busy:.0%} busy" if busy is not None else "busy share unknown"))
    else:
        print(f"profile: {data['tests']} tests")
    print(f"summed over the tests: wall {data.get('wall_sum_s', 0):.0f} s, "
          f"CPU {data.get('cpu_sum_s', 0):.0f} s, and {data.get('descendants_cpu_sum_s', 0):.0f} s of their "
          "living descendants (Chromium)")
    print("\nworker      tests   busy s   finished at s")
    for worker in data["workers"]:
        print(f"{worker['worker']:<10} {worker['tests']:>6} {worker['busy_s']:>8.0f} {worker['finished_s']:>12.0f}")
    print("\n  wall s    CPU s  Chromium s  tests  area")
    for row in data["areas"]:
        print(f"{row['wall_s']:>8.0f} {row['cpu_s']:>8.0f} {row.get('descendants_cpu_s', 0):>11.0f} "
              f"{row['tests']:>6}  {row['area']}")
    print("\n  wall s    CPU s  Chromium s  start s  worker  longest tests (set-up included)")
    for row in data["longest"]:
        print(f"{row['wall_s']:>8.0f} {row['cpu_s']:>8.0f} {row.get('descendants_cpu_s', 0):>11.0f} "
              f"{row['started_s']:>8.0f}  {row['worker']:<6}  {row['test']}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.suite", description=__doc__.split("\n\n")[0],
                                     allow_abbrev=False)  # the rest goes to pytest as it is
    parser.add_argument("--from", dest="source", type=Path, help="summarise this recorded profile; run nothing")
    parser.add_argument("--top", type=int, default=20, help="how many of the longest tests to list (20)")
    parser.add_argument("--json", type=Path, default=ROOT / "bench" / "results" / "suite.json")
    parser.add_argument("--profile", type=Path, help="keep the run's per-test profile in this file (for --from)")
    args, pytest_args = parser.parse_known_args(argv)
    run: dict[str, Any] = {}
    if args.source:
        records = read_profile(args.source)
    else:
        with tempfile.TemporaryDirectory(prefix="pp-judge-suite-") as scratch:
            profile = Path(scratch) / "profile.jsonl"
            status, wall, busy = run_suite(pytest_args, profile)
            records = read_profile(profile) if profile.is_file() else []
            if args.profile and profile.is_file():
                shutil.copyfile(profile, args.profile)
        run = {"status": status, "wall_s": round(wall, 1), "machine_busy": busy, "cores": os.cpu_count(),
               "pytest_args": pytest_args}
    data = {**summarise(records, args.top), **({"run": run} if run else {})}
    report(data, print_table, args.json)
    return int(run.get("status", 0))


if __name__ == "__main__":
    sys.exit(main())
