"""Build the tests' work directory for one run: the canonical tests and the support modules.

Layout (documented in docs/problem-format.md)::

    <workdir>/<support modules>     the problem's support/ files (the tests import them too)
    <workdir>/tests/public/...      copied from the problem folder
    <workdir>/tests/secret/...      only when grading with secret tests
    <workdir>/pytest.ini            pins pytest's configuration to the judge's (helpers on pythonpath)

The learner's entry file is not here: it lives in the learner's own folder, on the other side of
the boundary (:mod:`judge.sandbox`). The folder is private to the user running the tests.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from .problem import Problem
from .scoring import MARKER_HELP, OBJECTIVE_MARKER_HELP
from .titles import TITLE_MARKER_HELP

# Helper modules of tests/public and tests/secret are importable from every test file by name:
# pytest puts both folders on sys.path for the session (the `pythonpath` setting).
PYTEST_INI = ("[pytest]\npython_files = test_*.py\npython_functions = test_*\naddopts =\n"
              "pythonpath = tests/public tests/secret\n"
              f"markers =\n    {MARKER_HELP}\n    {OBJECTIVE_MARKER_HELP}\n    {TITLE_MARKER_HELP}\n")


def make_workdir(problem: Problem, include_secret: bool, root: str | Path | None = None) -> Path:
    """Create a fresh work directory for the tests (under ``root`` or the system temp folder)."""
    workdir = Path(tempfile.mkdtemp(prefix=f"judge-{problem.id}-", dir=root)).resolve()
    for path in problem.support_files:
        shutil.copyfile(path, workdir / path.name)
    for kind in ("public", "secret") if include_secret else ("public",):
        origin = problem.path / "tests" / kind
        if origin.is_dir():
            shutil.copytree(origin, workdir / "tests" / kind,
                            ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    (workdir / "pytest.ini").write_text(PYTEST_INI, encoding="utf-8")
    return workdir


def remove_workdir(workdir: Path) -> None:
    shutil.rmtree(workdir, ignore_errors=True)
