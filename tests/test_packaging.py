"""A wheel install carries the problems: ``pip install`` + ``python -m judge practice/`` works outside a clone."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile

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
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True)
    python = venv / "bin" / "python"
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
