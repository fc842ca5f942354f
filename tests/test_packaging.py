"""A wheel install carries the problems: ``pip install`` + ``python -m judge practice/`` works outside a clone.

The wheel is installed with ``--no-deps`` into a new virtual environment that sees the packages of
the environment running the tests (numpy, pytest...): the same test then works from a plain
interpreter and from inside a virtual environment (``--system-site-packages`` would see the base
interpreter's packages instead, which a virtual environment's own installs are not part of).
"""

from __future__ import annotations

import os
import site
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

from tests.conftest import PROBLEMS, ROOT


def test_wheel_carries_problems_and_runs_outside_the_clone(tmp_path):
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path / "dist"), str(ROOT)],
                   check=True, capture_output=True)
    [wheel] = (tmp_path / "dist").glob("*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    problem_ids = sorted(p.name for p in PROBLEMS.iterdir() if (p / "problem.toml").is_file())
    for pid in problem_ids:
        assert f"judge/_problems/{pid}/problem.toml" in names, pid
    assert not [n for n in names if "__pycache__" in n]
    assert "judge/_web/index.html" in names and not [n for n in names if "node_modules" in n]
    venv = tmp_path / "venv"
    python = make_venv_seeing_this_environment(venv)
    subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-deps", str(wheel)], check=True,
                   capture_output=True)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "JUDGE_PROBLEMS")}
    env["NO_COLOR"] = "1"
    result = subprocess.run([str(python), "-m", "judge", "practice/", "-j", "2"], cwd=outside, env=env,
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 1, result.stdout + result.stderr
    assert f"Created {len(problem_ids)} problem folder(s)" in result.stdout
    assert sorted(p.name for p in (outside / "practice").iterdir()) == problem_ids
    where = subprocess.run([str(python), "-c", "import judge; print(judge.__file__)"], cwd=outside, env=env,
                           capture_output=True, text=True, check=True).stdout
    assert str(venv) in where, f"the test must exercise the installed wheel, not the clone: {where}"
    site = subprocess.run([str(python), "-m", "judge", "build", "site", "--pyodide", "cdn"], cwd=outside, env=env,
                          capture_output=True, text=True, timeout=600)
    assert site.returncode == 0, site.stdout + site.stderr
    assert (outside / "site" / "index.html").is_file()


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
