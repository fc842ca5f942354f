"""What one class-grading run is made of: its options, each student's grade, the whole run.

The types every part of ``judge grade`` reads (the gradebook, feedback, the report, the LMS files,
the similarity report), and the small helpers they share for files: a safe file name per student,
a spreadsheet cell that is never a formula, an atomic write.
"""

from __future__ import annotations

import errno
import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path

from ...core.problem import Problem
from ...core.result import Result
from ...engines import Engine, Job, get_engine
from ...formats.points import ZERO, add, text
from ...sandbox import cputime
from ..assignments import Assignment
from .late import LatePolicy
from .layouts import STRAY
from .submissions import Submission

_UNSAFE_CHARS = re.compile(r"[^A-Za-z0-9._@+-]")
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


@dataclass
class Options:
    """How to grade (the command line's options)."""

    parallel: int = 1
    timeout: float | None = None
    feedback: str = "names"
    force: bool = False
    late: LatePolicy | None = None  # deadline and penalty per day, applied to totals
    similarity: float | None = 0.8  # report pairs at least this similar (None: no similarity report)
    assignment: str = "judge"  # the LMS gradebooks' column name
    course_assignment: Assignment | None = None  # the course's assignment graded (its points are checked)
    # Moodle participant id -> the grading worksheet's "Last modified (submission)" (--moodle-worksheet)
    worksheet_times: dict[str, str] = field(default_factory=dict)
    zero_unreadable: bool = False  # an unreadable submission scores 0 instead of no grade (an empty cell)
    moodle_worksheet: Path | None = None  # the grading worksheet downloaded from Moodle, to fill in
    note: str = ""  # why this run regrades (history.csv keeps it beside each change)
    times: dict[str, tuple[str, str]] = field(default_factory=dict)  # --times: student -> (submitted_at, deadline)
    objective_threshold: float = 0.5  # report.html lists, per objective, the students below this share of its points
    engine: Engine | None = None  # the native engine at the run's sandbox level (default: the best one here)

    def judge(self, jobs: list[Job], on_result: Callable[[int, Result], None] | None = None) -> list[Result]:
        """Judge ``jobs``, ``parallel`` at a time, so that a grade never depends on ``-j``: a job is judged
        again alone, once the others have ended, when it timed out among others while working (on 2 cores,
        a reference taking 6 s of a 10 s wall-clock limit timed out beside another job), or when the grader's
        disk was full while it ran (a classmate's code filled the temporary folder, and pytest's capture of a
        test's output failed: the space comes back when that job ends), or when the judge's own test process
        failed (on a loaded machine the same full disk stopped it before its first test, with nowhere left to
        write why: exit code 70 and no message). Code that waited (a lock taken
        twice: little CPU time when its wall-clock backstop stopped it) is not: alone it waits as long."""
        engine = self.engine or get_engine("native")
        results = engine.judge(jobs, self.parallel, on_result=on_result)
        again = [i for i, result in enumerate(results)
                 if (result.status == "timeout" and _was_working(result, jobs[i])) or _disk_was_full(result)
                 or result.judge_failed()] if self.parallel > 1 else []
        for index in again:
            [results[index]] = engine.judge([jobs[index]], 1)
        return results


def _was_working(result: Result, job: Job) -> bool:
    """Whether a run that timed out used its time working (at least half its CPU time limit), or where CPU
    time is not counted (its limit is then wall-clock time, which other jobs can take)."""
    return not cputime.available() or result.cpu_seconds >= job.limit / 2


#: how an exception of a full disk reads in a Result's messages (the learner's own code may raise it too: it
#: is then judged again alone, with the same outcome)
_NO_SPACE = f"[Errno {errno.ENOSPC}]"


def _disk_was_full(result: Result) -> bool:
    """Whether a write failed on a full disk while ``result``'s job ran."""
    return _NO_SPACE in result.message or any(_NO_SPACE in test.message for test in result.tests)


@dataclass
class Graded:
    """One student's grade: the submission as read and its Results (one per problem of the set)."""

    submission: Submission
    results: list[Result] = field(default_factory=list)
    digest: str = ""

    @property
    def student(self) -> str:
        return self.submission.student

    @property
    def raw_points(self) -> Decimal:
        """The problems' points added up (two decimals each, exactly)."""
        return add(r.points for r in self.results)

    def penalty(self, late: LatePolicy | None) -> Decimal:
        """Points the late policy takes off (0 without a policy or a submission time)."""
        return late.penalty(self.raw_points, self.submission.submitted_at, self.submission.deadline) if late else ZERO

    def days_late(self, late: LatePolicy) -> int:
        return late.days_late(self.submission.submitted_at, self.submission.deadline)

    def total(self, late: LatePolicy | None) -> Decimal:
        return self.raw_points - self.penalty(late)

    @property
    def unreadable(self) -> str:
        """Why this submission, or one of its problems' files, could not be read ("" when all could): such a
        submission gets no grade (an empty cell) unless the instructor asks for zeros (``--zero-unreadable``)."""
        return "; ".join(self.submission.problem_statuses())

    @property
    def stray(self) -> bool:
        """Whether this row is a file dropped loose in the submissions folder: no student's, so never graded."""
        return self.submission.layout == STRAY

    def no_grade(self, options: Options) -> bool:
        """Whether this row gets no grade (empty cells): a stray file, or work that could not be read
        unless the instructor asks for zeros (``--zero-unreadable``)."""
        return self.stray or bool(self.unreadable) and not options.zero_unreadable

    def grade_text(self, options: Options) -> str:
        """The total as a gradebook cell: empty for an unreadable submission (no grade), unless zeros are asked for."""
        if self.no_grade(options):
            return ""
        return text(self.total(options.late))

    def problem_text(self, problem_id: str, options: Options) -> str:
        """One problem's points as a gradebook cell: empty where its file could not be read (no grade)."""
        unreadable = bool(self.submission.error) or problem_id in self.submission.unreadable
        if self.stray or unreadable and not options.zero_unreadable:
            return ""
        return text(next((r.points for r in self.results if r.problem == problem_id), 0.0))

    def submitted(self, problem_id: str) -> bool:
        """Whether the submission holds a file for this problem (judged or not)."""
        return not self.submission.error and problem_id in self.submission.problems

    @property
    def status(self) -> str:
        """``ok``, or what went wrong (``error: ...``) and what was set aside (``not judged: ...``)."""
        reasons = self.submission.problem_statuses()
        parts = (["error: " + "; ".join(reasons)] if reasons else []) + self.submission.notes
        if self.submission.late_marked and not self.submission.submitted_at:
            parts.append("marked late by the LMS, which gives no time (no late penalty applied)")
        return "; ".join(parts) or "ok"


@dataclass
class ClassGrades:
    """Everything one ``judge grade`` run produced."""

    problems: list[Problem]
    canonical: dict[str, Result]
    graded: list[Graded]
    judged: int = 0  # submissions judged in this run (the others were unchanged)
    runs: int = 0  # problem runs this took (identical code for a problem runs once)
    seconds: float = 0.0
    options: Options = field(default_factory=Options)
    regraded: str = ""  # the one student judged, when one submission was given
    notes: list[str] = field(default_factory=list)  # what the instructor must know about the files written
    moodle_matched: set[str] = field(default_factory=set)  # students matched to a row of --moodle-worksheet

    def max_points(self, problem_id: str) -> float:
        return self.canonical[problem_id].max_points

    @property
    def max_total(self) -> Decimal:
        return add(self.max_points(p.id) for p in self.problems)

    @property
    def students(self) -> list[Graded]:
        """The rows of students: every row but the stray files dropped beside the submissions."""
        return [item for item in self.graded if not item.stray]


#: the longest plain name kept as it is: with ``.`` before it and ``.json.tmp`` after (write_atomic's temporary
#: file), a longer one would pass the 255 bytes a file name may have
_PLAIN_NAME_BYTES = 200
_HASHED_NAME = re.compile(r"-[0-9a-f]{8,}$")  # how a hashed name ends (8 digits in files of older versions)


# names Windows keeps for devices, whatever their case or extension: results/CON.json cannot be made there
_WINDOWS_DEVICES = {"CON", "PRN", "AUX", "NUL", *(f"{port}{n}" for port in ("COM", "LPT") for n in range(1, 10))}


def safe_name(student: str) -> str:
    """A file name for ``student``: unchanged when it is plain, else cleaned and made unique by a hash.

    No two students share one: a plain name that ends as a hashed one does (``Ann_Lee-<16 hex>``, which
    a student could compute from a classmate's ``Ann Lee``) is hashed too, and 64 bits of hash are more
    than anyone can search for a second name that cleans to the same and hashes alike."""
    cleaned = _UNSAFE_CHARS.sub("_", student).strip("._") or "student"
    if (cleaned == student and len(student.encode()) <= _PLAIN_NAME_BYTES and not _HASHED_NAME.search(student)
            and student.split(".")[0].upper() not in _WINDOWS_DEVICES):
        return student
    return f"{cleaned[:80]}-{hashlib.sha256(student.encode()).hexdigest()[:16]}"


CELL_KEPT = 8000  # characters of one cell: spreadsheets refuse more than 32,767 (Excel), Python's csv 131,072


def cell(text: str) -> str:
    """Text a spreadsheet will not run as a formula, and short enough for any spreadsheet to read."""
    if len(text) > CELL_KEPT:
        text = text[:CELL_KEPT] + f" ... [{len(text) - CELL_KEPT} more characters]"
    return "'" + text if text.startswith(_FORMULA_START) else text


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` all at once: a reader never sees half a file."""
    temporary = path.with_name(f".{path.name}.tmp")
    temporary.write_text(text, encoding="utf-8")
    temporary.replace(path)
