"""``judge export prairielearn -o DIR``: a PrairieLearn course fragment using the judge as external grader.

    DIR/questions/pp-judge/<id>/info.json          an externally graded v3 question
    DIR/questions/pp-judge/<id>/question.html      the statement, an editor for <entry>, the results
    DIR/questions/pp-judge/<id>/starter.py         the editor's initial code
    DIR/questions/pp-judge/<id>/clientFilesQuestion/  the public tests and support modules, to read, and
                                                   assets/ (the statement's images, its links rewritten)
    DIR/questions/pp-judge/<id>/tests/             the bundle of this one problem (-> /grade/tests)
    DIR/serverFilesCourse/pp_judge/run.sh          the entrypoint (-> /grade/serverFilesCourse/pp_judge)
    DIR/serverFilesCourse/pp_judge/wheels/         the judge and its dependencies, for the image's Python
    DIR/Dockerfile                                 optional: an image with the judge preinstalled
    DIR/assessments/<name>/infoAssessment.json     with --assignment: a homework of its questions, each
                                                   worth its points, open until the deadline and then at
                                                   the late policy's credit (-> courseInstances/<ci>/assessments/)

Paths and the results file follow PrairieLearn's docs/externalGrading.md: the student's files are
in /grade/student, the question's tests/ in /grade/tests, results go to /grade/results/results.json.
The assessment follows PrairieLearn's infoAssessment schema: access rules whose ``credit`` is a whole
percentage, dates in the course instance's time zone (the deadline's naive local time, as written).
"""

from __future__ import annotations

import html
import json
import math
import re
import shutil
import tempfile
import uuid
from datetime import datetime, timedelta
from pathlib import Path

from ... import __version__
from ...core.assets import asset_files
from ...core.problem import Problem
from ...core.result import Result
from ...formats.points import text
from ...sandbox.levels import WALL_BACKSTOP
from ..assignments import Assignment
from . import ExportOptions, size_text, template
from .bundle import canonical_results, grading_budget, perfect_line, write_bundle
from .wheels import prepare_wheels

QUESTIONS = Path("questions") / "pp-judge"
SERVER_FILES = "pp_judge"
ENTRYPOINT = f"/grade/serverFilesCourse/{SERVER_FILES}/run.sh"
_UUID_NAMESPACE = uuid.UUID("0d6f0f3e-5a2b-4c43-9a36-7f6c2b1d9e11")  # stable question uuids across exports
CLIENT_FILES = "{{options.client_files_question_url}}"  # PrairieLearn's URL of clientFilesQuestion/
# a Markdown link or image target, or an HTML src/href, that starts with assets/ (also ./assets/)
_ASSET_LINK = re.compile(r"""(\]\(\s*<?|(?:src|href)\s*=\s*["']?)(?:\./)?assets/""")
INSTALL_SECONDS = 30  # installing the judge from the wheels inside a grading job, with margin
PL_TIMEOUT_MAX = 600  # seconds: the longest a question's external grading job may take


def export(options: ExportOptions) -> list[str]:
    out = options.out
    image = options.image or f"python:{options.python_version}-slim"
    canonical = canonical_results(options.problems, True, options.timeout, options.parallel, options.assignment)
    server = out / "serverFilesCourse" / SERVER_FILES
    with tempfile.TemporaryDirectory(prefix="judge-prairielearn-") as scratch:  # all that can fail, before writing
        built = prepare_wheels(Path(scratch), options.problems, options.target, options.wheels)
        (server / "wheels").mkdir(parents=True)
        wheels = [Path(shutil.copy2(w, server / "wheels" / w.name)) for w in built]
    values = {"judge_version": __version__, "image": image}
    _write(server / "run.sh", template("prairielearn_run.sh", **values), executable=True)
    _write(out / "Dockerfile", template("prairielearn_Dockerfile", **values))
    config = {"platform": "prairielearn", "feedback": options.feedback, "timeout": options.timeout,
              "budget": grading_budget(PL_TIMEOUT_MAX, INSTALL_SECONDS),
              "lang": options.lang}
    for problem in options.problems:
        folder = out / QUESTIONS / problem.id
        write_bundle(folder / "tests", [problem], {problem.id: canonical[problem.id]}, config, include_secret=True)
        _question(folder, problem, image, options.timeout)
    lines = [(f"Wrote {out}/: {len(options.problems)} question(s) in {QUESTIONS}/, the grader in "
              f"serverFilesCourse/{SERVER_FILES}/ (wheels {size_text(server / 'wheels')} in {len(wheels)} files), "
              f"a Dockerfile; grading image {image}."),
             perfect_line(options.problems, canonical),
             "Copy questions/ and serverFilesCourse/ into your course repository (docs/platforms.md)."]
    if options.assignment is not None:
        lines += _write_assessment(out, options.assignment, options.problems, canonical)
    return lines


def _write_assessment(out: Path, assignment: Assignment, problems: list[Problem],
                      canonical: dict[str, Result]) -> list[str]:
    """``assessments/<name>/infoAssessment.json`` for the assignment, and what to do with it."""
    path = out / "assessments" / assignment.name / "infoAssessment.json"
    _write(path, json.dumps(assessment_info(assignment, problems, canonical), indent=2) + "\n")
    lines = [f"Wrote {path.relative_to(out)}: copy assessments/{assignment.name}/ into a course instance's "
             "assessments/ (courseInstances/<instance>/assessments/), and check its set, number and dates."]
    if assignment.deadline is not None and not float(assignment.late_penalty).is_integer():
        lines.append(f"Note: PrairieLearn's credit is a whole percentage: the late penalty of "
                     f"{text(assignment.late_penalty)} % a day is rounded up in the access rules.")
    return lines


def assessment_info(assignment: Assignment, problems: list[Problem], canonical: dict[str, Result]) -> dict:
    """A PrairieLearn homework of the assignment's questions: each worth what the judge gives it (its
    reference's points), so PrairieLearn's total is the judge's, and access rules for its late policy."""
    number = re.search(r"\d+", assignment.name)
    questions = [{"id": f"{QUESTIONS.name}/{problem.id}", "autoPoints": canonical[problem.id].max_points,
                  "maxAutoPoints": canonical[problem.id].max_points} for problem in problems]
    return {"uuid": str(uuid.uuid5(_UUID_NAMESPACE, f"assessment:{assignment.name}")), "type": "Homework",
            "title": assignment.title or assignment.name, "set": "Homework",
            "number": number.group(0) if number else "1",
            "allowAccess": access_rules(assignment.deadline, assignment.late_penalty),
            "zones": [{"questions": questions}]}


def access_rules(deadline: datetime | None, percent_per_day: float) -> list[dict]:
    """Full credit until the deadline, then one rule per started day late at the judge's late policy (a
    submission one minute late is a day late), until the credit reaches 0; open with full credit without one."""
    if deadline is None:
        return [{"comment": "no deadline in course.toml: set the dates here", "credit": 100}]
    if percent_per_day <= 0:
        return [{"comment": f"due {_pl_date(deadline)}, with no late penalty", "credit": 100}]
    rules: list[dict] = [{"credit": 100, "endDate": _pl_date(deadline)}]
    day = 1
    while (credit := 100 - math.ceil(day * percent_per_day)) > 0:
        start, end = deadline + timedelta(days=day - 1), deadline + timedelta(days=day)  # the larger credit wins
        rules.append({"credit": credit, "startDate": _pl_date(start), "endDate": _pl_date(end)})
        day += 1
    return rules


def _pl_date(when: datetime) -> str:
    return when.strftime("%Y-%m-%dT%H:%M:%S")


def question_timeout(problem: Problem, timeout: float | None) -> int:
    """The grading job's time limit (info.json's ``timeout``, at most PrairieLearn's 600 s): room for the
    judge's wall-clock backstop (code that waits, a busy grading host), so that the judge's own time-out
    and its message reach the student, not PrairieLearn's."""
    return min(PL_TIMEOUT_MAX, math.ceil(((timeout or problem.time_limit) + 1) * WALL_BACKSTOP) + INSTALL_SECONDS)


def _question(folder: Path, problem: Problem, image: str, timeout: float | None) -> None:
    seconds = question_timeout(problem, timeout)
    info = {"uuid": str(uuid.uuid5(_UUID_NAMESPACE, problem.id)), "title": problem.title,
            "topic": "Pipeline parallelism", "tags": ["pp-judge", problem.difficulty, *problem.tags], "type": "v3",
            "singleVariant": True, "gradingMethod": "External",
            "externalGradingOptions": {"enabled": True, "image": image, "entrypoint": ENTRYPOINT,
                                       "serverFilesCourse": [f"{SERVER_FILES}/"], "timeout": seconds}}
    _write(folder / "info.json", json.dumps(info, indent=2) + "\n")
    _write(folder / "starter.py", problem.starter)
    readable = problem.public_test_files + problem.support_files
    client = folder / "clientFilesQuestion"
    client.mkdir(parents=True, exist_ok=True)
    for path in readable:
        shutil.copyfile(path, client / path.name)
    for path in asset_files(problem.path):
        target = client / path.relative_to(problem.path)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
    links = ", ".join(f'<a href="{{{{options.client_files_question_url}}}}/{html.escape(p.name)}">'
                      f"{html.escape(p.name)}</a>" for p in readable)
    statement = statement_for_pl(problem.statement)
    _write(folder / "question.html", template("prairielearn_question.html", statement=statement,
                                              entry=problem.entry, public_test_links=links,
                                              secret_note=(" and with secret tests" if problem.secret_test_files
                                                           else "")))


def statement_for_pl(statement: str) -> str:
    """The statement with its ``assets/...`` links and images pointing at the question's client files."""
    return _ASSET_LINK.sub(lambda m: m.group(1) + CLIENT_FILES + "/assets/", statement)


def _write(path: Path, text: str, executable: bool = False) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    if executable:
        path.chmod(0o755)
