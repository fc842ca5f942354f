"""The temporary folder a grader names (``TMPDIR``) is where the learners' folders go, or the judge refuses.

Python's :mod:`tempfile` quietly takes ``/tmp`` when the folder named is missing or full. A grader who gave
the judge a file system of its own, so that a learner filling its folder fills only that, then had a learner
fill the machine's root disk (77 GB, found on 2026-12-06 after a killed judge had left its folder full).
"""

from __future__ import annotations

import contextlib
import csv
import errno
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from judge.commands.grade.model import Options
from judge.core.result import INTERNAL_ERROR, Result
from judge.core.result import TestResult as Outcome
from judge.engines import Job
from tests.conftest import FIXTURE_PROBLEMS, ROOT

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="mounting a small file system needs root")


HOG = """\
import os, time
if not os.path.exists("hog-0"):  # once per job (the module is imported afresh for every test)
    for number in range(100_000):
        try:
            with open(f"hog-{number}", "wb") as handle:
                handle.write(bytes(65536))
        except OSError:
            break
    time.sleep(2)  # holding the space while the classmates are judged


def add(a, b):
    return None
"""


def grade(tmp_path: Path, temporary: str, fallback: Path, *options: str) -> subprocess.CompletedProcess:
    """``judge grade`` of one student's correct fx-add with ``TMPDIR=temporary``; ``TEMP=fallback`` is where
    :mod:`tempfile` would turn when ``temporary`` cannot be used."""
    folder = tmp_path / "subs" / "ann" / "fx-add"
    if not folder.exists():
        folder.mkdir(parents=True)
        shutil.copy(FIXTURE_PROBLEMS / "fx-add" / "reference" / "adder.py", folder)
    shutil.rmtree(tmp_path / "out", ignore_errors=True)
    env = dict(os.environ, NO_COLOR="1", PYTHONPATH=str(ROOT), TMPDIR=temporary, TEMP=str(fallback))
    return subprocess.run([sys.executable, "-m", "judge", "grade", str(tmp_path / "subs"), "-o", str(tmp_path / "out"),
                           "--problems", str(FIXTURE_PROBLEMS), *options], env=env, capture_output=True, text=True, timeout=300)


@contextlib.contextmanager
def small_file_system(tmp_path: Path, size: str) -> Iterator[tuple[Path, Path]]:
    """A tmpfs of ``size`` mounted for the test (the temporary folder to name), and an empty folder beside
    it (where :mod:`tempfile` would turn instead)."""
    small, fallback = tmp_path / "small", tmp_path / "fallback"
    small.mkdir()
    fallback.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=1777", "tmpfs", str(small)], check=True)
    try:
        yield small, fallback
    finally:
        subprocess.run(["umount", "-l", str(small)], check=False)


def fill(folder: Path) -> None:
    """Write into ``folder`` until its file system is full."""
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / "fill").open("wb") as handle:
        try:
            while True:
                handle.write(b"\0" * 65536)
                handle.flush()
        except OSError as exc:
            assert exc.errno == errno.ENOSPC
            handle.truncate(handle.tell() - handle.tell() % 65536)  # close() must not fail on what is left


def test_a_temporary_folder_that_does_not_exist_is_refused_not_replaced(tmp_path):
    fallback = tmp_path / "fallback"
    fallback.mkdir()
    done = grade(tmp_path, str(tmp_path / "missing"), fallback)
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"TMPDIR={tmp_path / 'missing'} cannot be used (No such file or directory)" in done.stderr
    assert list(fallback.iterdir()) == []  # no learner's folder went where tempfile would have put it
    assert not (tmp_path / "out").exists()


@needs_root
def test_a_full_temporary_folder_is_refused_unless_a_judge_killed_outright_filled_it(tmp_path):
    with small_file_system(tmp_path, "2m") as (small, fallback):
        dead = small / "judge-job-dead"  # what a judge killed by SIGKILL leaves: its lock file, nobody holding it
        (dead / "judge-learner-x").mkdir(parents=True)
        (dead / ".judge-alive").touch()
        fill(dead / "judge-learner-x")
        done = grade(tmp_path, str(small), fallback)
        assert done.returncode == 0, done.stdout + done.stderr
        assert not dead.exists() and list(fallback.iterdir()) == []
        with (tmp_path / "out" / "grades.csv").open() as handle:
            assert [(row["student"], row["total"]) for row in csv.DictReader(handle)] == [("ann", "4")]

        fill(small / "someone-elses")  # full for a reason the judge does not own: refused, nothing moved
        done = grade(tmp_path, str(small), fallback)
        assert done.returncode == 2, done.stdout + done.stderr
        assert f"TMPDIR={small} cannot be used (No space left on device)" in done.stderr
        assert list(fallback.iterdir()) == [] and (small / "someone-elses" / "fill").exists()


@needs_root
@pytest.mark.parametrize("level", ["bubblewrap", "plain"])  # the user level: tests/test_user_level.py's Python
def test_classmates_judged_while_a_learner_holds_the_temporary_folder_full_keep_full_marks(tmp_path, level):
    with small_file_system(tmp_path, "4m") as (small, fallback):
        for student, code in (("aa-hog", HOG), ("bob", "def add(a, b):\n    return a + b\n"),
                              ("cy", "def add(a, b):\n    return b + a\n")):
            (tmp_path / "subs" / student / "fx-add").mkdir(parents=True)
            (tmp_path / "subs" / student / "fx-add" / "adder.py").write_text(code)
        done = grade(tmp_path, str(small), fallback, "-j", "2", "--sandbox", level)
        assert done.returncode == 0, done.stdout + done.stderr
        with (tmp_path / "out" / "grades.csv").open() as handle:
            totals = {row["student"]: row["total"] for row in csv.DictReader(handle)}
        assert totals == {"aa-hog": "0", "ann": "4", "bob": "4", "cy": "4"}  # before: the three lost a test
        assert list(small.iterdir()) == [] and list(fallback.iterdir()) == []  # the space came back


class _CountingEngine:
    """An engine whose first run of each job gives the Result named for it, and every later run a pass."""

    def __init__(self, first: dict[str, Result]) -> None:
        self.first, self.runs = first, []

    def judge(self, jobs, parallel=1, on_result=None):
        self.runs.append(([job.label for job in jobs], parallel))
        return [self.first.pop(job.label, None) or Result(problem="fx-add", status="passed") for job in jobs]


@pytest.mark.parametrize("parallel", [1, 2])
def test_only_a_job_that_met_a_full_disk_beside_others_is_judged_again_alone(parallel):
    """A write that failed on a full disk, or the judge's own test process that ended without a report (under
    load the full disk stopped it before its first test, with nowhere left to write why: seen at the user
    level, classmates 0 of 4), is judged again alone; a learner's failing test and error are not."""
    from judge.core.problem import load_problem

    full, failed = (Result(problem="fx-add", status="failed", tests=[
        Outcome(id="t", name="t", file="t.py", visibility="public", outcome="failed", message=message)])
        for message in ("OSError: [Errno 28] No space left on device", "assert 3 == 4"))
    broken = Result.error("fx-add", INTERNAL_ERROR + "the judge's test process ended with exit code 70 before "
                                                     "the tests finished")
    learners_error = Result.error("fx-add", "SyntaxError: invalid syntax (adder.py, line 1)")
    engine = _CountingEngine({"full": full, "failed": failed, "broken": broken, "error": learners_error})
    problem = load_problem(FIXTURE_PROBLEMS / "fx-add")
    labels = ["full", "failed", "passed", "broken", "error"]
    jobs = [Job(problem, source="", label=label) for label in labels]
    results = Options(parallel=parallel, engine=engine).judge(jobs)  # type: ignore[arg-type]
    if parallel == 1:  # nothing beside it could have filled the disk: its Result stands
        assert engine.runs == [(labels, 1)] and results[0] is full and results[3] is broken
    else:
        assert engine.runs == [(labels, 2), (["full"], 1), (["broken"], 1)]
        assert [r.status for r in results] == ["passed", "failed", "passed", "passed", "error"]
