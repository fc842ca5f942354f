"""Native benchmark: ``python -m judge`` over every problem's reference against bare pytest.

The floor is one Python process that imports pytest once and runs ``pytest.main`` over each
problem's work directory in turn (the same tests, the same reference code, no isolation). The
judge runs cold as a learner would: ``python -m judge DIR`` in a new process, one child process
per problem. Both are repeated, interleaved, and the median ratio is reported. Beside them, what
judging itself costs with no process boundary (:mod:`bench.one_interpreter`: the judge with the
browser's transport in one warm interpreter against bare pytest), so that the ratios say how much of
the judge's time is the boundary and how much the judging.

    python -m bench.native [--problems DIR] [--repeats N] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import report, with_compiled_judge  # noqa: E402
from judge.core.problem import discover_problems  # noqa: E402
from judge.core.workdir import make_workdir  # noqa: E402

BARE = r"""
import sys, pytest
dirs = sys.argv[1:]
for d in dirs:
    for name in [n for n, m in sys.modules.items()
                 if any((getattr(m, "__file__", "") or "").startswith(x) for x in dirs)]:
        del sys.modules[name]
    sys.path.insert(0, d)
    code = pytest.main([d, "-q", "-p", "no:cacheprovider", "-c", d + "/pytest.ini", "--rootdir", d])
    sys.path.remove(d)
    if code != 0:
        sys.exit(f"bare pytest failed in {d}")
"""


def measure(problems_dir: Path, repeats: int) -> dict:
    problems, errors = discover_problems(problems_dir)
    if errors or not problems:
        raise SystemExit(f"cannot benchmark: {errors or 'no problems'}")
    scratch = Path(tempfile.mkdtemp(prefix="bench-native-"))
    try:
        references = {p.id: p.path / "reference" / p.entry for p in problems}  # check requires them
        workdirs = [str(make_workdir(p, include_secret=True, root=scratch)) for p in problems]
        for problem, workdir in zip(problems, workdirs):  # bare pytest imports the reference beside the tests
            shutil.copy(references[problem.id], Path(workdir) / problem.entry)
        practice = scratch / "practice"
        for problem in problems:
            (practice / problem.id).mkdir(parents=True)
            shutil.copy(references[problem.id], practice / problem.id / problem.entry)
        env = with_compiled_judge(dict(os.environ, PYTHONPATH=str(ROOT), PYTEST_DISABLE_PLUGIN_AUTOLOAD="1",
                                       PYTHONDONTWRITEBYTECODE="1", NO_COLOR="1"), scratch)
        bare_times, judge_times, serial_times = [], [], []
        judge = [sys.executable, "-m", "judge", str(practice), "--problems", str(problems_dir)]
        for _ in range(repeats):
            bare_times.append(_timed([sys.executable, "-c", BARE, *workdirs], env))
            judge_times.append(_timed(judge, env))
            serial_times.append(_timed(judge + ["-j", "1"], env))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    one = _one_interpreter(problems_dir, repeats)
    return {"problems": len(problems), "repeats": repeats, "cpus": os.cpu_count(), "one_interpreter": one,
            "bare_pytest_s": bare_times, "judge_s": judge_times, "judge_serial_s": serial_times,
            "median_ratio": statistics.median(j / b for j, b in zip(judge_times, bare_times)),
            "median_ratio_serial": statistics.median(j / b for j, b in zip(serial_times, bare_times)),
            "target_ratio": 1.0, "target_ratio_serial": 1.3}


def _one_interpreter(problems_dir: Path, repeats: int) -> dict:
    """:mod:`bench.one_interpreter`'s figures, measured in a process of its own (warm runs: byte code
    does not matter there)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")
    done = subprocess.run([sys.executable, "-m", "bench.one_interpreter", "--problems", str(problems_dir),
                           "--repeats", str(repeats), "--json", "-"], env=env, cwd=ROOT, capture_output=True,
                          text=True)
    if done.returncode != 0:
        raise SystemExit(f"bench.one_interpreter failed ({done.returncode}):\n"
                         f"{done.stdout[-2000:]}{done.stderr[-2000:]}")
    return json.loads(done.stdout)


def _timed(command: list[str], env: dict) -> float:
    started = time.perf_counter()
    result = subprocess.run(command, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    if result.returncode != 0:
        raise SystemExit(f"{command[:3]} failed ({result.returncode}):\n{result.stdout[-2000:]}{result.stderr[-2000:]}")
    return elapsed


def print_table(data: dict) -> None:
    print(f"Native ({data['problems']} problems, references, {data['repeats']} repeats, cold processes)")
    print(f"  {'run':>4} {'bare pytest':>12} {'judge (-j auto)':>16} {'ratio':>6} {'judge -j 1':>11} {'ratio':>6}")
    for i, (b, j, s) in enumerate(zip(data["bare_pytest_s"], data["judge_s"], data["judge_serial_s"]), 1):
        print(f"  {i:>4} {b:>11.2f}s {j:>15.2f}s {j / b:>6.2f} {s:>10.2f}s {s / b:>6.2f}")
    for key, target, label in (("median_ratio", "target_ratio", f"judge (-j {data['cpus']}, the default)"),
                               ("median_ratio_serial", "target_ratio_serial", "judge -j 1")):
        verdict = "meets" if data[key] <= data[target] else "misses"
        print(f"  median ratio {label} / bare pytest: {data[key]:.2f} ({verdict} the target <= {data[target]})")
    one = data["one_interpreter"]
    print(f"  judging itself, no process boundary (warm, one interpreter, best of {one['repeats']}): "
          f"{one['ratio']:.2f}x bare pytest ({one['judge_s']:.2f}s against {one['bare_s']:.2f}s; "
          "python -m bench.one_interpreter for each problem)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problems", type=Path, default=ROOT / "problems")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", type=Path, help="also write the figures to this JSON file")
    args = parser.parse_args(argv)
    data = measure(args.problems, args.repeats)
    report(data, print_table, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
