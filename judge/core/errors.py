"""The judge's exceptions and named exit codes; the CLI has one handler for all of them."""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    """What ``python -m judge`` exits with."""

    OK = 0  # everything passed (or the command did what was asked)
    FAILED = 1  # something failed: a test, a check, a graded submission
    USAGE = 2  # the command line, a file or the set-up is wrong; nothing was judged
    INTERNAL = 70  # a bug in the judge (EX_SOFTWARE): the forked child's exit code for it
    INTERRUPTED = 130  # Ctrl-C


class JudgeError(Exception):
    """An error the user can fix: printed as ``error: MESSAGE`` without a traceback."""

    exit_code = ExitCode.USAGE


class UsageError(JudgeError):
    """The command line asks for something that cannot be done (a missing folder, a bad option)."""
