"""Every test a learner sees has a name of its own that says what it tests (issue 24, item 9).

Across a problem's public and secret tests, as the Result shows them: no two tests share an id or a
name. And no parametrized test leaves its ids to pytest where pytest's id would hide what the case
is: ``[4-4]`` for both ``('4', 4)`` and ``(4, 4)``, ``[]`` for ``''``, ``[args3]`` or ``[want0]`` for a
value pytest cannot show (its argument name and an index), ``[4-4_0]`` and ``[4-4_1]`` for two cases
pytest had to tell apart itself. Such a test gives explicit ``ids=`` (``p='4' (a str), m=4``).
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from pathlib import Path

import pytest

from judge.core.problem import Problem, load_problem
from judge.core.result import Result
from judge.engines.native import Job, judge_many
from tests.conftest import PROBLEMS
from tests.judged import judge_cached, selected, solution_job

FOLDERS = sorted(p for p in PROBLEMS.iterdir() if (p / "problem.toml").is_file())
TEST = "test_every_test_of_a_problem_has_a_name_of_its_own_that_says_what_it_tests"


@pytest.fixture(scope="module")
def references(request: pytest.FixtureRequest) -> dict[str, Result]:
    """The bundled reference of every problem this run selected, judged with its secret tests (the
    tests' shared Results, tests/judged.py)."""
    folders = selected(request, TEST, "folder")
    jobs = [solution_job(folder, f"{folder.name}/reference", load_problem(folder).reference_path.read_text("utf-8"))
            for folder in folders]
    return {folder.name: result for folder, result in zip(folders, judge_cached(jobs), strict=True)}


def _parametrize_calls(path: Path) -> list[tuple[str, ast.Call]]:
    """(test function, its ``@pytest.mark.parametrize(...)`` call) for every parametrize of the file."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"):
            for deco in node.decorator_list:
                if isinstance(deco, ast.Call) and ast.unparse(deco.func).endswith("mark.parametrize"):
                    found.append((node.name, deco))
    return found


def _literal_strs(node: ast.AST) -> list[str]:
    """The str constants of a literal, not those passed to a call (``float("nan")`` is a float)."""
    if isinstance(node, ast.Constant):
        return [node.value] if isinstance(node.value, str) else []
    if isinstance(node, ast.Call):
        return []
    return [text for child in ast.iter_child_nodes(node) for text in _literal_strs(child)]


_HIDDEN_TEXT = re.compile(r"-?\d+(\.\d+)?|True|False|None|nan|-?inf|\s.*|.*\s|")


def ambiguous_parametrizations(problem: Problem) -> list[str]:
    """Parametrizations without ``ids=`` whose literal values pytest would show ambiguously: a str that
    reads as a number, a bool, None, nothing or has spaces at an end (pytest shows it without quotes)."""
    found = []
    for path in [*problem.public_test_files, *problem.secret_test_files]:
        for function, call in _parametrize_calls(path):
            if any(k.arg == "ids" for k in call.keywords) or len(call.args) < 2:
                continue
            texts = _literal_strs(call.args[1])
            hidden = [t for t in texts if _HIDDEN_TEXT.fullmatch(t)]
            if hidden:
                found.append(f"{path.relative_to(problem.path)}::{function}: the str {hidden[0]!r} shows as "
                             f"[{hidden[0]}]; give explicit ids=")
    return found


def fallback_ids(problem: Problem, result: Result) -> list[str]:
    """Test ids in which pytest fell back on ``<argument name><index>`` (a value it cannot show) or on
    ``_<n>`` suffixes (cases it had to tell apart itself)."""
    arguments: dict[str, set[str]] = {}
    for path in [*problem.public_test_files, *problem.secret_test_files]:
        for function, call in _parametrize_calls(path):
            if any(k.arg == "ids" for k in call.keywords):
                continue  # its ids are the author's
            names = call.args[0].value if call.args and isinstance(call.args[0], ast.Constant) else ""
            arguments.setdefault(function, set()).update(n.strip() for n in str(names).split(",") if n.strip())
    found = []
    ids = {t.id for t in result.tests}
    for test_id in sorted(ids):
        function, _, rest = test_id.split("::")[-1].partition("[")
        if not rest:
            continue
        parts = rest.removesuffix("]").split("-")
        if any(re.fullmatch(rf"{re.escape(name)}\d+", part) for part in parts for name in arguments.get(function, ())):
            found.append(f"{test_id}: pytest's fallback id (argument name and index); give explicit ids=")
        stem = re.fullmatch(r"(.*)_\d+\]", test_id)
        if stem and f"{stem.group(1)}_0]" in ids and f"{stem.group(1)}_1]" in ids:
            found.append(f"{test_id}: pytest numbered cases it could not tell apart; give explicit ids=")
    return found


@pytest.mark.slow
@pytest.mark.parametrize("folder", FOLDERS, ids=[f.name for f in FOLDERS])
def test_every_test_of_a_problem_has_a_name_of_its_own_that_says_what_it_tests(folder: Path, references) -> None:
    problem = load_problem(folder)
    result = references[problem.id]
    assert result.status == "passed" and result.tests, (result.status, result.message)
    assert {t.visibility for t in result.tests} == {"public", "secret"}  # both kinds collected
    for what, values in (("id", [t.id for t in result.tests]), ("name", [t.name for t in result.tests])):
        twice = sorted(v for v, n in Counter(values).items() if n > 1)
        assert not twice, f"{problem.id}: tests sharing a {what}: {twice}"
    assert ambiguous_parametrizations(problem) == []
    assert fallback_ids(problem, result) == []


def test_the_checks_catch_what_pytest_would_show_ambiguously(tmp_path: Path) -> None:
    """The two checks above on a problem whose tests leave ambiguous ids to pytest."""
    import shutil

    from tests.conftest import FIXTURE_PROBLEMS

    folder = tmp_path / "fx-add"
    shutil.copytree(FIXTURE_PROBLEMS / "fx-add", folder, ignore=shutil.ignore_patterns("__pycache__"))
    (folder / "tests" / "public" / "test_ids.py").write_text(
        "import pytest\nfrom adder import add\n\n\n"
        "@pytest.mark.parametrize('a, b', [('4', 4), (4, 4)])\ndef test_strs(a, b):\n    add(int(a), b)\n\n\n"
        "@pytest.mark.parametrize('a, b', [('4', 4), (4, 4)], ids=['a=str', 'a=int'])\ndef test_named(a, b):\n"
        "    add(int(a), b)\n\n\n"
        "@pytest.mark.parametrize('pair', [(1, 2), [3, 4]])\ndef test_pairs(pair):\n    add(*pair)\n", encoding="utf-8")
    problem = load_problem(folder)
    assert ambiguous_parametrizations(problem) == [
        "tests/public/test_ids.py::test_strs: the str '4' shows as [4]; give explicit ids="]
    [result] = judge_many([Job(problem, problem.reference_path, include_secret=True)], parallel=1)
    names = [t.id.split("::")[-1] for t in result.tests]
    assert "test_strs[4-4_0]" in names and "test_named[a=str]" in names, names
    found = fallback_ids(problem, result)
    assert any(f.startswith("tests/public/test_ids.py::test_strs[4-4_0]: pytest numbered") for f in found), found
    assert any("test_pairs[pair1]: pytest's fallback id" in f for f in found), found
    assert not any("test_named" in f for f in found), found
