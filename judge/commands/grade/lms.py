"""Gradebooks an LMS imports: ``canvas.csv`` and ``moodle.csv``, one row per student, the total as the grade.

- **Canvas** (Grades > Import): the columns of Canvas's own gradebook export, ``Student, ID, SIS
  User ID, SIS Login ID, Section``, then one column for the assignment (``--assignment NAME``; a
  name Canvas does not know yet becomes a new assignment), and a ``Points Possible`` row under
  the header. Canvas matches a row by ``ID`` (the Canvas user id, which a Canvas download's file
  names carry) or by ``SIS Login ID`` (the student id of a plain ``NAME.zip``).
- **Moodle**: the assignment's offline grading worksheet (``Identifier`` is ``Participant N``, the
  participant id a Moodle download's folder names carry; ``Full name``; ``Grade``; ``Maximum
  Grade``), which the assignment's "Upload grading worksheet" reads, plus ``Username`` (the
  student id of a plain entry) for the gradebook's "Import > CSV file", where you map it.

The grade is the total after any late penalty; a spreadsheet formula is never written.
"""

from __future__ import annotations

import csv
import io

from ...formats.points import text
from .model import ClassGrades, Graded, cell


def canvas_csv(grades: ClassGrades) -> str:
    """The Canvas gradebook import file (see the module docstring)."""
    buffer, late = io.StringIO(), grades.options.late
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow(["Student", "ID", "SIS User ID", "SIS Login ID", "Section", grades.options.assignment])
    writer.writerow(["Points Possible", "", "", "", "", text(grades.max_total)])
    for item in grades.graded:
        canvas = item.submission.layout == "canvas"
        writer.writerow([cell(_display_name(item)), item.submission.lms_id if canvas else "", "",
                         "" if canvas else cell(item.student), "", text(item.total(late))])
    return buffer.getvalue()


def moodle_csv(grades: ClassGrades) -> str:
    """The Moodle grading worksheet, with a Username column (see the module docstring)."""
    buffer, late = io.StringIO(), grades.options.late
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow(["Identifier", "Full name", "Username", "Grade", "Maximum Grade"])
    for item in grades.graded:
        moodle = item.submission.layout == "moodle"
        writer.writerow([f"Participant {item.submission.lms_id}" if moodle else "", cell(_display_name(item)),
                         "" if moodle else cell(item.student), text(item.total(late)), text(grades.max_total)])
    return buffer.getvalue()


def _display_name(item: Graded) -> str:
    """The student's name without the LMS id the student id carries (``Ada Lovelace_123`` -> ``Ada Lovelace``)."""
    lms_id = item.submission.lms_id
    suffix = f"_{lms_id}"
    return item.student[: -len(suffix)] if lms_id and item.student.endswith(suffix) else item.student
