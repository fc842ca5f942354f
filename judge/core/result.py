"""The Result: the versioned JSON contract between the runner and every front end.

Both engines (native CPython and Pyodide in the browser) produce the same Result for the same
learner code, durations aside. The JSON Schema is ``judge/core/schema/result.schema.json`` and the
field meanings are documented in ``docs/result.md``.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field, fields
from typing import Any, Literal

from ..i18n import N_, _
from .kinds import OUTCOMES, SANDBOXES, STATUSES, ObjectiveKind, Outcome, Policy, SandboxLevel, Status, Visibility

__all__ = ["OUTCOMES", "SANDBOXES", "STATUSES", "Frame", "ObjectiveResult", "Outcome", "Result", "Status",
           "TestResult", "cap_output"]

SCHEMA_VERSION = 1
OUTPUT_CAP = 8192  # characters of stdout and of stderr kept per test (and for import-time output)


@dataclass
class Frame:
    """One traceback frame, with a path relative to the work directory."""

    file: str
    line: int
    function: str
    code: str = ""


@dataclass
class TestResult:
    """The outcome of one test function (one parametrized case)."""

    id: str
    name: str
    file: str
    visibility: Visibility
    outcome: Outcome
    message: str = ""
    traceback: list[Frame] = field(default_factory=list)
    stdout: str = ""
    stderr: str = ""
    duration: float = 0.0
    artifacts: list[dict[str, Any]] = field(default_factory=list)
    points: float = 0.0  # what this test earned (see judge.core.scoring)
    max_points: float = 1.0  # what it is worth: its weight scaled to the problem's points
    objective: str = ""  # the id of the learning objective it belongs to ("" when the problem declares none)


@dataclass
class ObjectiveResult:
    """What a Result earned for one learning objective of its problem (see judge.core.scoring)."""

    id: str
    title: str
    points: float  # earned
    max_points: float  # what the objective is worth
    passed: int  # its tests that passed
    total: int  # its tests
    kind: ObjectiveKind = "concept"
    requires: list[str] = field(default_factory=list)
    scoring: Policy = "proportional"
    note: str = ""  # why points were lost: the first failure's first line, or what it waits for


#: how the message of a Result begins when the judge's own test process failed, never the learner's code (which
#: runs in another process): a fault of the judge or of the machine, such as a disk a classmate's code filled
INTERNAL_ERROR = "internal error: "


@dataclass
class Result:
    """The verdict for one problem and one piece of learner code."""

    problem: str
    status: Status
    message: str = ""
    tests: list[TestResult] = field(default_factory=list)
    duration: float = 0.0
    schema_version: int = SCHEMA_VERSION
    points: float = 0.0  # what the code earned for this problem (see judge.core.scoring)
    max_points: float = 0.0  # what the problem is worth; 0 when unknown (no test ran, no declared points)
    sandbox: SandboxLevel | Literal[""] = ""  # where the learner's code ran ("" when not recorded)
    objectives: list[ObjectiveResult] = field(default_factory=list)  # points per objective (when declared)
    # natively, the CPU seconds of the run's processes (what its time limit counts); not in the JSON
    cpu_seconds: float = field(default=0.0, compare=False, repr=False)

    @property
    def passed(self) -> int:
        return sum(t.outcome == "passed" for t in self.tests)

    @property
    def total(self) -> int:
        return len(self.tests)

    @property
    def score(self) -> float:
        return round(self.passed / self.total, 4) if self.tests and self.status != "timeout" else 0.0

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data.update(passed=self.passed, total=self.total, score=self.score)
        return {key: data[key] for key in _FIELD_ORDER}

    def to_json(self, indent: int | None = None) -> str:
        # the JSON of to_dict(), without its deep copy of every test's artifacts (a run's largest part)
        data = {name: getattr(self, name) for name in _RESULT_FIELDS}
        data.update(tests=[_test_json(t) for t in self.tests], passed=self.passed, total=self.total, score=self.score,
                    objectives=[asdict(o) for o in self.objectives])
        text = json.dumps({key: data[key] for key in _FIELD_ORDER}, indent=indent, ensure_ascii=False)
        return _LONE_SURROGATE.sub("\ufffd", text)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Result:
        """Read a Result; one written before points existed reads as one point per passed test, one
        written before objectives existed has none (its points are its tests')."""
        if data.get("schema_version") != SCHEMA_VERSION:
            raise ValueError(f"unsupported result schema_version {data.get('schema_version')!r}")
        tests = [_test_from_dict(t, data["status"]) for t in data.get("tests", [])]
        result = cls(problem=data["problem"], status=data["status"], message=data.get("message", ""),
                     tests=tests, duration=data.get("duration", 0.0), sandbox=data.get("sandbox", ""),
                     objectives=[ObjectiveResult(**o) for o in data.get("objectives", [])])
        result.max_points = data.get("max_points", float(sum(t.max_points for t in tests)))
        result.points = data.get("points", float(sum(t.points for t in tests)))
        return result

    @classmethod
    def timeout(cls, problem: str, seconds: float, max_points: float = 0.0, clock: str = "") -> Result:
        """The Result of a run stopped at its time limit: no test credited. ``clock``: natively, which
        limit stopped it: ``cpu`` (its CPU time) or ``wall`` (the wall-clock backstop); the browser
        counts wall-clock time from the start of the learner's run and leaves it empty."""
        return cls.unjudged(problem, "timeout", _TIMEOUT_MESSAGES[clock].format(seconds=f"{seconds:g}"),
                            max_points, duration=float(seconds))

    def shown_message(self) -> str:
        """The message as a report shows it, in the judge's active language: a time-out's in the
        catalog's words (the Result itself keeps the English, the same from every engine)."""
        if self.status == "timeout":
            for english in _TIMEOUT_MESSAGES.values():
                if self.message == english.format(seconds=f"{self.duration:g}"):
                    return _(english).format(seconds=f"{self.duration:g}")
        return self.message

    @classmethod
    def error(cls, problem: str, message: str, max_points: float = 0.0) -> Result:
        """The Result of code that could not be judged (it did not load, crashed, or tampered)."""
        return cls.unjudged(problem, "error", message, max_points)

    def judge_failed(self) -> bool:
        """Whether this is the judge's own failure (its test process gave no report: :data:`INTERNAL_ERROR`),
        not a verdict on the code."""
        return self.status == "error" and self.message.startswith(INTERNAL_ERROR)

    @classmethod
    def unjudged(cls, problem: str, status: Status, message: str, max_points: float = 0.0,
                 duration: float = 0.0) -> Result:
        """The one place that builds a Result no test run produced (timeout, stop, crash, error). The message
        may quote the learner (an exception at import, what it wrote before crashing): its control characters
        are shown (:func:`visible_controls`), as in a test's message."""
        return cls(problem=problem, status=status, message=visible_controls(message), duration=duration,
                   max_points=float(max_points))


#: a time-out's message by the clock that stopped the run (translated by :meth:`Result.shown_message`)
_TIMEOUT_MESSAGES = {
    "": N_("timed out after {seconds} s"),
    "cpu": N_("timed out after {seconds} s of CPU time (a loop that never ends, or a far too slow algorithm?)"),
    "wall": N_("timed out after {seconds} s of wall-clock time, though within its CPU-time limit (code waiting "
               "on something that never comes, or a machine far too busy)"),
}

_FIELD_ORDER = ("schema_version", "problem", "status", "score", "points", "max_points", "passed", "total",
                "message", "duration", "sandbox", "objectives", "tests")


_RESULT_FIELDS = tuple(f.name for f in fields(Result))
_TEST_FIELDS = tuple(f.name for f in fields(TestResult))
_FRAME_FIELDS = tuple(f.name for f in fields(Frame))


def _test_json(test: TestResult) -> dict[str, Any]:
    """``asdict(test)`` for JSON: the same keys and values, the values not copied."""
    data = {name: getattr(test, name) for name in _TEST_FIELDS}
    data["traceback"] = [{name: getattr(frame, name) for name in _FRAME_FIELDS} for frame in test.traceback]
    return data


def _test_from_dict(data: dict[str, Any], status: str) -> TestResult:
    data = dict(data, traceback=[Frame(**f) for f in data.get("traceback", [])])
    if "max_points" not in data:  # an older Result: one point per test
        data["max_points"] = 1.0
        data["points"] = 1.0 if data["outcome"] == "passed" and status != "timeout" else 0.0
    return TestResult(**data)


#: a surrogate code point on its own: a str may hold one (the learner's code raised ValueError("\\ud800")), no
#: UTF-8 text can, so the Result's JSON shows it as the replacement character instead of failing to be written
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")

#: Unicode's bidirectional embeddings, overrides and isolates ("Trojan Source"): shown raw (a terminal, a file
#: in an editor, a Markdown table's row) they reorder what follows them on the line, so a learner's message
#: could make the points after it read otherwise. The marks a language needs (U+200E, U+200F) are left.
BIDI_CONTROLS = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"

#: control characters shown as Unicode's pictures of them (tab and newline kept), the bidirectional ones as
#: escapes: a learner's escape codes then rewrite no grader's terminal, feedback file or spreadsheet cell
#: that shows its words
_CONTROL_PICTURES: dict[int, int | str] = {
    **{code: 0x2400 + code for code in range(32) if code not in (9, 10)}, 127: 0x2421,
    **dict.fromkeys(range(0x80, 0xA0), 0xFFFD),
    **{ord(c): c.encode("unicode_escape").decode("ascii") for c in BIDI_CONTROLS}}


def visible_controls(text: str) -> str:
    """``text`` with every control character but tab and newline made visible (``\r\n`` is a newline), and
    the bidirectional overrides shown as escapes (``\\u202e``)."""
    return text.replace("\r\n", "\n").translate(_CONTROL_PICTURES)


def cap_output(text: str, limit: int = OUTPUT_CAP) -> str:
    """Keep the first ``limit`` characters of captured output and say how much was dropped."""
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n... [output truncated: {len(text) - limit} more characters]"
