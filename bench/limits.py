"""Time limits and the cost of isolation: ``python -m bench.limits``.

- Per problem, the reference's CPU time (the job's processes: the test process and the learner
  processes, as the native engine counts it against the limit) against the problem's time limit:
  the headroom a busy grader has (target: at least 10x for every problem).
- Per sandbox level (bubblewrap, user, plain), the wall time of judging a trivial problem (fx-add,
  four calls) and of its learner process's start, against the same job with the learner's side in
  the tests' own process: what isolation costs a job. The user level needs a Python an
  unprivileged identity can run (``--user-python``: a virtual environment of Debian's Python with
  the judge installed, as the Gradescope set-up makes); without it the row says so.

    python -m bench.limits [--problems DIR] [--only ID ...] [--repeats N] [--user-python PATH] [--json FILE]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import report  # noqa: E402
from judge.core.problem import discover_problems, load_problem  # noqa: E402
from judge.engines import Job, get_engine  # noqa: E402

FIXTURE = ROOT / "tests" / "fixtures" / "problems" / "fx-add"
TARGET_HEADROOM = 10.0


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _judge_once(python: str, practice: Path, problems: Path, level: str) -> tuple[float, float]:
    """(wall seconds, CPU seconds of every process it ran) of one ``judge grade``-like run."""
    command = [python, "-m", "judge", str(practice), "--problems", str(problems), "-j", "1", "--sandbox", level]
    env = dict(os.environ, PYTHONPATH=str(ROOT), PYTHONDONTWRITEBYTECODE="1", NO_COLOR="1")
    cpu, started = _children_cpu(), time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=ROOT, check=False)
    wall, used = time.perf_counter() - started, _children_cpu() - cpu
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed ({done.returncode}):\n{done.stdout[-1500:]}{done.stderr[-1500:]}")
    return wall, used


def _practice(problem_dir: Path, scratch: Path) -> Path:
    problem = load_problem(problem_dir)
    folder = scratch / f"practice-{problem.id}"
    (folder / problem.id).mkdir(parents=True)
    shutil.copy(problem_dir / "reference" / problem.entry, folder / problem.id / problem.entry)
    return folder / problem.id  # judged on its own: `python -m judge practice/<id>`


def measure(problems_dir: Path, only: list[str] | None, repeats: int, user_python: str | None) -> dict[str, Any]:
    problems, errors = discover_problems(problems_dir)
    if errors:
        raise SystemExit(f"cannot benchmark: {errors}")
    scratch = Path(tempfile.mkdtemp(prefix="bench-limits-"))
    scratch.chmod(0o755)
    try:
        headroom = []
        engine = get_engine("native")
        for problem in problems:
            if only and problem.id not in only:
                continue
            job = Job(problem, problem.path / "reference" / problem.entry)
            results = [engine.judge([job])[0] for _ in range(repeats)]
            if any(r.status != "passed" for r in results):
                raise SystemExit(f"{problem.id}: the reference did not pass ({results[0].message})")
            runs = [(r.duration, r.cpu_seconds) for r in results]  # what the limit counts: the job's processes
            cpu = statistics.median(c for _, c in runs)
            headroom.append({"problem": problem.id, "limit_s": problem.time_limit, "cpu_s": round(cpu, 2),
                             "wall_s": round(statistics.median(w for w, _ in runs), 2),
                             "headroom": round(problem.time_limit / cpu, 1) if cpu else None})
        levels = _levels(scratch, repeats, user_python)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return {"headroom": headroom, "target_headroom": TARGET_HEADROOM, "levels": levels, "repeats": repeats,
            "load": [round(x, 2) for x in os.getloadavg()]}


def _levels(scratch: Path, repeats: int, user_python: str | None) -> list[dict[str, Any]]:
    """The wall and CPU time of judging fx-add's reference at each level, interleaved."""
    practice = _practice(FIXTURE, scratch)
    rows: dict[str, dict[str, Any]] = {}
    pythons = {"bubblewrap": sys.executable, "plain": sys.executable, "user": user_python}
    for _ in range(repeats):
        for level, python in pythons.items():
            row = rows.setdefault(level, {"level": level, "wall_s": [], "cpu_s": []})
            if python is None:
                row["unavailable"] = "give --user-python (a Python an unprivileged identity can run)"
                continue
            try:
                wall, cpu = _judge_once(python, practice, FIXTURE.parent, level)
            except SystemExit as exc:
                row["unavailable"] = str(exc).splitlines()[-1][:200]
                continue
            row["wall_s"].append(round(wall, 3))
            row["cpu_s"].append(round(cpu, 3))
    for row in rows.values():
        if row["wall_s"]:
            row["median_wall_s"] = statistics.median(row["wall_s"])
            row["median_cpu_s"] = statistics.median(row["cpu_s"])
    plain = rows["plain"].get("median_wall_s")
    for row in rows.values():
        if plain and row.get("median_wall_s"):
            row["wall_vs_plain"] = round(row["median_wall_s"] / plain, 2)
    return list(rows.values())


def print_table(data: dict[str, Any]) -> None:
    print(f"Time limits count CPU time: each reference's CPU time against its limit (target headroom "
          f">= {data['target_headroom']:g}x; load {data['load']})")
    for row in data["headroom"]:
        verdict = "meets" if row["headroom"] and row["headroom"] >= data["target_headroom"] else "misses"
        print(f"  {row['problem']:<22} {row['cpu_s']:>6.2f} s CPU ({row['wall_s']:.2f} s wall) "
              f"of {row['limit_s']:g} s: {row['headroom']}x ({verdict})")
    print("Isolation per job: judging fx-add's reference (4 calls) at each level, -j 1, cold process")
    for row in data["levels"]:
        if "median_wall_s" not in row:
            print(f"  {row['level']:<11} not measured: {row.get('unavailable', '')}")
            continue
        print(f"  {row['level']:<11} {row['median_wall_s']:.2f} s wall, {row['median_cpu_s']:.2f} s CPU"
              + (f" ({row['wall_vs_plain']}x plain)" if "wall_vs_plain" in row else ""))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problems", type=Path, default=ROOT / "problems")
    parser.add_argument("--only", nargs="*", help="only these problem ids (default: every problem)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--user-python", help="a Python an unprivileged identity can run, with the judge installed")
    parser.add_argument("--json", type=Path, help="also write the figures to this JSON file")
    args = parser.parse_args(argv)
    report(measure(args.problems, args.only, args.repeats, args.user_python), print_table, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
