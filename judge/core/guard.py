"""The grading guard: an audit hook that keeps learner code inside its work directory.

While active it refuses, with a PermissionError whose message names the cause: writing, deleting
or renaming files outside the run's private folder; starting processes (subprocess, os.system,
fork, exec, spawn); sending signals (e.g. to kill the judge); and loading native libraries with
ctypes. It also refuses new audit hooks (``sys.addaudithook`` then silently adds nothing): a hook
cannot be removed, so it would run the learner's code inside every later run of the browser
engine's interpreter. And it refuses what would let the code act inside the judge unseen by the
snapshots of :mod:`judge.core.integrity`: replacing the code, defaults or keyword defaults of a function
defined outside the run's folder (``f.__code__ = ...`` keeps the function object), installing a
trace or profile function (which could rewrite a test's variables and remove itself before any
check), and walking the garbage collector's objects (``gc.get_objects``, ``get_referrers``,
``get_referents``: a way to the judge's own objects). :func:`refused` lists those attempts;
:mod:`judge.core.integrity` voids the verdict. Reading files is allowed. Both engines use it: the
native child activates it for its whole (short) life, after pytest and numpy are imported and
before any learner code runs; the browser engine activates it around each run
(:func:`judge.core.runner.judge_source_json`), so both give the same verdict. Audit hooks cannot be
removed, so an inactive guard lets everything through; it is never activated in an ordinary
in-process run (such as the project's own tests).

This is defence in depth for honest mistakes and casual tampering, not a security sandbox: code
in the same process can always find a way around it. Grading that must resist a determined
attacker belongs in a container or VM (see docs/hostile-input.md).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from types import FunctionType

_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC
_PATH_EVENTS = {  # event -> indexes of the path arguments that must stay inside the root
    "os.remove": (0,), "os.rmdir": (0,), "os.mkdir": (0,), "os.rename": (0, 1), "shutil.rmtree": (0,),
    "os.truncate": (0,), "os.chmod": (0,), "os.chown": (0,), "os.symlink": (1,), "os.link": (1,),
    "os.utime": (0,),
}
_PROCESS_EVENTS = ("subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork",
                   "os.forkpty", "pty.spawn")
_SIGNAL_EVENTS = ("os.kill", "os.killpg", "signal.pthread_kill")
_NATIVE_EVENTS = ("ctypes.dlopen", "ctypes.dlsym")
_DEVICES = ("/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty")
_FUNCTION_PARTS = ("__code__", "__defaults__", "__kwdefaults__")
_HIDDEN_EVENTS = {"sys.settrace": "installing a trace function (sys.settrace)",
                  "sys.setprofile": "installing a profile function (sys.setprofile)",
                  "gc.get_objects": "walking the garbage collector's objects (gc.get_objects)",
                  "gc.get_referrers": "walking the garbage collector's objects (gc.get_referrers)",
                  "gc.get_referents": "walking the garbage collector's objects (gc.get_referents)"}


_state: dict[str, str | None] = {"root": None}
_installed: list[bool] = []
_refused: list[str] = []


def activate(root: str | Path) -> None:
    """Allow writes only below ``root`` until :func:`deactivate` (installs the hook once)."""
    _state["root"] = os.path.realpath(root)
    _refused.clear()
    if not _installed:
        sys.addaudithook(_make_hook(_state))
        _installed.append(True)


def deactivate() -> None:
    _state["root"] = None


def active_root() -> str | None:
    """The folder the guard currently confines writes to (None when inactive)."""
    return _state["root"]


def refused() -> list[str]:
    """Sentences for the functions whose code the guard refused to let be replaced since activation."""
    return list(_refused)


def _make_hook(state: dict[str, str | None]):
    def inside(path: object) -> bool:
        if isinstance(path, int):  # an already-open file descriptor
            return True
        if isinstance(path, bytes):
            path = os.fsdecode(path)
        if not isinstance(path, (str, os.PathLike)):
            return True
        root = state["root"] or ""
        full = os.path.realpath(os.path.join(os.getcwd(), os.fspath(path)))
        return full == root or full.startswith(root + os.sep) or full in _DEVICES

    def hook(event: str, args: tuple) -> None:
        if state["root"] is None:
            return
        if event == "sys.addaudithook":
            raise RuntimeError("the judge does not allow adding audit hooks")  # CPython drops the hook
        if event == "open":
            path, mode, flags = args
            writing = any(c in (mode or "") for c in "wax+") or bool((flags or 0) & _WRITE_FLAGS)
            if writing and not inside(path):
                raise PermissionError(f"the judge does not allow writing outside the work directory: {path}")
        elif event in _PATH_EVENTS:
            for index in _PATH_EVENTS[event]:
                if index < len(args) and not inside(args[index]):
                    raise PermissionError(f"the judge does not allow changing files outside the work "
                                          f"directory ({event} {args[index]})")
        elif event in _PROCESS_EVENTS:
            raise PermissionError(f"the judge does not allow starting processes ({event})")
        elif event in _SIGNAL_EVENTS:
            raise PermissionError(f"the judge does not allow sending signals ({event})")
        elif event in _NATIVE_EVENTS:
            raise PermissionError(f"the judge does not allow loading native code ({event})")
        elif event in _HIDDEN_EVENTS:
            _refused.append(f"{_HIDDEN_EVENTS[event]} was attempted (the guard refused it)")
            raise PermissionError(f"the judge does not allow {_HIDDEN_EVENTS[event]}")
        elif event == "object.__setattr__" and type(args[0]) is FunctionType and args[1] in _FUNCTION_PARTS:
            function = args[0]
            if not inside(function.__code__.co_filename):
                _refused.append(f"replacing {function.__module__}.{function.__qualname__}.{args[1]} was "
                                "attempted (the guard refused it)")
                raise PermissionError(f"the judge does not allow changing {args[1]} of a function "
                                      f"the code did not define ({function.__qualname__})")

    return hook
