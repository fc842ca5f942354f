"""Problem folders: load ``problem.toml`` and the files around it, and validate them.

The format is specified in ``docs/problem-format.md``. Every validation error names the file and,
where there is one, the field or line, so an instructor can fix it without reading this code.
"""

from __future__ import annotations

import keyword
import os
import re
import tomllib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..i18n import _
from .errors import JudgeError
from .findings import Finding, FindingKind
from .kinds import OBJECTIVE_KINDS, POLICIES, ObjectiveKind, Policy

FORMAT_VERSION = 1
DIFFICULTIES = ("easy", "medium", "hard")
ID_PATTERN = re.compile(r"^[a-z0-9][a-z0-9-]*$")
DEFAULT_MEMORY_LIMIT = 1024  # MiB

_REQUIRED = {
    "format": int, "id": str, "title": str, "summary": str, "order": int,
    "difficulty": str, "entry": str, "time_limit": (int, float), "tags": list,
}
_OPTIONAL = {"memory_limit": int, "packages": list, "points": (int, float), "scoring": str,
             "test_time_limit": (int, float), "gradescope_secret_visibility": str, "boundary": dict,
             "objectives": list}
_BOUNDARY_KEYS = ("records", "exceptions", "lend", "fixed")
GRADESCOPE_VISIBILITIES = ("hidden", "after_due_date", "after_published", "visible")
DEFAULT_TEST_TIME_LIMIT = 5.0  # seconds one test may run (natively) before it fails alone
EQUIVALENT_MUTANTS = "equivalent-mutants.toml"  # in reference/: mutants accepted as equivalent (never published)
_EQUIVALENT_KEYS = {"code": True, "mutant": True, "reason": True, "function": False}  # key: required


class ProblemError(JudgeError):
    """A problem folder is not valid; the message names the file and the field or line.

    ``findings`` says what is wrong as data (:class:`judge.core.findings.Finding`): every problem of a
    problem.toml, or the one problem the message tells of, of kind ``kind``.
    """

    def __init__(self, message: str, kind: FindingKind, findings: Sequence[Finding] = ()) -> None:
        super().__init__(message)
        self.findings = tuple(findings) or (Finding(kind, message=message),)


def _toml(kind: FindingKind, message: str) -> Finding:
    """A finding about problem.toml (its field names stay as written, in every language)."""
    return Finding(kind, "problem.toml", 0, message)


@dataclass(frozen=True)
class EquivalentMutant:
    """A mutant of the reference that behaves exactly like it (``judge check --mutants`` accepts it).

    It is recognised by what it changes, not by a position: ``code`` is the reference's line(s) the
    mutant changes and ``mutant`` the same line(s) in the mutant (whitespace aside); ``function``,
    when given, limits it to the function (or method, ``Class.method``) that holds those lines.
    """

    code: str
    mutant: str
    reason: str
    function: str | None = None
    number: int = 0  # its position in the file (1-based), to name it in messages


DETAIL_SHARE = 0.2  # of a problem's points, for argument checks and return-type details (kinds checks, types)
_OBJECTIVE_KEYS = {"id": str, "title": str, "points": (int, float), "tests": list, "kind": str,
                   "requires": list, "scoring": str, "titles": dict}


@dataclass
class Objective:
    """A learning objective of a problem, with its points; its tests are the ones ``tests`` matches.

    ``tests`` holds patterns (``fnmatch``) matched against a test's name with its parameters
    (``test_1f1b_order[4-8]``), or its whole id when a pattern holds ``::``; a test marked
    ``@pytest.mark.objective("id")`` belongs to that objective whatever the patterns say. ``kind``
    says what is learnt: the idea itself (``concept``), argument checks (``checks``) or return-type
    details (``types``). ``requires``: objectives whose points this one's are scaled by (checks count
    only as far as the function is right on valid input). ``scoring``: ``proportional`` to the tests
    passed, or ``all-or-nothing``. ``titles``: the title in other languages, by language code
    (``{"zh": "GPipe 顺序"}``); reports show the learner's (:meth:`title_in`).
    """

    id: str
    title: str
    points: float
    tests: list[str] = field(default_factory=list)
    kind: ObjectiveKind = "concept"
    requires: list[str] = field(default_factory=list)
    scoring: Policy = "proportional"
    titles: dict[str, str] = field(default_factory=dict)

    def title_in(self, lang: str) -> str:
        """The title in ``lang`` (``zh-CN`` finds ``zh``), else the English ``title``."""
        tag = lang.lower()
        for candidate in (tag, tag.split("-")[0]):
            if self.titles.get(candidate):
                return self.titles[candidate]
        return self.title


@dataclass
class Boundary:
    """What crosses between the tests and the learner's code besides plain data (``[boundary]``).

    Every name is ``module.Class`` with ``module`` one of the problem's support modules, which both
    sides import: ``records`` (dataclasses, named tuples) cross by value and are rebuilt from their
    fields; ``exceptions`` cross by type and message like the builtin ones; ``lend`` maps a type the
    tests pass to the learner's code to the members the learner's code may use (its objects stay with
    the tests; the learner's code holds proxies). ``fixed`` names, per lent type, attributes that never
    change once an object is lent: they travel with the object, and reading one costs no message.
    """

    records: list[str] = field(default_factory=list)
    exceptions: list[str] = field(default_factory=list)
    lend: dict[str, list[str]] = field(default_factory=dict)
    fixed: dict[str, list[str]] = field(default_factory=dict)

    @property
    def declarations(self) -> dict[str, list[str]]:
        """What the learner's side needs to know: the records and exceptions, by name."""
        return {"records": list(self.records), "exceptions": list(self.exceptions)}


@dataclass
class Problem:
    """A loaded problem folder. Paths are absolute; file lists are sorted."""

    id: str
    title: str
    summary: str
    order: int
    difficulty: str
    entry: str
    time_limit: float
    tags: list[str]
    path: Path
    statement: str
    starter: str
    memory_limit: int = DEFAULT_MEMORY_LIMIT
    packages: list[str] = field(default_factory=list)
    points: float | None = None  # what the problem is worth; None: the sum of its tests' weights
    scoring: Policy = "proportional"  # judge.core.scoring
    test_time_limit: float | None = None  # per test; None: min(DEFAULT_TEST_TIME_LIMIT, time_limit)
    gradescope_secret_visibility: str = "after_due_date"  # when Gradescope shows the secret tests
    public_test_files: list[Path] = field(default_factory=list)
    secret_test_files: list[Path] = field(default_factory=list)
    support_files: list[Path] = field(default_factory=list)
    wrong_files: list[Path] = field(default_factory=list)
    reference_path: Path | None = None
    boundary: Boundary = field(default_factory=Boundary)
    objectives: list[Objective] = field(default_factory=list)
    equivalent_mutants: list[EquivalentMutant] = field(default_factory=list)  # reference/equivalent-mutants.toml

    @property
    def module_name(self) -> str:
        """The import name of the learner's module (entry file without ``.py``)."""
        return self.entry[:-3]

    @property
    def starter_path(self) -> Path:
        return self.path / "starter" / self.entry

    @property
    def per_test_time_limit(self) -> float:
        """Seconds one test may run before it fails on its own (the problem's limit still bounds the run)."""
        return self.test_time_limit or min(DEFAULT_TEST_TIME_LIMIT, self.time_limit)

    def test_files(self, include_secret: bool) -> list[Path]:
        return self.public_test_files + (self.secret_test_files if include_secret else [])


def load_problem(path: str | Path, published: bool = False, compile_tests: bool = True) -> Problem:
    """Load and validate the problem folder at ``path``.

    With ``published=True`` only what the web site ships is required (problem.toml, README.md,
    starter/, tests/public/, support/); reference, secret tests and wrong solutions may be absent.
    ``compile_tests=False`` leaves the test files' syntax to pytest, which compiles them anyway when it
    judges (a syntax error there is the Result's collection error, with its file and line): judging
    need not compile every test file twice. Raises :class:`ProblemError` on the first problem found.
    """
    folder = Path(path).resolve()
    if not folder.is_dir():
        raise ProblemError(_("{path}: not a folder").format(path=folder), "not-a-folder")
    _refuse_links(folder)
    meta = _read_toml(folder / "problem.toml")
    _check_meta(meta, folder)
    entry = meta["entry"]
    problem = Problem(
        id=meta["id"], title=meta["title"], summary=meta["summary"], order=meta["order"],
        difficulty=meta["difficulty"], entry=entry, time_limit=float(meta["time_limit"]),
        tags=list(meta["tags"]), path=folder,
        statement=_read_text(folder / "README.md"),
        starter=_read_text(folder / "starter" / entry),
        memory_limit=meta.get("memory_limit", DEFAULT_MEMORY_LIMIT),
        packages=list(meta.get("packages", [])),
        points=float(meta["points"]) if "points" in meta else None,
        scoring=meta.get("scoring", "proportional"),
        test_time_limit=float(meta["test_time_limit"]) if "test_time_limit" in meta else None,
        gradescope_secret_visibility=meta.get("gradescope_secret_visibility", "after_due_date"),
        public_test_files=_python_files(folder / "tests" / "public"),
        secret_test_files=_python_files(folder / "tests" / "secret"),
        support_files=_python_files(folder / "support"),
        wrong_files=_python_files(folder / "wrong", "*.py", "*.diff"),
        boundary=_boundary(meta.get("boundary", {})),
        objectives=[_objective(table) for table in meta.get("objectives", [])],
    )
    reference = folder / "reference" / entry
    if reference.is_file():
        problem.reference_path = reference
        problem.equivalent_mutants = load_equivalent_mutants(folder / "reference" / EQUIVALENT_MUTANTS)
    elif not published:
        raise ProblemError(_("{path}: missing reference solution (reference/{entry})").format(path=reference,
                                                                                               entry=entry),
                           "missing-file")
    _check_files(problem, compile_tests)
    return problem


def load_equivalent_mutants(path: Path) -> list[EquivalentMutant]:
    """The ``[[equivalent]]`` tables of ``path`` (none when the file is absent), validated."""
    if not path.is_file():
        return []
    data = _read_toml(path)
    errors = [f"unknown field(s) {key!r} (allowed: equivalent)" for key in sorted(set(data) - {"equivalent"})]
    tables = data.get("equivalent", [])
    if not isinstance(tables, list) or not all(isinstance(t, dict) for t in tables):
        errors.append("'equivalent' must be an array of tables: write each one as [[equivalent]]")
        tables = []
    for number, table in enumerate(tables, 1):
        errors += [f"[[equivalent]] {number}: {e}" for e in _equivalent_errors(table)]
    seen = [(t.get("function"), " ".join(str(t.get("code")).split()), " ".join(str(t.get("mutant")).split()))
            for t in tables]
    errors += [f"[[equivalent]] {n}: the same mutant as [[equivalent]] {seen.index(key) + 1}"
               for n, key in enumerate(seen, 1) if seen.index(key) + 1 != n]
    if errors:
        raise ProblemError(f"{path}: " + (errors[0] if len(errors) == 1 else
                                          f"{len(errors)} problems:\n" + "\n".join(f"  - {e}" for e in errors)),
                           "bad-equivalent-mutant")
    return [EquivalentMutant(t["code"], t["mutant"], t["reason"], t.get("function"), n)
            for n, t in enumerate(tables, 1)]


def _equivalent_errors(table: dict[str, Any]) -> Iterator[str]:
    for key in sorted(set(table) - set(_EQUIVALENT_KEYS)):
        yield f"unknown field {key!r} (allowed: {', '.join(_EQUIVALENT_KEYS)})"
    for key, required in _EQUIVALENT_KEYS.items():
        if key not in table:
            if required:
                yield f"missing field '{key}'"
        elif not isinstance(table[key], str):
            yield f"field '{key}': expected str, got {type(table[key]).__name__} {table[key]!r}"
    text = {key: table[key] for key in _EQUIVALENT_KEYS if isinstance(table.get(key), str)}
    if "reason" in text and not text["reason"].strip():
        yield "field 'reason': say why this mutant behaves exactly like the reference"
    if "code" in text and not text["code"].strip():
        yield "field 'code': the reference's line(s) the mutant changes, as written"
    if "code" in text and "mutant" in text and text["code"].split() == text["mutant"].split():
        yield "fields 'code' and 'mutant' are the same: a mutant changes the code"
    if "function" in text and not all(part.isidentifier() for part in text["function"].split(".")):
        yield f"field 'function': {text['function']!r} must be a function's name, or Class.method"


def discover_problems(root: str | Path, published: bool = False,
                      compile_tests: bool = True) -> tuple[list[Problem], list[ProblemError]]:
    """Load every problem folder directly under ``root`` (folders holding a problem.toml;
    ``compile_tests``: see :func:`load_problem`).

    Returns the valid problems sorted by (order, id) and the errors of the invalid ones, so one
    broken folder never hides the others. Duplicate ids are reported as errors.
    """
    root = Path(root)
    if (root / "problem.toml").is_file():
        folders = [root]
    elif root.is_dir():
        folders = sorted(p for p in root.iterdir() if (p / "problem.toml").is_file())
    else:
        raise ProblemError(_("{path}: no such problems folder").format(path=root), "no-problems-folder")
    problems: list[Problem] = []
    errors: list[ProblemError] = []
    seen: dict[str, Path] = {}
    for folder in folders:
        try:
            problem = load_problem(folder, published=published, compile_tests=compile_tests)
        except ProblemError as exc:
            errors.append(exc)
            continue
        if problem.id in seen:
            errors.append(ProblemError(_duplicate(folder, problem.id, seen[problem.id]), "duplicate-id"))
            continue
        seen[problem.id] = folder
        problems.append(problem)
    problems.sort(key=lambda p: (p.order, p.id))
    return problems, errors


def discover_in(roots: str | Path | Sequence[str | Path], published: bool = False
                ) -> tuple[list[Problem], list[ProblemError]]:
    """:func:`discover_problems` over several folders (problems folders or problem folders), merged.

    A problem named twice (the same folder, or the same id in two places) is loaded once; an id
    found in two different folders is an error, as within one root.
    """
    paths = [roots] if isinstance(roots, (str, Path)) else list(roots)
    problems: list[Problem] = []
    errors: list[ProblemError] = []
    seen: dict[str, Path] = {}
    for root in paths:
        found, failed = discover_problems(root, published)
        errors += [e for e in failed if str(e) not in {str(known) for known in errors}]
        for problem in found:
            if problem.id in seen and seen[problem.id].resolve() != problem.path.resolve():
                errors.append(ProblemError(_duplicate(problem.path, problem.id, seen[problem.id]), "duplicate-id"))
            elif problem.id not in seen:
                seen[problem.id] = problem.path
                problems.append(problem)
    problems.sort(key=lambda p: (p.order, p.id))
    return problems, errors


def _duplicate(folder: Path, ident: str, other: Path) -> str:
    return f"{folder / 'problem.toml'}: field 'id': " + _("duplicate id {id!r} (also in {other})").format(
        id=ident, other=other)


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except FileNotFoundError:
        raise ProblemError(_("{path}: missing (every problem folder needs a problem.toml)").format(path=path),
                           "missing-file") from None
    except tomllib.TOMLDecodeError as exc:
        raise ProblemError(_("{path}: invalid TOML: {error}").format(path=path, error=exc), "invalid-toml") from None


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ProblemError(_("{path}: missing").format(path=path), "missing-file") from None
    except UnicodeDecodeError as exc:
        raise ProblemError(_("{path}: not UTF-8 text ({error})").format(path=path, error=exc),
                           "unreadable-file") from None


def _refuse_links(folder: Path) -> None:
    """A problem folder holds files, not links: the site, the practice folder and the exports copy parts of it,
    and a link (to reference/, to a secret test, to a file outside the folder) would publish what it points to."""
    for parent, dirs, files in os.walk(folder):  # never follows a linked folder
        for name in sorted(dirs + files):
            path = Path(parent, name)
            if path.is_symlink():
                relative = path.relative_to(folder).as_posix()
                raise ProblemError(_("{path} is a symbolic link: a problem folder holds regular files and folders "
                                     "only (what a link points to could be published); copy the file "
                                     "instead").format(path=f"{folder.name}/{relative}"), "symbolic-link")


def _python_files(folder: Path, *patterns: str) -> list[Path]:
    if not folder.is_dir():
        return []
    return sorted(p for pattern in patterns or ("*.py",) for p in folder.glob(pattern) if p.is_file())


def _check_meta(meta: dict[str, Any], folder: Path) -> None:
    """Raise one ProblemError that lists every problem of problem.toml at once."""
    where = folder / "problem.toml"
    errors = _structure_errors(meta)
    usable = {k: v for k, v in meta.items() if not any(f"field '{k}'" in e.message for e in errors)}
    errors += [_toml("bad-value", message) for message in _value_errors(usable, folder)]
    errors += [_toml("bad-boundary", message) for message in _boundary_errors(usable.get("boundary", {}))]
    errors += [_toml("bad-objective", message)
               for message in _objective_errors(usable.get("objectives", []), usable.get("points"))]
    if len(errors) == 1:
        raise ProblemError(f"{where}: {errors[0].message}", errors[0].kind, errors)
    if errors:
        raise ProblemError(_("{path}: {n} problems:").format(path=where, n=len(errors)) + "\n"
                           + "\n".join(f"  - {e.message}" for e in errors), errors[0].kind, errors)


_PLACEHOLDERS = {"format": FORMAT_VERSION, "difficulty": DIFFICULTIES[0], "entry": "x.py", "title": "x",
                 "summary": "x"}  # stand in for missing fields, which are already reported


def _structure_errors(meta: dict[str, Any]) -> list[Finding]:
    """Unknown keys (with the likely intended one), missing fields and wrong types."""
    import difflib

    allowed = list(_REQUIRED) + list(_OPTIONAL)
    errors = []
    for key in sorted(set(meta) - set(allowed)):
        close = difflib.get_close_matches(key, allowed, n=1)
        errors.append(_toml("unknown-field", _("unknown field(s) {key!r}").format(key=key)
                            + (_(" (did you mean {key!r}?)").format(key=close[0]) if close else
                               _(" (allowed: {keys})").format(keys=", ".join(allowed)))))
    for key, kind in {**_REQUIRED, **_OPTIONAL}.items():
        if key not in meta:
            if key in _REQUIRED:
                errors.append(_toml("missing-field", _("missing field {key}").format(key=f"'{key}'")))
        elif isinstance(meta[key], bool) or not isinstance(meta[key], kind):  # type: ignore[arg-type]
            names = " or ".join(k.__name__ for k in (kind if isinstance(kind, tuple) else (kind,)))
            # "field 'KEY'" stays as written: _check_meta recognises the fields already reported by it
            errors.append(_toml("wrong-type", f"field '{key}': " + _("expected {types}, got {type} {value!r}").format(
                types=names, type=type(meta[key]).__name__, value=meta[key])))
    return errors


def _value_errors(meta: dict[str, Any], folder: Path) -> Iterator[str]:
    """Checks of the values of well-typed fields (a field missing or of the wrong type is skipped)."""
    meta = {**_PLACEHOLDERS, **{"id": folder.name, "time_limit": 600}, **meta}
    if meta["format"] != FORMAT_VERSION:
        yield "field 'format': " + _("this judge reads format {version}, got {got}").format(version=FORMAT_VERSION,
                                                                                             got=meta["format"])
    if not ID_PATTERN.match(meta["id"]):
        yield "field 'id': " + _("{value!r} must be lowercase letters, digits and '-'").format(value=meta["id"])
    elif meta["id"] != folder.name:
        yield "field 'id': " + _("{value!r} does not match the folder name {folder!r}").format(value=meta["id"],
                                                                                                folder=folder.name)
    if meta["difficulty"] not in DIFFICULTIES:
        yield "field 'difficulty': " + _("{value!r} is not one of {allowed}").format(
            value=meta["difficulty"], allowed=", ".join(DIFFICULTIES))
    entry = meta["entry"]
    if not (entry.endswith(".py") and entry[:-3].isidentifier() and not keyword.iskeyword(entry[:-3])):
        yield "field 'entry': " + _("{value!r} must be a Python module file name like 'pp_sim.py'").format(value=entry)
    if not 0 < meta["time_limit"] <= 600:
        yield "field 'time_limit': " + _("{value} must be between 0 and 600 seconds").format(value=meta["time_limit"])
    if "memory_limit" in meta and not 64 <= meta["memory_limit"] <= 65536:
        yield "field 'memory_limit': " + _("{value} must be between 64 and 65536 MiB").format(
            value=meta["memory_limit"])
    if "points" in meta and not 0 < meta["points"] <= 10000:
        yield "field 'points': " + _("{value} must be more than 0 and at most 10000").format(value=meta["points"])
    if meta.get("scoring", "proportional") not in POLICIES:
        yield "field 'scoring': " + _("{value!r} is not one of {allowed}").format(
            value=meta["scoring"], allowed=", ".join(POLICIES))
    if "test_time_limit" in meta and not 0 < meta["test_time_limit"] <= meta["time_limit"]:
        yield "field 'test_time_limit': " + _("{value} must be more than 0 and at most time_limit ({limit})").format(
            value=meta["test_time_limit"], limit=meta["time_limit"])
    if meta.get("gradescope_secret_visibility", "after_due_date") not in GRADESCOPE_VISIBILITIES:
        yield "field 'gradescope_secret_visibility': " + _("{value!r} is not one of {allowed}").format(
            value=meta["gradescope_secret_visibility"], allowed=", ".join(GRADESCOPE_VISIBILITIES))
    for key in ("tags", "packages"):
        if not all(isinstance(item, str) for item in meta.get(key, [])):
            yield f"field '{key}': " + _("every item must be a string")
    for key in ("title", "summary"):
        if not meta[key].strip() or "\n" in meta[key]:
            yield f"field '{key}': " + _("must be one non-empty line")


def _boundary_errors(table: dict[str, Any]) -> Iterator[str]:
    for key in sorted(set(table) - set(_BOUNDARY_KEYS)):
        yield f"table 'boundary': unknown key {key!r} (allowed: {', '.join(_BOUNDARY_KEYS)})"
    for key in ("records", "exceptions"):
        value = table.get(key, [])
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            yield f"table 'boundary': '{key}' must be a list of 'module.Class' names"
    for key in ("lend", "fixed"):
        value = table.get(key, {})
        if not isinstance(value, dict) or not all(isinstance(v, list) for v in value.values()):
            yield f"table 'boundary': '{key}' must be a table of 'module.Class' = [member names]"


def _objective(table: dict[str, Any]) -> Objective:
    return Objective(id=table["id"], title=table["title"], points=float(table["points"]),
                     tests=list(table.get("tests", [])), kind=table.get("kind", "concept"),
                     requires=list(table.get("requires", [])), scoring=table.get("scoring", "proportional"),
                     titles={str(k).lower(): v for k, v in table.get("titles", {}).items()})


def _objective_errors(tables: list[Any], points: Any) -> Iterator[str]:
    """The objectives' structure, ids, requirements, points and the share of checks and types."""
    if not tables:
        return
    where = "[[objectives]]"
    if not all(isinstance(t, dict) for t in tables):
        yield f"{where}: every objective must be a table"
        return
    ids: list[str] = []
    for number, table in enumerate(tables, 1):
        name = f"{where} #{number} ({table.get('id', '?')})"
        for key in sorted(set(table) - set(_OBJECTIVE_KEYS)):
            yield f"{name}: unknown key {key!r} (allowed: {', '.join(_OBJECTIVE_KEYS)})"
        for key, kind in _OBJECTIVE_KEYS.items():
            if key in table and (isinstance(table[key], bool) or not isinstance(table[key], kind)):  # type: ignore[arg-type]
                yield f"{name}: '{key}' has the wrong type ({type(table[key]).__name__})"
        for key in ("id", "title", "points"):
            if key not in table:
                yield f"{name}: missing '{key}'"
        ident = table.get("id")
        if isinstance(ident, str):
            if not ID_PATTERN.match(ident):
                yield f"{name}: id {ident!r} must be lowercase letters, digits and '-'"
            if ident in ids:
                yield f"{name}: duplicate id {ident!r}"
            ids.append(ident)
        if isinstance(table.get("points"), (int, float)) and not table["points"] > 0:
            yield f"{name}: points must be more than 0"
        if table.get("kind", "concept") not in OBJECTIVE_KINDS:
            yield f"{name}: kind {table.get('kind')!r} is not one of {', '.join(OBJECTIVE_KINDS)}"
        if table.get("scoring", "proportional") not in POLICIES:
            yield f"{name}: scoring {table.get('scoring')!r} is not one of {', '.join(POLICIES)}"
        if not all(isinstance(p, str) for p in table.get("tests", [])):
            yield f"{name}: tests must be a list of patterns"
        titles = table.get("titles", {})
        if isinstance(titles, dict) and not all(isinstance(t, str) and t.strip() for t in titles.values()):
            yield f"{name}: titles must be a table of language code = title (e.g. titles = {{ zh = \"...\" }})"
    yield from _requirement_errors(tables, ids)
    yield from _points_errors(tables, points)


def _requirement_errors(tables: list[dict[str, Any]], ids: list[str]) -> Iterator[str]:
    requires = {t.get("id"): [r for r in t.get("requires", []) if isinstance(r, str)] for t in tables}
    for ident, needed in requires.items():
        for other in needed:
            if other not in ids:
                yield f"[[objectives]] {ident}: requires {other!r}, which is not an objective of this problem"
    visiting: set[Any] = set()
    done: set[Any] = set()

    def cyclic(ident: Any) -> bool:
        if ident in done:
            return False
        if ident in visiting:
            return True
        visiting.add(ident)
        found = any(cyclic(other) for other in requires.get(ident, []) if other in requires)
        visiting.discard(ident)
        done.add(ident)
        return found

    if any(cyclic(ident) for ident in requires):
        yield "[[objectives]]: the requirements form a cycle"


def _points_errors(tables: list[dict[str, Any]], points: Any) -> Iterator[str]:
    values = [t["points"] for t in tables if isinstance(t.get("points"), (int, float))]
    if len(values) != len(tables):
        return
    total = sum(values)
    if isinstance(points, (int, float)) and abs(total - points) > 1e-9:
        yield f"[[objectives]]: the objectives' points add up to {total:g}, not the problem's points ({points:g})"
    detail = sum(t["points"] for t in tables if t.get("kind") in ("checks", "types"))
    if total and detail > DETAIL_SHARE * total + 1e-9:
        yield (f"[[objectives]]: argument checks and type details carry {detail:g} of {total:g} points; at most "
               f"{DETAIL_SHARE:.0%} ({DETAIL_SHARE * total:g}) may (points follow what is learnt)")


def _check_files(problem: Problem, compile_tests: bool = True) -> None:
    public = [p for p in problem.public_test_files if p.name.startswith("test_")]
    if not public:
        raise ProblemError(_("{path}: no test_*.py file (at least one public test file is required)").format(
            path=problem.path / "tests" / "public"), "no-tests")
    seen: dict[str, Path] = {}
    for path in problem.public_test_files + problem.secret_test_files + problem.support_files:
        if path.name in seen:
            raise ProblemError(_("{path}: file name clashes with {other} (test and helper module names must be "
                                 "unique)").format(path=path, other=seen[path.name]), "name-clash")
        seen[path.name] = path
    if problem.entry in seen:
        raise ProblemError(_("{path}: has the same name as the entry file {entry}").format(
            path=seen[problem.entry], entry=problem.entry), "name-clash")
    tests = problem.public_test_files + problem.secret_test_files if compile_tests else []
    for path in tests + problem.support_files:  # a broken support module would read as the learner's error
        _check_syntax(path)
    _check_boundary(problem)


def _boundary(table: dict[str, Any]) -> Boundary:
    lend, fixed = table.get("lend", {}), table.get("fixed", {})
    return Boundary(records=list(table.get("records", [])), exceptions=list(table.get("exceptions", [])),
                    lend={str(k): list(v) for k, v in lend.items()} if isinstance(lend, dict) else {},
                    fixed={str(k): list(v) for k, v in fixed.items()} if isinstance(fixed, dict) else {})


def _check_boundary(problem: Problem) -> None:
    """Every declared name is a class defined at the top level of one of the problem's support modules."""
    import ast

    where = f"{problem.path / 'problem.toml'}: [boundary]"
    classes = {}
    for path in problem.support_files:
        tree = ast.parse(_read_text(path), str(path))
        classes[path.stem] = {node.name for node in tree.body if isinstance(node, ast.ClassDef)}
    boundary = problem.boundary
    for kind, names in (("records", boundary.records), ("exceptions", boundary.exceptions),
                        ("lend", list(boundary.lend))):
        for name in names:
            module, _, cls = name.rpartition(".")
            if module not in classes:
                raise ProblemError(f"{where} {kind}: {name!r} must be 'module.Class' with module one of the "
                                   f"problem's support modules ({', '.join(sorted(classes)) or 'it has none'})",
                                   "bad-boundary")
            if cls not in classes[module]:
                raise ProblemError(f"{where} {kind}: support/{module}.py defines no class {cls!r} at its top level",
                                   "bad-boundary")
    for name, members in boundary.lend.items():
        if not all(isinstance(m, str) and m.isidentifier() for m in members) or not members:
            raise ProblemError(f"{where} lend: {name!r} must list the names of the members it lends", "bad-boundary")
    for name, attributes in boundary.fixed.items():
        lent = boundary.lend.get(name)
        if lent is None or not all(isinstance(a, str) and a in lent for a in attributes):
            raise ProblemError(f"{where} fixed: {name!r} may name only attributes its lend entry lists", "bad-boundary")


def _check_syntax(path: Path) -> None:
    try:
        compile(_read_text(path), str(path), "exec")
    except SyntaxError as exc:
        raise ProblemError(_("{path}:{line}: syntax error: {error}").format(path=path, line=exc.lineno,
                                                                            error=exc.msg), "syntax-error") from None
