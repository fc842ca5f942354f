"""``judge export``, the command: its arguments (the work: :mod:`judge.commands.export`)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from ...core.errors import ExitCode, UsageError
from ...i18n import _, current_language
from ..assignments import shared_entries
from ..grade import FEEDBACK_LEVELS
from ..options import assignment_problems, language_option, only_problems, positive
from . import PLATFORMS
from .wheels import DEFAULT_PLATFORM, DEFAULT_PYTHON

DESCRIPTION = ("Package the problems for a grading platform: the problems without their reference and wrong "
               "solutions, the references' Results (computed now), the judge's wheel and the platform's scripts. "
               "Step by step for each platform: docs/platforms.md.")


def add_arguments(export: argparse.ArgumentParser) -> None:
    """``judge export``'s options: the platform, where, which problems, feedback, wheels, the platform's specifics."""
    export.add_argument("platform", choices=list(PLATFORMS))
    export.add_argument("-o", "--out", type=Path, required=True, metavar="OUT",
                        help="gradescope: the zip to write (e.g. autograder.zip); github-classroom and "
                        "prairielearn: the folder to write (must not exist)")
    export.add_argument("--problems", type=Path, metavar="DIR", help="the problems folder, or one problem's "
                        "folder (default: the project's problems/)")
    export.add_argument("--problem", dest="only", action="append", metavar="ID",
                        help="export only this problem (repeat for more)")
    export.add_argument("--assignment", metavar="NAME", help="export the problems of the course's assignment NAME "
                        "(course.toml's [[assignments]] beside the problems)")
    export.add_argument("--timeout", type=float, metavar="SECONDS", help="override every problem's time limit")
    export.add_argument("--feedback", choices=FEEDBACK_LEVELS, default="names", help="what students see of "
                        "the secret tests: full (names and messages), names (pass/fail; the default) or none")
    export.add_argument("--wheels", type=Path, metavar="DIR", help="take the wheels from DIR (a pp_judge "
                        "wheel from an earlier export, and its dependencies) instead of building and downloading")
    export.add_argument("--python-version", default=DEFAULT_PYTHON, metavar="X.Y",
                        help=f"the platform's Python, for the wheels (default {DEFAULT_PYTHON})")
    export.add_argument("--platform-tag", default=DEFAULT_PLATFORM, metavar="TAG",
                        help=f"the platform's machine, as pip's --platform (default {DEFAULT_PLATFORM})")
    export.add_argument("--private-tests", metavar="OWNER/REPO", help="github-classroom: keep the secret tests "
                        "in this private repository; the workflow checks it out with the JUDGE_TESTS_TOKEN secret")
    export.add_argument("--tests-out", type=Path, metavar="DIR", help="github-classroom with --private-tests: "
                        "where to write that repository's content (default: OUT-tests)")
    export.add_argument("--grading-timeout", type=float, default=600.0, metavar="SECONDS",
                        help="gradescope: the assignment's autograder timeout (Gradescope's default: 600 s); the "
                        "judge fits every problem's run into it, so that a student's code that waits never makes "
                        "Gradescope stop the grading before a result is written")
    export.add_argument("--image", metavar="IMAGE", help="prairielearn: the grading image (default python:X.Y-slim)")
    export.add_argument("-j", dest="parallel", type=positive, default=os.cpu_count() or 1, metavar="N",
                        help="judge N reference solutions in parallel")
    language_option(export, "what students read on the platform (feedback, the tests' messages; baked into the "
                    "export) and of the errors")


def run(args: argparse.Namespace) -> int:
    """Write the platform's bundle and say what was written."""
    from . import ExportOptions, export

    problems, assignment = assignment_problems(args)
    problems = only_problems(problems, args.only)
    if args.platform != "gradescope" and args.out.exists():
        raise UsageError(_("{path} exists; give a new folder").format(path=args.out))
    options = ExportOptions(out=args.out, problems=problems, wheels=args.wheels, timeout=args.timeout,
                            feedback=args.feedback, python_version=args.python_version,
                            platform_tag=args.platform_tag, parallel=args.parallel, private_tests=args.private_tests,
                            tests_out=args.tests_out, image=args.image, lang=current_language(), assignment=assignment,
                            grading_timeout=args.grading_timeout)
    for line in export(args.platform, options):
        print(line)
    if assignment is not None:
        due = f"; due {assignment.deadline:%Y-%m-%d %H:%M}: set the due date on the platform" \
            if assignment.deadline else ""
        print(f"Assignment {assignment.name}" + (f" ({assignment.title})" if assignment.title else "")
              + f": {', '.join(p.id for p in problems)}{due}.")
        for line in shared_entries(problems):
            print(f"Note: {line}.")
    return ExitCode.OK
