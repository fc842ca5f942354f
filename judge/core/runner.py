"""The runner: judge one piece of learner code against one problem, in this process.

This is the one function both engines call: the native child process (``judge.engines.native_child``) and the
browser's Web Worker (through :func:`judge_source_json`). It uses only the standard library and
pytest, never threads, signals or subprocesses, so it runs unchanged in Pyodide. Time and memory
limits are the caller's job (the native parent kills the child; the worker interrupts Pyodide).
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import pytest

from . import guard, integrity
from .collector import Collector, describe_exception, trim_traceback
from .problem import Problem, load_problem
from .result import Result, TestResult, cap_output
from .scoring import score_result
from .workdir import make_workdir, remove_workdir


def judge_source(problem_dir: str | Path | Problem, source: str, *, include_secret: bool = False,
                 keyword: str | None = None, workdir: str | Path | None = None,
                 plugins: Sequence[object] = ()) -> Result:
    """Judge ``source`` (the text of the learner's entry file) against the problem's tests.

    ``workdir`` is the folder under which a fresh work directory is made (default: the system
    temp folder); the work directory is removed afterwards. ``plugins`` are extra pytest plugins
    (the native engine's per-test timer).
    """
    problem = problem_dir if isinstance(problem_dir, Problem) else load_problem(problem_dir, published=True)
    started = time.perf_counter()
    work = make_workdir(problem, source, include_secret, root=workdir)
    try:
        result = run_in_workdir(problem, work, source, include_secret=include_secret, keyword=keyword,
                                plugins=plugins)
    finally:
        remove_workdir(work)
    result.duration = round(time.perf_counter() - started, 4)
    return result


def judge_source_json(problem_dir: str, source: str, include_secret: bool = False) -> str:
    """The browser engine's entry point: :func:`judge_source` under the guard, as JSON text.

    The run gets a private temporary folder (also pytest's temp folder) and the guard of
    :mod:`judge.core.guard` is active for its duration, as in a native child, so writing outside the
    work directory fails the same way in both engines.
    """
    root = tempfile.mkdtemp(prefix="judge-run-")
    previous = tempfile.tempdir
    tempfile.tempdir = root
    guard.activate(root)
    try:
        result = judge_source(problem_dir, source, include_secret=include_secret, workdir=root)
        if guard.active_root() != os.path.realpath(root):
            result = Result.error(result.problem, _GUARD_TAMPERED, result.max_points)
        return integrity.engine_note(result.to_json())
    finally:
        guard.deactivate()
        tempfile.tempdir = previous
        shutil.rmtree(root, ignore_errors=True)


def run_in_workdir(problem: Problem, workdir: Path, source: str, *, include_secret: bool,
                   keyword: str | None = None, plugins: Sequence[object] = ()) -> Result:
    """Run the tests already laid out in ``workdir`` and build the Result."""
    error = syntax_error(problem.entry, source)
    if error:
        return Result.error(problem.id, error, max_points=problem.points or 0.0)
    test_names = [f"tests/{p.parent.name}/{p.name}" for p in problem.test_files(include_secret)]
    watch = integrity.Watch(problem, workdir)  # snapshots taken before any of the learner's code runs
    check, finish = watch.check, watch.finish  # held locally: the learner's code cannot swap them
    try:
        with _isolated_imports(workdir), _working_directory(workdir):
            error = import_learner_module(problem, workdir)
            tampered = check(final=bool(error))  # a change made at import and undone later still counts
            if not error and not tampered:
                os.chdir(workdir)  # pytest finds the tests from here, wherever the import went
                collector, exit_code = _run_pytest(workdir, test_names, keyword, plugins)
                tampered = check(final=True)
    finally:
        finish()  # the browser's interpreter lives on: the next run starts clean
    worth = problem.points or 0.0
    if tampered:
        return Result.error(problem.id, integrity.message(tampered), worth)
    if error:
        return Result.error(problem.id, error, worth)
    result = _build_result(problem, collector, exit_code, workdir, keyword)
    return score_result(result, collector.weights, problem.points, problem.scoring)


def syntax_error(entry: str, source: str) -> str:
    """A one-paragraph message if ``source`` does not compile, else an empty string."""
    try:
        compile(source, entry, "exec")
    except SyntaxError as exc:
        where = f"{entry}, line {exc.lineno}" if exc.lineno else entry
        text = (exc.text or "").rstrip("\n")
        pointer = ""
        if text.strip() and exc.offset:
            stripped = text.lstrip()
            pointer = f"\n    {stripped}\n    {' ' * max(0, exc.offset - 1 - (len(text) - len(stripped)))}^"
        return f"{where}: SyntaxError: {exc.msg}{pointer}"
    except ValueError as exc:  # e.g. null bytes in the source
        return f"{entry}: cannot be compiled: {exc}"
    return ""


def import_learner_module(problem: Problem, workdir: Path) -> str:
    """Import the learner's module once, output captured; a message if that fails, else ''."""
    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            __import__(problem.module_name)
    except SystemExit as exc:
        return (f"{problem.entry} called exit() / sys.exit({exc.code!r}) while being imported; "
                "remove the call at module level (a solution defines functions, it does not exit)")
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # noqa: BLE001 - any failure at import is the learner's to see
        frames = [f for f in trim_traceback(exc.__traceback__, workdir) if f.file == problem.entry]
        where = f" at line {frames[-1].line}" if frames else ""
        code = f"\n    {frames[-1].code}" if frames and frames[-1].code else ""
        detail = describe_exception(exc, exc.__traceback__, workdir)
        return f"{problem.entry} raised an exception while being imported{where}: {detail}{code}"
    return ""


def _run_pytest(workdir: Path, test_names: list[str], keyword: str | None,
                plugins: Sequence[object] = ()) -> tuple[Collector, int]:
    collector = Collector(workdir)
    args = [*test_names, "-c", str(workdir / "pytest.ini"), "--rootdir", str(workdir),
            "--confcutdir", str(workdir), "--continue-on-collection-errors", "-p", "no:cacheprovider",
            "-p", "no:pastebin", "-p", "no:doctest", "-p", "no:debugging",
            "-W", "ignore::pytest.PytestAssertRewriteWarning",
            "--tb=native"]  # pytest's own long report is never shown; its native style is the cheapest
    if keyword:
        args += ["-k", keyword]
    with _plugin_autoload_disabled(), contextlib.redirect_stdout(io.StringIO()):
        exit_code = int(pytest.main(args, plugins=[collector, *plugins]))
    return collector, exit_code


def _build_result(problem: Problem, collector: Collector, exit_code: int, workdir: Path,
                  keyword: str | None) -> Result:
    tests: list[TestResult] = list(collector.collect_errors)
    for nodeid in collector.collected:
        tests.append(_relative(collector.result_for(nodeid), workdir))
    result = Result(problem=problem.id, status="passed", tests=tests)
    if collector.weight_errors:
        result.status = "error"
        result.message = "a test's points marker is invalid: " + "; ".join(collector.weight_errors[:3])
    elif collector.collect_errors:
        result.status = "error"
        result.message = collector.collect_errors[0].message
    elif exit_code == pytest.ExitCode.INTERRUPTED:
        result.status, result.message = "error", "the test session was interrupted (KeyboardInterrupt or pytest.exit)"
    elif not tests:
        result.status = "error"
        result.message = f"no test matches -k {keyword!r}" if keyword else "no tests were collected"
    elif any(t.outcome in ("failed", "error") for t in tests):
        result.status = "failed"
    return result


_GUARD_TAMPERED = "the code switched off the judge's guard while running; no verdict given"
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def _relative(test: TestResult, workdir: Path) -> TestResult:
    """Remove the work directory's absolute path from messages and output (engine-independent)."""
    prefix = str(workdir) + os.sep
    test.message = _ADDRESS.sub(" at 0x...", test.message.replace(prefix, ""))
    test.stdout = cap_output(test.stdout.replace(prefix, ""))
    test.stderr = cap_output(test.stderr.replace(prefix, ""))
    return test


@contextlib.contextmanager
def _isolated_imports(workdir: Path):
    """Put ``workdir`` first on sys.path and forget every module imported from it afterwards."""
    saved_path = list(sys.path)
    sys.path.insert(0, str(workdir))
    _forget_modules(workdir)
    try:
        yield
    finally:
        sys.path[:] = saved_path
        _forget_modules(workdir)


def _forget_modules(workdir: Path) -> None:
    local = {p.stem for p in workdir.rglob("*.py")}
    root = str(workdir)
    for name, module in list(sys.modules.items()):
        file = getattr(module, "__file__", None) or ""
        if name in local or file.startswith(root) or "/judge-" in file and "/tmp" in file:
            del sys.modules[name]


@contextlib.contextmanager
def _working_directory(path: Path):
    previous = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(previous)


@contextlib.contextmanager
def _plugin_autoload_disabled():
    """Installed pytest plugins must not change verdicts (and Pyodide has none)."""
    previous = os.environ.get("PYTEST_DISABLE_PLUGIN_AUTOLOAD")
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    try:
        yield
    finally:
        if previous is None:
            del os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"]
        else:
            os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = previous
