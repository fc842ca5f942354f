"""``judge export``: each platform's package, exercised end to end outside the platform.

The wheels (the judge's own, built from the source tree without any solution, and its
dependencies for this Python) are made once per session. The Gradescope bundle is unzipped,
its setup.sh installs the judge offline from the bundled wheels into a virtual environment, and
its run_autograder grades a web-app zip and hostile submissions; PrairieLearn's run.sh and the
GitHub Classroom workflow's grading step run against their exports the same way. Nothing here
ran on the real platforms.
"""

from __future__ import annotations

import base64
import json
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
import uuid
import zipfile
from pathlib import Path

import jsonschema
import pytest
import yaml

from judge.commands.export import ExportError
from judge.commands.export.wheels import Target, check_judge_wheel, prepare_wheels
from judge.core.problem import load_problem
from tests.classroom_reporter import reporter
from tests.conftest import FIXTURE_PROBLEMS, ROOT, SOLUTIONS, run_cli

pytestmark = pytest.mark.slow  # every export is built and run end to end (bundles, Gradescope's scripts as another user)

FX = FIXTURE_PROBLEMS / "fx-add"
SCHEMA_DIR = ROOT / "tests" / "schemas"
PYTHON_VERSION = f"{sys.version_info[0]}.{sys.version_info[1]}"
UID_SOLUTION = "import os\n\n\ndef add(a, b):\n    print('uid', os.getuid())\n    return a + b\n"
NEVER_SHIPPED = ("/reference/", "/wrong/")


def schema(name: str) -> dict:
    return json.loads((SCHEMA_DIR / name).read_text())


def clean_env(**extra: str) -> dict[str, str]:
    """The environment without this checkout on the path and without the machine's pip settings."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_") and k not in ("PYTHONPATH", "JUDGE_PROBLEMS")}
    return dict(env, **extra)


@pytest.fixture(scope="session")
def wheelhouse(tmp_path_factory) -> Path:
    """The judge's wheel (built once) and its dependencies' wheels for this Python and machine."""
    dest = tmp_path_factory.mktemp("wheels")
    prepare_wheels(dest, [load_problem(FX)], Target(PYTHON_VERSION), None)
    return dest


@pytest.fixture(scope="session")
def world_readable_root():
    """A folder an unprivileged user can traverse (pytest's own tmp folder is private to root)."""
    root = Path(tempfile.mkdtemp(prefix="pp-export-test-"))
    root.chmod(0o755)
    yield root
    shutil.rmtree(root, ignore_errors=True)


def _system_python() -> str | None:
    """A Python of this version whose standard library an unprivileged user can read (Debian's), if any."""
    candidate = Path(f"/usr/bin/python{PYTHON_VERSION}")
    return str(candidate) if candidate.is_file() else None


@pytest.fixture(scope="session")
def gradescope(tmp_path_factory, wheelhouse, world_readable_root):
    """autograder.zip exported, unzipped to an autograder root, and its setup.sh run: (zip, root, user)."""
    out = tmp_path_factory.mktemp("gradescope") / "autograder.zip"
    done = run_cli("export", "gradescope", "-o", str(out), "--problems", str(FX), "--wheels", str(wheelhouse),
                   "--timeout", "2", "--python-version", PYTHON_VERSION)
    assert done.returncode == 0, done.stdout + done.stderr
    root = world_readable_root / "autograder"
    (root / "source").mkdir(parents=True)
    with zipfile.ZipFile(out) as archive:
        archive.extractall(root / "source")
    shutil.copy(root / "source" / "run_autograder", root / "run_autograder")  # as Gradescope does
    system_python = _system_python()
    user = "nobody" if system_python and os.geteuid() == 0 else ""
    env = clean_env(AUTOGRADER_ROOT=str(root), JUDGE_PYTHON=system_python or sys.executable, JUDGE_STUDENT_USER=user,
                    PIP_CONFIG_FILE=os.devnull)
    setup = subprocess.run(["bash", str(root / "source" / "setup.sh")], env=env, capture_output=True, text=True,
                           timeout=600, check=False)
    assert setup.returncode == 0, setup.stdout + setup.stderr
    assert "Installed the judge" in setup.stdout
    return out, root, user


def run_autograder(root: Path, user: str, files: dict[str, bytes], **extra_env: str) -> dict:
    submission, results = root / "submission", root / "results"
    for folder in (submission, results):
        shutil.rmtree(folder, ignore_errors=True)
    submission.mkdir()
    for name, data in files.items():
        (submission / name).parent.mkdir(parents=True, exist_ok=True)
        (submission / name).write_bytes(data)
    env = clean_env(AUTOGRADER_ROOT=str(root), JUDGE_STUDENT_USER=user, **extra_env)
    done = subprocess.run(["bash", str(root / "run_autograder")], env=env, capture_output=True, text=True,
                          timeout=300, cwd=root, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    data = json.loads((results / "results.json").read_text())
    jsonschema.validate(data, schema("gradescope-results.schema.json"))
    assert sum(t["score"] for t in data["tests"]) == pytest.approx(data["score"])
    assert sum(t["max_score"] for t in data["tests"]) == pytest.approx(4.0)
    return data


def web_app_zip(solution: str) -> bytes:
    """The web app's "Download all" zip: <problem-id>/<entry> for every problem."""
    path = Path(tempfile.mkstemp(suffix=".zip")[1])
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("fx-add/adder.py", solution)
    data = path.read_bytes()
    path.unlink()
    return data


def test_gradescope_zip_has_the_scripts_at_its_root_and_no_solution(gradescope):
    out, _, _ = gradescope
    with zipfile.ZipFile(out) as archive:
        names = archive.namelist()
        modes = {info.filename: info.external_attr >> 16 for info in archive.infolist()}
        [wheel] = [n for n in names if n.startswith("pp-judge/wheels/pp_judge-")]
        archive.extract(wheel, out.parent)
    assert modes["setup.sh"] & 0o111 and modes["run_autograder"] & 0o111
    assert "pp-judge/problems/fx-add/tests/secret/test_big.py" in names
    assert "pp-judge/canonical.json" in names and "pp-judge/config.json" in names
    assert not [n for n in names if any(part in "/" + n for part in NEVER_SHIPPED)]
    assert any(n.startswith("pp-judge/wheels/numpy-") for n in names), "dependencies are bundled"
    assert any(n.startswith("pp-judge/wheels/pip-") for n in names), "pip runs from its wheel"
    check_judge_wheel(out.parent / wheel)  # raises if the judge's wheel carries a solution
    with zipfile.ZipFile(out.parent / wheel) as judge_wheel:  # exports also work from an installed judge
        assert "judge/commands/export/templates/gradescope_setup.sh" in judge_wheel.namelist()


@pytest.mark.parametrize("spawn", ["", "1"], ids=["fork", "spawn"])
def test_gradescope_grades_a_web_app_zip_as_an_unprivileged_user(gradescope, spawn):
    _, root, user = gradescope
    data = run_autograder(root, user, {"practice.zip": web_app_zip(UID_SOLUTION)}, JUDGE_SPAWN=spawn)
    assert data["score"] == 4.0
    assert {t["status"] for t in data["tests"]} == {"passed"}
    secret = [t for t in data["tests"] if "large" in t["name"]]
    assert [t["visibility"] for t in secret] == ["after_due_date"]
    if user:  # the learner's code ran as that user, not as root
        assert f"uid {pwd.getpwnam(user).pw_uid}" in data["tests"][0]["output"]


def test_gradescope_hostile_submissions_get_a_valid_zero(gradescope):
    _, root, user = gradescope
    marker = Path("/tmp/judge-was-here.txt")
    marker.unlink(missing_ok=True)
    writes = run_autograder(root, user, {"practice/fx-add/adder.py": (SOLUTIONS / "write_outside.py").read_bytes()})
    assert writes["score"] == 0 and not marker.exists()
    assert all("not allow writing outside" in t["output"] for t in writes["tests"] if t["visibility"] == "visible")
    loops = run_autograder(root, user, {"adder.py": (SOLUTIONS / "timeout.py").read_bytes()})  # a loose entry file
    [test] = loops["tests"]
    assert loops["score"] == 0 and test["max_score"] == 4.0 and "timed out after 2 s" in test["output"]
    nothing = run_autograder(root, user, {"notes.txt": b"I did not do it"})
    assert nothing["score"] == 0 and "could not be read" in nothing["output"]


def test_gradescope_export_lang_zh_writes_chinese_feedback(tmp_path, wheelhouse, gradescope):
    """`judge export gradescope --lang zh` bakes the language into the bundle: the judge installed by the
    other export's setup.sh then writes what students read in Chinese; keys, names and points do not change."""
    _, root, user = gradescope
    out = tmp_path / "autograder-zh.zip"
    done = run_cli("export", "gradescope", "-o", str(out), "--problems", str(FX), "--wheels", str(wheelhouse),
                   "--timeout", "2", "--python-version", PYTHON_VERSION, "--lang", "zh")
    assert done.returncode == 0, done.stdout + done.stderr
    source = tmp_path / "source"  # private until it is unreadable to others, as setup.sh leaves it
    with zipfile.ZipFile(out) as archive:
        archive.extractall(source)
    assert json.loads((source / "pp-judge" / "config.json").read_text())["lang"] == "zh"
    for path in [source, *source.rglob("*")]:
        path.chmod(path.stat().st_mode & 0o700)
    zh_root = root.parent / "autograder-zh"
    zh_root.mkdir()
    shutil.move(str(source), zh_root / "source")
    shutil.copy(zh_root / "source" / "run_autograder", zh_root / "run_autograder")
    (zh_root / "pp-judge-venv").symlink_to(root / "pp-judge-venv")  # the judge setup.sh installed
    partly = {"fx-add/adder.py": b"def add(a, b):\n    return a - b\n"}  # passes test_zero[7-0] only
    chinese, english = run_autograder(zh_root, user, partly), run_autograder(root, user, partly)
    assert chinese["score"] == english["score"] and set(chinese) == set(english)
    assert [(t["name"], t["score"], t["max_score"], t["status"], t["visibility"]) for t in chinese["tests"]] == [
        (t["name"], t["score"], t["max_score"], t["status"], t["visibility"]) for t in english["tests"]]
    assert "：公开测试 3 个中通过 1 个；1 个隐藏测试，截止日期后显示" in chinese["output"], chinese["output"]
    assert ": public tests 1 of 3 passed; 1 secret test, shown after the due date" in english["output"]
    failed = [t["output"] for t in chinese["tests"] if t["status"] == "failed" and t["visibility"] == "visible"]
    assert len(failed) == 2 and all(o.startswith("**未通过**，位于 `") and o.split("\n")[0].endswith(" 行")
                                    for o in failed), failed
    assert "add(1, 2): expected 3, got -1" in failed[0]  # the test's own message, as the test wrote it
    nothing = run_autograder(zh_root, user, {"notes.txt": b"I did not do it"})
    assert nothing["score"] == 0
    assert nothing["output"].startswith("**无法读取你的提交：** 其中没有已知的题目（应为 \\<题目 id>/\\<入口文件>，例如 "
                                        "fx-add/adder.py）；其中有 notes.txt (不是任何题目的文件)"), nothing["output"]


def test_prairielearn_statements_keep_their_images(tmp_path, wheelhouse):
    problem = tmp_path / "problems" / "fx-add"
    shutil.copytree(FX, problem)
    (problem / "assets").mkdir()
    (problem / "assets" / "sum.svg").write_text('<svg xmlns="http://www.w3.org/2000/svg"/>')
    readme = problem / "README.md"
    readme.write_text(readme.read_text() + '\n![the sum](assets/sum.svg)\n\n<img src="assets/sum.svg" alt="again">\n')
    out = tmp_path / "course"
    done = run_cli("export", "prairielearn", "-o", str(out), "--problems", str(problem), "--wheels", str(wheelhouse),
                   "--python-version", PYTHON_VERSION)
    assert done.returncode == 0, done.stdout + done.stderr
    question = out / "questions" / "pp-judge" / "fx-add"
    page = (question / "question.html").read_text()
    assert "![the sum]({{options.client_files_question_url}}/assets/sum.svg)" in page
    assert '<img src="{{options.client_files_question_url}}/assets/sum.svg"' in page
    assert "](assets/" not in page and '"assets/' not in page
    assert (question / "clientFilesQuestion" / "assets" / "sum.svg").is_file()


CANARIES = sorted((ROOT / "tests" / "fixtures" / "attacks" / "canary").glob("*.py"))


@pytest.mark.parametrize("level", ["bubblewrap", "user"])
def test_gradescope_no_attack_earns_a_point(gradescope, level):
    """tests/fixtures/attacks/canary: each earns the points only if its attack works (docs/hostile-input.md)."""
    _, root, user = gradescope
    if level == "user" and not user:
        pytest.skip("the user level needs root and a Python an unprivileged user can run (Debian's python3)")
    if level == "bubblewrap" and shutil.which("bwrap") is None and os.environ.get("CI") != "true":
        pytest.skip("bubblewrap is not installed")
    earned = {}
    for canary in CANARIES:
        data = run_autograder(root, user, {"fx-add/adder.py": canary.read_bytes()}, JUDGE_SANDBOX=level)
        if data["score"]:
            earned[canary.stem] = data["score"]
    assert earned == {}, f"these attacks earned points on the Gradescope bundle at the {level} level: {earned}"
    honest = run_autograder(root, user, {"fx-add/adder.py": b"def add(a, b):\n    return a + b\n"},
                            JUDGE_SANDBOX=level)
    assert honest["score"] == 4.0


@pytest.mark.skipif(os.geteuid() != 0, reason="the set-up check of the user level needs root")
def test_gradescope_setup_fails_loudly_when_the_user_cannot_run_the_python(tmp_path, wheelhouse, world_readable_root):
    """A Python in root's private home (this machine's own) cannot serve the unprivileged user: setup.sh stops."""
    if not str(os.path.realpath(sys.executable)).startswith("/root/"):
        pytest.skip("this machine's Python is not in root's private home")
    out = tmp_path / "autograder.zip"
    done = run_cli("export", "gradescope", "-o", str(out), "--problems", str(FX), "--wheels", str(wheelhouse),
                   "--python-version", PYTHON_VERSION)
    assert done.returncode == 0, done.stdout + done.stderr
    root = world_readable_root / "autograder-private-python"
    (root / "source").mkdir(parents=True)
    with zipfile.ZipFile(out) as archive:
        archive.extractall(root / "source")
    env = clean_env(AUTOGRADER_ROOT=str(root), JUDGE_PYTHON=sys.executable, JUDGE_STUDENT_USER="nobody",
                    JUDGE_SANDBOX="user", PIP_CONFIG_FILE=os.devnull)
    setup = subprocess.run(["bash", str(root / "source" / "setup.sh")], env=env, capture_output=True, text=True,
                           timeout=600, check=False)
    assert setup.returncode != 0, setup.stdout + setup.stderr
    assert f"the user nobody cannot run {os.path.realpath(sys.executable)}" in setup.stderr


def test_prairielearn_export_and_run_sh(tmp_path, wheelhouse, gradescope, world_readable_root):
    out = tmp_path / "course"
    done = run_cli("export", "prairielearn", "-o", str(out), "--problems", str(FX), "--wheels", str(wheelhouse),
                   "--python-version", PYTHON_VERSION)
    assert done.returncode == 0, done.stdout + done.stderr
    question = out / "questions" / "pp-judge" / "fx-add"
    info = json.loads((question / "info.json").read_text())
    uuid.UUID(info["uuid"])
    assert info["gradingMethod"] == "External" and info["type"] == "v3"
    options = info["externalGradingOptions"]
    assert options["enabled"] and options["entrypoint"] == "/grade/serverFilesCourse/pp_judge/run.sh"
    assert options["serverFilesCourse"] == ["pp_judge/"] and 0 < options["timeout"] <= 600
    assert options["image"] == f"python:{PYTHON_VERSION}-slim"
    page = (question / "question.html").read_text()
    assert 'file-name="adder.py"' in page and "<pl-external-grader-results>" in page
    assert (question / "starter.py").read_text() == (FX / "starter" / "adder.py").read_text()
    assert (question / "tests" / "problems" / "fx-add" / "tests" / "secret" / "test_big.py").is_file()
    assert not [p for p in out.rglob("*") if any(part in p.as_posix() + "/" for part in NEVER_SHIPPED)]
    # a grading job: /grade laid out as PrairieLearn does, the judge preinstalled (as in the Dockerfile's image)
    grade = world_readable_root / "grade"
    shutil.copytree(out / "serverFilesCourse", grade / "serverFilesCourse")
    shutil.copytree(question / "tests", grade / "tests")
    (grade / "student").mkdir()
    _, autograder_root, user = gradescope
    env = clean_env(GRADE_ROOT=str(grade), JUDGE_VENV=str(autograder_root / "pp-judge-venv"), JUDGE_STUDENT_USER=user)
    for solution, points in (("partly_failing.py", 3.0), ("crash.py", 0.0)):
        shutil.copy(SOLUTIONS / solution, grade / "student" / "adder.py")
        run = subprocess.run(["sh", str(grade / "serverFilesCourse" / "pp_judge" / "run.sh")], env=env,
                             capture_output=True, text=True, timeout=300, check=False)
        assert run.returncode == 0, run.stdout + run.stderr
        data = json.loads((grade / "results" / "results.json").read_text())
        jsonschema.validate(data, schema("prairielearn-results.schema.json"))
        assert data["points"] == points and data["max_points"] == 4.0 and data["score"] == points / 4


def test_github_classroom_template_and_its_grading_step(tmp_path, wheelhouse, monkeypatch, capsys):
    out = tmp_path / "assignment"
    done = run_cli("export", "github-classroom", "-o", str(out), "--problems", str(FX), "--wheels", str(wheelhouse))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "public tests only" in done.stdout
    workflow = yaml.safe_load((out / ".github" / "workflows" / "classroom.yml").read_text())
    steps = _check_workflow(workflow, out)
    files = [p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()]
    assert "fx-add/adder.py" in files and "fx-add/README.md" in files and "fx-add/tests/test_add.py" in files
    assert not [f for f in files if "secret" in f or any(part in "/" + f + "/" for part in NEVER_SHIPPED)]
    assert "python -m judge . --problems .judge/problems" in (out / "README.md").read_text()
    shutil.copy(SOLUTIONS / "partly_failing.py", out / "fx-add" / "adder.py")
    result = _run_step(steps["judge"], out, tmp_path)
    assert result["status"] == "pass" and result["max_score"] == 3.0  # the public tests only
    assert sum(t["score"] for t in result["tests"]) == 3.0
    # where bubblewrap cannot run and the runner is no root (GitHub's Ubuntu 24.04), the step fails: no plain
    from judge.commands.export import run as bundle_run
    from judge.sandbox import levels

    monkeypatch.setattr(levels.shutil, "which", lambda name: None)
    monkeypatch.setattr(levels.os, "geteuid", lambda: 1000)
    levels._choose.cache_clear()
    try:
        assert bundle_run.main(["check-sandbox", "--bundle", str(out / ".judge")]) == 2
    finally:
        levels._choose.cache_clear()
    assert "a platform's grading never runs learner code unsandboxed" in capsys.readouterr().err


def test_github_classroom_with_private_tests(tmp_path, wheelhouse):
    out, tests_out = tmp_path / "assignment", tmp_path / "assignment-tests"
    done = run_cli("export", "github-classroom", "-o", str(out), "--problems", str(FX), "--wheels", str(wheelhouse),
                   "--private-tests", "acme/pp-tests")
    assert done.returncode == 0, done.stdout + done.stderr
    assert (tests_out / "problems" / "fx-add" / "tests" / "secret" / "test_big.py").is_file()
    assert not (out / ".judge" / "problems" / "fx-add" / "tests" / "secret").exists()
    steps = _check_workflow(yaml.safe_load((out / ".github" / "workflows" / "classroom.yml").read_text()), out)
    checkout = steps["private"]
    assert checkout["with"] == {"repository": "acme/pp-tests", "token": "${{ secrets.JUDGE_TESTS_TOKEN }}",
                                "path": ".judge-tests", "persist-credentials": False}  # no token left in .git
    shutil.copytree(tests_out, out / ".judge-tests")  # what that checkout step does on GitHub
    shutil.copy(SOLUTIONS / "partly_failing.py", out / "fx-add" / "adder.py")
    # a judge.py at the repository's root is the student's (the practice launcher, or worse): the step's
    # `python -P -m` never imports it in place of the installed judge
    (out / "judge.py").write_text("import sys\nsys.exit('the repository judge.py ran in the grader')\n")
    result = _run_step(steps["judge"], out, tmp_path)
    assert result["status"] == "fail" and result["max_score"] == 4.0
    assert sum(t["score"] for t in result["tests"]) == 3.0
    # then the reporter's step, with the grading step's outputs as its environment (one exec, as on a runner)
    outputs = dict(line.split("=", 1) for line in (tmp_path / "github_output").read_text().splitlines())
    assert reporter({f"{k.upper()}_RESULTS": v for k, v in outputs.items()}) == ("3/4", "3/4")


def _check_workflow(workflow: dict, out: Path) -> dict[str, dict]:
    """The workflow GitHub Classroom's reporter needs; returns its steps by role."""
    assert workflow["name"] == "Autograding Tests"
    assert list(workflow["jobs"]) == ["run-autograding-tests"]
    assert "push" in workflow[True]  # YAML 1.1 reads the key `on` as true
    steps = workflow["jobs"]["run-autograding-tests"]["steps"]
    [judge] = [s for s in steps if s.get("id") == "judge"]
    [reporter] = [s for s in steps if s.get("uses", "").startswith("classroom-resources/autograding-grading-reporter")]
    # two runners per problem (the tests that earned points, the others), each read from <RUNNER>_RESULTS
    assert reporter["with"]["runners"] == "fx_add_earned,fx_add_lost"
    assert reporter["env"] == {"FX_ADD_EARNED_RESULTS": "${{ steps.judge.outputs.fx_add_earned }}",
                               "FX_ADD_LOST_RESULTS": "${{ steps.judge.outputs.fx_add_lost }}"}
    [install] = [s for s in steps if "pip install" in s.get("run", "")]
    assert (out / install["run"].split()[-1]).is_file(), "the workflow installs the wheel shipped in the template"
    # before the judge: bubblewrap installed and allowed its namespaces (Ubuntu 24.04 restricts them)
    [sandbox] = [s for s in steps if "apparmor_restrict_unprivileged_userns=0" in s.get("run", "")]
    assert "apt-get install -y -qq bubblewrap" in sandbox["run"] and steps.index(sandbox) < steps.index(judge)
    private = [s for s in steps if s.get("with", {}).get("token")]
    return {"judge": judge, "private": private[0] if private else {}}


def _run_step(step: dict, cwd: Path, tmp_path: Path) -> dict:
    """Run a workflow step's command locally, as the Actions runner would, and decode its `result` output."""
    output = tmp_path / "github_output"
    output.write_text("")
    env = dict(os.environ, GITHUB_OUTPUT=str(output), RUNNER_TEMP=str(tmp_path), PYTHONPATH=str(ROOT))
    done = subprocess.run(["bash", "-e", "-c", step["run"]], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    runners = dict(line.split("=", 1) for line in output.read_text().splitlines())
    assert list(runners) == ["fx_add_earned", "fx_add_lost"]
    earned, lost = (json.loads(base64.b64decode(value)) for value in runners.values())
    for data in (earned, lost):
        jsonschema.validate(data, schema("github-classroom-result.schema.json"))
    whole = json.loads((tmp_path / "judge-result.json").read_text())
    assert whole["max_score"] == earned["max_score"] + lost["max_score"]
    assert sum(t["score"] for t in whole["tests"]) == earned["max_score"] and not any(t["score"] for t in lost["tests"])
    return whole


def test_a_judge_wheel_with_solutions_is_refused_and_repacked_by_an_export(tmp_path, wheelhouse):
    dirty = _folder(tmp_path / "dirty")
    [clean] = wheelhouse.glob("pp_judge-*.whl")
    shutil.copy(clean, dirty / clean.name)
    with zipfile.ZipFile(dirty / clean.name, "a") as archive:  # what `pip wheel .` of the project carries
        archive.writestr("judge/_problems/fx-add/reference/adder.py", "def add(a, b): return a + b\n")
    with pytest.raises(ExportError, match="carries solution or secret files"):
        check_judge_wheel(dirty / clean.name)
    done = run_cli("export", "github-classroom", "-o", str(tmp_path / "out"), "--problems", str(FX),
                   "--wheels", str(dirty))
    assert done.returncode == 0, done.stderr
    [shipped] = (tmp_path / "out" / ".judge" / "wheels").glob("*.whl")
    check_judge_wheel(shipped)
    assert "judge/_problems/fx-add/problem.toml" in zipfile.ZipFile(shipped).namelist()
    not_a_wheel = _folder(tmp_path / "broken")
    with zipfile.ZipFile(not_a_wheel / clean.name, "w") as archive:
        archive.writestr("judge/_problems/fx-add/reference/adder.py", "def add(a, b): return a + b\n")
    refused = run_cli("export", "github-classroom", "-o", str(tmp_path / "out2"), "--problems", str(FX),
                      "--wheels", str(not_a_wheel))
    assert refused.returncode == 2 and "wheel metadata" in refused.stderr
    assert not (tmp_path / "out2").exists(), "a failed export leaves nothing behind"


def _folder(path: Path) -> Path:
    path.mkdir(parents=True)
    return path


def test_an_export_refuses_a_reference_that_fails(tmp_path):
    broken = tmp_path / "fx-add"
    shutil.copytree(FX, broken)
    shutil.copy(SOLUTIONS / "partly_failing.py", broken / "reference" / "adder.py")
    done = run_cli("export", "prairielearn", "-o", str(tmp_path / "out"), "--problems", str(broken),
                   "--wheels", str(tmp_path))
    assert done.returncode == 2 and "the reference solution must pass every test" in done.stderr
    assert "fx-add (failed: 3 of 4 tests passed)" in done.stderr
    assert not (tmp_path / "out").exists()


def test_github_classroom_default_export_gives_every_reference_full_marks(tmp_path, wheelhouse):
    """GitHub Classroom's default export grades with the public tests only: every bundled problem's reference,
    pushed as a student would, earns full marks in the grading step's runners and in the reporter's Points."""
    from tests.test_public_only import references_folder

    out = tmp_path / "assignment"
    done = run_cli("export", "github-classroom", "-o", str(out), "--wheels", str(wheelhouse), "-j", "2",
                   "--problems", str(ROOT / "problems"))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "A perfect submission (every reference solution) earns 80 of 80 points" in done.stdout
    assert "pp-quiz: 5 of 6 objectives, 9.5 of 10 points, are checked by secret tests only" in done.stdout
    references = references_folder(tmp_path / "references")
    for folder in references.iterdir():
        for entry in folder.iterdir():
            shutil.copy(entry, out / folder.name / entry.name)
    workflow = yaml.safe_load((out / ".github" / "workflows" / "classroom.yml").read_text())
    [step] = [s for s in workflow["jobs"]["run-autograding-tests"]["steps"] if s.get("id") == "judge"]
    output = tmp_path / "github_output"
    output.write_text("")
    env = dict(os.environ, GITHUB_OUTPUT=str(output), RUNNER_TEMP=str(tmp_path), PYTHONPATH=str(ROOT))
    run = subprocess.run(["bash", "-e", "-c", step["run"]], cwd=out, env=env, capture_output=True, text=True,
                         timeout=600, check=False)
    assert run.returncode == 0, run.stdout + run.stderr
    whole = json.loads((tmp_path / "judge-result.json").read_text())
    assert whole["max_score"] == 80 and sum(t["score"] for t in whole["tests"]) == 80
    runners = dict(line.split("=", 1) for line in output.read_text().splitlines())
    for name, value in runners.items():
        data = json.loads(base64.b64decode(value))
        jsonschema.validate(data, schema("github-classroom-result.schema.json"))
        if name.endswith("_earned"):
            assert data["max_score"] == 10, name  # exactly: no 10.000000000000007 beside a perfect score
    assert reporter({f"{k.upper()}_RESULTS": v for k, v in runners.items()}) == ("80/80", "80/80")


def test_an_export_refuses_a_reference_short_of_full_points(monkeypatch):
    """A reference that passes every test but would not earn full marks (a perfect student could not) is refused."""
    from judge.commands.export import bundle
    from judge.core.result import Result
    from judge.engines import native

    short = Result(problem="fx-add", status="passed", points=3.0, max_points=4.0)
    monkeypatch.setattr(native, "judge_many", lambda jobs, parallel: [short])
    with pytest.raises(ExportError, match=r"must earn full points before an export; it does not for fx-add "
                                          r"\(3 of 4 points\)"):
        bundle.canonical_results([load_problem(FX)], False, None)


def _course(tmp_path: Path) -> Path:
    """A course of two assignments: week1 (fx-add, 4 points, due 2026-12-01 23:59, 20 % a day) and week2 (fx-two)."""
    problems = tmp_path / "problems"
    for pid in ("fx-add", "fx-two"):
        shutil.copytree(FX, problems / pid, ignore=shutil.ignore_patterns("__pycache__"))
    toml = problems / "fx-two" / "problem.toml"
    toml.write_text(toml.read_text().replace('id = "fx-add"', 'id = "fx-two"'))
    (problems / "course.toml").write_text(
        'title = "A course"\n\n[[assignments]]\nname = "week1"\ntitle = "Week 1"\nproblems = ["fx-add"]\n'
        'points = 4\ndeadline = "2026-12-01T23:59"\nlate_penalty = 20\n\n'
        '[[assignments]]\nname = "week2"\nproblems = ["fx-two"]\ncanvas = "Week 2 (99)"\n')
    return problems


def test_an_assignment_whose_points_differ_from_its_problems_worth_is_refused(tmp_path, wheelhouse):
    """fx-add declares no points: it is worth its tests' weights, 4. An assignment that says 5 is refused by
    judge grade before any student is judged and by every export before anything is written (the check was
    made only when every problem declares its points)."""
    problems = _course(tmp_path)
    course = problems / "course.toml"
    course.write_text(course.read_text().replace("points = 4\n", "points = 5\n"))
    (tmp_path / "subs" / "ann" / "fx-add").mkdir(parents=True)
    (tmp_path / "subs" / "ann" / "fx-add" / "adder.py").write_text((FX / "reference" / "adder.py").read_text())
    graded = run_cli("grade", str(tmp_path / "subs"), "-o", str(tmp_path / "out"), "--problems", str(problems),
                     "--assignment", "week1")
    assert graded.returncode == 2, graded.stdout + graded.stderr
    assert "assignment week1: points = 5, but its problems are worth 4 (fx-add 4)" in graded.stderr, graded.stderr
    assert not (tmp_path / "out" / "grades.csv").exists()
    for platform in ("gradescope", "prairielearn", "github-classroom"):
        out = tmp_path / platform
        done = run_cli("export", platform, "-o", str(out), "--problems", str(problems), "--wheels", str(wheelhouse),
                       "--assignment", "week1")
        assert done.returncode == 2 and "points = 5, but its problems are worth 4" in done.stderr, (platform, done)
        assert not out.exists() or not any(out.iterdir()), platform
    # narrowed with --problem, an assignment is not checked against the problems left (it was, and refused)
    course.write_text(course.read_text().replace("points = 5\n", "points = 4\n")
                      + '\n[[assignments]]\nname = "both"\nproblems = ["fx-add", "fx-two"]\npoints = 8\n')
    narrowed = run_cli("grade", str(tmp_path / "subs"), "-o", str(tmp_path / "narrowed"), "--problems", str(problems),
                       "--assignment", "both", "--problem", "fx-add")
    assert narrowed.returncode == 0, narrowed.stdout + narrowed.stderr
    # two problems of one assignment with the same entry file: a flat LMS download cannot tell them apart
    both = run_cli("grade", str(tmp_path / "subs"), "-o", str(tmp_path / "both"), "--problems", str(problems),
                   "--assignment", "both")
    assert both.returncode == 0, both.stdout + both.stderr
    assert ("Note: fx-add and fx-two share the entry file adder.py: where students upload files one by one (Canvas, "
            "Blackboard, Gradescope), they hand them in as a zip laid out like practice/ (fx-add/adder.py).") \
        in both.stderr


def test_the_classroom_export_says_when_a_problem_is_worth_less_with_its_public_tests_only(tmp_path, wheelhouse):
    """With the public tests only, a problem that declares no points is worth its public tests' weights (3 of
    fx-add's 4): the export says so, and how to keep its worth, as it does for objectives left to secret tests."""
    done = run_cli("export", "github-classroom", "-o", str(tmp_path / "out"), "--problems", str(FIXTURE_PROBLEMS),
                   "--wheels", str(wheelhouse))
    assert done.returncode == 0, done.stderr
    assert ("fx-add: worth 3 of its 4 points here (it declares no points in problem.toml, and only its public tests "
            "run here; points = 4 there keeps its worth)") in done.stdout, done.stdout


def test_a_course_of_two_assignments_grades_exports_and_builds_per_assignment(tmp_path, wheelhouse):
    problems = _course(tmp_path)
    reference = (FX / "reference" / "adder.py").read_text()
    subs = tmp_path / "subs"
    subs.mkdir()
    for name in ("HW_ann_attempt_2026-12-02-10-00-00_adder.py", "HW_bob_attempt_2026-12-01-09-00-00_adder.py"):
        (subs / name).write_text(reference)  # Blackboard: ann 1 started day late, bob on time
    (subs / "HW_ann_attempt_2026-12-02-10-00-00.txt").write_text("receipt")
    (subs / "HW_bob_attempt_2026-12-01-09-00-00.txt").write_text("receipt")
    week1 = run_cli("grade", str(subs), "-o", str(tmp_path / "week1"), "--problems", str(problems),
                    "--assignment", "week1", "--similarity", "0")
    assert week1.returncode == 0, week1.stderr
    assert "Assignment week1: fx-add, due 2026-12-01 23:59 (20 % off per started day late)." in week1.stderr
    rows = (tmp_path / "week1" / "grades.csv").read_text().splitlines()
    assert rows[0] == "student,fx-add,submitted_at,days_late,penalty,total,max_total,status"
    assert rows[1].startswith("ann,4,2026-12-02T10:00:00,1,0.8,3.2,4,") and rows[2].startswith("bob,4,")
    assert (tmp_path / "week1" / "canvas.csv").read_text().splitlines()[0].endswith(",week1")
    week2 = run_cli("grade", str(subs), "-o", str(tmp_path / "week2"), "--problems", str(problems),
                    "--assignment", "week2", "--similarity", "0")
    assert week2.returncode == 0, week2.stderr
    rows = (tmp_path / "week2" / "grades.csv").read_text().splitlines()
    assert rows[0] == "student,fx-two,total,max_total,status"  # no deadline: no late columns
    assert rows[1] == "ann,4,4,4,ok", "the loose adder.py is fx-two's: the only problem of week2 with that entry"
    assert (tmp_path / "week2" / "canvas.csv").read_text().splitlines()[0].endswith(",Week 2 (99)")
    unknown = run_cli("grade", str(subs), "-o", str(tmp_path / "x"), "--problems", str(problems),
                      "--assignment", "week9")
    assert unknown.returncode == 2 and "no such assignment in" in unknown.stderr and "week1, week2" in unknown.stderr
    for name, pid in (("week1", "fx-add"), ("week2", "fx-two")):
        out = tmp_path / f"classroom-{name}"
        done = run_cli("export", "github-classroom", "-o", str(out), "--problems", str(problems), "--wheels",
                       str(wheelhouse), "--assignment", name)
        assert done.returncode == 0, done.stderr
        if name == "week1":
            assert "Assignment week1 (Week 1): fx-add; due 2026-12-01 23:59: set the due date on the platform." \
                in done.stdout
        assert sorted(p.name for p in (out / ".judge" / "problems").iterdir()) == [pid]
        assert json.loads((out / ".judge" / "canonical.json").read_text())["results"].keys() == {pid}
        site = tmp_path / f"site-{name}"
        built = run_cli("build", str(site), "--pyodide", "cdn", "--problems", str(problems), "--assignment", name)
        assert built.returncode == 0, built.stderr
        [manifest] = (site / "assets").glob("problems-*.json")
        assert [p["id"] for p in json.loads(manifest.read_text())["problems"]] == [pid]


def test_the_prairielearn_export_of_an_assignment_writes_its_assessment(tmp_path, wheelhouse):
    """week1: fx-add, 4 points, due 2026-12-01 23:59, 20 % off per started day late. The assessment holds its
    question worth its points, full credit until the deadline and then 80, 60, 40 and 20 % a day (as judge grade
    takes off), and matches PrairieLearn's schema; week2 has no deadline."""
    problems = _course(tmp_path)
    for name in ("week1", "week2"):
        out = tmp_path / name
        done = run_cli("export", "prairielearn", "-o", str(out), "--problems", str(problems), "--wheels",
                       str(wheelhouse), "--assignment", name)
        assert done.returncode == 0, done.stderr
        assert f"Wrote assessments/{name}/infoAssessment.json: copy assessments/{name}/ into" in done.stdout
        info = json.loads((out / "assessments" / name / "infoAssessment.json").read_text())
        jsonschema.validate(info, schema("prairielearn-infoAssessment.schema.json"))
        [question] = info["zones"][0]["questions"]
        assert (out / "questions" / question["id"] / "info.json").is_file()
        assert (question["autoPoints"], question["maxAutoPoints"]) == (4, 4)
        assert (info["type"], info["number"]) == ("Homework", name[-1])
    week1 = json.loads((tmp_path / "week1" / "assessments" / "week1" / "infoAssessment.json").read_text())
    assert week1["title"] == "Week 1"
    assert [(r["credit"], r.get("startDate"), r["endDate"]) for r in week1["allowAccess"]] == [
        (100, None, "2026-12-01T23:59:00"), (80, "2026-12-01T23:59:00", "2026-12-02T23:59:00"),
        (60, "2026-12-02T23:59:00", "2026-12-03T23:59:00"), (40, "2026-12-03T23:59:00", "2026-12-04T23:59:00"),
        (20, "2026-12-04T23:59:00", "2026-12-05T23:59:00")]
    week2 = json.loads((tmp_path / "week2" / "assessments" / "week2" / "infoAssessment.json").read_text())
    assert [r["credit"] for r in week2["allowAccess"]] == [100] and "set the dates" in week2["allowAccess"][0]["comment"]
    assert week1["uuid"] != week2["uuid"]


def test_prairielearn_access_rules_follow_the_late_policy_at_its_edges():
    from datetime import datetime

    from judge.commands.export.prairielearn import access_rules

    due = datetime(2026, 12, 1, 12, 0)
    assert [r["credit"] for r in access_rules(due, 12.5)] == [100, 87, 75, 62, 50, 37, 25, 12]
    assert [r["credit"] for r in access_rules(due, 100)] == [100]
    assert access_rules(due, 0) == [{"comment": "due 2026-12-01T12:00:00, with no late penalty", "credit": 100}]


WAITS = "import threading\n\nLOCK = threading.Lock()\n\n\ndef add(a, b):\n    LOCK.acquire()\n    LOCK.acquire()\n"


def test_code_that_waits_leaves_the_platform_time_to_receive_the_result(tmp_path):
    """Gradescope stops a whole grading after its autograder timeout (600 s by default) and then shows no result
    at all; PrairieLearn stops a job after its question's timeout. Code that waits (a lock taken twice) met only
    the judge's wall-clock backstop, ten times the CPU limit per problem: 305 s for one pp-1f1b-emulated (red team
    round 9, T1). A bundle's budget is now shared by its jobs: the run ends within it, saying what happened."""
    from judge.commands.export import bundle, run
    from judge.core.result import Result
    from judge.sandbox import levels

    problems = [load_problem(FX)]
    canonical = {"fx-add": Result(problem="fx-add", status="passed", points=4.0, max_points=4.0)}
    bundle.write_bundle(tmp_path / "bundle", problems, canonical, {"budget": bundle.grading_budget(70.0)}, True)
    (tmp_path / "submission" / "fx-add").mkdir(parents=True)
    (tmp_path / "submission" / "fx-add" / "adder.py").write_text(WAITS)
    graded = run.grade(run.read_bundle(tmp_path / "bundle"), tmp_path / "submission", levels.choose("auto"))
    [result] = graded.results
    assert result.status == "timeout" and result.message.startswith("timed out after 10 s of wall-clock time"), \
        result.message
    with pytest.raises(ExportError, match="leaves no time to judge"):
        bundle.grading_budget(45.0)


def test_the_exports_fit_the_judges_backstop_into_the_platforms_time_limit():
    from judge.commands.export import bundle, prairielearn
    from judge.sandbox.levels import WALL_BACKSTOP

    problem = load_problem(FX)
    seconds = prairielearn.question_timeout(problem, None)
    assert (problem.time_limit + 0.5) * WALL_BACKSTOP + prairielearn.INSTALL_SECONDS <= seconds <= 600
    assert prairielearn.question_timeout(problem, 120.0) == 600  # PrairieLearn's longest; the budget bounds the rest
    assert bundle.grading_budget(600.0) == 540.0
