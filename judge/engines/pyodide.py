"""Engine parity: run judge jobs in Pyodide (under Node.js) and compare with native Results.

The same learner code must give the same Result natively (CPython 3.11, 64-bit) and in the
browser (Pyodide 0.27.7, Python 3.12, 32-bit wasm), durations aside. This module is native-only.

- :func:`run_in_pyodide` runs a list of :class:`Job` in Pyodide with one Node.js process and one
  Pyodide boot for all of them (``judge/engines/pyodide_harness/run_jobs.mjs``). The harness boots from a
  site folder made by :func:`judge.engines.pyodide_files.build_engine_site`: the files a ``self`` build ships
  (the pinned distribution's compiled twins, the judge zip and its bytecode) and the site's own
  ``js/boot.mjs``, so it exercises the engine the browser runs. A job that exceeds its time limit
  is interrupted (and, if the interrupt does not land, its worker is replaced): its Result is the
  timeout Result of :func:`judge.engines.unfinished.unfinished_result`. A job that kills the
  interpreter gets that function's ``crashed`` Result; the remaining jobs go on in a fresh
  interpreter.
- :func:`normalise` removes what legitimately differs between the engines; :func:`compare`
  reports what is left, field by field.

Normalisation (applied to both sides before comparing):

1. Durations are dropped: the Result's ``duration`` and every test's ``duration``; so is ``sandbox``
   (where the learner's code ran: a sandbox level natively, ``browser`` in Pyodide), and so is a
   time-out's message (natively the limit counts CPU time with a wall-clock backstop, and the message
   says which clock stopped the run; the browser counts wall-clock time).
2. In every string of the Result (messages, captured output, traceback files and code, artifact
   values), documented path differences are replaced by placeholders:

   - pytest's ``tmp_path`` roots, ``<temp>/pytest-of-<user>/pytest-<n>`` -> ``<pytest-tmp>``
     (the user is ``root`` natively and ``web_user`` in Pyodide);
   - the judge's work directories, ``<temp>/judge-<id>-<random>`` -> ``<workdir>`` (the runner
     already strips them from messages; this covers reprs and artifacts);
   - the problem folder: the native absolute path given as ``problem_dir`` and Pyodide's copy
     ``/home/pyodide/problems/<id>`` -> ``<problem>``;
   - Python's installation: ``.../site-packages/`` -> ``<site-packages>/``; the standard library,
     ``.../lib/python3.N/`` natively and ``/lib/python312.zip/`` in Pyodide -> ``<stdlib>/``;
   - object addresses, `` at 0x7f...`` -> `` at 0x...``.
3. Traceback frames of list, dict and set comprehensions (function ``<listcomp>``,
   ``<dictcomp>``, ``<setcomp>``) are dropped: Python 3.12 inlines comprehensions (PEP 709), so
   3.11 shows one more frame, on the same line as its caller.

Nothing else is normalised: numpy's int32 default integer, ``sys.maxsize``, float formatting or
error messages that differ between Python 3.11 and 3.12 are real parity failures, to be fixed in
the problem's tests (see docs/problem-format.md).
"""

from __future__ import annotations

import copy
import difflib
import json
import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.errors import JudgeError
from ..core.result import Result
from . import EngineFor, Job
from .unfinished import unfinished_result

HARNESS = Path(__file__).resolve().parent / "pyodide_harness" / "run_jobs.mjs"
BOOT_ALLOWANCE = 120.0  # seconds allowed for one Pyodide boot on a loaded 2-core machine
GRACE = 2.0  # seconds an interrupted job gets before its worker is terminated
MIN_NODE_MAJOR = 18


@dataclass
class HarnessRun:
    """Everything one harness call produced."""

    results: list[dict[str, Any]]  # one Result dict per job, in job order
    records: list[dict[str, Any]]  # the harness's job records (interrupted, killed, seconds, worker)
    boots: list[dict[str, Any]] = field(default_factory=list)  # timings of each Pyodide boot
    log: str = ""  # the harness's stderr


class HarnessError(JudgeError, RuntimeError):
    """The Pyodide harness could not run (node missing, Pyodide failed to boot, ...)."""


class PyodideEngine:
    """Pyodide under Node.js (one process, one boot, jobs one at a time) behind the engine interface."""

    def judge(self, jobs: Sequence[Job], parallel: int = 1,
              on_result: Callable[[int, Result], None] | None = None) -> list[Result]:
        results = [Result.from_dict(data) for data in run_in_pyodide(list(jobs))]
        for index, result in enumerate(results):
            if on_result:
                on_result(index, result)
        return results


def run_in_pyodide(jobs: list[Job], *, dist: Path | None = None, site: Path | None = None, verbose: bool = False,
                   timeout: float | None = None, fresh: bool = False) -> list[dict[str, Any]]:
    """Run ``jobs`` in Pyodide (one Node.js process, one boot); return their Result dicts in order.

    ``fresh``: each job in an engine of its own, as the page runs every run (for code that is not the
    problems' own: a hostile fixture could otherwise change a later job's Result)."""
    return run_harness(jobs, dist=dist, site=site, verbose=verbose, timeout=timeout, fresh=fresh).results


def run_harness(jobs: list[Job], *, dist: Path | None = None, site: Path | None = None, verbose: bool = False,
                timeout: float | None = None, plain: bool = False, fresh: bool = False,
                grace: float = GRACE) -> HarnessRun:
    """Like :func:`run_in_pyodide`, also returning the harness's records and boot timings.

    ``site`` is a site built with ``judge build --pyodide self`` to boot from; by default an
    engine-only site is built from this judge into a temporary folder (``dist`` is the cache folder
    of the Pyodide distribution, as in :func:`judge.engines.pyodide_dist.ensure_distribution`). The
    harness restores the site's memory snapshot as the browser does; ``plain`` boots without it
    (the browser's fallback). ``grace``: seconds an interrupted job gets before its worker is terminated.
    """
    if not jobs:
        return HarnessRun(results=[], records=[])
    node = find_node()
    if timeout is None:
        timeout = BOOT_ALLOWANCE * (len(jobs) if fresh else 1) + sum(j.limit + grace + 5 for j in jobs)
    with tempfile.TemporaryDirectory(prefix="pp-judge-parity-") as tmp:
        site_dir = Path(site) if site is not None else _engine_site(Path(tmp) / "site", dist)
        log, code, lines = _call_harness(node, site_dir, jobs, Path(tmp), verbose, timeout, plain, fresh, grace)
    records = [json.loads(line) for line in lines if line.strip()]
    by_index = {r["index"]: r for r in records if r.get("kind") == "job"}
    boots = [r for r in records if r.get("kind") == "boot"]
    missing = [i for i in range(len(jobs)) if i not in by_index]
    if missing or code != 0:
        raise HarnessError(f"the Pyodide harness failed (exit status {code}); {len(missing)} of {len(jobs)} "
                           f"jobs have no result (first: {jobs[missing[0]].label if missing else '-'}).\n"
                           f"harness log (last lines):\n{_tail(log)}")
    ordered = [by_index[i] for i in range(len(jobs))]
    results = [_result_of(record, job) for record, job in zip(ordered, jobs)]
    return HarnessRun(results=results, records=ordered, boots=boots, log=log)


def find_node() -> str:
    """The path of a usable ``node`` (Node.js 18+; 20 is what the project uses), else HarnessError."""
    node = shutil.which("node")
    if node is None:
        raise HarnessError("node (Node.js 20) is not installed, and the Pyodide parity harness needs it: "
                           "install it (e.g. `apt-get install nodejs npm`) and make sure `node` is on PATH")
    try:
        version = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=30).stdout.strip()
        major = int(version.lstrip("v").split(".")[0])
    except (OSError, ValueError, subprocess.TimeoutExpired) as exc:
        raise HarnessError(f"could not run `{node} --version`: {exc}") from None
    if major < MIN_NODE_MAJOR:
        raise HarnessError(f"{node} is Node.js {version}; the Pyodide harness needs Node.js {MIN_NODE_MAJOR}+ "
                           "(20 used)")
    return node


def _engine_site(folder: Path, dist: Path | None) -> Path:
    from .pyodide_dist import DistributionError
    from .pyodide_files import build_engine_site

    try:
        build_engine_site(folder, dist)
    except DistributionError as exc:
        raise HarnessError(f"cannot prepare Pyodide for the harness: {exc}") from None
    return folder


def _call_harness(node: str, site: Path, jobs: list[Job], tmp: Path, verbose: bool,
                  timeout: float, plain: bool = False, fresh: bool = False,
                  grace: float = GRACE) -> tuple[str, int | None, list[str]]:
    """Run ``run_jobs.mjs``; its log, exit status (None: killed at ``timeout``) and JSON lines."""
    jobs_file, out_file = tmp / "jobs.json", tmp / "results.jsonl"
    payload = [{"problem_dir": str(Path(j.problem.path).resolve()), "source": j.code(),
                "include_secret": bool(j.include_secret), "time_limit": j.limit,
                "label": j.label, "fresh": fresh, "lang": j.language()} for j in jobs]
    jobs_file.write_text(json.dumps({"jobs": payload}), encoding="utf-8")
    cmd = [node, str(HARNESS), "--site", str(site), "--jobs", str(jobs_file), "--out", str(out_file),
           "--grace", str(grace)]
    if verbose:
        cmd.append("--verbose")
    if plain:
        cmd.append("--plain")
    try:
        proc = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True, errors="replace", timeout=timeout)
        log, code = proc.stderr, proc.returncode
    except subprocess.TimeoutExpired as exc:
        log, code = _text(exc.stderr) + f"\n[parity] the harness did not finish within {timeout:.0f} s", None
    lines = out_file.read_text(encoding="utf-8").splitlines() if out_file.exists() else []
    return log, code, lines


def _result_of(record: dict[str, Any], job: Job) -> dict[str, Any]:
    """The job's Result: the engine's own, or the one for how the harness saw it end."""
    problem = job.problem.id
    if record.get("interrupted") or record.get("killed"):
        return unfinished_result(problem, "timeout", job.limit).to_dict()
    if record.get("crash"):
        return unfinished_result(problem, "crashed", detail=record["crash"]).to_dict()
    if record.get("result") is not None:
        return record["result"]
    detail = f"Pyodide harness: {record.get('harness_error') or 'no result'}"
    return unfinished_result(problem, "engine-error", detail=detail).to_dict()


def _text(data: str | bytes | None) -> str:
    if data is None:
        return ""
    return data.decode("utf-8", "replace") if isinstance(data, bytes) else data


def _tail(text: str, lines: int = 40) -> str:
    return "\n".join(text.strip().splitlines()[-lines:]) or "(empty)"


# ---------------------------------------------------------------------------------------------
# normalisation and comparison

_INLINED_COMPREHENSIONS = ("<listcomp>", "<dictcomp>", "<setcomp>")
_TEMP_ROOTS = r"(?:/private)?(?:/tmp|/var/tmp|/var/folders/[^/\s'\"]+/[^/\s'\"]+/T)"
_RULES: list[tuple[re.Pattern[str], str]] = [
    (re.compile(_TEMP_ROOTS + r"/pytest-of-[^/\s'\"]+/pytest-\d+"), "<pytest-tmp>"),
    (re.compile(r"/[^\s'\"]*?/judge-[a-z0-9-]+-[A-Za-z0-9_]{8}"), "<workdir>"),
    (re.compile(r"/home/pyodide/problems/[a-z0-9][a-z0-9-]*"), "<problem>"),
    (re.compile(r"/[^\s'\"]*?/site-packages/"), "<site-packages>/"),
    (re.compile(r"/lib/python312\.zip/|/[^\s'\"]*?/lib/python3\.\d+/"), "<stdlib>/"),
    (re.compile(r" at 0x[0-9a-fA-F]+"), " at 0x..."),
]


def normalise(result: dict[str, Any], problem_dir: str | Path | None = None) -> dict[str, Any]:
    """A copy of a Result dict without durations and with engine-specific paths replaced.

    ``problem_dir`` is the native problem folder; its absolute path becomes ``<problem>``.
    The rules are listed in this module's docstring.
    """
    data = copy.deepcopy(result)
    data.pop("duration", None)
    data.pop("sandbox", None)
    if data.get("status") == "timeout":  # natively CPU time with a wall-clock backstop, in the browser wall-clock
        data["message"] = "timed out"   # time: which clock, and after how long, is the engine's
    for test in data.get("tests", []):
        test.pop("duration", None)
        if isinstance(test.get("traceback"), list):
            test["traceback"] = [f for f in test["traceback"]
                                 if not (isinstance(f, dict) and f.get("function") in _INLINED_COMPREHENSIONS)]
    rules = list(_RULES)
    if problem_dir is not None:
        folder = str(Path(problem_dir).resolve())
        rules.insert(0, (re.compile(re.escape(folder) + r"(?![\w-])"), "<problem>"))
    return _map_strings(data, lambda text: _apply(rules, text))


def _apply(rules: list[tuple[re.Pattern[str], str]], text: str) -> str:
    if "/" not in text and "0x" not in text:
        return text
    # Natively the temp folder may be elsewhere (TMPDIR); treat it like /tmp.
    temp = tempfile.gettempdir()
    if temp not in ("/tmp", "/var/tmp") and temp in text:
        text = text.replace(temp, "/tmp")
    for pattern, replacement in rules:
        text = pattern.sub(replacement, text)
    return text


def _map_strings(value: Any, fn: Any) -> Any:
    if isinstance(value, str):
        return fn(value)
    if isinstance(value, list):
        return [_map_strings(v, fn) for v in value]
    if isinstance(value, dict):
        return {k: _map_strings(v, fn) for k, v in value.items()}
    return value


_RESULT_FIELDS = ("schema_version", "problem", "status", "score", "passed", "total", "message")
_TEST_FIELDS = ("name", "file", "visibility", "outcome", "message", "traceback", "stdout", "stderr", "artifacts")


def compare(native: dict[str, Any], pyodide: dict[str, Any], problem_dir: str | Path | None = None) -> str:
    """Empty when the two Results agree after :func:`normalise`; otherwise a readable diff."""
    a, b = normalise(native, problem_dir), normalise(pyodide, problem_dir)
    if a == b:
        return ""
    out: list[str] = []
    for name in _RESULT_FIELDS:
        if a.get(name) != b.get(name):
            out += _field_diff(name, a.get(name), b.get(name), indent="  ")
    tests_a = {t["id"]: t for t in a.get("tests", [])}
    tests_b = {t["id"]: t for t in b.get("tests", [])}
    only_a = [i for i in tests_a if i not in tests_b]
    only_b = [i for i in tests_b if i not in tests_a]
    if only_a:
        out.append("  tests only in native: " + ", ".join(only_a))
    if only_b:
        out.append("  tests only in pyodide: " + ", ".join(only_b))
    common = [i for i in tests_a if i in tests_b]
    if [i for i in tests_a if i in common] != [i for i in tests_b if i in common]:
        out.append("  tests ran in a different order")
    for test_id in common:
        ta, tb = tests_a[test_id], tests_b[test_id]
        lines: list[str] = []
        for name in _TEST_FIELDS:
            if ta.get(name) != tb.get(name):
                lines += _field_diff(name, ta.get(name), tb.get(name), indent="    ")
        extra = sorted(set(ta) ^ set(tb))
        if extra:
            lines.append(f"    fields present on one side only: {', '.join(extra)}")
        if lines:
            out.append(f"  test {test_id}:")
            out += lines
    if not out:  # a difference outside the fields above
        out += _text_diff(json.dumps(a, indent=1, sort_keys=True), json.dumps(b, indent=1, sort_keys=True), "  ")
    header = f"Result of {a.get('problem', '?')} differs between native CPython and Pyodide (after normalisation):"
    return "\n".join([header, *out])


def _field_diff(name: str, left: Any, right: Any, indent: str) -> list[str]:
    if name == "traceback":
        left, right = _frames_text(left), _frames_text(right)
    elif name == "artifacts":
        left = json.dumps(left, indent=1, sort_keys=True)
        right = json.dumps(right, indent=1, sort_keys=True)
    if isinstance(left, str) and isinstance(right, str) and ("\n" in left or "\n" in right
                                                              or max(len(left), len(right)) > 60):
        return [f"{indent}{name}:", *_text_diff(left, right, indent + "  ")]
    return [f"{indent}{name}: native {left!r}  |  pyodide {right!r}"]


def _frames_text(frames: Any) -> str:
    if not isinstance(frames, list):
        return repr(frames)
    return "\n".join(f"{f.get('file')}:{f.get('line')} in {f.get('function')}: {f.get('code', '')}"
                     if isinstance(f, dict) else repr(f) for f in frames)


def _text_diff(left: str, right: str, indent: str) -> list[str]:
    diff = difflib.unified_diff(left.splitlines(), right.splitlines(), "native", "pyodide", lineterm="", n=2)
    return [indent + line for line in diff]


def check_parity(roots: str | Path | Sequence[str | Path], parallel: int = 1, stream: Any = None,
                 native_for: EngineFor | None = None) -> int:
    """``judge check --pyodide``: judge every reference, starter and wrong solution natively and in
    Pyodide and report every difference; return 0 when all agree, 1 otherwise, 2 when Pyodide
    cannot run here. ``native_for``: the native engine for the problems found (default: the best
    sandbox level here)."""
    import sys

    from ..core.problem import discover_in
    from .native import NativeEngine

    stream = stream or sys.stdout
    problems, _ = discover_in(roots)
    plan = [(problem, label, source) for problem in problems for label, source in _solutions(problem, stream)]
    stream.write(f"Parity: judging {len(plan)} solutions natively and in Pyodide {_pyodide_version()}...\n")
    engine = native_for(problems) if native_for else NativeEngine()
    native = engine.judge([Job(problem, source=source, include_secret=True) for problem, _, source in plan], parallel)
    try:
        browser = run_in_pyodide([Job(problem, source=source, include_secret=True, time_limit=problem.time_limit * 3,
                                      label=f"{problem.id}/{label}") for problem, label, source in plan])
    except HarnessError as exc:
        stream.write(f"error: cannot run Pyodide here: {exc}\n")
        return 2
    differing = 0
    for (problem, label, _), mine, theirs in zip(plan, native, browser):
        diff = compare(mine.to_dict(), theirs, problem_dir=problem.path)
        if diff:
            differing += 1
            stream.write(f"DIFFERS {problem.id} {label}\n{diff}\n")
    stream.write(f"{len(plan) - differing} of {len(plan)} solutions give the same Result in both engines.\n")
    return 1 if differing else 0


def _solutions(problem: Any, stream: Any) -> list[tuple[str, str]]:
    """(label, code) of the reference, the starter and every wrong solution that loads."""
    from ..core.wrong import WrongSolutionError, load_wrong

    found = [("reference", problem.reference_path.read_text(encoding="utf-8")), ("starter", problem.starter)]
    for path in problem.wrong_files:
        try:
            found.append((f"wrong/{path.name}", load_wrong(problem, path).source))
        except WrongSolutionError as exc:
            stream.write(f"SKIPPED {problem.id}: {exc}\n")
    return found


def _pyodide_version() -> str:
    from .pyodide_dist import PYODIDE_VERSION

    return PYODIDE_VERSION
