"""The child side of native grading: judge one problem and report on a private pipe.

Used two ways with the same code: forked from the judge's process (the fast path on POSIX, where
pytest and numpy are already imported) or started as ``python -m judge.engines.native_child`` with the job as
JSON on stdin. Either way it runs in its own session (process group), sets its resource limits,
installs the guard, runs :func:`judge.core.runner.judge_source` and writes ``<token>\\n<Result JSON>``
to the pipe. Standard output is not the channel, so nothing the learner prints can pass for a
verdict, and the token (known only to the parent and this process) must come back with it.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import tempfile

OUTPUT_FILE_LIMIT = 16 * 1024 * 1024  # bytes any one file (including captured output) may reach


def run_job(job: dict, channel_fd: int) -> None:
    """Judge ``job`` in this (child) process, report on ``channel_fd`` and exit. Never returns."""
    try:
        channel = os.fdopen(channel_fd, "w", encoding="utf-8")
        token = job.pop("token")
        _set_limits(job["memory_limit"])
        import numpy  # noqa: F401  loaded before the guard (it loads native code), after the limits

        from ..core import guard
        from ..core.runner import judge_source

        root = job["root"]
        tempfile.tempdir = root  # pytest's capture files and tmp_path live in the private folder too
        os.environ["TMPDIR"] = root
        from .test_timer import TestTimer

        guard.activate(root)
        result = judge_source(job.get("problem") or job["problem_dir"], job["source"],
                              include_secret=job["include_secret"],
                              keyword=job["keyword"], workdir=root,
                              plugins=[TestTimer(job["test_time_limit"])])
        if guard.active_root() != os.path.realpath(root):
            from ..core.runner import _GUARD_TAMPERED, Result
            result = Result.error(result.problem, _GUARD_TAMPERED, result.max_points)
        channel.write(token + "\n" + result.to_json())
        channel.flush()
    except BaseException:  # noqa: BLE001 - reported to the parent through stderr and the exit code
        import traceback
        traceback.print_exc()
        os._exit(70)
    os._exit(0)  # skip atexit handlers and non-daemon threads the learner may have left behind


def _set_limits(memory_mib: int) -> None:
    try:
        import resource
    except ImportError:  # not POSIX: time limit only
        return
    # the limit is headroom on top of what the process already maps (a forked child inherits the
    # judge's numpy and pytest), so a solution gets the same memory however the child was started
    limit = _mapped_bytes() + memory_mib * 1024 * 1024
    for name, value in (("RLIMIT_AS", limit), ("RLIMIT_CORE", 0), ("RLIMIT_FSIZE", OUTPUT_FILE_LIMIT)):
        kind = getattr(resource, name, None)
        if kind is not None:
            try:
                resource.setrlimit(kind, (value, value))
            except (ValueError, OSError):
                pass
    if hasattr(signal, "SIGXFSZ"):
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # writes past the limit fail instead of killing us


def _mapped_bytes() -> int:
    """The process's current virtual size (Linux); 0 where it cannot be read."""
    try:
        with open("/proc/self/statm", encoding="ascii") as handle:
            return int(handle.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def main() -> None:
    job = json.loads(sys.stdin.readline())
    run_job(job, job.pop("fd"))


if __name__ == "__main__":
    main()
