"""Removing folders the learner's code could fill: however deep, never following a link, never raising.

The judge removes a job's folders when the job ends, and what an identity of the pool left in the shared
temporary folders. The learner's code may have made them thousands of folders deep. Python's
``shutil.rmtree`` walks a tree by recursion (up to Python 3.12) and then raises ``RecursionError``,
which its ``ignore_errors`` does not cover: a red team's submission stopped ``judge grade`` for the whole
class that way. What ``rmtree`` leaves is opened to its owner again (``find``: a folder the learner
locked, folders only) and removed by ``rm -r``, which walks any depth; neither follows a link. What
neither can remove stays: callers that must know look for it (``nothing_left_behind`` in the tests; an
identity whose processes survive is never reused).

A judge killed outright (SIGKILL, the machine's out-of-memory killer, a container stopped) removes
nothing. So a job's folders are made by :func:`held_folder`, which locks a file inside for as long as
the judge (or a test process it forked) lives, and a later judge's :func:`remove_abandoned` removes the
``judge-*`` folders of the temporary folder that are its own user's and whose lock nobody holds: the
learner's code they hold is never there for the next learner given the same identity.

Removing what the learner's code made can cost more than making it did (a red team's submission spent its
5 s of CPU making empty folders; removing them took about 2 s), and the judge removed a job's folders in the
loop that watches every other job, which waited meanwhile. :func:`remove_apart` removes them in a
process of its own, which holds the folders' locks (and the identity's, which the caller hands it) until
they are gone: the loop goes on judging the others meanwhile, and the uid is nobody's before its folders
have gone.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import signal
import stat
import subprocess
import tempfile
from collections.abc import Sequence

from . import forking

RM_SECONDS = 300.0  # rm -r of a tree the learner's code made within its limits
PREFIX = "judge-"
ALIVE = ".judge-alive"  # the file a living judge keeps locked in each folder of its jobs
_held: dict[str, int] = {}  # folder -> the descriptor of its lock, open until the folder is removed


def held_folder(prefix: str, parent: str | None = None, mode: int = 0o700) -> str:
    """A fresh folder (``tempfile.mkdtemp``) that :func:`remove_abandoned` leaves alone while this process
    or a process forked from it lives; :func:`remove_tree` lets it go."""
    folder = tempfile.mkdtemp(prefix=prefix, dir=parent)
    try:
        # locked under another name first: a sweep never sees the lock file before it is held
        pending = os.path.join(folder, ALIVE + ".new")
        descriptor = os.open(pending, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        _held[folder] = descriptor
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        os.rename(pending, os.path.join(folder, ALIVE))
        os.chmod(folder, mode)
    except BaseException:
        remove_tree(folder)
        raise
    return folder


def remove_abandoned(parent: str) -> list[str]:
    """Remove the ``judge-*`` folders in ``parent`` that this user made with :func:`held_folder` and whose
    judge is gone (nobody holds their lock); return them. Folders of other users, links, folders without
    the lock file (an older judge's, or one being made) and folders of a living judge are left alone."""
    removed = []
    with contextlib.suppress(OSError):
        names = [name for name in os.listdir(parent) if name.startswith(PREFIX)]
        for name in names:
            folder = os.path.join(parent, name)
            if folder not in _held and _abandoned(folder):
                remove_tree(folder)
                removed.append(folder)
    return removed


def _abandoned(folder: str) -> bool:
    try:
        info = os.lstat(folder)
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid():
            return False
        directory = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        lock = os.open(ALIVE, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=directory)
    except OSError:
        return False
    finally:
        os.close(directory)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except OSError:
        return False  # a living judge holds it
    finally:
        os.close(lock)


def remove_tree(path: str | os.PathLike[str]) -> None:
    """Remove ``path`` and everything under it, as deep as it goes; never raises."""
    with contextlib.suppress(RecursionError, OSError):
        shutil.rmtree(path, ignore_errors=True)
    if os.path.lexists(path):
        _remove_deep(os.fspath(path))
    descriptor = _held.pop(os.fspath(path), None)
    if descriptor is not None:
        with contextlib.suppress(OSError):
            os.close(descriptor)


def remove_apart(folders: Sequence[str], holding: int = -1) -> int | None:
    """Remove ``folders`` in a process forked for it, which holds their locks and the descriptor ``holding``
    (an identity's lock, or -1) until they are gone; return its pid, for the caller to reap. This process lets
    go of the folders now (its copy of ``holding`` is the caller's to close). ``None`` where it cannot fork:
    nothing was done, the caller removes them."""
    if not hasattr(os, "fork") or not folders:
        return None
    keep = {holding, *(_held[folder] for folder in folders if folder in _held)} - {-1}
    with forking.ctrl_c_held():
        try:
            pid = os.fork()
        except OSError:  # no process to spare (the machine's limit): removed here, as before
            return None
        if pid == 0:  # ignored before the mask is restored: a Ctrl-C must not leave a tree half removed
            for number in (signal.SIGINT, *forking.STOP_SIGNALS):
                signal.signal(number, signal.SIG_IGN)
    if pid == 0:
        try:
            os.setsid()
            _close_all_but(keep)
            for folder in folders:
                remove_tree(folder)
        finally:
            os._exit(0)
    for folder in folders:
        descriptor = _held.pop(folder, None)
        if descriptor is not None:
            with contextlib.suppress(OSError):
                os.close(descriptor)
    return pid


def holds_more_than_its_lock(folder: str) -> bool:
    """Whether a :func:`held_folder` holds anything but its lock file (a job whose test process was stopped
    before it removed its learner's folder): worth a process of its own to remove (:func:`remove_apart`)."""
    try:
        with os.scandir(folder) as entries:
            return any(entry.name != ALIVE for entry in entries)
    except OSError:
        return False


def _close_all_but(keep: set[int]) -> None:
    """Close every descriptor from 3 up but ``keep``: the other jobs' channels and locks are not the remover's."""
    low = 3
    for descriptor in sorted(keep):
        if descriptor >= low:
            os.closerange(low, descriptor)
            low = descriptor + 1
    os.closerange(low, os.sysconf("SC_OPEN_MAX") if hasattr(os, "sysconf") else 65536)


def _remove_deep(path: str) -> None:
    if os.geteuid() != 0 and os.path.isdir(path) and not os.path.islink(path):
        # a folder its owner locked (mode 0): the identity removing its own leftovers may not list it until
        # it opens it again (root may: it changes no mode, so no path raced into the tree can make it).
        # Folders only, each before find enters it, no link followed: a file may be a hard link to
        # someone else's, whose mode this must not change
        _run("find", path, "-type", "d", "!", "-perm", "-u=rwx", "-exec", "chmod", "u+rwx", "{}", ";")
    _run("rm", "-r", "-f", "--", path)


def _run(tool: str, *args: str) -> None:
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        subprocess.run([shutil.which(tool) or f"/bin/{tool}", *args], stdin=subprocess.DEVNULL,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=RM_SECONDS, check=False)
