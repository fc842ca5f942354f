"""The learner's practice folder: create it from the starters and find the solutions in it.

``practice/<problem-id>/`` holds the learner's entry file, the statement and a copy of the public
tests to read, and ``practice/judge.py`` is a launcher: ``python practice/judge.py [options]`` does
what ``python -m judge practice/ [options]`` does. Creating it never overwrites a file that exists;
the verdict always comes from the canonical tests in the problem folder, so a copy that was edited only earns a warning.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path

from ..core.assets import asset_files
from ..core.problem import Problem
from .statements import translations


@dataclass
class Workspace:
    """What was found in a practice folder: solutions to judge, and things to warn about."""

    solutions: list[tuple[Problem, Path]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)  # folders that are not problems of the set, skipped
    created: list[Path] = field(default_factory=list)


LAUNCHER = "judge.py"
_LAUNCHER_TEXT = '''"""Judge the exercises in this folder: `python judge.py [options]` = `python -m judge DIR [options]`

Written by the judge when it created this practice folder; the judge itself is the installed `judge` package.
"""

import importlib
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]  # this file is not the judge package

if __name__ != "__main__":  # imported as `judge` (python -m judge ..., run in this folder): the real one instead
    del sys.modules[__name__]
    sys.modules[__name__] = importlib.import_module("judge")
else:
    try:
        from judge.commands.cli import main
    except ImportError:
        sys.exit("The judge is not installed here: install it (python -m pip install ...) as your course says.")
    # as a script, judge this folder; run as `python -m judge ...` in this folder, do just what was asked
    sys.exit(main([str(HERE), *sys.argv[1:]] if __spec__ is None else sys.argv[1:]))
'''


def create_practice(target: Path, problems: list[Problem]) -> list[Path]:
    """Create ``target/<id>/`` for every problem that lacks one, and the launcher; return the folders created."""
    created = []
    for problem in problems:
        folder = target / problem.id
        if folder.exists():
            continue
        (folder / "tests").mkdir(parents=True)
        (folder / problem.entry).write_text(problem.starter, encoding="utf-8")
        (folder / "README.md").write_text(problem.statement, encoding="utf-8")
        for path in translations(problem.path).values():  # README.zh.md...: the statement in other languages
            shutil.copyfile(path, folder / path.name)
        for path in problem.public_test_files + problem.support_files:
            shutil.copyfile(path, folder / ("tests" if path in problem.public_test_files else ".") / path.name)
        for path in asset_files(problem.path):  # what the statement's images and links point at
            (folder / path.relative_to(problem.path)).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, folder / path.relative_to(problem.path))
        created.append(folder)
    launcher = target / LAUNCHER
    if created and not launcher.exists():
        launcher.write_text(_LAUNCHER_TEXT, encoding="utf-8")
    return created


def find_solutions(target: Path, problems: list[Problem]) -> Workspace:
    """Find ``<dir>/<problem-id>/<entry>`` files under ``target`` (or ``target`` itself is one)."""
    by_id = {p.id: p for p in problems}
    workspace = Workspace()
    if target.resolve().name in by_id and not _holds_problem_folders(target, by_id):  # also "." inside one
        folders = [target]
    else:
        folders = sorted(p for p in target.iterdir() if p.is_dir() and not p.name.startswith((".", "_")))
    for folder in folders:
        problem = by_id.get(folder.resolve().name)
        if problem is None:
            workspace.unknown.append(folder.name)
            continue
        entry = folder / problem.entry
        if not entry.is_file():
            workspace.warnings.append(f"{folder}: no {problem.entry} in it; skipped")
            continue
        workspace.warnings.extend(modified_copies(folder, problem))
        workspace.solutions.append((problem, entry))
    workspace.solutions.sort(key=lambda item: (item[0].order, item[0].id))
    return workspace


def modified_copies(folder: Path, problem: Problem) -> list[str]:
    """Warnings for copied public tests or support modules that differ from the canonical ones."""
    warnings = []
    for path, copy in [(p, folder / "tests" / p.name) for p in problem.public_test_files] + \
                      [(p, folder / p.name) for p in problem.support_files]:
        if copy.is_file() and copy.read_bytes() != path.read_bytes():
            warnings.append(f"{copy} differs from the canonical copy; the verdict uses "
                            f"{path} (editing the copy changes nothing)")
    return warnings


def _holds_problem_folders(target: Path, by_id: dict[str, Problem]) -> bool:
    return any((target / pid).is_dir() for pid in by_id)
