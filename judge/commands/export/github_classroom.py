"""``judge export github-classroom -o DIR``: a template repository for a GitHub Classroom assignment.

    DIR/<id>/<entry>, README.md, tests/      the practice layout: starters, statements, public tests
    DIR/README.md                            for students: solve, judge locally, push
    DIR/.judge/wheels/pp_judge-*.whl         the judge (its dependencies come from the package index)
    DIR/.judge/problems, canonical.json      the bundle with the public tests only
    DIR/.github/workflows/classroom.yml      install the judge, grade, report through
                                             classroom-resources/autograding-grading-reporter
                                             (two runners per problem, the tests that earned points
                                             and the others; see judge.formats.github_classroom)

Everything in the template is readable by students, so the secret tests never go in it. Without
``--private-tests`` the workflow grades with the public tests only. With ``--private-tests
OWNER/REPO`` the export also writes that repository's content (the bundle with the secret tests,
to ``--tests-out``, default ``DIR-tests``) and the workflow checks it out with the
``JUDGE_TESTS_TOKEN`` secret and grades with every test.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from ... import __version__
from ...core.problem import Problem, discover_problems
from ...core.result import Result
from ...formats.github_classroom import runner_names
from ...formats.points import exact, text
from ...i18n import _
from ..practice import create_practice
from . import ExportOptions, size_text, template
from .bundle import ExportError, canonical_results, perfect_line, write_bundle
from .wheels import prepare_wheels

PUBLIC_BUNDLE = ".judge"
PRIVATE_BUNDLE = ".judge-tests"
WORKFLOW = Path(".github") / "workflows" / "classroom.yml"


def export(options: ExportOptions) -> list[str]:
    out, private = options.out, options.private_tests
    tests_out = (options.tests_out or out.with_name(out.name + "-tests")) if private else None
    if private is not None and private.count("/") != 1:
        raise ExportError(f"--private-tests {private}: " + _("give the repository as OWNER/REPO"))
    if tests_out is not None and tests_out.exists():
        raise ExportError(_("{path} exists; give a new folder with --tests-out").format(path=tests_out))
    config = {"platform": "github-classroom", "feedback": options.feedback, "timeout": options.timeout,
              "lang": options.lang}
    public = canonical_results(options.problems, False, options.timeout, options.parallel)
    # with the secret tests: what each problem is worth, where it matters (the private bundle, the assignment's
    # points, a problem whose worth is its tests' weights); a problem that declares points is worth them anyway
    needed = private or (options.assignment is not None and options.assignment.points is not None) \
        or any(p.points is None for p in options.problems)
    full = canonical_results(options.problems, True, options.timeout, options.parallel, options.assignment) \
        if needed else public
    with tempfile.TemporaryDirectory(prefix="judge-classroom-") as scratch:  # all that can fail, before writing
        [built] = prepare_wheels(Path(scratch), options.problems, None, options.wheels)
        write_bundle(out / PUBLIC_BUNDLE, options.problems, public, config, include_secret=False)
        wheel = Path(shutil.copy2(built, _mkdir(out / PUBLIC_BUNDLE / "wheels") / built.name))
    published = discover_problems(out / PUBLIC_BUNDLE / "problems", published=True)[0]
    create_practice(out, published)
    lines = [(f"Wrote the template repository {out}/ (judge wheel {size_text(wheel)}; its dependencies are "
              "installed from the package index by the workflow).")]
    values = {"judge_version": __version__, "python_version": options.python_version, "wheel": wheel.name,
              "bundle": PRIVATE_BUNDLE if private else PUBLIC_BUNDLE, "repository": private or "",
              **_reporter_values(options.problems)}
    if tests_out is not None:
        write_bundle(tests_out, options.problems, full, config, include_secret=True)
        (tests_out / "README.md").write_text(template("classroom_tests_README.md", **values), encoding="utf-8")
        lines.append(f"Wrote the private tests repository {tests_out}/ (push it to {private}).")
    checkout = template("classroom_private_checkout.yml", **values) if private else ""
    _write(out / WORKFLOW, template("classroom.yml", private_checkout=checkout, **values))
    _write(out / "README.md", _student_readme(options, values, graded_privately=bool(private)))
    _write(out / ".gitignore", "__pycache__/\n*.pyc\n.venv/\n")
    lines.append("Graded with " + ("every test (public and secret)." if private else
                 "the public tests only: the secret tests never go in a student's repository "
                 "(use --private-tests OWNER/REPO to grade with them)."))
    lines.append(perfect_line(options.problems, full if private else public))
    return lines + ([] if private else _worth_lines(options.problems, public, full))


def _worth_lines(problems: list[Problem], public: dict[str, Result], full: dict[str, Result]) -> list[str]:
    """The problems worth less with their public tests only: those that declare no points (their worth is the
    weights of the tests that run)."""
    return [f"{p.id}: worth {text(public[p.id].max_points)} of its {text(full[p.id].max_points)} points here (it "
            "declares no points in problem.toml, and only its public tests run here; points = "
            f"{text(full[p.id].max_points)} there keeps its worth)"
            for p in problems if exact(public[p.id].max_points) != exact(full[p.id].max_points)]


def _student_readme(options: ExportOptions, values: dict[str, str], graded_privately: bool) -> str:
    problems = options.problems
    table = "\n".join(f"| [{p.id}]({p.id}/README.md): {p.title} | `{p.id}/{p.entry}` |" for p in problems)
    graded = ("The autograder also runs secret tests, which are not in this repository." if graded_privately
              else "The autograder runs the same public tests as your machine.")
    return template("classroom_README.md", problem_table=table, first_problem=problems[0].id, graded_with=graded,
                    **values)


def _reporter_values(problems: list[Problem]) -> dict[str, str]:
    """The reporter step's ``runners`` input and its ``<RUNNER>_RESULTS`` variables, two per problem."""
    names = [name for p in problems for name in runner_names(p.id)]
    env = "\n".join(f'          {name.upper()}_RESULTS: "${{{{ steps.judge.outputs.{name} }}}}"' for name in names)
    return {"runners": ",".join(names), "runner_env": env}


def _mkdir(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
