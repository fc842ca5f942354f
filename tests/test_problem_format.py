"""Validation of problem folders: every error names the file and the field or line."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from judge.core.problem import ProblemError, discover_problems, load_problem
from tests.conftest import FIXTURE_PROBLEMS


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    target = tmp_path / "fx-add"
    shutil.copytree(FIXTURE_PROBLEMS / "fx-add", target)
    return target


def _edit_toml(folder: Path, old: str, new: str) -> None:
    path = folder / "problem.toml"
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


def _error(folder: Path, **kwargs) -> str:
    with pytest.raises(ProblemError) as info:
        load_problem(folder, **kwargs)
    return str(info.value)


def test_fixture_loads(folder):
    problem = load_problem(folder)
    assert (problem.id, problem.entry, problem.time_limit) == ("fx-add", "adder.py", 5.0)
    assert [p.name for p in problem.public_test_files] == ["test_add.py"]
    assert [p.name for p in problem.secret_test_files] == ["test_big.py"]
    assert [p.name for p in problem.wrong_files] == ["subtracts.py"]
    assert problem.module_name == "adder"


@pytest.mark.parametrize("old,new,expected", [
    ('title = "Fixture: add two numbers"\n', "", "missing field 'title'"),
    ("time_limit = 5", 'time_limit = "5"', "field 'time_limit': expected int or float, got str"),
    ("time_limit = 5", "time_limit = 0", "field 'time_limit': 0 must be between 0 and 600"),
    ('difficulty = "easy"', 'difficulty = "trivial"', "field 'difficulty': 'trivial' is not one of easy, medium, hard"),
    ('entry = "adder.py"', 'entry = "adder"', "field 'entry': 'adder' must be a Python module file name"),
    ('id = "fx-add"', 'id = "other"', "field 'id': 'other' does not match the folder name 'fx-add'"),
    ('id = "fx-add"', 'id = "Fx_Add"', "field 'id': 'Fx_Add' must be lowercase"),
    ("format = 1", "format = 2", "field 'format': this judge reads format 1, got 2"),
    ('tags = ["demo"]', 'tags = ["demo"]\ncolour = "red"', "unknown field(s) 'colour'"),
    ('tags = ["demo"]', 'tags = [1]', "field 'tags': every item must be a string"),
    ("order = 1", "order = true", "field 'order': expected int, got bool"),
])
def test_bad_metadata_names_file_and_field(folder, old, new, expected):
    _edit_toml(folder, old, new)
    message = _error(folder)
    assert str(folder / "problem.toml") in message
    assert expected in message


def test_malformed_toml_names_the_line(folder):
    (folder / "problem.toml").write_text('format = 1\nid = "fx-add\n')
    message = _error(folder)
    assert "problem.toml: invalid TOML" in message and "line 2" in message


def test_missing_files_are_named(folder):
    (folder / "reference" / "adder.py").unlink()
    assert "reference/adder.py: missing reference solution" in _error(folder)
    assert load_problem(folder, published=True).reference_path is None  # the site ships no reference
    (folder / "starter" / "adder.py").unlink()
    assert "starter/adder.py: missing" in _error(folder, published=True)


def test_no_public_tests(folder):
    shutil.rmtree(folder / "tests" / "public")
    assert "tests/public: no test_*.py file" in _error(folder)


def test_syntax_error_in_a_test_names_file_and_line(folder):
    (folder / "tests" / "secret" / "test_big.py").write_text("def test_x(:\n    pass\n")
    message = _error(folder)
    assert "tests/secret/test_big.py:1: syntax error" in message


def test_clashing_test_names(folder):
    shutil.copy(folder / "tests" / "public" / "test_add.py", folder / "tests" / "secret" / "test_add.py")
    assert "file name clashes" in _error(folder)


def test_discover_reports_broken_folders_and_keeps_the_others(tmp_path):
    for name in ("fx-add", "fx-two", "fx-dup"):
        shutil.copytree(FIXTURE_PROBLEMS / "fx-add", tmp_path / name)
    _edit_toml(tmp_path / "fx-two", 'id = "fx-add"', 'id = "fx-two"')
    (tmp_path / "fx-dup" / "problem.toml").write_text("not toml at all [")
    problems, errors = discover_problems(tmp_path)
    assert [p.id for p in problems] == ["fx-add", "fx-two"]
    assert len(errors) == 1 and "fx-dup/problem.toml: invalid TOML" in str(errors[0])


def test_missing_problems_root_is_an_error(tmp_path):
    with pytest.raises(ProblemError, match="no such problems folder"):
        discover_problems(tmp_path / "nowhere")


def test_every_metadata_error_is_reported_at_once(tmp_path):
    folder = tmp_path / "fx-add"
    shutil.copytree(FIXTURE_PROBLEMS / "fx-add", folder)
    toml = folder / "problem.toml"
    toml.write_text(toml.read_text().replace("summary =", "sumary =").replace('"easy"', '"easyish"'))
    with pytest.raises(ProblemError) as caught:
        load_problem(folder)
    text = str(caught.value)
    assert "3 problems" in text
    assert "unknown field(s) 'sumary' (did you mean 'summary'?)" in text
    assert "missing field 'summary'" in text and "'easyish' is not one of" in text


def test_toml_syntax_errors_give_the_line(tmp_path):
    folder = tmp_path / "fx-add"
    shutil.copytree(FIXTURE_PROBLEMS / "fx-add", folder)
    (folder / "problem.toml").write_text('format = 1\nid = "fx-add\n')
    with pytest.raises(ProblemError, match="at line 2"):
        load_problem(folder)


def test_broken_pipe_ends_quietly(tmp_path):
    import subprocess
    import sys

    command = f"{sys.executable} -m judge check {FIXTURE_PROBLEMS} -j 1 | true"  # the reader is gone at once
    done = subprocess.run(["bash", "-o", "pipefail", "-c", command], capture_output=True, text=True,
                          env={**__import__("os").environ, "PYTHONPATH": str(FIXTURE_PROBLEMS.parents[2])})
    assert "Traceback" not in done.stderr and "BrokenPipeError" not in done.stderr, done.stderr
