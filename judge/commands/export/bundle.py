"""The judge bundle every export ships: problems, canonical Results and settings, in one folder.

    <bundle>/problems/<id>/      the problem without reference/ and wrong/ (and without tests/secret/
                                 when the export leaves the secret tests out)
    <bundle>/canonical.json      each reference's Result, computed at export time: which tests exist
                                 and what each is worth (messages and output removed)
    <bundle>/config.json         the judge's version, feedback level and time limit override

The platform side (:mod:`judge.commands.export.run`) loads the problems with ``published=True``, so the
reference solution never has to leave the instructor's machine.
"""

from __future__ import annotations

import dataclasses
import json
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ... import __version__
from ...core.errors import JudgeError
from ...core.problem import Problem, ProblemError, discover_problems, load_problem
from ...core.result import Result
from ...core.scoring import uncounted
from ...formats.points import add, exact, text
from ...i18n import _
from ..assignments import Assignment, check_worth

PROBLEMS, CANONICAL, CONFIG = "problems", "canonical.json", "config.json"
_NEVER_SHIPPED = ("reference", "wrong", "__pycache__")
#: what a published copy of a problem folder holds at its top (docs/problem-format.md)
_SHIPPED_TOP = re.compile(r"^(problem\.toml|README(\.[A-Za-z-]+)?\.md|starter|tests|support|assets)$")


class ExportError(JudgeError):
    """An export cannot be made as asked (a reference that fails, no wheel, a bad option)."""


@dataclass
class Bundle:
    """A bundle as the platform side reads it."""

    problems: list[Problem]
    canonical: dict[str, Result]
    config: dict[str, Any]


def write_bundle(dest: Path, problems: list[Problem], canonical: dict[str, Result], config: dict[str, Any],
                 include_secret: bool) -> None:
    """Write the problems (published copies), their canonical Results and ``config`` to ``dest``."""
    dest.mkdir(parents=True, exist_ok=True)
    for problem in problems:
        copy_problem(problem, dest / PROBLEMS / problem.id, include_secret)
    results = {pid: _without_output(result).to_dict() for pid, result in canonical.items()}
    _write_json(dest / CANONICAL, {"judge_version": __version__, "results": results})
    _write_json(dest / CONFIG, dict(config, judge_version=__version__, include_secret=include_secret))


def copy_problem(problem: Problem, dest: Path, include_secret: bool) -> Path:
    """Copy what ``problem`` publishes to ``dest``: the parts of the problem format a platform needs
    (docs/problem-format.md), never reference/ nor wrong/ (nor tests/secret/ unless asked), and nothing the
    format does not name (a stray ``solution_draft.py`` or ``tests/secret.bak/`` stays behind)."""
    tests = {"public", "secret"} if include_secret else {"public"}

    def ignore(folder: str, names: list[str]) -> list[str]:
        here = Path(folder).resolve()
        skipped = [n for n in names if n in _NEVER_SHIPPED or n.endswith(".pyc")]
        if here == problem.path:
            skipped += [n for n in names if not _SHIPPED_TOP.match(n)]
        elif here == problem.path / "tests":
            skipped += [n for n in names if n not in tests]
        return skipped

    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(problem.path, dest, ignore=ignore)
    load_problem(dest, published=True)  # the copy must load on the platform
    return dest


def canonical_results(problems: list[Problem], include_secret: bool, timeout: float | None,
                      parallel: int = 1, assignment: Assignment | None = None) -> dict[str, Result]:
    """Judge every reference now; each must pass, since its Result defines the tests and points. With the secret
    tests, the ``assignment``'s points must be what its problems are worth (:func:`check_worth`)."""
    from ...engines.native import Job, judge_many

    missing = [p.id for p in problems if p.reference_path is None]
    if missing:
        raise ExportError(_("no reference solution for {ids}: the export judges each reference to know the tests "
                            "and their points (give the instructor's problems folder)").format(ids=", ".join(missing)))
    jobs = [Job(p, p.reference_path, include_secret=include_secret, time_limit=timeout) for p in problems]
    results = judge_many(jobs, parallel)
    failing = [f"{r.problem} ({r.status}: "
               + (r.message or _("{passed} of {total} tests passed").format(passed=r.passed, total=r.total)) + ")"
               for r in results if r.status != "passed"]
    if failing:
        raise ExportError(_("the reference solution must pass every test before an export; it does not for "
                            "{problems} (run `python -m judge check`)").format(problems="; ".join(failing)))
    short = [f"{r.problem} ({text(r.points)} of {text(r.max_points)} points)" for r in results
             if exact(r.points) != exact(r.max_points)]
    if short:  # a perfect student could not get full marks on the platform
        raise ExportError("a reference solution must earn full points before an export; it does not for "
                          + "; ".join(short) + " (check the problem's objectives and points: judge check)")
    canonical = {p.id: r for p, r in zip(problems, results)}
    if assignment is not None and include_secret:
        check_worth(assignment, canonical)
    return canonical


#: seconds of a platform's time limit kept for what is not judging: starting the run, reading the bundle,
#: writing the result file
BUDGET_RESERVE = 60.0


def grading_budget(platform_timeout: float, reserve: float = BUDGET_RESERVE) -> float:
    """The seconds the judge may spend judging one submission on a platform that stops the whole grading after
    ``platform_timeout`` (config.json's ``budget``: the jobs' wall-clock backstops share it)."""
    if platform_timeout <= reserve:
        raise ExportError(f"a grading time limit of {platform_timeout:g} s leaves no time to judge: the judge needs "
                          f"{reserve:g} s of it to start and to write the result, and the rest for the problems")
    return platform_timeout - reserve


def perfect_line(problems: list[Problem], canonical: dict[str, Result]) -> str:
    """What a perfect submission earns on the platform, and which objectives its tests leave out (secret only)."""
    earned, worth = add(r.points for r in canonical.values()), add(r.max_points for r in canonical.values())
    line = f"A perfect submission (every reference solution) earns {text(earned)} of {text(worth)} points"
    left_out = []
    for problem in problems:
        ids = uncounted(canonical[problem.id], problem)
        if ids:
            share = add(o.points for o in problem.objectives if o.id in ids)
            left_out.append(f"{problem.id}: {len(ids)} of {len(problem.objectives)} objectives, {text(share)} of "
                            f"{text(problem.points or 0)} points, are checked by secret tests only")
    if not left_out:
        return line + "."
    return (line + " with the public tests alone, each problem scored over the objectives its public tests check "
            "(their points scaled up to the problem's): " + "; ".join(left_out) + ".")


def read_bundle(path: Path) -> Bundle:
    """Load a bundle written by :func:`write_bundle`; :class:`ExportError` when it is not one."""
    try:
        config = json.loads((path / CONFIG).read_text(encoding="utf-8"))
        data = json.loads((path / CANONICAL).read_text(encoding="utf-8"))
        canonical = {pid: Result.from_dict(r) for pid, r in data["results"].items()}
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ExportError(_("{path}: not a judge bundle ({error})").format(path=path, error=exc)) from None
    try:
        problems, errors = discover_problems(path / PROBLEMS, published=True)
    except ProblemError as exc:
        raise ExportError(str(exc)) from None
    if errors or sorted(p.id for p in problems) != sorted(canonical):
        raise ExportError(_("{path}: the problems do not match canonical.json ({why})").format(
            path=path, why="; ".join(map(str, errors)) or _("different problem ids")))
    return Bundle(problems, canonical, config)


def _without_output(result: Result) -> Result:
    """The canonical Result without anything the reference printed or said (only ids and points matter)."""
    tests = [dataclasses.replace(t, message="", traceback=[], stdout="", stderr="", artifacts=[], duration=0.0)
             for t in result.tests]
    return dataclasses.replace(result, tests=tests, message="", duration=0.0)


def _write_json(path: Path, data: dict[str, Any]) -> None:
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
