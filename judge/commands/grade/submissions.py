"""Read a class's submissions safely: zips and folders in, learner code (text in memory) out.

A submissions folder holds one entry per student: ``NAME.zip`` or a folder ``NAME/``. Inside,
each problem's entry file is found at ``<problem-id>/<entry>`` (the web app's zip and a
``practice/`` folder), under one wrapping folder (``practice/<problem-id>/<entry>``), or loose
(``<entry>``) when no other problem has an entry file of that name.

Nothing is extracted: only the entry files are read, into memory, with a size cap, so a path
that escapes (``../``, absolute, a symlink) can never be written anywhere. Such a path, a corrupt
or empty zip, a zip bomb (too many members or too many declared bytes), two folders for the same
problem, a file that is not UTF-8 or a submission with no known problem never raise: each is a
reason recorded on the :class:`Submission`.
"""

from __future__ import annotations

import hashlib
import os
import stat
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from ...core.problem import Problem

MAX_MEMBERS = 2000  # files and folders in one submission
MAX_TOTAL_BYTES = 64 * 1024 * 1024  # declared uncompressed size of one submission
MAX_ENTRY_BYTES = 1024 * 1024  # one entry file (learner code)
_IGNORED = ("__MACOSX", "__pycache__", ".DS_Store", ".git", ".ipynb_checkpoints")


@dataclass
class Submission:
    """One student's submission as read: sources by problem id, and what went wrong."""

    student: str
    origin: Path
    sources: dict[str, str] = field(default_factory=dict)  # problem id -> the entry file's text
    unreadable: dict[str, str] = field(default_factory=dict)  # problem id -> why it cannot be judged
    error: str = ""  # why nothing in it can be judged ("" when it could be read)
    notes: list[str] = field(default_factory=list)  # files that were ignored, and why

    @property
    def problems(self) -> list[str]:
        return sorted(set(self.sources) | set(self.unreadable))

    def digest(self) -> str:
        """sha256 of everything that decides this submission's grade on the student's side."""
        hasher = hashlib.sha256(self.error.encode())
        for pid in sorted(self.sources):
            hasher.update(f"\0{pid}\0".encode() + self.sources[pid].encode())
        for pid in sorted(self.unreadable):
            hasher.update(f"\1{pid}\1{self.unreadable[pid]}".encode())
        return hasher.hexdigest()

    def problem_statuses(self) -> list[str]:
        """Reasons to show in the gradebook's status column."""
        return [self.error] if self.error else [f"{pid}: {why}" for pid, why in sorted(self.unreadable.items())]


class _Unsafe(Exception):
    """A submission that must not be read further."""


@dataclass
class _File:
    path: PurePosixPath
    size: int
    read: object  # () -> bytes, at most MAX_ENTRY_BYTES + 1


def discover(folder: Path) -> list[Path]:
    """The submission entries in ``folder`` (hidden names skipped), sorted by student name."""
    if not folder.is_dir():
        raise FileNotFoundError(f"{folder}: no such submissions folder")
    return sorted((p for p in folder.iterdir() if not p.name.startswith((".", "_"))), key=student_name)


def student_name(path: Path) -> str:
    """The student id: the file name without ``.zip``, or the folder name."""
    return path.name[:-4] if path.name.lower().endswith(".zip") and not path.is_dir() else path.name


def read_submission(path: Path, problems: list[Problem]) -> Submission:
    """Read one submission; never raises for anything the submission contains."""
    submission = Submission(student_name(path), path)
    try:
        if path.is_symlink():
            raise _Unsafe("the submission is a symbolic link; it was not followed")
        if path.is_dir():
            files = list(_folder_files(path))
        elif path.name.lower().endswith(".zip"):
            return _read_zip(submission, path, problems)
        else:
            raise _Unsafe(f"{path.name} is neither a .zip file nor a folder")
        _match(submission, files, problems)
    except _Unsafe as exc:
        submission.error = str(exc)
    return submission


def _read_zip(submission: Submission, path: Path, problems: list[Problem]) -> Submission:
    try:
        with zipfile.ZipFile(path) as archive:
            _match(submission, list(_zip_files(archive)), problems)
    except _Unsafe as exc:
        submission.error = str(exc)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError, ValueError, NotImplementedError) as exc:
        submission.error = f"not a readable zip file ({exc})"
    return submission


def _zip_files(archive: zipfile.ZipFile) -> Iterator[_File]:
    members = archive.infolist()
    if len(members) > MAX_MEMBERS:
        raise _Unsafe(f"the zip has {len(members)} members, more than the {MAX_MEMBERS} allowed")
    if sum(m.file_size for m in members) > MAX_TOTAL_BYTES:
        raise _Unsafe(f"the zip would unpack to more than {MAX_TOTAL_BYTES // 2**20} MiB (a zip bomb?)")
    for member in members:
        path = _safe_path(member.filename)
        if stat.S_ISLNK(member.external_attr >> 16):
            raise _Unsafe(f"the zip contains a symbolic link ({member.filename}); links are not allowed")
        if member.is_dir() or _ignored(path):
            continue
        yield _File(path, member.file_size, lambda m=member: _read_capped(archive.open(m)))


def _folder_files(root: Path) -> Iterator[_File]:
    count = total = 0
    for current, folders, names in os.walk(root, followlinks=False):
        for name in folders + names:
            full = Path(current, name)
            if full.is_symlink():
                raise _Unsafe(f"{full.relative_to(root)} is a symbolic link; links are not allowed")
        count += len(folders) + len(names)
        if count > MAX_MEMBERS:
            raise _Unsafe(f"the folder has more than {MAX_MEMBERS} files and folders")
        folders[:] = sorted(f for f in folders if f not in _IGNORED)
        for name in sorted(names):
            full = Path(current, name)
            path = PurePosixPath(full.relative_to(root).as_posix())
            if _ignored(path) or not full.is_file():
                continue
            size = full.stat().st_size
            total += size
            if total > MAX_TOTAL_BYTES:
                raise _Unsafe(f"the folder holds more than {MAX_TOTAL_BYTES // 2**20} MiB")
            yield _File(path, size, lambda f=full: _read_capped(f.open("rb")))


def _safe_path(name: str) -> PurePosixPath:
    if "\\" in name or name.startswith("/") or (len(name) > 1 and name[1] == ":"):
        raise _Unsafe(f"the zip contains an absolute or Windows path ({name!r}); it was not read")
    path = PurePosixPath(name)
    if ".." in path.parts:
        raise _Unsafe(f"the zip contains a path that leaves its folder ({name!r}); it was not read")
    return path


def _ignored(path: PurePosixPath) -> bool:
    return any(part in _IGNORED or part.startswith("._") for part in path.parts)


def _read_capped(handle) -> bytes:  # noqa: ANN001 - a binary file object
    with handle:
        return handle.read(MAX_ENTRY_BYTES + 1)


def _match(submission: Submission, files: list[_File], problems: list[Problem]) -> None:
    """Find each problem's entry file among ``files`` and read it."""
    if not files:
        raise _Unsafe("the submission is empty")
    found: dict[str, list[_File]] = {}
    for file in files:
        problem = _problem_for(file.path, problems)
        if problem is None:
            continue
        found.setdefault(problem.id, []).append(file)
    if not found:
        example = f"{problems[0].id}/{problems[0].entry}" if problems else "<problem-id>/<entry file>"
        raise _Unsafe(f"no known problem in it (expected <problem-id>/<entry file>, e.g. {example})")
    for pid, candidates in sorted(found.items()):
        if len(candidates) > 1:
            where = ", ".join(str(c.path) for c in candidates[:3])
            submission.unreadable[pid] = f"more than one file for this problem ({where}); none was judged"
            continue
        _read_source(submission, pid, candidates[0])


def _problem_for(path: PurePosixPath, problems: list[Problem]) -> Problem | None:
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


def _read_source(submission: Submission, pid: str, file: _File) -> None:
    if file.size > MAX_ENTRY_BYTES:
        submission.unreadable[pid] = f"{file.path} is larger than {MAX_ENTRY_BYTES // 1024} KiB"
        return
    try:
        data = file.read()  # type: ignore[operator]
    except (zipfile.BadZipFile, OSError, EOFError, ValueError, NotImplementedError) as exc:
        submission.unreadable[pid] = f"{file.path} could not be read ({exc})"
        return
    if len(data) > MAX_ENTRY_BYTES:
        submission.unreadable[pid] = f"{file.path} is larger than {MAX_ENTRY_BYTES // 1024} KiB"
        return
    try:
        submission.sources[pid] = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        submission.unreadable[pid] = f"{file.path} is not UTF-8 text ({exc.reason} at byte {exc.start})"
