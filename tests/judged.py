"""Judged Results shared by the judge's own tests through one on-disk cache (DESIGN.md, "Tests of the judge itself").

Judging a solution costs seconds; several test modules need the same Results (the hints, the parity
tests, the test ids). :func:`judge_cached` judges only the jobs whose Result is not cached yet and
stores each Result under a key that covers everything that can change it:

- the job: the code, the secret tests flag, ``-k``, the time and memory limits, the language, the label;
- the problem: its loaded fields (``repr`` of the :class:`~judge.core.problem.Problem`, which holds its
  absolute path: Results may quote it) and the bytes of every file of its folder;
- the judge: the bytes of every file of the imported ``judge`` package (sources, catalogs, harness
  programs) but its ``commands/`` and ``formats/`` (:data:`ABOVE_THE_ENGINES`), the Python and the versions of the libraries the tests run with (pytest, numpy, ...),
  the temporary folder, every ``JUDGE_*`` environment variable;
- the engine: ``native`` with its sandbox level (all of it but the name of its per-process temporary
  runtime folder), or ``pyodide`` with the web front end's files, the
  Pyodide distribution's stamp and Node's version.

A Result whose run hit a time limit is never stored: whether a run finishes in time depends on the
machine's load, not only on the key, so such a run is judged again next time. A cache entry that does
not read (truncated, not JSON, another schema) is discarded and judged again.

The cache lives in ``.pytest_cache/judged/`` (``PP_JUDGE_RESULTS_CACHE`` names another folder;
``PP_JUDGE_RESULTS_CACHE=off`` turns it off); ``pytest --cache-clear`` empties it with the rest of
pytest's cache. Writes are atomic (a temporary file renamed into place) and every key is computed by
one process at a time (a lock file per key), so pytest-xdist workers share the work: a worker skips
the keys another is judging, judges the rest, then waits for and reads the others'. At the end of a
session :func:`prune` deletes the entries unused for two weeks and the least recently used beyond 500 MB.
"""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import fcntl
import functools
import hashlib
import importlib.metadata
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from judge.core.result import Result
from judge.engines import Job

ROOT = Path(__file__).resolve().parent.parent
KEY_VERSION = 1  # bump when the key's recipe changes
# the libraries a Result depends on besides the judge (the inner pytest run, the problems' numpy)
LIBRARIES = ("pytest", "pluggy", "iniconfig", "packaging", "numpy")
TIME_FACTOR = 3  # see solution_job
PYODIDE_BATCH = 20  # jobs per Pyodide harness call
MAX_BYTES = 500 * 2**20  # prune(): the entries kept at most (an entry is some 300 KB, a full suite stores hundreds)
MAX_AGE_DAYS = 14
_SKIPPED_PARTS = {"__pycache__", "node_modules", ".pytest_cache"}
#: The judge's folders no Result depends on: the commands drive the engines and the formats read Results;
#: no module of the engines, the sandbox or the core imports either (tests/test_architecture.py holds it).
#: A change there keeps the cached Results, so a contributor who changes a command is not made to wait for
#: every problem to be judged again.
ABOVE_THE_ENGINES = ("commands", "formats")


def cache_dir() -> Path | None:
    """Where Results are kept; None when the cache is turned off."""
    setting = os.environ.get("PP_JUDGE_RESULTS_CACHE", "")
    if setting.lower() in ("off", "0", "no"):
        return None
    return Path(setting) if setting else ROOT / ".pytest_cache" / "judged"


def tree_digest(folder: Path, skip: Sequence[str] = ()) -> str:
    """sha256 over the relative paths and bytes of every file under ``folder`` (bytecode left out, and the
    top-level entries named in ``skip``)."""
    digest = hashlib.sha256()
    if folder.is_dir():
        for path in sorted(p for p in folder.rglob("*") if p.is_file()):
            relative = path.relative_to(folder)
            if _SKIPPED_PARTS & set(relative.parts) or path.suffix == ".pyc" or relative.parts[0] in skip:
                continue
            digest.update(str(relative).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


@functools.cache
def judge_digest() -> str:
    """What a Result depends on besides the job and the problem, for every engine (once per process)."""
    import judge

    versions = {}
    for name in LIBRARIES:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            versions[name] = ""
    parts = {"judge": tree_digest(Path(judge.__file__).resolve().parent, ABOVE_THE_ENGINES), "python": sys.version,
             "executable": sys.executable, "machine": platform.machine(), "libraries": versions,
             "tmp": tempfile.gettempdir(), "env": {k: v for k, v in os.environ.items() if k.startswith("JUDGE_")}}
    return _sha(parts)


@functools.cache
def engine_digest(engine: str) -> str:
    """The engine's part of the key: the native sandbox level, or what the Pyodide harness boots."""
    if engine == "native":
        from judge.sandbox import levels

        sandbox = dataclasses.asdict(levels.choose("auto"))
        runtime = str(sandbox.pop("runtime", "") or "")
        # a temporary folder of this process, a new name in every session (the packages linked there
        # name it too): without it in the key, Results are shared by the sessions and the xdist workers
        text = json.dumps(sandbox, sort_keys=True, default=str)
        return _sha({"engine": engine, "sandbox": text.replace(runtime, "<runtime>") if runtime else text})
    if engine == "pyodide":
        from judge.engines.pyodide import find_node
        from judge.engines.pyodide_dist import STAMP, ensure_distribution

        dist = ensure_distribution()
        node = find_node()
        node_version = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=60).stdout
        stamp = (dist / STAMP).read_text(encoding="utf-8") if (dist / STAMP).is_file() else ""
        return _sha({"engine": engine, "web": tree_digest(ROOT / "web"), "dist": str(dist), "stamp": stamp,
                     "node": node_version})
    raise ValueError(f"unknown engine {engine!r}")


def job_key(job: Job, engine: str = "native", files: dict[str, str] | None = None) -> str:
    """The cache key of ``job``'s Result under ``engine`` (see the module docstring); ``files`` memoises
    the problem folders' digests for one batch."""
    problem = job.problem
    folder = str(Path(problem.path).resolve())
    files = {} if files is None else files
    if folder not in files:
        files[folder] = tree_digest(Path(folder))
    parts = {"version": KEY_VERSION, "judge": judge_digest(), "engine": engine_digest(engine),
             "problem": repr(problem), "files": files[folder], "code": job.code(),
             "include_secret": job.include_secret, "keyword": job.keyword, "limit": job.limit,
             "memory_limit": job.memory_limit, "lang": job.language(),
             # the native engine does not pass the label to the run; the Pyodide harness does
             "label": job.label if engine != "native" else ""}
    return _sha(parts)


def solution_job(problem_dir: Path, label: str, source: str, lang: str | None = None) -> Job:
    """The job the sweeps over ``problems/`` share (hints, parity, test ids), so that they share Results:
    ``source`` judged with the secret tests against the :func:`snapshot` of ``problem_dir`` loaded as
    published, with :data:`TIME_FACTOR` times the problem's time limit (these tests compare Results and
    messages; they do not enforce time limits on a loaded machine)."""
    from judge.core.problem import load_problem

    problem = load_problem(snapshot(problem_dir), published=True)
    return Job(problem, source=source, include_secret=True, time_limit=problem.time_limit * TIME_FACTOR,
               label=label, lang=lang)


def selected(request: Any, test: str, argname: str) -> list[Any]:
    """The values of the parameter ``argname`` of the items of the test function ``test`` that this run
    selected (after ``-k``, ``--lf``, ...): what a fixture should judge, not more."""
    return [item.callspec.params[argname] for item in request.session.items
            if getattr(item, "originalname", "") == test and hasattr(item, "callspec")]


def default_parallel() -> int:
    """Jobs judged at a time by one test process: 2 (the machine's cores), 1 in a pytest-xdist worker
    (the workers are the parallelism)."""
    return 1 if os.environ.get("PYTEST_XDIST_WORKER") else 2


def judge_cached(jobs: Sequence[Job], parallel: int | None = None, engine: str = "native",
                 run: Callable[[list[Job]], list[Result]] | None = None) -> list[Result]:
    """The Results of ``jobs`` in order: read from the cache, or judged (``parallel`` at a time) and stored.

    ``run`` judges a list of jobs (default: the native engine, or one Pyodide harness call per batch).
    """
    parallel = parallel or default_parallel()
    if run is None:
        run = _native_runner(parallel) if engine == "native" else _pyodide_runner
    folder = cache_dir()
    if folder is None:
        return run(list(jobs))
    folder.mkdir(parents=True, exist_ok=True)
    files: dict[str, str] = {}
    keys = [job_key(job, engine, files) for job in jobs]
    results: dict[str, Result] = {}
    for key in dict.fromkeys(keys):
        cached = _read(folder, key)
        if cached is not None:
            results[key] = cached
    todo = [k for k in dict.fromkeys(keys) if k not in results]
    job_of = dict(zip(keys, jobs))
    waiting: list[str] = []
    # one harness call boots Pyodide once: claim the jobs by twenties, so that two workers can share a sweep
    batch = parallel if engine == "native" else PYODIDE_BATCH
    while todo:
        claimed: list[tuple[str, Any]] = []
        while todo and len(claimed) < batch:
            key = todo.pop(0)
            lock = _try_lock(folder, key)
            if lock is None:
                waiting.append(key)  # another worker is judging it
                continue
            cached = _read(folder, key)  # judged meanwhile by another worker
            if cached is not None:
                results[key] = cached
                _unlock(lock)
                continue
            claimed.append((key, lock))
        if not claimed:
            continue
        try:
            judged = run([job_of[key] for key, _ in claimed])
            for (key, _), result in zip(claimed, judged, strict=True):
                results[key] = _write(folder, key, result)
        finally:
            for _, lock in claimed:
                _unlock(lock)
    for key in waiting:
        with _locked(folder, key):
            cached = _read(folder, key)
        if cached is None:  # the other worker's run timed out (not stored) or failed: judge it here
            cached = _write(folder, key, run([job_of[key]])[0])
        results[key] = cached
    return [results[key] for key in keys]


class SharedResults:
    """An engine (the interface of :mod:`judge.engines`) for tests that need Results of the problems'
    own solutions, not a judging of their own: each job is judged as its :func:`solution_job` (the job
    the sweeps over ``problems/`` judge), through the cache, so a class of references, starters and
    wrong solutions costs what the sweeps have not judged yet. The Results name the snapshot's path."""

    def judge(self, jobs: Sequence[Job], parallel: int = 1,
              on_result: Callable[[int, Result], None] | None = None) -> list[Result]:
        shared = [solution_job(Path(job.problem.path), job.label, job.code(), job.lang) for job in jobs]
        results = judge_cached(shared, parallel)
        for index, result in enumerate(results):
            if on_result:
                on_result(index, result)
        return results


def judge_one(job: Job, engine: str = "native") -> Result:
    """:func:`judge_cached` of one job."""
    return judge_cached([job], parallel=1, engine=engine)[0]


def snapshot(folder: Path) -> Path:
    """A copy of ``folder`` (bytecode left out) at a path named by its content, in the cache folder.

    Tests that judge the same files with two engines (the parity tests) judge such a copy, so that
    edits made to the original during the session do not reach one engine only; the path depends on
    the content alone, so the Results judged from it stay cached from one session to the next (a
    Result may quote its problem's path). Without a cache the copy goes to a new temporary folder.
    """
    base = cache_dir()
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    if base is None:
        target = Path(tempfile.mkdtemp(prefix="pp-judge-snapshot-")) / folder.name
        atexit.register(shutil.rmtree, target.parent, True)  # nothing left in the temporary folder
        shutil.copytree(folder, target, ignore=ignore)
        return target
    target = base / "snapshots" / tree_digest(folder)[:20] / folder.name
    if target.is_dir():
        return target
    base.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".staging-", dir=base))
    shutil.copytree(folder, staging / folder.name, ignore=ignore)
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        (staging / folder.name).rename(target)
    except OSError:  # another worker renamed its identical copy first
        if not target.is_dir():
            raise
    shutil.rmtree(staging, ignore_errors=True)
    return target


def prune(max_bytes: int = MAX_BYTES, max_age_days: float = MAX_AGE_DAYS) -> int:
    """Delete the entries not read or written for ``max_age_days``, then the least recently used ones
    while the entries take more than ``max_bytes``; the number deleted (called at the end of a session)."""
    folder = cache_dir()
    if folder is None or not folder.is_dir():
        return 0
    entries = []
    for path in folder.glob("??/*.json"):
        try:
            stat = path.stat()
        except OSError:
            continue
        entries.append((stat.st_mtime, stat.st_size, path))
    entries.sort()
    total = sum(size for _, size, _ in entries)
    oldest = time.time() - max_age_days * 86400
    deleted = 0
    for mtime, size, path in entries:
        if mtime >= oldest and total <= max_bytes:
            break
        with contextlib.suppress(OSError):
            path.unlink()
            deleted += 1
        total -= size
    return deleted


def _native_runner(parallel: int) -> Callable[[list[Job]], list[Result]]:
    def run(jobs: list[Job]) -> list[Result]:
        from judge.engines.native import judge_many

        return judge_many(jobs, parallel=parallel)
    return run


def _pyodide_runner(jobs: list[Job]) -> list[Result]:
    from judge.engines import pyodide

    return [Result.from_dict(r) for r in pyodide.run_harness(jobs).results]


def _timed_out(result: Result) -> bool:
    return result.status == "timeout" or any(t.outcome == "timeout" for t in result.tests)


def _entry(folder: Path, key: str) -> Path:
    return folder / key[:2] / f"{key}.json"


def _read(folder: Path, key: str) -> Result | None:
    path = _entry(folder, key)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("key") != key:
            raise ValueError("an entry of another key")
        result = Result.from_dict(data["result"])
        with contextlib.suppress(OSError):
            os.utime(path)  # recently used: prune() keeps it
        return result
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError, AttributeError):  # corrupt: discard it
        with contextlib.suppress(OSError):
            path.unlink()
        return None


def _write(folder: Path, key: str, result: Result) -> Result:
    """Store ``result`` (unless it timed out); the Result as a later read returns it, so that a run
    with a cold cache sees exactly what a run with a warm one does."""
    data = json.loads(result.to_json())
    if not _timed_out(result):
        path = _entry(folder, key)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=path.parent)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(json.dumps({"key": key, "result": data}, ensure_ascii=False))
        os.replace(tmp, path)
    return Result.from_dict(data)


def _lock_path(folder: Path, key: str) -> Path:
    path = folder / "locks" / f"{key}.lock"
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def _try_lock(folder: Path, key: str) -> int | None:
    fd = os.open(_lock_path(folder, key), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    return fd


def _unlock(fd: int) -> None:
    fcntl.flock(fd, fcntl.LOCK_UN)
    os.close(fd)


@contextlib.contextmanager
def _locked(folder: Path, key: str) -> Iterator[None]:
    fd = os.open(_lock_path(folder, key), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        _unlock(fd)


def _sha(parts: Any) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()
