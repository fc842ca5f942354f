"""``judge new <id> [--entry FILE] [--title TEXT]``: scaffold a problem folder for an instructor.

The folder is a small working example (the GPipe bubble fraction) that validates and passes
``judge check`` except for one thing: every file has a ``FILL IN (instructor):`` line where the instructor's own
content goes, and ``check`` lists each of those lines with what to write. The entry file's name
is chosen here once: problem.toml, starter/, reference/, wrong/ and the tests' imports all use it.
A folder is never created inside the judge's own package (an installed judge is not a course).
"""

from __future__ import annotations

import argparse
import json
import keyword
import os
import shutil
import sys
from pathlib import Path

from ..core.errors import ExitCode, UsageError
from ..core.problem import ID_PATTERN
from ..i18n import _
from .options import bundled_problems_dir, holds_problems, language_option

DESCRIPTION = ("Scaffold a problem folder DIR/ID: a small working example (statement, assets/, starter, reference, "
               "public and secret tests, a wrong/ solution) in which every FILL IN (instructor) line says what to "
               "replace; `judge check` lists them.")
EPILOG = ("DIR is --problems, else $JUDGE_PROBLEMS, else the current folder when it is a problems folder (named "
          "problems, or holding problem folders), else ./problems (created if missing): run it in your course "
          "folder. It never writes inside the judge's own package.")

_PACKAGE = Path(__file__).resolve().parents[1]  # the judge package (judge/)
_SHADOWED = {"judge", "pytest", "numpy", "conftest", "_pytest", "pluggy"}  # modules the tests themselves import

_TOML = '''format = 1
id = "@@ID@@"
title = @@TITLE_TOML@@
summary = "FILL IN (instructor): one line that says what the learner will write"
order = 100                 # position in the problem list
difficulty = "easy"         # easy | medium | hard
entry = "@@ENTRY@@"         # the file the learner edits; the tests `import @@MODULE@@`
time_limit = 10             # seconds for one run of all the tests
tags = []
'''

_README = r'''# @@TITLE@@

FILL IN (instructor): your statement (idea, task, signatures, an example, what the tests check), not this one.

A pipeline of \( p \) stages that runs \( m \) micro-batches with GPipe leaves every stage idle
for a fraction of the time, the *bubble*:

$$ \frac{p - 1}{m + p - 1} $$

![GPipe with two stages and two micro-batches: each stage idles for a third of the time](assets/bubble.svg)

## Task

In `@@ENTRY@@`, write `bubble_fraction(p, m)`: the bubble fraction as a float.

```python
>>> import @@MODULE@@
>>> @@MODULE@@.bubble_fraction(4, 4)
0.42857142857142855
```

The public tests are in `tests/test_@@MODULE@@.py`.
'''

_SVG = """\
<svg xmlns="http://www.w3.org/2000/svg" width="320" height="84" viewBox="0 0 320 84"
     font-family="sans-serif" font-size="13">
  <text x="4" y="27">stage 0</text><text x="4" y="63">stage 1</text>
  <g stroke="#333">
    <rect x="70" y="10" width="40" height="26" fill="#6aa0e6"/>
    <rect x="110" y="10" width="40" height="26" fill="#6aa0e6"/>
    <rect x="150" y="10" width="80" height="26" fill="#eee"/>
    <rect x="230" y="10" width="40" height="26" fill="#f0a050"/>
    <rect x="270" y="10" width="40" height="26" fill="#f0a050"/>
    <rect x="70" y="46" width="40" height="26" fill="#eee"/>
    <rect x="110" y="46" width="40" height="26" fill="#6aa0e6"/>
    <rect x="150" y="46" width="40" height="26" fill="#6aa0e6"/>
    <rect x="190" y="46" width="40" height="26" fill="#f0a050"/>
    <rect x="230" y="46" width="40" height="26" fill="#f0a050"/>
    <rect x="270" y="46" width="40" height="26" fill="#eee"/>
  </g>
  <g text-anchor="middle">
    <text x="90" y="28">F0</text><text x="130" y="28">F1</text><text x="190" y="28">idle</text>
    <text x="250" y="28">B0</text><text x="290" y="28">B1</text>
    <text x="90" y="64">idle</text><text x="130" y="64">F0</text><text x="170" y="64">F1</text>
    <text x="210" y="64">B0</text><text x="250" y="64">B1</text><text x="290" y="64">idle</text>
  </g>
</svg>
"""

_STARTER = '''"""@@TITLE@@: the starter, what the learner sees first.

FILL IN (instructor): your starter: the statement's functions, raising NotImplementedError (it must import and fail).
"""


def bubble_fraction(p: int, m: int) -> float:
    """The fraction of the time a GPipe schedule of p stages and m micro-batches leaves a stage idle."""
    raise NotImplementedError("write bubble_fraction(p, m)")
'''

_REFERENCE = '''"""@@TITLE@@: the reference solution; never published.

FILL IN (instructor): your solution; it must pass every public and secret test within half of time_limit.
"""


def bubble_fraction(p: int, m: int) -> float:
    return (p - 1) / (m + p - 1)
'''

_PUBLIC = '''"""Public tests of @@ID@@: learners read them (practice/@@ID@@/tests/) and the web app runs them.

FILL IN (instructor): your public tests: `import @@MODULE@@` (the entry), call it in each test, say expected and got.
"""

import @@MODULE@@


def test_four_stages_four_micro_batches():
    """p = 4 stages, m = 4 micro-batches"""
    got = @@MODULE@@.bubble_fraction(4, 4)
    assert abs(got - 3 / 7) < 1e-12, f"bubble_fraction(4, 4): expected 3/7 = {3 / 7:.4f}, got {got!r}"
'''

_SECRET = '''"""Secret tests of @@ID@@: native grading only (judge grade, export); never on the site or in practice/.

FILL IN (instructor): the tests learners must not see (more sizes, edge cases), written like the public tests.
"""

import @@MODULE@@


def test_more_micro_batches_shrink_the_bubble():
    """p = 4 stages, m = 12 micro-batches"""
    got = @@MODULE@@.bubble_fraction(4, 12)
    assert abs(got - 3 / 15) < 1e-12, f"bubble_fraction(4, 12): expected 3/15 = {3 / 15:.4f}, got {got!r}"
'''

_WRONG = '''"""Counts m + p time slots instead of m + p - 1 (an off-by-one in the schedule's length).

FILL IN (instructor): one file per common mistake: a copy of @@ENTRY@@ making it, or a diff of the reference (.diff).
"""
# judge: caught-by test_four_stages_four_micro_batches


def bubble_fraction(p: int, m: int) -> float:
    return (p - 1) / (m + p)
'''

FILES = {  # path (with @@MODULE@@ / @@ENTRY@@) -> template; the order `new` lists them in
    "problem.toml": _TOML,
    "README.md": _README,
    "assets/bubble.svg": _SVG,
    "starter/@@ENTRY@@": _STARTER,
    "reference/@@ENTRY@@": _REFERENCE,
    "tests/public/test_@@MODULE@@.py": _PUBLIC,
    "tests/secret/test_@@MODULE@@_secret.py": _SECRET,
    "wrong/off_by_one.py": _WRONG,
}


def scaffold(root: Path, problem_id: str, entry: str = "solution.py", title: str | None = None) -> list[Path]:
    """Create ``root/problem_id`` from the template; return the files written. ValueError if it cannot."""
    if not ID_PATTERN.match(problem_id):
        raise ValueError(_("{id!r} is not a valid id: use lowercase letters, digits and '-'").format(id=problem_id))
    entry = entry_file_name(entry)
    title = (title or problem_id.replace("-", " ").capitalize()).strip()
    if not title or "\n" in title:
        raise ValueError(_("--title must be one non-empty line"))
    folder = root / problem_id
    if inside_judge_package(folder):
        raise ValueError(_("{path} is inside the judge's own package ({package}); problems belong in your course "
                           "folder: run `judge new` there (it writes ./problems/ID) or give --problems DIR")
                         .format(path=folder, package=_PACKAGE))
    if folder.exists():
        raise ValueError(_("{path} already exists; choose another id").format(path=folder))
    values = {"@@ID@@": problem_id, "@@TITLE@@": title, "@@TITLE_TOML@@": json.dumps(title, ensure_ascii=False),
              "@@ENTRY@@": entry, "@@MODULE@@": entry[:-3]}
    written = []
    for name, text in FILES.items():
        path = folder / _fill(name, values)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(_fill(text, values), encoding="utf-8")
        written.append(path)
    return written


def copy_examples(source: Path, root: Path) -> list[Path]:
    """Copy every problem folder of ``source`` that ``root`` lacks into ``root``; return the folders copied."""
    copied = []
    for folder in sorted(p for p in source.iterdir() if (p / "problem.toml").is_file()):
        target = root / folder.name
        if inside_judge_package(target):
            raise ValueError(_("{path} is inside the judge's own package; copy the examples into your course folder")
                             .format(path=target))
        if target.exists():
            continue
        shutil.copytree(folder, target, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        copied.append(target)
    return copied


def entry_file_name(entry: str) -> str:
    """``entry`` as an entry file name (``.py`` added); ValueError if the tests could not import it."""
    entry = entry if entry.endswith(".py") else entry + ".py"
    module = entry[:-3]
    if not module.isidentifier() or keyword.iskeyword(module) or "/" in entry:
        raise ValueError(f"--entry {entry!r}: " + _("must be a Python module file name like 'pp_sim.py'"))
    if module.startswith("test_"):
        raise ValueError(f"--entry {entry!r}: " + _("pytest would collect it as a test file; choose another name"))
    if module in sys.stdlib_module_names or module in _SHADOWED:
        raise ValueError(f"--entry {entry!r}: " + _("the learner's file would hide the module `{module}` from the "
                                                    "judge, pytest and the tests; choose another name").format(
                                                        module=module))
    return entry


def inside_judge_package(path: Path) -> bool:
    """Whether ``path`` is (inside) the judge's own package folder, where nothing may be written."""
    target = Path(path).resolve()
    return target == _PACKAGE or _PACKAGE in target.parents


def _fill(text: str, values: dict[str, str]) -> str:
    for key, value in values.items():
        text = text.replace(key, value)
    return text


# ------------------------------------------------------------------------------------------- the command
def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``judge new``'s options: the id, or --examples; the entry file, the title, where."""
    parser.add_argument("id", nargs="?",
                        help="the problem id (lowercase letters, digits and '-'), also the folder's name")
    parser.add_argument("--examples", action="store_true", help="instead, copy the judge's example problems "
                        "(with their references) into DIR, to start a course from them or beside your own")
    parser.add_argument("--entry", default="solution.py", metavar="FILE", help="the file learners edit and the "
                        "tests import, e.g. act_mem.py (default: solution.py)")
    parser.add_argument("--title", metavar="TEXT", help="the title (default: from the id)")
    parser.add_argument("--problems", type=Path, metavar="DIR", help="where to create it (default: "
                        "$JUDGE_PROBLEMS, else ./problems)")
    language_option(parser, "the errors")


def run(args: argparse.Namespace) -> int:
    """Scaffold the problem ``args.id``, or copy the example problems."""
    root = args.problems or Path(os.environ.get("JUDGE_PROBLEMS") or _new_problems_root())
    if args.examples:
        copied = copy_examples(bundled_problems_dir(), root)
        print(f"Copied {len(copied)} example problem(s) into {root}/: {', '.join(p.name for p in copied) or 'none'}"
              f" (those already there were left as they are). Check them: judge check {root}")
        return ExitCode.OK
    if not args.id:
        raise UsageError(_("judge new: give a problem id (or --examples to copy the example problems)"))
    try:
        written = scaffold(root, args.id, entry=args.entry, title=args.title)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    folder = root / args.id
    print(f"Created {folder}/:\n" + "".join(f"  {path.relative_to(folder).as_posix()}\n" for path in written)
          + f"Every FILL IN (instructor) line says what to replace (the example is a working problem). Then run:\n"
          f"  judge check {folder}")
    return ExitCode.OK


def _new_problems_root() -> Path:
    """./problems, or the current folder when it is a problems folder (never problems/problems/ID)."""
    here = Path.cwd()
    return Path(".") if here.name == "problems" or holds_problems(here) else Path("problems")
