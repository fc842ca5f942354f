"""Interpreter state that honest code may change during a run, saved before it and put back after.

A solution may seed ``random`` or numpy's legacy generator, raise the recursion limit, call
``np.seterr`` or ``np.set_printoptions``, set environment variables, add warnings filters, change
``decimal``'s context, configure ``logging``'s root logger or ``chdir`` inside its work directory.
None of that voids a verdict; all of it is undone when the run ends, so no later run (the browser
engine keeps one interpreter for many) sees it. What is not honest: a trace or profile function,
or a garbage-collector callback, left installed (code that would run inside the judge); those are
reported by :meth:`GlobalState.findings` and removed too. Pure Python: runs in both engines.
"""

from __future__ import annotations

import gc
import os
import random
import sys
import time
import warnings
from typing import Any


class GlobalState:
    """A copy of the state an honest run may change (taken before the learner's code runs)."""

    def __init__(self) -> None:
        self.recursion_limit = sys.getrecursionlimit()
        self.int_digits = sys.get_int_max_str_digits() if hasattr(sys, "get_int_max_str_digits") else None
        self.cwd = os.getcwd()
        self.environ = dict(os.environ)
        self.filters = list(warnings.filters)
        self.random = random.getstate()
        self.gc = (gc.isenabled(), gc.get_threshold(), list(gc.callbacks))
        self.trace = (sys.gettrace(), sys.getprofile())
        self.numpy = _numpy_state()
        self.decimal = _decimal_context()
        self.logging = _logging_state()

    def findings(self, who: Any) -> list[str]:
        """Hooks that would let the code run inside the judge: a sentence each."""
        found = []
        if sys.gettrace() is not self.trace[0]:
            found.append(f"a trace function was installed with sys.settrace{who(sys.gettrace())}")
        if sys.getprofile() is not self.trace[1]:
            found.append(f"a profile function was installed with sys.setprofile{who(sys.getprofile())}")
        added = [c for c in gc.callbacks if not any(c is d for d in self.gc[2])]
        if added:
            found.append(f"a callback was added to gc.callbacks{who(added[0])}")
        return found

    def restore(self) -> None:
        """Put everything back as it was before the run."""
        if sys.gettrace() is not self.trace[0]:
            sys.settrace(self.trace[0])
        if sys.getprofile() is not self.trace[1]:
            sys.setprofile(self.trace[1])
        gc.callbacks[:] = self.gc[2]
        (gc.enable if self.gc[0] else gc.disable)()
        gc.set_threshold(*self.gc[1])
        sys.setrecursionlimit(self.recursion_limit)
        if self.int_digits is not None:
            sys.set_int_max_str_digits(self.int_digits)
        if os.getcwd() != self.cwd:
            os.chdir(self.cwd)
        _restore_environ(self.environ)
        warnings.filters[:] = self.filters  # type: ignore[index]  # a list at run time
        warnings._filters_mutated()  # type: ignore[attr-defined]  # drop the registries' stale verdicts
        random.setstate(self.random)
        _restore_numpy(self.numpy)
        _restore_decimal(self.decimal)
        _restore_logging(self.logging)


def _restore_environ(saved: dict[str, str]) -> None:
    tz = os.environ.get("TZ")
    for key in [k for k in os.environ if k not in saved]:
        del os.environ[key]
    for key, value in saved.items():
        if os.environ.get(key) != value:
            os.environ[key] = value
    if os.environ.get("TZ") != tz and hasattr(time, "tzset"):
        time.tzset()


def _numpy_state() -> dict[str, Any] | None:
    np = sys.modules.get("numpy")
    if np is None:
        return None
    state = {"err": np.geterr(), "call": np.geterrcall(), "print": np.get_printoptions()}
    if "numpy.random" in sys.modules:
        state["random"] = np.random.get_state()
    return state


def _restore_numpy(saved: dict[str, Any] | None) -> None:
    if saved is None:
        return
    np = sys.modules["numpy"]
    np.seterr(**saved["err"])
    np.seterrcall(saved["call"])
    if np.get_printoptions() != saved["print"]:
        np.set_printoptions(**saved["print"])
    if "random" in saved:
        np.random.set_state(saved["random"])


def _decimal_context() -> Any:
    decimal = sys.modules.get("decimal")
    return decimal.getcontext().copy() if decimal is not None else None


def _restore_decimal(saved: Any) -> None:
    if saved is not None:
        sys.modules["decimal"].setcontext(saved)


def _logging_state() -> tuple[Any, list[Any], int, int] | None:
    logging = sys.modules.get("logging")
    if logging is None:
        return None
    root = logging.root
    return root, list(root.handlers), root.level, root.manager.disable


def _restore_logging(saved: tuple[Any, list[Any], int, int] | None) -> None:
    if saved is None:
        return
    root, handlers, level, disable = saved
    root.handlers[:] = handlers
    root.setLevel(level)
    root.manager.disable = disable
