"""A pytest plugin that records where the judge's own test suite spends its time (``python -m bench.suite``).

Loaded with ``-p tests.suite_profile``; it writes nothing unless ``PP_JUDGE_SUITE_PROFILE`` names a
file. Each test (set-up, call and tear-down together) appends one JSON line to that file: its node id,
the pytest-xdist worker that ran it, when it started (seconds since the epoch), its wall time, and
the CPU time of the worker and of the processes it started and waited for (the judge's test and
learner processes, Node.js). A process a test starts but does not wait for (Chromium, which
Playwright keeps for the session) is not in its CPU time. Appends of one line are atomic, so the
workers share the file.
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


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    path = os.environ.get(ENVIRONMENT)
    if not path:
        yield
        return
    started, wall, cpu = time.time(), time.monotonic(), _cpu_seconds()
    yield
    record = {"id": item.nodeid, "worker": os.environ.get("PYTEST_XDIST_WORKER", "main"), "start": started,
              "wall": time.monotonic() - wall, "cpu": _cpu_seconds() - cpu}
    with open(path, "a", encoding="utf-8") as out:
        out.write(json.dumps(record) + "\n")
