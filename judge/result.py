"""The Result: the versioned JSON contract between the runner and every front end.

Both engines (native CPython and Pyodide in the browser) produce the same Result for the same
learner code, durations aside. The JSON Schema is ``judge/schema/result.schema.json`` and the
field meanings are documented in ``docs/result.md``.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

SCHEMA_VERSION = 1
STATUSES = ("passed", "failed", "error", "timeout")
OUTCOMES = ("passed", "failed", "error", "skipped")
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
    visibility: str  # "public" | "secret"
    outcome: str  # one of OUTCOMES
    message: str = ""
    traceback: list[Frame] = field(default_factory=list)
    stdout: str = ""
    stderr: str = ""
    duration: float = 0.0
    artifacts: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class Result:
    """The verdict for one problem and one piece of learner code."""

    problem: str
    status: str  # one of STATUSES
    message: str = ""
    tests: list[TestResult] = field(default_factory=list)
    duration: float = 0.0
    schema_version: int = SCHEMA_VERSION

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
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Result:
        if data.get("schema_version") != SCHEMA_VERSION:
            raise ValueError(f"unsupported result schema_version {data.get('schema_version')!r}")
        tests = [
            TestResult(**{**t, "traceback": [Frame(**f) for f in t.get("traceback", [])]})
            for t in data.get("tests", [])
        ]
        return cls(problem=data["problem"], status=data["status"], message=data.get("message", ""),
                   tests=tests, duration=data.get("duration", 0.0))

    @classmethod
    def timeout(cls, problem: str, seconds: float) -> Result:
        return cls(problem=problem, status="timeout", message=f"timed out after {seconds:g} s",
                   duration=float(seconds))

    @classmethod
    def error(cls, problem: str, message: str) -> Result:
        return cls(problem=problem, status="error", message=message)


_FIELD_ORDER = ("schema_version", "problem", "status", "score", "passed", "total", "message",
                "duration", "tests")


def cap_output(text: str, limit: int = OUTPUT_CAP) -> str:
    """Keep the first ``limit`` characters of captured output and say how much was dropped."""
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n... [output truncated: {len(text) - limit} more characters]"
