"""Gradebooks an LMS imports: ``canvas.csv``, ``moodle.csv`` (and ``moodle-gradebook.csv``), the total as the grade.

- **Canvas** (Grades > Import): the columns of Canvas's own gradebook export, ``Student, ID, SIS
  User ID, SIS Login ID, Section``, then one column for the assignment (``--assignment NAME`` or the
  course's assignment; give it as Canvas's export heads it, ``Week 3 (12345)``, to fill that
  assignment, else Canvas creates a new one of that name), and a ``Points Possible`` row under the
  header. Canvas matches a row by ``ID`` (the Canvas user id, which a Canvas download's file names
  carry) or by ``SIS Login ID`` (the student id of a plain ``NAME.zip``).
- **Moodle**: the assignment's offline grading worksheet (Assignment > View all submissions >
  Grading action "Download grading worksheet", uploaded back with "Upload grading worksheet"),
  whose importer (``mod/assign/feedback/offline/importgradeslib.php``) finds its columns by their
  headings and needs ``Identifier`` (``Participant N``: the participant id that a Moodle download's
  folder names carry, ``Full Name_N_assignsubmission_file_``), ``Grade`` and ``Last modified
  (grade)``. ``moodle.csv`` has every column of the worksheet Moodle writes, one row per student
  from a Moodle download; given the worksheet the instructor downloaded (``--moodle-worksheet
  FILE``), it is that worksheet with its rows, identifiers, dates and other columns kept and the
  ``Grade`` of each graded student filled in (matched by participant id, else by e-mail address or
  full name for a plain entry). Students with no participant id (plain entries) go to
  ``moodle-gradebook.csv`` (``Username``, ``Full name``, the grade) for the gradebook's "Import >
  CSV file", where Username is mapped to the user's username.

A submission that could not be read (a corrupt or empty zip, two files for one problem) has no grade:
its cell is empty, which both importers read as "no grade given" (``--zero-unreadable``: 0). The
grade is the total after any late penalty; a spreadsheet formula is never written.
"""

from __future__ import annotations

import csv
import html
import io
from datetime import datetime
from pathlib import Path

from ...core.errors import UsageError
from ...formats.points import text
from .model import ClassGrades, Graded, cell

MOODLE_COLUMNS = ("Identifier", "Full name", "Email address", "Status", "Grade", "Maximum grade",
                  "Grade can be changed", "Last modified (submission)", "Last modified (grade)", "Feedback comments")
MOODLE_REQUIRED = ("Identifier", "Grade", "Last modified (grade)")  # what Moodle's worksheet importer looks up
MOODLE_GRADEBOOK = "moodle-gradebook.csv"  # students with no participant id, for the gradebook's CSV import
PARTICIPANT = "Participant "  # Moodle's prefix of a worksheet identifier (get_string('hiddenuser', 'assign'))


def canvas_csv(grades: ClassGrades) -> str:
    """The Canvas gradebook import file (see the module docstring)."""
    buffer, options = io.StringIO(), grades.options
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow(["Student", "ID", "SIS User ID", "SIS Login ID", "Section", options.assignment])
    writer.writerow(["Points Possible", "", "", "", "", text(grades.max_total)])
    for item in grades.students:
        canvas = item.submission.layout == "canvas"
        writer.writerow([cell(display_name(item)), item.submission.lms_id if canvas else "", "",
                         "" if canvas else cell(item.student), "", item.grade_text(options)])
    return buffer.getvalue()


def moodle_csv(grades: ClassGrades) -> str:
    """The Moodle grading worksheet: the one given (``--moodle-worksheet``) filled in, else one of Moodle's columns."""
    if grades.options.moodle_worksheet is not None:
        return fill_worksheet(grades, grades.options.moodle_worksheet)
    buffer, options = io.StringIO(), grades.options
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow(MOODLE_COLUMNS)
    for item in grades.graded:
        if item.submission.layout != "moodle":
            continue
        when = item.submission.submitted_at.replace("T", " ") if item.submission.submitted_at else "-"
        writer.writerow([PARTICIPANT + item.submission.lms_id, cell(display_name(item)), "", "Submitted for grading",
                         item.grade_text(options), text(grades.max_total), "Yes", when, "-",
                         cell(_no_grade_note(item, grades))])
    return buffer.getvalue()


def moodle_gradebook_csv(grades: ClassGrades) -> str | None:
    """The students with no Moodle participant id, for the gradebook's CSV import (None: every one has one)."""
    rows = [item for item in grades.students if item.submission.layout != "moodle"]
    rows = [item for item in rows if item.student not in grades.moodle_matched]  # in the worksheet given
    if not rows:
        return None
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow(["Username", "Full name", grades.options.assignment])
    for item in rows:
        writer.writerow([cell(item.student), cell(display_name(item)), item.grade_text(grades.options)])
    return buffer.getvalue()


def fill_worksheet(grades: ClassGrades, path: Path) -> str:
    """The worksheet at ``path`` with each graded student's Grade filled in; every other cell as it was."""
    bom, rows = read_worksheet(path)
    header = rows[0]
    column = {name: header.index(name) for name in header}
    matched: set[str] = set()
    for row in rows[1:]:
        row += [""] * (len(header) - len(row))
        item = _worksheet_student(grades, row, column)
        if item is None:
            continue
        matched.add(item.student)
        row[column["Grade"]] = item.grade_text(grades.options)
        note = _no_grade_note(item, grades)
        if note and "Feedback comments" in column and not row[column["Feedback comments"]].strip():
            row[column["Feedback comments"]] = cell(note)
    maximum = next((r[column["Maximum grade"]] for r in rows[1:] if "Maximum grade" in column
                    and r[column["Maximum grade"]].strip()), "")
    if maximum and _number(maximum) is not None and _number(maximum) != float(grades.max_total):
        grades.notes.append(f"the Moodle assignment's maximum grade is {maximum} and the judge's total is out of "
                            f"{text(grades.max_total)}: set the assignment's maximum grade to {text(grades.max_total)} "
                            "before uploading moodle.csv")
    grades.moodle_matched = matched
    unmatched = [g.student for g in grades.graded if g.student not in matched and g.submission.layout == "moodle"]
    if unmatched:
        grades.notes.append(f"{len(unmatched)} student(s) from a Moodle download not in the Moodle worksheet "
                            f"(no row with their participant id), left out of moodle.csv: {', '.join(unmatched[:8])}"
                            + (" ..." if len(unmatched) > 8 else ""))
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\r\n").writerows(rows)
    return ("\ufeff" if bom else "") + buffer.getvalue()


def read_worksheet(path: Path) -> tuple[bool, list[list[str]]]:
    """Moodle's grading worksheet at ``path``: whether it starts with a byte order mark, and its rows
    (:class:`UsageError` when it cannot be read or lacks a column Moodle's importer needs)."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise UsageError(f"--moodle-worksheet {path}: {exc.strerror or exc}") from None
    bom = raw.startswith(b"\xef\xbb\xbf")
    try:
        rows = list(csv.reader(io.StringIO(raw.decode("utf-8-sig"))))
    except (UnicodeDecodeError, csv.Error) as exc:
        raise UsageError(f"--moodle-worksheet {path}: not a UTF-8 CSV file ({exc})") from None
    header = rows[0] if rows else []
    missing = [c for c in MOODLE_REQUIRED if c not in header]
    if missing:
        raise UsageError(f"--moodle-worksheet {path}: not Moodle's grading worksheet (no {', '.join(missing)} "
                         "column): download it from the assignment's View all submissions, Grading action "
                         "'Download grading worksheet'")
    return bom, rows


def worksheet_submission_times(rows: list[list[str]]) -> dict[str, str]:
    """Participant id -> the worksheet's ``Last modified (submission)`` as written (Moodle's download gives no
    times; :func:`moodle_time` reads them)."""
    header = rows[0]
    if "Last modified (submission)" not in header:
        return {}
    ident, when = header.index("Identifier"), header.index("Last modified (submission)")
    times = {}
    for row in rows[1:]:
        if len(row) > max(ident, when) and row[ident].strip().startswith(PARTICIPANT):
            text = row[when].strip()
            if text and text != "-":
                times[row[ident].strip()[len(PARTICIPANT):].strip()] = text
    return times


def moodle_time(text: str) -> str:
    """A worksheet's time (``Wednesday, 2 December 2026, 9:00 AM``: Moodle's English strftimedatetime) in ISO
    form; ValueError for another form (another language's, or a site's own)."""
    return datetime.strptime(text.strip(), MOODLE_TIME_FORMAT).isoformat()


MOODLE_TIME_FORMAT = "%A, %d %B %Y, %I:%M %p"


def _worksheet_student(grades: ClassGrades, row: list[str], column: dict[str, int]) -> Graded | None:
    ident = row[column["Identifier"]].strip()
    number = ident[len(PARTICIPANT):].strip() if ident.startswith(PARTICIPANT) else ident
    for item in grades.students:
        if item.submission.layout == "moodle" and number and item.submission.lms_id == number:
            return item
    email = row[column["Email address"]].strip().lower() if "Email address" in column else ""
    name = row[column["Full name"]].strip().lower() if "Full name" in column else ""
    for item in grades.students:
        if item.submission.layout == "moodle":
            continue
        student = item.student.lower()
        if (email and student in (email, email.split("@")[0])) or (name and student == name):
            return item
    return None


def _no_grade_note(item: Graded, grades: ClassGrades) -> str:
    """The worksheet's feedback comment for a submission with no grade. Moodle may keep a comment as HTML: the
    reason names the learner's files, so its <, > and & are escaped."""
    if item.no_grade(grades.options):
        return "No grade: your submission could not be read (" + html.escape(item.unreadable, quote=False) + ")."
    return ""


def _number(value: str) -> float | None:
    try:
        return float(value.strip().replace(",", "."))
    except ValueError:
        return None


def display_name(item: Graded) -> str:
    """The student's name without the LMS id the student id carries (``Ada Lovelace_123`` -> ``Ada Lovelace``)."""
    lms_id = item.submission.lms_id
    suffix = f"_{lms_id}"
    return item.student[: -len(suffix)] if lms_id and item.student.endswith(suffix) else item.student
