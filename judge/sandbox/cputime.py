"""CPU time of a job's processes, read from /proc: the clock time limits count (natively).

A busy grader must not fail correct work: wall-clock time grows with the machine's load, CPU time
does not. So a job's limit and each test's limit count the CPU time of the job's processes (the
test process, the learner processes it started and whatever those started: the test process is
their subreaper, so a daemon that double-forked out of the learner's process group stays in its
tree), as Kattis and DOMjudge do. Not every process of the job's identity: a named user's
processes may include others' (and a zombie of an earlier job keeps its CPU time until reaped).
Wall-clock time is only a generous backstop (:data:`judge.sandbox.levels.WALL_BACKSTOP` times the
limit). Processes that have ended count
through their parent's ``cutime``/``cstime`` once reaped.

Linux only; elsewhere (no /proc) :func:`available` is False and callers fall back to wall-clock.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def available() -> bool:
    """Whether CPU time can be read for other processes here."""
    return os.path.isfile("/proc/self/stat")


@dataclass(frozen=True)
class _Process:
    pid: int
    parent: int
    uid: int
    seconds: float  # its own CPU time and that of its reaped children


def snapshot() -> list[_Process]:
    """Every process's parent, owner and CPU time, at one moment."""
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            process = _read(int(name))
            if process is not None:
                found.append(process)
    return found


def _read(pid: int) -> _Process | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            data = handle.read()
        uid = os.stat(f"/proc/{pid}").st_uid
    except OSError:
        return None  # ended meanwhile
    fields = data[data.rfind(b")") + 2:].split()  # after the command name, which may hold spaces
    try:
        parent = int(fields[1])
        ticks = sum(int(value) for value in fields[11:15])  # utime stime cutime cstime
    except (IndexError, ValueError):
        return None
    return _Process(pid, parent, uid, ticks / _TICKS)


def tree_seconds(root: int) -> float:
    """CPU seconds used so far by ``root`` and everything below it, read by following each process's
    children (a few files, not the whole of /proc: the per-test timer reads it several times a second)."""
    total, stack, seen = 0.0, [root], set()
    while stack:
        pid = stack.pop()
        if pid in seen:
            continue
        seen.add(pid)
        process = _read(pid)
        if process is None:
            continue
        total += process.seconds
        try:
            for task in os.listdir(f"/proc/{pid}/task"):
                with open(f"/proc/{pid}/task/{task}/children", "rb") as handle:
                    stack.extend(int(child) for child in handle.read().split())
        except OSError:
            if pid == root and not os.path.exists(f"/proc/{pid}/task/{pid}/children"):
                return job_seconds(root)  # a kernel without the children files: the whole of /proc
    return total


def job_seconds(root: int, processes: list[_Process] | None = None) -> float:
    """CPU seconds used so far by the process ``root`` and everything below it (from one snapshot)."""
    processes = snapshot() if processes is None else processes
    children: dict[int, list[_Process]] = {}
    for process in processes:
        children.setdefault(process.parent, []).append(process)
    counted: set[int] = set()
    total = 0.0
    stack = [p for p in processes if p.pid == root]
    while stack:
        process = stack.pop()
        if process.pid in counted:
            continue
        counted.add(process.pid)
        total += process.seconds
        stack.extend(children.get(process.pid, ()))
    return total
