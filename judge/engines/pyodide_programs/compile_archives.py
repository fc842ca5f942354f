"""Bytecode-compile archives inside Pyodide: the Python half of ``judge.engines.pyodide_dist.ensure_compiled``.

``compile_archives.cjs`` boots the cached Pyodide under Node.js, runs this file's text in it and
calls :func:`compile_archive` for each archive (and :func:`used_modules` once). It must run on
Pyodide's CPython 3.12: bytecode made by another Python version would not load in the browser.
The functions are plain Python, so tests may import this module natively to check the archive
layout (the bytecode is then the host's, which is fine for that purpose).

The pycs are *unchecked hash-based*: the import system uses them without reading the source or
comparing timestamps (unpacking an archive gives new mtimes, which would void timestamp pycs).
"""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import os
import sys
import tempfile
import zipfile
from importlib._bootstrap_external import _code_to_hash_pyc  # type: ignore[attr-defined]

PYODIDE_PYTHON = (3, 12)
_DATE = (2020, 1, 1, 0, 0, 0)
_WARM_TEST = ("import numpy as np\nimport pytest\n\n@pytest.mark.parametrize('x', [1, 2])\n"
              "def test_f(x, record_property, capsys, tmp_path):\n    record_property('t', [x])\n"
              "    print(np.arange(2, dtype=np.float64).sum())\n    assert x == 1, 'expected 1'\n")


def check_python() -> None:
    """Refuse to compile for the browser with any Python but Pyodide's."""
    if sys.version_info[:2] != PYODIDE_PYTHON:
        raise RuntimeError(f"compile the archives inside Pyodide (Python 3.12), not with Python {sys.version}")


def used_modules(extra: list[str]) -> list[str]:
    """Files of the modules a judge run imports: numpy, pytest, ``extra``, and one pytest session."""
    for name in ("numpy", "numpy.random", "pytest", *extra):
        __import__(name)
    import pytest

    folder = tempfile.mkdtemp()
    with open(os.path.join(folder, "test_warm.py"), "w") as fh:
        fh.write(_WARM_TEST)
    pytest.main([folder, "-q", "-p", "no:cacheprovider", "--rootdir", folder])
    return sorted(str(m.__file__) for m in list(sys.modules.values()) if getattr(m, "__file__", None))


def compile_archive(src: str, dst: str, kind: str, prefix: str, only: list[str] | None = None) -> list[int]:
    """Write ``dst``: ``src`` plus pycs of its modules (of those whose file is in ``only``, if given).

    ``kind`` is ``stdlib`` (``X.pyc`` beside ``X.py`` in the zip), ``wheel`` (``__pycache__``
    pycs, listed in RECORD) or ``pyc-only`` (a zip of the ``__pycache__`` pycs alone). ``prefix``
    is where the archive's members live in Pyodide's file system (the pycs record that path).
    Returns ``[modules compiled, modules left as source only]``.
    """
    wanted = set(only) if only is not None else None
    with zipfile.ZipFile(src) as zin:
        entries = [(i, zin.read(i)) for i in zin.infolist() if not i.is_dir()]
    pycs, skipped = _compile_members(entries, kind, prefix, wanted)
    if kind != "pyc-only" and not pycs:
        with open(src, "rb") as fin, open(dst, "wb") as fout:
            fout.write(fin.read())  # nothing of it is imported: the original, unchanged
        return [0, skipped]
    with zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as zout:
        if kind == "pyc-only":
            for name, data in pycs:
                zout.writestr(_info(name), data)
        else:
            _write_with_pycs(zout, entries, pycs, kind)
    return [len(pycs), skipped]


def _compile_members(entries: list[tuple[zipfile.ZipInfo, bytes]], kind: str, prefix: str,
                     wanted: set[str] | None) -> tuple[list[tuple[str, bytes]], int]:
    pycs: list[tuple[str, bytes]] = []
    skipped = 0
    for info, data in entries:
        name = info.filename
        if not name.endswith(".py") or ".dist-info/" in name:
            continue
        if wanted is not None and prefix + name not in wanted:
            continue
        try:
            pyc = _pyc(data, prefix + name)
        except (SyntaxError, ValueError):
            skipped += 1  # not importable as it is (a template, a Python 2 file): stays source only
            continue
        pycs.append((_pyc_name(name, kind), pyc))
    return pycs, skipped


def _pyc_name(name: str, kind: str) -> str:
    if kind == "stdlib":
        return name[:-3] + ".pyc"
    folder, _, base = name.rpartition("/")
    cached = f"{folder}/__pycache__/" if folder else "__pycache__/"
    return f"{cached}{base[:-3]}.{sys.implementation.cache_tag}.pyc"


def _write_with_pycs(zout: zipfile.ZipFile, entries: list[tuple[zipfile.ZipInfo, bytes]],
                     pycs: list[tuple[str, bytes]], kind: str) -> None:
    """The archive's members, the pycs, then its metadata (a wheel's RECORD lists the pycs)."""
    meta = [(i, d) for i, d in entries if ".dist-info/" in i.filename]
    for info, data in entries:
        if ".dist-info/" not in info.filename:
            zout.writestr(_info(info.filename, info), data)
    for name, data in pycs:
        zout.writestr(_info(name), data)
    for info, data in meta:
        if kind == "wheel" and info.filename.endswith(".dist-info/RECORD"):
            text = data.decode("utf-8")
            if text and not text.endswith("\n"):
                text += "\n"
            data = (text + "".join(_record_line(n, d) for n, d in pycs)).encode("utf-8")
        zout.writestr(_info(info.filename, info), data)


def _pyc(source: bytes, filename: str) -> bytes:
    code = compile(source, filename, "exec", dont_inherit=True, optimize=0)
    return bytes(_code_to_hash_pyc(code, importlib.util.source_hash(source), False))


def _info(name: str, like: zipfile.ZipInfo | None = None) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name, date_time=like.date_time if like else _DATE)
    info.compress_type = zipfile.ZIP_DEFLATED
    info.external_attr = like.external_attr if like else 0o644 << 16
    return info


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}\n"
