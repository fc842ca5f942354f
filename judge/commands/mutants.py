"""``judge check --mutants``: how many realistic mistakes in the reference the problem's tests catch.

Mutants are made with Cosmic Ray's mutation operators (the ``cosmic-ray`` package, the ``mutants``
extra), used as a library: :func:`generate_mutants` asks each operator of :data:`OPERATORS` where it
can change the reference's text and builds one mutant per place. Cosmic Ray's own runner is not
used: every mutant is judged like learner code, through the engine interface (the native engine,
public and secret tests, ``-j`` at a time). A mutant is killed when its Result is not ``passed``.

A surviving mutant is either a gap in the tests or behaves exactly like the reference; the latter
are declared in ``reference/equivalent-mutants.toml`` (:class:`judge.core.problem.EquivalentMutant`,
matched by the code they change, never by a position). Unexplained survivors, declarations that
match no mutant any more (stale) and declared mutants the tests kill make the command fail.
"""

from __future__ import annotations

import ast
import difflib
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any, TextIO

from ..core.errors import JudgeError
from ..core.problem import EQUIVALENT_MUTANTS, EquivalentMutant, Problem, discover_in
from ..core.result import Result
from ..engines import Engine, EngineFor, Job, get_engine
from ..formats.terminal import Painter, use_colour

# Single mistakes a person makes, each as a Cosmic Ray operator. Left out: the cross products that only
# make type errors (``-`` into ``<<``, ``==`` into ``is``), which every test kills and which cost a run
# each, and the random VariableReplacer / VariableInserter.
_ARITHMETIC_SWAPS = ("Add_Sub", "Sub_Add", "Add_Mul", "Mul_Add", "Mul_Div", "Div_Mul", "Div_FloorDiv",
                     "FloorDiv_Div", "FloorDiv_Mod", "Mod_FloorDiv", "Pow_Mul", "BitAnd_BitOr", "BitOr_BitAnd",
                     "LShift_RShift", "RShift_LShift")
_COMPARISON_SWAPS = ("Eq_NotEq", "NotEq_Eq", "Lt_LtE", "LtE_Lt", "Gt_GtE", "GtE_Gt", "Lt_Gt", "Gt_Lt",
                     "LtE_GtE", "GtE_LtE", "Is_IsNot", "IsNot_Is")
OPERATORS = (
    *(f"core/ReplaceBinaryOperator_{swap}" for swap in _ARITHMETIC_SWAPS),
    *(f"core/ReplaceComparisonOperator_{swap}" for swap in _COMPARISON_SWAPS),
    "core/NumberReplacer",  # off by one, both ways
    "core/AddNot", "core/ReplaceUnaryOperator_Delete_Not", "core/ReplaceUnaryOperator_Delete_USub",
    "core/ReplaceTrueWithFalse", "core/ReplaceFalseWithTrue", "core/ReplaceAndWithOr", "core/ReplaceOrWithAnd",
    "core/ReplaceBreakWithContinue", "core/ReplaceContinueWithBreak", "core/ZeroIterationForLoop",
    "core/ExceptionReplacer", "core/RemoveDecorator",
)
MIN_MUTANT_LIMIT = 2.0  # seconds a mutant may always run (a mutant that loops is killed by its limit)
MUTANT_SLOWDOWN = 10  # ... or this many times the reference's run, whichever is longer (up to time_limit)
BATCH_PER_WORKER = 16  # mutants handed to the engine at a time, per -j: the time budget is checked between
PROGRESS_EVERY = 10.0  # seconds between progress lines
INSTALL_HINT = "pip install 'pp-judge[mutants]' (or pip install -e '.[mutants]' in a clone)"


@dataclass(frozen=True)
class Mutant:
    """One mutant of a reference: what changed, where, and its whole code."""

    operator: str  # a Cosmic Ray operator name, e.g. core/NumberReplacer
    occurrence: int  # which of that operator's places (how Cosmic Ray numbers them)
    line: int  # the first changed line of the reference (1-based)
    function: str | None  # the function (Class.method) holding that line; None at module level
    removed: tuple[str, ...]  # the reference's changed lines, whitespace-normalised
    added: tuple[str, ...]  # the same lines in the mutant, whitespace-normalised
    source: str
    diff: str  # unified diff against the reference

    @property
    def where(self) -> str:
        return f"{self.operator} in {self.function or 'module level'}, line {self.line}"


@dataclass
class MutationReport:
    """The mutants of one problem and what became of them."""

    problem: Problem
    mutants: list[Mutant]
    killed: list[tuple[Mutant, Result]] = field(default_factory=list)
    accepted: list[tuple[Mutant, EquivalentMutant]] = field(default_factory=list)
    survivors: list[Mutant] = field(default_factory=list)
    not_judged: list[Mutant] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)  # stale or wrong declarations, a failing reference
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return not (self.survivors or self.not_judged or self.failures)


# ---------------------------------------------------------------------------------------------
# generating mutants


def _library() -> tuple[Any, Any, Any]:
    """Cosmic Ray's plugin registry, its code mutator and its parser, or a message saying how to install it."""
    try:
        from cosmic_ray import ast as cosmic_ast
        from cosmic_ray import mutating, plugins
    except ImportError:
        raise JudgeError(f"judge check --mutants needs the cosmic-ray package: {INSTALL_HINT}") from None
    return plugins, mutating, cosmic_ast


def library_version() -> str:
    """The installed cosmic-ray's version."""
    return metadata.version("cosmic-ray")


def generate_mutants(source: str, filename: str = "reference.py",
                     operators: Sequence[str] = OPERATORS) -> list[Mutant]:
    """Every distinct mutant ``operators`` make of ``source``, in the order of the operators and places."""
    plugins, mutating, cosmic_ast = _library()
    unknown = sorted(set(operators) - set(plugins.operator_names()))
    if unknown:
        raise JudgeError(f"cosmic-ray {library_version()} has no operator {', '.join(unknown)}")
    instances = [(name, plugins.get_operator(name)()) for name in operators]
    places = _places(cosmic_ast, source, [operator for _, operator in instances])
    functions, in_annotation = _function_lines(source), _annotation_test(source)
    mutants: list[Mutant] = []
    seen = {source}
    for (name, operator), positions in zip(instances, places):
        for occurrence, position in enumerate(positions):
            if in_annotation(position[0]):
                continue  # a type hint: never run (or a TypeError at import), not a mistake in the code
            code = mutating.mutate_code(source, operator, occurrence)
            if code is None or code in seen:
                continue
            seen.add(code)
            mutants.append(_mutant(name, occurrence, source, code, filename, functions))
    return mutants


Position = tuple[tuple[int, int], tuple[int, int]]  # ((line, column), (end line, end column)), as Cosmic Ray gives


def _places(cosmic_ast: Any, source: str, operators: list[Any]) -> list[list[Position]]:
    """Where each operator can mutate ``source``, from one parse (Cosmic Ray numbers places in this order)."""
    places: list[list[Position]] = [[] for _ in operators]
    for node in cosmic_ast.ast_nodes(cosmic_ast.get_ast(source)):
        for index, operator in enumerate(operators):
            places[index] += operator.mutation_positions(node)
    return places


def _annotation_test(source: str) -> Callable[[tuple[int, int]], bool]:
    """A test of whether a (line, column) lies in a type annotation of ``source``."""
    lines = source.splitlines()

    def column(line: int, offset: int) -> int:  # ast counts UTF-8 bytes, Cosmic Ray characters
        return len(lines[line - 1].encode("utf-8")[:offset].decode("utf-8", errors="ignore"))

    spans = []
    for node in ast.walk(ast.parse(source)):
        hints = [getattr(node, "returns", None), getattr(node, "annotation", None)]
        for hint in (h for h in hints if isinstance(h, ast.expr)):
            end_line = hint.end_lineno or hint.lineno
            spans.append(((hint.lineno, column(hint.lineno, hint.col_offset)),
                          (end_line, column(end_line, hint.end_col_offset or 0))))
    return lambda place: any(start <= place < end for start, end in spans)


def _mutant(operator: str, occurrence: int, source: str, code: str, filename: str,
            functions: Callable[[int], str | None]) -> Mutant:
    old, new = source.splitlines(keepends=True), code.splitlines(keepends=True)
    changed = [op for op in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes() if op[0] != "equal"]
    first, last = changed[0], changed[-1]
    removed, added = "".join(old[first[1]:last[2]]), "".join(new[first[3]:last[4]])
    diff = "".join(difflib.unified_diff(old, new, f"reference/{filename}", f"mutant ({operator} #{occurrence})", n=1))
    line = first[1] + 1
    return Mutant(operator, occurrence, line, functions(line), code_lines(removed), code_lines(added), code, diff)


def code_lines(text: str) -> tuple[str, ...]:
    """The non-blank lines of ``text`` with their whitespace normalised (how code and mutants are compared)."""
    return tuple(" ".join(line.split()) for line in text.splitlines() if line.strip())


def _function_lines(source: str) -> Callable[[int], str | None]:
    """A lookup from a line number to the innermost function or class (qualified name) that holds it."""
    spans: list[tuple[int, int, str]] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                name = f"{prefix}{child.name}"
                first = min([child.lineno] + [d.lineno for d in child.decorator_list])
                spans.append((first, child.end_lineno or child.lineno, name))
                visit(child, name + ".")
            else:
                visit(child, prefix)

    visit(ast.parse(source), "")

    def lookup(line: int) -> str | None:
        holding = [span for span in spans if span[0] <= line <= span[1]]
        return max(holding, key=lambda span: span[0])[2] if holding else None

    return lookup


# ---------------------------------------------------------------------------------------------
# judging and assessing


def matches(declared: EquivalentMutant, mutant: Mutant) -> bool:
    """Whether ``declared`` describes ``mutant``: the same change (whitespace aside), in the function it names."""
    return (code_lines(declared.code) == mutant.removed and code_lines(declared.mutant) == mutant.added
            and declared.function in (None, mutant.function))


def assess(problem: Problem, mutants: list[Mutant], results: Sequence[Result | None]) -> MutationReport:
    """Sort the judged mutants (``results[i]`` for ``mutants[i]``, None when not judged) and check the declarations."""
    report = MutationReport(problem, mutants)
    for mutant, result in zip(mutants, results, strict=True):
        declared = next((d for d in problem.equivalent_mutants if matches(d, mutant)), None)
        if result is None:
            report.not_judged.append(mutant)
        elif result.status != "passed":
            report.killed.append((mutant, result))
        elif declared is not None:
            report.accepted.append((mutant, declared))
        else:
            report.survivors.append(mutant)
    if not report.not_judged:
        report.failures += _declaration_findings(report)
    return report


def _declaration_findings(report: MutationReport) -> list[str]:
    where = f"reference/{EQUIVALENT_MUTANTS}"
    findings = []
    used = {id(declared) for _, declared in report.accepted}
    for declared in report.problem.equivalent_mutants:
        if id(declared) in used:
            continue
        name = f"{where}: [[equivalent]] {declared.number} ({_describe(declared)})"
        killed = [result for mutant, result in report.killed if matches(declared, mutant)]
        if killed:
            findings.append(f"{name} is no equivalent: the tests kill it ({_killed_by(killed[0])}); remove it")
        else:
            findings.append(f"{name} is stale: no mutant of the reference makes that change any more; remove it")
    return findings


def _describe(declared: EquivalentMutant) -> str:
    change = f"`{' / '.join(code_lines(declared.code))}` -> `{' / '.join(code_lines(declared.mutant)) or '(removed)'}`"
    return f"{change} in {declared.function}" if declared.function else change


def _killed_by(result: Result) -> str:
    failing = [t.id.rsplit("::", 1)[-1] for t in result.tests if t.outcome in ("failed", "error")]
    if failing:
        return f"{failing[0]} fails" + (f", and {len(failing) - 1} more" if len(failing) > 1 else "")
    return f"status {result.status}"


def timed_out(result: Result) -> bool:
    """Whether the run, or one of its tests, was stopped by its time limit (a mutant that loops)."""
    return result.status == "timeout" or any(t.message.startswith("TestTimedOut") for t in result.tests)


def mutant_limit(problem: Problem, reference: Result) -> float:
    """Seconds one mutant may run: enough for a slower variant of the reference, little for an endless loop."""
    return min(problem.time_limit, max(MIN_MUTANT_LIMIT, MUTANT_SLOWDOWN * reference.duration))


def judge_mutants(problem: Problem, mutants: list[Mutant], limit: float, parallel: int,
                  deadline: float | None, progress: Callable[[int], None],
                  engine: Engine | None = None) -> list[Result | None]:
    """Judge ``mutants`` with the native engine (``engine``, else one at the best sandbox level here), a
    batch at a time; None for those left when ``deadline`` passed."""
    engine = engine or get_engine("native")
    results: list[Result | None] = []
    batch = max(1, parallel) * BATCH_PER_WORKER
    for start in range(0, len(mutants), batch):
        if deadline is not None and time.monotonic() >= deadline:
            return results + [None] * (len(mutants) - start)
        jobs = [Job(problem, source=m.source, include_secret=True, time_limit=limit,
                    label=f"{problem.id} mutant {m.operator} #{m.occurrence}") for m in mutants[start:start + batch]]
        results += engine.judge(jobs, parallel)
        progress(len(jobs))
    return results


# ---------------------------------------------------------------------------------------------
# the command


def check_mutants(roots: Path | Sequence[Path], parallel: int = 1, stream: TextIO | None = None,
                  progress: TextIO | None = sys.stderr, budget: float | None = None,
                  verbose: bool = False, engine_for: EngineFor | None = None) -> int:
    """Mutation-test every problem under ``roots``; write the report to ``stream`` (default: the call's
    ``sys.stdout``); return the exit code. ``engine_for``: the native engine for the problems found."""
    stream = sys.stdout if stream is None else stream
    started = time.monotonic()
    problems, _ = discover_in(roots)  # broken folders are the ordinary check's to report
    _library()
    paint = Painter(use_colour(stream))
    stream.write(f"Mutation testing {len(problems)} problem(s): cosmic-ray {library_version()} "
                 f"({len(OPERATORS)} operators), every mutant judged on the public and secret tests, "
                 f"{parallel} at a time\n")
    deadline = started + budget if budget is not None else None
    engine = engine_for(problems) if engine_for else get_engine("native")
    references = engine.judge([Job(p, p.reference_path, include_secret=True) for p in problems], parallel)
    reports = []
    for problem, reference in zip(problems, references):
        report = _check_one(problem, reference, parallel, deadline, _Progress(progress, problem.id), engine)
        _write_report(stream, paint, report, verbose)
        reports.append(report)
    _write_total(stream, reports, time.monotonic() - started, verbose)
    return 0 if all(r.ok for r in reports) else 1


def _check_one(problem: Problem, reference: Result, parallel: int, deadline: float | None,
               progress: _Progress, engine: Engine) -> MutationReport:
    started = time.monotonic()
    if reference.status != "passed":
        report = MutationReport(problem, [])
        report.failures.append(f"the reference does not pass (status {reference.status}): mutants are judged "
                               "against a passing reference; `judge check` says why")
        return report
    source = Path(problem.reference_path or "").read_text(encoding="utf-8")
    mutants = generate_mutants(source, problem.entry)
    progress.start(len(mutants))
    results = judge_mutants(problem, mutants, mutant_limit(problem, reference), parallel, deadline, progress.add,
                            engine)
    report = assess(problem, mutants, results)
    report.seconds = time.monotonic() - started
    return report


class _Progress:
    """Progress lines on stderr, at most every PROGRESS_EVERY seconds, so a long run shows it is alive."""

    def __init__(self, stream: TextIO | None, problem: str) -> None:
        self.stream, self.problem = stream, problem
        self.done = self.total = 0
        self.started = self.shown = time.monotonic()

    def start(self, total: int) -> None:
        self.total = total

    def add(self, judged: int) -> None:
        self.done += judged
        now = time.monotonic()
        if self.stream is not None and now - self.shown >= PROGRESS_EVERY and self.done < self.total:
            self.shown = now
            self.stream.write(f"  {self.problem}: {self.done} of {self.total} mutants judged "
                              f"({now - self.started:.0f} s)\n")
            self.stream.flush()


def _write_report(stream: TextIO, paint: Painter, report: MutationReport, verbose: bool) -> None:
    timeouts = sum(timed_out(result) for _, result in report.killed)
    line = (f"{len(report.mutants)} generated, {len(report.killed)} killed"
            + (f" ({timeouts} by a time limit)" if timeouts else "")
            + f", {len(report.accepted)} accepted as equivalent, {len(report.survivors)} survived"
            + (f", {len(report.not_judged)} not judged (time budget)" if report.not_judged else "")
            + f" in {report.seconds:.1f} s")
    mark = paint("OK     ", "passed") if report.ok else paint("FAILED ", "failed")
    stream.write(f"{mark} {report.problem.id} mutants: {line}\n")
    cross = paint("x", "failed")
    for mutant in report.survivors:
        stream.write(f"    {cross} survived: {mutant.where}\n")
        stream.write("".join(f"        {row}" for row in mutant.diff.splitlines(keepends=True)))
        if verbose:
            stream.write("      to accept it, add to " f"reference/{EQUIVALENT_MUTANTS}:\n"
                         + "".join(f"        {row}\n" for row in declaration(mutant).splitlines()))
    for failure in report.failures:
        stream.write(f"    {cross} {failure}\n")


def declaration(mutant: Mutant) -> str:
    """The ``[[equivalent]]`` table that accepts ``mutant``, to paste once its reason is written."""
    rows = ["[[equivalent]]"]
    if mutant.function:
        rows.append(f"function = {_toml_string(mutant.function)}")
    rows += [f"code = {_toml_string(chr(10).join(mutant.removed))}",
             f"mutant = {_toml_string(chr(10).join(mutant.added))}",
             'reason = "FILL IN (instructor): why this mutant behaves exactly like the reference"']
    return "\n".join(rows) + "\n"


def _toml_string(text: str) -> str:
    """``text`` as a TOML basic string (JSON's escapes are TOML's)."""
    import json

    return json.dumps(text, ensure_ascii=False)


def _write_total(stream: TextIO, reports: list[MutationReport], seconds: float, verbose: bool) -> None:
    count = {"generated": sum(len(r.mutants) for r in reports), "killed": sum(len(r.killed) for r in reports),
             "accepted as equivalent": sum(len(r.accepted) for r in reports),
             "survived": sum(len(r.survivors) for r in reports)}
    failing = sum(not r.ok for r in reports)
    stream.write("Mutants: " + ", ".join(f"{n} {what}" for what, n in count.items())
                 + f"; {len(reports) - failing} of {len(reports)} problems OK, in {seconds:.1f} s.\n")
    if count["survived"]:
        stream.write("A survivor is a mistake no test catches: add a test that does, or, if it behaves exactly like "
                     f"the reference, declare it in reference/{EQUIVALENT_MUTANTS} with its reason"
                     + ("" if verbose else " (-v prints each as the table to paste)") + ".\n")
