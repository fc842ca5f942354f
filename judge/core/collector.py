"""The pytest plugin that turns pytest's reports into :class:`judge.core.result.TestResult` objects.

It records which tests were collected, the outcome of each phase, a learner-readable message, a
traceback trimmed to the files of the work directory (the learner's module, support modules and
tests), captured output (capped) and the artifacts recorded with ``record_property``.
"""

from __future__ import annotations

import errno
import functools
import json
import linecache
import re
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType, TracebackType
from typing import Any

import pytest

from .kinds import Outcome, Visibility
from .problem import Objective
from .protocol import BoundaryError
from .result import Frame, TestResult, cap_output
from .scoring import MARKER, OBJECTIVE_MARKER, marker_weight
from .titles import TITLE_MARKER, test_title

MESSAGE_CAP = 4000
OUTPUT_LIMIT = 2**20  # characters of stdout + stderr a test may print before it fails
_INLINED = ("<listcomp>", "<dictcomp>", "<setcomp>")  # frames Python 3.12 no longer has (PEP 709)
_UNFINISHED: Outcome = "error"  # a test's outcome until its call phase reports
_INTERRUPTED = "did not finish: the test session was interrupted during or before this test"


class Collector:
    """Collects per-test results during one ``pytest.main`` call."""

    def __init__(self, workdir: Path, objectives: Sequence[Objective] = ()) -> None:
        self.workdir = workdir.resolve()
        self.objectives = list(objectives)
        self.objective_of: dict[str, str] = {}  # test id -> the objective it belongs to
        self.objective_errors: list[str] = []  # tests in no objective (or an unknown one)
        self.collected: list[str] = []
        self.collect_errors: list[TestResult] = []
        self.results: dict[str, TestResult] = {}
        self._names: dict[str, str] = {}
        self.weights: dict[str, float] = {}  # test id -> @pytest.mark.points weight
        self.weight_errors: list[str] = []
        self._failures: dict[tuple[str, str], tuple[str, list[Frame]]] = {}

    @pytest.hookimpl(tryfirst=True)
    def pytest_keyboard_interrupt(self, excinfo: pytest.ExceptionInfo[BaseException]) -> None:
        """Before pytest's terminal reporter formats the interrupt (the time limit of the Pyodide
        harness under Node.js, which interrupts the engine; Ctrl-C natively), keep only its last
        frame. That report is never shown, and formatting every frame parsed each frame's source file:
        0.6 to 1.7 s of CPU after the interrupt, natively and in Pyodide, before the run could end."""
        excinfo.traceback = excinfo.traceback[-1:]

    # --- collection -------------------------------------------------------------------------
    @pytest.hookimpl(hookwrapper=True)
    def pytest_make_collect_report(self, collector: pytest.Collector) -> Any:
        outcome = yield
        report = outcome.get_result()
        if report.failed and isinstance(collector, pytest.Module):
            self.collect_errors.append(self._collect_error(collector, report))

    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        for item in items:
            # pytest's long report of a failure is never shown (the message is describe_exception's), and
            # formatting it, every frame with its source, was a third of judging a failing solution
            item.repr_failure = self._short_report  # type: ignore[method-assign]
            item._repr_failure_py = self._short_report  # type: ignore[method-assign, assignment]  # a str report is fine
            self._names[item.nodeid] = readable_name(item)
            marker = item.get_closest_marker(MARKER)
            if marker is not None:
                try:
                    self.weights[item.nodeid] = marker_weight(marker.args, dict(marker.kwargs))
                except ValueError as exc:
                    self.weight_errors.append(f"{item.nodeid}: {exc}")
            if self.objectives:
                self._assign_objective(item)

    def _short_report(self, excinfo: pytest.ExceptionInfo[BaseException], style: str | None = None) -> str:
        """What a failed test's report holds in place of pytest's formatted traceback (``style`` unused)."""
        return describe_exception(excinfo.value, excinfo.tb, self.workdir)

    def _assign_objective(self, item: pytest.Item) -> None:
        """The objective of a test: its ``@pytest.mark.objective(id)``, else the first whose patterns match."""
        marker = item.get_closest_marker(OBJECTIVE_MARKER)
        known = {o.id for o in self.objectives}
        if marker is not None:
            ident = marker.args[0] if marker.args else marker.kwargs.get("id")
            if ident in known:
                self.objective_of[item.nodeid] = str(ident)
            else:
                self.objective_errors.append(f"{item.nodeid}: @pytest.mark.objective({ident!r}) names no objective "
                                             f"of problem.toml ({', '.join(sorted(known))})")
            return
        ident = objective_for(item.nodeid, self.objectives)
        if ident:
            self.objective_of[item.nodeid] = ident
        else:
            self.objective_errors.append(f"{item.nodeid} belongs to no objective: no pattern of problem.toml's "
                                         "[[objectives]] matches it (nor an @pytest.mark.objective marker)")

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.collected = [item.nodeid for item in session.items]

    # --- running ----------------------------------------------------------------------------
    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
        outcome = yield
        report = outcome.get_result()
        if report.failed and call.excinfo is not None:
            self._failures[(item.nodeid, call.when)] = (
                describe_exception(call.excinfo.value, call.excinfo.tb, self.workdir),
                trim_traceback(call.excinfo.tb, self.workdir, call.excinfo.value),
            )

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        result = self.results.get(report.nodeid)
        if result is None:
            result = self.results[report.nodeid] = self._new_result(report.nodeid)
        result.duration += report.duration
        if report.when == "call":
            result.artifacts = [_artifact(name, value) for name, value in report.user_properties]
        if report.failed:
            self._record_failure(result, report)
        elif report.when == "call" and report.passed and result.outcome == _UNFINISHED:
            result.outcome, result.message = "passed", ""
        elif report.skipped and result.outcome == _UNFINISHED:
            result.outcome = "skipped"
            result.message = _skip_reason(report)
        if report.when == "teardown":
            stdout, stderr = _sections(report, "stdout"), _sections(report, "stderr")
            result.stdout, result.stderr = cap_output(stdout), cap_output(stderr)
            printed = len(stdout) + len(stderr)
            if printed > OUTPUT_LIMIT and result.outcome == "passed":
                result.outcome = "failed"
                # how much more is not said: natively the tests' process keeps no more than the limit (and one)
                result.message = (f"output truncated: the test printed more than the {OUTPUT_LIMIT // 2**20} MiB a "
                                  "test may print (remove prints inside loops)")

    def result_for(self, nodeid: str) -> TestResult:
        """The result of a collected test; one that never reported is an error ("did not run")."""
        result = self.results.get(nodeid)
        return self._new_result(nodeid) if result is None else result

    # --- helpers ----------------------------------------------------------------------------
    def _new_result(self, nodeid: str) -> TestResult:
        file = nodeid.split("::", 1)[0]
        return TestResult(
            id=nodeid, name=self._names.get(nodeid, nodeid.split("::")[-1]), file=file,
            visibility=visibility(file), outcome=_UNFINISHED, message=_INTERRUPTED,
            objective=self.objective_of.get(nodeid, ""),
        )

    def _record_failure(self, result: TestResult, report: pytest.TestReport) -> None:
        if result.outcome in ("failed", "error") and result.message != _INTERRUPTED:
            return  # keep the first failure: later phases usually fail because of it
        result.outcome = "failed" if report.when == "call" else "error"
        message, frames = self._failures.get((report.nodeid, str(report.when)), (report.longreprtext, []))
        if report.when != "call":
            message = f"error in test {report.when}: {message}"
        result.message = message
        result.traceback = frames

    def _collect_error(self, module: pytest.Module, report: pytest.CollectReport) -> TestResult:
        file = Path(module.path).resolve().relative_to(self.workdir).as_posix()
        text = report.longreprtext
        return TestResult(
            id=file, name=f"{Path(file).name} (could not be loaded)", file=file,
            visibility=visibility(file), outcome="error", message=_collect_message(text),
        )


def objective_for(test_id: str, objectives: Sequence[Objective]) -> str:
    """The first objective whose patterns match the test (its name with parameters, or its whole id
    for a pattern holding ``::``); '' when none does. In a pattern ``*`` stands for any text and
    ``?`` for one character; everything else, brackets included, is literal."""
    name = test_id.split("::", 1)[-1]
    for objective in objectives:
        for pattern in objective.tests:
            if _pattern(pattern).fullmatch(test_id if "::" in pattern else name):
                return objective.id
    return ""


@functools.lru_cache(maxsize=512)
def _pattern(pattern: str) -> re.Pattern[str]:
    return re.compile("".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern), re.S)


def readable_name(item: pytest.Item) -> str:
    """The test's docstring first line if it has one, else its name without ``test_``; in the run's
    language when the test declares its title in it (:mod:`judge.core.titles`)."""
    function = getattr(item, "function", None)
    doc = (getattr(function, "__doc__", None) or "").strip()
    base = getattr(item, "originalname", item.name)
    name = doc.splitlines()[0] if doc else base.removeprefix("test_").replace("_", " ")
    name = test_title(name, item.get_closest_marker(TITLE_MARKER))
    callspec = getattr(item, "callspec", None)
    return f"{name} [{callspec.id}]" if callspec is not None else name


def visibility(file: str) -> Visibility:
    return "secret" if file.startswith("tests/secret/") else "public"


def describe_exception(exc: BaseException, tb: TracebackType | None, workdir: Path) -> str:
    """A short message: the assertion text for assertion failures, ``Type: message`` otherwise."""
    if isinstance(exc, AssertionError):
        text = str(exc)
        if text and not text.startswith("assert ") and "\nassert " in text:
            text = text.split("\nassert ", 1)[0]  # a custom message: drop pytest's repr-based detail
        text = text or "assertion failed"
    elif isinstance(exc, MemoryError):
        text = "MemoryError: the code ran out of memory (it hit the memory limit)"
    elif isinstance(exc, OSError) and exc.errno == errno.EFBIG:
        text = ("output truncated: the code wrote more than the output limit allows (File too large); "
                "remove prints inside loops")
    elif isinstance(exc, BoundaryError):  # the judge's own sentence (a crash, a time limit, a refused value)
        text = str(exc)
    elif isinstance(exc, RecursionError):
        text = f"RecursionError: {exc} (is there a recursion without a base case?)"
    elif isinstance(exc, SystemExit):
        text = f"the code called exit() / sys.exit({exc.code!r}) during the test; a solution must return, not exit"
    elif isinstance(exc, AttributeError) and _is_learner_module(getattr(exc, "obj", None), workdir):
        module = exc.obj.__name__  # type: ignore[attr-defined]  # a module, checked above
        text = (f"AttributeError: {module}.py does not define '{exc.name}', which the test uses; check the "
                f"spelling and that it is defined at the top level of {module}.py")
    else:
        text = f"{type(exc).__name__}: {exc}"
    return _cap(text)


def _is_learner_module(obj: object, workdir: Path) -> bool:
    """The stand-in for the learner's module (judge.sandbox.standin), which the tests import."""
    return isinstance(obj, ModuleType) and getattr(type(obj), "__judge_standin__", False) is True


def trim_traceback(tb: TracebackType | None, workdir: Path, exc: BaseException | None = None) -> list[Frame]:
    """The frames of ``tb`` that belong to files in the work directory, outermost first, then the
    frames in the learner's files that ``exc`` brought from the learner's side (if it came from there)."""
    frames: list[Frame] = []
    root = str(workdir) + "/"
    while tb is not None:
        code = tb.tb_frame.f_code
        filename = code.co_filename
        if (filename.startswith(root) and code.co_name not in _INLINED
                and not tb.tb_frame.f_locals.get("__tracebackhide__")):
            lineno = tb.tb_lineno
            frames.append(Frame(file=filename[len(root):], line=lineno, function=code.co_name,
                                code=linecache.getline(filename, lineno).strip()))
        tb = tb.tb_next
    frames += learner_frames(exc)
    return frames[-12:]


def learner_frames(exc: BaseException | None) -> list[Frame]:
    """The frames an exception of the learner's code carries from the learner's side (checked: the
    learner's side is not trusted to send well-formed ones)."""
    found = getattr(exc, "__judge_frames__", None) if exc is not None else None
    if type(found) is not list:
        return []
    frames = []
    for item in found[-12:]:
        if (type(item) is dict and type(item.get("file")) is str and type(item.get("line")) is int
                and type(item.get("function")) is str and type(item.get("code", "")) is str):
            frames.append(Frame(file=item["file"][:200], line=item["line"], function=item["function"][:200],
                                code=item.get("code", "")[:500]))
    return frames


def _collect_message(text: str) -> str:
    errors = [line[1:].strip() for line in text.splitlines() if line.startswith("E ")]
    lines = text.strip().splitlines()
    detail = " ".join(e for e in errors if e) or (lines[-1] if lines else "unknown error")
    missing = re.search(r"cannot import name '(\w+)' from '(\w+)'", detail)
    if missing:
        name, module = missing.groups()
        return (f"{module}.py does not define '{name}', which the tests import; check the spelling and "
                f"that it is defined at the top level of {module}.py")
    return _cap(f"the test file could not be loaded: {detail}")


def _sections(report: pytest.TestReport, stream: str) -> str:
    return "".join(content for title, content in report.sections if title.startswith(f"Captured {stream} "))


def _skip_reason(report: pytest.TestReport) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2]).removeprefix("Skipped: ")
    return "skipped"


def _artifact(name: str, value: Any) -> dict[str, Any]:
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        value = repr(value)
    return {"name": str(name), "value": value}


def _cap(text: str) -> str:
    return text if len(text) <= MESSAGE_CAP else text[:MESSAGE_CAP] + " ... [message truncated]"
