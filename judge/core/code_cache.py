"""Compiled code kept in memory by its source, so that a problem's tests are compiled once, not every run.

Every run has a fresh work directory and writes no bytecode, so each run compiled the same files
again: the test modules pytest rewrites (its assertion rewriting) and the helper and support modules
they import. Both engines keep that code here instead: the browser's engine across the runs of a
page, the native engine in the parent before it forks the test processes of a run (a class graded
with ``judge grade`` compiles each problem's tests once, not once per submission).

The code does not depend on where a file is, only the code objects' file name does, and it is set to
the new path; nor on anything else that varies between runs (the judge's pytest configuration is
fixed). The cache is keyed by the file's digest, so a changed file is compiled again. Only the judge's
own process fills it: learner code never runs where this cache lives, except in the browser, where the
page runs every run in a fresh engine. There the first engine's code is handed to the next ones
(:func:`dump`, :func:`load`), from an engine no learner code has run in, so that each engine of a page
does not compile the same tests again.
"""

from __future__ import annotations

import ast
import contextlib
import hashlib
import importlib.machinery
import marshal
import os
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

_LIMIT = 512  # code objects kept; the cache starts over beyond it
_cache: dict[tuple[object, ...], types.CodeType] = {}


def install() -> None:
    """Route pytest's assertion rewriting and the import system's compiling through the cache (once)."""
    from _pytest.assertion import rewrite

    if getattr(rewrite._rewrite_test, "_judge_original", None) is None:  # noqa: SLF001
        original_rewrite = rewrite._rewrite_test  # noqa: SLF001

        def rewrite_test(fn: Path, config: Any) -> tuple[Any, types.CodeType]:
            with open(fn, "rb") as handle:
                source = handle.read()
            key = _rewrite_key(source, bool(config.getini("enable_assertion_pass_hook")))
            code = _cache.get(key)
            if code is None:
                stat, code = original_rewrite(fn, config)
                _keep(key, code)
                return stat, code
            return os.stat(fn), _retarget(code, str(fn))

        rewrite_test._judge_original = original_rewrite  # type: ignore[attr-defined]
        rewrite._rewrite_test = rewrite_test  # noqa: SLF001

    loader = importlib.machinery.SourceFileLoader
    if getattr(loader.source_to_code, "_judge_original", None) is None:
        original_compile = loader.source_to_code

        def source_to_code(self: Any, data: Any, path: Any, *, _optimize: int = -1) -> types.CodeType:
            key = _source_key(bytes(data), _optimize)
            code = _cache.get(key)
            if code is None:
                code = original_compile(self, data, path, _optimize=_optimize)
                _keep(key, code)
                return code
            return _retarget(code, str(path))

        source_to_code._judge_original = original_compile  # type: ignore[attr-defined]
        loader.source_to_code = source_to_code  # type: ignore[method-assign]


def prepare(test_files: list[Path], support_files: list[Path]) -> None:
    """Compile a problem's files into the cache, as a run would: each test file both as pytest's
    assertion rewriting compiles it (a test module, a conftest) and as an import does (a helper the
    tests import), each support file as an import does."""
    from _pytest.assertion import rewrite

    for path in test_files:
        data = path.read_bytes()
        key = _rewrite_key(data, False)  # the judge's pytest.ini leaves the assertion pass hook off
        if key not in _cache:
            with contextlib.suppress(SyntaxError, ValueError):  # left for pytest to report in the run
                tree = ast.parse(data, filename=str(path))
                rewrite.rewrite_asserts(tree, data, str(path), None)
                _keep(key, compile(tree, str(path), "exec", dont_inherit=True))
    for path in [*test_files, *support_files]:
        data = path.read_bytes()
        key = _source_key(data, -1)
        if key not in _cache:
            with contextlib.suppress(SyntaxError, ValueError):
                _keep(key, compile(data, str(path), "exec", dont_inherit=True, optimize=-1))


def dump() -> bytes:
    """The code kept now, as bytes that :func:`load` reads in another interpreter of the same Python
    (the browser hands the code one engine compiled to the page's next engine)."""
    return marshal.dumps(list(_cache.items()))


def load(data: bytes) -> int:
    """Keep the code of a :func:`dump` (what is not a dump's entry is left out); how many entries it added."""
    try:
        entries = marshal.loads(data)
    except (EOFError, ValueError, TypeError):
        return 0
    added = 0
    for entry in entries if isinstance(entries, list) else []:
        if (isinstance(entry, tuple) and len(entry) == 2 and isinstance(entry[0], tuple)
                and isinstance(entry[1], types.CodeType) and entry[0] not in _cache):
            _keep(entry[0], entry[1])
            added += 1
    return added


@contextlib.contextmanager
def stock_compiles() -> Iterator[None]:
    """pytest's and importlib's own compiling for the block, without the cache (bench's bare runs)."""
    from _pytest.assertion import rewrite

    loader = importlib.machinery.SourceFileLoader
    cached_rewrite, cached_compile = rewrite._rewrite_test, loader.source_to_code  # noqa: SLF001
    rewrite._rewrite_test = getattr(cached_rewrite, "_judge_original", cached_rewrite)  # noqa: SLF001
    loader.source_to_code = getattr(cached_compile, "_judge_original", cached_compile)  # type: ignore[method-assign]
    try:
        yield
    finally:
        rewrite._rewrite_test = cached_rewrite  # noqa: SLF001
        loader.source_to_code = cached_compile  # type: ignore[method-assign]


def _rewrite_key(source: bytes, pass_hook: bool) -> tuple[object, ...]:
    return ("rewrite", hashlib.sha256(source).digest(), pass_hook)


def _source_key(source: bytes, optimize: int) -> tuple[object, ...]:
    return ("source", hashlib.sha256(source).digest(), optimize)


def _keep(key: tuple[object, ...], code: types.CodeType) -> None:
    if len(_cache) >= _LIMIT:
        _cache.clear()
    _cache[key] = code


def _retarget(code: types.CodeType, filename: str) -> types.CodeType:
    """``code`` (and the code objects inside it) as compiled from ``filename``."""
    consts = tuple(_retarget(c, filename) if isinstance(c, types.CodeType) else c for c in code.co_consts)
    return code.replace(co_filename=filename, co_consts=consts)
