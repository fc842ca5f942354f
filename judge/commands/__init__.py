"""The command line and what each command does (native only, never shipped to the browser).

Each command is one module that declares its arguments and its handler::

    DESCRIPTION = "..."                  # the parser's description (EPILOG too, optionally)
    def add_arguments(parser) -> None    # its options (shared ones: judge.commands.options)
    def run(args) -> int                 # the work; raises JudgeError for what the user can fix

and one line of :data:`COMMANDS` names it. :mod:`.cli` only assembles them (``judge NAME ...``, the
one error handler); a command's module is imported only when that command runs, so ``judge PATH``
never loads what ``judge grade`` needs. Modules: practice (``judge PATH``: learner folders), check
(problem folders), scaffold (``judge new``), site.build and site.serve, grade.command (a class),
export.command (grading platforms); options (what several commands share), watch, assignments.
"""

from __future__ import annotations

import argparse
import importlib
from dataclasses import dataclass
from types import ModuleType

DEFAULT = "judge"  # the command of `judge PATH`: no command name given


@dataclass(frozen=True)
class Command:
    """One command: ``judge NAME``, its module (judge.commands.<module>) and a line for the overview."""

    name: str
    module: str
    summary: str

    @property
    def prog(self) -> str:
        return "judge" if self.name == DEFAULT else f"judge {self.name}"

    def load(self) -> ModuleType:
        return importlib.import_module(f"{__name__}.{self.module}")

    def parser(self, version: str) -> argparse.ArgumentParser:
        """The command's argument parser (abbreviated options refused, ``--version`` added)."""
        module = self.load()
        parser = argparse.ArgumentParser(allow_abbrev=False, prog=self.prog, description=module.DESCRIPTION,
                                         epilog=getattr(module, "EPILOG", None))
        module.add_arguments(parser)
        parser.add_argument("--version", action="version", version=f"judge {version}")
        return parser

    def run(self, args: argparse.Namespace) -> int:
        return int(self.load().run(args))


COMMANDS: dict[str, Command] = {c.name: c for c in (
    Command(DEFAULT, "practice", "judge PATH: judge a practice folder (created from the starters if missing)"),
    Command("check", "check", "verify problem folders (instructors)"),
    Command("new", "scaffold", "scaffold a problem folder"),
    Command("build", "site.build", "write the static web site"),
    Command("serve", "site.serve", "build and serve the site on localhost"),
    Command("grade", "grade.command", "grade a class's submissions (instructors)"),
    Command("export", "export.command", "package the problems for Gradescope, GitHub Classroom, PrairieLearn"),
)}
