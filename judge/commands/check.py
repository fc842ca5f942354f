"""``python -m judge check``: an instructor's verification of problem folders.

For every problem folder: it validates; nothing in it still says ``FILL IN (instructor)`` (what ``judge new``
leaves for the instructor) and the statement no ``TODO``; every relative link and image of the
statement points at a file the learner has (the practice folder's layout, see
:func:`practice_paths`) and ``assets/`` publishes nothing private (:mod:`judge.core.assets`); the
reference passes every public and secret test (twice, with the same verdicts); the starter
fails at least one test; every ``wrong/`` solution fails the way it should (status ``failed``
unless it declares otherwise, caught by the tests it names, losing the share of the points it
declares; a ``.diff`` must still apply to the reference, see :mod:`judge.core.wrong`); the
reference's degenerate variants (:mod:`judge.core.degenerate`: raising, returning a constant,
doing nothing, skipping) earn no point; the reference runs well inside the time limit. When the
tests cannot import a module (most often: they import the entry under another name), that is
said once, and the starter and wrong solutions are not judged on it. Broken folders are
reported and the others still checked.
"""

from __future__ import annotations

import argparse
import ast
import difflib
import functools
import os
import re
import sys
import tempfile
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from ..artifacts import EXPECTED
from ..core import assets
from ..core.degenerate import degenerate_sources
from ..core.findings import Finding
from ..core.problem import Problem, ProblemError, discover_in
from ..core.result import Result, TestResult
from ..core.titles import untranslated_objectives, untranslated_tests
from ..core.wrong import WrongSolution, WrongSolutionError, load_wrong, unmet
from ..engines import Engine, EngineFor, Job, get_engine
from ..formats.terminal import Painter, use_colour
from ..i18n import _
from .hints import unmet_hints
from .options import (
    PROBLEMS_SOURCE,
    default_problems_dir,
    language_option,
    native_engine,
    positive,
    sandbox_options,
)
from .statements import DEFAULT_LANGUAGE, signatures, translations

TIME_BUDGET = 0.5  # the reference may use at most this fraction of the time limit
DEGENERATE = "degenerate: "  # the label of a degenerate variant of the reference (judge.core.degenerate)
SECOND_RUN = "reference (second run)"  # the label of the reference judged again (are the tests deterministic?)
FILL_IN = "FILL IN (instructor)"  # what `judge new` marks for the instructor to replace (a starter may
# well say "FILL IN" to learners: the marker is distinct)
MESSAGE_WIDTH = 150  # characters of a test's message shown without -v
FAILURES_SHOWN = 5  # failing reference tests listed without -v
_NO_MODULE = re.compile(r"No module named '([\w.]+)'")
DESCRIPTION = ("Verify problem folders: nothing left to FILL IN, the statement's links and images resolve, the "
               "reference passes every public and secret test, the starter and every wrong/ solution fail.")
EPILOG = PROBLEMS_SOURCE


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``judge check``'s options: the folders, how much to show, Pyodide and mutants, the sandbox."""
    parser.add_argument("paths", nargs="*", type=Path, metavar="PROBLEMS", help="problems folders or problem "
                        "folders, one or more (default: $JUDGE_PROBLEMS, else ./problems if it holds problems, "
                        "else the bundled set)")
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="show every failing test of every solution, with whole messages")
    parser.add_argument("-j", dest="parallel", type=positive, default=os.cpu_count() or 1, metavar="N",
                        help="run N solutions at a time (default: one per CPU core)")
    parser.add_argument("--pyodide", action="store_true",
                        help="also run every solution inside Pyodide (Node.js) and compare the Results")
    parser.add_argument("--mutants", action="store_true", help="also mutation-test the tests: judge mutants of "
                        "each reference and list those no test kills (accepted ones: "
                        "reference/equivalent-mutants.toml)")
    parser.add_argument("--mutants-budget", type=float, metavar="SECONDS",
                        help="with --mutants: stop judging mutants after SECONDS (the rest is reported as not judged)")
    sandbox_options(parser)
    language_option(parser, "the errors and the tests' messages")


def run(args: argparse.Namespace) -> int:
    """Check the problem folders, and with --pyodide and --mutants more."""
    roots = args.paths or [default_problems_dir()]
    native = functools.partial(native_engine, args, grading=False)  # at the level --sandbox asks for
    code = check_problems(roots, args.parallel, verbose=args.verbose, engine_for=native)
    if args.pyodide:
        from ..engines.pyodide import check_parity
        code = max(code, check_parity(roots, args.parallel, native_for=native))
    if args.mutants:
        from .mutants import check_mutants
        code = max(code, check_mutants(roots, args.parallel, budget=args.mutants_budget, verbose=args.verbose,
                                       engine_for=native))
    return code


@dataclass
class ProblemCheck:
    """The findings for one problem: failures make ``check`` exit 1, notes are informative.

    A finding's message may span lines (``-v`` lists every failing test under it).
    """

    problem: Problem
    failures: list[Finding] = field(default_factory=list)
    notes: list[Finding] = field(default_factory=list)
    verbose: bool = False
    shortened: bool = False  # some message was cut short (-v shows it whole)

    def excerpt(self, message: str) -> str:
        """``message`` whole with -v, else its first line cut at a word near MESSAGE_WIDTH characters."""
        text = (message or "").strip()
        if self.verbose or not text:
            return text
        first = text.splitlines()[0]
        cut = first if len(first) <= MESSAGE_WIDTH else _cut_at_word(first, MESSAGE_WIDTH)
        if cut != text:
            self.shortened = True
            return cut + " …"
        return cut


def check_problems(roots: Path | Sequence[Path], parallel: int = 1, stream: TextIO | None = None,
                   verbose: bool = False, engine_for: EngineFor | None = None) -> int:
    """Check every problem under ``roots`` (problems folders or problem folders); return the exit code.
    ``engine_for``: the native engine for the problems found (default: at the best sandbox level here)."""
    return check_and_report(roots, parallel, stream, verbose, engine_for)[0]


def check_and_report(roots: Path | Sequence[Path], parallel: int = 1, stream: TextIO | None = None,
                     verbose: bool = False, engine_for: EngineFor | None = None) -> tuple[int, list[ProblemCheck]]:
    """:func:`check_problems`, also returning the findings of every folder that loaded."""
    stream = sys.stdout if stream is None else stream  # the stdout of the call, not of the import
    paint = Painter(use_colour(stream))
    try:
        problems, errors = discover_in(roots)
    except ProblemError as exc:
        stream.write(_("error: {message}").format(message=exc) + "\n")
        return 2, []
    where = ", ".join(str(root) for root in ([roots] if isinstance(roots, Path) else roots))
    stream.write(f"Checking {len(problems) + len(errors)} problem folder(s) in {where}\n")
    for error in errors:
        stream.write(f"{paint('INVALID', 'failed')} {error}\n")
    checks = run_checks(problems, parallel, verbose, engine_for(problems) if engine_for else None)
    language_notes(checks)
    for check in checks:
        _write_check(stream, paint, check)
    bad = len(errors) + sum(bool(c.failures) for c in checks)
    stream.write(f"{len(checks) + len(errors) - bad} of {len(checks) + len(errors)} problem folders OK.\n")
    if any(c.shortened for c in checks):
        stream.write("Messages ending in … are cut short: `judge check -v` shows them whole, for every failing test.\n")
    return (1 if bad else 0), checks


def _write_check(stream: TextIO, paint: Painter, check: ProblemCheck) -> None:
    ok = not check.failures
    stream.write(f"{paint('OK     ' if ok else 'FAILED ', 'passed' if ok else 'failed')} {check.problem.id}\n")
    for mark, lines in ((paint("x", "failed"), check.failures), ("-", check.notes)):
        for finding in lines:
            first, *rest = str(finding).split("\n")
            stream.write(f"    {mark} {first}\n" + "".join(f"        {more}\n" for more in rest))


def run_checks(problems: list[Problem], parallel: int = 1, verbose: bool = False,
               engine: Engine | None = None) -> list[ProblemCheck]:
    """Judge every solution of every problem (natively, secret tests included) and assess them."""
    jobs: list[Job] = []
    plan: list[tuple[Problem, str]] = []
    wrongs: dict[str, list[WrongSolution | WrongSolutionError]] = {}
    with tempfile.TemporaryDirectory(prefix="judge-check-") as tmp:
        for problem in problems:
            wrongs[problem.id] = loaded_wrongs(problem)
            for label, job in check_jobs(problem, wrongs[problem.id], Path(tmp) / problem.id):
                jobs.append(job)
                plan.append((problem, label))
        results = (engine or get_engine("native")).judge(jobs, parallel)
    by_problem: dict[str, dict[str, Result]] = {}
    for (problem, label), result in zip(plan, results, strict=True):
        by_problem.setdefault(problem.id, {})[label] = result
    return [assess(problem, by_problem[problem.id], wrongs[problem.id], verbose) for problem in problems]


def check_jobs(problem: Problem, wrongs: Sequence[WrongSolution | WrongSolutionError],
               folder: Path) -> list[tuple[str, Job]]:
    """The solutions check judges for ``problem``, by the label :func:`assess` knows them by: the reference
    twice (the second run shows whether the tests are deterministic), the starter, each wrong solution that
    loaded (a ``.diff`` written out as the patched reference under ``folder``) and the degenerate ones."""
    solutions = [("reference", problem.reference_path), (SECOND_RUN, problem.reference_path),
                 ("starter", problem.starter_path)]
    solutions += [(w.label, _source_file(w, folder)) for w in wrongs if isinstance(w, WrongSolution)]
    jobs = [(label, Job(problem, path, include_secret=True)) for label, path in solutions]
    return jobs + [(label, Job(problem, source=source, include_secret=True))
                   for label, source in _degenerate(problem).items()]


def _degenerate(problem: Problem) -> dict[str, str]:
    """The reference's degenerate variants by label (none when it cannot be read or parsed: said elsewhere)."""
    if problem.reference_path is None:
        return {}
    try:
        sources = degenerate_sources(problem.reference_path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
        return {}
    return {f"{DEGENERATE}{label}": source for label, source in sources.items()}


def loaded_wrongs(problem: Problem) -> list[WrongSolution | WrongSolutionError]:
    """The problem's wrong solutions, each loaded or the error that says why it does not load."""
    return [_load_wrong(problem, path) for path in problem.wrong_files]


def _load_wrong(problem: Problem, path: Path) -> WrongSolution | WrongSolutionError:
    try:
        return load_wrong(problem, path)
    except WrongSolutionError as exc:
        return exc


def _source_file(wrong: WrongSolution, folder: Path) -> Path:
    """The wrong solution's code as a file (a ``.diff`` is judged as the patched reference)."""
    if wrong.path.suffix == ".py":
        return wrong.path
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / (wrong.path.stem + ".py")
    path.write_text(wrong.source, encoding="utf-8")
    return path


def assess(problem: Problem, results: dict[str, Result],
           wrongs: list[WrongSolution | WrongSolutionError] | None = None, verbose: bool = False) -> ProblemCheck:
    """Turn the Results of one problem's solutions into findings."""
    check = ProblemCheck(problem, verbose=verbose)
    check_files(check)
    missing = _assess_reference(check, results)
    if wrongs is None:
        wrongs = loaded_wrongs(problem)
    if not wrongs:
        check.failures.append(Finding("no-wrong-solutions", "wrong", 0, "no wrong/ solutions: add at least one "
                                      "known-wrong solution per common mistake"))
    solutions: list[tuple[str, Result, WrongSolution | None]] = [("starter", results["starter"], None)]
    for wrong in wrongs:
        if isinstance(wrong, WrongSolutionError):
            check.failures.append(Finding("invalid-wrong-solution", message=str(wrong)))
        else:
            solutions.append((wrong.label, results[wrong.label], wrong))
    for label, result, wrong_solution in solutions:
        blocked = _blocked_by(result, missing)
        if blocked:
            check.notes.append(Finding("not-judged", message=f"{label} not judged: its tests fail only because they "
                                       f"cannot import `{blocked}` (see above)"))
        elif wrong_solution is None:
            _expect_failure(check, label, result, "make the starter import and run but fail "
                            "(e.g. raise NotImplementedError)")
        else:
            _expect_wrong(check, wrong_solution, result)
    _expect_nothing_earned(check, {label: r for label, r in results.items() if label.startswith(DEGENERATE)})
    check.failures += secret_expected(results)
    return check


def secret_expected(results: dict[str, Result]) -> list[Finding]:
    """Secret tests that record an expected timeline (``record_property("expected", ...)``): their
    expected orders are not the learner's to see, and a secret test's Result reaches other outputs
    than the page and the terminal (which never draw it). One finding per test, whichever run showed it."""
    found: dict[str, str] = {}
    for label, result in results.items():
        for test in result.tests:
            if test.visibility == "secret" and any(a.get("name") == EXPECTED for a in test.artifacts):
                found.setdefault(test.id, label)
    return [Finding("secret-expected-timeline", test_id.split("::", 1)[0], 0,
                    f"secret test {test_id} records an expected timeline (record_property({EXPECTED!r}, ...), "
                    f"seen with the {label}): record one only in public tests, whose expected order the learner "
                    "has anyway")
            for test_id, label in found.items()]


def _expect_nothing_earned(check: ProblemCheck, results: dict[str, Result]) -> None:
    """Every degenerate variant of the reference earns 0 points (:mod:`judge.core.degenerate`)."""
    earning = {label: r for label, r in results.items() if r.points > 0}
    for label, result in earning.items():
        passing = [t.id.split("::", 1)[-1] for t in result.tests if t.outcome == "passed"]
        shown = ", ".join(passing[:3]) + (f" and {len(passing) - 3} more" if len(passing) > 3 else "")
        check.failures.append(Finding("degenerate-earns", message=f"{label} earns {result.points:g} of "
                                      f"{result.max_points:g} points: {shown} pass without the work (make each test "
                                      "check what the code produced, or put argument checks in an objective that "
                                      "requires the others)"))
    if results and not earning:
        kinds = ", ".join(label[len(DEGENERATE):] for label in results)
        check.notes.append(Finding("degenerate-earns-nothing", message=f"degenerate solutions ({kinds}) earn 0 points"))


# ---------------------------------------------------------------------------------------------
# the files: FILL IN markers, the statement's links, assets


def check_files(check: ProblemCheck) -> None:
    """Findings that need no run: what is left to fill in, the statement's links, the assets."""
    problem = check.problem
    check.failures += fill_ins(problem.path)
    if "TODO" in problem.statement:
        check.failures.append(Finding("todo", "README.md", 0, "README.md still contains TODO: write the statement"))
    _check_links(check, "README.md", problem.statement)
    _check_translations(check)
    check.failures += [Finding("leaking-asset", message=m) for m in assets.leaks(problem.path)]
    check.notes += cut_test_names(problem)
    check.failures += untranslated_titles(problem)


def untranslated_titles(problem: Problem) -> list[Finding]:
    """Tests and objectives of a translated problem without a title in each of its statement's languages:
    the learner reading that language would see them in English (judge.core.titles)."""
    tests = [*problem.public_test_files, *problem.secret_test_files]
    languages = list(translations(problem.path))
    return [*untranslated_objectives(problem.objectives, languages),
            *untranslated_tests(problem.path, tests, languages)]


def cut_test_names(problem: Problem) -> list[Finding]:
    """Tests whose docstring's first line runs on into the next: reports name a test by that first
    line alone, so its name would stop mid-sentence."""
    found = []
    for path in [*problem.public_test_files, *problem.secret_test_files]:
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
            continue  # the reference's run reports a test file that does not load
        for node in ast.walk(tree):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or not node.name.startswith("test"):
                continue
            lines = (ast.get_docstring(node) or "").splitlines()
            if len(lines) > 1 and lines[1].strip():
                rel = path.relative_to(problem.path).as_posix()
                found.append(Finding("cut-test-name", rel, node.lineno, f"{node.name}'s name in reports (its "
                                     f"docstring's first line) stops mid-sentence: {lines[0].strip()!r}; make that "
                                     "line a short title and put the rest after a blank line"))
    return found


def fill_ins(folder: Path) -> list[Finding]:
    """Every line of the problem folder's text files that still has the FILL_IN marker, with what to do."""
    found = []
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder)
        if not path.is_file() or any(part.startswith(".") or part == "__pycache__" for part in rel.parts):
            continue
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError):
            continue
        for number, line in enumerate(lines, 1):
            if FILL_IN in line:
                todo = line.split(FILL_IN, 1)[1].lstrip(" :").rstrip(" \"'#-")
                found.append(Finding("fill-in", rel.as_posix(), number, f"fill in: {todo or 'replace the example'}"))
    return found


def practice_paths(problem: Problem) -> set[str]:
    """The files and folders of ``practice/<id>/`` (see :func:`judge.commands.practice.create_practice`),
    where learners read README.md: its relative links must resolve there."""
    files = {problem.entry, "README.md", *(p.name for p in translations(problem.path).values())}
    files |= {f"tests/{p.name}" for p in problem.public_test_files}
    files |= {p.name for p in problem.support_files}
    files |= {p.relative_to(problem.path).as_posix() for p in assets.asset_files(problem.path)}
    folders = {"."} | {parent.as_posix() for f in files for parent in Path(f).parents if parent.as_posix() != "."}
    return files | folders


def _check_translations(check: ProblemCheck) -> None:
    """Each README.<lang>.md: readable, no TODO, its links resolve, its code blocks' function signatures
    are the default statement's; a note lists the languages and links that differ from the default's."""
    found = translations(check.problem.path)
    if not found:
        return
    default = check.problem.statement
    for path in found.values():
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            check.failures.append(Finding("unreadable-translation", path.name, 0,
                                          f"{path.name} cannot be read as UTF-8 text: {exc}"))
            continue
        if "TODO" in text:
            check.failures.append(Finding("todo", path.name, 0,
                                          f"{path.name} still contains TODO: finish the translation"))
        _check_links(check, path.name, text)
        check.failures += _signature_differences(path.name, signatures(text), signatures(default))
        check.notes += _target_differences(path.name, _targets(text), _targets(default))
    check.notes.append(Finding("statement-languages", message="statement languages: " + ", ".join(
        [f"{DEFAULT_LANGUAGE} (README.md)", *(f"{lang} ({path.name})" for lang, path in found.items())])))


def _signature_differences(name: str, theirs: list[str], default: list[str]) -> list[Finding]:
    if theirs == default:
        return []
    missing = [s for s in default if s not in theirs]
    extra = [s for s in theirs if s not in default]
    detail = "; ".join([*(f"missing: {s}" for s in missing), *(f"not in README.md: {s}" for s in extra)])
    return [Finding("signature-mismatch", name, 0, f"{name}: its code blocks' function signatures are not "
                    f"README.md's ({detail or 'another order'}): a translation shows the same code")]


def _target_differences(name: str, theirs: set[str], default: set[str]) -> list[Finding]:
    if theirs == default:
        return []
    only = ", ".join(sorted(theirs - default)) or "-"
    lacking = ", ".join(sorted(default - theirs)) or "-"
    return [Finding("link-targets-differ", name, 0,
                    f"{name} links to other files than README.md (only here: {only}; only in README.md: {lacking})")]


def _targets(text: str) -> set[str]:
    from .site.markdown import relative_path, statement_links

    return {path for link in statement_links(text) if (path := relative_path(link.url)) is not None}


def language_notes(checks: Sequence[ProblemCheck]) -> None:
    """A problem without a language other problems have: its readers get README.md (a note, never a failure)."""
    languages = {lang for c in checks for lang in translations(c.problem.path)}
    for check in checks:
        for lang in sorted(languages - translations(check.problem.path).keys()):
            check.notes.append(Finding("missing-translation", message=f"no README.{lang}.md: readers of {lang} get "
                                       "README.md (English)"))


def _check_links(check: ProblemCheck, name: str, text: str) -> None:
    from .site.markdown import relative_path, statement_links

    paths = practice_paths(check.problem)
    for link in statement_links(text):
        what = f"the {link.kind} {link.url}"
        path = relative_path(link.url)
        if path is None:
            if link.kind == "image" and link.url.startswith(("http://", "https://")):
                check.notes.append(Finding("remote-image", name, link.line, f"{what} comes from another site: the "
                                           "web app (cross-origin isolated) shows it only if that server sends "
                                           "Cross-Origin-Resource-Policy; a copy in assets/ always shows"))
            continue
        if path not in paths:
            check.failures.append(Finding("broken-link", name, link.line,
                                          f"{what} {_why_missing(check.problem, path, paths)}"))
        elif not path.startswith("assets/") and path != ".":
            check.notes.append(Finding("link-not-on-site", name, link.line, f"{what} works in the practice "
                                       "folder, but the web site serves only assets/: move the file there for the "
                                       "link to work on the site too"))


def _why_missing(problem: Problem, path: str, paths: set[str]) -> str:
    if path == ".." or path.startswith("../"):
        return "points outside the problem folder: put the file in assets/ (or link a full URL)"
    if path.split("/")[0] in ("reference", "wrong") or path.startswith("tests/secret"):
        return f"points at {path}, which is never published: learners cannot open it"
    close = difflib.get_close_matches(path, sorted(paths), n=1, cutoff=0.6)
    hint = f"; did you mean {close[0]}?" if close else "; add it to assets/ (or fix the link)"
    if (problem.path / path).exists():
        return (f"points at {path}, which is in the problem folder but not in the learner's practice folder, "
                f"where README.md is read (practice/{problem.id}/){hint}")
    return f"points at {path}, which does not exist{hint}"


# ---------------------------------------------------------------------------------------------
# the reference


def _assess_reference(check: ProblemCheck, results: dict[str, Result]) -> set[str]:
    """Findings about the reference; returns the modules its tests could not import."""
    problem, reference = check.problem, results["reference"]
    missing: set[str] = set()
    if reference.status != "passed":
        missing = _missing_modules(reference) - {problem.module_name}
        check.failures += [Finding("import-failure", message=_import_failure(problem, module))
                           for module in sorted(missing)]
        check.failures.append(Finding("reference-fails", message=_reference_failure(check, reference)))
    else:
        # the limit counts CPU time natively (docs/hostile-input.md): so does the budget, whatever the load
        used = reference.cpu_seconds or reference.duration
        clock = "of CPU time" if reference.cpu_seconds else "of wall-clock time"
        share = used / problem.time_limit
        line = (f"reference passes {reference.passed}/{reference.total} tests in {used:.2f} s {clock}, "
                f"{share:.0%} of the {problem.time_limit:g} s limit")
        if share > TIME_BUDGET:
            check.failures.append(Finding("reference-slow", message=f"{line} (more than {TIME_BUDGET:.0%}: raise "
                                          "time_limit or speed the tests up)"))
        else:
            check.notes.append(Finding("reference-time", message=line))
        check.failures += [Finding("objective-without-tests", "problem.toml", 0, f"objective {o.id!r} ({o.title}) "
                                   "has no tests: no test matches its patterns")
                           for o in reference.objectives if o.total == 0]
    if _verdicts(reference) != _verdicts(results[SECOND_RUN]):
        check.failures.append(Finding("nondeterministic", message="two runs of the reference gave different verdicts: "
                                      "the tests are not deterministic"))
    return missing


def _reference_failure(check: ProblemCheck, reference: Result) -> str:
    failing = _failing(reference)
    kinds = Counter(t.visibility for t in failing)
    which = " and ".join(f"{kinds[v]} {v}" for v in ("public", "secret") if kinds[v])
    line = f"the reference does not pass (status {reference.status})"
    if failing:
        line += f": {len(failing)} of {reference.total} tests failed ({which})"
    elif reference.message:
        line += f": {check.excerpt(reference.message)}"
    shown = failing if check.verbose else failing[:FAILURES_SHOWN]
    line += "".join(f"\n{_test_line(check, t)}" for t in shown)
    if len(shown) < len(failing):
        check.shortened = True
        line += f"\n… and {len(failing) - len(shown)} more"
    return line


def _missing_modules(result: Result) -> set[str]:
    texts = [result.message] + [t.message for t in _failing(result)]
    return {name.split(".")[0] for text in texts for name in _NO_MODULE.findall(text or "")}


def _import_failure(problem: Problem, module: str) -> str:
    """What to do when the tests cannot import ``module``: usually the entry under another name."""
    importers = _importers(problem, module)
    who = (f"{', '.join(importers)} import{'s' if len(importers) == 1 else ''} it" if importers
           else "the reference or a helper imports it")
    return (f"the tests cannot import `{module}` ({who}): it is not the entry module `{problem.module_name}` "
            f"(entry = \"{problem.entry}\" in problem.toml), nor a support/ or test helper module, nor installed. "
            f"If the tests mean the learner's module, write `import {problem.module_name}`; or set "
            f"entry = \"{module}.py\" and rename starter/{problem.entry} and reference/{problem.entry} to match")


def _importers(problem: Problem, module: str) -> list[str]:
    """``file:line`` of every import of ``module`` in the tests and support modules."""
    found = []
    for path in problem.public_test_files + problem.secret_test_files + problem.support_files:
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (OSError, SyntaxError, UnicodeDecodeError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Import | ast.ImportFrom) and module in _imported(node):
                found.append(f"{path.relative_to(problem.path).as_posix()}:{node.lineno}")
    return found


def _imported(node: ast.Import | ast.ImportFrom) -> set[str]:
    """The top-level modules an import statement imports (none for a relative import)."""
    if isinstance(node, ast.Import):
        return {alias.name.split(".")[0] for alias in node.names}
    return {node.module.split(".")[0]} if node.module and node.level == 0 else set()


def _blocked_by(result: Result, missing: set[str]) -> str | None:
    """The missing module that every failure of ``result`` is about, if there is one."""
    failing = _failing(result)
    for module in sorted(missing):
        needle = f"No module named '{module}"
        if failing and all(needle in (t.message or "") for t in failing):
            return module
    return None


# ---------------------------------------------------------------------------------------------
# the starter and the wrong solutions


def _expect_wrong(check: ProblemCheck, wrong: WrongSolution, result: Result) -> None:
    check.failures += [Finding("unmet-hint", wrong.label, 0, m) for m in unmet_hints(wrong.path, result)]
    if result.status == "passed":
        check.failures.append(Finding("passes-every-test", wrong.label, 0, f"{wrong.label} passes every test, but "
                                      "it must fail at least one: add a test that catches this mistake"))
        return
    problems = unmet(wrong.expectation, result, check.excerpt)
    if not problems:
        _expect_failure(check, wrong.label, result, "")
        return
    hint = ("; a wrong solution must import and run, and fail a test that catches its mistake "
            f"(or declare what it does instead: `# judge: expect status={result.status}`)"
            if result.status != wrong.expectation.status == "failed" else "")
    check.failures.append(Finding("unmet-expectation", wrong.label, 0, f"{wrong.label} " + "; ".join(problems) + hint))


def _expect_failure(check: ProblemCheck, label: str, result: Result, advice: str) -> None:
    if result.status == "passed":
        check.failures.append(Finding("passes-every-test", message=f"{label} passes every test, but it must fail at "
                                      f"least one: {advice}"))
        return
    failing = _failing(result)
    line = f"{label} fails as it should (status {result.status})"
    if failing:
        line += f": {len(failing)} of {result.total} tests failed"
    if result.max_points:
        line += f", keeps {result.points / result.max_points:.0%} of the points"
    if check.verbose:
        line += "".join(f"\n{_test_line(check, t)}" for t in failing) or f"\n{result.message}"
    elif failing:
        line += f"; {_test_line(check, failing[0])}"
    elif result.message:
        line += f": {check.excerpt(result.message)}"
    check.notes.append(Finding("fails-as-expected", message=line))


def _test_line(check: ProblemCheck, test: TestResult) -> str:
    """A failing test: its id, whether it is public or secret, and its message."""
    message = check.excerpt(test.message) or test.outcome
    return f"{test.id.split('::', 1)[-1]} ({test.visibility}): " + message.replace("\n", "\n    ")


def _failing(result: Result) -> list[TestResult]:
    return [t for t in result.tests if t.outcome in ("failed", "error")]


def _cut_at_word(text: str, width: int) -> str:
    cut = text[:width]
    space = cut.rfind(" ")
    return cut[:space].rstrip(" ,;:") if space > width // 2 else cut


def _verdicts(result: Result) -> list[tuple[str, str]]:
    return [(t.id, t.outcome) for t in result.tests] + [("status", result.status)]
