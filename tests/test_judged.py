"""The tests' shared cache of judged Results (tests/judged.py): what changes a Result changes its key, a
Result is judged once, and an entry that does not read is judged again."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import pytest

from judge.core import result as result_module
from judge.core.problem import load_problem
from judge.core.result import Result
from judge.engines import Job
from tests import judged
from tests.conftest import FIXTURE_PROBLEMS, ROOT, normalise

ADD = "def add(a, b):\n    return a + b\n"


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("PP_JUDGE_RESULTS_CACHE", str(folder))
    return folder


@pytest.fixture
def problem(tmp_path: Path):
    folder = tmp_path / "fx-add"
    shutil.copytree(FIXTURE_PROBLEMS / "fx-add", folder, ignore=shutil.ignore_patterns("__pycache__"))
    return load_problem(folder)


class Counting:
    """A stand-in engine: Results made up on the spot, the jobs it was given counted."""

    def __init__(self, status: str = "passed") -> None:
        self.judged: list[str] = []
        self.status = status

    def __call__(self, jobs: list[Job]) -> list[Result]:
        self.judged += [job.code() for job in jobs]
        return [Result(problem=job.problem.id, status=self.status, message=f"judged {job.code()!r}",
                       tests=[result_module.TestResult(id="t", name="t", file="f", visibility="public",
                                         outcome="passed" if self.status == "passed" else "timeout")])
                for job in jobs]


def test_the_key_covers_the_code_the_job_the_problem_and_the_judge(problem, monkeypatch: pytest.MonkeyPatch) -> None:
    job = Job(problem, source=ADD)
    key = judged.job_key(job)
    assert judged.job_key(Job(problem, source=ADD)) == key  # the same job, the same key
    variants = [Job(problem, source=ADD + "\n"), Job(problem, source=ADD, include_secret=False),
                Job(problem, source=ADD, time_limit=99), Job(problem, source=ADD, lang="zh"),
                Job(problem, source=ADD, keyword="add"), Job(problem, source=ADD, memory_limit=64)]
    keys = {judged.job_key(v) for v in variants}
    assert key not in keys and len(keys) == len(variants)
    # a changed file of the problem folder, a test the learner never sees included
    secret = next(problem.path.glob("tests/secret/*.py"))
    secret.write_text(secret.read_text(encoding="utf-8") + "\n# changed\n", encoding="utf-8")
    assert judged.job_key(job) != key
    secret.write_text(secret.read_text(encoding="utf-8").removesuffix("\n# changed\n"), encoding="utf-8")
    assert judged.job_key(job) == key
    # the same files elsewhere: Results may quote the problem's path
    assert judged.job_key(dataclasses.replace(job, problem=dataclasses.replace(problem, path=ROOT))) != key
    # the judge's source
    monkeypatch.setattr(judged, "judge_digest", lambda: "another judge")
    assert judged.job_key(job) != key


def test_a_changed_judge_source_changes_the_judge_digest(tmp_path: Path) -> None:
    copy = tmp_path / "judge"
    shutil.copytree(ROOT / "judge", copy, ignore=shutil.ignore_patterns("__pycache__"))
    before = judged.tree_digest(copy)
    assert judged.tree_digest(copy) == before
    scoring = copy / "core" / "scoring.py"
    scoring.write_text(scoring.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    assert judged.tree_digest(copy) != before
    scoring.write_text(scoring.read_text(encoding="utf-8")[:-1], encoding="utf-8")
    (copy / "locale" / "zh" / "LC_MESSAGES" / "judge.mo").write_bytes(b"another catalog")  # not only .py files
    assert judged.tree_digest(copy) != before
    assert judged.tree_digest(ROOT / "judge") == judged.tree_digest(ROOT / "judge")


def test_a_changed_command_or_format_keeps_the_judge_digest(tmp_path: Path) -> None:
    copy = tmp_path / "judge"
    shutil.copytree(ROOT / "judge", copy, ignore=shutil.ignore_patterns("__pycache__"))
    before = judged.tree_digest(copy, judged.ABOVE_THE_ENGINES)
    for changed in (copy / "commands" / "check.py", copy / "formats" / "junit.py"):
        changed.write_text(changed.read_text(encoding="utf-8") + "\n# changed\n", encoding="utf-8")
    assert judged.tree_digest(copy, judged.ABOVE_THE_ENGINES) == before
    assert judged.tree_digest(copy) != judged.tree_digest(ROOT / "judge")  # but a digest of everything sees them
    runner = copy / "core" / "runner.py"
    runner.write_text(runner.read_text(encoding="utf-8") + "\n# changed\n", encoding="utf-8")
    assert judged.tree_digest(copy, judged.ABOVE_THE_ENGINES) != before


def test_a_result_is_judged_once_then_read(cache: Path, problem) -> None:
    engine = Counting()
    jobs = [Job(problem, source=ADD), Job(problem, source=ADD + "\n"), Job(problem, source=ADD)]
    first = judged.judge_cached(jobs, run=engine)
    assert engine.judged == [ADD, ADD + "\n"]  # the duplicate job judged once
    second = judged.judge_cached(jobs, run=engine)
    assert engine.judged == [ADD, ADD + "\n"]  # nothing judged again
    assert [r.to_dict() for r in second] == [r.to_dict() for r in first]
    assert [r.message for r in first] == [f"judged {ADD!r}", f"judged {ADD + chr(10)!r}", f"judged {ADD!r}"]
    judged.judge_cached([Job(problem, source="def add(a, b):\n    return 0\n")], run=engine)
    assert len(engine.judged) == 3  # only the new code


@pytest.mark.parametrize("content", [b"", b"{not json", b'{"key": "another", "result": {}}',
                                     b'{"result": {"schema_version": 0}}'], ids=["empty", "not JSON", "another key",
                                                                                  "another schema"])
def test_an_entry_that_does_not_read_is_judged_again(cache: Path, problem, content: bytes) -> None:
    engine = Counting()
    job = Job(problem, source=ADD)
    [first] = judged.judge_cached([job], run=engine)
    [entry] = cache.rglob(f"{judged.job_key(job)}.json")
    entry.write_bytes(content)
    [again] = judged.judge_cached([job], run=engine)
    assert engine.judged == [ADD, ADD]
    assert again.to_dict() == first.to_dict()
    assert entry.read_bytes() != content  # the corrupt entry was replaced
    judged.judge_cached([job], run=engine)
    assert engine.judged == [ADD, ADD]


def test_a_run_that_timed_out_is_not_kept(cache: Path, problem) -> None:
    engine = Counting(status="timeout")
    job = Job(problem, source=ADD)
    judged.judge_cached([job], run=engine)
    judged.judge_cached([job], run=engine)
    assert engine.judged == [ADD, ADD]  # the machine's load, not the key, may have decided it


def test_the_cache_can_be_turned_off(monkeypatch: pytest.MonkeyPatch, problem) -> None:
    monkeypatch.setenv("PP_JUDGE_RESULTS_CACHE", "off")
    engine = Counting()
    judged.judge_cached([Job(problem, source=ADD)], run=engine)
    judged.judge_cached([Job(problem, source=ADD)], run=engine)
    assert engine.judged == [ADD, ADD]


def test_a_cached_result_is_the_judged_one(cache: Path, problem) -> None:
    """With the real native engine: the Result read back equals the one judge_many returns."""
    from judge.engines.native import judge_many

    job = Job(problem, problem.reference_path)
    [direct] = judge_many([job])
    [stored] = judged.judge_cached([job])
    [read] = judged.judge_cached([job], run=Counting())  # from the cache: the stand-in is not asked
    assert normalise(read.to_dict()) == normalise(stored.to_dict()) == normalise(direct.to_dict())
    assert read.status == "passed" and read.tests


def test_a_snapshot_is_named_by_its_content(cache: Path, problem) -> None:
    first = judged.snapshot(problem.path)
    assert judged.snapshot(problem.path) == first and first.name == problem.path.name
    assert judged.tree_digest(first) == judged.tree_digest(problem.path)
    (problem.path / "README.md").write_text("# changed\n", encoding="utf-8")
    second = judged.snapshot(problem.path)
    assert second != first and (second / "README.md").read_text(encoding="utf-8") == "# changed\n"
    assert (first / "README.md").read_text(encoding="utf-8") != "# changed\n"  # the first copy is untouched


def test_prune_deletes_old_entries_then_the_least_recently_used(cache: Path, problem) -> None:
    import os
    import time

    engine = Counting()
    jobs = [Job(problem, source=ADD + "\n" * n) for n in range(4)]
    judged.judge_cached(jobs, run=engine)
    entries = {n: next(cache.rglob(f"{judged.job_key(job)}.json")) for n, job in enumerate(jobs)}
    now = time.time()
    for n, path in entries.items():
        os.utime(path, (now - 1000 * (4 - n), now - 1000 * (4 - n)))  # 0 the oldest, 3 the newest
    os.utime(entries[0], (now - 30 * 86400, now - 30 * 86400))
    assert judged.prune(max_bytes=10**9, max_age_days=14) == 1 and not entries[0].exists()
    judged.judge_cached([jobs[1]], run=engine)  # read: now the most recently used
    size = entries[3].stat().st_size
    assert judged.prune(max_bytes=2 * size, max_age_days=14) == 1
    assert not entries[2].exists() and entries[1].exists() and entries[3].exists()
    assert engine.judged == [job.code() for job in jobs]  # nothing judged again along the way


def test_a_key_is_the_same_in_another_process(problem) -> None:
    """The sandbox's runtime folder (a new temporary name in every process, which the packages linked
    there name too) stays out of the key: sessions and xdist workers share Results."""
    import subprocess
    import sys

    program = ("import sys; from judge.core.problem import load_problem; from judge.engines import Job; "
               "from tests.judged import job_key; "
               "print(job_key(Job(load_problem(sys.argv[1]), source=sys.argv[2])))")
    keys = {subprocess.run([sys.executable, "-c", program, str(problem.path), ADD], cwd=ROOT, capture_output=True,
                           text=True, timeout=300, check=True).stdout.strip() for _ in range(2)}
    assert keys == {judged.job_key(Job(problem, source=ADD))}
