"""Class-grading benchmark: ``judge grade`` against a shell loop of ``python -m judge`` per submission.

Makes N synthetic submissions (folders laid out like ``practice/``, every problem in each): 40 %
references, 20 % starters, 30 % ``wrong/`` solutions, 10 % hostile (one problem loops forever, one
calls ``os._exit``, the rest are references). Then, side by side in one run:

- ``python -m judge grade SUBS -o OUT`` with the default ``-j`` (one per core);
- the loop an instructor would otherwise script: ``python -m judge SUB --json FILE`` once per
  submission, one after the other, each with the default ``-j``.

The submissions are split into batches (default 5) and the two are timed batch by batch, one after
the other, so both see the same machine load over the run (each ``judge grade`` call also judges
the references once, which the loop does not need). Reports submissions per minute for both, the
ratio (target: grade <= 0.4x the loop) and the peak
memory of each (the sum of the resident sets of the whole process tree, sampled every 50 ms).

    python -m bench.grade [--submissions N] [--problems DIR] [--json FILE]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import report, with_compiled_judge  # noqa: E402
from judge.core.problem import Problem, discover_problems  # noqa: E402
from judge.core.wrong import wrong_source  # noqa: E402

TARGET_RATIO = 0.4
HOSTILE = {"loop": "def __getattr__(name):\n    while True:\n        pass\n",
           "exit": "import os\nos._exit(0)\n"}


def make_submissions(problems: list[Problem], count: int, root: Path) -> Path:
    """``count`` submission folders under ``root``/subs; returns that folder."""
    subs = root / "subs"
    for index in range(count):
        folder = subs / f"s{index:03d}"
        kind = index % 10
        for number, problem in enumerate(problems):
            target = folder / problem.id
            target.mkdir(parents=True)
            (target / problem.entry).write_text(_source(problem, kind, index, number), encoding="utf-8")
    return subs


def _source(problem: Problem, kind: int, index: int, number: int) -> str:
    """Untouched starters and the hostile files are byte-identical across students, as in a real class;
    everything else is made unique (a comment), so the judge cannot reuse one student's Result for another."""
    assert problem.reference_path is not None
    if kind in (4, 5):
        return problem.starter
    if kind == 9 and number < len(HOSTILE):
        return list(HOSTILE.values())[(index + number) % len(HOSTILE)]
    return _solution(problem, kind, index, number) + f"\n# submission {index}\n"


def _solution(problem: Problem, kind: int, index: int, number: int) -> str:
    assert problem.reference_path is not None
    if kind in (6, 7, 8) and problem.wrong_files:
        return wrong_source(problem, problem.wrong_files[(index + number) % len(problem.wrong_files)])
    return problem.reference_path.read_text(encoding="utf-8")


class PeakMemory:
    """Samples the resident memory of a process and all its descendants (Linux /proc)."""

    def __init__(self, pid: int) -> None:
        self.pid, self.peak, self._stop = pid, 0, threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(0.05):
            self.peak = max(self.peak, _tree_rss(self.pid))

    def stop(self) -> int:
        self._stop.set()
        self._thread.join()
        return self.peak


def _tree_rss(root: int) -> int:
    parents: dict[int, int] = {}
    rss: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
            parents[int(entry)] = int(fields[1])
            rss[int(entry)] = int(fields[21]) * os.sysconf("SC_PAGE_SIZE")
        except (OSError, IndexError, ValueError):
            continue
    tree, frontier = {root}, [root]
    while frontier:
        current = frontier.pop()
        children = [pid for pid, parent in parents.items() if parent == current and pid not in tree]
        tree.update(children)
        frontier.extend(children)
    return sum(rss.get(pid, 0) for pid in tree)


def _timed(commands: list[list[str]], env: dict[str, str]) -> tuple[float, int]:
    """Run the commands one after the other; wall seconds and the peak memory of any one of them."""
    started, peak = time.monotonic(), 0
    for command in commands:
        process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        sampler = PeakMemory(process.pid)
        process.wait()
        peak = max(peak, sampler.stop())
    return time.monotonic() - started, peak


def measure(problems_dir: Path, count: int, batches: int = 5) -> dict[str, Any]:
    """Grade and loop over ``batches`` slices in turn, so both see the same machine load over time."""
    problems, _ = discover_problems(problems_dir)
    env = dict(os.environ, PYTHONPATH=str(ROOT), NO_COLOR="1")
    python = [sys.executable, "-m", "judge"]
    grade_seconds = loop_seconds = 0.0
    grade_peak = loop_peak = rows = 0
    with tempfile.TemporaryDirectory(prefix="bench-grade-") as tmp:
        root = Path(tmp)
        env = with_compiled_judge(env, root)
        subs = make_submissions(problems, count, root)
        folders = sorted(subs.iterdir())
        for batch in range(batches):
            part = root / f"batch{batch}"
            part.mkdir()
            for folder in folders[batch::batches]:
                folder.rename(part / folder.name)
            seconds, peak = _timed([[*python, "grade", str(part), "-o", str(root / f"out{batch}"),
                                     "--problems", str(problems_dir)]], env)
            grade_seconds, grade_peak = grade_seconds + seconds, max(grade_peak, peak)
            loop = [[*python, str(folder), "--problems", str(problems_dir), "--json", str(root / f"{folder.name}.json")]
                    for folder in sorted(part.iterdir())]
            seconds, peak = _timed(loop, env)
            loop_seconds, loop_peak = loop_seconds + seconds, max(loop_peak, peak)
            rows += (root / f"out{batch}" / "grades.csv").read_text(encoding="utf-8-sig").count("\n") - 1
    return {"submissions": count, "problems": len(problems), "graded_rows": rows, "cores": os.cpu_count(),
            "batches": batches,
            "grade_seconds": round(grade_seconds, 2), "loop_seconds": round(loop_seconds, 2),
            "grade_per_minute": round(count / grade_seconds * 60, 1),
            "loop_per_minute": round(count / loop_seconds * 60, 1),
            "ratio": round(grade_seconds / loop_seconds, 3), "target_ratio": TARGET_RATIO,
            "grade_peak_mib": round(grade_peak / 2**20, 1), "loop_peak_mib": round(loop_peak / 2**20, 1)}


def print_table(data: dict[str, Any]) -> None:
    print(f"Class grading: {data['submissions']} submissions x {data['problems']} problems, {data['cores']} cores")
    print(f"  judge grade            {data['grade_seconds']:8.1f} s  {data['grade_per_minute']:7.1f} submissions/min"
          f"  peak {data['grade_peak_mib']:.0f} MiB")
    print(f"  loop of python -m judge {data['loop_seconds']:7.1f} s  {data['loop_per_minute']:7.1f} submissions/min"
          f"  peak {data['loop_peak_mib']:.0f} MiB")
    verdict = "met" if data["ratio"] <= data["target_ratio"] else "missed"
    print(f"  ratio grade / loop     {data['ratio']:.2f}x (target <= {data['target_ratio']}x, {verdict})")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--submissions", type=int, default=200)
    parser.add_argument("--problems", type=Path, default=ROOT / "problems")
    parser.add_argument("--batches", type=int, default=5)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    data = measure(args.problems, args.submissions, args.batches)
    report(data, print_table, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
