"""judge.engines.late_stdlib in CPython: a stand-in standard library zip, its modules refused while it is
away and imported again once it is back (the browser side is tests/browser/test_late_stdlib.py)."""

from __future__ import annotations

import encodings
import importlib
import sys
import zipfile
from pathlib import Path

import pytest

from judge.engines import late_stdlib


@pytest.fixture
def zip_stdlib(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A zip of two modules and a package on sys.path, recorded as the standard library's."""
    archive = tmp_path / "stdlib.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("zz_late_one.py", "VALUE = 1\n")
        z.writestr("zz_late_two.py", "VALUE = 2\n")
        z.writestr("zz_late_pkg/__init__.py", "")
        z.writestr("zz_late_pkg/inner.py", "VALUE = 3\n")
    monkeypatch.syspath_prepend(str(archive))
    monkeypatch.setattr(sys, "meta_path", list(sys.meta_path))
    monkeypatch.setattr(late_stdlib, "_archive", "")
    monkeypatch.setattr(late_stdlib, "_names", frozenset())
    for name in ("zz_late_one", "zz_late_two", "zz_late_pkg", "zz_late_pkg.inner"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    late_stdlib.record()
    assert late_stdlib.path() == str(archive)
    return archive


def test_while_the_zip_is_away_its_modules_are_refused_and_the_refusal_is_recorded(zip_stdlib: Path) -> None:
    data = zip_stdlib.read_bytes()
    import zz_late_one  # imported before the snapshot: stays usable
    late_stdlib.start_waiting()
    assert not zip_stdlib.exists() and late_stdlib.waiting()
    assert zz_late_one.VALUE == 1
    with pytest.raises(ModuleNotFoundError, match="standard library is still downloading") as refused:
        importlib.import_module("zz_late_two")
    assert refused.value.name == "zz_late_two"
    assert late_stdlib.missed() and not late_stdlib.missed()  # told once
    importlib.invalidate_caches()  # empties zipimport's view of the absent file
    encodings._cache["zz_late_codec"] = None  # type: ignore[attr-defined]  # a codec looked up meanwhile
    zip_stdlib.write_bytes(data)
    late_stdlib.arrived()
    assert "zz_late_codec" not in encodings._cache  # type: ignore[attr-defined]  # looked for again next time
    assert not late_stdlib.waiting()
    assert importlib.import_module("zz_late_two").VALUE == 2
    assert importlib.import_module("zz_late_pkg.inner").VALUE == 3
    assert not late_stdlib.missed()


def test_a_module_of_that_name_outside_the_zip_is_imported_as_usual(zip_stdlib: Path, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    beside = tmp_path / "learner"
    beside.mkdir()
    (beside / "zz_late_two.py").write_text("VALUE = 'the learner s'\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(beside))
    late_stdlib.start_waiting()
    assert importlib.import_module("zz_late_two").VALUE == "the learner s"
    assert not late_stdlib.missed()


def test_needed_reads_the_import_statements(zip_stdlib: Path) -> None:
    import zz_late_one  # noqa: F401 - in memory already: needs nothing
    assert not late_stdlib.needed(["import zz_late_two"])  # not waiting: nothing is needed
    late_stdlib.start_waiting()
    assert late_stdlib.needed(["import zz_late_two"])
    assert late_stdlib.needed(["x = 1\n", "    from zz_late_pkg.inner import VALUE\n"])
    assert late_stdlib.needed(["import os, zz_late_two as two  # comment"])
    assert not late_stdlib.needed(["import zz_late_one\nimport os\nfrom sys import path\n"])
    assert not late_stdlib.needed(["# import zz_late_two\ntext = 'import zz_late_two'\n"])
    assert not late_stdlib.missed()  # reading is not importing
