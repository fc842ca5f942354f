"""``judge grade``: grade a whole class's submissions on this machine, or regrade one student's.

submissions (zips, folders, LMS downloads: :mod:`.layouts`) -> :mod:`.submissions` (safe
reading, in memory) -> one native job per
distinct piece of submitted code per problem (untouched starters and copies are judged once), plus
each problem's reference once (the canonical test list and points) ->
Results rescored against the canonical ones -> ``grades.csv``, ``results/``, ``feedback/``,
``report.html``, the LMS gradebooks and the similarity report in the output folder
(:mod:`.outputs`, :mod:`.feedback`, :mod:`.html_report`, :mod:`.lms`, :mod:`.similarity`).

Re-running is incremental: ``results/<student>.json`` records a digest of the submission, the
problem set, the judge's version and the options; a submission whose digest is unchanged is not
judged again (``force`` re-judges all). Given one submission (a zip, or a folder laid out like
``practice/``) instead of a folder of them, only that student is judged and the other rows are
read back from ``results/`` (:func:`stored_grades`). A late policy (:mod:`.late`) takes points off
the total where the layout says when the work was handed in.
"""

from __future__ import annotations

import copy
import hashlib
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from ... import __version__
from ...core.errors import UsageError
from ...core.problem import Problem
from ...core.result import Result
from ...core.scoring import rescore
from ...engines import Job
from ...i18n import _, current_language
from ...lang import tests_language
from ..assignments import check_worth
from .layouts import entry_of, is_lms_name
from .model import ClassGrades, Graded, Options, write_atomic
from .submissions import Submission, discover, read_entry

__all__ = ["ClassGrades", "Graded", "Options", "FEEDBACK_LEVELS", "grade_class", "stored_grades"]

FEEDBACK_LEVELS = ("full", "names", "none")
CANONICAL_FILE = ".canonical.json"  # the references' Results, reused while the problem set is unchanged


def grade_class(submissions: Path, out_dir: Path, problems: list[Problem], options: Options,
                progress: TextIO | None = None) -> ClassGrades:
    """Grade every submission in ``submissions`` (or, given one submission, regrade that student) into
    ``out_dir``."""
    from .outputs import write_outputs

    started = time.monotonic()
    single = is_one_submission(submissions, problems)
    entries = [entry_of(submissions)] if single else discover(submissions)
    if single:
        _refuse_another_problem_set(out_dir, problems)
    stored = stored_grades(out_dir, problems) if single else []
    set_digest = _problem_set_digest(problems, options)
    canonical = _canonical_results(problems, out_dir, set_digest, options)
    if options.course_assignment is not None:  # before any student is judged
        check_worth(options.course_assignment, canonical)
    graded = [Graded(read_entry(entry, problems)) for entry in entries]
    time_notes = []
    for item in graded:  # --times: when each was handed in, and extensions, where the layout gives no time
        if item.student in options.times:
            submitted_at, deadline = options.times[item.student]
            item.submission.submitted_at = submitted_at or item.submission.submitted_at
            item.submission.deadline = deadline
        elif item.submission.layout == "moodle" and not item.submission.submitted_at:
            time_notes += _worksheet_time(item, options.worksheet_times)
    kept_times = _times_kept(graded[0], stored, options) if single else []
    todo = []
    for item in graded:
        item.digest = hashlib.sha256((set_digest + item.submission.digest()).encode()).hexdigest()
        previous = None if options.force or single else _previous_results(out_dir, item)
        if previous is not None:
            item.results = previous
        else:
            todo.append(item)
    runs = _judge(todo, problems, options, _Progress(progress, len(todo), started))
    for item in graded:
        item.results = [_score(r, canonical[r.problem], problems) for r in item.results]
    if single:
        graded += [g for g in stored if g.student != graded[0].student]
    grades = ClassGrades(problems, canonical, sorted(graded, key=lambda g: g.student),
                         judged=sum(not item.stray for item in todo), runs=runs,
                         seconds=time.monotonic() - started, options=options,
                         regraded=graded[0].student if single else "")
    grades.notes += kept_times + time_notes + (_one_of_many(submissions, problems) if single else [])
    strangers = sorted(set(options.times) - {g.student for g in graded}) if not single else []
    if strangers:
        grades.notes.append(f"--times names {len(strangers)} student(s) with no submission: {', '.join(strangers[:8])}"
                            + (" ..." if len(strangers) > 8 else ""))
    write_outputs(grades, out_dir)
    return grades


def is_one_submission(path: Path, problems: list[Problem]) -> bool:
    """Whether ``path`` is one student's submission (a zip, a practice-like folder), not a folder of them.

    A folder is one submission when it holds problems' folders and no more folders, zips or LMS-named files
    besides them (a class folder where one student is named like a problem is still a class folder), is
    ``practice/<problem-id>/...`` as the web app's zip has it, or holds an entry file and nothing that looks
    like a submission of its own: a class folder with a stray ``adder.py`` in it is still a class folder,
    and that file a row of its own.
    """
    if path.is_file() or (path.is_dir() and is_lms_name(path.name)):  # a Moodle folder is one student's
        return True
    if not path.is_dir():
        return False
    ids, entries = {p.id for p in problems}, {p.entry for p in problems}
    children = [c for c in path.iterdir() if not c.name.startswith((".", "_"))]
    problem_folders = [c for c in children if c.name in ids and c.is_dir()]
    if problem_folders:
        others = [c for c in children if c not in problem_folders and _a_submission_of_its_own(c)]
        return len(problem_folders) >= len(others)
    wrapper = children[0] if len(children) == 1 else None  # practice/<problem-id>/..., as the web app's zip has it
    if wrapper is not None and wrapper.name == "practice" and any((wrapper / pid).is_dir() for pid in ids):
        return True
    return (any(c.is_file() and c.name in entries for c in children)
            and not any(_a_submission_of_its_own(c) for c in children))


def _one_of_many(path: Path, problems: list[Problem]) -> list[str]:
    """A note when a folder taken as one student's submission also holds what looks like others' (a class
    folder where folders named like problems outnumber the students): the instructor must hear of it."""
    if not path.is_dir() or is_lms_name(path.name):
        return []
    ids = {p.id for p in problems}
    others = sorted(c.name for c in path.iterdir() if not c.name.startswith((".", "_")) and c.name not in ids
                    and _a_submission_of_its_own(c))
    if not others:
        return []
    return [f"{path} was graded as ONE student's submission (it holds folders named like problems), although it "
            f"also holds {', '.join(others[:8])}{' ...' if len(others) > 8 else ''}: if it is a folder of "
            "submissions, move the folders named like problems out of it and grade it again"]


def _refuse_another_problem_set(out_dir: Path, problems: list[Problem]) -> None:
    """Before one student is regraded: refuse an output folder whose other students were graded on another set
    of problems (another assignment): their rows would leave the gradebook, which a regrade rewrites."""
    others: set[str] = set()
    count = 0
    for path in sorted((out_dir / "results").glob("*.json")):
        try:
            ids = {r["problem"] for r in json.loads(path.read_text(encoding="utf-8"))["results"]}
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if ids != {p.id for p in problems}:
            others |= ids
            count += 1
    if count:
        raise UsageError(_("{out} holds the grades of {n} student(s) graded on another set of problems ({theirs}), "
                           "not on this run's ({ours}): regrade with the same --assignment, --problem or --problems "
                           "as the run that made it (or grade into another folder)").format(
            out=out_dir, n=count, theirs=", ".join(sorted(others)), ours=", ".join(p.id for p in problems)))


def _worksheet_time(item: Graded, times: dict[str, str]) -> list[str]:
    """A Moodle student's hand-in time from the grading worksheet (--moodle-worksheet); a note when it does not
    read."""
    from .lms import moodle_time

    text = times.get(item.submission.lms_id)
    if text is None:
        return []
    try:
        item.submission.submitted_at = moodle_time(text)
    except ValueError:
        return [_("{student}: the worksheet's Last modified (submission) {text!r} is not in Moodle's English form "
                  "('Wednesday, 2 December 2026, 9:00 AM'): give the time with --times").format(
            student=item.student, text=text)]
    return []


def _times_kept(item: Graded, stored: list[Graded], options: Options) -> list[str]:
    """A student regraded without --times keeps the hand-in time (where the download gives none) and the
    extension they were last graded with, which only --times gives; the notes that say so."""
    before = next((g.submission for g in stored if g.student == item.student), None)
    now = item.submission
    if before is None or item.student in options.times:
        return []
    notes = []
    if not now.submitted_at and before.submitted_at:
        now.submitted_at = before.submitted_at
        notes.append(_("{student}: handed in at {when}, as when last graded (--times changes it)").format(
            student=item.student, when=before.submitted_at.replace("T", " ")[:16]))
    if not now.deadline and before.deadline:
        now.deadline = before.deadline
        notes.append(_("{student}: extended deadline {when}, as when last graded (--times changes it)").format(
            student=item.student, when=before.deadline.replace("T", " ")[:16]))
    return notes


def _a_submission_of_its_own(child: Path) -> bool:
    return child.is_dir() or child.suffix.lower() == ".zip" or is_lms_name(child.name)


def stored_grades(out_dir: Path, problems: list[Problem]) -> list[Graded]:
    """Every student's grade as ``results/`` holds it (the submission as it was read, and its Results): for
    each student, the file of the name this version gives it (an older version's file of the same student,
    or a file that claims another's name, is passed over)."""
    from .outputs import results_path

    found: dict[str, Graded] = {}
    for path in sorted((out_dir / "results").glob("*.json")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            submission = Submission.from_dict(data["student"], data.get("submission", {}))
            results = [Result.from_dict(r) for r in data["results"]]
        except (OSError, ValueError, KeyError, TypeError):
            continue
        known = {p.id for p in problems}
        own = path.name == results_path(out_dir, submission.student).name
        if {r.problem for r in results} == known and (own or submission.student not in found):
            found[submission.student] = Graded(submission, results, data.get("input_digest", ""))
    return list(found.values())


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
    remaining = [len({job for _pid, job in w}) for w in wanted]
    for index, pairs in enumerate(wanted):
        for job_index in {job for _pid, job in pairs}:
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
    handed_out: set[int] = set()
    for item, pairs in zip(todo, wanted):
        judged = {}
        for pid, j in pairs:  # each student's own Result (scoring changes it): the first takes the judged one
            judged[pid] = copy.deepcopy(results[j]) if j in handed_out else results[j]
            handed_out.add(j)
        item.results = [judged.get(p.id) or _not_judged(p, item.submission) for p in problems]
    return len(jobs)


def _not_judged(problem: Problem, submission: Submission) -> Result:
    reason = submission.error or submission.unreadable.get(problem.id) or "not submitted"
    return Result.error(problem.id, reason)


def _score(result: Result, canonical: Result, problems: list[Problem]) -> Result:
    problem = next(p for p in problems if p.id == result.problem)
    with tests_language(current_language()):  # titles and notes in the learner's language
        scored = rescore(result, canonical, problem)
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
    if all(r.status == "passed" for r in canonical.values()):  # a reference that failed is judged again next run
        payload = {"digest": set_digest, "results": {pid: r.to_dict() for pid, r in canonical.items()}}
        write_atomic(cache, json.dumps(payload, ensure_ascii=False))
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
    """sha256 of every file of every problem, the judge's version and the options that change Results (the
    language too: the tests' messages may follow it, judge.lang), and the sandbox the code runs in: work
    judged with no sandbox (or with less confinement) is never kept as it is when the level is raised."""
    hasher = hashlib.sha256(f"{__version__}\0{options.timeout}\0{current_language()}\0{_isolation(options)}\0"
                            .encode())
    for problem in problems:
        for path in sorted(p for p in problem.path.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
            hasher.update(f"\0{problem.id}/{path.relative_to(problem.path).as_posix()}\0".encode())
            hasher.update(path.read_bytes())
    return hasher.hexdigest()


def _isolation(options: Options) -> str:
    """The sandbox level, its identity and its confinement, as the run's engine has them."""
    from ...engines.native import NativeEngine

    engine = options.engine
    return engine.sandbox.summary if isinstance(engine, NativeEngine) else type(engine).__name__


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
