"""``judge grade``, the command: its arguments, and the summary it prints (the work: :mod:`judge.commands.grade`)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from ...core.errors import ExitCode, UsageError
from ...i18n import _
from ..options import assignment_problems, common_options, language_option, native_engine, only_problems
from . import FEEDBACK_LEVELS

if TYPE_CHECKING:
    from . import ClassGrades

DESCRIPTION = ("Grade a class: every submission in SUBMISSIONS (NAME.zip or folder NAME/, or a Canvas, Moodle or "
               "Blackboard download, unpacked) against every problem's public and secret tests. Writes grades.csv, "
               "canvas.csv, moodle.csv, results/, feedback/, report.html and similarity.csv to OUT_DIR; unchanged "
               "submissions are not judged again. Given one submission (a zip, or a folder laid out like "
               "practice/), regrades that student and updates their row.")


def add_arguments(grade: argparse.ArgumentParser) -> None:
    """``judge grade``'s options: the submissions, where the outputs go, feedback, late policy, similarity."""
    grade.add_argument("submissions", type=Path, metavar="SUBMISSIONS",
                       help="the folder of submissions, or one student's zip or folder")
    grade.add_argument("-o", "--out", dest="out_dir", type=Path, required=True, metavar="OUT_DIR",
                       help="where the gradebook, results, feedback and report go (created if missing)")
    common_options(grade)
    grade.add_argument("--problem", dest="only", action="append", metavar="ID",
                       help="grade only this problem (repeat for more); grades.csv then has its columns only: give "
                       "another OUT_DIR than the whole class's")
    grade.add_argument("--feedback", choices=FEEDBACK_LEVELS, default="names",
                       help="what feedback/ shows of the secret tests: full (names and messages, never "
                       "their code), names (name and pass/fail; the default) or none")
    language_option(grade, "the feedback files and the errors")
    grade.add_argument("--force", action="store_true", help="judge every submission again, changed or not")
    grade.add_argument("--deadline", metavar="TIME", help="late policy: the deadline, e.g. 2026-12-01T23:59 (the "
                       "LMS's local time); applies where the layout gives submission times (Blackboard)")
    grade.add_argument("--late-penalty", type=float, metavar="PERCENT",
                       help="with --deadline: percent of the total taken off per started day late (default: the "
                       "assignment's late_penalty in course.toml, else 10)")
    grade.add_argument("--similarity", type=_share, default=0.8, metavar="SHARE",
                       help="report pairs whose code for a problem overlaps by at least SHARE (0-1, default 0.8; "
                       "0 turns it off); needs copydetect: pip install \"pp-judge[similarity]\"")
    grade.add_argument("--assignment", metavar="NAME",
                       help="the course's assignment NAME (course.toml's [[assignments]] beside the problems): its "
                       "problems, deadline and late policy, its column in canvas.csv; without [[assignments]], only "
                       "the column's name in canvas.csv and moodle-gradebook.csv (default: judge)")
    grade.add_argument("--zero-unreadable", action="store_true",
                       help="give 0 to a submission that could not be read (a corrupt or empty zip, two files for "
                       "one problem); by default it has no grade: an empty cell in grades.csv and the LMS files, "
                       "with the reason in the status column and on the terminal")
    grade.add_argument("--objective-threshold", type=_share, default=0.5, metavar="SHARE",
                       help="report.html lists, per learning objective, the students below SHARE of its points "
                       "(0-1, default 0.5); objectives.csv has every student's points per objective")
    grade.add_argument("--times", type=Path, metavar="FILE",
                       help="a CSV of when each student handed in (columns student, submitted_at) and of extensions "
                       "(an optional deadline column: that student's own), for the late policy where the download "
                       "gives no times (Canvas, Moodle, plain zips)")
    grade.add_argument("--note", default="", metavar="TEXT",
                       help="why this run regrades (e.g. \"test_big fixed\"): history.csv keeps it beside each cell of "
                       "grades.csv the run changes, with the value before")
    grade.add_argument("--moodle-worksheet", type=Path, metavar="FILE",
                       help="the grading worksheet downloaded from the Moodle assignment (View all submissions > "
                       "Download grading worksheet): moodle.csv is that worksheet with the grades filled in, and "
                       "its submission times count for --deadline")


def _share(value: str) -> float:
    """An argparse type: a share between 0 and 1."""
    share = float(value)
    if not 0 <= share <= 1:
        raise argparse.ArgumentTypeError(_("must be between 0 and 1"))
    return share


def run(args: argparse.Namespace) -> int:
    """Grade the submissions (or regrade one), write the outputs, print a summary."""
    from ..assignments import DEFAULT_LATE_PENALTY, shared_entries
    from . import Options, grade_class
    from .late import LatePolicy, parse_deadline, read_times

    problems, assignment = assignment_problems(args, grading=True)
    problems = only_problems(problems, args.only)
    if not args.submissions.exists():
        raise UsageError(_("{path}: no such submissions folder or submission").format(path=args.submissions))
    _refuse_inside(args.out_dir, args.submissions)
    penalty = args.late_penalty if args.late_penalty is not None else (
        assignment.late_penalty if assignment else DEFAULT_LATE_PENALTY)
    try:
        deadline = parse_deadline(args.deadline) if args.deadline else (assignment.deadline if assignment else None)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    late = LatePolicy(deadline, penalty) if deadline else None
    try:
        times = read_times(args.times) if args.times else {}
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    worksheet_times = {}
    if args.moodle_worksheet is not None:
        from .lms import read_worksheet, worksheet_submission_times
        worksheet_times = worksheet_submission_times(read_worksheet(args.moodle_worksheet)[1])  # refused if unread
    options = Options(parallel=args.parallel, timeout=args.timeout, feedback=args.feedback, force=args.force,
                      late=late, similarity=args.similarity or None,
                      assignment=assignment.column if assignment else (args.assignment or "judge"),
                      course_assignment=assignment, worksheet_times=worksheet_times,
                      zero_unreadable=args.zero_unreadable, moodle_worksheet=args.moodle_worksheet,
                      objective_threshold=args.objective_threshold, note=args.note, times=times,
                      engine=native_engine(args, problems, grading=True,
                                           private=[args.submissions, args.out_dir]))
    if assignment is not None:
        due = f", due {assignment.deadline:%Y-%m-%d %H:%M} ({penalty:g} % off per started day late)" if deadline else ""
        print(f"Assignment {assignment.name}: {', '.join(p.id for p in problems)}{due}.", file=sys.stderr)
        for line in shared_entries(problems):
            print(f"Note: {line}.", file=sys.stderr)
    grades = grade_class(args.submissions, args.out_dir, problems, options, progress=sys.stderr)
    print(_grade_summary(grades, args.out_dir))
    return ExitCode.OK


def _grade_summary(grades: ClassGrades, out: Path) -> str:
    from .similarity import INSTALL_HINT

    students = grades.students
    unreadable = sum(bool(g.submission.error) for g in students)
    head = (f"Regraded {grades.regraded} ({grades.judged} judged); {len(students)} row(s) in the gradebook"
            if grades.regraded else f"Graded {len(students)} submission(s) ({grades.judged} judged, "
            f"{len(students) - grades.judged} unchanged)")
    similarity = (f" and {out / 'similarity.csv'}" if (out / "similarity.csv").is_file() and
                  grades.options.similarity is not None else "")
    missing = (f"\nSimilarity not computed: {INSTALL_HINT}" if grades.options.similarity is not None and
               not similarity else "")
    gradebook = f", {out / 'moodle-gradebook.csv'}" if (out / "moodle-gradebook.csv").is_file() else ""
    ungraded = [g for g in students if g.unreadable]
    strays = [g.student for g in grades.graded if g.stray]
    if strays:
        missing += (f"\n{len(strays)} loose file(s) of no student in the submissions folder, not graded and left out "
                    f"of canvas.csv and the Moodle files: {', '.join(strays)}")
    if ungraded and not grades.options.zero_unreadable:
        missing += (f"\nNo grade for {len(ungraded)} submission(s) that could not be read (an empty cell in "
                    "grades.csv, canvas.csv and moodle.csv; --zero-unreadable gives them 0):"
                    + "".join(f"\n  {g.student}: {g.unreadable}" for g in ungraded))
    elif ungraded:
        missing += f"\n{len(ungraded)} submission(s) could not be read and score 0 (--zero-unreadable)."
    missing += "".join(f"\nNote: {note}" for note in grades.notes)
    return (f"{head} in {grades.seconds:.1f} s{f'; {unreadable} could not be read' if unreadable else ''}.\n"
            f"Wrote {out / 'grades.csv'}, {out / 'objectives.csv'}, {out / 'canvas.csv'}, {out / 'moodle.csv'}"
            f"{gradebook}, {out / 'report.html'}, {out / 'results'}/, {out / 'feedback'}/{similarity}.{missing}")


def _refuse_inside(out_dir: Path, submissions: Path) -> None:
    """The output folder must not be (inside) the submissions folder: it would be read as a submission."""
    out, subs = out_dir.resolve(), submissions.resolve()
    if subs.is_dir() and (out == subs or subs in out.parents):
        raise UsageError(_("{out} is inside the submissions folder {submissions}; choose another output folder")
                         .format(out=out_dir, submissions=submissions))
