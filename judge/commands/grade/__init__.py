"""``judge grade``: grade a whole class's submissions on this machine.

submissions (zips, folders) -> :mod:`.submissions` (safe reading, in memory) -> one native job per
distinct piece of submitted code per problem (untouched starters and copies are judged once), plus
each problem's reference once (the canonical test list and points) ->
Results rescored against the canonical ones -> ``grades.csv``, ``results/``, ``feedback/``,
``report.html`` in the output folder (:mod:`.outputs`, :mod:`.html_report`).

Re-running is incremental: ``results/<student>.json`` records a digest of the submission, the
problem set, the judge's version and the options; a submission whose digest is unchanged is not
judged again (``force`` re-judges all).
"""

from __future__ import annotations

import copy
import hashlib
import json
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from ... import __version__
from ...core.problem import Problem
from ...core.result import Result
from ...core.scoring import rescore
from ...engines import Engine, Job, get_engine
from .submissions import Submission, discover, read_submission

FEEDBACK_LEVELS = ("full", "names", "none")
CANONICAL_FILE = ".canonical.json"  # the references' Results, reused while the problem set is unchanged


@dataclass
class Options:
    """How to grade (the command line's options)."""

    parallel: int = 1
    timeout: float | None = None
    feedback: str = "names"
    force: bool = False
    engine: Engine | None = None  # the native engine at the run's sandbox level (default: the best one here)

    def judge(self, jobs: list[Job], on_result: Callable[[int, Result], None] | None = None) -> list[Result]:
        return (self.engine or get_engine("native")).judge(jobs, self.parallel, on_result=on_result)


@dataclass
class Graded:
    """One student's grade: the submission as read and its Results (one per problem of the set)."""

    submission: Submission
    results: list[Result] = field(default_factory=list)
    digest: str = ""
    reused: bool = False  # taken from the previous run's results/ file

    @property
    def student(self) -> str:
        return self.submission.student

    @property
    def points(self) -> float:
        return round(sum(r.points for r in self.results), 4)

    def submitted(self, problem_id: str) -> bool:
        """Whether the submission holds a file for this problem (judged or not)."""
        return not self.submission.error and problem_id in self.submission.problems

    @property
    def status(self) -> str:
        reasons = self.submission.problem_statuses()
        return "ok" if not reasons else "error: " + "; ".join(reasons)


@dataclass
class ClassGrades:
    """Everything one ``judge grade`` run produced."""

    problems: list[Problem]
    canonical: dict[str, Result]
    graded: list[Graded]
    judged: int = 0  # submissions judged in this run (the others were unchanged)
    runs: int = 0  # problem runs this took (identical code for a problem runs once)
    seconds: float = 0.0

    def max_points(self, problem_id: str) -> float:
        return self.canonical[problem_id].max_points

    @property
    def max_total(self) -> float:
        return round(sum(self.max_points(p.id) for p in self.problems), 4)


def grade_class(submissions_dir: Path, out_dir: Path, problems: list[Problem], options: Options,
                progress: TextIO | None = None) -> ClassGrades:
    """Grade every submission in ``submissions_dir`` and write the outputs to ``out_dir``."""
    from .outputs import write_outputs

    started = time.monotonic()
    entries = discover(submissions_dir)
    set_digest = _problem_set_digest(problems, options)
    canonical = _canonical_results(problems, out_dir, set_digest, options)
    graded = [Graded(read_submission(path, problems)) for path in entries]
    todo = []
    for item in graded:
        item.digest = hashlib.sha256((set_digest + item.submission.digest()).encode()).hexdigest()
        previous = None if options.force else _previous_results(out_dir, item)
        if previous is not None:
            item.results, item.reused = previous, True
        else:
            todo.append(item)
    runs = _judge(todo, problems, options, _Progress(progress, len(todo), started))
    for item in graded:
        item.results = [_score(r, canonical[r.problem], problems) for r in item.results]
    grades = ClassGrades(problems, canonical, graded, judged=len(todo), runs=runs, seconds=time.monotonic() - started)
    write_outputs(grades, out_dir, options.feedback)
    return grades


def _judge(todo: list[Graded], problems: list[Problem], options: Options, progress: _Progress) -> int:
    """Judge every submitted problem of ``todo``; byte-identical code for a problem is judged once."""
    jobs: list[Job] = []
    job_of: dict[tuple[str, str], int] = {}  # (problem id, sha256 of the code) -> index in jobs
    wanted: list[list[tuple[str, int]]] = [[] for _ in todo]  # per submission: (problem id, job index)
    for index, item in enumerate(todo):
        for problem in problems:
            source = item.submission.sources.get(problem.id)
            if source is None:
                continue
            key = (problem.id, hashlib.sha256(source.encode()).hexdigest())
            if key not in job_of:
                job_of[key] = len(jobs)
                jobs.append(Job(problem, None, include_secret=True, time_limit=options.timeout, source=source))
            wanted[index].append((problem.id, job_of[key]))
    waiting: dict[int, list[int]] = {}  # job index -> submissions still waiting for it
    remaining = [len({j for _, j in w}) for w in wanted]
    for index, pairs in enumerate(wanted):
        for job_index in {j for _, j in pairs}:
            waiting.setdefault(job_index, []).append(index)
        if not pairs:
            progress.step()

    def finished(job_index: int, result: Result) -> None:
        for owner in waiting.get(job_index, []):
            remaining[owner] -= 1
            if remaining[owner] == 0:
                progress.step()

    results = options.judge(jobs, on_result=finished)
    progress.done()
    for item, pairs in zip(todo, wanted):
        judged = {pid: copy.deepcopy(results[j]) for pid, j in pairs}
        item.results = [judged.get(p.id) or _not_judged(p, item.submission) for p in problems]
    return len(jobs)


def _not_judged(problem: Problem, submission: Submission) -> Result:
    reason = submission.error or submission.unreadable.get(problem.id) or "not submitted"
    return Result.error(problem.id, reason)


def _score(result: Result, canonical: Result, problems: list[Problem]) -> Result:
    problem = next(p for p in problems if p.id == result.problem)
    scored = rescore(result, canonical, problem.points, problem.scoring)
    scored.max_points = canonical.max_points
    return scored


def _canonical_results(problems: list[Problem], out_dir: Path, set_digest: str,
                       options: Options) -> dict[str, Result]:
    """Each problem's reference Result: every test, with its points (cached in ``out_dir``)."""
    cache = out_dir / CANONICAL_FILE
    if cache.is_file() and not options.force:
        try:
            data = json.loads(cache.read_text(encoding="utf-8"))
            if data.get("digest") == set_digest:
                return {pid: Result.from_dict(r) for pid, r in data["results"].items()}
        except (OSError, ValueError, KeyError, TypeError):
            pass
    jobs = [Job(p, p.reference_path, include_secret=True) for p in problems]
    results = options.judge(jobs)
    canonical = {}
    for problem, result in zip(problems, results):
        if result.status != "passed":
            print(f"warning: the reference of {problem.id} does not pass ({result.status}); its tests and "
                  "points still define the grade, but check the problem (judge check)", file=sys.stderr)
        canonical[problem.id] = result
    out_dir.mkdir(parents=True, exist_ok=True)
    payload = {"digest": set_digest, "results": {pid: r.to_dict() for pid, r in canonical.items()}}
    _write_atomic(cache, json.dumps(payload, ensure_ascii=False))
    return canonical


def _previous_results(out_dir: Path, item: Graded) -> list[Result] | None:
    from .outputs import results_path

    path = results_path(out_dir, item.student)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("student") != item.student or data.get("input_digest") != item.digest:
            return None
        return [Result.from_dict(r) for r in data["results"]]
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _problem_set_digest(problems: list[Problem], options: Options) -> str:
    """sha256 of every file of every problem, the judge's version and the options that change Results."""
    hasher = hashlib.sha256(f"{__version__}\0{options.timeout}\0".encode())
    for problem in problems:
        for path in sorted(p for p in problem.path.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
            hasher.update(f"\0{problem.id}/{path.relative_to(problem.path).as_posix()}\0".encode())
            hasher.update(path.read_bytes())
    return hasher.hexdigest()


def _write_atomic(path: Path, text: str) -> None:
    temporary = path.with_name(f".{path.name}.tmp")
    temporary.write_text(text, encoding="utf-8")
    temporary.replace(path)


class _Progress:
    """``graded 12/200, 0:41 elapsed, about 9:30 left`` on a terminal; silent otherwise."""

    def __init__(self, stream: TextIO | None, total: int, started: float,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.stream = stream if stream is not None and stream.isatty() else None
        self.total, self.count, self.started, self.clock = total, 0, started, clock

    def step(self) -> None:
        self.count += 1
        if self.stream is None:
            return
        elapsed = self.clock() - self.started
        left = elapsed / self.count * (self.total - self.count) if self.count else 0.0
        self.stream.write(f"\rgraded {self.count}/{self.total} submissions, {_clock(elapsed)} elapsed, "
                          f"about {_clock(left)} left ")
        self.stream.flush()

    def done(self) -> None:
        if self.stream is not None and self.total:
            self.stream.write("\n")
            self.stream.flush()


def _clock(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes}:{secs:02d}"
