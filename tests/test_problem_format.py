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


def _findings(folder: Path, **kwargs) -> list[tuple[str, str]]:
    """The kind and the file of each finding that stops ``folder`` from loading."""
    with pytest.raises(ProblemError) as info:
        load_problem(folder, **kwargs)
    return [(f.kind, f.path) for f in info.value.findings]


def test_fixture_loads(folder):
    problem = load_problem(folder)
    assert (problem.id, problem.entry, problem.time_limit) == ("fx-add", "adder.py", 5.0)
    assert [p.name for p in problem.public_test_files] == ["test_add.py"]
    assert [p.name for p in problem.secret_test_files] == ["test_big.py"]
    assert [p.name for p in problem.wrong_files] == ["subtracts.py"]
    assert problem.module_name == "adder"


@pytest.mark.parametrize("old,new,kind,field", [
    ('title = "Fixture: add two numbers"\n', "", "missing-field", "title"),
    ("time_limit = 5", 'time_limit = "5"', "wrong-type", "time_limit"),
    ("time_limit = 5", "time_limit = 0", "bad-value", "time_limit"),
    ('difficulty = "easy"', 'difficulty = "trivial"', "bad-value", "difficulty"),
    ('entry = "adder.py"', 'entry = "adder"', "bad-value", "entry"),
    ('id = "fx-add"', 'id = "other"', "bad-value", "id"),
    ('id = "fx-add"', 'id = "Fx_Add"', "bad-value", "id"),
    ("format = 1", "format = 2", "bad-value", "format"),
    ('tags = ["demo"]', 'tags = ["demo"]\ncolour = "red"', "unknown-field", "colour"),
    ('tags = ["demo"]', 'tags = [1]', "bad-value", "tags"),
    ("order = 1", "order = true", "wrong-type", "order"),
    ("order = 1", 'order = 1\nscoring = "most"', "bad-value", "scoring"),
])
def test_bad_metadata_names_file_and_field(folder, old, new, kind, field):
    _edit_toml(folder, old, new)
    assert _findings(folder) == [(kind, "problem.toml")]
    message = _error(folder)
    assert str(folder / "problem.toml") in message
    assert f"'{field}'" in message  # field names stay as written, in every language


def test_a_bad_value_says_what_it_got_and_what_is_allowed(folder):
    _edit_toml(folder, 'difficulty = "easy"', 'difficulty = "trivial"')
    assert "field 'difficulty': 'trivial' is not one of easy, medium, hard" in _error(folder)


def test_malformed_toml_names_the_line(folder):
    (folder / "problem.toml").write_text('format = 1\nid = "fx-add\n')
    message = _error(folder)
    assert "problem.toml: invalid TOML" in message and "line 2" in message
    assert _findings(folder) == [("invalid-toml", "")]


def test_missing_files_are_named(folder):
    (folder / "reference" / "adder.py").unlink()
    assert _findings(folder) == [("missing-file", "")]
    assert "reference/adder.py: missing reference solution" in _error(folder)
    assert load_problem(folder, published=True).reference_path is None  # the site ships no reference
    (folder / "starter" / "adder.py").unlink()
    assert "starter/adder.py: missing" in _error(folder, published=True)


@pytest.mark.parametrize("link, target", [
    ("support/helpers.py", "../reference/adder.py"),  # the reference, published as a support module
    ("tests/public/key.py", "../secret/test_big.py"),  # a secret test among the public ones
    ("README.fr.md", "/etc/hostname"),  # a file from outside the folder, as a statement
    ("notes", "reference"),  # a folder
])
def test_a_symbolic_link_anywhere_in_the_folder_is_refused(folder, link, target):
    """The site, the practice folder and the exports copy parts of a problem folder: a link would publish what
    it points to (reference/, a secret test, a file of the machine's), so a folder with one does not load."""
    path = folder / link
    path.parent.mkdir(parents=True, exist_ok=True)
    path.symlink_to(target)
    assert _findings(folder) == [("symbolic-link", "")]
    assert f"fx-add/{link} is a symbolic link" in _error(folder)
    assert f"fx-add/{link} is a symbolic link" in _error(folder, published=True)


def test_an_export_copies_only_what_the_format_publishes(folder, tmp_path):
    from judge.commands.export.bundle import copy_problem

    (folder / "solution_draft.py").write_text("the reference, half done\n")
    shutil.copytree(folder / "tests" / "secret", folder / "tests" / "secret.bak")
    (folder / "README.zh.md").write_text((folder / "README.md").read_text())
    copied = copy_problem(load_problem(folder), tmp_path / "copy" / "fx-add", include_secret=False)
    assert sorted(p.name for p in copied.iterdir()) == ["README.md", "README.zh.md", "problem.toml", "starter",
                                                        "tests"]
    assert sorted(p.name for p in (copied / "tests").iterdir()) == ["public"]
    with_secret = copy_problem(load_problem(folder), tmp_path / "with-secret" / "fx-add", include_secret=True)
    assert sorted(p.name for p in (with_secret / "tests").iterdir()) == ["public", "secret"]


def test_no_public_tests(folder):
    shutil.rmtree(folder / "tests" / "public")
    assert _findings(folder) == [("no-tests", "")]
    assert "tests/public: no test_*.py file" in _error(folder)


def test_syntax_error_in_a_test_names_file_and_line(folder):
    (folder / "tests" / "secret" / "test_big.py").write_text("def test_x(:\n    pass\n")
    message = _error(folder)
    assert "tests/secret/test_big.py:1: syntax error" in message
    assert _findings(folder) == [("syntax-error", "")]


def test_clashing_test_names(folder):
    shutil.copy(folder / "tests" / "public" / "test_add.py", folder / "tests" / "secret" / "test_add.py")
    assert _findings(folder) == [("name-clash", "")]


def test_discover_reports_broken_folders_and_keeps_the_others(tmp_path):
    for name in ("fx-add", "fx-two", "fx-dup"):
        shutil.copytree(FIXTURE_PROBLEMS / "fx-add", tmp_path / name)
    _edit_toml(tmp_path / "fx-two", 'id = "fx-add"', 'id = "fx-two"')
    (tmp_path / "fx-dup" / "problem.toml").write_text("not toml at all [")
    problems, errors = discover_problems(tmp_path)
    assert [p.id for p in problems] == ["fx-add", "fx-two"]
    assert len(errors) == 1 and "fx-dup/problem.toml" in str(errors[0])
    assert [f.kind for f in errors[0].findings] == ["invalid-toml"]


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
    assert [f.kind for f in caught.value.findings] == ["unknown-field", "missing-field", "bad-value"]
    assert "3 problems" in text
    assert "(did you mean 'summary'?)" in text  # the likely intended field


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
