"""Build the work directory for one run: the learner's code, support modules and the tests.

Layout (documented in docs/problem-format.md)::

    <workdir>/<entry>               the code under test
    <workdir>/<support modules>
    <workdir>/tests/public/...      copied from the problem folder
    <workdir>/tests/secret/...      only when grading with secret tests
    <workdir>/pytest.ini            pins pytest's configuration to the judge's (helpers on pythonpath)
"""

from __future__ import annotations

import hashlib
import shutil
import tempfile
from pathlib import Path

from .problem import Problem
from .scoring import MARKER_HELP

# Helper modules of tests/public and tests/secret are importable from every test file by name:
# pytest puts both folders on sys.path for the session (the `pythonpath` setting).
PYTEST_INI = ("[pytest]\npython_files = test_*.py\npython_functions = test_*\naddopts =\n"
              "pythonpath = tests/public tests/secret\n"
              f"markers =\n    {MARKER_HELP}\n")


def make_workdir(problem: Problem, source: str, include_secret: bool, root: str | Path | None = None) -> Path:
    """Create a fresh work directory (under ``root`` or the system temp folder) and return it."""
    workdir = Path(tempfile.mkdtemp(prefix=f"judge-{problem.id}-", dir=root)).resolve()
    (workdir / problem.entry).write_text(source, encoding="utf-8")
    for path in problem.support_files:
        shutil.copyfile(path, workdir / path.name)
    for kind in ("public", "secret") if include_secret else ("public",):
        origin = problem.path / "tests" / kind
        if origin.is_dir():
            shutil.copytree(origin, workdir / "tests" / kind,
                            ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    (workdir / "pytest.ini").write_text(PYTEST_INI, encoding="utf-8")
    return workdir


def fingerprint(workdir: Path, names: list[str]) -> dict[str, str]:
    """sha256 of each named file under ``workdir`` (missing files map to ``"missing"``)."""
    prints = {}
    for name in names:
        path = workdir / name
        prints[name] = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "missing"
    return prints


def remove_workdir(workdir: Path) -> None:
    shutil.rmtree(workdir, ignore_errors=True)
