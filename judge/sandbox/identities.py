"""Sandbox identities: one unprivileged uid per concurrent job, and the end of everything it ran.

When the judge runs as root, every job's learner processes run as an identity of their own (a uid
with no account: nothing on the machine belongs to it), taken from a small pool and held for the
job's whole life. So no job can read, signal or wait on another job's processes or folders, and
at the end of a job everything its identity still runs (a daemon that double-forked out of the
learner's process group, a process stopped with SIGSTOP) is killed and *verified* gone before the
identity is used again: what DOMjudge and isolate do with one user per judging slot.

Several judges on one machine (a course grading two assignments at once) share the pool through
lock files (``flock``) in a folder only root can write, so no two jobs ever hold the same uid.
A named user (``--sandbox-user NAME``) is a pool of one: its jobs take turns.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import signal
import stat
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from . import forking, trees

#: the pool: uids with no account, inside the 16 bits a container's user namespace usually maps
POOL_FIRST = 64200
POOL_SIZE = 64
#: how long ending an identity's processes may take before the identity is declared tainted
END_TIMEOUT = 10.0


class IdentityError(RuntimeError):
    """No identity could be taken, or one could not be cleared of its processes."""


class AllTaken(IdentityError):
    """Every identity of the pool is held by other jobs (one may be free later)."""


WAIT = 600.0  # seconds a job waits at most for a free identity


@dataclass(frozen=True)
class Identity:
    """A uid (and gid) a job's learner processes run as, with the lock that makes it this job's."""

    uid: int
    gid: int
    lock_fd: int


def _lock_folder() -> str:
    """A folder only root can write, for the pool's lock files (made once; refused if tampered with)."""
    for parent in ("/run", tempfile.gettempdir()):
        if not os.path.isdir(parent) or not os.access(parent, os.W_OK):
            continue
        folder = os.path.join(parent, "pp-judge-identities")
        try:
            os.mkdir(folder, 0o700)
        except FileExistsError:
            pass
        except OSError:
            continue
        info = os.lstat(folder)
        if stat.S_ISDIR(info.st_mode) and info.st_uid == os.geteuid() and not info.st_mode & 0o022:
            return folder
        raise IdentityError(f"{folder} is not a folder that only this user can write (a symbolic link, or made "
                            "by someone else): remove it and grade again")
    raise IdentityError("no folder for the sandbox identities' lock files (/run or the temporary folder)")


def _free_uids(first: int, size: int) -> Iterator[int]:
    import pwd

    for uid in range(first, first + size):
        try:
            pwd.getpwuid(uid)
        except KeyError:
            yield uid  # an account of that uid would own files somewhere: never use it


def acquire(named: tuple[int, int] | None = None, wait: float = WAIT, announce: float | None = None) -> Identity:
    """Take an identity for one job (a free uid of the pool, or the named user's ids), waiting for
    one if all are taken; :class:`IdentityError` if none becomes free within ``wait`` seconds. When all are
    taken it says once, on stderr, that it waits, and for how long: ``announce`` seconds (default ``wait``;
    a caller that tries again with ``wait=0`` gives its own whole wait, then 0 to stay quiet)."""
    folder = _lock_folder()
    candidates = [named[0]] if named else list(_free_uids(POOL_FIRST, POOL_SIZE))
    if not candidates:
        raise IdentityError(f"every uid from {POOL_FIRST} to {POOL_FIRST + POOL_SIZE - 1} has an account here")
    deadline = time.monotonic() + wait
    announce = wait if announce is None else announce
    said = announce <= 0
    while True:
        for uid in candidates:
            path = os.path.join(folder, f"uid-{uid}.lock")
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                continue
            identity = Identity(uid, named[1] if named else uid, fd)
            try:
                if named:
                    _refuse_a_user_in_use(uid)
                end_processes(identity.uid)  # what a judge killed before its clean-up may have left
            except BaseException:
                os.close(fd)
                raise
            return identity
        if not said:  # once, at once: a wait of minutes must not look like a hang
            said = True
            which = f"the sandbox identity uid {candidates[0]}" if len(candidates) == 1 else \
                f"one of the {len(candidates)} sandbox identities"
            print(f"waiting for {which}, which another judge on this machine is using (up to {announce:g} s)",
                  file=sys.stderr, flush=True)
        if time.monotonic() > deadline:
            raise AllTaken("every sandbox identity is taken by other jobs (more than "
                                f"{len(candidates)} at once on this machine)")
        time.sleep(0.05)


def _refuse_a_user_in_use(uid: int) -> None:
    """A named user (``--sandbox-user``) must be the judge's alone: after every job, everything it runs is
    killed and its files in the shared temporary folders are removed. :class:`IdentityError` naming what it
    runs or owns now (``nobody`` on a workstation often runs a daemon or two)."""
    traces = [f"process {pid} ({_command(pid)})" for pid in processes_of(uid)]
    for folder in dict.fromkeys((tempfile.gettempdir(), *SHARED_FOLDERS)):
        with contextlib.suppress(OSError), os.scandir(folder) as entries:
            traces += [entry.path for entry in entries if _owner(entry) == uid]
    if traces:
        raise IdentityError(f"the sandbox user (uid {uid}) is in use: {', '.join(traces[:5])}"
                            + (" ..." if len(traces) > 5 else "") + ". After every job the judge ends every process "
                            "of its sandbox user and removes its files in the shared temporary folders: give it a "
                            "user nothing else runs as (or no --sandbox-user: the judge's own pool of uids), or "
                            "end and remove these first (a judge killed before its clean-up may have left them)")


def _command(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/comm", encoding="utf-8", errors="replace") as handle:
            return handle.read().strip()
    except OSError:
        return "?"


def _owner(entry: os.DirEntry[str]) -> int:
    try:
        return entry.stat(follow_symlinks=False).st_uid
    except OSError:
        return -1


def release(identity: Identity, then: Callable[[int], None] | None = None) -> None:
    """End the identity's processes (verified) and give it back to the pool. If some survive, the
    :class:`IdentityError` propagates and the lock stays held: no later job of this judge gets it.
    ``then(lock)`` runs once they have ended and before the identity is given back: the job's folders are
    removed there, or handed with the lock's descriptor to a process that keeps the identity taken until they
    are gone (:func:`judge.sandbox.trees.remove_apart`); this process's copy is closed after it."""
    end_processes(identity.uid)
    try:
        if then is not None:
            then(identity.lock_fd)
    finally:
        os.close(identity.lock_fd)


def processes_of(uid: int) -> list[int]:
    """The pids of every process of ``uid`` (real, effective or saved) with a thread still alive. A
    zombie has ended and holds nothing, but a process whose main thread exited also shows ``State: Z``
    while its other threads run: its threads are looked at one by one."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        state, uids = _status(f"/proc/{name}/status")
        if uid not in uids:
            continue
        if state != b"Z" or _has_live_thread(name):
            found.append(int(name))
    return found


def _status(path: str) -> tuple[bytes, tuple[int, ...]]:
    """The state letter and the real, effective and saved uids in a /proc status file (empty if gone)."""
    uids: tuple[int, ...]
    state, uids = b"", ()
    try:
        with open(path, "rb") as handle:
            for line in handle:
                if line.startswith(b"State:"):
                    state = line.split()[1]
                elif line.startswith(b"Uid:"):
                    uids = tuple(int(u) for u in line.split()[1:4])
                    break
    except (OSError, ValueError):
        return b"", ()  # exited meanwhile
    return state, uids


def _has_live_thread(pid: str) -> bool:
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return False
    return any(_status(f"/proc/{pid}/task/{task}/status")[0] not in (b"", b"Z", b"X") for task in tasks)


def end_processes(uid: int) -> None:
    """Kill every process of ``uid``, check that none is left, and remove what the identity owns
    outside any process (:func:`_clear_as`); :class:`IdentityError` if processes survive
    :data:`END_TIMEOUT` seconds of trying (the identity must not be used again then)."""
    deadline = time.monotonic() + END_TIMEOUT
    _as_identity(uid, _kill_all)  # always, once: what no listing shows must not outlive the job either
    while True:
        left = processes_of(uid)
        if not left:
            break
        _as_identity(uid, _kill_all)
        for pid in left:  # also what kill(-1) as the uid cannot reach (a process that changed its real uid)
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        if time.monotonic() > deadline:
            raise IdentityError(f"processes of the sandbox identity {uid} survived being killed: {left[:5]}")
        time.sleep(0.01)
    _as_identity(uid, _clear_owned)


def _as_identity(uid: int, action: Callable[[int], None]) -> None:
    """Run ``action(uid)`` in a child that has become ``uid`` (no groups): it can do no more than the
    identity could, so root never follows a path the learner made. The parent waits for it."""
    with forking.ctrl_c_held():
        pid = os.fork()
    if pid == 0:
        try:
            os.setgroups([])
            os.setresgid(uid, uid, uid)
            os.setresuid(uid, uid, uid)
            action(uid)
        except BaseException:  # noqa: BLE001 - the parent checks the outcome by listing what is left
            os._exit(1)
        os._exit(0)
    os.waitpid(pid, 0)


def _kill_all(uid: int) -> None:
    """``kill(-1, SIGKILL)`` as the identity: every process of that uid at once, in one system call,
    so a fork bomb cannot outrun a pid-by-pid kill."""
    with contextlib.suppress(ProcessLookupError):
        os.kill(-1, signal.SIGKILL)


#: world-writable folders where a learner process without Landlock could leave files for a later job
SHARED_FOLDERS = ("/tmp", "/var/tmp", "/dev/shm", "/run/lock")
_IPC_REMOVERS = {"shm": "shmctl", "msg": "msgctl", "sem": "semctl"}
_IPC_RMID = 0


def _clear_owned(uid: int) -> None:
    """As the identity: remove its SysV shared memory, message queues and semaphores (they have no
    path and outlive every process), and its files in the machine's shared temporary folders."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    for kind, remover in _IPC_REMOVERS.items():
        for ident in _ipc_owned(kind, uid):
            args = (ident, 0, _IPC_RMID) if kind == "sem" else (ident, _IPC_RMID, None)
            getattr(libc, remover)(*args)
    for folder in (tempfile.gettempdir(), *SHARED_FOLDERS):
        with contextlib.suppress(OSError), os.scandir(folder) as entries:
            for entry in entries:
                with contextlib.suppress(OSError):
                    _remove_if_owned(entry, uid)


def _remove_if_owned(entry: os.DirEntry[str], uid: int) -> None:
    if entry.stat(follow_symlinks=False).st_uid != uid:
        return
    if entry.is_dir(follow_symlinks=False):
        trees.remove_tree(entry.path)
    else:
        os.unlink(entry.path)


def _ipc_owned(kind: str, uid: int) -> list[int]:
    """The ids of the SysV IPC objects of ``kind`` (shm, msg, sem) that ``uid`` owns or made (an owner
    may hand an object to another uid; its creator can still remove it)."""
    try:
        with open(f"/proc/sysvipc/{kind}", encoding="ascii") as handle:
            header, *rows = handle.read().splitlines()
    except (OSError, ValueError):
        return []
    columns = header.split()
    owners = (columns.index("uid"), columns.index("cuid"))
    ident = columns.index({"shm": "shmid", "msg": "msqid", "sem": "semid"}[kind])
    return [int(row.split()[ident]) for row in rows if uid in {int(row.split()[i]) for i in owners}]
