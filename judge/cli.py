"""The command line: ``python -m judge`` (also installed as ``judge``).

    judge PATH [options]          judge a practice folder (created from the starters if missing)
    judge check [PROBLEMS]        verify problem folders (instructors)
    judge new ID                  scaffold a problem folder
    judge build SITE_DIR          write the static web site
    judge serve                   build and serve the site on localhost

Exit codes: 0 everything passed, 1 something failed, 2 usage or setup error.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from . import __version__
from .problem import Problem, ProblemError, discover_problems

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
_COMMANDS = ("check", "new", "build", "serve")


def default_problems_dir() -> Path:
    """The problems shipped with the package (wheel install) or the clone's problems/ folder."""
    if os.environ.get("JUDGE_PROBLEMS"):
        return Path(os.environ["JUDGE_PROBLEMS"])
    here = Path(__file__).resolve().parent
    bundled = here / "_problems"
    return bundled if bundled.is_dir() else here.parent / "problems"


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    command = argv[0] if argv and argv[0] in _COMMANDS else "judge"
    if command != "judge":
        argv = argv[1:]
    parser = _parsers()[command]
    args = parser.parse_args(argv)
    try:
        return _HANDLERS[command](args)
    except (ProblemError, *_setup_errors()) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


def _setup_errors() -> tuple[type[Exception], ...]:
    """Errors that mean the set-up is wrong (a build or download failed), reported without a traceback."""
    from .parity import HarnessError
    from .site.build import BuildError
    from .site.pyodide_dist import DistributionError

    return BuildError, DistributionError, HarnessError


def _parsers() -> dict[str, argparse.ArgumentParser]:
    judge = argparse.ArgumentParser(
        prog="judge", description="Judge your solutions to the pipeline-parallelism exercises.",
        epilog="Other commands: judge check | new | build | serve (each has --help).")
    judge.add_argument("path", metavar="PATH", help="a practice folder (created from the starters if "
                       "missing), or one problem's folder inside it, e.g. practice/pp-schedule")
    judge.add_argument("-k", dest="keyword", metavar="TEXT", help="only run tests matching TEXT (pytest -k)")
    judge.add_argument("--json", type=Path, metavar="FILE", help="write the Results as JSON to FILE")
    judge.add_argument("--junit", type=Path, metavar="FILE", help="write JUnit XML to FILE")
    judge.add_argument("--watch", action="store_true", help="judge again whenever a solution is saved")
    judge.add_argument("--public-only", action="store_true", help="run only the public tests (as the browser does)")
    _common(judge)
    judge.add_argument("-v", "--verbose", action="store_true", help="list passing tests and draw timelines")

    check = argparse.ArgumentParser(prog="judge check", description="Verify problem folders: the reference "
                                    "passes, the starter and every wrong/ solution fail.")
    check.add_argument("path", nargs="?", type=Path, metavar="PROBLEMS",
                       help="a problems folder or one problem folder (default: the project's problems/)")
    check.add_argument("-j", dest="parallel", type=_positive, default=os.cpu_count() or 1, metavar="N",
                       help="run N solutions at a time (default: one per CPU core)")
    check.add_argument("--pyodide", action="store_true",
                       help="also run every solution inside Pyodide (Node.js) and compare the Results")

    new = argparse.ArgumentParser(prog="judge new", description="Scaffold a new problem folder.")
    new.add_argument("id", help="the problem id (lowercase letters, digits and '-')")
    new.add_argument("--problems", type=Path, metavar="DIR", help="where to create it (default: problems/)")

    build = argparse.ArgumentParser(prog="judge build", description="Write the static web site.")
    build.add_argument("site_dir", type=Path, metavar="SITE_DIR")
    build.add_argument("--pyodide", choices=("self", "cdn"), default="self",
                       help="self: ship a trimmed Pyodide (offline); cdn: load it from the official CDN")
    build.add_argument("--problems", type=Path, metavar="DIR", help="problems folder (default: problems/)")

    serve = argparse.ArgumentParser(prog="judge serve", description="Build the site and serve it on localhost.")
    serve.add_argument("--site-dir", type=Path, default=Path("site"), metavar="DIR")
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--pyodide", choices=("self", "cdn"), default="self")
    serve.add_argument("--problems", type=Path, metavar="DIR")
    for parser in (judge, check, new, build, serve):
        parser.add_argument("--version", action="version", version=f"judge {__version__}")
    return {"judge": judge, "check": check, "new": new, "build": build, "serve": serve}


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--problems", type=Path, metavar="DIR", help="where the problems come from "
                        "(default: the project's problems/)")
    parser.add_argument("-j", dest="parallel", type=_positive, default=os.cpu_count() or 1, metavar="N",
                        help="judge N problems in parallel (default: one per CPU core)")
    parser.add_argument("--timeout", type=float, metavar="SECONDS", help="override every problem's time limit")


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def _load_problems(folder: Path | None) -> list[Problem]:
    root = folder or default_problems_dir()
    problems, errors = discover_problems(root)
    for error in errors:
        print(f"warning: skipping a broken problem folder: {error}", file=sys.stderr)
    if not problems:
        raise ProblemError(f"{root}: no valid problem folders found")
    return problems


def _run_judge(args: argparse.Namespace) -> int:
    from .native import Job, judge_many
    from .practice import create_practice, find_solutions
    from .report import print_report, write_json, write_junit

    problems = _load_problems(args.problems)
    target = Path(args.path)
    if target.exists() and not target.is_dir():
        print(f"error: {target} is a file; give the practice folder (or one problem's folder in it)", file=sys.stderr)
        return EXIT_USAGE
    if not target.exists() or _is_practice_root(target, problems):
        created = create_practice(target, problems)
        if created:
            print(f"Created {len(created)} problem folder(s) in {target}/ from the starters: "
                  f"{', '.join(p.name for p in created)}.\nEdit the entry file in each (for example "
                  f"{created[0] / problems[0].entry if len(created) == len(problems) else created[0]}) and run "
                  f"`python -m judge {args.path}` again.\n")
    workspace = find_solutions(target, problems)
    for warning in workspace.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    if not workspace.solutions:
        print(f"error: no solutions found in {target} (expected {target}/<problem-id>/<entry file>)", file=sys.stderr)
        return EXIT_USAGE

    def judge_once() -> int:
        jobs = [Job(problem, path, include_secret=not args.public_only, keyword=args.keyword,
                    time_limit=args.timeout) for problem, path in workspace.solutions]
        results = judge_many(jobs, args.parallel)
        print_report(results, verbose=args.verbose)
        if args.json:
            write_json(results, args.json)
        if args.junit:
            write_junit(results, args.junit)
        return EXIT_OK if all(r.status == "passed" for r in results) else EXIT_FAILED

    code = judge_once()
    if args.watch:
        from .watch import watch_and_rerun
        return watch_and_rerun([path for _, path in workspace.solutions], judge_once)
    return code


def _is_practice_root(target: Path, problems: list[Problem]) -> bool:
    ids = {p.id for p in problems}
    return target.is_dir() and target.name not in ids and any((target / i).is_dir() for i in ids)


def _run_check(args: argparse.Namespace) -> int:
    from .check import check_problems

    code = check_problems(args.path or default_problems_dir(), args.parallel)
    if args.pyodide:
        from .parity import check_parity
        code = max(code, check_parity(args.path or default_problems_dir(), args.parallel))
    return code


def _run_new(args: argparse.Namespace) -> int:
    from .scaffold import scaffold

    try:
        folder = scaffold(args.problems or default_problems_dir(), args.id)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    print(f"Created {folder}. Fill it in, then run: python -m judge check {folder}")
    return EXIT_OK


def _run_build(args: argparse.Namespace) -> int:
    from .site.build import build_site

    build_site(args.site_dir, pyodide=args.pyodide, problems_dir=args.problems or default_problems_dir())
    print(f"Wrote the site to {args.site_dir}/ (Pyodide: {args.pyodide}).")
    return EXIT_OK


def _run_serve(args: argparse.Namespace) -> int:
    from .site.build import build_site
    from .site.serve import serve

    build_site(args.site_dir, pyodide=args.pyodide, problems_dir=args.problems or default_problems_dir())
    serve(args.site_dir, host=args.host, port=args.port)
    return EXIT_OK


_HANDLERS = {"judge": _run_judge, "check": _run_check, "new": _run_new, "build": _run_build, "serve": _run_serve}
