"""Build the work directory for one run: the learner's code, support modules and the tests.

Layout (documented in docs/problem-format.md)::

    <workdir>/<entry>               the code under test
    <workdir>/<support modules>
    <workdir>/tests/public/...      copied from the problem folder
    <workdir>/tests/secret/...      only when grading with secret tests
    <workdir>/pytest.ini            pins pytest's configuration to the judge's (helpers on pythonpath)

:func:`layout` and :func:`layout_findings` enforce what the learner's code may write there: files
for its own use, but nothing that changes what pytest collects, configures or loads.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

from .problem import Problem
from .scoring import MARKER_HELP

#: files pytest or the import system would read if they appeared in the work directory
LOADED_NAMES = {"conftest.py", "pytest.ini", "pyproject.toml", "setup.cfg", "tox.ini", "__init__.py", "__pycache__"}
LOADED_SUFFIXES = (".pth", ".pyc", ".so", ".pyd")
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


def layout(workdir: Path, entry: str) -> dict[str, str]:
    """sha256 of every file the judge laid out in ``workdir`` (the learner's entry file aside)."""
    found = {}
    for rel in _walk(str(workdir)):
        path = os.path.join(workdir, rel)
        if rel != entry and os.path.isfile(path):
            found[rel] = _sha256(path)
    return found


def layout_findings(workdir: Path, laid_out: dict[str, str], entry: str,
                    shadows: Callable[[str], bool]) -> list[tuple[str, str]]:
    """``(kind, sentence)`` for each change the rule forbids: kind "tests" when a test file was
    changed or deleted, "files" for everything else (a changed support file or pytest.ini, any
    new file in the tests' folders, a conftest.py, an ini file, a .pth, byte code, a package, or a
    module file named like a module the tests could import)."""
    found = []
    for rel, digest in laid_out.items():
        path = os.path.join(workdir, rel)
        if not os.path.isfile(path) or _sha256(path) != digest:
            kind = "tests" if rel.startswith("tests/") else "files"
            found.append((kind, f"{rel} was {'changed' if os.path.isfile(path) else 'deleted'}"))
    for rel in _walk(str(workdir)):
        if rel in laid_out or rel == entry:
            continue
        name = rel.rsplit("/", 1)[-1]
        if rel.startswith("tests/"):
            found.append(("files", f"{rel} was written into the tests' folder"))
        elif name in LOADED_NAMES or name.endswith(LOADED_SUFFIXES):
            found.append(("files", f"{rel} was written into the work directory (pytest or Python would load it)"))
        elif name.endswith(".py") and shadows(name[:-3]):
            found.append(("files", (f"{rel} was written into the work directory, where it would be imported "
                                    f"in place of the module {name[:-3]}")))
    return found


def _walk(root: str) -> list[str]:
    """Relative paths (with /) of the files, and of the __pycache__ folders, below ``root``."""
    found = []
    for folder, dirs, files in os.walk(root):
        rel = os.path.relpath(folder, root).replace(os.sep, "/")
        prefix = "" if rel == "." else rel + "/"
        found += [prefix + name for name in files]
        found += [prefix + name for name in dirs if name == "__pycache__"]
        dirs[:] = [name for name in dirs if name != "__pycache__"]
    return found


def _sha256(path: str) -> str:
    with open(path, "rb") as handle:
        return hashlib.sha256(handle.read()).hexdigest()
