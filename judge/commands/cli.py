"""The command line: ``python -m judge`` (also installed as ``judge``).

    judge PATH [options]          judge a practice folder (created from the starters if missing)
    judge check [PROBLEMS ...]    verify problem folders (instructors)
    judge new ID                  scaffold a problem folder
    judge build SITE_DIR          write the static web site
    judge serve                   build and serve the site on localhost
    judge grade SUBMISSIONS -o OUT  grade a class's submissions (instructors)
    judge export PLATFORM -o OUT    package the problems for Gradescope, GitHub Classroom, PrairieLearn

Exit codes (:class:`judge.core.errors.ExitCode`): 0 everything passed, 1 something failed, 2 usage or
setup error. Every command raises :class:`judge.core.errors.JudgeError` for what the user can fix;
:func:`main` is the one place that turns it into a message and an exit code.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from .. import __version__
from ..core.errors import ExitCode, JudgeError, UsageError
from ..core.problem import Problem, ProblemError, discover_problems
from ..formats import FORMATS, FormatContext
from ..i18n import _, available_languages, current_language, has_catalog, ngettext, use_language
from .statements import statement_file

if TYPE_CHECKING:
    from ..engines import Engine
    from .assignments import Assignment
    from .grade import ClassGrades

EXIT_OK, EXIT_FAILED, EXIT_USAGE = ExitCode.OK, ExitCode.FAILED, ExitCode.USAGE
_COMMANDS = ("check", "new", "build", "serve", "grade", "export")


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
_PROBLEMS_HELP = ("the problems folder (default: $JUDGE_PROBLEMS, else ./problems if it holds problems, else the "
                  "bundled set)")


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    command = argv[0] if argv and argv[0] in _COMMANDS else "judge"
    if command != "judge":
        argv = argv[1:]
    lang = _lang_option(argv)
    try:
        with use_language(lang):
            parser = _parsers()[command]
            args = parser.parse_args(argv)  # argparse's own words stay English; ours (-j's check) are translated
            _language_note(lang)
            return int(_HANDLERS[command](args))
    except JudgeError as exc:  # every error the user can fix, from every command (judge.core.errors)
        with use_language(lang):
            print(_("error: {message}").format(message=exc), file=sys.stderr)
        return int(exc.exit_code)
    except KeyboardInterrupt:
        with use_language(lang):
            print(_("interrupted"), file=sys.stderr)
        return ExitCode.INTERRUPTED
    except BrokenPipeError:  # the reader went away (e.g. `judge check | head`): stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return ExitCode.FAILED


def _lang_option(argv: list[str]) -> str | None:
    """The value of ``--lang`` (the last one given), read before parsing: the parser's own checks speak it too."""
    lang = None
    for i, arg in enumerate(argv):
        if arg == "--":
            break
        if arg == "--lang" and i + 1 < len(argv):
            lang = argv[i + 1]
        elif arg.startswith("--lang="):
            lang = arg.split("=", 1)[1]
    return lang or None


def _language_note(lang: str | None) -> None:
    """A language asked for with --lang that has no catalog: the messages read in English, said once."""
    if lang and not has_catalog(lang):
        print(_("note: the judge's messages have no {lang} translation (there are: en, {languages}); they read in "
                "English").format(lang=lang, languages=", ".join(available_languages())), file=sys.stderr)


def language_option(parser: argparse.ArgumentParser, what: str = "the report's words and the errors") -> None:
    """--lang: the language of the judge's own words (default: the environment's, as $LANG)."""
    parser.add_argument("--lang", metavar="LANG", help=f"the language of {what}, e.g. zh or en (default: from "
                        "$LANGUAGE, $LC_ALL, $LC_MESSAGES or $LANG; English without a translation)")


def _parsers() -> dict[str, argparse.ArgumentParser]:
    judge = argparse.ArgumentParser(
        allow_abbrev=False, prog="judge", description="Judge your solutions to the pipeline-parallelism exercises.",
        epilog="Other commands: judge check | new | build | serve | grade | export (each has --help).")
    judge.add_argument("path", metavar="PATH", help="a practice folder (created from the starters if "
                       "missing), or one problem's folder inside it, e.g. practice/pp-schedule")
    judge.add_argument("-k", dest="keyword", metavar="TEXT", help="only run tests matching TEXT (pytest -k)")
    for fmt in FORMATS.values():
        judge.add_argument(fmt.option, dest=f"format_{fmt.dest}", type=Path, metavar=fmt.metavar, help=fmt.help)
    judge.add_argument("--watch", action="store_true", help="judge again whenever a solution is saved")
    judge.add_argument("--public-only", action="store_true", help="run only the public tests (as the browser does)")
    _common(judge)
    judge.add_argument("-v", "--verbose", action="store_true", help="list passing tests and draw timelines")
    language_option(judge)

    check = argparse.ArgumentParser(
        allow_abbrev=False, prog="judge check", epilog=PROBLEMS_SOURCE,
        description="Verify problem folders: nothing left to FILL IN, the statement's links and images resolve, "
        "the reference passes every public and secret test, the starter and every wrong/ solution fail.")
    check.add_argument("paths", nargs="*", type=Path, metavar="PROBLEMS", help="problems folders or problem "
                       "folders, one or more (default: $JUDGE_PROBLEMS, else ./problems if it holds problems, else "
                       "the bundled set)")
    check.add_argument("-v", "--verbose", action="store_true",
                       help="show every failing test of every solution, with whole messages")
    check.add_argument("-j", dest="parallel", type=_positive, default=os.cpu_count() or 1, metavar="N",
                       help="run N solutions at a time (default: one per CPU core)")
    check.add_argument("--pyodide", action="store_true",
                       help="also run every solution inside Pyodide (Node.js) and compare the Results")
    check.add_argument("--mutants", action="store_true", help="also mutation-test the tests: judge mutants of "
                       "each reference and list those no test kills (accepted ones: reference/equivalent-mutants.toml)")
    check.add_argument("--mutants-budget", type=float, metavar="SECONDS",
                       help="with --mutants: stop judging mutants after SECONDS (the rest is reported as not judged)")
    sandbox_options(check)
    language_option(check, "the errors and the tests' messages")

    new = argparse.ArgumentParser(
        allow_abbrev=False, prog="judge new",
        description="Scaffold a problem folder DIR/ID: a small working example (statement, "
        "assets/, starter, reference, public and secret tests, a wrong/ solution) in which every "
        "FILL IN (instructor) line says what to replace; `judge check` lists them.",
        epilog="DIR is --problems, else $JUDGE_PROBLEMS, else the current folder when it is a problems folder "
        "(named problems, or holding problem folders), else ./problems (created if missing): run it in your course "
        "folder. It never writes inside the judge's own package.")
    new.add_argument("id", nargs="?", help="the problem id (lowercase letters, digits and '-'), also the folder's name")
    new.add_argument("--examples", action="store_true", help="instead, copy the judge's example problems (with "
                     "their references) into DIR, to start a course from them or beside your own")
    new.add_argument("--entry", default="solution.py", metavar="FILE", help="the file learners edit and the tests "
                     "import, e.g. act_mem.py (default: solution.py)")
    new.add_argument("--title", metavar="TEXT", help="the title (default: from the id)")
    new.add_argument("--problems", type=Path, metavar="DIR", help="where to create it (default: $JUDGE_PROBLEMS, "
                     "else ./problems)")
    language_option(new, "the errors")

    build = argparse.ArgumentParser(
        allow_abbrev=False, prog="judge build", epilog=PROBLEMS_SOURCE,
        description="Write the static web site into SITE_DIR, with a _headers file for Netlify and Cloudflare Pages.")
    build.add_argument("site_dir", type=Path, metavar="SITE_DIR")
    build.add_argument("--pyodide", choices=("self", "cdn"), default="self",
                       help="self: ship a trimmed Pyodide (offline); cdn: load it from the official CDN")
    build.add_argument("--problems", type=Path, metavar="DIR", help=_PROBLEMS_HELP)
    build.add_argument("--title", metavar="TEXT", help="the site's title (default: the problems folder's "
                       "course.toml, else the judge's own)")
    build.add_argument("--intro", metavar="MARKDOWN", help="the home page's introduction (default: course.toml's)")
    build.add_argument("--assignment", metavar="NAME", help="publish only the problems of the course's assignment "
                       "NAME (course.toml's [[assignments]] beside the problems)")
    build.add_argument("--github-pages-workflow", action="store_true", help="also write .github/workflows/pages.yml "
                       "in the current folder (your repository's root): GitHub builds and publishes the site on "
                       "every push to main")
    language_option(build, "the errors")

    serve = argparse.ArgumentParser(allow_abbrev=False, prog="judge serve",
                                    description="Build the site and serve it on localhost.",
                                    epilog=PROBLEMS_SOURCE)
    serve.add_argument("--site-dir", type=Path, default=Path("site"), metavar="DIR")
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--pyodide", choices=("self", "cdn"), default="self")
    serve.add_argument("--problems", type=Path, metavar="DIR", help=_PROBLEMS_HELP)
    language_option(serve, "the errors")
    grade = _grade_parser()
    export = _export_parser()
    for parser in (judge, check, new, build, serve, grade, export):
        parser.add_argument("--version", action="version", version=f"judge {__version__}")
    return {"judge": judge, "check": check, "new": new, "build": build, "serve": serve, "grade": grade,
            "export": export}


def _grade_parser() -> argparse.ArgumentParser:
    from .grade import FEEDBACK_LEVELS

    grade = argparse.ArgumentParser(
        allow_abbrev=False, prog="judge grade",
        description="Grade a class: every submission in SUBMISSIONS (NAME.zip or folder NAME/, "
        "or a Canvas, Moodle or Blackboard download, unpacked) against every problem's public and secret tests. "
        "Writes grades.csv, canvas.csv, moodle.csv, results/, feedback/, report.html and similarity.csv to OUT_DIR; "
        "unchanged submissions are not judged again. Given one submission (a zip, or a folder laid out like "
        "practice/), regrades that student and updates their row.")
    grade.add_argument("submissions", type=Path, metavar="SUBMISSIONS",
                       help="the folder of submissions, or one student's zip or folder")
    grade.add_argument("-o", "--out", dest="out_dir", type=Path, required=True, metavar="OUT_DIR",
                       help="where the gradebook, results, feedback and report go (created if missing)")
    _common(grade)
    grade.add_argument("--problem", dest="only", action="append", metavar="ID",
                       help="grade only this problem (repeat for more); grades.csv then has its columns only: give "
                       "another OUT_DIR than the whole class's")
    grade.add_argument("--feedback", choices=FEEDBACK_LEVELS, default="names",
                       help="what feedback/ shows of the secret tests: full (names and messages, never "
                       "their code), names (name and pass/fail; the default) or none")
    language_option(grade, "the feedback files and the errors")
    grade.add_argument("--force", action="store_true", help="judge every submission again, changed or not")
    grade.add_argument("--deadline", metavar="TIME", help="late policy: the deadline, e.g. 2026-12-01T23:59 (the "
                       "LMS's local time); applies where the layout gives submission times (Blackboard)")
    grade.add_argument("--late-penalty", type=float, metavar="PERCENT",
                       help="with --deadline: percent of the total taken off per started day late (default: the "
                       "assignment's late_penalty in course.toml, else 10)")
    grade.add_argument("--similarity", type=_share, default=0.8, metavar="SHARE",
                       help="report pairs whose code for a problem overlaps by at least SHARE (0-1, default 0.8; "
                       "0 turns it off); needs copydetect: pip install \"pp-judge[similarity]\"")
    grade.add_argument("--assignment", metavar="NAME",
                       help="the course's assignment NAME (course.toml's [[assignments]] beside the problems): its "
                       "problems, deadline and late policy, its column in canvas.csv; without [[assignments]], only "
                       "the column's name in canvas.csv and moodle-gradebook.csv (default: judge)")
    grade.add_argument("--zero-unreadable", action="store_true",
                       help="give 0 to a submission that could not be read (a corrupt or empty zip, two files for "
                       "one problem); by default it has no grade: an empty cell in grades.csv and the LMS files, "
                       "with the reason in the status column and on the terminal")
    grade.add_argument("--objective-threshold", type=_share, default=0.5, metavar="SHARE",
                       help="report.html lists, per learning objective, the students below SHARE of its points "
                       "(0-1, default 0.5); objectives.csv has every student's points per objective")
    grade.add_argument("--times", type=Path, metavar="FILE",
                       help="a CSV of when each student handed in (columns student, submitted_at) and of extensions "
                       "(an optional deadline column: that student's own), for the late policy where the download "
                       "gives no times (Canvas, Moodle, plain zips)")
    grade.add_argument("--note", default="", metavar="TEXT",
                       help="why this run regrades (e.g. \"test_big fixed\"): history.csv keeps it beside each cell of "
                       "grades.csv the run changes, with the value before")
    grade.add_argument("--moodle-worksheet", type=Path, metavar="FILE",
                       help="the grading worksheet downloaded from the Moodle assignment (View all submissions > "
                       "Download grading worksheet): moodle.csv is that worksheet with the grades filled in")
    return grade


def _share(value: str) -> float:
    share = float(value)
    if not 0 <= share <= 1:
        raise argparse.ArgumentTypeError(_("must be between 0 and 1"))
    return share


def _export_parser() -> argparse.ArgumentParser:
    from .export import PLATFORMS
    from .export.wheels import DEFAULT_PLATFORM, DEFAULT_PYTHON
    from .grade import FEEDBACK_LEVELS

    export = argparse.ArgumentParser(
        allow_abbrev=False, prog="judge export",
        description="Package the problems for a grading platform: the problems without "
        "their reference and wrong solutions, the references' Results (computed now), the judge's wheel and the "
        "platform's scripts. Step by step for each platform: docs/platforms.md.")
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
    export.add_argument("--image", metavar="IMAGE", help="prairielearn: the grading image (default python:X.Y-slim)")
    export.add_argument("-j", dest="parallel", type=_positive, default=os.cpu_count() or 1, metavar="N",
                        help="judge N reference solutions in parallel")
    language_option(export, "what students read on the platform (feedback, the tests' messages; baked into the "
                    "export) and of the errors")
    return export


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--problems", type=Path, metavar="DIR", help=_PROBLEMS_HELP)
    parser.add_argument("-j", dest="parallel", type=_positive, default=os.cpu_count() or 1, metavar="N",
                        help="judge N problems in parallel (default: one per CPU core)")
    parser.add_argument("--timeout", type=float, metavar="SECONDS", help="override every problem's time limit")
    sandbox_options(parser)


def sandbox_options(parser: argparse.ArgumentParser) -> None:
    """--sandbox and --sandbox-user: where learner code runs (judge.sandbox.levels)."""
    from ..sandbox.levels import DEFAULT_USER, REQUESTS

    parser.add_argument("--sandbox", choices=REQUESTS, default="auto",
                        help="where learner code runs: bubblewrap (namespaces), user (an unprivileged user, as "
                        "root), plain (a child process, no sandbox); auto (default): the first that works")
    parser.add_argument("--sandbox-user", metavar="NAME", help=f"the unprivileged user of --sandbox user "
                        f"(default {DEFAULT_USER})")


def native_engine(args: argparse.Namespace, problems: list[Problem], grading: bool) -> Engine:
    """The native engine at the sandbox level the arguments ask for, probed once; grading says which
    level it got, and warns when the learner's code can read the grader's files."""
    from ..engines import get_engine
    from ..sandbox.levels import choose

    sandbox = choose(getattr(args, "sandbox", "auto"), user=getattr(args, "sandbox_user", None), grading=grading,
                     grader_paths=[p.path for p in problems], packages=[d for p in problems for d in p.packages])
    if grading:
        print(f"Sandbox: {sandbox.summary}" + (f" [{sandbox.note}]" if sandbox.note else ""), file=sys.stderr)
        if sandbox.warning:
            print(_("warning: {message}").format(message=sandbox.warning), file=sys.stderr)
    return get_engine("native", sandbox=sandbox)


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(_("must be at least 1"))
    return value


def _load_problems(folder: Path | None, published: bool = False) -> list[Problem]:
    root = folder or default_problems_dir()
    problems, errors = discover_problems(root, published=published)
    for error in errors:
        print(_("warning: skipping a broken problem folder: {error}").format(error=error), file=sys.stderr)
    if not problems:
        raise ProblemError(_("{folder}: no valid problem folders found").format(folder=root))
    return problems


def _run_judge(args: argparse.Namespace) -> int:
    from ..engines import Job
    from ..formats.terminal import ReportOptions, print_report
    from .practice import create_practice, find_solutions

    problems = _load_problems(args.problems, published=True)  # judging needs no reference (exported sets have none)
    target = Path(args.path)
    if target.exists() and not target.is_dir():
        raise UsageError(_("{path} is a file; give the practice folder (or one problem's folder in it)")
                         .format(path=target))
    if holds_problems(target) or (target / "problem.toml").is_file():
        raise UsageError(_("{path} holds problem folders (problem.toml), not a learner's work: to verify them run "
                           "`judge check {path}`; to practise them, `judge practice/ --problems {path}`")
                         .format(path=target))
    if not target.exists():
        _refuse_typo(target, problems)
    if not target.exists() or _is_practice_root(target, problems):
        created = create_practice(target, problems)
        if created:
            example = created[0] / problems[0].entry if len(created) == len(problems) else created[0]
            print(ngettext("Created {n} problem folder in {target}/ from the starters: {names}.",
                           "Created {n} problem folders in {target}/ from the starters: {names}.", len(created))
                  .format(n=len(created), target=target, names=", ".join(p.name for p in created)))
            print(_("Edit the entry file in each (for example {example}) and run `python -m judge {path}` again.")
                  .format(example=example, path=args.path) + "\n")
    workspace = find_solutions(target, problems)
    for warning in workspace.warnings:
        print(_("warning: {message}").format(message=warning), file=sys.stderr)
    if workspace.unknown:
        print(_("note: {message}").format(message=_unknown_note(workspace.unknown, args.problems)), file=sys.stderr)
    if not workspace.solutions:
        raise UsageError(_("no solutions found in {path} (expected {path}/<problem-id>/<entry file>)")
                         .format(path=target))

    engine = native_engine(args, problems, grading=False)

    def judge_once() -> int:
        jobs = [Job(problem, path, include_secret=not args.public_only, keyword=args.keyword,
                    time_limit=args.timeout) for problem, path in workspace.solutions]
        started = time.monotonic()
        results = engine.judge(jobs, args.parallel)
        options = ReportOptions(verbose=args.verbose, keyword=args.keyword,
                                not_started={} if args.verbose else _not_started(workspace.solutions))
        print_report(results, options=options)
        if args.public_only:
            _public_only_note(results, problems)
        context = FormatContext(problems={p.id: p for p in problems}, execution_time=time.monotonic() - started)
        write_formats(args, results, context)
        return EXIT_OK if all(r.status == "passed" for r in results) else EXIT_FAILED

    code = judge_once()
    if args.watch:
        from .watch import watch_and_rerun
        return watch_and_rerun([path for _, path in workspace.solutions], judge_once)
    return code


def _public_only_note(results: list, problems: list[Problem]) -> None:
    """Which problems were scored without the objectives that only secret tests check (judge.core.scoring)."""
    from ..core.scoring import uncounted

    by_id = {p.id: p for p in problems}
    left_out = [f"{r.problem} ({len(ids)}/{len(by_id[r.problem].objectives)})" for r in results
                if r.problem in by_id and (ids := uncounted(r, by_id[r.problem]))]
    if left_out:
        print(_("note: public tests only: objectives that only secret tests check are not counted, and the others' "
                "points are scaled up to the problem's: {problems}").format(problems=", ".join(left_out)))


def write_formats(args: argparse.Namespace, results: list, context: FormatContext) -> None:
    """Write every format the command line asked for (``--json FILE``, ``--junit FILE``, ...)."""
    for fmt in FORMATS.values():
        path = getattr(args, f"format_{fmt.dest}", None)
        if path is not None:
            try:
                fmt.write(results, path, context)
            except OSError as exc:
                raise UsageError(_("cannot write {path}: {reason}").format(path=path, reason=exc.strerror or exc)) \
                    from None


def _not_started(solutions: list[tuple[Problem, Path]]) -> dict[str, tuple[str, str]]:
    """Problems whose entry file is still the untouched starter: the file to edit and the statement
    beside it in the report's language (``README.zh.md``, else ``README.md``)."""
    untouched = {}
    for problem, path in solutions:
        try:
            if path.read_text(encoding="utf-8") == problem.starter:
                statement = statement_file(path.parent, current_language()).name
                untouched[problem.id] = (str(path), statement)
        except (OSError, UnicodeDecodeError):
            continue
    return untouched


def _unknown_note(unknown: list[str], given: Path | None) -> str:
    """Why folders of the practice folder are not problems, when the example problems are hidden by ./problems."""
    source = given or default_problems_dir()
    bundled = {p.name for p in bundled_problems_dir().iterdir() if (p / "problem.toml").is_file()}
    shown = ", ".join(unknown[:4]) + (_(" and {n} more").format(n=len(unknown) - 4) if len(unknown) > 4 else "")
    note = _("{n} folder(s) are not problems of {source} ({shown}); they were skipped.").format(
        n=len(unknown), source=source, shown=shown)
    if source != bundled_problems_dir() and set(unknown) & bundled:
        note += " " + _("The judge's example problems are used only when no ./problems folder holds problems: "
                        "`judge new --examples` copies them into ./problems, or give --problems.")
    return note


def _refuse_typo(target: Path, problems: list[Problem]) -> None:
    """A missing path that looks like a mistyped problem folder must not become a new practice folder."""
    import difflib

    ids = [p.id for p in problems]
    closest = difflib.get_close_matches(target.name, ids, n=1, cutoff=0.6)
    parent = target.parent if str(target.parent) else Path(".")
    if _is_practice_root(parent, problems) or parent.name in ids:
        suggestion = (_("; did you mean {path}?").format(path=parent / closest[0]) if closest
                      else _(" (problems: {ids})").format(ids=", ".join(ids)))
        raise UsageError(_("{path}: no such problem folder in the practice folder {parent}").format(
            path=target, parent=parent) + suggestion)
    if target.name in ids and parent != Path("."):  # e.g. practice/pp-schedule before practice/ exists
        raise UsageError(_("{path} does not exist: {parent} is not a practice folder yet; `judge {parent}` creates it "
                           "with every problem, then `judge {path}` judges this one")
                         .format(path=target, parent=parent))
    if closest and target.name not in ("practice",):
        raise UsageError(_("{path} does not exist and looks like the problem id {id!r}; give the practice folder "
                           "that holds it (e.g. practice/{id}), or a new folder name to create a practice folder")
                         .format(path=target, id=closest[0]))


def _is_practice_root(target: Path, problems: list[Problem]) -> bool:
    ids = {p.id for p in problems}
    return target.is_dir() and target.name not in ids and any((target / i).is_dir() for i in ids)


def _run_check(args: argparse.Namespace) -> int:
    from .check import check_problems

    roots = args.paths or [default_problems_dir()]
    code = check_problems(roots, args.parallel, verbose=args.verbose)
    if args.pyodide:
        from ..engines.pyodide import check_parity
        code = max(code, check_parity(roots, args.parallel))
    if args.mutants:
        from .mutants import check_mutants
        code = max(code, check_mutants(roots, args.parallel, budget=args.mutants_budget, verbose=args.verbose))
    return code


def _run_new(args: argparse.Namespace) -> int:
    from .scaffold import copy_examples, scaffold

    root = args.problems or Path(os.environ.get("JUDGE_PROBLEMS") or _new_problems_root())
    if args.examples:
        copied = copy_examples(bundled_problems_dir(), root)
        print(f"Copied {len(copied)} example problem(s) into {root}/: {', '.join(p.name for p in copied) or 'none'}"
              f" (those already there were left as they are). Check them: judge check {root}")
        return EXIT_OK
    if not args.id:
        raise UsageError(_("judge new: give a problem id (or --examples to copy the example problems)"))
    try:
        written = scaffold(root, args.id, entry=args.entry, title=args.title)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    folder = root / args.id
    print(f"Created {folder}/:\n" + "".join(f"  {path.relative_to(folder).as_posix()}\n" for path in written)
          + f"Every FILL IN (instructor) line says what to replace (the example is a working problem). Then run:\n"
          f"  judge check {folder}")
    return EXIT_OK


def _new_problems_root() -> Path:
    """./problems, or the current folder when it is a problems folder (never problems/problems/ID)."""
    here = Path.cwd()
    return Path(".") if here.name == "problems" or holds_problems(here) else Path("problems")


def _run_build(args: argparse.Namespace) -> int:
    from .scaffold import inside_judge_package
    from .site.build import build_site

    if inside_judge_package(args.site_dir):
        raise UsageError(_("{path} is inside the judge's own package; write the site elsewhere")
                         .format(path=args.site_dir))
    from .site.course import COURSE_FILE, course_text

    problems = args.problems or default_problems_dir()
    if args.github_pages_workflow and (args.title or args.intro):
        raise UsageError(_("--github-pages-workflow: put the title and intro in {file} (title = \"...\", intro = "
                           "\"...\"), which the workflow's build reads too, instead of --title/--intro")
                         .format(file=problems / COURSE_FILE))
    only = None
    if args.assignment and args.github_pages_workflow:
        raise UsageError("--github-pages-workflow publishes every problem: build an assignment's site without it")
    if args.assignment:
        chosen, _assignment = _assignment_problems(args)
        only = [p.id for p in chosen]
    build_site(args.site_dir, pyodide=args.pyodide, problems_dir=problems,
               course=course_text(problems, args.title, args.intro), only=only)
    print(f"Wrote the site to {args.site_dir}/ (Pyodide: {args.pyodide}), with {args.site_dir}/_headers for "
          "Netlify and Cloudflare Pages.")
    if args.github_pages_workflow:
        print(_write_pages_workflow(args, problems))
    return EXIT_OK


def _write_pages_workflow(args: argparse.Namespace, problems: Path) -> str:
    """Write the GitHub Pages workflow for this build command into the current folder; what to tell."""
    from .site.publish import write_pages_workflow

    here = Path.cwd().resolve()
    site, source = args.site_dir.resolve(), problems.resolve()
    if here not in site.parents:
        raise UsageError(_("--github-pages-workflow: {path} must be inside the current folder (the repository's "
                           "root), e.g. `judge build site --github-pages-workflow`").format(path=args.site_dir))
    if source != here and here not in source.parents:
        raise UsageError(_("--github-pages-workflow: the problems ({path}) must be in the repository: run it from "
                           "the course folder that holds them").format(path=problems))
    given = None if source == (here / "problems") else source.relative_to(here).as_posix()
    wheel = _course_wheel(here, source)
    try:
        path = write_pages_workflow(here, site.relative_to(here).as_posix(), args.pyodide, given, wheel)
    except FileExistsError as exc:
        raise UsageError(str(exc)) from None
    note = "" if (here / ".git").exists() else " (this folder is not a git repository's root: move it to the root)"
    return (f"Wrote {path.relative_to(here)} and {wheel} (the judge it installs){note}. Commit both with the "
            "problems, push, and in the repository's Settings > Pages set Source to GitHub Actions.")


def _course_wheel(repo: Path, problems: Path) -> str:
    """The judge's wheel, without solutions, in ``repo/.judge/wheels/`` (replacing an older one); its path there."""
    import tempfile

    from .export.wheels import prepare_wheels

    folder = repo / ".judge" / "wheels"
    with tempfile.TemporaryDirectory(prefix="judge-pages-") as scratch:
        [built] = prepare_wheels(Path(scratch), _load_problems(problems), None, None)
        folder.mkdir(parents=True, exist_ok=True)
        for old in folder.glob("pp_judge-*.whl"):
            old.unlink()
        (folder / built.name).write_bytes(built.read_bytes())
    return (folder / built.name).relative_to(repo).as_posix()


def _run_serve(args: argparse.Namespace) -> int:
    from .site.build import build_site
    from .site.serve import serve

    build_site(args.site_dir, pyodide=args.pyodide, problems_dir=args.problems or default_problems_dir())
    serve(args.site_dir, host=args.host, port=args.port)
    return EXIT_OK


def _run_grade(args: argparse.Namespace) -> int:
    from .assignments import DEFAULT_LATE_PENALTY
    from .grade import Options, grade_class
    from .grade.late import LatePolicy, parse_deadline, read_times

    problems, assignment = _assignment_problems(args, grading=True)
    problems = _only(problems, args.only)
    if not args.submissions.exists():
        raise UsageError(_("{path}: no such submissions folder or submission").format(path=args.submissions))
    _refuse_inside(args.out_dir, args.submissions)
    penalty = args.late_penalty if args.late_penalty is not None else (
        assignment.late_penalty if assignment else DEFAULT_LATE_PENALTY)
    try:
        deadline = parse_deadline(args.deadline) if args.deadline else (assignment.deadline if assignment else None)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    late = LatePolicy(deadline, penalty) if deadline else None
    try:
        times = read_times(args.times) if args.times else {}
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if args.moodle_worksheet is not None:
        from .grade.lms import read_worksheet
        read_worksheet(args.moodle_worksheet)  # refused before anything is judged
    options = Options(parallel=args.parallel, timeout=args.timeout, feedback=args.feedback, force=args.force,
                      late=late, similarity=args.similarity or None,
                      assignment=assignment.column if assignment else (args.assignment or "judge"),
                      zero_unreadable=args.zero_unreadable, moodle_worksheet=args.moodle_worksheet,
                      objective_threshold=args.objective_threshold, note=args.note, times=times,
                      engine=native_engine(args, problems, grading=True))
    if assignment is not None:
        due = f", due {assignment.deadline:%Y-%m-%d %H:%M} ({penalty:g} % off per started day late)" if deadline else ""
        print(f"Assignment {assignment.name}: {', '.join(p.id for p in problems)}{due}.", file=sys.stderr)
    grades = grade_class(args.submissions, args.out_dir, problems, options, progress=sys.stderr)
    print(_grade_summary(grades, args.out_dir))
    return EXIT_OK


def _grade_summary(grades: ClassGrades, out: Path) -> str:
    from .grade.similarity import INSTALL_HINT

    unreadable = sum(bool(g.submission.error) for g in grades.graded)
    head = (f"Regraded {grades.regraded} ({grades.judged} judged); {len(grades.graded)} row(s) in the gradebook"
            if grades.regraded else f"Graded {len(grades.graded)} submission(s) ({grades.judged} judged, "
            f"{len(grades.graded) - grades.judged} unchanged)")
    similarity = (f" and {out / 'similarity.csv'}" if (out / "similarity.csv").is_file() and
                  grades.options.similarity is not None else "")
    missing = (f"\nSimilarity not computed: {INSTALL_HINT}" if grades.options.similarity is not None and
               not similarity else "")
    gradebook = f", {out / 'moodle-gradebook.csv'}" if (out / "moodle-gradebook.csv").is_file() else ""
    ungraded = [g for g in grades.graded if g.unreadable]
    if ungraded and not grades.options.zero_unreadable:
        missing += (f"\nNo grade for {len(ungraded)} submission(s) that could not be read (an empty cell in "
                    "grades.csv, canvas.csv and moodle.csv; --zero-unreadable gives them 0):"
                    + "".join(f"\n  {g.student}: {g.unreadable}" for g in ungraded))
    elif ungraded:
        missing += f"\n{len(ungraded)} submission(s) could not be read and score 0 (--zero-unreadable)."
    missing += "".join(f"\nNote: {note}" for note in grades.notes)
    return (f"{head} in {grades.seconds:.1f} s{f'; {unreadable} could not be read' if unreadable else ''}.\n"
            f"Wrote {out / 'grades.csv'}, {out / 'objectives.csv'}, {out / 'canvas.csv'}, {out / 'moodle.csv'}"
            f"{gradebook}, {out / 'report.html'}, {out / 'results'}/, {out / 'feedback'}/{similarity}.{missing}")


def _refuse_inside(out_dir: Path, submissions: Path) -> None:
    """The output folder must not be (inside) the submissions folder: it would be read as a submission."""
    out, subs = out_dir.resolve(), submissions.resolve()
    if subs.is_dir() and (out == subs or subs in out.parents):
        raise UsageError(_("{out} is inside the submissions folder {submissions}; choose another output folder")
                         .format(out=out_dir, submissions=submissions))


def _assignment_problems(args: argparse.Namespace, grading: bool = False) -> tuple[list[Problem], Assignment | None]:
    """The problems to work on and the course's assignment ``--assignment`` names (None: no assignment given, or
    for ``judge grade`` a course.toml without [[assignments]], where the name is only the LMS column's)."""
    from .assignments import choose, read_assignments

    folder = args.problems or default_problems_dir()
    problems = _load_problems(args.problems)
    name = getattr(args, "assignment", None)
    if not name or (grading and not read_assignments(folder)):
        return problems, None
    assignment, chosen = choose(folder, name, problems)
    return chosen, assignment


def _only(problems: list[Problem], only: list[str] | None) -> list[Problem]:
    """The problems ``--problem ID`` (repeated) names, in the set's order; all of them without the option."""
    if not only:
        return problems
    unknown = sorted(set(only) - {p.id for p in problems})
    if unknown:
        raise UsageError(_("--problem: unknown problem(s) {ids}").format(ids=", ".join(unknown)))
    return [p for p in problems if p.id in only]


def _run_export(args: argparse.Namespace) -> int:
    from .export import ExportOptions, export

    problems, assignment = _assignment_problems(args)
    problems = _only(problems, args.only)
    if args.platform != "gradescope" and args.out.exists():
        raise UsageError(_("{path} exists; give a new folder").format(path=args.out))
    options = ExportOptions(out=args.out, problems=problems, wheels=args.wheels, timeout=args.timeout,
                            feedback=args.feedback, python_version=args.python_version,
                            platform_tag=args.platform_tag, parallel=args.parallel, private_tests=args.private_tests,
                            tests_out=args.tests_out, image=args.image, lang=current_language())
    for line in export(args.platform, options):
        print(line)
    if assignment is not None:
        due = f"; due {assignment.deadline:%Y-%m-%d %H:%M}: set the due date on the platform" \
            if assignment.deadline else ""
        print(f"Assignment {assignment.name}" + (f" ({assignment.title})" if assignment.title else "")
              + f": {', '.join(p.id for p in problems)}{due}.")
    return EXIT_OK


_HANDLERS = {"judge": _run_judge, "check": _run_check, "new": _run_new, "build": _run_build, "serve": _run_serve,
             "grade": _run_grade, "export": _run_export}
