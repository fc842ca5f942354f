"""Who submitted what: the entries of a submissions folder, grouped into one :class:`Entry` per student.

A submissions folder is laid out one of four ways, told apart by its names:

- **plain**: ``NAME.zip`` or ``NAME/``, one per student (the student id is NAME);
- **Canvas** (the assignment's "Download Submissions" zip, unpacked): every file a student
  attached, flat, named ``<lastnamefirstname>[_LATE]_<user id>_<submission id>_<file name>``,
  a resubmitted file's name ending in ``-1``, ``-2`` before its extension;
- **Moodle** ("Download all submissions", unpacked): a folder per student and plugin,
  ``<Full Name>_<participant id>_assignsubmission_file`` (or, downloaded without folders, files
  named ``<Full Name>_<participant id>_assignsubmission_file_<file name>``);
- **Blackboard** ("Download Assignment", unpacked): ``<assignment>_<username>_attempt_<YYYY-MM-DD-HH-MM-SS>_<file
  name>`` per file and a receipt ``<assignment>_<username>_attempt_<time>.txt`` per attempt; the
  latest attempt of each student is graded, and its time is the submission time.

A name that fits none of the LMS patterns is a plain entry. Two entries of the same student id
(``alice.zip`` beside ``alice/``; ``Alice.zip`` too, and a Blackboard attempt or a Canvas file of
``alice`` beside the folder: ids are told apart as a person reads them, whatever their case, Unicode
form or bytes that are not UTF-8) are one :class:`Entry` with an ``error`` naming both: the judge
never picks one, nor lets one overwrite the other's feedback, on any file system.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from ...core.result import BIDI_CONTROLS
from ...i18n import _

_CANVAS = re.compile(r"^(?P<name>[a-z0-9]+)(?P<late>_LATE)?_(?P<uid>\d+)_(?P<sid>\d+)_(?P<file>.+)$")
_CANVAS_RESUBMITTED = re.compile(r"-\d+(?=\.[^.]+$|$)")
# The student chooses the file name an LMS appends to its own prefix, so each pattern takes the student from
# the prefix alone: the first "_<user>_attempt_<time>" (Blackboard), the first "_<id>_assignsubmission_" of a
# Moodle file; a Moodle folder's name ends with its prefix. Canvas's is anchored at the start.
_MOODLE = re.compile(r"^(?P<name>.+?)_(?P<uid>\d+)_assignsubmission_(?P<plugin>[a-z]+)(?:_(?P<file>.*))?$")
_MOODLE_FOLDER = re.compile(r"^(?P<name>.+)_(?P<uid>\d+)_assignsubmission_(?P<plugin>[a-z]+)_?(?P<file>)$")
_BLACKBOARD = re.compile(r"^(?P<assignment>.+?)_(?P<user>[^_]+)_attempt_(?P<time>\d{4}(?:-\d{2}){5})"
                         r"(?:_(?P<file>.+)|\.txt)$")
_BLACKBOARD_TIME = "%Y-%m-%d-%H-%M-%S"


@dataclass
class Entry:
    """One student's submission as the folder holds it: one or more files or folders."""

    student: str
    paths: list[Path] = field(default_factory=list)
    layout: str = "plain"  # plain | canvas | moodle | blackboard | stray (a loose file of no student)
    names: dict[Path, str] = field(default_factory=dict)  # a loose file's original name, where the LMS renamed it
    lms_id: str = ""  # the LMS's id for the student (Canvas user id, Moodle participant id, Blackboard username)
    submitted_at: datetime | None = None  # when the layout says (Blackboard)
    late_marked: bool = False  # the LMS marked it late without a time (Canvas)
    error: str = ""  # why it cannot be graded as it is
    notes: list[str] = field(default_factory=list)  # what of it was set aside, and why

    @property
    def origin(self) -> Path:
        return self.paths[0]


STRAY = "stray"  # the layout of a file in the submissions folder that is neither a folder nor a .zip


def discover_entries(folder: Path) -> list[Entry]:
    """One :class:`Entry` per student in ``folder`` (hidden names skipped), sorted by student id."""
    if not folder.is_dir():
        raise FileNotFoundError(_("{path}: no such submissions folder").format(path=folder))
    entries: dict[str, Entry] = {}
    attempts: dict[str, dict[datetime, list[Path]]] = {}
    for path in sorted(folder.iterdir()):
        if path.name.startswith((".", "_")):
            continue
        # a Canvas or Moodle download's file whose own name looks like a Blackboard one stays its sender's
        blackboard = None if _CANVAS.match(path.name) or _MOODLE.match(path.name) else _BLACKBOARD.match(path.name)
        when = _blackboard_time(blackboard["time"]) if blackboard and not path.is_dir() else None
        if blackboard and when is not None:
            attempts.setdefault(blackboard["user"], {}).setdefault(when, [])
            if blackboard["file"]:
                attempts[blackboard["user"]][when].append(path)
            continue
        _add(entries, path)
    for user, by_time in attempts.items():
        _claim(entries, _latest_attempt(user, by_time))
    return sorted(entries.values(), key=lambda e: e.student)


def _blackboard_time(text: str) -> datetime | None:
    """The attempt's time in a Blackboard name; None for a time no clock shows (``2026-13-32-25-61-61``): then
    the name is not Blackboard's, and the file a plain entry."""
    try:
        return datetime.strptime(text, _BLACKBOARD_TIME)
    except ValueError:
        return None


def student_key(student: str) -> str:
    """What tells two student ids apart: not their case, Unicode form, or how a name that is not UTF-8 is
    stored (``Alee`` is ``alee``: on a file system that ignores case, the two would share their files)."""
    return unicodedata.normalize("NFC", printable(student)).casefold()


def printable(text: str) -> str:
    """``text`` with the bytes of a name that is not UTF-8 shown as ``\\xff`` escapes (and any other lone
    surrogate as ``\\udXXX``), and its control characters as escapes too (``\\x1b``, ``\\u202e``: a zip member's
    name could otherwise rewrite or reverse the instructor's terminal): what a UTF-8 file holds and a person
    can read."""
    try:
        text = text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:
        text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    return _CONTROL.sub(lambda found: found.group().encode("unicode_escape").decode("ascii"), text)


_CONTROL = re.compile(f"[\\x00-\\x1f\\x7f-\\x9f{BIDI_CONTROLS}]")


def _claim(entries: dict[str, Entry], entry: Entry) -> Entry:
    """Add ``entry`` to ``entries``, or, when another entry claims the same student, make the two one entry with
    an error: two submissions of one student (in two layouts too: a Blackboard attempt named after a classmate
    beside the classmate's folder), and the judge picks neither."""
    key = student_key(entry.student)
    first = entries.get(key)
    if first is None:
        entries[key] = entry
        return entry
    first.paths += entry.paths
    shown = ", ".join(_shown(p) for p in first.paths)
    first.error = f"two submissions for {first.student} ({shown}); none was judged: keep one"
    return first


def _add(entries: dict[str, Entry], path: Path) -> None:
    canvas = _CANVAS.match(path.name) if not path.is_dir() else None
    moodle = (_MOODLE_FOLDER if path.is_dir() else _MOODLE).match(path.name)
    if canvas:
        student = f"{canvas['name']}_{canvas['uid']}"
        entry = entries.get(student_key(student)) or Entry(student, layout="canvas", lms_id=canvas["uid"])
        if entry.layout != "canvas" or entry.error:
            _claim(entries, Entry(student, [path], layout="canvas", lms_id=canvas["uid"]))
            return
        entries[student_key(student)] = entry
        name = _CANVAS_RESUBMITTED.sub("", canvas["file"])
        entry.late_marked = entry.late_marked or bool(canvas["late"])
        same = next((p for p, n in entry.names.items() if n == name), None)
        if same is not None:  # adder.py beside adder-1.py: the later one (the higher number) is the answer
            newer, older = sorted([same, path], key=lambda p: _canvas_copy_number(p), reverse=True)
            entry.paths.remove(same)
            del entry.names[same]
            entry.notes.append(f"not judged: {older.name} (an earlier copy of {name}: Canvas's {newer.name} is "
                               "later)")
            path = newer
        entry.paths.append(path)
        entry.names[path] = name
    elif moodle:
        student = f"{moodle['name']}_{moodle['uid']}"
        entry = entries.get(student_key(student)) or Entry(student, layout="moodle", lms_id=moodle["uid"])
        if entry.layout != "moodle" or entry.error:
            _claim(entries, Entry(student, [path], layout="moodle", lms_id=moodle["uid"]))
            return
        entries[student_key(student)] = entry
        entry.paths.append(path)
        if moodle["file"] and not path.is_dir():
            entry.names[path] = moodle["file"]
    else:
        student = student_name(path)
        plain = path.is_dir() or path.name.lower().endswith(".zip")
        # a file dropped beside the submissions (not a folder, not a zip): a row that says so, in no LMS's gradebook
        _claim(entries, Entry(student, [path], layout="plain" if plain else STRAY))


def _canvas_copy_number(path: Path) -> tuple[int, int]:
    """How late a Canvas file is: its ``-N`` resubmission number (0 for none), then its submission id."""
    canvas = _CANVAS.match(path.name)
    if canvas is None:
        return (0, 0)
    copy = _CANVAS_RESUBMITTED.search(canvas["file"])
    return (int(copy.group(0)[1:]) if copy else 0, int(canvas["sid"]))


def _latest_attempt(user: str, by_time: dict[datetime, list[Path]]) -> Entry:
    latest = max(by_time)
    entry = Entry(user, sorted(by_time[latest]), layout="blackboard", lms_id=user, submitted_at=latest)
    entry.names = {p: m["file"] for p in entry.paths if (m := _BLACKBOARD.match(p.name)) and m["file"]}
    older = sorted(t for t in by_time if t != latest)
    if older:
        entry.notes.append(f"{len(older)} earlier attempt(s) not graded (the latest, {latest:%Y-%m-%d %H:%M:%S}, is)")
    if not entry.paths:
        entry.paths = [Path(f"{user} (attempt {latest:%Y-%m-%d-%H-%M-%S})")]
        entry.error = "the latest attempt has no file (only Blackboard's receipt)"
    return entry


def entry_of(path: Path) -> Entry:
    """The :class:`Entry` of one submission given on its own (regrading one student): a plain zip or
    folder is ``NAME``; an LMS-named file or folder is the student its folder's layout maps it to,
    with that student's other files beside it (Canvas attachments, the Blackboard attempt)."""
    if is_lms_name(path.name) and path.parent.is_dir():
        for entry in discover_entries(path.parent):
            if path in entry.paths:
                return entry
    return Entry(student_name(path), [path])


def is_lms_name(name: str) -> bool:
    """Whether ``name`` is named as a Canvas, Moodle or Blackboard download names a student's file or folder."""
    return any(pattern.match(name) for pattern in (_CANVAS, _MOODLE, _BLACKBOARD))


def student_name(path: Path) -> str:
    """A plain entry's student id: the file name without ``.zip``, or the folder name."""
    return path.name[:-4] if path.name.lower().endswith(".zip") and not path.is_dir() else path.name


def _shown(path: Path) -> str:
    return path.name + ("/" if path.is_dir() else "")
