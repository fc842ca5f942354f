"""The code cache (judge/core/code_cache.py): a problem's files compiled once, served at any path, never stale."""

from __future__ import annotations

import builtins
import hashlib
import importlib.machinery
import marshal
import shutil
import traceback
from pathlib import Path

import pytest

from judge.core import code_cache
from tests.conftest import FIXTURE_PROBLEMS, folder_job, judge_isolated


@pytest.fixture
def compiles(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The file names compiled from now on (by the import system, pytest or the cache)."""
    seen: list[str] = []
    original = builtins.compile

    def counting(source, filename, *args, **kwargs):
        seen.append(str(filename))
        return original(source, filename, *args, **kwargs)

    code_cache.install()
    monkeypatch.setattr(builtins, "compile", counting)
    return seen


def _code_at(path: Path):
    return importlib.machinery.SourceFileLoader(path.stem, str(path)).get_code(path.stem)


def test_a_prepared_file_is_served_at_a_new_path_without_compiling_it_again(tmp_path, compiles):
    first = tmp_path / "one" / "helper_cc.py"
    first.parent.mkdir()
    first.write_text("def fail():\n    raise ValueError('from the helper')\n")
    code_cache.prepare([first], [])
    assert str(first) in compiles
    moved = tmp_path / "two" / "helper_cc.py"
    moved.parent.mkdir()
    shutil.copy(first, moved)
    compiles.clear()
    namespace: dict = {}
    exec(_code_at(moved), namespace)
    assert compiles == []
    with pytest.raises(ValueError) as raised:
        namespace["fail"]()
    assert traceback.extract_tb(raised.tb)[-1].filename == str(moved)  # the new path, in the code inside too


def test_a_changed_file_is_compiled_again_and_runs_as_written(tmp_path, compiles):
    path = tmp_path / "changing_cc.py"
    path.write_text("VALUE = 1\n")
    code_cache.prepare([path], [])
    path.write_text("VALUE = 2\n")
    compiles.clear()
    namespace: dict = {}
    exec(_code_at(path), namespace)
    assert namespace["VALUE"] == 2
    assert compiles == [str(path)]


def test_a_test_file_that_does_not_compile_is_left_for_the_run_to_report(tmp_path, compiles):
    broken = tmp_path / "test_broken_cc.py"
    broken.write_text("def test_x(:\n")
    code_cache.prepare([broken], [])  # no error here
    assert ("source", hashlib.sha256(broken.read_bytes()).digest(), -1) not in code_cache._cache


def test_code_dumped_by_one_interpreter_is_loaded_by_another_and_not_compiled_again(tmp_path, compiles,
                                                                                    monkeypatch):
    """The browser hands the code one engine compiled to the next engine of the page (dump, load)."""
    test_file = tmp_path / "test_dumped_cc.py"
    test_file.write_text("from helper_dumped_cc import VALUE\n\ndef test_value():\n    assert VALUE == 3\n")
    helper = tmp_path / "helper_dumped_cc.py"
    helper.write_text("VALUE = 3\n")
    code_cache.prepare([test_file], [helper])
    dumped = code_cache.dump()
    monkeypatch.setattr(code_cache, "_cache", {})  # the next engine: nothing compiled yet
    assert code_cache.load(dumped) >= 3  # the test file rewritten and imported, the helper imported
    assert code_cache.load(dumped) == 0  # what is there already is not taken again
    compiles.clear()
    code_cache.prepare([test_file], [helper])
    namespace: dict = {}
    exec(_code_at(helper), namespace)
    assert compiles == [] and namespace["VALUE"] == 3


@pytest.mark.parametrize("data", [b"", b"not marshal", marshal.dumps({"a": 1}),
                                  marshal.dumps([("key", "not code"), (1, 2, 3)])])
def test_bytes_that_are_not_a_dump_add_nothing(data, monkeypatch):
    monkeypatch.setattr(code_cache, "_cache", {})
    assert code_cache.load(data) == 0 and code_cache._cache == {}


def test_the_native_engine_compiles_a_problems_tests_in_the_parent_before_its_test_process_starts():
    problem = FIXTURE_PROBLEMS / "fx-add"
    job = folder_job(problem, "def add(a, b):\n    return a + b\n", include_secret=True)
    result = judge_isolated(job)
    assert result.status == "passed", result.message
    for path in job.problem.test_files(True):
        data = path.read_bytes()
        assert ("rewrite", hashlib.sha256(data).digest(), False) in code_cache._cache, path
