"""Native isolation: judge each problem in its own child process with limits.

The child (:mod:`judge._child`) runs in a new session (its own process group) with a memory limit
(POSIX ``RLIMIT_AS``) and a size limit on files it writes; the parent enforces the wall-clock limit
and kills the whole process group on timeout and after every run, so nothing the learner started
survives. The Result comes back on a private pipe with a per-run token; stdout is discarded.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from .problem import Problem
from .result import Result

STARTUP_ALLOWANCE = 2.0  # seconds for the child interpreter to start, on top of the time limit
_PACKAGE_ROOT = str(Path(__file__).resolve().parent.parent)


@dataclass
class Job:
    """One learner file to judge against one problem."""

    problem: Problem
    source_path: Path
    include_secret: bool = True
    keyword: str | None = None
    time_limit: float | None = None
    memory_limit: int | None = None


def judge_isolated(job: Job) -> Result:
    """Judge ``job`` in a fresh child process and return its Result (never raises for learner faults)."""
    problem = job.problem
    try:
        source = Path(job.source_path).read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return Result.error(problem.id, f"{job.source_path}: cannot be read as UTF-8 text ({exc})")
    token = secrets.token_hex(16)
    root = tempfile.mkdtemp(prefix=f"judge-{problem.id}-")
    try:
        return _run_child(job, problem, source, token, root)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _run_child(job: Job, problem: Problem, source: str, token: str, root: str) -> Result:
    time_limit = job.time_limit or problem.time_limit
    read_end, write_end = os.pipe()
    try:
        process = subprocess.Popen(
            [sys.executable, "-m", "judge._child"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE, pass_fds=(write_end,), start_new_session=True, env=_child_env(),
            cwd=str(problem.path),
        )
    finally:
        os.close(write_end)
    channel = _Reader(os.fdopen(read_end, "rb"))
    errors = _Reader(process.stderr, keep_last=4096)
    payload = {"fd": write_end, "token": token, "problem_dir": str(problem.path),
               "source": source, "root": root, "include_secret": job.include_secret,
               "keyword": job.keyword, "memory_limit": job.memory_limit or problem.memory_limit}
    _send(process, payload)
    timed_out = False
    try:
        process.wait(timeout=time_limit + STARTUP_ALLOWANCE)
    except subprocess.TimeoutExpired:
        timed_out = True
    _kill_group(process)
    channel.join(2.0)
    errors.join(1.0)
    if timed_out:
        return Result.timeout(problem.id, time_limit)
    return _parse(problem, channel.data, token, process.returncode, errors.data)


def judge_many(jobs: list[Job], parallel: int = 1) -> list[Result]:
    """Judge several jobs, ``parallel`` at a time; results in the order of ``jobs``."""
    if parallel <= 1 or len(jobs) <= 1:
        return [judge_isolated(job) for job in jobs]
    with ThreadPoolExecutor(max_workers=parallel) as pool:
        return list(pool.map(judge_isolated, jobs))


class _Reader(threading.Thread):
    """Drain a pipe in the background so a chatty child can never block on a full pipe."""

    def __init__(self, stream, keep_last: int | None = None) -> None:
        super().__init__(daemon=True)
        self.stream, self.keep_last, self.data = stream, keep_last, b""
        self.start()

    def run(self) -> None:
        chunks = []
        size = 0
        with self.stream:
            while block := self.stream.read(65536):
                chunks.append(block)
                size += len(block)
                if self.keep_last and size > 2 * self.keep_last:
                    chunks, size = [b"".join(chunks)[-self.keep_last:]], self.keep_last
        data = b"".join(chunks)
        self.data = data[-self.keep_last:] if self.keep_last else data


def _send(process: subprocess.Popen, payload: dict) -> None:
    try:
        process.stdin.write((json.dumps(payload) + "\n").encode())
        process.stdin.close()
    except (BrokenPipeError, OSError):
        pass


def _child_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([_PACKAGE_ROOT] + [p for p in [env.get("PYTHONPATH")] if p])
    env.update(PYTHONDONTWRITEBYTECODE="1", PYTHONHASHSEED="0", OPENBLAS_NUM_THREADS="1",
               OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", PYTEST_DISABLE_PLUGIN_AUTOLOAD="1",
               PYTHONIOENCODING="utf-8")
    return env


def _kill_group(process: subprocess.Popen) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    process.wait()


def _parse(problem: Problem, data: bytes, token: str, returncode: int, stderr: bytes) -> Result:
    head, _, body = data.partition(b"\n")
    if data and head.decode(errors="replace") == token:
        try:
            return Result.from_dict(json.loads(body))
        except (ValueError, KeyError, TypeError) as exc:
            return Result.error(problem.id, f"internal error: the judge's report could not be read ({exc})")
    return Result.error(problem.id, _early_exit_message(returncode, stderr))


def _early_exit_message(returncode: int, stderr: bytes) -> str:
    if returncode == 0:
        reason = ("the code ended the judge's process early (os._exit() or similar) before the tests "
                  "finished; a solution must return, not exit")
    elif returncode < 0:
        name = signal.Signals(-returncode).name if -returncode in signal.valid_signals() else str(-returncode)
        hint = " (most often: the memory limit)" if name == "SIGKILL" else ""
        reason = f"the judge's process was killed by {name}{hint} before the tests finished"
    else:
        reason = (f"the judge's process ended with exit code {returncode} before the tests finished "
                  "(os._exit() in the code, or a crash)")
    tail = stderr.decode(errors="replace").strip().splitlines()[-3:]
    if "MemoryError" in "\n".join(tail):
        reason = "the code ran out of memory (memory limit) before the tests finished"
    return reason + ("\n" + "\n".join(tail) if tail and returncode != 0 else "")
