"""The registry of output formats: every machine-readable file the judge writes from Results.

Each format is one module of this package with a ``render(results, context) -> str`` function;
the registry names it, its command-line option and its help, and imports it only when used. The
terminal report is not a format (it is :mod:`judge.formats.terminal`). Adding a format is one entry here
and one module; the command line (``judge PATH --NAME FILE``) and ``judge grade`` pick it up.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..core.problem import Problem
    from ..core.result import Result


@dataclass(frozen=True)
class FormatContext:
    """What a format may need besides the Results."""

    problems: Mapping[str, Problem] = field(default_factory=dict)  # by id: points, visibility settings
    execution_time: float = 0.0  # seconds the whole judging took
    feedback: str = "names"  # how much of the secret tests a student sees: full | names | none
    submission_error: str = ""  # why nothing of the submission could be read ("" when it was read)


@dataclass(frozen=True)
class Format:
    """One output format."""

    name: str  # the option is --NAME
    module: str  # judge.formats.<module>, imported on first use
    help: str
    metavar: str = "FILE"

    @property
    def option(self) -> str:
        return f"--{self.name}"

    @property
    def dest(self) -> str:
        return self.name.replace("-", "_")

    def render(self, results: Sequence[Result], context: FormatContext | None = None) -> str:
        module = importlib.import_module(f"{__name__}.{self.module}")
        return module.render(list(results), context or FormatContext())

    def write(self, results: Sequence[Result], path: Path, context: FormatContext | None = None) -> None:
        path.write_text(self.render(results, context), encoding="utf-8")


FORMATS: dict[str, Format] = {f.name: f for f in (
    Format("json", "json_results", "write the Results as JSON to FILE"),
    Format("junit", "junit", "write JUnit XML to FILE (one test suite per problem)"),
    Format("gradescope", "gradescope", "write Gradescope's results.json to FILE"),
    Format("prairielearn", "prairielearn", "write PrairieLearn's external-grader results.json to FILE"),
    Format("github-classroom", "github_classroom", "write the GitHub Classroom autograding runner's result "
           "(JSON) to FILE"),
)}


def get(name: str) -> Format:
    """The format called ``name``; KeyError names the known ones."""
    try:
        return FORMATS[name]
    except KeyError:
        raise KeyError(f"unknown format {name!r} (known: {', '.join(FORMATS)})") from None
