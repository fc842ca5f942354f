"""The learner's guard: an audit hook that keeps the learner's code to its own folder.

While it confines a folder it refuses, with an exception whose message names the cause: writing,
deleting or renaming files outside that folder; starting processes; sending signals; loading native
code with ctypes; opening network connections; importing the modules that start processes or load
native code. An audit hook cannot be removed from Python. It is defence in depth, not the boundary:
in a learner process (:mod:`judge.sandbox.child`) the process and its sandbox level are what keep
grades honest, and native code can get past an audit hook. In the browser's one interpreter
(:mod:`judge.sandbox.inprocess`) it makes an honest mistake (a file written outside, a process
started) fail the same way as natively.
"""

from __future__ import annotations

import _thread
import contextlib
import os
import sys
from collections.abc import Iterator
from typing import Any

_PROCESS_EVENTS = ("subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork",
                   "os.forkpty", "pty.spawn")
_REFUSED_EVENTS = {"os.kill": "sending signals", "os.killpg": "sending signals",
                   "signal.pthread_kill": "sending signals",
                   "ctypes.dlopen": "loading native code", "ctypes.dlsym": "loading native code",
                   "socket.connect": "network connections", "socket.bind": "network connections"}
_REFUSED_IMPORTS = ("_posixsubprocess", "_ctypes")
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC
_PATH_EVENTS = {"os.remove": (0,), "os.rmdir": (0,), "os.mkdir": (0,), "os.rename": (0, 1), "shutil.rmtree": (0,),
                "os.truncate": (0,), "os.chmod": (0,), "os.chown": (0,), "os.symlink": (1,), "os.link": (1,),
                "os.utime": (0,)}
_DEVICES = ("/dev/null", "/dev/stdout", "/dev/stderr")
_state: dict[str, str | None] = {"root": None}
#: the one thread confined, or None for every thread of the process
_thread_confined: list[int | None] = [None]


def confine(root: str) -> None:
    """Confine what runs from now on, on every thread, to ``root`` (the hook is installed on first use)."""
    _confine(root)
    _thread_confined[0] = None


def _confine(root: str) -> None:
    if "hook" not in _state:
        sys.addaudithook(_hook)
        _state["hook"] = "installed"
    _state["root"] = _real_root(root)


#: ``root`` -> its real path, as first confined to. The browser's one interpreter confines to the
#: learner's folder around every call into the learner's code; resolving it again each time cost a
#: few file-system calls per call. Keeping the first answer also keeps the confinement where it was
#: if the folder's own name is later made a symbolic link.
_real_roots: dict[str, str] = {}


def _real_root(root: str) -> str:
    if not os.path.isabs(root):
        return os.path.realpath(root)  # depends on the working directory
    real = _real_roots.get(root)
    if real is None:
        if len(_real_roots) >= 64:
            _real_roots.clear()
        real = _real_roots[root] = os.path.realpath(root)
    return real


def release() -> None:
    """Stop confining."""
    _state["root"] = None


@contextlib.contextmanager
def confined(root: str | None) -> Iterator[None]:
    """Confine the calling thread to ``root`` (None: nothing) for a block, then put back what was before,
    the working directory included: in the browser's one interpreter, only while the learner's code
    runs. Other threads keep their rights: natively the judge warms up in its own process while another
    of its threads makes folders (the sandbox's probe). Pyodide cannot start threads, so in the browser
    that thread is all of the learner's code."""
    previous, thread, cwd = _state["root"], _thread_confined[0], working_directory()
    try:
        if root is None:
            _state["root"] = None
        else:
            _confine(root)
            _thread_confined[0] = _thread.get_ident()
        yield
    finally:
        _state["root"], _thread_confined[0] = previous, thread
        if cwd is not None and working_directory() != cwd:
            os.chdir(cwd)


def working_directory() -> str | None:
    """The working directory, or None when it no longer exists (the learner's code removed its own)."""
    try:
        return os.getcwd()
    except FileNotFoundError:
        return None


def _inside(path: object, root: str) -> bool:
    if isinstance(path, int):
        return True
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    if not isinstance(path, (str, os.PathLike)):
        return True
    full = os.path.realpath(os.path.join(os.getcwd(), os.fspath(path)))
    return full == root or full.startswith(root.rstrip("/") + "/") or full in _DEVICES


def _hook(event: str, args: tuple[Any, ...]) -> None:
    root = _state["root"]
    if root is None or (_thread_confined[0] is not None and _thread_confined[0] != _thread.get_ident()):
        return
    if event == "open":
        path, mode, flags = args
        if (any(c in (mode or "") for c in "wax+") or bool((flags or 0) & _WRITE_FLAGS)) and not _inside(path, root):
            raise PermissionError(f"the judge does not allow writing outside the learner's folder: {path}")
    elif event in _PATH_EVENTS:
        if any(i < len(args) and not _inside(args[i], root) for i in _PATH_EVENTS[event]):
            raise PermissionError(f"the judge does not allow changing files outside the learner's folder ({event})")
    elif event in _PROCESS_EVENTS:
        raise PermissionError(f"the judge does not allow starting processes ({event})")
    elif event in _REFUSED_EVENTS:
        raise PermissionError(f"the judge does not allow {_REFUSED_EVENTS[event]} ({event})")
    elif event == "import" and args[0] in _REFUSED_IMPORTS:
        raise ImportError(f"the judge does not allow importing {args[0]} (it starts processes or loads native code)")
