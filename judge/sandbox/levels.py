"""Sandbox levels for the learner process, chosen once per run and reported.

- ``bubblewrap``: the learner process runs under ``bwrap`` (Debian's package ``bubblewrap``), in new
  namespaces (mount, pid, network, ipc, uts, user), with no capabilities. It sees only the Python
  runtime (its installed packages hidden, numpy shown on its own), the judge's few learner-side
  modules, and its own folder, writable; nothing else of the machine, no network, no other process.
- ``user``: when the judge runs as root and bubblewrap is not usable, the learner process runs as an
  unprivileged user. That is only safe if the user cannot read the grader's files, so choosing it
  runs a probe as that user: it must be able to run the Python and import numpy (the set-up check
  that catches a Python in root's private home), and must not be able to read any reference,
  secret test, wrong solution or the installed judge package's bundled problems.
- ``plain``: a child process as the same user. The tests still see only plain data, but the
  learner's code can read (and write) what the grader can; grading says so loudly.

``auto`` takes the first that works, in that order; as root it never falls back to ``plain`` when
grading (learner code would run as root). A level asked for by name that cannot be used is an
error, never a silent downgrade. :func:`choose` probes once per process and configuration.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import importlib.util
import json
import os
import py_compile
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Literal, get_args

from ..core.errors import JudgeError
from . import confine, forking, identities, trees

Level = Literal["bubblewrap", "user", "plain"]
LEVELS: tuple[Level, ...] = get_args(Level)
REQUESTS = ("auto", *LEVELS)
#: a learner's time limits count CPU time; wall-clock time stops it only past this many times the limit
WALL_BACKSTOP = 10.0
#: what the learner process imports besides the standard library (shown to it on its own)
PACKAGES = ("numpy",)
#: where things appear inside the bubblewrap sandbox
SANDBOX_WORK, SANDBOX_RUNTIME, SANDBOX_SITE = "/work", "/judge/runtime", "/judge/site"
#: bytes each of the sandbox's own in-memory folders (/tmp, /dev/shm) may hold: what is written there is
#: memory that the learner's memory limit (an address-space limit) does not count
TMPFS_BYTES = 16 * 1024 * 1024


def _kernel_and_memory(sized_tmpfs: bool) -> list[str]:
    """The sandbox's /proc, /dev and /tmp. Its /proc/sys and /proc/sysrq-trigger are read-only: where the
    judge runs bubblewrap as root (a Python no identity of the pool can run) the sandbox's user is root
    outside, without capabilities, and the kernel lets a file's owner write the machine's settings there (a
    red team wrote kernel.printk_ratelimit). /dev is read-only but for its devices; /tmp and /dev/shm hold
    :data:`TMPFS_BYTES` each where bubblewrap can bound them (``sized_tmpfs``)."""
    size = ["--size", str(TMPFS_BYTES)] if sized_tmpfs else []
    return ["--proc", "/proc", "--ro-bind", "/proc/sys", "/proc/sys",
            "--ro-bind-try", "/proc/sysrq-trigger", "/proc/sysrq-trigger",
            "--dev", "/dev", *size, "--tmpfs", "/dev/shm", "--remount-ro", "/dev", *size, "--tmpfs", "/tmp"]


def _bwrap_sizes_tmpfs(bwrap: str) -> bool:
    """Whether ``bwrap`` bounds a tmpfs (``--size``: bubblewrap 0.7 and later)."""
    try:
        done = subprocess.run([bwrap, "--help"], capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.SubprocessError):
        return False
    return "--size" in done.stdout


#: the learner process's main, after its folders are put first on sys.path
BOOT = ("import sys; sys.path[:0] = sys.argv[1:4]; "
        "from judge.sandbox.child import main; main()")
_RUNTIME_FILES = ("__init__.py", "core/__init__.py", "core/codec.py", "core/protocol.py",
                  "sandbox/__init__.py", "sandbox/learner.py", "sandbox/child.py", "sandbox/guard.py")
_ENV = {"PYTHONIOENCODING": "utf-8", "PYTHONDONTWRITEBYTECODE": "1", "OPENBLAS_NUM_THREADS": "1",
        "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "LC_ALL": "C.UTF-8"}
PLAIN_WARNING = ("the learner's code runs without a sandbox, as the user running the judge: it can read "
                 "the grader's files (references, secret tests) and could change them. Install bubblewrap "
                 "(Debian/Ubuntu: apt-get install bubblewrap) to confine it, or grade as root with an "
                 "unprivileged user (--sandbox user)")


NO_NAMESPACES = ("bubblewrap: this machine does not let bwrap create namespaces, as on Gradescope, PrairieLearn "
                 "and in most containers; the user level is the one expected here (an unprivileged identity per "
                 "job, with Landlock and seccomp where the kernel offers them), nothing to fix")
#: the same, for a judge that is not root (a GitHub Actions runner): there the user level cannot be had
NO_NAMESPACES_UNPRIVILEGED = ("bubblewrap: this machine does not let bwrap create namespaces (Ubuntu 24.04 and later "
                              "restrict them for users: sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0)")
_NO_NAMESPACES = re.compile(r"(creat\w* new namespace|uid map|setting up uid|No permissions to|unshare|"
                            r"Operation not permitted)", re.IGNORECASE)


class SandboxError(JudgeError):
    """The sandbox level asked for cannot be used here; the message says why and how to fix it."""


class IdentitiesBusy(SandboxError):
    """Every sandbox identity is held by other jobs: one may be free later."""


@dataclass(frozen=True)
class Sandbox:
    """How learner processes are started for this run."""

    level: Level
    python: str  # the interpreter the learner process runs (a real file, not a venv's link)
    runtime: str  # the folder with the judge's learner-side modules and the site folder
    user: str | None = None  # a named unprivileged user (level "user"); None: the pool of identities
    hidden: tuple[str, ...] = ()  # grader paths inside what bubblewrap shows, masked there
    note: str = ""  # how it was chosen (for reports)
    warning: str = ""  # what a grader must know (plain level)
    packages: dict[str, str] = field(default_factory=dict)  # import name -> folder shown to the learner
    as_identity: bool = False  # bubblewrap started as the job's identity (its user maps to that uid)
    confinement: tuple[str, ...] = ()  # "landlock", "seccomp" (user level); "seccomp" (bwrap loads it)
    readable: tuple[str, ...] = ()  # what Landlock lets the learner process read
    bwrap: str = "bwrap"  # the bubblewrap found on the judge's PATH when the level was chosen
    sized_tmpfs: bool = False  # that bubblewrap bounds the sandbox's in-memory folders (checked when chosen)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Sandbox:
        """The sandbox of :func:`dataclasses.asdict` (a test process started with ``spawn`` gets it so)."""
        values = {f.name: data[f.name] for f in fields(cls) if f.name in data}
        for name in ("hidden", "confinement", "readable"):
            values[name] = tuple(values.get(name, ()))
        values["packages"] = dict(values.get("packages", {}))
        return cls(**values)

    @property
    def summary(self) -> str:
        """One line for reports: the level and what it means."""
        who = (f"the unprivileged user {self.user}" if self.user else
               "an unprivileged identity of its own per job (no job can reach another's processes or files)")
        confined = (" by " + " and ".join(n.capitalize() if n == "landlock" else n for n in self.confinement)
                    if self.confinement else "")
        meaning = {"bubblewrap": "namespaces: the learner's code sees only Python, numpy and its own folder"
                                 + (", as an unprivileged identity per job" if self.as_identity else ""),
                   "user": f"the learner's code runs as {who}, confined{confined or ' by file permissions only'}",
                   "plain": "no sandbox: the learner's code runs as the grader and can read the grader's files"}
        return f"{self.level} ({meaning[self.level]})"

    def command(self, folder: str, config: dict[str, object], seccomp_fd: int | None = None) -> list[str]:
        """The command line that starts a learner process on ``folder`` (which holds ``work/``);
        ``seccomp_fd``: bubblewrap loads that compiled filter just before it starts Python."""
        work = os.path.join(folder, "work")
        if self.level != "bubblewrap":
            site = os.path.join(self.runtime, "site")
            return [self.python, "-I", "-S", "-B", "-c", BOOT, work, self.runtime, site,
                    json.dumps(dict(config, root=work))]
        inside = [SANDBOX_WORK, SANDBOX_RUNTIME, SANDBOX_SITE, json.dumps(dict(config, root=SANDBOX_WORK))]
        return [*self._bwrap(work, seccomp_fd), "--", self.python, "-I", "-S", "-B", "-c", BOOT, *inside]

    def _bwrap(self, work: str, seccomp_fd: int | None) -> list[str]:
        # --as-pid-1: the learner's Python is the namespace's first process, so when it is killed it is
        # adopted and reaped by the test process with its CPU time, not reaped unaccounted by bwrap's init
        args = [self.bwrap, "--unshare-all", "--die-with-parent", "--new-session", "--as-pid-1", "--cap-drop", "ALL"]
        if seccomp_fd is not None:
            args += ["--seccomp", str(seccomp_fd)]
        if os.geteuid() == 0 or self.as_identity:  # inside, nobody: outside, the job's identity (or root)
            args += ["--unshare-user", "--uid", "65534", "--gid", "65534"]
        for top in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/usr"):
            if os.path.islink(top):
                args += ["--symlink", os.readlink(top), top]
            elif os.path.isdir(top):
                args += ["--ro-bind", top, top]
        prefix = _prefix_of(self.python)
        if not prefix.startswith("/usr/"):
            args += ["--ro-bind", prefix, prefix]
        for path in self.hidden:  # an empty folder the learner's code cannot fill either
            args += ["--tmpfs", path, "--remount-ro", path] if os.path.isdir(path) else ["--ro-bind", "/dev/null", path]
        args += ["--ro-bind", os.path.join(self.runtime, "judge"), f"{SANDBOX_RUNTIME}/judge"]
        for name, path in sorted(self.packages.items()):
            args += ["--ro-bind", path, f"{SANDBOX_SITE}/{name}"]
        args += ["--bind", work, SANDBOX_WORK, *_kernel_and_memory(self.sized_tmpfs),
                 "--chdir", SANDBOX_WORK, "--clearenv"]
        for key, value in {**_ENV, "HOME": SANDBOX_WORK, "PATH": "/usr/bin:/bin", "TMPDIR": SANDBOX_WORK}.items():
            args += ["--setenv", key, value]
        return args

    def environment(self, work: str) -> dict[str, str]:
        """The environment of a learner process of the user and plain levels (nothing of the grader's)."""
        return {**_ENV, "HOME": work, "PATH": "/usr/bin:/bin", "TMPDIR": work}


def choose(requested: str = "auto", *, user: str | None = None, grading: bool = False, unattended: bool = False,
           grader_paths: Sequence[str | Path] = (), packages: Sequence[str] = ()) -> Sandbox:
    """The sandbox for this run (probed once per process and arguments); :class:`SandboxError` if the
    level asked for cannot be used. ``packages``: the distributions problems declare (``packages`` in
    problem.toml), shown to the learner's code beside numpy. ``grading`` as root, or ``unattended``
    (a platform's grading job, where nobody reads a warning), ``auto`` never falls back to plain."""
    if requested not in REQUESTS:
        raise SandboxError(f"--sandbox {requested!r}: expected one of {', '.join(REQUESTS)}")
    check_temporary_folder()
    return _choose(requested, user, grading, tuple(sorted({os.path.realpath(p) for p in grader_paths})),
                   tuple(sorted(set(packages))), unattended)


def problems_options(problems: Iterable[Any]) -> dict[str, list[Any]]:
    """What :func:`choose` must know of the problems a run judges: their folders (``grader_paths``, kept
    from the learner's code) and the distributions they declare (``packages``)."""
    problems = list(problems)
    return {"grader_paths": [problem.path for problem in problems],
            "packages": [name for problem in problems for name in problem.packages]}


class PendingSandbox:
    """:func:`choose` running on a thread of its own (:func:`choose_ahead`): the probe's process starts,
    imports numpy and ends while the judge imports pytest, loads the problems and warms up."""

    def __init__(self, requested: str, **options: Any) -> None:
        self._requested, self._options = requested, options
        self._sandbox: Sandbox | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._choose, args=(requested,), kwargs=options,
                                        name="judge-sandbox-probe")
        self._thread.start()

    def _choose(self, requested: str, **options: Any) -> None:
        try:
            self._sandbox = choose(requested, **options)
        except BaseException as exc:  # noqa: BLE001 - raised again, in the caller's thread, by result()
            self._error = exc

    def result(self) -> Sandbox:
        """The sandbox, once the probe has ended (its :class:`SandboxError` raised here). Call it before
        forking: a fork must not copy a thread in the middle of its work."""
        self._thread.join()
        if isinstance(self._error, _MainThreadOnly):  # the user level's probe: chosen here, the thread gone
            self._sandbox, self._error = choose(self._requested, **self._options), None
        if self._error is not None:
            raise self._error
        assert self._sandbox is not None
        return self._sandbox


class _MainThreadOnly(Exception):
    """Raised by a probe that must run on the main thread (the user level enters Landlock and seccomp in
    a ``preexec_fn``, which CPython's documentation says is not safe while other threads run)."""


def choose_ahead(requested: str = "auto", **options: Any) -> PendingSandbox:
    """:func:`choose` started now on another thread; :meth:`PendingSandbox.result` waits for it."""
    return PendingSandbox(requested, **options)


@functools.lru_cache(maxsize=8)
def _choose(requested: str, user: str | None, grading: bool, grader_paths: tuple[str, ...],
            distributions: tuple[str, ...] = (), unattended: bool = False) -> Sandbox:
    runtime = runtime_folder()
    python = os.path.realpath(sys.executable)
    packages = _link_packages(runtime, {**_package_folders(), **_distribution_folders(distributions)})
    secrets = _secret_files(grader_paths)
    failures: list[str] = []
    for level in (LEVELS if requested == "auto" else (requested,)):
        if level == "plain" and requested == "auto" and (grading and os.geteuid() == 0 or unattended):
            break  # never run learner code as root when grading, nor unsandboxed where no one reads a warning
        try:
            sandbox = _try(level, python, runtime, packages, user, grader_paths, secrets)  # type: ignore[arg-type]
        except SandboxError as exc:
            if requested != "auto":
                raise
            failures.append(str(exc))
            continue
        notes = [*failures, *([sandbox.note] if sandbox.note else [])]
        warning = PLAIN_WARNING if sandbox.level == "plain" and grading else (in_memory_warning() if grading else "")
        return dataclasses.replace(sandbox, note="; ".join(notes), warning=warning)
    if os.geteuid() != 0:
        raise SandboxError("no sandbox level can be used here, and a platform's grading never runs learner code "
                           "unsandboxed: " + "; ".join(failures) + ". Let bubblewrap run (on Ubuntu 24.04 and "
                           "later, unprivileged user namespaces are restricted: sudo sysctl -w "
                           "kernel.apparmor_restrict_unprivileged_userns=0), grade as root with --sandbox user, "
                           "or accept the risk with --sandbox plain")
    raise SandboxError("no sandbox level can be used to grade as root here (learner code must not run as "
                       "root): " + "; ".join(failures) + ". Install bubblewrap, or give an unprivileged user "
                       "that can run this Python (--sandbox user --sandbox-user NAME), or accept the risk "
                       "with --sandbox plain")


def check_temporary_folder() -> None:
    """Refuse to judge when the temporary folder asked for (``TMPDIR``, else ``TEMP`` or ``TMP``) cannot be
    used. Python's :mod:`tempfile` then quietly takes ``/tmp`` (or ``/var/tmp``, or the working folder), and
    the learners' folders would land where the grader kept them away from: a ``TMPDIR`` on a file system of
    its own that a learner had filled sent the next run's learner, which filled its folder too, to the
    machine's root disk (77 GB, everything else on the machine failing to write). What a judge killed
    outright left there (:func:`trees.remove_abandoned`) is removed first: it is often what filled it."""
    name, asked = next(((key, os.environ[key]) for key in ("TMPDIR", "TEMP", "TMP") if os.environ.get(key)),
                       ("", ""))
    used = tempfile.gettempdir()
    if not asked or os.path.realpath(asked) == os.path.realpath(used):
        return
    if os.path.isdir(asked) and trees.remove_abandoned(asked):  # a judge killed outright left it full
        tempfile.tempdir = None  # looked for again, now that the space has come back
        used = tempfile.gettempdir()
        if os.path.realpath(asked) == os.path.realpath(used):
            return
    raise SandboxError(f"the temporary folder {name}={asked} cannot be used ({_why_unusable(asked)}), and the "
                       f"learners' folders would go to {used} instead; free it or make it, or name another "
                       f"({name}=FOLDER)")


def _why_unusable(folder: str) -> str:
    """Why :mod:`tempfile` passed ``folder`` over: it creates a file there and writes a few bytes."""
    path = ""
    try:
        handle, path = tempfile.mkstemp(dir=folder)
        with os.fdopen(handle, "wb") as file:
            file.write(b"judge")
    except OSError as exc:
        return exc.strerror or type(exc).__name__
    finally:
        if path:
            with contextlib.suppress(OSError):
                os.unlink(path)
    return "it could not be written when this run started"


def in_memory_warning(folder: str | None = None) -> str:
    """What a grader must know when the temporary folder, which holds the learner's folder, is in memory (a
    tmpfs: /tmp on Debian 13, Fedora, Arch): files the learner's code writes there are memory its limit does
    not count (a red team's submission held 1.8 GiB of it with a 1 GiB limit). "" when it is on disk."""
    folder = os.path.realpath(folder or tempfile.gettempdir())
    if _file_system_type(folder) != "tmpfs":
        return ""
    return (f"the temporary folder {folder} is in memory (tmpfs): what the learner's code writes into its folder is "
            "memory that its memory limit does not count, shared by every job; give the judge a folder on disk "
            "(TMPDIR=/var/tmp)")


def _file_system_type(path: str) -> str:
    """The type of the file system ``path`` is on (``tmpfs``, ``ext4``...), from /proc/self/mountinfo ("" when
    unknown): the mount point that is the longest prefix of ``path``."""
    found, best = "", -1
    try:
        with open("/proc/self/mountinfo", encoding="utf-8", errors="replace") as mounts:
            for line in mounts:
                fields = line.split(" - ")
                point = fields[0].split()[4].replace("\\040", " ") if len(fields) == 2 else ""
                inside = path == point or path.startswith(point.rstrip("/") + "/")
                if point and inside and len(point) > best:
                    found, best = fields[1].split()[0], len(point)
    except OSError:
        return ""
    return found


def _try(level: Level, python: str, runtime: str, packages: dict[str, str], user: str | None,
         grader_paths: tuple[str, ...], secrets: tuple[str, ...]) -> Sandbox:
    if level == "bubblewrap":
        bwrap = shutil.which("bwrap")
        if bwrap is None:
            raise SandboxError("bubblewrap: bwrap is not installed (Debian/Ubuntu: apt-get install bubblewrap)")
        hidden = tuple(_hidden_paths(python, grader_paths))
        seccomp = ("seccomp",) if confine.offered().seccomp else ()
        sandbox = Sandbox("bubblewrap", python, runtime, hidden=hidden, packages=packages, bwrap=bwrap,
                          confinement=seccomp, sized_tmpfs=_bwrap_sizes_tmpfs(bwrap))
        if os.geteuid() != 0:
            _probe(sandbox, ())
            return sandbox
        as_identity = dataclasses.replace(sandbox, as_identity=True, user=user)
        try:
            closed = _closed_to_others(python)
            if closed:  # no need to start a process to learn that (it cost 50-60 ms of every run)
                raise SandboxError(f"bubblewrap: an unprivileged identity cannot run {python} ({closed})")
            _probe(as_identity, ())
            return as_identity
        except SandboxError as exc:  # a Python in a folder only root can enter (a private home)
            _probe(sandbox, ())
            return dataclasses.replace(sandbox, note=f"bubblewrap runs as root, its user mapped to root without "
                                                     f"capabilities, since as an unprivileged identity: {exc}")
    if level == "user":
        if os.geteuid() != 0:
            raise SandboxError("user: the judge must run as root to start learner code as another user")
        if user:
            _user_ids(user)
        use = confine.offered()
        readable = tuple(confine.runtime_paths(python, [runtime, *packages.values()])) if use.landlock else ()
        sandbox = Sandbox("user", python, runtime, user=user, packages=packages, confinement=use.names,
                          readable=readable, note=use.missing)
        _probe(sandbox, secrets)
        return sandbox
    return Sandbox("plain", python, runtime, packages=packages)


def one_identity(sandbox: Sandbox) -> bool:
    """Whether every job's learner processes run as the one named user (``--sandbox-user``): a pool of one
    identity, so its jobs can only take turns (a second job started beside the first waited for it inside the
    loop that ends the first, for the whole wait: 600 s, and Gradescope's grading ended with no result)."""
    return os.geteuid() == 0 and sandbox.user is not None and (sandbox.level == "user" or sandbox.as_identity)


def acquire_identity(sandbox: Sandbox, wait: float = identities.WAIT,
                     announce: float | None = None) -> identities.Identity | None:
    """The identity one job's learner processes run as (held until released), or None to run them as
    the judge's own user (the plain level, bubblewrap started by root or by an unprivileged judge).
    :class:`IdentitiesBusy` when every identity stayed taken for ``wait`` seconds (``announce``: see
    :func:`judge.sandbox.identities.acquire`)."""
    if os.geteuid() != 0 or not (sandbox.level == "user" or sandbox.as_identity):
        return None
    try:
        return identities.acquire(_user_ids(sandbox.user) if sandbox.user else None, wait=wait, announce=announce)
    except identities.AllTaken as exc:
        raise IdentitiesBusy(f"{sandbox.level}: {exc}") from None
    except identities.IdentityError as exc:
        raise SandboxError(f"{sandbox.level}: {exc}") from None


def _user_ids(name: str) -> tuple[int, int]:
    import pwd

    try:
        entry = pwd.getpwnam(name)
    except KeyError:
        raise SandboxError(f"user: no user {name!r} on this system") from None
    if entry.pw_uid == 0:
        raise SandboxError(f"user: {name!r} is root, not an unprivileged user")
    return entry.pw_uid, entry.pw_gid


_PROBE = """
import json, os, sys
sys.path[:0] = sys.argv[1:4]
try:
    import numpy
    found = numpy.__version__
except Exception as exc:
    found = f"{type(exc).__name__}: {exc}"
readable = []
for path in json.loads(sys.argv[-1]):
    try:
        with open(path, "rb"):
            readable.append(path)
    except OSError:
        pass
print(json.dumps({"numpy": found, "readable": readable}))
"""


def _probe(sandbox: Sandbox, secrets: Sequence[str]) -> None:
    """Run a tiny learner-like process at this level, as its jobs will run (identity, confinement): it
    must start, import numpy, and read no secret."""
    if sandbox.level == "user" and sandbox.confinement and threading.current_thread() is not threading.main_thread():
        raise _MainThreadOnly  # its confinement is entered in a preexec_fn: not safe beside other threads
    folder = trees.held_folder("judge-probe-", os.path.dirname(sandbox.runtime), 0o711)
    identity = acquire_identity(sandbox)
    ids = (identity.uid, identity.gid) if identity else None
    rules = None
    try:
        os.makedirs(os.path.join(folder, "work"))
        if ids is not None:
            os.chown(os.path.join(folder, "work"), *ids)
        if sandbox.level == "user" and sandbox.confinement:
            rules = confine.Confinement(sandbox.readable, folder, confine.offered())
        command = sandbox.command(folder, {})
        command[command.index("-c") + 1] = _PROBE
        command[-1] = json.dumps(list(secrets))
        held = forking.ctrl_c_held() if rules is not None else contextlib.nullcontext()
        # a preexec_fn makes CPython run its fork handlers, where a Ctrl-C would be lost: it is held until the
        # probe ends (a fraction of a second). The probe has a session of its own, as every process the judge
        # starts: a Ctrl-C meant for the judge that reached bubblewrap while it set up its namespaces killed the
        # outer bwrap and left the inner one waiting, holding the pipe this waits on (the judge hung at exit)
        try:
            with held:
                done = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False,
                                      start_new_session=True,
                                      cwd=os.path.join(folder, "work"), env=sandbox.environment(folder),
                                      user=ids[0] if ids else None, group=ids[1] if ids else None,
                                      extra_groups=[] if ids else None, preexec_fn=rules.enter if rules else None)
        except (OSError, subprocess.SubprocessError) as exc:
            done = subprocess.CompletedProcess(command, 126, "", f"{type(exc).__name__}: {exc}")
    finally:
        if rules is not None:
            rules.close()
        if identity is not None:
            identities.release(identity)
        trees.remove_tree(folder)
    _check_probe(sandbox, done)


def _check_probe(sandbox: Sandbox, done: subprocess.CompletedProcess[str]) -> None:
    who = (f"the user {sandbox.user}" if sandbox.user else "an unprivileged identity"
           if sandbox.level == "user" or sandbox.as_identity else "it")
    if sandbox.level == "bubblewrap" and _NO_NAMESPACES.search(done.stderr or ""):
        said = NO_NAMESPACES if os.geteuid() == 0 else NO_NAMESPACES_UNPRIVILEGED
        raise SandboxError(said + f" (bwrap: {done.stderr.strip().splitlines()[-1]})")
    try:
        report = json.loads(done.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        tail = (done.stderr or done.stdout).strip().splitlines()[-2:]
        raise SandboxError(f"{sandbox.level}: {who} cannot run {sandbox.python} ({' '.join(tail) or 'no output'}); "
                           "use a Python the learner process can run (for example a virtual environment "
                           "made from /usr/bin/python3 in a folder others can read)") from None
    if not str(report.get("numpy", "")).split(".")[0].isdigit():
        raise SandboxError(f"{sandbox.level}: {who} cannot import numpy ({report.get('numpy')}); make the "
                           f"Python's packages readable to {who}")
    readable = report.get("readable") or []
    if readable:
        shown = ", ".join(readable[:3]) + (f" and {len(readable) - 3} more" if len(readable) > 3 else "")
        raise SandboxError(f"{sandbox.level}: {who} can read the grader's files ({shown}); make them "
                           f"unreadable to {who} (chmod -R o-rwx on the problems folder and the judge's "
                           "installed package) or install bubblewrap")


# ------------------------------------------------------------------------------------------- folders
@functools.lru_cache(maxsize=1)
def runtime_folder() -> str:
    """A folder (made once per process) with the judge's learner-side modules and a site folder.

    Readable by everyone: it holds nothing of the grader's (no problem, no test), only the modules a
    learner process imports, and links to the packages it may import (:data:`PACKAGES`).
    """
    import atexit

    folder = trees.held_folder("judge-runtime-", mode=0o755)
    package = Path(__file__).resolve().parents[1]
    for name in _RUNTIME_FILES:
        target = Path(folder, "judge", name)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(package / name, target)
        _compile_beside(target)
    for item in Path(folder, "judge").rglob("*"):
        item.chmod(0o755 if item.is_dir() else 0o644)
    Path(folder, "site").mkdir(mode=0o755)
    os.chmod(Path(folder, "site"), 0o755)
    os.chmod(Path(folder, "judge"), 0o755)
    _link_packages(folder, _package_folders())
    atexit.register(trees.remove_tree, folder)
    return folder


def _compile_beside(source: Path) -> None:
    """Byte code for ``source`` in the ``__pycache__`` folder beside it, where the learner process looks.

    Compiled once here: every learner process runs with ``-B`` (it writes no byte code) and would
    otherwise compile these modules again on each start (a Python of another version ignores them).
    The path is explicit: where ``PYTHONPYCACHEPREFIX`` is set, the default one lies under that prefix,
    which the learner's Python (``-I``: no environment variables) never reads.
    """
    name = f"{source.stem}.{sys.implementation.cache_tag}.pyc"
    py_compile.compile(str(source), cfile=str(source.parent / "__pycache__" / name), doraise=True)


@functools.lru_cache(maxsize=1)
def _package_folders() -> dict[str, str]:
    """Import name -> folder of each package the learner may import, and their vendored libraries."""
    found = {}
    for name in PACKAGES:
        spec = importlib.util.find_spec(name)
        if spec is None or not spec.submodule_search_locations:
            continue
        folder = os.path.realpath(list(spec.submodule_search_locations)[0])
        found[name] = folder
        libs = folder + ".libs"  # auditwheel's vendored shared libraries (numpy.libs)
        if os.path.isdir(libs):
            found[name + ".libs"] = libs
    return found


def _link_packages(runtime: str, packages: dict[str, str]) -> dict[str, str]:
    """Entries in the runtime's site folder for the packages the learner may import: a link where
    every user can reach the package (or where no other user can run this Python anyway), else a copy
    (hard links where they can be made: no bytes copied), since an unprivileged identity cannot enter a
    virtual environment in a private folder.
    Returns import name -> the folder to show (the package's own, or its copy)."""
    site = Path(runtime, "site")
    shown = {}
    # where no other user can run this Python, no identity will import a package: links do for root
    nobody_else = bool(_closed_to_others(os.path.realpath(sys.executable)))
    for name, path in packages.items():
        entry = site / name
        if nobody_else or _reachable_by_others(path):
            if not entry.is_symlink() and not entry.exists():
                entry.symlink_to(path)
            shown[name] = path if entry.is_symlink() else str(entry)
            continue
        if not entry.exists():
            _share_copy(path, str(entry))
        shown[name] = str(entry)
    return shown


def refuse_exposed(sandbox: Sandbox, folders: Sequence[Path]) -> None:
    """At the user level without Landlock the learner's code reads what file permissions let every
    user read, and the judge's command line (in /proc) names the folders it grades: a
    :class:`SandboxError` if a file in ``folders`` (other students' submissions, earlier results)
    is readable by others there."""
    if sandbox.level != "user" or "landlock" in sandbox.confinement:
        return
    exposed = [str(path) for folder in folders if folder.exists()
               for path in (folder, *sorted(folder.rglob("*"))) if path.is_file() and _reachable_by_others(str(path))]
    if exposed:
        shown = ", ".join(exposed[:3]) + (f" and {len(exposed) - 3} more" if len(exposed) > 3 else "")
        folders_shown = " ".join(str(f) for f in folders if f.exists())
        raise SandboxError(f"user: without Landlock the learner's code can read what every user may read, and "
                           f"other users can read {shown}; make them unreadable to others (chmod -R o-rwx "
                           f"{folders_shown}) or grade where Landlock or bubblewrap is available")


def _closed_to_others(path: str) -> str:
    """Why a user with no rights of its own certainly cannot run the file ``path`` (a folder above it or
    the file itself closed to others, and no access control list that could open it), else ""."""
    current = Path(path)
    for item in (*reversed(current.parents), current):
        try:
            mode, acl = os.stat(item).st_mode, _has_acl(item)
        except OSError:
            return ""  # let the probe find out
        if acl:
            return ""
        if not mode & 0o001:
            return f"{item} is closed to other users"
    return ""


def _has_acl(path: Path) -> bool:
    try:
        return "system.posix_acl_access" in os.listxattr(path)
    except (OSError, AttributeError):  # no extended attributes here: no access control lists either
        return False


def _reachable_by_others(path: str) -> bool:
    """Whether a user with no rights of its own can read ``path`` (every folder above it passable)."""
    current = Path(path)
    if not os.stat(current).st_mode & 0o004:
        return False
    return all(os.stat(parent).st_mode & 0o001 for parent in current.parents)


def _share_copy(source: str, target: str) -> None:
    """A copy of ``source`` others can read: files hard-linked where already readable by all, else copied."""
    def link_or_copy(src: str, dst: str) -> None:
        if os.stat(src).st_mode & 0o004:
            try:
                os.link(src, dst)
                return
            except OSError:
                pass
        shutil.copy2(src, dst)
        os.chmod(dst, 0o644)

    if os.path.isdir(source):
        shutil.copytree(source, target, copy_function=link_or_copy, symlinks=False)
        for folder, _, _ in os.walk(target):
            os.chmod(folder, 0o755)
    else:
        link_or_copy(source, target)


def _distribution_folders(distributions: Iterable[str]) -> dict[str, str]:
    """Import name -> folder (or module file) of the top-level modules of installed distributions."""
    wanted = {_normalized(name) for name in distributions}
    if not wanted:
        return {}
    import importlib.metadata  # only here: importing it costs every run of the judge 20-50 ms
    found = {}
    for module, owners in importlib.metadata.packages_distributions().items():
        if not wanted & {_normalized(owner) for owner in owners}:
            continue
        spec = importlib.util.find_spec(module)
        if spec is None:
            continue
        if spec.submodule_search_locations:
            found[module] = os.path.realpath(list(spec.submodule_search_locations)[0])
        elif spec.origin and os.path.isfile(spec.origin):
            found[os.path.basename(spec.origin)] = os.path.realpath(spec.origin)
    return found


def _normalized(name: str) -> str:
    return name.lower().replace("-", "_").replace(".", "_")


def _prefix_of(python: str) -> str:
    """The installation prefix of the interpreter binary ``python`` (``<prefix>/bin/python3.X``)."""
    return str(Path(python).resolve().parent.parent)


def _hidden_paths(python: str, grader_paths: Iterable[str]) -> list[str]:
    """Paths inside what bubblewrap shows that the learner must not see: installed packages (the
    judge among them) and any of the grader's folders."""
    shown = ["/usr", _prefix_of(python)]
    candidates = set(grader_paths)
    for scheme_path in ("purelib", "platlib"):
        candidates.add(sysconfig.get_paths(vars={"base": _prefix_of(python), "platbase": _prefix_of(python)})
                       [scheme_path])
    candidates.add(str(Path(__file__).resolve().parents[2]))  # where the judge itself is installed
    version = f"python{sys.version_info[0]}.{sys.version_info[1]}"
    for folder in ("/usr/lib/python3/dist-packages", f"/usr/lib/{version}/dist-packages",
                   f"/usr/local/lib/{version}/dist-packages", f"/usr/local/lib/{version}/site-packages"):
        candidates.add(folder)
    hidden: list[str] = []
    for path in sorted(candidates):
        real = os.path.realpath(path)
        shown_here = any(real == top or real.startswith(top.rstrip("/") + "/") for top in shown)
        if os.path.exists(real) and shown_here and not any(real.startswith(h.rstrip("/") + "/") for h in hidden):
            hidden.append(real)
    return hidden


def _secret_files(grader_paths: Iterable[str]) -> tuple[str, ...]:
    """Every reference, secret test and wrong solution under the grader's problem folders, and the
    bundled problems of the installed judge."""
    roots = list(grader_paths)
    bundled = Path(__file__).resolve().parents[1] / "_problems"
    if bundled.is_dir():
        roots.append(str(bundled))
    found = []
    for root in roots:
        base = Path(root)
        for pattern in ("reference/*", "tests/secret/*", "wrong/*", "*/reference/*", "*/tests/secret/*", "*/wrong/*"):
            found += [str(p) for p in base.glob(pattern) if p.is_file()]
    return tuple(sorted(set(found)))
