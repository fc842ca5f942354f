"""A pytest plugin that records where the judge's own test suite spends its time (``python -m bench.suite``).

Loaded with ``-p tests.suite_profile``; it writes nothing unless ``PP_JUDGE_SUITE_PROFILE`` names a
file. Each test (set-up, call and tear-down together) appends one JSON line to that file: its node id,
the pytest-xdist worker that ran it, when it started (seconds since the epoch), its wall time, and
the CPU time of the worker and of the processes it started and waited for (the judge's test and
learner processes, Node.js), and the CPU time its still-running descendants used meanwhile
(``descendants``: Chromium and Playwright's driver, which live for the session). Appends of one line
are atomic, so the workers share the file.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator

import pytest

ENVIRONMENT = "PP_JUDGE_SUITE_PROFILE"


def _cpu_seconds() -> float:
    times = os.times()
    return times.user + times.system + times.children_user + times.children_system


def _descendants_cpu_seconds() -> float:
    """CPU time of this process's living descendants and of the children they reaped (a process that
    exits moves its time into its parent's, so no second is counted twice or lost while its parent lives)."""
    parents: dict[int, int] = {}
    ticks: dict[int, int] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", encoding="ascii", errors="replace") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        pid = int(entry.name)
        parents[pid] = int(fields[1])
        ticks[pid] = sum(int(value) for value in fields[11:15])  # utime stime cutime cstime
    mine, frontier = set(), [os.getpid()]
    while frontier:
        parent = frontier.pop()
        children = [pid for pid, ppid in parents.items() if ppid == parent and pid not in mine]
        mine.update(children)
        frontier.extend(children)
    return sum(ticks[pid] for pid in mine) / os.sysconf("SC_CLK_TCK")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    path = os.environ.get(ENVIRONMENT)
    if not path:
        yield
        return
    started, wall, cpu, others = time.time(), time.monotonic(), _cpu_seconds(), _descendants_cpu_seconds()
    yield
    record = {"id": item.nodeid, "worker": os.environ.get("PYTEST_XDIST_WORKER", "main"), "start": started,
              "wall": time.monotonic() - wall, "cpu": _cpu_seconds() - cpu,
              "descendants": _descendants_cpu_seconds() - others}
    with open(path, "a", encoding="utf-8") as out:
        out.write(json.dumps(record) + "\n")
