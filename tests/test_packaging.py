"""A wheel install carries the problems: ``pip install`` + ``python -m judge practice/`` works outside a clone,
and an instructor's ``judge new`` + ``judge check`` in an empty folder never write into the installed package.

The wheel is built once for the module and installed with ``--no-deps`` into a new virtual environment that
sees the packages of the environment running the tests (numpy, pytest...): the same test then works from a
plain interpreter and from inside a virtual environment (``--system-site-packages`` would see the base
interpreter's packages instead, which a virtual environment's own installs are not part of).
"""

from __future__ import annotations

import os
import site
import subprocess
import sys
import sysconfig
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import PROBLEMS, ROOT

pytestmark = pytest.mark.slow  # wheels are built and installed into fresh virtual environments


@dataclass(frozen=True)
class Installed:
    wheel: Path
    venv: Path
    python: Path
    purelib: Path
    env: dict[str, str]


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Installed:
    """The judge's wheel, built from this clone and installed in a new virtual environment."""
    tmp = tmp_path_factory.mktemp("packaging")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp / "dist"), str(ROOT)],
                   check=True, capture_output=True)
    [wheel] = (tmp / "dist").glob("*.whl")
    venv = tmp / "venv"
    python = make_venv_seeing_this_environment(venv)
    subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-deps", str(wheel)], check=True,
                   capture_output=True)
    purelib = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                  check=True, capture_output=True, text=True).stdout.strip())
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "JUDGE_PROBLEMS")}
    env["NO_COLOR"] = "1"
    return Installed(wheel, venv, python, purelib, env)


def test_wheel_carries_problems_and_runs_outside_the_clone(installed: Installed, tmp_path: Path) -> None:
    names = zipfile.ZipFile(installed.wheel).namelist()
    problem_ids = sorted(p.name for p in PROBLEMS.iterdir() if (p / "problem.toml").is_file())
    for pid in problem_ids:
        assert f"judge/_problems/{pid}/problem.toml" in names, pid
    assert not [n for n in names if "__pycache__" in n]
    assert "judge/_web/index.html" in names and not [n for n in names if "node_modules" in n]
    assert "judge/locale/zh/LC_MESSAGES/judge.mo" in names, "the message catalogs (docs/i18n.md)"
    python, env = installed.python, installed.env
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    result = subprocess.run([str(python), "-m", "judge", "practice/", "-j", "2"], cwd=outside, env=env,
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 1, result.stdout + result.stderr
    assert f"Created {len(problem_ids)} problem folders in" in result.stdout
    assert sorted(p.name for p in (outside / "practice").iterdir()) == ["judge.py", *problem_ids]  # + the launcher
    where = subprocess.run([str(python), "-c", "import judge; print(judge.__file__)"], cwd=outside, env=env,
                           capture_output=True, text=True, check=True).stdout
    assert str(installed.venv) in where, f"the test must exercise the installed wheel, not the clone: {where}"
    site = subprocess.run([str(python), "-m", "judge", "build", "site", "--pyodide", "cdn"], cwd=outside, env=env,
                          capture_output=True, text=True, timeout=600)
    assert site.returncode == 0, site.stdout + site.stderr
    assert (outside / "site" / "index.html").is_file()


def test_an_instructor_starts_from_an_empty_folder_and_nothing_is_written_into_the_package(
        installed: Installed, tmp_path: Path) -> None:
    course = tmp_path / "course"
    course.mkdir()
    before = _snapshot(installed.purelib)
    judge = [str(installed.venv / "bin" / "judge")]  # the console script `pip install` made

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(judge + list(args), cwd=course, env=installed.env, capture_output=True, text=True,
                              timeout=600)

    new = run("new", "pp-activation-memory", "--entry", "act_mem.py", "--title", "Activation memory")
    assert new.returncode == 0, new.stdout + new.stderr
    assert (course / "problems" / "pp-activation-memory" / "starter" / "act_mem.py").is_file()
    check = run("check", "-j", "2")  # ./problems, not the bundled set
    assert check.returncode == 1, check.stdout + check.stderr
    assert "Checking 1 problem folder(s) in problems" in check.stdout
    failures = [line for line in check.stdout.splitlines() if line.startswith("    x ")]
    assert failures and all(": fill in: " in line for line in failures), check.stdout
    package = installed.purelib / "judge"
    refused = run("new", "pp-sneaky", "--problems", str(package / "_problems"))
    assert refused.returncode == 2 and "inside the judge's own package" in refused.stderr
    assert _snapshot(installed.purelib) == before, "something was written into site-packages"


def _snapshot(folder: Path) -> dict[str, tuple[int, int]]:
    """Every file under ``folder`` with its size and modification time."""
    return {p.relative_to(folder).as_posix(): (p.stat().st_size, p.stat().st_mtime_ns)
            for p in folder.rglob("*") if p.is_file()}


def make_venv_seeing_this_environment(venv: Path) -> Path:
    """A virtual environment whose imports fall back to this interpreter's site-packages; its python.

    A ``.pth`` file lists them after the new environment's own site-packages, so what is installed
    there wins. The ``.pth`` files of those folders are not run (an editable install of the clone
    stays invisible).
    """
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             check=True, capture_output=True, text=True).stdout.strip()
    outer = [*site.getsitepackages(), sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]]
    if site.ENABLE_USER_SITE:
        outer.append(site.getusersitepackages())
    folders = list(dict.fromkeys(p for p in outer if Path(p).is_dir()))
    (Path(purelib) / "_outer_environment.pth").write_text("".join(f"{p}\n" for p in folders), encoding="utf-8")
    return python


def test_an_installed_judge_exports_on_its_own(installed: Installed, tmp_path: Path) -> None:
    """No clone: the export packs the installed judge's wheel, and a `--wheels` wheel built from the project
    (which carries every reference solution) is repacked without them."""
    from judge.commands.export.wheels import check_judge_wheel

    quiz = PROBLEMS / "pp-quiz"
    for name, extra in (("packed", []), ("repacked", ["--wheels", str(installed.wheel.parent)])):
        out = tmp_path / name
        done = subprocess.run([str(installed.python), "-m", "judge", "export", "github-classroom", "-o", str(out),
                               "--problems", str(quiz), *extra], cwd=tmp_path, env=installed.env,
                              capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stdout + done.stderr
        [wheel] = (out / ".judge" / "wheels").glob("pp_judge-*.whl")
        check_judge_wheel(wheel)
        names = zipfile.ZipFile(wheel).namelist()
        assert "judge/_problems/pp-quiz/problem.toml" in names and "judge/commands/cli.py" in names
        assert not [n for n in names if "/reference/" in n or "/wrong/" in n or "/secret/" in n], name
        assert not [n for n in names if n.startswith("judge/_problems/") and "pp-quiz" not in n]
    assert "/reference/" in "\n".join(zipfile.ZipFile(installed.wheel).namelist()), "the built wheel did carry them"
