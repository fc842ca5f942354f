"""Confinement of a learner process without privileges: Landlock for files, seccomp for system calls.

The user level (platforms and containers, where bubblewrap's namespaces are not allowed) runs the
learner's code as an identity of its own (:mod:`judge.sandbox.identities`); that keeps it from other
jobs, but not from files every user may read, such as a course checkout in a home folder or /srv.
Where the kernel offers them (both work without privileges, and Docker's default seccomp profile
allows Landlock's system calls), the learner process is also confined before it starts:

- **Landlock** (Linux 5.13+; its system calls made here): it may read only the Python runtime (the
  standard library without its site-packages), the system's shared libraries, the judge's learner
  runtime (numpy among it) and its own folder; it may write only its own folder. Whatever else is
  world-readable stays out of reach.
- **seccomp** (libseccomp, the ``pyseccomp`` package): no new processes (threads only: a process
  the kernel reaps by itself would take its CPU time out of every count), no ptrace, no other
  process's memory, no sockets, no new namespaces or mounts, no io_uring (which would go around the
  filter), no BPF, no SysV or POSIX IPC and no memfd (memory outside the address-space limit, or
  left behind after the job), no watching the machine's folders (inotify), no handles on other
  processes (pidfd), no flushing every disk (sync). bubblewrap loads the same filter (``--seccomp``).
- Landlock's scopes (ABI 6 and later): no signal to a process outside the learner's own, no abstract
  unix socket of another domain.

The rules are built in the test process (as root: opening a path for a rule reads nothing) and put
in force in the learner process between ``fork`` and ``exec`` (:meth:`Confinement.enter`), so they
hold from the first instruction of the learner's Python, and across everything it could start.
What the kernel here cannot do is reported once per run (:func:`offered`), never silently skipped.
"""

from __future__ import annotations

import ctypes
import errno
import functools
import os
import sys
import sysconfig
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

#: system calls the learner's code never needs, refused with EPERM
REFUSED_SYSCALLS = ("ptrace", "process_vm_readv", "process_vm_writev", "socket", "socketpair", "unshare",
                    "setns", "mount", "umount2", "pivot_root", "chroot", "keyctl", "add_key", "request_key", "bpf",
                    "perf_event_open", "userfaultfd", "kcmp", "open_by_handle_at", "name_to_handle_at",
                    "io_uring_setup", "io_uring_enter", "io_uring_register", "fanotify_init", "mount_setattr",
                    "move_mount", "open_tree", "fsopen", "fsmount", "fspick", "fork", "vfork", "pidfd_getfd",
                    "process_madvise", "shmget", "shmat", "msgget", "semget", "mq_open", "memfd_create",
                    "memfd_secret", "inotify_init", "inotify_init1", "pidfd_open", "pidfd_send_signal", "sync",
                    "syncfs")
#: clone is allowed for threads only (CLONE_THREAD set); clone3 is answered "not implemented", so
#: the C library falls back to clone, whose flags a filter can see (clone3's are behind a pointer)
_CLONE_THREAD = 0x00010000
_LANDLOCK_SCOPES = 0x1 | 0x2  # LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | LANDLOCK_SCOPE_SIGNAL
#: a readable path ending so may be listed, not read (a folder whose entries are allowed one by one)
_LIST_ONLY = "/*list*"
_PR_SET_NO_NEW_PRIVS = 38
#: Landlock's system calls have the same numbers on every architecture; the judge makes them itself
#: and reads their return values (the landlock package on PyPI reads errno instead, which a call that
#: succeeds leaves as an earlier failed call set it: it refused confinement for nothing in CI)
_SYS_LANDLOCK_CREATE_RULESET = 444
_SYS_LANDLOCK_ADD_RULE = 445
_SYS_LANDLOCK_RESTRICT_SELF = 446
_LANDLOCK_CREATE_RULESET_VERSION = 1
_LANDLOCK_RULE_PATH_BENEATH = 1
# the file-system access rights (include/uapi/linux/landlock.h), and the ABI that brought each one
_EXECUTE, _WRITE_FILE, _READ_FILE, _READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
_DIR_CHANGES = sum(1 << bit for bit in range(4, 13))  # remove a folder or file, make any kind of entry
_REFER, _TRUNCATE, _IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15  # ABI 2, 3 and 5
#: files outside the runtime a Python process reads on its way (the loader's cache, time zones)
_SYSTEM_FILES = ("/etc/ld.so.cache", "/etc/localtime", "/usr/share/zoneinfo", "/dev/null", "/dev/urandom",
                 "/dev/zero", "/sys/devices/system/cpu")


@dataclass(frozen=True)
class Offered:
    """What this kernel and this installation offer for confinement, and why not where they do not."""

    landlock: bool
    seccomp: bool
    landlock_why_not: str = ""
    seccomp_why_not: str = ""

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(name for name, on in (("landlock", self.landlock), ("seccomp", self.seccomp)) if on)

    @property
    def missing(self) -> str:
        """A sentence on what is missing and what follows, or ''."""
        parts = []
        if not self.landlock:
            parts.append(f"Landlock is not available ({self.landlock_why_not}): the learner's code can read "
                         "files every user may read, so keep course files out of reach of others "
                         "(chmod -R o-rwx)")
        if not self.seccomp:
            parts.append(f"seccomp is not available ({self.seccomp_why_not}): the learner's code may open "
                         "sockets, trace its own processes, work in processes the kernel reaps by itself (which "
                         "the CPU-time limit does not count; the wall-clock limit still stops it) and hold memory "
                         "past the memory limit in files with no name (up to 4 GiB)")
        return "; ".join(parts)


#: the grader may turn either off, to measure what the user level holds without it (docs/hostile-input.md)
SWITCH = "JUDGE_CONFINE"


@functools.lru_cache(maxsize=1)
def offered() -> Offered:
    """Probe once per process what confinement this machine offers (and :data:`SWITCH` leaves on)."""
    wanted = os.environ.get(SWITCH, "landlock,seccomp").split(",")
    off = (False, f"turned off by {SWITCH}")
    landlock_ok, landlock_why = _landlock_offered() if "landlock" in wanted else off
    seccomp_ok, seccomp_why = _seccomp_offered() if "seccomp" in wanted else off
    return Offered(landlock_ok, seccomp_ok, landlock_why, seccomp_why)


def _landlock_offered() -> tuple[bool, str]:
    if not sys.platform.startswith("linux"):
        return False, "not Linux"
    version = landlock_abi()
    if version < 0:
        return False, _LANDLOCK_ERRORS.get(-version, os.strerror(-version))
    if version < 1:
        return False, "the kernel has no Landlock"
    return True, ""


_LANDLOCK_ERRORS = {errno.ENOSYS: "the kernel was built without Landlock, or a seccomp filter refuses it",
                    errno.EOPNOTSUPP: "Landlock is turned off at boot (the kernel's lsm= list lacks it)"}


def landlock_abi() -> int:
    """The kernel's Landlock ABI version, or minus the errno of the refused call."""
    libc = ctypes.CDLL(None, use_errno=True)
    version = libc.syscall(_SYS_LANDLOCK_CREATE_RULESET, None, ctypes.c_size_t(0),
                           ctypes.c_uint32(_LANDLOCK_CREATE_RULESET_VERSION))
    return int(version) if version >= 0 else -(ctypes.get_errno() or errno.ENOSYS)


def _seccomp_offered() -> tuple[bool, str]:
    try:
        import pyseccomp
    except (ImportError, OSError) as exc:
        return False, f"libseccomp cannot be loaded ({exc})"
    try:
        pyseccomp.SyscallFilter(pyseccomp.ALLOW)
    except (OSError, RuntimeError, ValueError) as exc:
        return False, f"libseccomp does not work here ({exc})"
    return True, ""


class Confinement:
    """The Landlock rules and the seccomp filter of one test process's learner processes.

    ``readable``: folders and files the learner process may read; ``writable``: the folder its
    learner folders live in (it may read and write there). Built once, entered by every learner
    process the test process starts (:meth:`enter`, between fork and exec).
    """

    def __init__(self, readable: Iterable[str], writable: str, use: Offered) -> None:
        self.use = use
        self._ruleset_fd = -1
        self._filter = None
        if use.landlock:
            self._ruleset_fd = _landlock_ruleset(readable, writable)
        if use.seccomp:
            self._filter = _seccomp_filter()
        self._libc = ctypes.CDLL(None, use_errno=True)

    def enter(self) -> None:
        """In the learner process, before exec: put the rules in force (an error if one cannot be)."""
        libc = self._libc
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
        if self._ruleset_fd >= 0 and libc.syscall(_SYS_LANDLOCK_RESTRICT_SELF, self._ruleset_fd, 0) != 0:
            raise OSError(ctypes.get_errno(), "landlock_restrict_self failed")
        if self._filter is not None:
            self._filter.load()

    def close(self) -> None:
        if self._ruleset_fd >= 0:
            os.close(self._ruleset_fd)
            self._ruleset_fd = -1


class _RulesetAttr(ctypes.Structure):
    """``struct landlock_ruleset_attr`` as of ABI 6 (the kernel takes a prefix of it on older ABIs)."""

    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


def _ruleset_attr(handled: int, abi: int) -> tuple[_RulesetAttr, int]:
    """The attribute and the size of it this ABI knows: scopes from ABI 6, the network field from 4."""
    if abi >= 6:
        return _RulesetAttr(handled, 0, _LANDLOCK_SCOPES), ctypes.sizeof(_RulesetAttr)
    return _RulesetAttr(handled, 0, 0), 16 if abi >= 4 else 8


class _PathBeneath(ctypes.Structure):
    """``struct landlock_path_beneath_attr`` (packed)."""

    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def _file_rights(abi: int) -> int:
    """The rights that apply to a file (not a folder) in this ABI."""
    return _EXECUTE | _WRITE_FILE | _READ_FILE | (_TRUNCATE if abi >= 3 else 0) | (_IOCTL_DEV if abi >= 5 else 0)


def _handled_rights(abi: int) -> int:
    """Every file-system right this ABI knows: all of them are handled, so none is allowed unless a rule says."""
    return _file_rights(abi) | _READ_DIR | _DIR_CHANGES | (_REFER if abi >= 2 else 0)


def _landlock_ruleset(readable: Iterable[str], writable: str) -> int:
    abi = landlock_abi()
    handled = _handled_rights(abi)
    read_dir = _READ_DIR | _READ_FILE | _EXECUTE
    read_file = _READ_FILE | _EXECUTE
    attr, size = _ruleset_attr(handled, abi)
    libc = ctypes.CDLL(None, use_errno=True)
    ruleset = libc.syscall(_SYS_LANDLOCK_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0))
    if ruleset < 0:
        raise OSError(ctypes.get_errno(), "landlock_create_ruleset failed")
    os.set_inheritable(ruleset, False)

    def allow(path: str, rights: int) -> None:
        try:
            fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
        except OSError:
            return  # a path this machine does not have
        try:
            if not os.path.isdir(path):
                rights &= _file_rights(abi)
            rule = _PathBeneath(rights, fd)
            if libc.syscall(_SYS_LANDLOCK_ADD_RULE, ruleset, _LANDLOCK_RULE_PATH_BENEATH, ctypes.byref(rule), 0) != 0:
                raise OSError(ctypes.get_errno(), f"landlock_add_rule failed for {path}")
        finally:
            os.close(fd)

    try:
        for path in sorted(set(readable)):
            if path.endswith(_LIST_ONLY):
                allow(path[:-len(_LIST_ONLY)], _READ_DIR)
            else:
                allow(path, read_dir if os.path.isdir(path) else read_file)
        allow(writable, handled)
        allow("/dev/null", _READ_FILE | _WRITE_FILE)
    except BaseException:
        os.close(ruleset)
        raise
    return ruleset


def _seccomp_filter() -> Any:  # a pyseccomp.SyscallFilter
    import pyseccomp

    refused = pyseccomp.SyscallFilter(pyseccomp.ALLOW)
    rules: list[tuple[str, int, tuple[Any, ...]]] = [(name, errno.EPERM, ()) for name in REFUSED_SYSCALLS]
    rules += [("clone", errno.EPERM, (pyseccomp.Arg(0, pyseccomp.MASKED_EQ, _CLONE_THREAD, 0),)),
              ("clone3", errno.ENOSYS, ())]
    for name, error, conditions in rules:
        try:
            refused.add_rule(pyseccomp.ERRNO(error), name, *conditions)
        except (OSError, ValueError):
            continue  # a system call this architecture or libseccomp does not know
    return refused


@functools.lru_cache(maxsize=1)
def seccomp_program() -> bytes:
    """The filter as a compiled BPF program, for ``bwrap --seccomp FD`` (loaded just before exec)."""
    with os.fdopen(os.memfd_create("seccomp-bpf", os.MFD_CLOEXEC), "w+b") as program:
        _seccomp_filter().export_bpf(program)
        program.seek(0)
        return program.read()


def seccomp_program_fd() -> int:
    """A new file with no name holding :func:`seccomp_program`, at its start (the caller closes it)."""
    fd = os.memfd_create("seccomp-bpf", os.MFD_CLOEXEC)
    os.write(fd, seccomp_program())
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


def runtime_paths(python: str, extra: Iterable[str] = ()) -> list[str]:
    """What a learner process must read: the interpreter, its standard library without installed
    packages, the shared libraries (the system's folders of them, and each library this process has
    loaded, file by file: a folder such as /usr/local/lib also holds installed packages), the few
    system files Python reads, and ``extra`` (the learner runtime, the packages shown to it)."""
    paths = [python, *_SYSTEM_FILES, *extra]
    stdlib = {sysconfig.get_paths()["stdlib"], sysconfig.get_paths()["platstdlib"],
              os.path.join(sys.base_prefix, "lib", f"python{sys.version_info[0]}.{sys.version_info[1]}")}
    for folder in stdlib:
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        # the folder itself may be listed (imports list it), not read below: it holds site-packages
        paths.append(folder + _LIST_ONLY)
        paths += [os.path.join(folder, name) for name in names if name not in ("site-packages", "dist-packages")]
    arch = sysconfig.get_config_var("MULTIARCH") or ""
    for top in ("/lib", "/usr/lib", "/lib64", "/usr/lib64"):
        paths.append(os.path.join(top, arch) if arch and top.endswith("lib") else top)
    paths += _loaded_libraries()
    return [os.path.realpath(path[:-len(_LIST_ONLY)]) + _LIST_ONLY if path.endswith(_LIST_ONLY)
            else os.path.realpath(path) for path in paths]


def _loaded_libraries() -> list[str]:
    """Every shared library mapped into this process (libpython among them, wherever it lives)."""
    found = set()
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
            for line in maps:
                parts = line.split(None, 5)
                if len(parts) == 6 and parts[5].startswith("/") and ".so" in parts[5]:
                    found.add(parts[5].strip())
    except OSError:
        pass
    return sorted(found)
