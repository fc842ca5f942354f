"""``judge PATH``: the learner's practice folder: create it from the starters, find the solutions in it, judge them.

``practice/<problem-id>/`` holds the learner's entry file, the statement and a copy of the public
tests to read, and ``practice/judge.py`` is a launcher: ``python practice/judge.py [options]`` does
what ``python -m judge practice/ [options]`` does. Creating it never overwrites a file that exists;
the verdict always comes from the canonical tests in the problem folder, so a copy that was edited only earns a warning.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..core.assets import asset_files
from ..core.errors import ExitCode, UsageError
from ..core.problem import Problem
from ..formats import FORMATS, FormatContext
from ..i18n import _, current_language, ngettext
from . import COMMANDS, DEFAULT
from .options import (
    bundled_problems_dir,
    common_options,
    default_problems_dir,
    holds_problems,
    language_option,
    load_problems,
    native_engine,
)
from .statements import statement_file, translations

DESCRIPTION = "Judge your solutions to the pipeline-parallelism exercises."
EPILOG = f"Other commands: judge {' | '.join(name for name in COMMANDS if name != DEFAULT)} (each has --help)."


@dataclass
class Workspace:
    """What was found in a practice folder: solutions to judge, and things to warn about."""

    solutions: list[tuple[Problem, Path]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)  # folders that are not problems of the set, skipped
    created: list[Path] = field(default_factory=list)


LAUNCHER = "judge.py"
_LAUNCHER_TEXT = '''"""Judge the exercises in this folder: `python judge.py [options]` = `python -m judge DIR [options]`

Written by the judge when it created this practice folder; the judge itself is the installed `judge` package.
"""

import importlib
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]  # this file is not the judge package

if __name__ != "__main__":  # imported as `judge` (python -m judge ..., run in this folder): the real one instead
    del sys.modules[__name__]
    sys.modules[__name__] = importlib.import_module("judge")
else:
    try:
        from judge.commands.cli import main
    except ImportError:
        sys.exit("The judge is not installed here: install it (python -m pip install ...) as your course says.")
    # as a script, judge this folder; run as `python -m judge ...` in this folder, do just what was asked
    sys.exit(main([str(HERE), *sys.argv[1:]] if __spec__ is None else sys.argv[1:]))
'''


def create_practice(target: Path, problems: list[Problem]) -> list[Path]:
    """Create ``target/<id>/`` for every problem that lacks one, and the launcher; return the folders created."""
    created = []
    for problem in problems:
        folder = target / problem.id
        if folder.exists():
            continue
        (folder / "tests").mkdir(parents=True)
        (folder / problem.entry).write_text(problem.starter, encoding="utf-8")
        (folder / "README.md").write_text(problem.statement, encoding="utf-8")
        for path in translations(problem.path).values():  # README.zh.md...: the statement in other languages
            shutil.copyfile(path, folder / path.name)
        for path in problem.public_test_files + problem.support_files:
            shutil.copyfile(path, folder / ("tests" if path in problem.public_test_files else ".") / path.name)
        for path in asset_files(problem.path):  # what the statement's images and links point at
            (folder / path.relative_to(problem.path)).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, folder / path.relative_to(problem.path))
        created.append(folder)
    launcher = target / LAUNCHER
    if created and not launcher.exists():
        launcher.write_text(_LAUNCHER_TEXT, encoding="utf-8")
    return created


def find_solutions(target: Path, problems: list[Problem]) -> Workspace:
    """Find ``<dir>/<problem-id>/<entry>`` files under ``target`` (or ``target`` itself is one)."""
    by_id = {p.id: p for p in problems}
    workspace = Workspace()
    if target.resolve().name in by_id and not _holds_problem_folders(target, by_id):  # also "." inside one
        folders = [target]
    else:
        folders = sorted(p for p in target.iterdir() if p.is_dir() and not p.name.startswith((".", "_")))
    for folder in folders:
        problem = by_id.get(folder.resolve().name)
        if problem is None:
            workspace.unknown.append(folder.name)
            continue
        entry = folder / problem.entry
        if not entry.is_file():
            workspace.warnings.append(f"{folder}: no {problem.entry} in it; skipped")
            continue
        workspace.warnings.extend(modified_copies(folder, problem))
        workspace.solutions.append((problem, entry))
    workspace.solutions.sort(key=lambda item: (item[0].order, item[0].id))
    return workspace


def modified_copies(folder: Path, problem: Problem) -> list[str]:
    """Warnings for copied public tests or support modules that differ from the canonical ones."""
    warnings = []
    for path, copy in [(p, folder / "tests" / p.name) for p in problem.public_test_files] + \
                      [(p, folder / p.name) for p in problem.support_files]:
        if copy.is_file() and copy.read_bytes() != path.read_bytes():
            warnings.append(f"{copy} differs from the canonical copy; the verdict uses "
                            f"{path} (editing the copy changes nothing)")
    return warnings


def _holds_problem_folders(target: Path, by_id: dict[str, Problem]) -> bool:
    return any((target / pid).is_dir() for pid in by_id)


# ------------------------------------------------------------------------------------------- the command
def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``judge PATH``'s options: a practice folder, which tests, the output formats, the sandbox."""
    parser.add_argument("path", metavar="PATH", help="a practice folder (created from the starters if "
                        "missing), or one problem's folder inside it, e.g. practice/pp-schedule")
    parser.add_argument("-k", dest="keyword", metavar="TEXT", help="only run tests matching TEXT (pytest -k)")
    for fmt in FORMATS.values():
        parser.add_argument(fmt.option, dest=f"format_{fmt.dest}", type=Path, metavar=fmt.metavar, help=fmt.help)
    parser.add_argument("--watch", action="store_true", help="judge again whenever a solution is saved")
    parser.add_argument("--public-only", action="store_true",
                        help="run only the public tests (as the browser does)")
    common_options(parser)
    parser.add_argument("-v", "--verbose", action="store_true", help="list passing tests and draw timelines")
    language_option(parser)


def run(args: argparse.Namespace) -> int:
    """Judge the practice folder ``args.path`` (created from the starters when missing)."""
    from ..engines import Job
    from ..formats.terminal import ReportOptions, print_report

    # judging needs no reference (exported sets have none), and pytest compiles the tests it runs
    problems = load_problems(args.problems, published=True, compile_tests=False)
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
        return ExitCode.OK if all(r.status == "passed" for r in results) else ExitCode.FAILED

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
