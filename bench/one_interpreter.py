"""What judging costs with no process boundary: each reference judged in this interpreter against bare pytest.

Per problem, side by side in one warm process, the best of N repeats of:

- bare pytest: ``pytest.main`` over a work directory with the problem's public and secret tests and the
  reference beside them (the tests import it directly: no judge, no boundary);
- the judge in one interpreter: :func:`judge.core.runner.judge_source` with the browser's transport
  (:class:`judge.sandbox.inprocess.InProcessLearner`: the learner's module in this interpreter behind the
  codec, the guard confining each call), the tests' compiled code cached as both engines keep it.

The ratio is what judging itself costs over bare pytest, which the browser pays as the native engine
does; what ``python -m judge -j 1`` pays on top of it is the process boundary (:mod:`bench.native`
reports both). Run by :mod:`bench.native` in a process of its own; alone:

    python -m bench.one_interpreter [--problems DIR] [--repeats N] [--json FILE]
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import io
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")

import pytest  # noqa: E402

from bench import report  # noqa: E402
from judge.core import code_cache  # noqa: E402
from judge.core.problem import Problem, discover_problems  # noqa: E402
from judge.core.runner import judge_source  # noqa: E402
from judge.core.workdir import make_workdir  # noqa: E402
from judge.sandbox import standin  # noqa: E402
from judge.sandbox.inprocess import InProcessLearner  # noqa: E402


def _bare(workdir: Path) -> float:
    """Seconds of ``pytest.main`` over ``workdir``, its modules imported afresh."""
    for name, module in list(sys.modules.items()):
        if (getattr(module, "__file__", "") or "").startswith(str(workdir)):
            del sys.modules[name]
    sys.path.insert(0, str(workdir))
    try:
        started = time.perf_counter()
        with contextlib.redirect_stdout(io.StringIO()):
            code = pytest.main([str(workdir), "-q", "-p", "no:cacheprovider", "-c", str(workdir / "pytest.ini"),
                                "--rootdir", str(workdir)])
        seconds = time.perf_counter() - started
    finally:
        sys.path.remove(str(workdir))
    if code != 0:
        raise SystemExit(f"bare pytest failed in {workdir} ({code})")
    return seconds


def _judged(problem: Problem, source: str, learner_root: str) -> tuple[float, int]:
    """Seconds and tests of the judge's run of ``source`` in this interpreter."""
    learner = functools.partial(standin.session,
                                start=lambda spec, side: InProcessLearner(spec, side, root=learner_root))
    started = time.perf_counter()
    result = judge_source(problem, source, learner=learner, include_secret=True)
    seconds = time.perf_counter() - started
    if result.status != "passed":
        raise SystemExit(f"{problem.id}'s reference does not pass in one interpreter: {result.message}")
    return seconds, result.total


def measure(problems_dir: Path, repeats: int) -> dict[str, Any]:
    """Per problem: tests, bare pytest and the judge in one interpreter (best of ``repeats``), and the ratio."""
    problems, errors = discover_problems(problems_dir)
    if errors or not problems:
        raise SystemExit(f"cannot benchmark: {errors or 'no problems'}")
    code_cache.install()
    scratch = Path(tempfile.mkdtemp(prefix="bench-one-interpreter-"))
    rows: list[dict[str, Any]] = []
    try:
        for problem in problems:
            assert problem.reference_path is not None
            source = problem.reference_path.read_text(encoding="utf-8")
            workdir = make_workdir(problem, include_secret=True, root=scratch)
            shutil.copy(problem.reference_path, workdir / problem.entry)
            bare, judged, tests = [], [], 0
            for _ in range(repeats):
                bare.append(_bare(workdir))
                seconds, tests = _judged(problem, source, str(scratch))
                judged.append(seconds)
            rows.append({"problem": problem.id, "tests": tests, "bare_s": round(min(bare), 4),
                         "judge_s": round(min(judged), 4), "ratio": round(min(judged) / min(bare), 3)})
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    bare_total = sum(float(row["bare_s"]) for row in rows)
    judge_total = sum(float(row["judge_s"]) for row in rows)
    return {"repeats": repeats, "problems": rows, "bare_s": round(bare_total, 4), "judge_s": round(judge_total, 4),
            "ratio": round(judge_total / bare_total, 3)}


def print_table(data: dict[str, Any]) -> None:
    print(f"The judge in one interpreter (no process boundary) against bare pytest, warm, best of {data['repeats']}")
    for row in data["problems"]:
        print(f"  {row['problem']:<20} {row['tests']:>4} tests  bare {row['bare_s']:6.2f}s  "
              f"judge {row['judge_s']:6.2f}s  {row['ratio']:5.2f}x")
    print(f"  {'all':<20} {'':>10}  bare {data['bare_s']:6.2f}s  judge {data['judge_s']:6.2f}s  {data['ratio']:5.2f}x")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problems", type=Path, default=ROOT / "problems")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", type=Path, help="also write the figures to this JSON file ('-': only there, "
                                                  "on standard output)")
    args = parser.parse_args(argv)
    data = measure(args.problems, args.repeats)
    if args.json == Path("-"):
        json.dump(data, sys.stdout)
    else:
        report(data, print_table, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
