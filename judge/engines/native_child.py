"""The test process of native grading: judge one job and report on a private pipe.

Used two ways with the same code: forked from the judge's process (the fast path on POSIX, where
pytest is already imported) or started as ``python -m judge.engines.native_child`` with the job as
JSON on stdin. Either way it runs in its own session (process group), runs
:func:`judge.core.runner.judge_source` with the tests here and the learner's module in a learner
process at the job's sandbox level (:class:`judge.sandbox.process.ProcessLearner`), and writes
``<token>\\n<Result JSON>`` to the pipe. Only trusted code runs in this process; its stdout is not
the channel, and the token (known only to the parent and this process) must come back with it.
"""

from __future__ import annotations

import functools
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable

from ..core.errors import ExitCode


def run_job(job: dict, channel_fd: int) -> None:
    """Judge ``job`` in this (test) process, report on ``channel_fd`` and exit. Never returns."""
    try:
        channel = os.fdopen(channel_fd, "w", encoding="utf-8")
        token = job.pop("token")
        from ..core.runner import judge_source
        from ..sandbox import levels, standin
        from ..sandbox.process import JobSpace, ProcessLearner
        from .test_timer import TestTimer

        _adopt_orphans()
        root = job["root"]
        tempfile.tempdir = root  # pytest's capture files and tmp_path live in the private folder too
        os.environ["TMPDIR"] = root
        sandbox = levels.Sandbox.from_dict(job["sandbox"])
        memory = job["memory_limit"]
        ids = job["space"]["ids"]
        space = JobSpace(job["space"]["folder"], (ids[0], ids[1]) if ids else None)  # the judge ends it

        def start(spec: standin.LearnerSpec, side: standin.TestSide) -> ProcessLearner:
            spec.memory_limit = memory
            return ProcessLearner(spec, sandbox, side, space)

        result = judge_source(job.get("problem") or job["problem_dir"], job["source"],
                              learner=functools.partial(standin.session, start=start),
                              include_secret=job["include_secret"], keyword=job["keyword"], workdir=root,
                              plugins=[TestTimer(job["test_time_limit"])], lang=job.get("lang"),
                              before_tests=_gate(job.get("gate", -1)))
        channel.write(token + "\n" + result.to_json())
        channel.flush()
    except BaseException:  # noqa: BLE001 - reported to the parent through stderr and the exit code
        import traceback
        traceback.print_exc()
        os._exit(ExitCode.INTERNAL)
    os._exit(0)  # skip atexit handlers (the parent's, inherited by a fork)


def _gate(fd: int) -> Callable[[], float] | None:
    """For a job prepared ahead (``fd`` >= 0): wait until the judge lets its tests start, and say how long
    that took. The learner's process has started by then; no test has run. A judge that went away
    (end of file) ends the job."""
    if fd < 0:
        return None

    def wait() -> float:
        started = time.monotonic()
        try:
            go = os.read(fd, 1)
        finally:
            os.close(fd)
        if go != b"g":
            os._exit(ExitCode.INTERNAL)
        return time.monotonic() - started

    return wait


def _adopt_orphans() -> None:
    """Become the subreaper of what this process starts: a learner's process that outlives its parent
    (bubblewrap's, killed with it; a daemon) is adopted here rather than by init, so its CPU time
    stays in this job's count (:mod:`judge.sandbox.cputime`) until the job ends."""
    try:
        import ctypes

        ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        pass


def main() -> None:
    job = json.loads(sys.stdin.readline())
    run_job(job, job.pop("fd"))


if __name__ == "__main__":
    main()
