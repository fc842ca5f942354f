"""The Python half of Pyodide's set-up for judging; the JavaScript half is ``web/js/boot.mjs``.

Both hosts of the browser engine, the page's Web Worker (``web/worker.js``) and the Node.js harness
behind ``judge check --pyodide`` and the parity tests (``judge/engines/pyodide_harness/``), boot Pyodide
through ``boot.mjs``, which unpacks the judge and calls these functions. So the engine those tests
exercise is the one the site ships. Runs on Pyodide's Python 3.12 (and on CPython, for tests).

Two ways to boot, both through ``boot.mjs``:

- plain: Pyodide starts with numpy and pytest loaded, then :func:`prepare`, :func:`warm_up` and
  :func:`freeze`;
- from a memory snapshot (made by ``judge build``): :func:`prepare_snapshot` runs once, at build
  time, before ``pyodide.makeMemorySnapshot()`` (pytest and the judge imported and warmed up, numpy
  left out: its shared libraries do not survive a snapshot); a restored interpreter then calls
  :func:`after_restore` (the file system is not part of the image), is ready, and loads numpy in
  the background (:func:`prepare_numpy`).
"""

from __future__ import annotations

import codecs
import gc
import importlib
import importlib.machinery
import os
import shutil
import signal
import sys
from pathlib import Path
from typing import Any

from . import late_stdlib

#: Where the hosts write the problem folders they judge (one folder per problem id).
PROBLEMS_ROOT = "/home/pyodide/problems"

WARM_UP_SOURCE = "def f():\n    return 1\n"
_WARM_UP_FILES: dict[str, str] = {
    "problem.toml": 'format = 1\nid = "warm-up"\ntitle = "Warm-up"\nsummary = "Warm-up."\norder = 0\n'
                    'difficulty = "easy"\nentry = "warm.py"\ntime_limit = 10\ntags = []\n',
    "README.md": "# Warm-up\n",
    "starter/warm.py": WARM_UP_SOURCE,
    "tests/public/test_warm.py": (
        "import pytest\nimport numpy as np\nfrom judge.artifacts import timeline\nimport warm\n\n"
        "@pytest.mark.parametrize('x', [1, 2])\ndef test_f(x, record_property, capsys):\n"
        "    record_property('timeline', timeline([[('F', 0, 0, 1)]]))\n"
        "    print(np.arange(2, dtype=np.float64).sum())\n    assert warm.f() == x, f'expected {x}'\n"),
}


#: numpy's lines in the warm-up test: left out where numpy is not loaded (the snapshot).
_WARM_UP_NUMPY = ("import numpy as np\n", "    print(np.arange(2, dtype=np.float64).sum())\n")
#: The files of site-packages, kept in the snapshot's memory to be written back after a restore:
#: their contents one after the other, and [path, start, end] of each (see site_files).
_site_blob: bytes | bytearray = b""
_site_index: list[tuple[str, int, int]] = []  # (path, start, stop) in the blob


def prepare(problems_root: str = PROBLEMS_ROOT) -> None:
    """Import what every run needs (numpy, pytest, the runner) and make the problems folder."""
    import numpy  # noqa: F401

    prepare_without_numpy(problems_root)


def warm_up(problems_root: str = PROBLEMS_ROOT, numpy: bool = True) -> None:
    """One throw-away run of a tiny problem (using numpy unless ``numpy`` is false).

    The first run pays for pytest's first start (plugin set-up, assertion rewriting, first
    imports); that cost must not land on a learner's time limit.
    """
    folder = write_warm_up_problem(problems_root, numpy)
    try:
        run(str(folder), WARM_UP_SOURCE)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def write_warm_up_problem(root: str, numpy: bool = True) -> Path:
    """Write the warm-up problem (a tiny one) into ``root``/warm-up; return its folder.

    Also used by the native engine, which warms up pytest once before it forks its children.
    """
    folder = Path(root) / "warm-up"
    files = dict(_WARM_UP_FILES)
    if not numpy:
        test = files["tests/public/test_warm.py"]
        for line in _WARM_UP_NUMPY:
            test = test.replace(line, "")
        files["tests/public/test_warm.py"] = test
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def freeze() -> None:
    """Move everything loaded so far out of the garbage collector's generations.

    It lives as long as the interpreter, so the collections that runs trigger need not walk
    numpy's and pytest's objects again and again.
    """
    gc.collect()
    gc.freeze()


def prepare_snapshot(problems_root: str = PROBLEMS_ROOT) -> None:
    """Get an interpreter ready to be saved as a memory snapshot (at build time, under Node.js).

    pytest and the runner imported and warmed up by a run without numpy; the files of site-packages
    (pytest and its dependencies, the judge) kept in memory, since a snapshot holds the
    interpreter's memory but not its file system; caches that only grow the image emptied.
    """
    import linecache
    import re

    prepare_without_numpy(problems_root)
    warm_up(problems_root, numpy=False)
    late_stdlib.record()
    codecs.lookup("unicode_escape")  # runs use it (reading test files); in the image it needs no standard library
    _keep_site_files()
    linecache.clearcache()
    re.purge()
    sys._clear_type_cache()
    freeze()


def prepare_without_numpy(problems_root: str = PROBLEMS_ROOT) -> None:
    """:func:`prepare` without numpy."""
    importlib.invalidate_caches()
    import pytest  # noqa: F401

    import judge.core.runner  # noqa: F401
    import judge.sandbox.inprocess  # noqa: F401
    from judge.core import code_cache

    code_cache.install()
    os.makedirs(problems_root, exist_ok=True)


def site_files() -> tuple[bytes | bytearray, list[tuple[str, int, int]]]:
    """The files of site-packages kept in the snapshot, once: (contents, [[path, start, end], ...]).

    A restored interpreter has the modules it imported but not their files (the file system is not
    part of a memory snapshot); they are needed for the modules imported later and for source lines
    in tracebacks. ``boot.mjs`` writes them (with the file system's own calls, faster than Python's)
    before :func:`after_restore`.
    """
    global _site_blob, _site_index
    files = (_site_blob, _site_index)
    _site_blob, _site_index = b"", []
    return files


def after_restore(problems_root: str = PROBLEMS_ROOT, stdlib_late: bool = False) -> None:
    """In an interpreter restored from the snapshot, once its files are back: fresh caches and randomness.

    Everything restored from one image would otherwise draw the same random numbers (and
    temporary names). ``stdlib_late``: the host restored without the standard library's zip and
    writes it in later (:mod:`.late_stdlib`).
    """
    import random
    import tempfile

    for finder in list(sys.path_importer_cache.values()):
        if isinstance(finder, importlib.machinery.FileFinder):
            finder.invalidate_caches()
    random.seed()
    tempfile._name_sequence = None  # type: ignore[attr-defined]
    os.makedirs(problems_root, exist_ok=True)
    if stdlib_late:
        late_stdlib.start_waiting()


def prepare_numpy(problems_root: str = PROBLEMS_ROOT) -> None:
    """After numpy's package is loaded into a restored interpreter: import it and warm it up.

    Beyond a judge run that uses numpy, a few calls of the kinds the problems make (``numpy.random``
    is imported on first use; the WebAssembly behind numpy's loops gets fast once it has run): a
    numpy problem's first run would pay for them otherwise.
    """
    importlib.invalidate_caches()
    import numpy as np
    import numpy.random  # noqa: F401

    rng = np.random.default_rng(0)
    a = rng.standard_normal((8, 8))
    b = np.tanh(a @ a.T) + np.outer(a[0], a[1]) + np.einsum("ij,jk->ik", a, a)
    np.allclose(a, b), np.isclose(a, b).any(), np.array_equal(a, a), np.split(np.zeros_like(a), 2)
    float(np.sqrt(np.abs(b)).mean() + np.max(b) + b.sum())
    warm_up(problems_root)
    freeze()


def _keep_site_files() -> None:
    """Keep site-packages in memory (see :func:`site_files`), except the bytecode of modules already imported.

    Read straight into one buffer: no copy of it is left behind as garbage in the image.
    """
    global _site_blob
    import site

    imported = {getattr(m, "__cached__", None) for m in list(sys.modules.values())}
    end = 0
    for root in site.getsitepackages():
        for folder, _, names in sorted(os.walk(root)):
            for name in sorted(names):
                path = os.path.join(folder, name)
                if path not in imported:
                    size = os.stat(path).st_size
                    _site_index.append((path, end, end + size))
                    end += size
    blob = bytearray(end)
    view = memoryview(blob)
    for path, start, stop in _site_index:
        with open(path, "rb", buffering=0) as handle:
            if handle.readinto(view[start:stop]) != stop - start:
                raise OSError(f"{path} changed while it was read")
    view.release()
    _site_blob = blob


def run(problem_dir: str, source: str, include_secret: bool = False, signature: str | None = None,
        lang: str | None = None) -> str | None:
    """Judge ``source``: the Result JSON, or ``None`` when an interrupt (Stop, time limit) escaped the runner.

    The host that sent the interrupt knows why, and builds that Result with
    :func:`judge.engines.unfinished.unfinished_result`. Any other exception escapes: the
    interpreter is then in doubt and the host replaces it. ``signature`` identifies the content
    the host wrote into the problem folder (the folder is then loaded once per content). ``lang``: the
    learner's language, which the tests' messages follow (:mod:`judge.lang`; the page's choice).
    """
    # an earlier run may have changed the handler; the host's interrupt needs the default one
    signal.signal(signal.SIGINT, signal.default_int_handler)
    thresholds = gc.get_threshold()
    gc.set_threshold(*RUN_GC_THRESHOLDS)
    try:
        return judge_source_json(_problem(problem_dir, signature), source, include_secret, lang)
    except KeyboardInterrupt:
        return None
    finally:
        gc.set_threshold(*thresholds)


#: The garbage collector's thresholds during a run: a pytest session allocates many short-lived
#: objects, and with the default (700, 10, 10) the collections took about 5 % of a warm run.
RUN_GC_THRESHOLDS = (20000, 20, 20)


def judge_source_json(problem: Any, source: str, include_secret: bool = False, lang: str | None = None) -> str:
    """One run in this interpreter: the tests here, the learner's module beside them (in-process,
    through the codec: :mod:`judge.sandbox.inprocess`), as Result JSON.

    The run gets a private temporary folder (also pytest's temp folder). The page runs every run in
    a fresh engine, so nothing the learner's code changes here outlasts the run.
    """
    import functools
    import tempfile

    from ..core.runner import judge_source
    from ..sandbox import inprocess, standin

    root = tempfile.mkdtemp(prefix="judge-run-")
    previous = tempfile.tempdir
    tempfile.tempdir = root
    learner = functools.partial(standin.session,
                                start=lambda spec, side: inprocess.InProcessLearner(spec, side, root))
    try:
        result = judge_source(problem, source, learner=learner, include_secret=include_secret,
                              workdir=root, lang=lang)
        result.sandbox = "browser"
        return result.to_json()
    finally:
        tempfile.tempdir = previous
        shutil.rmtree(root, ignore_errors=True)


def prepare_problem(problem_dir: str, signature: str | None = None) -> None:
    """Before a problem's first run: load its folder and compile its tests and helpers into the caches.

    The host calls it while the engine is idle (the learner is reading), so a first run costs about
    what a re-run does. Compiled exactly as a run would (pytest's assertion rewriting for the test
    files a run hands to pytest, the import system's compiling for modules they import); each kind
    is kept by source, so whichever way a file is compiled in the run finds its code.
    """
    from judge.core import code_cache

    problem = _problem(problem_dir, signature)
    code_cache.prepare(problem.public_test_files, problem.support_files)  # type: ignore[attr-defined]


def export_compiled() -> bytes:
    """The tests' and helpers' code this engine compiled, for the page to hand to its next engine
    (:func:`judge.core.code_cache.dump`; the worker offers it only while no learner code has run here)."""
    from judge.core import code_cache

    return code_cache.dump()


def adopt_compiled(data: Any) -> int:
    """Keep the code another engine of the page compiled (``export_compiled``'s bytes, a JavaScript
    Uint8Array here): preparing the problems then compiles nothing. How many entries it added."""
    from judge.core import code_cache

    return code_cache.load(data.to_bytes() if hasattr(data, "to_bytes") else bytes(data))


def bare_pytest(problem_dir: str, source: str, include_secret: bool = False, signature: str | None = None) -> float:
    """Seconds one bare ``pytest.main`` takes on the tests of a run of ``source`` (bench/browser.py).

    The yardstick of the judge's own runs in the same engine: the work directory the runner would
    make (from the problem as loaded for runs: ``signature`` as in :func:`run`), then stock pytest
    (its own assertion rewriting and importing, not this module's caches) with the arguments of
    bench/native.py's bare run. Only ``pytest.main`` is timed; nothing is checked.
    """
    import contextlib
    import io
    import tempfile
    import time

    import pytest

    from judge.core import code_cache
    from judge.core.workdir import make_workdir

    problem = _problem(problem_dir, signature)
    root = tempfile.mkdtemp(prefix="bare-run-")
    work = make_workdir(problem, include_secret, root=root)  # type: ignore[arg-type]
    (work / problem.entry).write_text(source, encoding="utf-8")  # type: ignore[attr-defined]
    for name in [n for n, m in list(sys.modules.items()) if (getattr(m, "__file__", "") or "").startswith(
            ("/tmp/bare-run-", "/tmp/judge-"))]:
        del sys.modules[name]
    sys.path.insert(0, str(work))
    cwd = os.getcwd()
    os.chdir(work)
    try:
        with code_cache.stock_compiles(), contextlib.redirect_stdout(io.StringIO()):
            started = time.perf_counter()
            pytest.main([str(work), "-q", "-p", "no:cacheprovider", "-c", str(work / "pytest.ini"),
                         "--rootdir", str(work)])
            return time.perf_counter() - started
    finally:
        os.chdir(cwd)
        sys.path.remove(str(work))
        shutil.rmtree(root, ignore_errors=True)


# ---------------------------------------------------------------------------------------------
# what one interpreter judging many runs need not do again for every run

_problems: dict[str, tuple[str, object]] = {}


def _problem(problem_dir: str, signature: str | None) -> object:
    """The problem folder, loaded and validated once for as long as the host writes the same files.

    Loading checked the syntax of every test file, which was the largest part of a first run's cost
    outside pytest; pytest compiles the tests it runs, so only the support files are checked here.
    The host writes the same files before every run of a problem and says so with the same
    ``signature`` (None: load it).
    """
    from judge.core.problem import load_problem

    cached = _problems.get(problem_dir)
    if signature is not None and cached is not None and cached[0] == signature:
        return cached[1]
    problem = load_problem(problem_dir, published=True, compile_tests=False)
    if signature is not None:
        _problems[problem_dir] = (signature, problem)
    return problem
