"""Python's standard library arriving after a restore from the memory snapshot (the page's engine).

A restored interpreter holds every module the judge's runs import in its memory image, so the
standard library's zip (2.4 MB) is needed only by a module imported for the first time, such as
one a learner's code imports. The page restores without it, so Run is usable that much sooner on a
first visit, and writes the zip in once it has downloaded (``web/js/boot.mjs``). Meanwhile:

- :func:`needed` tells the host whether the files of a run import a standard module the image lacks
  (the run then waits for the zip, as a numpy problem's run waits for numpy);
- an import that needs the zip anyway (a dynamic one) fails with :class:`ModuleNotFoundError` and is
  recorded: :func:`missed` tells the host to run again once the zip is in. So a result never
  depends on when the download finished.

The zip is absent from the file system until it arrives (never a stand-in that zipimport would read
as a broken archive): reading a module's source then fails the way a missing file does.
"""

from __future__ import annotations

import contextlib
import encodings
import importlib.machinery
import os
import re
import sys
import types
import zipimport
from typing import Any

#: top-level module names in the standard library's zip, recorded at build time (in the image)
_names: frozenset[str] = frozenset()
_archive = ""  # the zip's path on sys.path
_IMPORT = re.compile(r"^[ \t]*(?:from[ \t]+([\w.]+)[ \t]+import|import[ \t]+([\w. \t,]+))", re.MULTILINE)


class _Pending:
    """A meta path finder that refuses the zip's modules until the zip is in, and remembers it did."""

    missed = False

    def find_spec(self, name: str, path: Any = None, target: types.ModuleType | None = None) -> Any:
        if name.partition(".")[0] not in _names:
            return None
        # a module of that name outside the zip (a learner's file beside the tests) is imported as usual
        elsewhere = [entry for entry in (sys.path if path is None else path)
                     if not str(entry).startswith(_archive)]
        spec = importlib.machinery.PathFinder.find_spec(name, elsewhere)
        if spec is not None:
            return spec
        type(self).missed = True
        raise ModuleNotFoundError(f"No module named {name!r} yet: Python's standard library is still "
                                  "downloading (the run starts again once it is in)", name=name)


_PENDING = _Pending()


def record() -> None:
    """At build time, before the snapshot: note the zip's path and the modules it holds."""
    global _names, _archive
    import zipfile

    _archive = next(entry for entry in sys.path if entry.endswith(".zip") and os.path.isfile(entry))
    with zipfile.ZipFile(_archive) as archive:
        _names = frozenset(name.split("/", 1)[0].removesuffix(".py") for name in archive.namelist()
                           if name.endswith(".py"))


def path() -> str:
    """Where the zip goes in the file system ('' when :func:`record` did not run)."""
    return _archive


def start_waiting() -> None:
    """After a restore without the zip: take away the stand-in Pyodide wrote and refuse its modules."""
    with contextlib.suppress(FileNotFoundError):
        os.remove(_archive)
    _Pending.missed = False
    if _PENDING not in sys.meta_path:
        sys.meta_path.insert(0, _PENDING)


def arrived() -> None:
    """The zip is written: import from it again (its directory, if an invalidation emptied it meanwhile)."""
    if _PENDING in sys.meta_path:
        sys.meta_path.remove(_PENDING)
    for entry in [entry for entry, finder in sys.path_importer_cache.items()
                  if finder is None and entry.startswith(_archive)]:
        del sys.path_importer_cache[entry]  # a package path inside the zip looked up while it was absent
    # encodings caches a codec it could not import: one looked up meanwhile is looked for again
    for encoding in [name for name, found in encodings._cache.items() if found is None]:
        del encodings._cache[encoding]
    directory = zipimport._zip_directory_cache.get(_archive)  # type: ignore[attr-defined]
    if not directory:  # importlib.invalidate_caches() ran while the zip was absent: read it again
        directory = zipimport._read_directory(_archive)  # type: ignore[attr-defined]
        zipimport._zip_directory_cache[_archive] = directory  # type: ignore[attr-defined]
        for finder in sys.path_importer_cache.values():
            if isinstance(finder, zipimport.zipimporter) and finder.archive == _archive:
                finder._files = directory  # type: ignore[attr-defined]


def waiting() -> bool:
    """Whether the zip has not arrived yet."""
    return _PENDING in sys.meta_path


def needed(texts: list[str]) -> bool:
    """Whether these Python sources import (statically) a module of the zip this interpreter lacks."""
    if not waiting():
        return False
    for text in texts:
        for match in _IMPORT.finditer(text):
            for item in (match.group(1) or match.group(2)).split(","):
                name = (item.split() or [""])[0]  # "a.b as c" -> "a.b"
                if name.partition(".")[0] in _names and name not in sys.modules:
                    return True
    return False


def missed() -> bool:
    """Whether an import was refused since the last call (the run must be made again once the zip is in)."""
    refused, _Pending.missed = _Pending.missed, False
    return refused
