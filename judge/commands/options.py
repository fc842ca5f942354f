"""What several commands share: where the problems come from, common options, the native engine.

Each command is a module that declares its arguments and its handler (:mod:`judge.commands`); the
options and helpers more than one of them uses live here.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.errors import UsageError
from ..core.problem import Problem, ProblemError, discover_problems
from ..i18n import _

if TYPE_CHECKING:
    from ..engines import Engine
    from .assignments import Assignment


def default_problems_dir() -> Path:
    """Where problems come from: $JUDGE_PROBLEMS, else ./problems, else the set bundled with the judge."""
    if os.environ.get("JUDGE_PROBLEMS"):
        return Path(os.environ["JUDGE_PROBLEMS"])
    local = Path("problems")
    if holds_problems(local):
        return local
    return bundled_problems_dir()


def bundled_problems_dir() -> Path:
    """The example problems that come with the judge (``judge/_problems`` installed, ``problems/`` in a clone)."""
    package = Path(__file__).resolve().parents[1]
    bundled = package / "_problems"
    return bundled if bundled.is_dir() else package.parent / "problems"


def holds_problems(folder: Path) -> bool:
    """Whether ``folder`` is a problems folder: it holds at least one folder with a problem.toml."""
    return folder.is_dir() and any((p / "problem.toml").is_file() for p in folder.iterdir() if p.is_dir())


PROBLEMS_SOURCE = ("Problems come from the folder given, else $JUDGE_PROBLEMS when set, else ./problems when it "
                   "holds problem folders, else the example set bundled with the judge.")
PROBLEMS_HELP = ("the problems folder (default: $JUDGE_PROBLEMS, else ./problems if it holds problems, else the "
                  "bundled set)")


def language_option(parser: argparse.ArgumentParser, what: str = "the report's words and the errors") -> None:
    """--lang: the language of the judge's own words (default: the environment's, as $LANG)."""
    parser.add_argument("--lang", metavar="LANG", help=f"the language of {what}, e.g. zh or en (default: from "
                        "$LANGUAGE, $LC_ALL, $LC_MESSAGES or $LANG; English without a translation)")


def common_options(parser: argparse.ArgumentParser) -> None:
    """--problems, -j, --timeout and the sandbox's options: judging commands take them alike."""
    parser.add_argument("--problems", type=Path, metavar="DIR", help=PROBLEMS_HELP)
    parser.add_argument("-j", dest="parallel", type=positive, default=os.cpu_count() or 1, metavar="N",
                        help="judge N problems in parallel (default: one per CPU core)")
    parser.add_argument("--timeout", type=float, metavar="SECONDS", help="override every problem's time limit")
    sandbox_options(parser)


def sandbox_options(parser: argparse.ArgumentParser) -> None:
    """--sandbox and --sandbox-user: where learner code runs (judge.sandbox.levels)."""
    from ..sandbox.levels import REQUESTS

    parser.add_argument("--sandbox", choices=REQUESTS, default="auto",
                        help="where learner code runs: bubblewrap (namespaces), user (an unprivileged user, as "
                        "root), plain (a child process, no sandbox); auto (default): the first that works")
    parser.add_argument("--sandbox-user", metavar="NAME", help="one unprivileged user for every job of --sandbox "
                        "user, that nothing else runs as: after each job its every process is ended and its files in "
                        "the shared temporary folders removed (default: a uid of its own per job, from a pool of uids "
                        "with no account)")


def native_engine(args: argparse.Namespace, problems: list[Problem], grading: bool,
                  private: Sequence[Path] = ()) -> Engine:
    """The native engine at the sandbox level the arguments ask for, probed once; grading says which
    level it got, and warns when the learner's code can read the grader's files. ``private``: folders
    the learner's code must not read (other students' submissions), refused if it could."""
    from ..engines import get_engine
    from ..sandbox.levels import choose, choose_ahead, problems_options, refuse_exposed

    requested = getattr(args, "sandbox", "auto")
    level: dict[str, Any] = {"user": getattr(args, "sandbox_user", None), "grading": grading,
                             **problems_options(problems)}
    if not grading and not private:  # nothing to report or refuse before judging: probed while the judge warms up
        return get_engine("native", sandbox=choose_ahead(requested, **level))
    sandbox = choose(requested, **level)
    refuse_exposed(sandbox, private)
    if grading:
        print(f"Sandbox: {sandbox.summary}" + (f" [{sandbox.note}]" if sandbox.note else ""), file=sys.stderr)
        if sandbox.warning:
            print(_("warning: {message}").format(message=sandbox.warning), file=sys.stderr)
    return get_engine("native", sandbox=sandbox)


def positive(text: str) -> int:
    """An argparse type: an integer of at least 1."""
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(_("must be at least 1"))
    return value


def load_problems(folder: Path | None, published: bool = False, compile_tests: bool = True) -> list[Problem]:
    """The valid problems of ``folder`` (default: :func:`default_problems_dir`); broken ones are warned about.
    ``compile_tests=False`` when they are only judged (:func:`judge.core.problem.load_problem`)."""
    root = folder or default_problems_dir()
    problems, errors = discover_problems(root, published=published, compile_tests=compile_tests)
    for error in errors:
        print(_("warning: skipping a broken problem folder: {error}").format(error=error), file=sys.stderr)
    if not problems:
        raise ProblemError(_("{folder}: no valid problem folders found").format(folder=root), "no-problems-folder")
    return problems


def assignment_problems(args: argparse.Namespace, grading: bool = False) -> tuple[list[Problem], Assignment | None]:
    """The problems to work on and the course's assignment ``--assignment`` names (None: no assignment given, or
    for ``judge grade`` a course.toml without [[assignments]], where the name is only the LMS column's)."""
    from .assignments import choose, read_assignments

    folder = args.problems or default_problems_dir()
    problems = load_problems(args.problems)
    name = getattr(args, "assignment", None)
    if not name or (grading and not read_assignments(folder)):
        return problems, None
    assignment, chosen = choose(folder, name, problems)
    return chosen, assignment


def only_problems(problems: list[Problem], only: list[str] | None) -> list[Problem]:
    """The problems ``--problem ID`` (repeated) names, in the set's order; all of them without the option."""
    if not only:
        return problems
    unknown = sorted(set(only) - {p.id for p in problems})
    if unknown:
        raise UsageError(_("--problem: unknown problem(s) {ids}").format(ids=", ".join(unknown)))
    return [p for p in problems if p.id in only]
