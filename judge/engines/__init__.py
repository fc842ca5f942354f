"""The engines that judge: one interface, ``engine.judge(jobs) -> list[Result]``, three implementations.

- ``native`` (:mod:`.native`): CPython, a test process per job and a sandboxed learner process
  beside it (:mod:`judge.sandbox`), time, memory and output limits, and a per-test timer
  (:mod:`.test_timer`);
- ``pyodide`` (:mod:`.pyodide`): Pyodide under Node.js, booted exactly as the browser boots it
  (``web/js/boot.mjs`` with :mod:`.pyodide_boot`), for ``judge check --pyodide`` and the parity tests;
- the browser: the site's Web Worker, the same boot; it is JavaScript, so it is not in this registry.

Every engine takes the same :class:`Job` and the same time limit (:meth:`Job.limit`), and builds a
Result no run produced (timeout, stop, crash) with :func:`.unfinished.unfinished_result` or
:meth:`judge.core.result.Result.unjudged`.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from ..core.problem import Problem
from ..core.result import Result


@dataclass
class Job:
    """One piece of learner code to judge against one problem."""

    problem: Problem
    source_path: Path | None = None  # the learner's entry file; or None with ``source`` given
    include_secret: bool = True
    keyword: str | None = None  # pytest -k
    time_limit: float | None = None  # overrides the problem's time limit
    memory_limit: int | None = None  # MiB; overrides the problem's (native engine)
    source: str | None = None  # the code itself (class grading reads it from a zip, never writes it out)
    label: str = ""  # how reports name this job
    lang: str | None = None  # the learner's language for the tests' messages (None: the judge's, judge.i18n)
    # caps the run's wall-clock backstop (seconds): what a grading platform allows the whole submission, shared
    # among its jobs, so that code that waits cannot make the platform kill the grading before any result is written
    wall_limit: float | None = None

    def language(self) -> str:
        """The language the tests are told (:mod:`judge.lang`): ``lang``, else the judge's active language."""
        from ..i18n import current_language

        return self.lang or current_language()

    @property
    def limit(self) -> float:
        """The wall-clock limit of the whole run, in seconds: the one timeout policy of every engine."""
        return float(self.time_limit or self.problem.time_limit)

    def code(self) -> str:
        """The learner's code (``source``, else the file at ``source_path`` read as UTF-8)."""
        if self.source is not None:
            return self.source
        return Path(self.source_path or "").read_bytes().decode("utf-8")


class Engine(Protocol):
    """What every engine offers."""

    def judge(self, jobs: Sequence[Job], parallel: int = 1,
              on_result: Callable[[int, Result], None] | None = None) -> list[Result]:
        """Judge ``jobs`` (``parallel`` at a time where the engine can); Results in job order."""
        ...


#: an engine for the problems a command judges (``judge check`` builds its native engine from its options)
EngineFor = Callable[[list[Problem]], Engine]

ENGINES = {"native": "native:NativeEngine", "pyodide": "pyodide:PyodideEngine"}


def get_engine(name: str, **options: object) -> Engine:
    """The engine called ``name`` (one of :data:`ENGINES`), imported on first use; ``options`` go to its
    constructor (the native engine's ``sandbox``)."""
    try:
        module, attribute = ENGINES[name].split(":")
    except KeyError:
        raise ValueError(f"unknown engine {name!r} (known: {', '.join(ENGINES)})") from None
    return getattr(importlib.import_module(f"{__name__}.{module}"), attribute)(**options)
