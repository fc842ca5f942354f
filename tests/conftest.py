"""Shared fixtures for the judge's own tests, and the markers of the test tiers.

Markers (registered in pyproject.toml): ``browser`` (Chromium through Playwright: everything under
tests/browser/ and test_bench_browser.py), ``pyodide`` (Pyodide under Node.js: tests/parity/ but the
pure comparison tests), both set here by path; ``slow`` (sweeps that judge every problem or every
solution), set by the test modules themselves. The fast tier is ``python -m pytest -m "not slow and not
browser and not pyodide"``; the full suite (CI, the README) is ``python -m pytest``.
"""

from __future__ import annotations

import functools
import io
import os
import signal
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
FIXTURE_PROBLEMS = FIXTURES / "problems"
SOLUTIONS = FIXTURES / "solutions"
PROBLEMS = ROOT / "problems"


def _keep_byte_code_in_the_cache() -> None:
    """Let this session and every Python it starts keep compiled modules, under .pytest_cache/pycache.

    Where the environment sets PYTHONDONTWRITEBYTECODE (this project's machines do), each xdist worker
    rewrote the asserts of every test module again (some 5 s a worker, before any test) and each
    ``python -m judge`` the tests start compiled the judge again (some 0.4 s). The byte code goes under
    pytest's cache folder, not beside the sources (``pytest --cache-clear`` removes it); a prefix the
    environment already names is kept. Learner processes are not affected: they run with ``-I -B``.
    """
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    prefix = os.environ.setdefault("PYTHONPYCACHEPREFIX", str(ROOT / ".pytest_cache" / "pycache"))
    sys.dont_write_bytecode = False
    sys.pycache_prefix = prefix


_keep_byte_code_in_the_cache()  # before the test modules are imported, and before xdist starts its workers


def normalise(result: dict) -> dict:
    """A Result dict with durations zeroed: the only field allowed to differ between runs."""
    result = dict(result, duration=0.0)
    result["tests"] = [dict(t, duration=0.0) for t in result["tests"]]
    return result


# A terminal starts a command with Ctrl-C's default disposition; a suite started in the background (``pytest &``
# in a script, nohup) ignores SIGINT, every process it starts inherits that, and CPython leaves an ignored SIGINT
# ignored: the judge would rightly not hear the test's Ctrl-C (every lost Ctrl-C of the full runs before
# 2026-12-04). The judge is started through this exec, which gives it the default back, as a terminal would.
FROM_A_TERMINAL = [sys.executable, "-c", "import os, signal, sys\nsignal.signal(signal.SIGINT, signal.SIG_DFL)\n"
                   "os.execv(sys.argv[1], sys.argv[1:])"]


def run_cli(*args: str, cwd: Path | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    """Run ``python -m judge ARGS`` in a real subprocess (for what only a new interpreter shows: the entry
    point, signals, the environment it starts with); :func:`judge_cli` does the rest in this process."""
    env = dict(os.environ, NO_COLOR="1", PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "judge", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=timeout)


def judge_cli(*args: str, cwd: Path | None = None, timeout: float = 300,
              env: dict[str, str | None] | None = None) -> subprocess.CompletedProcess:
    """``judge ARGS`` through :func:`judge.commands.cli.main` in this process, as :func:`run_cli` reports it.

    What a subprocess would print to its descriptors 1 and 2 is captured at the descriptor level (the
    forked test processes write there too); the exit code is ``main``'s return value (argparse's exit
    included). Saves the interpreter's start, the judge's imports and the sandbox level's probe (chosen
    once per process) on every call: most of what a CLI test cost. ``env``: variables set (None: unset)
    for the call. ``timeout`` is accepted for :func:`run_cli`'s signature (the judge's own limits stop
    runaway runs).
    """
    from judge.commands.cli import main

    del timeout
    changes = {"NO_COLOR": "1", **(env or {})}
    previous_cwd, previous_env = os.getcwd(), {name: os.environ.get(name) for name in changes}
    _set_environment(changes)
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        sys.stdout.flush()
        sys.stderr.flush()
        saved = os.dup(1), os.dup(2)
        streams = sys.stdout, sys.stderr
        os.dup2(out.fileno(), 1)
        os.dup2(err.fileno(), 2)
        sys.stdout, sys.stderr = _fd_streams()
        try:
            if cwd is not None:
                os.chdir(cwd)
            try:
                code = main(list(args))
            except SystemExit as exc:  # argparse's usage errors and --help
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        finally:
            os.chdir(previous_cwd)
            for stream in (sys.stdout, sys.stderr):
                stream.flush()
            sys.stdout, sys.stderr = streams
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            os.close(saved[0])
            os.close(saved[1])
            _set_environment(previous_env)
        out.seek(0)
        err.seek(0)
        stdout, stderr = (f.read().decode("utf-8", "replace") for f in (out, err))
    return subprocess.CompletedProcess(["judge", *args], code, stdout, stderr)


def _set_environment(values: dict[str, str | None]) -> None:
    for name, value in values.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


@functools.cache
def _fd_streams() -> tuple[io.TextIOWrapper, io.TextIOWrapper]:
    """Text streams over descriptors 1 and 2 as they are at each write (never closed: a module may keep one)."""
    return tuple(io.TextIOWrapper(io.FileIO(fd, "w", closefd=False), encoding="utf-8", write_through=True)
                 for fd in (1, 2))  # type: ignore[return-value]


BROWSER_FILES = {"test_bench_browser.py"}
NODE_FREE_PARITY_FILES = {"test_compare.py"}  # tests/parity/ modules that do not need Node.js
# pytest-xdist (``-n 2 --dist loadgroup`` in pyproject.toml): the tests of these modules run in one
# worker, where their session or module fixtures (a site build, a browser, a harness run) are made once.
# test_parity.py and test_hints.py are not grouped: their fixtures judge through tests/judged.py, whose
# lock per Result lets both workers share a sweep.
UNGROUPED = {"test_parity.py"}
# Other modules whose module or session fixtures do work a second worker would do again (judging every
# problem through the command line, building a wheel or a bundle): each runs in one worker. The export
# tests join the user-level ones, which use their Gradescope bundle (a session fixture, built once).
SHARED_FIXTURE_GROUPS = {"test_verdict_language.py": "verdict-language", "test_mutants.py": "mutants",
                         "test_packaging.py": "packaging", "test_formats_platforms.py": "formats-platforms",
                         "test_export.py": "user-level"}


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads the xdist_group marks
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        relative = item.path.relative_to(ROOT / "tests") if item.path.is_relative_to(ROOT / "tests") else item.path
        if relative.parts[:1] == ("browser",) or relative.name in BROWSER_FILES:
            item.add_marker(pytest.mark.browser)
            item.add_marker(pytest.mark.xdist_group("browser"))
        elif relative.parts[:1] == ("parity",) and relative.name not in NODE_FREE_PARITY_FILES:
            item.add_marker(pytest.mark.pyodide)
            if relative.name not in UNGROUPED:
                item.add_marker(pytest.mark.xdist_group(relative.stem))
        elif relative.name in SHARED_FIXTURE_GROUPS:
            item.add_marker(pytest.mark.xdist_group(SHARED_FIXTURE_GROUPS[relative.name]))


def pytest_sessionfinish(session: pytest.Session) -> None:
    if not hasattr(session.config, "workerinput"):  # once, in the controller of an xdist run
        from tests.judged import prune

        prune()


@pytest.fixture
def fixture_problem():
    from judge.core.problem import load_problem
    return load_problem(FIXTURE_PROBLEMS / "fx-add")


def folder_job(folder: Path | str, source: str, include_secret: bool = False, time_limit: float | None = None,
               label: str = ""):
    """A :class:`judge.engines.Job` for the problem folder at ``folder`` (loaded as published)."""
    from judge.core.problem import load_problem
    from judge.engines import Job

    return Job(load_problem(folder, published=True), source=source, include_secret=include_secret,
               time_limit=time_limit, label=label)


def judge_isolated(job, sandbox=None):
    """``job`` judged in a fresh test process of the native engine (its Result; never raises for learner faults)."""
    from judge.engines.native import judge_many

    return judge_many([job], sandbox=sandbox)[0]


@pytest.fixture
def ctrl_c_as_in_a_terminal():
    """SIGINT's handler as a program started from a terminal has it, even when the suite runs in the
    background (where SIGINT is ignored); restored after. For tests that press Ctrl-C in this process."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


@pytest.fixture(autouse=True)
def ctrl_c_as_found(request: pytest.FixtureRequest):
    """Each test leaves SIGINT's handler and mask as it found them, and a test that changed them is named.

    Every process a test starts inherits them: a SIGINT ignored or blocked in a worker made a later test's
    ``judge grade`` deaf to its Ctrl-C (test_user_level's interrupted run, in full runs only)."""
    handler = signal.getsignal(signal.SIGINT)
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, []) if hasattr(signal, "pthread_sigmask") else None
    yield
    if signal.getsignal(signal.SIGINT) is not handler:
        warnings.warn(f"{request.node.nodeid} left SIGINT's handler changed: restored", stacklevel=2)
        signal.signal(signal.SIGINT, handler)
    if mask is not None and signal.pthread_sigmask(signal.SIG_BLOCK, []) != mask:
        warnings.warn(f"{request.node.nodeid} left SIGINT's mask changed: restored", stacklevel=2)
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)


def rendered_markdown(markdown: str) -> str:
    """The HTML a CommonMark renderer with tables (as GitHub's) makes of ``markdown``, raw HTML allowed: what a
    platform or a viewer could show of the judge's Markdown outputs."""
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark", {"html": True}).enable("table").render(markdown)
