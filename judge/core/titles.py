"""A test's title in the learner's language, declared beside the test.

Reports name a test by the first line of its docstring (English). A problem whose statement is
translated (``README.<lang>.md``) gives each test its title in that language with a marker::

    @pytest.mark.title(zh="GPipe：先全部前向，再全部反向")
    def test_gpipe_all_forwards_then_all_backwards(record_property):
        \"\"\"GPipe: all forwards, then all backwards\"\"\"

The keyword arguments are named by language code as in :func:`judge.lang.say` (``zh``, ``pt_BR``).
The collector names the test in the run's language (:func:`test_title`, in both engines), and
``judge check`` reports every test of a translated problem without a title in each of the
problem's languages (:func:`untranslated_tests`, read from the test files without running them).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..lang import say
from .findings import Finding

if TYPE_CHECKING:
    from .problem import Objective, Problem

TITLE_MARKER = "title"
TITLE_MARKER_HELP = "title(zh=...): the test's title in other languages, by language code"


def test_title(english: str, marker: Any | None) -> str:
    """``english`` (the docstring's first line) in the run's language, from the test's title marker."""
    if marker is None:
        return english
    return say(english, **{str(k): str(v) for k, v in dict(marker.kwargs).items()})


def problem_title(problem: Problem, lang: str) -> str:
    """The problem's title in ``lang``: its statement's first heading there (``README.zh.md``'s
    ``# ...``, as the page names it), else problem.toml's ``title``."""
    tag = lang.lower()
    for candidate in dict.fromkeys((tag, tag.split("-")[0])):
        path = problem.path / f"README.{candidate}.md"
        heading = _first_heading(path) if candidate != "en" and path.is_file() else None
        if heading:
            return heading
    return problem.title


def untranslated_tests(folder: Path, test_files: list[Path], languages: list[str]) -> list[Finding]:
    """A finding per test of ``test_files`` without a title in each of ``languages`` (the problem's
    statement's translations)."""
    found = []
    for path in test_files:
        for node, given in _test_titles(path):
            missing = [lang for lang in languages if lang not in given]
            if missing:
                rel = path.relative_to(folder).as_posix()
                example = ", ".join(f'{lang.replace("-", "_")}="..."' for lang in missing)
                found.append(Finding("untranslated-title", rel, node.lineno,
                                     f"{node.name} has no title in {', '.join(missing)} (the problem's statement "
                                     f"is translated): add @pytest.mark.title({example}) above it"))
    return found


def untranslated_objectives(objectives: list[Objective], languages: list[str]) -> list[Finding]:
    """A finding per objective without a title in each of ``languages``."""
    found = []
    for objective in objectives:
        missing = [lang for lang in languages if not objective.titles.get(lang)]
        if missing:
            example = ", ".join(f'{lang} = "..."' for lang in missing)
            found.append(Finding("untranslated-title", "problem.toml", 0,
                                 f"problem.toml: objective {objective.id!r} has no title in {', '.join(missing)} "
                                 f"(the problem's statement is translated): add titles = {{ {example} }}"))
    return found


def _first_heading(path: Path) -> str | None:
    """The text of the first ``# `` heading of a Markdown file outside code blocks (None without one)."""
    fenced = False
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        elif not fenced and line.startswith("# ") and line[2:].strip():
            return line[2:].strip().rstrip("#").strip()
    return None


def _test_titles(path: Path) -> Iterator[tuple[ast.FunctionDef | ast.AsyncFunctionDef, set[str]]]:
    """Each test function of ``path`` with the languages its title marker gives."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
        return  # the reference's run reports a test file that does not load
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"):
            yield node, {lang for decorator in node.decorator_list for lang in _marker_languages(decorator)}


def _marker_languages(decorator: ast.expr) -> set[str]:
    """The languages of ``@pytest.mark.title(zh=..., ...)`` (empty for any other decorator)."""
    if not (isinstance(decorator, ast.Call) and isinstance(decorator.func, ast.Attribute)
            and decorator.func.attr == TITLE_MARKER):
        return set()
    return {k.arg.replace("_", "-").lower() for k in decorator.keywords
            if k.arg and isinstance(k.value, ast.Constant) and isinstance(k.value.value, str) and k.value.value.strip()}
