"""What the integrity check (:mod:`judge.core.integrity`) adds to a warm run, natively and in Pyodide.

For each case (a problem's reference solution), the same run is timed with the check and with the
check replaced by a stand-in that does nothing, interleaved, and the medians are compared:

- native, in process: ``judge_source`` in a warm interpreter (as the browser engine runs: one
  interpreter for all runs), plus the check's own phases timed inside real runs (the snapshot
  before the import, each of the two checks, the restore);
- native, forked: ``judge_isolated`` (what ``python -m judge`` does: a child forked from a parent
  that imported numpy and pytest and primed the snapshot), the child's own run duration;
- pyodide: the in-process measurement, run inside Pyodide 0.27.7 under Node.js by the parity
  harness (one job whose test does the measuring and records the figures as an artifact).

    python -m bench.integrity [--repeats N] [--skip-pyodide] [--json FILE]
"""

from __future__ import annotations

import argparse
import inspect
import shutil
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench import report

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

CASES = [ROOT / "tests" / "fixtures" / "problems" / "fx-add", ROOT / "problems" / "pp-bubble-math",
         ROOT / "problems" / "pp-simulate"]



class NullWatch:
    """An integrity check that checks nothing: the run without the check, for comparison."""

    def __init__(self, *args: Any) -> None:
        pass

    def check(self, final: bool = False) -> list:
        return []

    def finish(self) -> None:
        pass

def measure_in_process(cases: list[tuple[str, str]], repeats: int) -> dict[str, Any]:
    """Median seconds of ``judge_source`` with and without the check, and of the check's phases.

    Self-contained (judge and the standard library only): its source also runs inside Pyodide.
    """
    import statistics
    import time

    from judge.core import integrity
    from judge.core.runner import judge_source

    real = integrity.Watch
    phases: dict[str, list[float]] = {"snapshot": [], "check": [], "finish": []}

    class Timed(real):  # type: ignore[misc, valid-type]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            started = time.perf_counter()
            super().__init__(*args, **kwargs)
            phases["snapshot"].append(time.perf_counter() - started)

        def check(self, final: bool = False) -> list:
            started = time.perf_counter()
            found = super().check(final)
            phases["check"].append(time.perf_counter() - started)
            return found

        def finish(self) -> None:
            started = time.perf_counter()
            super().finish()
            phases["finish"].append(time.perf_counter() - started)

    def timed_run(problem_dir: str, source: str, watch: type) -> float:
        integrity.Watch = watch  # type: ignore[misc, assignment]  # the benchmark swaps the check out
        try:
            started = time.perf_counter()
            result = judge_source(problem_dir, source, include_secret=True)
            elapsed = time.perf_counter() - started
        finally:
            integrity.Watch = real  # type: ignore[misc]
        if result.status != "passed":
            raise RuntimeError(f"{problem_dir}: the reference did not pass: {result.message}")
        return elapsed

    out: dict[str, Any] = {}
    for problem_dir, source in cases:
        timed_run(problem_dir, source, real)  # warm-up: first imports, first pytest session
        with_check, without = [], []
        for phase in phases.values():
            phase.clear()
        for _ in range(repeats):
            with_check.append(timed_run(problem_dir, source, Timed))
            without.append(timed_run(problem_dir, source, NullWatch))
        name = problem_dir.rstrip("/").rsplit("/", 1)[-1]
        out[name] = {
            "with_ms": round(statistics.median(with_check) * 1000, 2),
            "without_ms": round(statistics.median(without) * 1000, 2),
            "added_ms": round((statistics.median(with_check) - statistics.median(without)) * 1000, 2),
            "phases_ms": {k: round(statistics.median(v) * 1000, 2) for k, v in phases.items() if v},
        }
    return out


def measure_forked(repeats: int) -> dict[str, Any]:
    """Median run duration (measured in the child) of judge_isolated with and without the check."""
    from judge.core import integrity
    from judge.core.problem import load_problem
    from judge.engines.native import Job, judge_isolated

    real = integrity.Watch
    out: dict[str, Any] = {}
    for folder in CASES:
        problem = load_problem(folder)
        job = Job(problem, problem.reference_path, include_secret=True)
        judge_isolated(job)  # warm-up: the parent's imports and its primed snapshot
        with_check, without = [], []
        for _ in range(repeats):
            with_check.append(judge_isolated(job).duration)
            integrity.Watch = NullWatch  # type: ignore[misc, assignment]
            try:
                without.append(judge_isolated(job).duration)
            finally:
                integrity.Watch = real  # type: ignore[misc]
        out[problem.id] = {"with_ms": round(statistics.median(with_check) * 1000, 2),
                           "without_ms": round(statistics.median(without) * 1000, 2),
                           "added_ms": round((statistics.median(with_check) - statistics.median(without)) * 1000, 2)}
    return out


_PYODIDE_TEST = '''\
"""Runs inside Pyodide: measures the integrity check and records the figures."""

import pathlib

SOURCE = {source!r}


def test_measure(record_property):
    cases = pathlib.Path(__file__).parent / "cases"
    chosen = []
    for folder in sorted(cases.iterdir()):
        entry = next((folder / "reference").glob("*.py"))
        chosen.append((str(folder), entry.read_text(encoding="utf-8")))
    namespace = {{}}
    exec(SOURCE, namespace)
    record_property("integrity_cost", namespace["measure_in_process"](chosen, {repeats}))
'''


def measure_pyodide(repeats: int) -> dict[str, Any]:
    """The in-process measurement inside Pyodide (one harness job)."""
    from judge.core.problem import load_problem
    from judge.engines import Job
    from judge.engines import pyodide as parity

    scratch = Path(tempfile.mkdtemp(prefix="bench-integrity-"))
    try:
        folder = scratch / "bench-integrity"
        (folder / "tests" / "public").mkdir(parents=True)
        (folder / "reference").mkdir()
        (folder / "starter").mkdir()
        (folder / "problem.toml").write_text(
            'format = 1\nid = "bench-integrity"\ntitle = "Bench"\nsummary = "Bench."\norder = 1\n'
            'difficulty = "easy"\nentry = "bench.py"\ntime_limit = 600\ntags = []\n', encoding="utf-8")
        (folder / "README.md").write_text("# Bench\n", encoding="utf-8")
        for path in (folder / "reference" / "bench.py", folder / "starter" / "bench.py"):
            path.write_text("", encoding="utf-8")
        for case in CASES:
            shutil.copytree(case, folder / "tests" / "public" / "cases" / case.name,
                            ignore=shutil.ignore_patterns("__pycache__", "wrong"))
        source = inspect.getsource(measure_in_process).replace("Any", "object")
        (folder / "tests" / "public" / "test_bench.py").write_text(
            _PYODIDE_TEST.format(source=source, repeats=repeats), encoding="utf-8")
        job = Job(load_problem(folder, published=True), source="", time_limit=600.0, label="bench")
        run = parity.run_harness([job])
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    result = run.results[0]
    for test in result.get("tests", []):
        for artifact in test.get("artifacts", []):
            if artifact["name"] == "integrity_cost":
                return artifact["value"]
    raise RuntimeError(f"the Pyodide measurement failed: {result.get('message')} "
                       f"{[t.get('message') for t in result.get('tests', [])]}")


def measure(repeats: int, pyodide: bool = True) -> dict[str, Any]:
    cases = []
    for folder in CASES:
        entry = next((folder / "reference").glob("*.py"))
        cases.append((str(folder), entry.read_text(encoding="utf-8")))
    data: dict[str, Any] = {"repeats": repeats, "native_in_process": measure_in_process(cases, repeats),
                            "native_forked": measure_forked(repeats)}
    if pyodide:
        data["pyodide_in_process"] = measure_pyodide(repeats)
    return data


def print_table(data: dict[str, Any]) -> None:
    print(f"Integrity check: what it adds to a warm run (median of {data['repeats']} runs each)")
    print(f"  {'engine':<18} {'case':<16} {'with':>9} {'without':>9} {'added':>8}   phases (snapshot / check / finish)")
    for engine in ("native_in_process", "native_forked", "pyodide_in_process"):
        for case, row in data.get(engine, {}).items():
            phases = row.get("phases_ms", {})
            detail = " / ".join(f"{phases[k]:.1f}" for k in ("snapshot", "check", "finish") if k in phases)
            print(f"  {engine:<18} {case:<16} {row['with_ms']:>7.1f}ms {row['without_ms']:>7.1f}ms "
                  f"{row['added_ms']:>6.1f}ms   {detail + ' ms' if detail else ''}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--skip-pyodide", action="store_true")
    parser.add_argument("--json", type=Path, help="also write the figures to this JSON file")
    args = parser.parse_args(argv)
    data = measure(args.repeats, pyodide=not args.skip_pyodide)
    report(data, print_table, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
