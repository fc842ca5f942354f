"""Read a class's submissions safely: zips, folders and LMS downloads in, learner code (text in memory) out.

A student's submission (an :class:`~.layouts.Entry`: a zip, a folder, or the files an LMS
download holds for them) is a set of files. A zip inside a submitted folder, or an LMS's
attachment that is a zip, is read as if its content were there (one level: a zip inside that
zip is not opened). Each problem's entry file is found at ``<problem-id>/<entry>`` (the web
app's zip and a ``practice/`` folder), under one wrapping folder (``practice/<problem-id>/<entry>``),
or loose (``<entry>``) when no other problem has an entry file of that name.

Every file is judged or accounted for: the practice folder's own copies (statements, public
tests, support modules, assets) and system litter (``__MACOSX``, ``.DS_Store``, hidden files) are
passed over; anything else is named in :attr:`Submission.notes` with why it was not judged (a
loose ``pp_sim.py`` that is the entry of two problems, a file of no problem).

Nothing is extracted: only the entry files are read, into memory, with a size cap, so a path
that escapes (``../``, absolute, a symlink) can never be written anywhere. Such a path, a corrupt
or empty zip, a zip bomb (too many members or too many declared bytes), two files for the same
problem, a file that is not UTF-8 or a submission with no known problem never raise: each is a
reason recorded on the :class:`Submission`.
"""

from __future__ import annotations

import hashlib
import io
import os
import re
import stat
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path, PurePosixPath
from typing import IO, Any

from ...core.problem import Problem
from ...i18n import _
from ..practice import LAUNCHER
from ..statements import is_translation
from .layouts import Entry, printable, student_name

MAX_MEMBERS = 2000  # files and folders in one submission
MAX_TOTAL_BYTES = 64 * 1024 * 1024  # declared uncompressed size of one submission
MAX_ENTRY_BYTES = 1024 * 1024  # one entry file (learner code)
MAX_INNER_ZIP_BYTES = 16 * 1024 * 1024  # a zip inside a submitted folder, read into memory
MAX_DEPTH = 32  # folders inside folders in one submission
NOTES_SHOWN = 6  # files named in a note before "and N more"
NAME_SHOWN = 160  # characters of one file's name in a note or a reason (a name may be 65,000 long)
_IGNORED = ("__MACOSX", "__pycache__", ".DS_Store", "Thumbs.db", "desktop.ini")
_PRACTICE_COPIES = ("README.md", "tests", "assets")  # what `judge practice/` puts beside the entry (+ README.<lang>.md)


@dataclass
class Submission:
    """One student's submission as read: sources by problem id, and what went wrong."""

    student: str
    origin: Path
    sources: dict[str, str] = field(default_factory=dict)  # problem id -> the entry file's text
    unreadable: dict[str, str] = field(default_factory=dict)  # problem id -> why it cannot be judged
    error: str = ""  # why nothing in it can be judged ("" when it could be read)
    notes: list[str] = field(default_factory=list)  # files that were not judged, and why
    files: dict[str, str] = field(default_factory=dict)  # problem id -> where its entry file was found
    layout: str = "plain"
    lms_id: str = ""
    submitted_at: str = ""  # ISO time, when the layout (or --times) says
    late_marked: bool = False
    deadline: str = ""  # ISO time: this student's extended deadline (--times), "" for the assignment's

    @property
    def problems(self) -> list[str]:
        return sorted(set(self.sources) | set(self.unreadable))

    def digest(self) -> str:
        """sha256 of everything that decides this submission's grade on the student's side."""
        hasher = hashlib.sha256(f"{self.error}\0{self.submitted_at}\0{self.late_marked}".encode())
        for pid in sorted(self.sources):
            hasher.update(f"\0{pid}\0".encode() + self.sources[pid].encode())
        for pid in sorted(self.unreadable):
            hasher.update(f"\1{pid}\1{self.unreadable[pid]}".encode())
        return hasher.hexdigest()

    def problem_statuses(self) -> list[str]:
        """Reasons to show in the gradebook's status column."""
        return [self.error] if self.error else [f"{pid}: {why}" for pid, why in sorted(self.unreadable.items())]

    def to_dict(self) -> dict[str, Any]:
        """What ``results/<student>.json`` keeps of the submission (a regrade of one reads the rest back)."""
        return {"origin": printable(str(self.origin)), "layout": self.layout, "lms_id": self.lms_id,
                "submitted_at": self.submitted_at, "late_marked": self.late_marked, "deadline": self.deadline,
                "error": self.error,
                "unreadable": self.unreadable, "notes": self.notes, "files": self.files, "sources": self.sources}

    @classmethod
    def from_dict(cls, student: str, data: dict[str, Any]) -> Submission:
        fields = {k: data[k] for k in ("layout", "lms_id", "submitted_at", "late_marked", "deadline", "error",
                                       "unreadable", "notes", "files", "sources") if k in data}
        return cls(student, Path(data.get("origin", student)), **fields)


class _Unsafe(Exception):
    """A submission that must not be read further."""


@dataclass
class _File:
    path: PurePosixPath  # where the judge looks for it (inside the submission)
    size: int
    opener: Callable[[], IO[bytes]]
    shown: str = ""  # how the student would name it, for messages

    @property
    def label(self) -> str:
        return shortened(self.shown or str(self.path))

    def read(self, limit: int = MAX_ENTRY_BYTES) -> bytes:
        """At most ``limit + 1`` bytes (one more than allowed tells that it is too large)."""
        with self.opener() as handle:
            return handle.read(limit + 1)


def discover(folder: Path) -> list[Entry]:
    """The submissions in ``folder``, one :class:`Entry` per student (see :mod:`.layouts`)."""
    from .layouts import discover_entries

    return discover_entries(folder)


def read_submission(path: Path, problems: list[Problem]) -> Submission:
    """Read one zip or folder as one student's submission; never raises for anything it contains."""
    return read_entry(Entry(student_name(path), [path]), problems)


def read_entry(entry: Entry, problems: list[Problem]) -> Submission:
    """Read one student's :class:`Entry`; never raises for anything the submission contains."""
    submission = Submission(entry.student, entry.origin, layout=entry.layout, lms_id=entry.lms_id,
                            submitted_at=entry.submitted_at.isoformat() if entry.submitted_at else "",
                            late_marked=entry.late_marked, notes=list(entry.notes), error=entry.error)
    if entry.error:  # two submissions of one student, whose names may not be UTF-8
        return _displayable(submission)
    try:
        with _Reader() as reader:
            for path in entry.paths:
                reader.add(path, entry.names.get(path))
            submission.notes += reader.notes  # kept when nothing else is judged (a zip inside a zip, alone)
            _match(submission, reader.files, problems)
    except _Unsafe as exc:
        submission.error = str(exc)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError, ValueError, NotImplementedError) as exc:
        submission.error = _("not a readable zip file ({error})").format(error=_read_error(exc))
    except Exception as exc:  # noqa: BLE001 - whatever else a crafted zip or folder makes the readers raise
        # (zipfile's own IndexError on an empty member name, in Python 3.11) is this student's, not the class's
        submission.error = _("the submission could not be read ({error})").format(error=_read_error(exc))
    return _displayable(submission)


def _displayable(submission: Submission) -> Submission:
    """``submission`` with every name it took from the disk or a zip writable as UTF-8: a file or folder name
    that is not UTF-8 (Python keeps its bytes as lone surrogates) would stop the writing of every output,
    for the whole class, after everyone was judged."""
    submission.student, submission.lms_id = printable(submission.student), printable(submission.lms_id)
    submission.error = printable(submission.error)
    submission.notes = [printable(note) for note in submission.notes]
    submission.unreadable = {pid: printable(why) for pid, why in submission.unreadable.items()}
    submission.files = {pid: printable(where) for pid, where in submission.files.items()}
    return submission


class _Reader:
    """Gathers the files of one submission's paths, within the limits; closes the zips it opened."""

    def __init__(self) -> None:
        self.files: list[_File] = []
        self.notes: list[str] = []
        self._archives: list[zipfile.ZipFile] = []
        self._handles: list[IO[bytes]] = []  # the zips' files: a ZipFile does not close a file it was given
        self._count = self._total = 0

    def __enter__(self) -> _Reader:
        return self

    def __exit__(self, *exc: object) -> None:
        for archive in self._archives:
            archive.close()
        for handle in self._handles:
            handle.close()

    def add(self, path: Path, original_name: str | None) -> None:
        seen = path.lstat()
        if stat.S_ISLNK(seen.st_mode):
            raise _Unsafe(_("{name} is a symbolic link; it was not followed").format(name=path.name))
        if stat.S_ISDIR(seen.st_mode):
            for file in _folder_files(path):
                self._take(file, inner_zips=True)
        elif (original_name or path.name).lower().endswith(".zip"):
            self._handles.append(_opener(path, seen)())
            _refuse_many_members(self._handles[-1])
            self._add_zip(zipfile.ZipFile(self._handles[-1]), prefix=f"{original_name}:" if original_name else "")
        elif original_name is not None:  # an LMS's loose attachment
            self._take(_File(PurePosixPath(original_name), seen.st_size, _opener(path, seen), original_name),
                       inner_zips=False)
        else:
            raise _Unsafe(_("{name} is neither a .zip file nor a folder (a loose file of no student: put it in a "
                            "student's folder or zip)").format(name=path.name))

    def _add_zip(self, archive: zipfile.ZipFile, prefix: str) -> None:
        self._archives.append(archive)
        for file in _zip_files(archive):
            file.shown = prefix + str(file.path)
            self._take(file, inner_zips=False)

    def _take(self, file: _File, inner_zips: bool) -> None:
        self._count += 1
        self._total += file.size
        if self._count > MAX_MEMBERS:
            raise _Unsafe(_("the submission has more than {n} files").format(n=MAX_MEMBERS))
        if self._total > MAX_TOTAL_BYTES:
            raise _Unsafe(_("the submission would unpack to more than {mib} MiB (a zip bomb?)").format(
                mib=MAX_TOTAL_BYTES // 2**20))
        if file.path.suffix.lower() != ".zip":
            self.files.append(file)
        elif inner_zips and file.size <= MAX_INNER_ZIP_BYTES:
            inner = io.BytesIO(file.read(MAX_INNER_ZIP_BYTES))
            _refuse_many_members(inner)
            self._add_zip(zipfile.ZipFile(inner), prefix=f"{file.label}:")
        else:
            self.notes.append(_("not judged: {file} (a zip inside a zip, or over {mib} MiB, is not opened)").format(
                file=file.label, mib=MAX_INNER_ZIP_BYTES // 2**20))


def _refuse_many_members(handle: IO[bytes]) -> None:
    """Refuse a zip whose directory is too large for :data:`MAX_MEMBERS` members, before ``zipfile`` reads it
    (a million members: seconds and half a GiB for one submission). The records are found as ``zipfile``
    finds them (the end record at the very end, else the last one in the comment's reach; the ZIP64 end
    record before it whenever its locator is there), and ``zipfile`` reads a directory by its size in bytes,
    whatever the count beside it says: the larger of each is checked."""
    size = handle.seek(0, os.SEEK_END)
    tail_start = max(0, size - _EOCD_SIZE - 0xFFFF)  # the record, then a comment of up to 64 KiB
    handle.seek(tail_start)
    tail = handle.read()
    at = len(tail) - _EOCD_SIZE
    if at < 0 or tail[at:at + 4] != b"PK\x05\x06" or tail[at + 20:at + 22] != b"\0\0":  # no comment: at the end
        at = tail.rfind(b"PK\x05\x06")
    if at < 0 or at + _EOCD_SIZE > len(tail):
        handle.seek(0)
        return  # not a zip's end: zipfile says so in its own words
    count = int.from_bytes(tail[at + 10:at + 12], "little")  # the total number of members
    directory = int.from_bytes(tail[at + 12:at + 16], "little")  # the directory's size in bytes
    if tail_start + at >= _ZIP64_TAIL:
        handle.seek(tail_start + at - _ZIP64_TAIL)  # the ZIP64 end record, then its locator
        record = handle.read(_ZIP64_TAIL)
        if record.startswith(b"PK\x06\x06") and record[56:60] == b"PK\x06\x07":
            count = max(count, int.from_bytes(record[32:40], "little"))
            directory = max(directory, int.from_bytes(record[40:48], "little"))
    handle.seek(0)
    if count > MAX_MEMBERS or directory > MAX_MEMBERS * _MAX_DIRECTORY_ENTRY:
        raise _Unsafe(_("the zip has {n} members, more than the {allowed} allowed").format(
            n=max(count, directory // _MIN_DIRECTORY_ENTRY), allowed=MAX_MEMBERS))


_EOCD_SIZE = 22  # the end of central directory record, without its comment
_ZIP64_TAIL = 56 + 20  # the ZIP64 end of central directory record and its locator
_MIN_DIRECTORY_ENTRY = 46  # a member's entry in the directory, with an empty name
_MAX_DIRECTORY_ENTRY = 46 + 1024  # and with a long name and extra fields, more than any real zip has


def _zip_files(archive: zipfile.ZipFile) -> Iterator[_File]:
    members = archive.infolist()
    if len(members) > MAX_MEMBERS:
        raise _Unsafe(_("the zip has {n} members, more than the {allowed} allowed").format(
            n=len(members), allowed=MAX_MEMBERS))
    if sum(m.file_size for m in members) > MAX_TOTAL_BYTES:
        raise _Unsafe(_("the zip would unpack to more than {mib} MiB (a zip bomb?)").format(
            mib=MAX_TOTAL_BYTES // 2**20))
    for member in members:
        path = _safe_path(member.filename)
        if stat.S_ISLNK(member.external_attr >> 16):
            raise _Unsafe(_("the zip contains a symbolic link ({name}); links are not allowed").format(
                name=shortened(member.filename)))
        if member.is_dir() or _ignored(path):
            continue
        yield _File(path, member.file_size, partial(archive.open, member))


def _folder_files(root: Path) -> Iterator[_File]:
    """The files under ``root``, each with the ``lstat`` its read must still match (:func:`_opener`).

    Each folder is opened relative to its parent's open descriptor without following links, so a folder
    swapped for a link while it is walked is not entered. The walk keeps its own stack, with a depth
    limit: a tree a thousand folders deep exhausts a recursive walk (``os.fwalk`` in Python 3.11 and 3.12)
    and would stop the grading of the whole class."""
    stack = [(PurePosixPath(), _open_folder(root, PurePosixPath(), None))]
    count = total = 0
    try:
        while stack:
            here, folder_fd = stack.pop()
            try:
                listing = _list_folder(root, here, folder_fd)
                count += len(listing)
                if count > MAX_MEMBERS:
                    raise _Unsafe(_("the folder has more than {n} files and folders").format(n=MAX_MEMBERS))
                folders = [name for name, info in listing if stat.S_ISDIR(info.st_mode)
                           and name not in _IGNORED and not name.startswith(".")]
                if folders and len(here.parts) >= MAX_DEPTH:
                    raise _Unsafe(_("the folder has folders nested more than {n} deep").format(n=MAX_DEPTH))
                for name in reversed(folders):  # popped in order: the first folder is walked first
                    stack.append((here / name, _open_folder(root, here / name, folder_fd)))
            finally:
                os.close(folder_fd)
            for name, info in listing:
                path = here / name
                if stat.S_ISREG(info.st_mode) and not _ignored(path):
                    total += info.st_size
                    if total > MAX_TOTAL_BYTES:
                        raise _Unsafe(_("the folder holds more than {mib} MiB").format(mib=MAX_TOTAL_BYTES // 2**20))
                    yield _File(path, info.st_size, _opener(root / path, info))
    finally:
        for _path, fd in stack:
            os.close(fd)


def _open_folder(root: Path, path: PurePosixPath, parent_fd: int | None) -> int:
    """An open descriptor of the folder ``root``/``path`` (``path``'s last part opened in ``parent_fd``)."""
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        return os.open(root if parent_fd is None else path.name, flags, dir_fd=parent_fd)
    except OSError as exc:
        raise _Unsafe(_unreadable_folder(path, exc)) from None


def _list_folder(root: Path, path: PurePosixPath, folder_fd: int) -> list[tuple[str, os.stat_result]]:
    """The names in an open folder with their ``lstat``, sorted; a link among them is refused."""
    try:
        listing = [(name, os.stat(name, dir_fd=folder_fd, follow_symlinks=False))
                   for name in sorted(os.listdir(folder_fd))]
    except OSError as exc:
        raise _Unsafe(_unreadable_folder(path, exc)) from None
    for name, info in listing:
        if stat.S_ISLNK(info.st_mode):
            raise _Unsafe(_("{name} is a symbolic link; links are not allowed").format(name=path / name))
    return listing


def _unreadable_folder(path: PurePosixPath, exc: OSError) -> str:
    """Why a folder of the submission could not be listed (its place in the submission, not the grader's path):
    its files cannot be told apart from files never handed in, so the whole submission is unreadable."""
    return _("the folder {name} could not be read ({error})").format(
        name=str(path) if path.parts else ".", error=exc.strerror or type(exc).__name__)


def _opener(path: Path, seen: os.stat_result) -> Callable[[], IO[bytes]]:
    """Opens ``path`` only while it is still the regular file ``seen`` (its ``lstat`` when the submission
    was listed). Where students can write to the submissions folder while it is graded, one could swap the
    file, or a folder above it, for a link to a file only the grader may read (a reference, a classmate's
    zip) between that listing and this read."""
    def open_seen() -> IO[bytes]:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        try:
            now = os.fstat(fd)
            if not stat.S_ISREG(now.st_mode) or (now.st_dev, now.st_ino) != (seen.st_dev, seen.st_ino):
                raise OSError(_("{name} changed while the submissions were being read; it was not read").format(
                    name=path.name))
            return os.fdopen(fd, "rb")
        except BaseException:
            os.close(fd)
            raise
    return open_seen


def shortened(name: str) -> str:
    """``name`` as a note or a reason shows it: a zip member's name has no length limit, and one of 65,000
    characters would make a gradebook cell no spreadsheet (nor Python's csv module) reads back."""
    return name if len(name) <= NAME_SHOWN else name[:NAME_SHOWN - 1] + "\u2026"


def _safe_path(name: str) -> PurePosixPath:
    if not name.strip("/"):
        raise _Unsafe(_("the zip contains a member with an empty name; it was not read"))
    if "\\" in name or name.startswith("/") or (len(name) > 1 and name[1] == ":"):
        raise _Unsafe(_("the zip contains an absolute or Windows path ({name!r}); it was not read").format(
            name=shortened(name)))
    path = PurePosixPath(name)
    if ".." in path.parts:
        raise _Unsafe(_("the zip contains a path that leaves its folder ({name!r}); it was not read").format(
            name=shortened(name)))
    return path


def _ignored(path: PurePosixPath) -> bool:
    """System litter and hidden files (``.git/``, ``.github/``, ``._name``): never the student's answer."""
    return any(part in _IGNORED or part.startswith(".") for part in path.parts)


def _match(submission: Submission, files: list[_File], problems: list[Problem]) -> None:
    """Find each problem's entry file among ``files`` and read it; name every other file that is not passed over."""
    if not files:
        raise _Unsafe(_("the submission is empty"))
    found: dict[str, list[_File]] = {}
    set_aside: list[str] = []
    for file in files:
        problem = _problem_for(file.path, problems)
        if problem is not None:
            found.setdefault(problem.id, []).append(file)
        elif not _practice_copy(file.path, problems):
            set_aside.append(f"{file.label} ({_why_not_judged(file.path, problems)})")
    if not found:
        example = f"{problems[0].id}/{problems[0].entry}" if problems else "<problem-id>/<entry file>"
        raise _Unsafe(_("no known problem in it (expected <problem-id>/<entry file>, e.g. {example})").format(
            example=example)
                      + (_("; it holds {files}").format(files=_listed(set_aside)) if set_aside else ""))
    if set_aside:
        submission.notes.append(_("not judged: {files}").format(files=_listed(set_aside)))
    for pid, candidates in sorted(found.items()):
        if len(candidates) > 1:
            where = ", ".join(c.label for c in candidates[:3])
            submission.unreadable[pid] = _("more than one file for this problem ({files}); none was judged").format(
                files=where)
            continue
        submission.files[pid] = candidates[0].label
        _read_source(submission, pid, candidates[0])


def _listed(items: list[str]) -> str:
    shown = "; ".join(items[:NOTES_SHOWN])
    return shown + (_("; and {n} more").format(n=len(items) - NOTES_SHOWN) if len(items) > NOTES_SHOWN else "")


_BROWSER_COPY = re.compile(r"^(?P<stem>.+?) \(\d+\)(?P<suffix>\.[^.]+)$")  # adder (1).py: a browser's second download


def _problem_for(path: PurePosixPath, problems: list[Problem]) -> Problem | None:
    """The problem whose entry file ``path`` is (a browser's renamed download, ``adder (1).py``, too)."""
    found = _problem_at(path, problems)
    copy = _BROWSER_COPY.match(path.name)
    if found is None and copy is not None:
        found = _problem_at(path.with_name(copy["stem"] + copy["suffix"]), problems)
    return found


def _problem_at(path: PurePosixPath, problems: list[Problem]) -> Problem | None:
    parts = path.parts
    if len(parts) > 3:
        return None
    by_id = {p.id: p for p in problems}
    if len(parts) >= 2 and parts[-2] in by_id and by_id[parts[-2]].entry == parts[-1]:
        return by_id[parts[-2]]
    if len(parts) <= 2 and (len(parts) == 1 or parts[0] not in by_id):  # a loose entry file
        owners = [p for p in problems if p.entry == parts[-1]]
        return owners[0] if len(owners) == 1 else None
    return None


def _practice_copy(path: PurePosixPath, problems: list[Problem]) -> bool:
    """A file the practice folder holds beside the entry (statement, public tests, support, assets)."""
    by_id = {p.id: p for p in problems}
    if path.name in (LAUNCHER, "README.md") and len(path.parts) <= 2:  # practice/judge.py, a Classroom README
        return True
    for index, part in enumerate(path.parts[:-1]):
        if part in by_id and index <= 1:
            rest = path.parts[index + 1:]
            support = {f.name for f in by_id[part].support_files}
            return rest[0] in _PRACTICE_COPIES or (len(rest) == 1 and (rest[0] in support or is_translation(rest[0])))
    return False


def _why_not_judged(path: PurePosixPath, problems: list[Problem]) -> str:
    owners = [p.id for p in problems if p.entry == path.name]
    if len(owners) > 1:
        return _("the entry file of {problems}: put it in its problem's folder, e.g. {example}").format(
            problems=" and ".join(owners), example=f"{owners[0]}/{path.name}")
    if owners:
        return _("the entry file of {problem}, but not where the judge looks ({example})").format(
            problem=owners[0], example=f"{owners[0]}/{path.name}")
    return _("not a file of any problem")


def _read_error(exc: Exception) -> str:
    """Why a file or zip member could not be read, in words an instructor can act on."""
    if isinstance(exc, OSError) and exc.strerror:  # its words without the grader's path to the file
        return exc.strerror
    if isinstance(exc, RuntimeError) and "encrypted" in str(exc):
        return _("it is encrypted: the zip needs a password, and submissions must not have one")
    if type(exc).__module__ in ("zlib", "_lzma", "lzma", "_bz2", "bz2") or isinstance(exc, EOFError):
        return _("its compressed data is corrupt: {error}").format(error=exc)
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def _read_source(submission: Submission, pid: str, file: _File) -> None:
    if file.size > MAX_ENTRY_BYTES:
        submission.unreadable[pid] = _("{file} is larger than {kib} KiB").format(
            file=file.label, kib=MAX_ENTRY_BYTES // 1024)
        return
    try:
        data = file.read()
    except Exception as exc:  # noqa: BLE001 - a zip member's decompressor may raise anything: RuntimeError
        # (an encrypted member), zlib.error, lzma.LZMAError (corrupt data); one student's file, not the class's
        submission.unreadable[pid] = _("{file} could not be read ({error})").format(
            file=file.label, error=_read_error(exc))
        return
    if len(data) > MAX_ENTRY_BYTES:
        submission.unreadable[pid] = _("{file} is larger than {kib} KiB").format(
            file=file.label, kib=MAX_ENTRY_BYTES // 1024)
        return
    try:
        submission.sources[pid] = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        submission.unreadable[pid] = _("{file} is not UTF-8 text ({reason} at byte {byte})").format(
            file=file.label, reason=exc.reason, byte=exc.start)
