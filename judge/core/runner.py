"""The runner: judge one piece of learner code against one problem, the tests in this process.

This is the one function both engines call: the native test process (``judge.engines.native_child``)
and the browser's Web Worker (through :mod:`judge.engines.pyodide_boot`). The tests run here, with
pytest; the learner's module runs on its own side of the boundary (:mod:`judge.sandbox`), which the
engine provides as a :data:`LearnerFactory`, and the tests import a stand-in for it. The runner uses
only the standard library and pytest, never threads, signals or subprocesses, so it runs unchanged
in Pyodide. Time limits are the engine's job (a per-test timer and the whole run's limit natively;
the worker interrupts Pyodide).
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType
from typing import Protocol

import pytest

from ..lang import tests_language
from .collector import Collector
from .problem import Objective, Problem, load_problem
from .protocol import BoundaryError, StartTimedOut
from .result import Result, TestResult, cap_output, visible_controls
from .scoring import score_result
from .workdir import make_workdir, remove_workdir


class LearnerSession(Protocol):
    """The test side of the boundary for one run (an engine makes it: :data:`LearnerFactory`)."""

    @property
    def module(self) -> ModuleType:
        """What ``import <entry module>`` gives the tests."""
        ...

    @property
    def plugin(self) -> object:
        """A pytest plugin of the session (objects lent to a test are revoked after it)."""
        ...

    def start(self) -> str:
        """Start the learner's side; its import error message, or '' when the module imported."""
        ...

    def stop(self) -> None:
        ...


#: ``factory(problem, source, workdir)``: the session of one run; the workdir holds the tests and the
#: support modules, importable (the session imports the types the problem declares from there)
LearnerFactory = Callable[[Problem, str, Path], LearnerSession]


def judge_source(problem_dir: str | Path | Problem, source: str, *, learner: LearnerFactory,
                 include_secret: bool = False, keyword: str | None = None, workdir: str | Path | None = None,
                 plugins: Sequence[object] = (), lang: str | None = None,
                 before_tests: Callable[[], float] | None = None) -> Result:
    """Judge ``source`` (the text of the learner's entry file) against the problem's tests.

    ``learner`` makes the learner's side (a sandboxed process natively, the same interpreter in the
    browser). ``workdir`` is the folder under which a fresh work directory for the tests is made
    (default: the system temp folder); it is removed afterwards. ``plugins`` are extra pytest plugins
    (the native engine's per-test timer). ``lang`` is the learner's language, which the tests' messages
    may follow (:mod:`judge.lang`; None: English); it is the engine's, never the learner's code's.
    ``before_tests`` is called once the learner's side has started and the tests are collected, before
    the first test runs; the seconds it returns (spent waiting for its turn) are left out of the
    Result's duration.
    """
    problem = (problem_dir if isinstance(problem_dir, Problem)
               else load_problem(problem_dir, published=True, compile_tests=False))
    started = time.perf_counter()
    waited = [0.0]

    def timed() -> None:
        if before_tests is not None:
            waited[0] = before_tests()

    work = make_workdir(problem, include_secret, root=workdir)
    try:
        with tests_language(lang):
            result = run_in_workdir(problem, work, source, learner, include_secret=include_secret,
                                    keyword=keyword, plugins=plugins, before_tests=timed)
    finally:
        remove_workdir(work)
    result.duration = round(time.perf_counter() - started - waited[0], 4)
    return result


def run_in_workdir(problem: Problem, workdir: Path, source: str, learner: LearnerFactory, *,
                   include_secret: bool, keyword: str | None = None, plugins: Sequence[object] = (),
                   before_tests: Callable[[], None] | None = None) -> Result:
    """Run the tests laid out in ``workdir`` against ``source`` on its learner's side, and build the Result."""
    worth = problem.points or 0.0
    error = syntax_error(problem.entry, source)
    if error:
        return Result.error(problem.id, error, max_points=worth)
    test_names = [f"tests/{p.parent.name}/{p.name}" for p in problem.test_files(include_secret)]
    with _isolated_imports(workdir), _working_directory(workdir):
        session = learner(problem, source, workdir)
        try:
            try:
                error = session.start()
            except StartTimedOut as exc:
                return Result.timeout(problem.id, exc.seconds, worth)
            except BoundaryError as exc:
                return Result.error(problem.id, str(exc), worth)
            if error:
                return Result.error(problem.id, error, worth)
            if before_tests is not None:
                plugins = [*plugins, _BeforeTests(before_tests)]
            previous = sys.modules.get(problem.module_name)
            sys.modules[problem.module_name] = session.module
            try:
                collector, exit_code = _run_pytest(workdir, test_names, keyword, [session.plugin, *plugins],
                                                   problem.objectives)
            finally:
                if previous is None:
                    sys.modules.pop(problem.module_name, None)
                else:
                    sys.modules[problem.module_name] = previous
        finally:
            session.stop()
    result = _build_result(problem, collector, exit_code, workdir, keyword)
    return score_result(result, collector.weights, problem)


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


def _run_pytest(workdir: Path, test_names: list[str], keyword: str | None,
                plugins: Sequence[object] = (), objectives: Sequence[Objective] = ()) -> tuple[Collector, int]:
    collector = Collector(workdir, objectives)
    args = [*test_names, "-c", str(workdir / "pytest.ini"), "--rootdir", str(workdir),
            "--confcutdir", str(workdir), "--continue-on-collection-errors", "-p", "no:cacheprovider",
            "-p", "no:pastebin", "-p", "no:doctest", "-p", "no:debugging",
            "-W", "ignore::pytest.PytestAssertRewriteWarning",
            "--tb=native", "-rN"]  # pytest's own reports are never shown (collection errors': the native style)
    if keyword:
        args += ["-k", keyword]
    with _plugin_autoload_disabled(), contextlib.redirect_stdout(io.StringIO()):
        exit_code = int(pytest.main(args, plugins=[collector, *plugins]))
    return collector, exit_code


class _BeforeTests:
    """A pytest plugin that calls a function once collection is done, before the first test runs."""

    def __init__(self, call: Callable[[], None]) -> None:
        self.call = call

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session: pytest.Session) -> None:
        self.call()


def _build_result(problem: Problem, collector: Collector, exit_code: int, workdir: Path,
                  keyword: str | None) -> Result:
    tests: list[TestResult] = [_relative(error, workdir) for error in collector.collect_errors]
    for nodeid in collector.collected:
        tests.append(_relative(collector.result_for(nodeid), workdir))
    result = Result(problem=problem.id, status="passed", tests=tests)
    if collector.weight_errors:
        result.status = "error"
        result.message = "a test's points marker is invalid: " + "; ".join(collector.weight_errors[:3])
    elif collector.objective_errors:
        result.status = "error"
        result.message = "a test is in no objective: " + "; ".join(collector.objective_errors[:3])
    elif collector.collect_errors:
        result.status = "error"
        result.message = collector.collect_errors[0].message
    elif exit_code == pytest.ExitCode.INTERRUPTED:
        result.status, result.message = "error", "the test session was interrupted (KeyboardInterrupt or pytest.exit)"
    elif not tests:
        result.status = "error"
        result.message = f"no test matches -k {keyword!r}" if keyword else "no tests were collected"
    elif any(t.outcome in ("failed", "error", "skipped") for t in tests):
        result.status = "failed"  # a skipped test is not passed: the problem is not solved
    return result


_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def _relative(test: TestResult, workdir: Path) -> TestResult:
    """Remove the work directory's absolute path from messages and output (engine-independent), and
    show their control characters (:func:`visible_controls`)."""
    prefix = str(workdir) + os.sep
    test.message = visible_controls(_ADDRESS.sub(" at 0x...", test.message.replace(prefix, "")))
    test.stdout = cap_output(visible_controls(test.stdout.replace(prefix, "")))
    test.stderr = cap_output(visible_controls(test.stderr.replace(prefix, "")))
    for frame in test.traceback:  # the learner names its frames' files and functions (compile(), co_name)
        frame.file, frame.function = visible_controls(frame.file), visible_controls(frame.function)
        frame.code = visible_controls(frame.code)
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
