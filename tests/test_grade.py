"""``judge grade``: layouts, points, policies, per-test limits, bad and hostile submissions, re-runs.

The class is graded against small problems made from the fixture problem ``fx-add`` (tests of
``add(a, b)``: three public tests, one secret), so each grading run takes seconds.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import shutil
import struct
import zipfile
from decimal import Decimal
from pathlib import Path

import pytest

from judge.commands.grade import Options, grade_class
from judge.commands.grade.model import safe_name
from judge.commands.grade.submissions import MAX_MEMBERS
from judge.core.problem import discover_problems, load_problem
from judge.core.result import Result
from tests.conftest import FIXTURE_PROBLEMS, SOLUTIONS
from tests.conftest import judge_cli as run_cli  # in this process

# the offline grading worksheet Moodle's assignment writes (mod/assign/feedback/offline), every column in its order
MOODLE_WORKSHEET_COLUMNS = ("Identifier", "Full name", "Email address", "Status", "Grade", "Maximum grade",
                            "Grade can be changed", "Last modified (submission)", "Last modified (grade)",
                            "Feedback comments")
REFERENCE = (FIXTURE_PROBLEMS / "fx-add" / "reference" / "adder.py").read_text()
SECRET_TEST = FIXTURE_PROBLEMS / "fx-add" / "tests" / "secret" / "test_big.py"


@pytest.fixture
def problems(tmp_path) -> Path:
    """fx-add, worth 10 points, in a problems folder of its own."""
    root = tmp_path / "problems"
    shutil.copytree(FIXTURE_PROBLEMS / "fx-add", root / "fx-add")
    _edit_toml(root / "fx-add", "points = 10\n")
    return root


def _edit_toml(folder: Path, extra: str) -> None:
    toml = folder / "problem.toml"
    toml.write_text(toml.read_text() + extra)


def _zip(path: Path, members: dict[str, str | bytes]) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return path


def _grade(subs: Path, out: Path, problems: Path, **options) -> dict[str, dict[str, str]]:
    found, errors = discover_problems(problems)
    assert not errors
    grade_class(subs, out, found, Options(**options))
    return _rows(out)


def _rows(out: Path) -> dict[str, dict[str, str]]:
    text = (out / "grades.csv").read_text(encoding="utf-8-sig")
    return {row["student"]: row for row in csv.DictReader(io.StringIO(text))}


@pytest.mark.slow
def test_every_layout_is_found(tmp_path, problems):
    subs = tmp_path / "subs"
    subs.mkdir()
    _zip(subs / "webapp.zip", {"fx-add/adder.py": REFERENCE})
    _zip(subs / "wrapped.zip", {"practice/fx-add/adder.py": REFERENCE, "practice/fx-add/README.md": "x"})
    _zip(subs / "loose.zip", {"adder.py": REFERENCE})
    (subs / "folder" / "fx-add").mkdir(parents=True)
    (subs / "folder" / "fx-add" / "adder.py").write_text(REFERENCE)
    (subs / "folder-wrapped" / "practice" / "fx-add").mkdir(parents=True)
    (subs / "folder-wrapped" / "practice" / "fx-add" / "adder.py").write_text(REFERENCE)
    rows = _grade(subs, tmp_path / "out", problems)
    assert sorted(rows) == ["folder", "folder-wrapped", "loose", "webapp", "wrapped"]
    for student, row in rows.items():
        assert (row["fx-add"], row["total"], row["max_total"], row["status"]) == ("10", "10", "10", "ok"), student


def test_points_follow_weights_and_declared_points(tmp_path, problems):
    public = problems / "fx-add" / "tests" / "public" / "test_add.py"
    public.write_text(public.read_text().replace("def test_small(", "@pytest.mark.points(3)\ndef test_small("))
    subs = tmp_path / "subs"
    subs.mkdir()
    _zip(subs / "small-only.zip", {"fx-add/adder.py": "def add(a, b):\n    return 3 if (a, b) == (1, 2) else -1\n"})
    _zip(subs / "all-but-small.zip", {"fx-add/adder.py": "def add(a, b):\n    return 0 if (a, b) == (1, 2) else a + b\n"})
    rows = _grade(subs, tmp_path / "out", problems)
    # weights 3, 1, 1, 1 (secret) scaled to 10 points: 5, 1.67, 1.67, 1.67
    assert rows["small-only"]["fx-add"] == "5"
    assert rows["all-but-small"]["fx-add"] == "5"
    result = json.loads((tmp_path / "out" / "results" / "small-only.json").read_text())["results"][0]
    assert [t["max_points"] for t in result["tests"]] == [5.0, 1.6667, 1.6667, 1.6667]
    assert result["points"] == 5.0 and result["max_points"] == 10.0


def test_default_points_are_one_per_test(tmp_path):
    root = tmp_path / "problems"
    shutil.copytree(FIXTURE_PROBLEMS / "fx-add", root / "fx-add")
    subs = tmp_path / "subs"
    subs.mkdir()
    shutil.copy(SOLUTIONS / "partly_failing.py", _folder(subs / "ann" / "fx-add") / "adder.py")
    rows = _grade(subs, tmp_path / "out", root)
    assert (rows["ann"]["fx-add"], rows["ann"]["max_total"]) == ("3", "4")


def test_all_or_nothing_scoring(tmp_path, problems):
    _edit_toml(problems / "fx-add", 'scoring = "all-or-nothing"\n')
    subs = tmp_path / "subs"
    subs.mkdir()
    shutil.copy(SOLUTIONS / "partly_failing.py", _folder(subs / "partial" / "fx-add") / "adder.py")
    (_folder(subs / "full" / "fx-add") / "adder.py").write_text(REFERENCE)
    rows = _grade(subs, tmp_path / "out", problems)
    assert rows["partial"]["fx-add"] == "0"
    assert rows["full"]["fx-add"] == "10"


def test_a_looping_test_fails_alone(tmp_path, problems):
    _edit_toml(problems / "fx-add", "test_time_limit = 0.5\n")
    subs = tmp_path / "subs"
    subs.mkdir()
    loops = "def add(a, b):\n    while a == 7:\n        pass\n    return a + b\n"
    (_folder(subs / "looper" / "fx-add") / "adder.py").write_text(loops)
    rows = _grade(subs, tmp_path / "out", problems)
    result = json.loads((tmp_path / "out" / "results" / "looper.json").read_text())["results"][0]
    outcomes = {t["id"].split("::")[1]: (t["outcome"], t["message"]) for t in result["tests"]}
    assert outcomes["test_zero[7-0]"][0] == "failed"
    assert "used more than its 0.5 s of CPU time" in outcomes["test_zero[7-0]"][1]
    assert [o for o, _ in outcomes.values()].count("passed") == 3
    assert rows["looper"]["fx-add"] == "7.5"


def _folder(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path


def _bad_submissions(subs: Path, outside: Path) -> dict[str, str]:
    """Write every kind of bad submission; return student -> a phrase its status must contain."""
    subs.mkdir()
    (subs / "corrupt.zip").write_bytes(b"PK\x03\x04 this is not a zip")
    _zip(subs / "empty.zip", {})
    _zip(subs / "slip.zip", {"../../escaped.py": "x = 1", "fx-add/adder.py": REFERENCE})
    _zip(subs / "absolute.zip", {f"{outside}/abs.py": "x = 1", "fx-add/adder.py": REFERENCE})
    _zip(subs / "many.zip", {f"f{i}.txt": "" for i in range(MAX_MEMBERS + 1)})
    with zipfile.ZipFile(subs / "bomb.zip", "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("fx-add/adder.py", REFERENCE)
        archive.writestr("zeros.bin", b"\0" * (70 * 2**20))
    link = zipfile.ZipInfo("fx-add/adder.py")
    link.external_attr = (0o120777 << 16)
    with zipfile.ZipFile(subs / "zip-link.zip", "w") as archive:
        archive.writestr(link, "/etc/passwd")
    _zip(subs / "duplicate.zip", {"fx-add/adder.py": REFERENCE, "practice/fx-add/adder.py": REFERENCE})
    _zip(subs / "latin1.zip", {"fx-add/adder.py": "# caf\xe9\n".encode("latin-1") + REFERENCE.encode()})
    _zip(subs / "unknown.zip", {"other-problem/solution.py": REFERENCE})
    (subs / "notes.txt").write_text("not a submission")
    (_folder(subs / "folder-link")).joinpath("fx-add").symlink_to(outside)
    _damaged_zip(subs / "encrypted.zip", encrypted=True)
    _damaged_zip(subs / "bad-deflate.zip", encrypted=False)
    return {"corrupt": "not a readable zip file", "empty": "empty", "slip": "leaves its folder",
            "absolute": "absolute", "many": "members", "bomb": "zip bomb", "zip-link": "symbolic link",
            "duplicate": "more than one file", "latin1": "not UTF-8", "unknown": "no known problem",
            "notes.txt": "neither a .zip file nor a folder", "folder-link": "symbolic link",
            "encrypted": "encrypted", "bad-deflate": "compressed data is corrupt"}


def _damaged_zip(path: Path, encrypted: bool) -> None:
    """A zip whose entry file is marked encrypted (zipfile raises RuntimeError reading it) or whose deflated
    bytes are scrambled (zlib.error): both stopped the whole class's grading once."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("fx-add/adder.py", REFERENCE * 20)
    data = bytearray(path.read_bytes())
    if encrypted:  # bit 0 of the general-purpose flags, in the local and the central header
        data[6] |= 1
        data[data.rfind(b"PK\x01\x02") + 8] |= 1
    else:
        start = 30 + len("fx-add/adder.py") + 2
        data[start:start + 10] = bytes(b ^ 0xA5 for b in data[start:start + 10])
    path.write_bytes(bytes(data))


class _SlowWhenCrowded:
    """An engine whose jobs time out when judged beside others (a slow machine under -j 2), not alone: working
    (their CPU time at the limit) or, ``waiting``, with no CPU time used (code that waits on a lock)."""

    def __init__(self, waiting: bool = False) -> None:
        from judge.engines import get_engine

        self.native, self.calls, self.waiting = get_engine("native"), [], waiting

    def judge(self, jobs, parallel=1, on_result=None):
        self.calls.append((len(jobs), parallel))
        results = self.native.judge(jobs, parallel, on_result=on_result)
        if parallel > 1 and len(jobs) > 1:
            timeouts = [Result(r.problem, "timeout", message="timed out after 10 s") for r in results]
            for timeout, job in zip(timeouts, jobs):
                timeout.cpu_seconds = 0.1 if self.waiting else job.limit
            return timeouts
        return results


def test_a_time_out_beside_other_jobs_is_judged_again_alone(tmp_path, problems):
    subs = _folder(tmp_path / "subs")
    _zip(subs / "ann.zip", {"fx-add/adder.py": REFERENCE})
    _zip(subs / "bob.zip", {"fx-add/adder.py": (SOLUTIONS / "partly_failing.py").read_text()})
    engine = _SlowWhenCrowded()
    rows = _grade(subs, tmp_path / "out", problems, parallel=2, engine=engine)
    assert (rows["ann"]["total"], rows["bob"]["total"]) == ("10", "7.5")
    assert engine.calls == [(1, 2), (2, 2), (1, 1), (1, 1)]  # the reference; both students; each again alone


def test_a_time_out_of_code_that_waited_is_not_judged_again(tmp_path, problems):
    """Code that waits (a lock taken twice) meets its wall-clock backstop alone as beside others: judged again
    alone, one job after another, it cost a class a second backstop per such student (red team round 9, T2)."""
    subs = _folder(tmp_path / "subs")
    _zip(subs / "ann.zip", {"fx-add/adder.py": REFERENCE})
    _zip(subs / "bob.zip", {"fx-add/adder.py": (SOLUTIONS / "partly_failing.py").read_text()})
    engine = _SlowWhenCrowded(waiting=True)
    rows = _grade(subs, tmp_path / "out", problems, parallel=2, engine=engine)
    assert (rows["ann"]["total"], rows["bob"]["total"]) == ("0", "0")
    assert engine.calls == [(1, 2), (2, 2)]  # the reference; both students, once


def test_a_reference_that_did_not_pass_is_not_kept_for_the_next_run(tmp_path, problems):
    subs = _folder(tmp_path / "subs")
    _zip(subs / "ann.zip", {"fx-add/adder.py": REFERENCE})
    reference = problems / "fx-add" / "reference" / "adder.py"
    reference.write_text((SOLUTIONS / "partly_failing.py").read_text())
    _grade(subs, tmp_path / "out", problems)
    assert not (tmp_path / "out" / ".canonical.json").exists()
    reference.write_text(REFERENCE)
    _grade(subs, tmp_path / "out", problems)
    assert (tmp_path / "out" / ".canonical.json").is_file()


def test_bad_submissions_get_a_row_and_write_nothing_outside(tmp_path, problems):
    outside = _folder(tmp_path / "outside")
    (outside / "adder.py").write_text(REFERENCE)
    expected = _bad_submissions(tmp_path / "subs", outside)
    (_folder(tmp_path / "subs" / "good" / "fx-add") / "adder.py").write_text(REFERENCE)
    before = sorted(p for p in tmp_path.rglob("*") if "out" not in p.relative_to(tmp_path).parts)
    rows = _grade(tmp_path / "subs", tmp_path / "out", problems)
    after = sorted(p for p in tmp_path.rglob("*") if "out" not in p.relative_to(tmp_path).parts)
    assert after == before, "grading wrote outside the output folder"
    assert not Path("/tmp/escaped.py").exists()
    assert rows["good"]["status"] == "ok" and rows["good"]["total"] == "10"
    for student, phrase in expected.items():
        assert rows[student]["status"].startswith("error: "), student
        assert phrase in rows[student]["status"], (student, rows[student]["status"])
        assert rows[student]["total"] == "", student  # no grade: an empty cell, the reason in the status


def test_names_that_are_not_utf8_are_graded_and_shown_escaped(tmp_path, problems):
    """A student folder and a stray file whose names are not UTF-8 (a repository committed on another
    system): every output is written, the names shown with \\x escapes (it stopped the class's outputs)."""
    subs = _folder(tmp_path / "subs")
    (_folder(subs / "alice" / "fx-add") / "adder.py").write_text(REFERENCE)
    (subs / "alice" / os.fsdecode(b"notes-\xff.txt")).write_text("hi")
    odd = subs / os.fsdecode(b"b\xe9a")
    (_folder(odd / "fx-add") / "adder.py").write_text(REFERENCE)
    rows = _grade(subs, tmp_path / "out", problems)
    assert rows["alice"]["total"] == "10" and "notes-\\xff.txt" in rows["alice"]["status"], rows["alice"]
    assert rows["b\\xe9a"]["total"] == "10", rows
    for path in (tmp_path / "out").rglob("*"):
        if path.is_file():
            path.read_text(encoding="utf-8")  # every output is UTF-8 text


@pytest.mark.slow
def test_hostile_submissions_do_not_stop_the_batch(tmp_path, problems):
    _edit_toml(problems / "fx-add", "")
    toml = problems / "fx-add" / "problem.toml"
    toml.write_text(toml.read_text().replace("time_limit = 5", "time_limit = 2"))
    subs = _folder(tmp_path / "subs")
    for case in ("loop_at_import", "os_exit", "write_outside", "output_flood", "spawn_process"):
        shutil.copy(SOLUTIONS / f"{case}.py", _folder(subs / case / "fx-add") / "adder.py")
    (_folder(subs / "honest" / "fx-add") / "adder.py").write_text(REFERENCE)
    rows = _grade(subs, tmp_path / "out", problems, parallel=2)
    assert rows["honest"]["total"] == "10"
    assert rows["loop_at_import"]["total"] == "0"
    assert rows["os_exit"]["total"] == "0"
    assert float(rows["write_outside"]["total"]) < 10
    assert not Path("/tmp/judge-was-here.txt").exists()
    results = json.loads((tmp_path / "out" / "results" / "loop_at_import.json").read_text())["results"]
    assert results[0]["status"] == "timeout"


@pytest.mark.slow
def test_rerun_is_incremental_and_byte_identical(tmp_path, problems):
    subs = _folder(tmp_path / "subs")
    for name in ("a", "b", "c"):
        shutil.copy(SOLUTIONS / "partly_failing.py", _folder(subs / name / "fx-add") / "adder.py")
    found, _ = discover_problems(problems)
    out = tmp_path / "out"
    first = grade_class(subs, out, found, Options())
    csv_bytes, report = (out / "grades.csv").read_bytes(), (out / "report.html").read_bytes()
    second = grade_class(subs, out, found, Options())
    assert (first.judged, second.judged) == (3, 0)
    assert (out / "grades.csv").read_bytes() == csv_bytes
    assert (out / "report.html").read_bytes() == report
    (subs / "b" / "fx-add" / "adder.py").write_text(REFERENCE)
    third = grade_class(subs, out, found, Options())
    assert third.judged == 1 and _rows(out)["b"]["total"] == "10"
    forced = grade_class(subs, out, found, Options(force=True))
    assert forced.judged == 3
    toml = problems / "fx-add" / "problem.toml"
    toml.write_text(toml.read_text().replace("points = 10", "points = 20"))
    found, _ = discover_problems(problems)
    assert grade_class(subs, out, found, Options()).judged == 3, "a changed problem set re-judges everything"
    assert _rows(out)["b"]["total"] == "20"


def test_feedback_levels_and_no_secret_code(tmp_path, problems):
    subs = _folder(tmp_path / "subs")
    shutil.copy(SOLUTIONS / "partly_failing.py", _folder(subs / "ann" / "fx-add") / "adder.py")
    secret_lines = [line.strip() for line in SECRET_TEST.read_text().splitlines() if len(line.strip()) >= 8]
    texts = {}
    for level in ("full", "names", "none"):
        out = tmp_path / f"out-{level}"
        _grade(subs, out, problems, feedback=level)
        texts[level] = (out / "feedback" / "ann.md").read_text()
        for line in secret_lines:
            assert line not in texts[level], (level, line)
    assert "adds large numbers" in texts["names"] and "should be 1000001" not in texts["names"]
    assert "should be 1000001" in texts["full"]
    assert "adds large numbers" not in texts["none"] and "Secret tests" not in texts["none"]
    assert "Public tests: 3 of 3 passed." in texts["none"], "public tests are always counted"
    assert "| fx-add | 7.5 / 10 | 3 of 4 tests passed |" in texts["names"]


def test_old_results_read_as_one_point_per_test():
    data = json.loads((Path(__file__).parent / "golden" / "partly_failing.json").read_text())
    data.pop("points"), data.pop("max_points")
    for test in data["tests"]:
        test.pop("points"), test.pop("max_points")
    result = Result.from_dict(data)
    assert (result.points, result.max_points) == (3.0, 4.0)


@pytest.mark.slow
def test_cli_grade_end_to_end(tmp_path, problems):
    subs = _folder(tmp_path / "subs")
    _zip(subs / "s1.zip", {"fx-add/adder.py": REFERENCE})
    out = tmp_path / "out"
    done = run_cli("grade", str(subs), "-o", str(out), "--problems", str(problems), "-j", "2")
    assert done.returncode == 0, done.stderr
    assert "Graded 1 submission(s) (1 judged, 0 unchanged)" in done.stdout
    assert "graded 1/1" not in done.stderr, "no progress line when stderr is not a terminal"
    assert sorted(p.name for p in out.iterdir()) == [".canonical.json", "canvas.csv", "feedback", "grades.csv",
                                                      "moodle-gradebook.csv", "moodle.csv", "objectives.csv",
                                                      "report.html", "results", "similarity.csv"]
    missing = run_cli("grade", str(tmp_path / "nope"), "-o", str(out), "--problems", str(problems))
    assert missing.returncode == 2 and "no such submissions folder" in missing.stderr
    inside = run_cli("grade", str(subs), "-o", str(subs / "out"), "--problems", str(problems))
    assert inside.returncode == 2 and "inside the submissions folder" in inside.stderr
    assert not (subs / "out").exists()


def test_problem_points_fields_are_validated(tmp_path, problems):
    from judge.core.problem import ProblemError

    for extra, phrase in (('scoring = "best"\n', "scoring"), ("points = -1\n", "points"),
                          ("test_time_limit = 99\n", "test_time_limit")):
        folder = tmp_path / f"p{len(os.listdir(tmp_path))}" / "fx-add"
        shutil.copytree(problems / "fx-add", folder)
        toml = folder / "problem.toml"
        toml.write_text(toml.read_text().replace("points = 10\n", "") + extra)
        with pytest.raises(ProblemError, match=phrase):
            load_problem(folder)


def test_identical_code_is_judged_once(tmp_path, problems):
    subs = _folder(tmp_path / "subs")
    for name in ("a", "b", "c"):
        shutil.copy(SOLUTIONS / "partly_failing.py", _folder(subs / name / "fx-add") / "adder.py")
    (_folder(subs / "d" / "fx-add") / "adder.py").write_text(REFERENCE)
    found, _ = discover_problems(problems)
    grades = grade_class(subs, tmp_path / "out", found, Options())
    assert (grades.judged, grades.runs) == (4, 2)
    rows = _rows(tmp_path / "out")
    assert [rows[n]["fx-add"] for n in "abcd"] == ["7.5", "7.5", "7.5", "10"]
    # judged once, and still each student's own Result: a change to one reaches no other
    a, b, c = (next(g for g in grades.graded if g.student == name).results[0] for name in "abc")
    a.tests[0].points, a.points = 99.0, 99.0
    assert 99.0 not in (b.tests[0].points, c.tests[0].points, b.points, c.points)


# ---------------------------------------------------------------------------------------------
# a gradebook that never drops or mixes work (issue 23: 3), LMS layouts, late policy, regrading one


@pytest.fixture
def two_problems(problems) -> Path:
    """fx-add and fx-add2, two problems whose entry file is the same adder.py."""
    twin = problems / "fx-add2"
    shutil.copytree(problems / "fx-add", twin)
    toml = twin / "problem.toml"
    toml.write_text(toml.read_text().replace('id = "fx-add"', 'id = "fx-add2"'))
    return problems


def test_every_file_is_judged_or_named_in_the_status(tmp_path, two_problems):
    subs = _folder(tmp_path / "subs")
    _zip(subs / "ann.zip", {"adder.py": REFERENCE, "fx-add/adder.py": REFERENCE, "notes.txt": "my notes",
                            "fx-add/README.md": "the statement", "fx-add/README.zh.md": "题面",
                            "__MACOSX/._adder.py": "litter",
                            "README.md": "the GitHub Classroom template's README"})
    rows = _grade(subs, tmp_path / "out", two_problems)
    status = rows["ann"]["status"]
    assert rows["ann"]["fx-add"] == "10" and rows["ann"]["fx-add2"] == "0"
    assert "not judged: adder.py (the entry file of fx-add and fx-add2: put it in its problem's folder" in status
    assert "notes.txt (not a file of any problem)" in status
    assert "README" not in status and "MACOSX" not in status, "the practice folder's copies and litter pass"


def test_a_stray_entry_file_in_a_class_folder_is_a_row_of_its_own(tmp_path, two_problems):
    """A loose adder.py beside the students' folders and zips: the class is still graded, the file named."""
    subs = _folder(tmp_path / "subs")
    (subs / "adder.py").write_text(REFERENCE)
    shutil.copy(SOLUTIONS / "partly_failing.py", _folder(subs / "carl" / "fx-add") / "adder.py")
    _zip(subs / "dana.zip", {"fx-add/adder.py": REFERENCE})
    rows = _grade(subs, tmp_path / "out", two_problems)
    assert sorted(rows) == ["adder.py", "carl", "dana"]
    assert (rows["carl"]["fx-add"], rows["dana"]["fx-add"]) == ("7.5", "10")
    assert rows["adder.py"]["status"] == ("error: adder.py is neither a .zip file nor a folder (a loose file of no "
                                          "student: put it in a student's folder or zip)")
    out = tmp_path / "zeros"  # no student's: never a 0, and in no LMS's gradebook nor any student's view
    rows = _grade(subs, out, two_problems, zero_unreadable=True)
    assert (rows["adder.py"]["total"], rows["carl"]["total"]) == ("", "7.5")
    for gradebook in ("canvas.csv", "moodle-gradebook.csv", "objectives.csv"):
        students = [line.split(",")[0] for line in (out / gradebook).read_text(encoding="utf-8-sig").splitlines()]
        assert "adder.py" not in students and "carl" in students, gradebook
    assert sorted(p.name for p in (out / "feedback").iterdir()) == ["carl.md", "dana.md"]
    report = (out / "report.html").read_text(encoding="utf-8")
    assert "<th>submissions</th><td class=\"num\">2</td>" in report
    assert "<th>loose files of no student (not graded)</th><td class=\"num\">1</td>" in report
    one = _folder(tmp_path / "one")  # a student's own folder with its entry file loose is still one submission
    (one / "adder.py").write_text(REFERENCE)
    (one / "notes.txt").write_text("my notes")
    rows = _grade(one, tmp_path / "out-one", two_problems)
    assert list(rows) == ["one"] and "adder.py (the entry file of fx-add and fx-add2" in rows["one"]["status"]


def test_the_same_student_twice_is_an_error_naming_both(tmp_path, problems):
    subs = _folder(tmp_path / "subs")
    _zip(subs / "alice.zip", {"fx-add/adder.py": REFERENCE})
    shutil.copy(SOLUTIONS / "partly_failing.py", _folder(subs / "alice" / "fx-add") / "adder.py")
    out = tmp_path / "out"
    rows = _grade(subs, out, problems)
    assert list(rows) == ["alice"]
    assert rows["alice"]["status"] == "error: two submissions for alice (alice/, alice.zip); none was judged: keep one"
    assert rows["alice"]["total"] == ""
    assert [p.name for p in (out / "feedback").iterdir()] == ["alice.md"]


def test_a_folder_holding_a_zip_is_read_as_that_zip(tmp_path, problems):
    subs = _folder(tmp_path / "subs")
    _zip(_folder(subs / "bob") / "practice.zip", {"practice/fx-add/adder.py": REFERENCE})
    assert _grade(subs, tmp_path / "out", problems)["bob"]["total"] == "10"


def _lms_download(subs: Path) -> None:
    """Canvas, Moodle (both ways) and Blackboard downloads side by side, as their documented names go."""
    wrong = (SOLUTIONS / "partly_failing.py").read_text()
    _zip(subs / "lovelaceada_LATE_1234_5679_practice.zip", {"fx-add/adder.py": REFERENCE})
    (subs / "lovelaceada_LATE_1234_5680_notes-1.txt").write_text("a note")
    moodle = _folder(subs / "Grace Hopper_7654321_assignsubmission_file")
    _zip(moodle / "practice.zip", {"practice/fx-add/adder.py": REFERENCE})
    (subs / "Alan Turing_1111111_assignsubmission_file_adder.py").write_text(wrong)
    (subs / "HW1_blinus_attempt_2026-12-01-09-00-00_adder.py").write_text(wrong)
    (subs / "HW1_blinus_attempt_2026-12-01-09-00-00.txt").write_text("receipt")
    (subs / "HW1_blinus_attempt_2026-12-02-10-30-00_adder.py").write_text(REFERENCE)
    (subs / "HW1_blinus_attempt_2026-12-02-10-30-00.txt").write_text("receipt")


def test_lms_downloads_map_to_one_student_each_with_a_late_policy(tmp_path, problems):
    from judge.commands.grade.late import LatePolicy, parse_deadline

    subs = _folder(tmp_path / "subs")
    _lms_download(subs)
    out = tmp_path / "out"
    late = LatePolicy(parse_deadline("2026-12-01T23:59"), 10)
    rows = _grade(subs, out, problems, late=late)
    assert sorted(rows) == ["Alan Turing_1111111", "Grace Hopper_7654321", "blinus", "lovelaceada_1234"]
    assert rows["lovelaceada_1234"]["total"] == "10"
    assert "notes.txt (not a file of any problem)" in rows["lovelaceada_1234"]["status"]
    assert "marked late by the LMS, which gives no time" in rows["lovelaceada_1234"]["status"]
    assert rows["Grace Hopper_7654321"]["total"] == "10" and rows["Alan Turing_1111111"]["fx-add"] == "7.5"
    blinus = rows["blinus"]  # the latest attempt, 10 h 31 min late: one started day, 10 % of 10 points
    assert (blinus["fx-add"], blinus["days_late"], blinus["penalty"], blinus["total"]) == ("10", "1", "1", "9")
    assert blinus["submitted_at"] == "2026-12-02T10:30:00"
    assert "1 earlier attempt(s) not graded" in blinus["status"]
    canvas = list(csv.reader(io.StringIO((out / "canvas.csv").read_text())))
    assert canvas[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "judge"]
    assert canvas[1] == ["Points Possible", "", "", "", "", "10"]
    assert ["lovelaceada", "1234", "", "", "", "10"] in canvas and ["blinus", "", "", "blinus", "", "9"] in canvas
    moodle = list(csv.reader(io.StringIO((out / "moodle.csv").read_text())))
    assert moodle[0] == list(MOODLE_WORKSHEET_COLUMNS)
    assert ["Participant 7654321", "Grace Hopper", "", "Submitted for grading", "10", "10", "Yes", "-", "-",
            ""] in moodle
    assert ["Participant 1111111", "Alan Turing", "", "Submitted for grading", "7.5", "10", "Yes", "-", "-",
            ""] in moodle
    assert len(moodle) == 3, "only the students a Moodle download names: the others are not matchable there"
    gradebook = list(csv.reader(io.StringIO((out / "moodle-gradebook.csv").read_text())))
    assert gradebook[0] == ["Username", "Full name", "judge"]
    assert ["blinus", "blinus", "9"] in gradebook and ["lovelaceada_1234", "lovelaceada", "10"] in gradebook


@pytest.mark.slow
def test_regrading_one_submission_updates_its_row_only(tmp_path, problems):
    subs = _folder(tmp_path / "subs")
    _zip(subs / "ann.zip", {"fx-add/adder.py": REFERENCE})
    shutil.copy(SOLUTIONS / "partly_failing.py", _folder(subs / "bob" / "fx-add") / "adder.py")
    out = tmp_path / "out"
    found, _ = discover_problems(problems)
    grade_class(subs, out, found, Options())
    assert _rows(out)["bob"]["total"] == "7.5"
    (subs / "bob" / "fx-add" / "adder.py").write_text(REFERENCE)
    again = grade_class(subs / "bob", out, found, Options())
    assert (again.judged, again.regraded) == (1, "bob")
    assert {s: r["total"] for s, r in _rows(out).items()} == {"ann": "10", "bob": "10"}
    _zip(tmp_path / "ann.zip", {"fx-add/adder.py": (SOLUTIONS / "crash.py").read_text()})
    done = run_cli("grade", str(tmp_path / "ann.zip"), "-o", str(out), "--problems", str(problems))
    assert done.returncode == 0 and "Regraded ann (1 judged); 2 row(s) in the gradebook" in done.stdout, done.stdout
    assert {s: r["total"] for s, r in _rows(out).items()} == {"ann": "0", "bob": "10"}


def test_a_student_named_like_a_classmates_file_gets_a_file_of_their_own(tmp_path, problems):
    """Red team round 8: "Ann Lee"'s files were Ann_Lee-<8 hex of sha256("Ann Lee")>, a name a classmate can
    take: results/ and feedback/ then held one file for both, and regrading one student dropped Ann Lee's row."""
    import hashlib

    digest = hashlib.sha256(b"Ann Lee").hexdigest()
    subs = _folder(tmp_path / "subs")
    _zip(subs / "Ann Lee.zip", {"fx-add/adder.py": REFERENCE})
    impostors = [f"Ann_Lee-{digest[:8]}", f"Ann_Lee-{digest[:16]}"]
    for name in impostors:
        shutil.copy(SOLUTIONS / "partly_failing.py", _folder(subs / name / "fx-add") / "adder.py")
    out = tmp_path / "out"
    found, _ = discover_problems(problems)
    grade_class(subs, out, found, Options())
    names = {"Ann Lee", *impostors}
    assert len({safe_name(n) for n in names}) == 3
    assert len(list((out / "results").iterdir())) == len(list((out / "feedback").iterdir())) == 3
    assert "# Feedback for Ann Lee\n" in (out / "feedback" / f"{safe_name('Ann Lee')}.md").read_text(encoding="utf-8")
    stale = out / "results" / f"Ann_Lee-{digest[:8]}.json"  # Ann Lee's file as an older version named it
    stale.write_bytes((out / "results" / f"{safe_name('Ann Lee')}.json").read_bytes())
    again = grade_class(subs / impostors[0], out, found, Options())
    assert again.regraded == impostors[0]
    assert len((out / "grades.csv").read_text(encoding="utf-8-sig").splitlines()) == 4, "one row a student"
    assert {s: r["total"] for s, r in _rows(out).items()} == {"Ann Lee": "10", **dict.fromkeys(impostors, "7.5")}


def test_regrading_one_lms_submission_updates_that_students_row(tmp_path, problems):
    """A Canvas file, a Moodle folder, a Blackboard attempt's file, given on their own: the student the layout
    names (with their other files: the Canvas note, the Blackboard receipt's attempt), never a new row."""
    subs = _folder(tmp_path / "subs")
    _lms_download(subs)
    out = tmp_path / "out"
    found, _ = discover_problems(problems)
    grade_class(subs, out, found, Options())
    before = _rows(out)
    wrong = (SOLUTIONS / "partly_failing.py").read_text()
    _zip(subs / "lovelaceada_LATE_1234_5679_practice.zip", {"fx-add/adder.py": wrong})
    moodle = subs / "Grace Hopper_7654321_assignsubmission_file"
    _zip(moodle / "practice.zip", {"practice/fx-add/adder.py": wrong})
    for given, student in (("lovelaceada_LATE_1234_5679_practice.zip", "lovelaceada_1234"),
                           (moodle.name, "Grace Hopper_7654321"),
                           ("HW1_blinus_attempt_2026-12-02-10-30-00_adder.py", "blinus")):
        again = grade_class(subs / given, out, found, Options())
        assert again.regraded == student, given
    rows = _rows(out)
    assert sorted(rows) == sorted(before)
    assert rows["lovelaceada_1234"]["total"] == rows["Grace Hopper_7654321"]["total"] == "7.5"
    assert "notes.txt (not a file of any problem)" in rows["lovelaceada_1234"]["status"]
    assert rows["blinus"] == before["blinus"] and rows["Alan Turing_1111111"] == before["Alan Turing_1111111"]


# ---------------------------------------------------------------------------------------------
# feedback a student can read (issue 23: 6) and a report that counts right (5, 9)


def test_feedback_is_short_errors_first_and_says_not_attempted(tmp_path, two_problems):
    starter = (FIXTURE_PROBLEMS / "fx-add" / "starter" / "adder.py").read_text()
    subs = _folder(tmp_path / "subs")
    _zip(subs / "ann.zip", {"fx-add/adder.py": starter})
    _zip(subs / "bob.zip", {"fx-add/adder.py": (SOLUTIONS / "partly_failing.py").read_text(),
                            "fx-add2/adder.py": (SOLUTIONS / "syntax_error.py").read_text()})
    out = tmp_path / "out"
    _grade(subs, out, two_problems)
    ann = (out / "feedback" / "ann.md").read_text()
    assert "| fx-add | 0 / 10 | not attempted (the file is the starter as given) |" in ann
    assert "| fx-add2 | 0 / 10 | not submitted |" in ann and "(error" not in ann
    assert "## " not in ann, "nothing to detail: no section per test of an untouched starter"
    bob = (out / "feedback" / "bob.md").read_text()
    assert bob.index("## fx-add2") < bob.index("## fx-add:"), "the problem that errored comes first"
    assert len(bob.splitlines()) < 60


def test_results_files_stay_small_when_the_code_prints_a_lot(tmp_path, problems):
    subs = _folder(tmp_path / "subs")
    flood = REFERENCE + "\n\nprint('x' * 200_000)\n"
    _zip(subs / "ann.zip", {"fx-add/adder.py": flood})
    out = tmp_path / "out"
    _grade(subs, out, problems)
    size = (out / "results" / "ann.json").stat().st_size
    assert size < 60_000, size
    data = json.loads((out / "results" / "ann.json").read_text())
    assert data["submission"]["sources"]["fx-add"] == flood, "the code is kept, for regrading and the report"


def test_an_untouched_starter_is_stored_briefly_and_reruns_give_the_same_report(tmp_path, problems):
    starter = (FIXTURE_PROBLEMS / "fx-add" / "starter" / "adder.py").read_text()
    subs = _folder(tmp_path / "subs")
    _zip(subs / "ann.zip", {"fx-add/adder.py": starter})
    _zip(subs / "bob.zip", {"fx-add/adder.py": (SOLUTIONS / "partly_failing.py").read_text()})
    out = tmp_path / "out"
    _grade(subs, out, problems)
    first = (out / "report.html").read_bytes(), (out / "feedback" / "ann.md").read_bytes()
    ann = json.loads((out / "results" / "ann.json").read_text())["results"][0]["tests"]
    assert ann and all(not t["traceback"] and "\n" not in t["message"] for t in ann)
    assert any(t["traceback"] for t in json.loads((out / "results" / "bob.json").read_text())["results"][0]["tests"])
    _grade(subs, out, problems)  # both read back from results/
    assert ((out / "report.html").read_bytes(), (out / "feedback" / "ann.md").read_bytes()) == first


def test_report_counts_submissions_and_puts_full_marks_in_their_own_bin(tmp_path, problems):
    from judge.commands.grade.html_report import bin_of, failure_keys
    from judge.core.result import TestResult

    assert [bin_of(s) for s in (0, 0.05, 0.9, 0.99, 1.0)] == [0, 0, 9, 9, 10]
    tests = [TestResult(id=f"t{i}", name=f"t{i}", file="tests/public/test_x.py", visibility="public",
                        outcome="failed", message=f"expected {i}, got {i + 1}") for i in range(9)]
    assert len(failure_keys(Result("fx-add", "failed", tests=tests))) == 1, "one student, one message, counted once"
    subs = _folder(tmp_path / "subs")
    _zip(subs / "ann.zip", {"fx-add/adder.py": REFERENCE})
    _zip(subs / "bob.zip", {"fx-add/adder.py": "# </pre><script>alert(1)</script>\n" + REFERENCE})
    out = tmp_path / "out"
    _grade(subs, out, problems)
    report = (out / "report.html").read_text()
    assert "<title>100%: 2 submissions</title>" in report
    assert "&lt;/pre&gt;&lt;script&gt;alert(1)&lt;/script&gt;" in report and "<script>" not in report
    assert report.count('<div class="side">') == 2, "each student's code beside their Result"


SIMILAR = '''def add(a, b):
    """Add two numbers, the long way round."""
    total = a
    for _ in range(1):
        total = total + b
    return total
'''


def test_similar_code_is_reported_in_the_report_and_a_csv(tmp_path, problems):
    subs = _folder(tmp_path / "subs")
    _zip(subs / "ann.zip", {"fx-add/adder.py": SIMILAR})
    _zip(subs / "bob.zip", {"fx-add/adder.py": SIMILAR.replace("total", "result").replace("long way", "slow way")})
    _zip(subs / "cid.zip", {"fx-add/adder.py": REFERENCE})
    out = tmp_path / "out"
    _grade(subs, out, problems)
    pairs = list(csv.DictReader(io.StringIO((out / "similarity.csv").read_text())))
    assert [(p["student_a"], p["student_b"]) for p in pairs] == [("ann", "bob")]
    assert float(pairs[0]["share_a"]) >= 0.8
    assert 'href="#student-ann">ann</a>' in (out / "report.html").read_text()


def test_identical_code_is_one_group_in_the_report():
    from judge.commands.grade.similarity import Pair, identical_groups

    pairs = [Pair("p", "ada", "bob", 1, 1, True), Pair("p", "ada", "cid", 1, 1, True),
             Pair("p", "bob", "cid", 1, 1, True), Pair("p", "dan", "eve", 0.9, 0.95), Pair("q", "bob", "cid", 1, 1, True)]
    assert identical_groups(pairs) == [("p", ["ada", "bob", "cid"]), ("q", ["bob", "cid"])]


def _moodle_importer(text: str) -> dict[str, str]:
    """What Moodle's worksheet importer (mod/assign/feedback/offline/importgradeslib.php) reads: the columns it
    finds by heading (Identifier, Grade and Last modified (grade) are required), each row's participant id
    (``Participant N``) and grade (a number, or empty: no grade). Raises where it refuses the file."""
    rows = list(csv.reader(io.StringIO(text.removeprefix("\ufeff"))))
    header = rows[0]
    for required in ("Identifier", "Grade", "Last modified (grade)"):
        assert required in header, f"Moodle refuses a worksheet without {required!r}"
    grades = {}
    for row in rows[1:]:
        ident, grade = row[header.index("Identifier")], row[header.index("Grade")]
        assert ident.startswith("Participant ") and ident.split(" ", 1)[1].isdigit(), ident
        assert grade == "" or float(grade) >= 0, grade
        grades[ident.split(" ", 1)[1]] = grade
    return grades


def _canvas_importer(text: str, column: str) -> dict[str, str]:
    """What Canvas's gradebook import reads: Student, ID, SIS User ID, SIS Login ID, Section, then the
    assignments; an optional Points Possible row; a row matched by ID or SIS Login ID; an empty cell is no grade."""
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0][:5] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"] and column in rows[0]
    index = rows[0].index(column)
    grades = {}
    for row in rows[1:]:
        if row[0] == "Points Possible":
            continue
        key = row[1] or row[3]
        assert key, f"Canvas cannot match the row {row}"
        assert row[index] == "" or float(row[index]) >= 0
        grades[key] = row[index]
    return grades


def _unreadable_class(subs: Path) -> None:
    _zip(subs / "Ada Lovelace_1001_assignsubmission_file_practice.zip", {"fx-add/adder.py": REFERENCE})
    (subs / "Bad Zip_1002_assignsubmission_file_practice.zip").write_bytes(b"not a zip")
    _zip(subs / "Empty Zip_1003_assignsubmission_file_practice.zip", {})
    _zip(subs / "Two Files_1004_assignsubmission_file_practice.zip",
         {"fx-add/adder.py": REFERENCE, "practice/fx-add/adder.py": REFERENCE})
    _zip(subs / "carol.zip", {"fx-add/adder.py": "def add(a, b):\n    return 0\n"})
    (subs / "dave.zip").write_bytes(b"")


def test_an_unreadable_submission_has_no_grade_in_every_gradebook(tmp_path, problems):
    subs = _folder(tmp_path / "subs")
    _unreadable_class(subs)
    out = tmp_path / "out"
    done = run_cli("grade", str(subs), "-o", str(out), "--problems", str(problems), "--similarity", "0",
                   "--assignment", "Week 3 (4242)")
    assert done.returncode == 0, done.stderr
    assert "No grade for 4 submission(s) that could not be read" in done.stdout
    assert "Bad Zip_1002: not a readable zip file" in done.stdout
    rows = _rows(out)
    for student in ("Bad Zip_1002", "Empty Zip_1003", "Two Files_1004", "dave"):
        assert (rows[student]["fx-add"], rows[student]["total"]) == ("", ""), student
        assert rows[student]["status"].startswith("error: "), student
    assert "more than one file for this problem" in rows["Two Files_1004"]["status"]
    assert (rows["carol"]["total"], rows["Ada Lovelace_1001"]["total"]) == ("0", "10")  # judged: a real 0
    moodle = _moodle_importer((out / "moodle.csv").read_text())
    assert moodle == {"1001": "10", "1002": "", "1003": "", "1004": ""}
    canvas = _canvas_importer((out / "canvas.csv").read_text(), "Week 3 (4242)")
    assert canvas["carol"] == "0" and canvas["dave"] == "" and canvas["Bad Zip_1002"] == ""
    worksheet = list(csv.DictReader(io.StringIO((out / "moodle.csv").read_text())))
    [bad] = [r for r in worksheet if r["Identifier"] == "Participant 1002"]
    assert bad["Feedback comments"].startswith("No grade: your submission could not be read (not a readable zip")
    for student in ("Bad Zip_1002", "dave"):  # the feedback file and the report say no grade too
        feedback = (out / "feedback" / f"{safe_name(student)}.md").read_text(encoding="utf-8")
        assert "Total: no grade" in feedback and "Total: **0" not in feedback, feedback
    report = (out / "report.html").read_text(encoding="utf-8")
    assert "<th>no grade (could not be read)</th><td class=\"num\">4</td>" in report
    assert "<th>mean total</th><td class=\"num\">5</td>" in report  # carol's 0 and Ada's 10, not the ungraded
    zeros = tmp_path / "zeros"
    run_cli("grade", str(subs), "-o", str(zeros), "--problems", str(problems), "--similarity", "0",
            "--zero-unreadable")
    assert _rows(zeros)["dave"]["total"] == "0" and _moodle_importer((zeros / "moodle.csv").read_text())["1002"] == "0"
    assert "Total: **0 / 10** points." in (zeros / "feedback" / "dave.md").read_text(encoding="utf-8")


def test_the_moodle_worksheet_downloaded_is_filled_in_keeping_its_rows(tmp_path, problems):
    subs = _folder(tmp_path / "subs")
    _unreadable_class(subs)
    worksheet = tmp_path / "grades-worksheet.csv"
    lines = [",".join(MOODLE_WORKSHEET_COLUMNS),
             'Participant 1001,Ada Lovelace,ada@uni.example,Submitted for grading,,10.00,Yes,'
             '"Monday, 30 November 2026, 9:00 AM",-,',
             'Participant 1002,Bad Zip,bad@uni.example,Submitted for grading,,10.00,Yes,-,-,',
             'Participant 1005,No Show,noshow@uni.example,No submission,,10.00,Yes,-,-,Kept comment',
             'Participant 1006,Carol Smith,carol@uni.example,Submitted for grading,,10.00,Yes,-,-,']
    worksheet.write_bytes(b"\xef\xbb\xbf" + "\r\n".join(lines).encode() + b"\r\n")
    out = tmp_path / "out"
    done = run_cli("grade", str(subs), "-o", str(out), "--problems", str(problems), "--similarity", "0",
                   "--moodle-worksheet", str(worksheet))
    assert done.returncode == 0, done.stderr
    text = (out / "moodle.csv").read_bytes().decode("utf-8")
    assert text.startswith("\ufeff"), "the worksheet's byte order mark is kept"
    rows = list(csv.reader(io.StringIO(text.removeprefix("\ufeff"))))
    assert rows[0] == list(MOODLE_WORKSHEET_COLUMNS) and len(rows) == 5
    assert rows[1][4] == "10" and rows[1][7] == "Monday, 30 November 2026, 9:00 AM"  # the rest as downloaded
    assert rows[2][4] == "" and rows[2][9].startswith("No grade:")
    assert rows[3] == ["Participant 1005", "No Show", "noshow@uni.example", "No submission", "", "10.00", "Yes",
                       "-", "-", "Kept comment"]
    assert rows[4][4] == "0", "carol.zip matched by the local part of the e-mail address"
    assert _moodle_importer(text) == {"1001": "10", "1002": "", "1005": "", "1006": "0"}
    assert "Empty Zip_1003, Two Files_1004" in done.stdout  # graded from the download but not in the worksheet
    assert sorted(csv.reader(io.StringIO((out / "moodle-gradebook.csv").read_text()))) == sorted(
        [["Username", "Full name", "judge"], ["dave", "dave", ""]])
    (tmp_path / "gradebook.csv").write_text("First name,Last name,Grade\nAda,Lovelace,10\n")
    refused = run_cli("grade", str(subs), "-o", str(tmp_path / "refused"), "--problems", str(problems),
                      "--moodle-worksheet", str(tmp_path / "gradebook.csv"))
    assert refused.returncode == 2 and "not Moodle's grading worksheet (no Identifier, Last modified (grade) " \
        "column)" in refused.stderr
    assert not (tmp_path / "refused").exists(), "refused before anything is judged or written"


def test_the_moodle_worksheets_submission_times_are_the_hand_in_times(tmp_path, problems):
    """Moodle's download has no times, its grading worksheet has each one ("Last modified (submission)"): with
    --moodle-worksheet they count for the late policy (they did not: a late student kept every point), --times
    still wins, and a time that is not in Moodle's English form is named with the fix."""
    subs = _folder(tmp_path / "subs")
    for name, number in (("Ada Lovelace", 1001), ("Alan Turing", 1002), ("Grace Hopper", 1003), ("Kurt Godel", 1004)):
        _zip(subs / f"{name}_{number}_assignsubmission_file_practice.zip", {"fx-add/adder.py": REFERENCE})
    worksheet = tmp_path / "grades-worksheet.csv"
    lines = [",".join(MOODLE_WORKSHEET_COLUMNS),
             'Participant 1001,Ada Lovelace,ada@uni.example,Submitted for grading,,10.00,Yes,'
             '"Wednesday, 2 December 2026, 9:00 AM",-,',
             'Participant 1002,Alan Turing,alan@uni.example,Submitted for grading,,10.00,Yes,'
             '"Monday, 30 November 2026, 11:30 PM",-,',
             'Participant 1003,Grace Hopper,grace@uni.example,Submitted for grading,,10.00,Yes,'
             '"Friday, 4 December 2026, 9:00 AM",-,',
             'Participant 1004,Kurt Godel,kurt@uni.example,Submitted for grading,,10.00,Yes,"2 déc. 2026, 09:00",-,']
    worksheet.write_bytes("\r\n".join(lines).encode() + b"\r\n")
    times = tmp_path / "times.csv"
    times.write_text("student,submitted_at\nGrace Hopper_1003,2026-12-01T10:00\n")
    done = run_cli("grade", str(subs), "-o", str(tmp_path / "out"), "--problems", str(problems), "--similarity", "0",
                   "--deadline", "2026-12-01T00:00", "--late-penalty", "10", "--moodle-worksheet", str(worksheet),
                   "--times", str(times))
    assert done.returncode == 0, done.stderr
    rows = _rows(tmp_path / "out")
    late = {student: (row["submitted_at"], row["days_late"]) for student, row in rows.items()}
    assert late == {"Ada Lovelace_1001": ("2026-12-02T09:00:00", "2"), "Alan Turing_1002": ("2026-11-30T23:30:00", "0"),
                    "Grace Hopper_1003": ("2026-12-01T10:00:00", "1"), "Kurt Godel_1004": ("", "0")}
    assert ("Kurt Godel_1004: the worksheet's Last modified (submission) '2 déc. 2026, 09:00' is not in Moodle's "
            "English form ('Wednesday, 2 December 2026, 9:00 AM'): give the time with --times") in done.stdout


def test_objectives_csv_adds_up_to_the_totals_and_the_report_names_who_struggles(tmp_path, problems):
    _edit_toml(problems / "fx-add", '\n[[objectives]]\nid = "sum"\ntitle = "Adding"\npoints = 7\n'
                                    'tests = ["test_small", "test_big"]\n\n[[objectives]]\nid = "zero"\n'
                                    'title = "Adding zero"\npoints = 3\ntests = ["test_zero*"]\n')
    subs = _folder(tmp_path / "subs")
    _zip(subs / "ann.zip", {"fx-add/adder.py": REFERENCE})
    _zip(subs / "bob.zip", {"fx-add/adder.py": (SOLUTIONS / "partly_failing.py").read_text()})  # big sums fail
    _zip(subs / "cy.zip", {"fx-add/adder.py": "def add(a, b):\n    return a - b\n"})  # add(7, 0) only
    _zip(subs / "dee.zip", {"fx-add/adder.py": "def add(a, b):\n    return 0\n"})
    _zip(subs / "starter.zip", {"fx-add/adder.py": (problems / "fx-add" / "starter" / "adder.py").read_text()})
    (subs / "broken.zip").write_bytes(b"PK broken")
    out = tmp_path / "out"
    from judge.commands.grade.late import LatePolicy, parse_deadline

    _grade(subs, out, problems, late=LatePolicy(parse_deadline("2026-12-01T23:59"), 10))
    grades = _rows(out)
    table = list(csv.DictReader(io.StringIO((out / "objectives.csv").read_text())))
    assert list(table[0]) == ["student", "fx-add/sum", "fx-add/zero", "penalty", "total"]
    assert table[0]["student"] == "max_points" and (table[0]["fx-add/sum"], table[0]["fx-add/zero"]) == ("7", "3")
    rows = {r["student"]: r for r in table[1:]}
    assert (rows["ann"]["fx-add/sum"], rows["ann"]["fx-add/zero"]) == ("7", "3")
    assert (rows["bob"]["fx-add/sum"], rows["bob"]["fx-add/zero"]) == ("3.5", "3")
    assert (rows["cy"]["fx-add/sum"], rows["cy"]["fx-add/zero"]) == ("0", "1.5")
    assert (rows["broken"]["fx-add/sum"], rows["broken"]["total"]) == ("", "")
    for student, row in rows.items():  # the objectives add up to the problem's points and, less the penalty, the total
        assert row["total"] == grades[student]["total"], student
        if row["total"]:
            parts = Decimal(row["fx-add/sum"]) + Decimal(row["fx-add/zero"])
            assert parts == Decimal(grades[student]["fx-add"]), student
            assert parts - Decimal(row["penalty"]) == Decimal(row["total"]), student
    report = (out / "report.html").read_text()
    section = report[report.index("Below 50% of an objective"):]
    section = section[:section.index("</table>")]
    adding, zero = section.split("<tr><td>Adding zero</td>")
    assert ">bob<" not in adding and ">cy<" in adding and ">dee<" in adding and ">ann<" not in adding
    assert ">dee<" in zero and ">cy<" not in zero and ">bob<" not in zero
    assert "starter" not in section and "broken" not in section, "not attempted or unreadable: not listed"


def test_a_canvas_resubmission_and_a_browser_renamed_moodle_file_are_graded(tmp_path, problems):
    """Canvas's adder-1.py beside adder.py is the later file (it was "two files for one problem", 0); a file the
    browser renamed on a second download (adder (1).py) is still the entry file."""
    subs = _folder(tmp_path / "subs")
    (subs / "lovelaceada_1234_5679_adder.py").write_text("def add(a, b):\n    return 0\n")
    (subs / "lovelaceada_1234_5690_adder-1.py").write_text(REFERENCE)
    (subs / "Grace Hopper_7654321_assignsubmission_file_adder (1).py").write_text(REFERENCE)
    rows = _grade(subs, tmp_path / "out", problems)
    assert rows["lovelaceada_1234"]["total"] == "10"
    assert rows["lovelaceada_1234"]["status"] == ("not judged: lovelaceada_1234_5679_adder.py (an earlier copy of "
                                                  "adder.py: Canvas's lovelaceada_1234_5690_adder-1.py is later)")
    assert (rows["Grace Hopper_7654321"]["total"], rows["Grace Hopper_7654321"]["status"]) == ("10", "ok")


def test_a_regrade_keeps_the_previous_values_and_the_reason_in_history_csv(tmp_path, problems):
    subs = _folder(tmp_path / "subs")
    _zip(subs / "ann.zip", {"fx-add/adder.py": REFERENCE})
    shutil.copy(SOLUTIONS / "partly_failing.py", _folder(subs / "bob" / "fx-add") / "adder.py")
    out = tmp_path / "out"
    _grade(subs, out, problems)
    _grade(subs, out, problems)
    assert not (out / "history.csv").exists(), "nothing changed: nothing recorded"
    (subs / "bob" / "fx-add" / "adder.py").write_text(REFERENCE)
    done = run_cli("grade", str(subs / "bob"), "-o", str(out), "--problems", str(problems), "--note", "bob's resubmission")
    assert done.returncode == 0, done.stderr
    assert "2 change(s) to grades.csv recorded in" in done.stdout
    history = list(csv.DictReader(io.StringIO((out / "history.csv").read_text())))
    assert [(h["note"], h["student"], h["column"], h["before"], h["after"]) for h in history] == [
        ("bob's resubmission", "bob", "fx-add", "7.5", "10"), ("bob's resubmission", "bob", "total", "7.5", "10")]
    assert history[0]["changed_at"].endswith("Z")


def test_a_regrade_on_another_problem_set_is_refused_and_changes_nothing(tmp_path, problems):
    """The class graded for one assignment (here --problem fx-add), one student regraded without it: the other
    rows, graded on another problem set, would have left the gradebook (it kept one row of nine problems)."""
    second = problems / "fx-two"
    shutil.copytree(problems / "fx-add", second)
    toml = second / "problem.toml"
    toml.write_text(toml.read_text().replace('id = "fx-add"', 'id = "fx-two"'))
    subs = _folder(tmp_path / "subs")
    for student in ("ann", "bob", "cy"):
        (_folder(subs / student / "fx-add") / "adder.py").write_text(REFERENCE)
    out = tmp_path / "out"
    first = run_cli("grade", str(subs), "-o", str(out), "--problems", str(problems), "--problem", "fx-add")
    assert first.returncode == 0, first.stderr
    before = {path.name: path.read_bytes() for path in out.rglob("*") if path.is_file()}
    again = run_cli("grade", str(subs / "bob"), "-o", str(out), "--problems", str(problems))
    assert again.returncode == 2, again.stdout + again.stderr
    assert "graded on another set of problems (fx-add)" in again.stderr and "fx-two" in again.stderr, again.stderr
    assert {path.name: path.read_bytes() for path in out.rglob("*") if path.is_file()} == before
    same = run_cli("grade", str(subs / "bob"), "-o", str(out), "--problems", str(problems), "--problem", "fx-add")
    assert same.returncode == 0 and "3 row(s) in the gradebook" in same.stdout, same.stdout + same.stderr


def test_a_regrade_without_times_keeps_the_time_the_class_was_graded_with(tmp_path, problems):
    """--times gave ann's hand-in time; regrading her alone without it kept her work but dropped her late
    penalty (the download gives no time). The time is kept, and the run says so."""
    subs = _folder(tmp_path / "subs")
    for student in ("ann", "bob"):
        (_folder(subs / student / "fx-add") / "adder.py").write_text(REFERENCE)
    before, again, after = _late_class_then_one(
        tmp_path, problems, "student,submitted_at,deadline\nann,2026-12-03T08:00,\nbob,2026-12-01T08:00,\n",
        subs / "ann")
    assert (before["ann"]["days_late"], before["ann"]["total"]) == ("2", "5")
    assert (after["ann"]["days_late"], after["ann"]["total"]) == ("2", "5")
    assert "ann: handed in at 2026-12-03 08:00, as when last graded (--times changes it)" in again.stdout, again.stdout


def _late_class_then_one(tmp_path: Path, problems: Path, times: str, one: Path):
    """The class in tmp_path/subs graded with a deadline (2026-12-01 23:59, 25 % a day) and ``times`` as
    --times, then ``one`` regraded without --times: (rows before, the regrade's run, rows after)."""
    (tmp_path / "times.csv").write_text(times)
    out = tmp_path / "out"
    late = ["--deadline", "2026-12-01T23:59", "--late-penalty", "25", "--problems", str(problems)]
    done = run_cli("grade", str(tmp_path / "subs"), "-o", str(out), *late, "--times", str(tmp_path / "times.csv"))
    assert done.returncode == 0, done.stderr
    before = _rows(out)
    again = run_cli("grade", str(one), "-o", str(out), *late)
    assert again.returncode == 0, again.stderr
    return before, again, _rows(out)


def test_a_regrade_without_times_keeps_an_extension_where_the_download_gives_the_time(tmp_path, problems):
    """Blackboard's download gives bob's hand-in time; --times gave him an extension. Regraded alone without
    --times, he was a day late (the extension was dropped with the time the download replaced)."""
    subs = _folder(tmp_path / "subs")
    (subs / "HW_bob_attempt_2026-12-03-08-00-00_adder.py").write_text(REFERENCE)
    (subs / "HW_bob_attempt_2026-12-03-08-00-00.txt").write_text("receipt")
    (subs / "HW_cy_attempt_2026-12-01-08-00-00_adder.py").write_text(REFERENCE)
    (subs / "HW_cy_attempt_2026-12-01-08-00-00.txt").write_text("receipt")
    before, again, after = _late_class_then_one(tmp_path, problems, "student,deadline\nbob,2026-12-05T23:59\n",
                                                subs / "HW_bob_attempt_2026-12-03-08-00-00_adder.py")
    assert (before["bob"]["days_late"], before["bob"]["total"]) == ("0", "10")
    assert (after["bob"]["days_late"], after["bob"]["total"]) == ("0", "10")
    assert "bob: extended deadline 2026-12-05 23:59, as when last graded (--times changes it)" in again.stdout


def test_times_file_gives_submission_times_and_extensions(tmp_path, problems):
    """--times: when each student handed in where the download gives no time (Canvas, Moodle, plain), and one
    student's extension (their own deadline)."""
    subs = _folder(tmp_path / "subs")
    _zip(subs / "lovelaceada_1234_5679_practice.zip", {"fx-add/adder.py": REFERENCE})  # Canvas
    _zip(_folder(subs / "Grace Hopper_7654321_assignsubmission_file") / "p.zip", {"fx-add/adder.py": REFERENCE})
    _zip(subs / "ann.zip", {"fx-add/adder.py": REFERENCE})
    times = tmp_path / "times.csv"
    times.write_text("student,submitted_at,deadline\nlovelaceada_1234,2026-12-03T08:00,\n"
                     "Grace Hopper_7654321,2026-12-03T08:00,2026-12-04T00:00\nann,2026-12-01T12:00,\nzed,,\n")
    done = run_cli("grade", str(subs), "-o", str(tmp_path / "out"), "--problems", str(problems), "--similarity", "0",
                   "--deadline", "2026-12-01T23:59", "--late-penalty", "25", "--times", str(times))
    assert done.returncode == 0, done.stderr
    rows = _rows(tmp_path / "out")
    assert (rows["lovelaceada_1234"]["days_late"], rows["lovelaceada_1234"]["total"]) == ("2", "5")
    assert (rows["Grace Hopper_7654321"]["days_late"], rows["Grace Hopper_7654321"]["total"]) == ("0", "10")
    assert (rows["ann"]["days_late"], rows["ann"]["total"]) == ("0", "10")
    assert "--times names 1 student(s) with no submission: zed" in done.stdout


def test_a_time_with_a_utc_offset_is_refused_before_anything_is_judged(tmp_path, problems):
    """The downloads' times carry no offset: --deadline or --times with one could not be compared with them,
    which once stopped the run after the whole class was judged, with nothing written."""
    subs = _folder(tmp_path / "subs")
    _zip(subs / "ann.zip", {"fx-add/adder.py": REFERENCE})
    times = tmp_path / "times.csv"
    times.write_text("student,submitted_at\nann,2026-12-03T08:00Z\n")
    for extra in (["--deadline", "2026-12-01T23:59+01:00"], ["--deadline", "2026-12-01T23:59", "--times", str(times)]):
        done = run_cli("grade", str(subs), "-o", str(tmp_path / "out"), "--problems", str(problems), *extra)
        assert done.returncode == 2, done.stdout + done.stderr
        assert "without a UTC offset" in done.stderr, done.stderr
        assert not (tmp_path / "out").exists()


def test_a_file_name_a_student_chose_never_makes_them_graded_as_a_classmate(tmp_path, problems):
    """An LMS appends the name the student gave their file to its own prefix, which alone names the student:
    a Blackboard attachment named like a classmate's later attempt (or receipt), and a Canvas attachment
    named like a Blackboard file of a classmate, stay their sender's (the first became the classmate's
    latest attempt: 10 points down to 0)."""
    subs = _folder(tmp_path / "subs")
    starter = (FIXTURE_PROBLEMS / "fx-add" / "starter" / "adder.py").read_text()
    (subs / "HW1_victim_attempt_2026-12-01-09-00-00.txt").write_text("receipt")
    (subs / "HW1_victim_attempt_2026-12-01-09-00-00_adder.py").write_text(REFERENCE)
    (subs / "HW1_mallory_attempt_2026-12-01-10-00-00.txt").write_text("receipt")
    (subs / "HW1_mallory_attempt_2026-12-01-10-00-00_adder.py").write_text(REFERENCE)
    (subs / "HW1_mallory_attempt_2026-12-01-10-00-00_x_victim_attempt_2026-12-01-09-30-00_adder.py").write_text(starter)
    (subs / "HW1_mallory_attempt_2026-12-01-10-00-00_x_victim_attempt_2027-01-01-00-00-00.txt").write_text("fake")
    rows = _grade(subs, tmp_path / "out", problems, similarity=None)
    assert set(rows) == {"victim", "mallory"}, rows
    assert rows["victim"]["total"] == "10", rows["victim"]
    assert rows["mallory"]["total"] == "10", rows["mallory"]  # her own attempt; her other files are not judged
    assert "not judged: x_victim_attempt_2026-12-01-09-30-00_adder.py" in rows["mallory"]["status"], rows["mallory"]

    canvas = _folder(tmp_path / "canvas")
    _zip(canvas / "victim_1234_5678_practice.zip", {"fx-add/adder.py": REFERENCE})
    (canvas / "mallory_4321_8765_x_victim_attempt_2026-12-01-09-30-00_adder.py").write_text(starter)
    rows = _grade(canvas, tmp_path / "out-canvas", problems, similarity=None)
    assert set(rows) == {"victim_1234", "mallory_4321"}, rows
    assert rows["victim_1234"]["total"] == "10"


def test_a_file_swapped_for_a_link_after_the_listing_is_not_read(tmp_path):
    """Where students can write to the submissions folder while it is graded, a student may swap a file (or a
    folder above it) for a link to a file only the grader may read, between the listing and the read: the
    read must find the very file the listing saw, or read nothing."""
    from judge.commands.grade.submissions import _folder_files

    secret = tmp_path / "reference.py"
    secret.write_text("THE REFERENCE\n")
    (tmp_path / "elsewhere" / "fx-add").mkdir(parents=True)
    (tmp_path / "elsewhere" / "fx-add" / "adder.py").write_text("THE REFERENCE\n")
    root = tmp_path / "alice"
    (_folder(root / "fx-add") / "adder.py").write_text("def add(a, b):\n    raise NotImplementedError\n")
    (root / "other.py").write_text("x = 1\n")
    files = {str(f.path): f for f in _folder_files(root)}
    (root / "other.py").unlink()
    (root / "other.py").symlink_to(secret)  # the file itself
    shutil.rmtree(root / "fx-add")
    (root / "fx-add").symlink_to(tmp_path / "elsewhere" / "fx-add")  # a folder above it
    for name in ("other.py", "fx-add/adder.py"):
        with pytest.raises(OSError):
            files[name].read()


def test_a_student_name_near_the_file_name_limit_is_graded(tmp_path, problems):
    """A plain entry of 250 characters: its results file is named by a hash (its temporary file would pass
    the 255 bytes a file name may have, which stopped every output once)."""
    subs = _folder(tmp_path / "subs")
    long = "s" * 250
    (_folder(subs / long / "fx-add") / "adder.py").write_text(REFERENCE)
    rows = _grade(subs, tmp_path / "out", problems, similarity=None)
    assert rows[long]["total"] == "10"
    assert len(list((tmp_path / "out" / "results").iterdir())) == 1


def test_control_characters_in_a_zip_members_name_are_shown_escaped(tmp_path, problems):
    """A member name that clears the terminal and prints a line of its own reaches no output raw."""
    subs = _folder(tmp_path / "subs")
    _zip(subs / "mallory.zip", {"fx-add/adder.py": REFERENCE,
                                "\x1b[2J\x1b[HAll graded, nothing to review.\x1b[8m/fx-add/adder.py": REFERENCE})
    done = run_cli("grade", str(subs), "-o", str(tmp_path / "out"), "--problems", str(problems), "--similarity", "0")
    assert done.returncode == 0, done.stderr
    assert "\x1b" not in done.stdout + done.stderr and "\\x1b[2J" in done.stdout, done.stdout
    for path in (tmp_path / "out").rglob("*"):
        assert not path.is_file() or "\x1b" not in path.read_text(encoding="utf-8"), path


def test_bidirectional_overrides_in_a_zip_members_name_are_shown_escaped(tmp_path, problems):
    """A member name with U+202E would reverse the rest of its line in the terminal and in the files that name it."""
    subs = _folder(tmp_path / "subs")
    _zip(subs / "mallory.zip", {"fx-add/adder.py": REFERENCE, "\u202e/fx-add/adder.py": REFERENCE})
    done = run_cli("grade", str(subs), "-o", str(tmp_path / "out"), "--problems", str(problems), "--similarity", "0")
    assert done.returncode == 0, done.stderr
    assert "\u202e" not in done.stdout + done.stderr and "\\u202e" in done.stdout, done.stdout
    for path in (tmp_path / "out").rglob("*"):
        assert not path.is_file() or "\u202e" not in path.read_text(encoding="utf-8"), path


def test_a_zip_holding_only_a_zip_says_why_nothing_was_judged(tmp_path, problems):
    subs = _folder(tmp_path / "subs")
    inner = io.BytesIO()
    with zipfile.ZipFile(inner, "w") as archive:
        archive.writestr("fx-add/adder.py", REFERENCE)
    _zip(subs / "bob.zip", {"answer.zip": inner.getvalue()})
    rows = _grade(subs, tmp_path / "out", problems, similarity=None)
    assert rows["bob"]["status"].startswith("error: the submission is empty"), rows["bob"]
    assert "not judged: answer.zip (a zip inside a zip" in rows["bob"]["status"], rows["bob"]


def test_a_zip_counting_too_many_members_is_refused_before_its_directory_is_read(tmp_path, problems):
    """The end record's count decides, before zipfile reads a directory of (here) 50,000 members, which took
    seconds and half a GiB at a million: this zip's end record lies about its count, and zipfile alone would
    call it unreadable."""
    subs = _folder(tmp_path / "subs")
    path = _zip(subs / "mallory.zip", {"fx-add/adder.py": REFERENCE})
    data = bytearray(path.read_bytes())
    end = data.rfind(b"PK\x05\x06")
    data[end + 8:end + 12] = (50_000).to_bytes(2, "little") * 2
    path.write_bytes(bytes(data))
    rows = _grade(subs, tmp_path / "out", problems, similarity=None)
    assert "the zip has 50000 members, more than the 2000 allowed" in rows["mallory"]["status"], rows["mallory"]


def _many_member_zip(path: Path, members: int, count: int | None = None, size: int | None = None,
                     zip64: bool = False, offset: bytes | None = None) -> Path:
    """A zip of ``members`` empty files whose end record says ``count`` members and a directory of ``size``
    bytes (None: the truth), and its directory's offset as the bytes ``offset`` (zipfile does not use it);
    ``zip64`` puts the ZIP64 end records, which say the truth, before it."""
    local, central = bytearray(), bytearray()
    for index in range(members):
        name = f"n/{index:x}".encode()
        central += struct.pack("<4s6H3L5H2L", b"PK\x01\x02", 20, 20, 0, 0, 0, 0, 0, 0, 0, len(name), 0, 0, 0, 0, 0,
                               len(local)) + name
        local += struct.pack("<4s5H3L2H", b"PK\x03\x04", 20, 0, 0, 0, 0, 0, 0, 0, len(name), 0) + name
    tail = b""
    if zip64:
        tail += struct.pack("<4sQ2H2L4Q", b"PK\x06\x06", 44, 45, 45, 0, 0, members, members, len(central),
                            len(local))
        tail += struct.pack("<4sLQL", b"PK\x06\x07", 0, len(local) + len(central), 1)
    said = members if count is None else count
    end = struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, said, said, len(central) if size is None else size,
                      len(local), 0)
    if offset is not None:
        end = end[:16] + offset + end[20:]
    path.write_bytes(bytes(local + central) + tail + end)
    return path


ZIP_END_RECORDS = {  # how the end record can hide a directory too large
    "zip64-count": {"count": 0xFFFF, "size": 0xFFFFFFFF, "zip64": True},
    "end-record-says-one": {"count": 1},
    "zip64-says-one": {"count": 1, "zip64": True},
    "zip64-behind-a-plain-end-record": {"count": 1, "size": 46, "zip64": True},
    "signature-in-the-offset": {"offset": b"PK\x05\x06"},
}


@pytest.mark.parametrize("where", ["submitted", "in-a-submitted-folder"])
@pytest.mark.parametrize("lie", ZIP_END_RECORDS)
def test_a_zip_with_too_many_members_is_refused_whatever_its_end_record_says(tmp_path, problems, monkeypatch, lie,
                                                                            where):
    """A directory of 60,000 members is refused before zipfile reads it (a million took seconds and half a
    GiB), wherever its count is and whatever the end record says: zipfile reads a directory by its size in
    bytes, takes the ZIP64 record's whenever one is there, and finds the end record at the very end first.
    So is a zip inside a submitted folder (read into memory, then opened)."""
    import judge.commands.grade.submissions as submissions

    folder = _folder(tmp_path / "subs") if where == "submitted" else _folder(tmp_path / "subs" / "mallory")
    made = _many_member_zip(folder / "mallory.zip" if where == "submitted" else folder / "answers.zip", 60_000,
                            **ZIP_END_RECORDS[lie])
    path = made if where == "submitted" else folder
    with zipfile.ZipFile(made) as archive:
        assert len(archive.infolist()) == 60_000  # a zip zipfile reads, all of it
    opened: list[object] = []

    def reading(*args: object, **kwargs: object) -> None:
        opened.append(args)
        raise zipfile.BadZipFile("the test stops zipfile here")

    monkeypatch.setattr(submissions.zipfile, "ZipFile", reading)
    found, errors = discover_problems(problems)
    submission = submissions.read_submission(path, found)
    assert not opened, "zipfile was asked to read the directory"
    assert "more than the 2000 allowed" in submission.error, submission.error


def test_a_student_named_like_a_problem_does_not_make_the_class_one_submission(tmp_path, problems):
    """A folder of students, one of whom is named fx-add: still a class (once the whole class became one
    submission that could not be graded); a practice folder with a folder of notes is still one submission."""
    subs = _folder(tmp_path / "subs")
    for student in ("alice", "bob", "fx-add"):
        (_folder(subs / student / "fx-add") / "adder.py").write_text(REFERENCE)
    rows = _grade(subs, tmp_path / "out", problems, similarity=None)
    assert {name: row["total"] for name, row in rows.items()} == {"alice": "10", "bob": "10", "fx-add": "10"}
    practice = _folder(tmp_path / "practice")
    (_folder(practice / "fx-add") / "adder.py").write_text(REFERENCE)
    _folder(practice / "notes")
    done = run_cli("grade", str(practice), "-o", str(tmp_path / "out-one"), "--problems", str(problems),
                   "--similarity", "0")
    assert done.returncode == 0, done.stderr
    assert list(_rows(tmp_path / "out-one")) == ["practice"]


def test_a_folder_swapped_for_a_link_while_it_is_walked_is_not_entered(tmp_path):
    """The walk lists the student's top folder, then enters fx-add/: swapped for a link to a folder holding the
    reference meanwhile, it is not entered (the walk opens each folder and checks it is the one it listed),
    so nothing of the reference is read."""
    from judge.commands.grade.submissions import _folder_files

    (tmp_path / "elsewhere" / "fx-add").mkdir(parents=True)
    (tmp_path / "elsewhere" / "fx-add" / "adder.py").write_text("THE REFERENCE\n")
    root = tmp_path / "alice"
    (_folder(root / "fx-add") / "adder.py").write_text("def add(a, b):\n    raise NotImplementedError\n")
    (root / "a.txt").write_text("notes\n")
    walk = _folder_files(root)
    assert str(next(walk).path) == "a.txt"  # the top folder first; fx-add/ is entered next
    shutil.rmtree(root / "fx-add")
    (root / "fx-add").symlink_to(tmp_path / "elsewhere" / "fx-add")
    read = []
    for file in walk:
        with contextlib.suppress(OSError):
            read.append(file.read())
    assert b"THE REFERENCE\n" not in read, read


def _nul_named_member_zip(path: Path) -> Path:
    """A zip with the reference and a member whose name is one NUL byte: Python's zipfile cuts a name at its
    first NUL, so that member's name is "" (``ZipInfo.is_dir()`` then raised IndexError in Python 3.11)."""
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("fx-add/adder.py", REFERENCE)
        archive.writestr("@", b"")
    data = bytearray(path.read_bytes())
    for signature, name_at in ((b"PK\x03\x04", 30), (b"PK\x01\x02", 46)):  # the local header, the directory entry
        at = data.rfind(signature)
        data[at + name_at] = 0
    return path.write_bytes(bytes(data)) and path


def test_no_submission_stops_the_class_a_nul_name_a_deep_tree_a_bad_time_or_long_names(tmp_path, problems):
    """Four crafted submissions each stopped `judge grade` for the whole class (red team round 9, H1 H2 H3 L3):
    each is now its own row, every classmate is graded, and a later run reads the folder back."""
    subs = _folder(tmp_path / "subs")
    (_folder(subs / "alice" / "fx-add") / "adder.py").write_text(REFERENCE)
    _nul_named_member_zip(subs / "nul.zip")
    deep = subs / "deep"
    (_folder(deep / "fx-add") / "adder.py").write_text(REFERENCE)
    _deep_tree(deep, 1200)  # a walk that recurses per folder ran out of stack near 1,000 levels
    _zip(subs / "long.zip", {"fx-add/adder.py": REFERENCE, **{f"notes{i}-{'x' * 65_000}.txt": "" for i in range(6)}})
    (_folder(subs / "hw_mallory_attempt_2026-13-32-25-61-61_x")).joinpath("fx-add").mkdir()  # no clock's time
    try:
        rows = _grade(subs, tmp_path / "out", problems, similarity=None)
        assert rows["alice"]["total"] == "10" and rows["alice"]["status"] == "ok"
        assert rows["nul"]["total"] == "" and "empty name" in rows["nul"]["status"], rows["nul"]
        assert rows["deep"]["total"] == "" and "nested more than" in rows["deep"]["status"], rows["deep"]
        assert rows["long"]["total"] == "10" and len(rows["long"]["status"]) < 2000, len(rows["long"]["status"])
        assert "hw_mallory_attempt_2026-13-32-25-61-61_x" in rows  # a plain folder: its name is no Blackboard time
        (tmp_path / "out" / "grades.csv").write_text("student,status\r\nbig," + "x" * 200_000 + "\r\n")
        assert _grade(subs, tmp_path / "out", problems, similarity=None)["alice"]["total"] == "10"  # read back
    finally:
        _deep_tree(deep, 1200, remove=True)  # pytest's clean-up recurses too


def _deep_tree(root: Path, depth: int, remove: bool = False) -> None:
    """Make (or remove) ``root``/a/a/.../a, ``depth`` folders deep, without recursing as os.makedirs does."""
    fds = [os.open(root, os.O_RDONLY | os.O_DIRECTORY)]
    try:
        for _ in range(depth):
            if not remove:
                os.mkdir("a", dir_fd=fds[-1])
            fds.append(os.open("a", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fds[-1]))
        if remove:
            for parent in reversed(fds[:-1]):
                os.rmdir("a", dir_fd=parent)
    finally:
        for fd in fds:
            os.close(fd)


def test_a_folder_the_grader_cannot_read_makes_the_submission_unreadable_not_empty(tmp_path, problems, monkeypatch):
    """A folder the walk could not list was passed over, so its problem counted as not handed in: a real 0
    (red team round 9, L2). As root every folder reads, so the listing fails as it does for a grader who is
    not root (PermissionError, the grader's full path in its text)."""
    from judge.commands.grade import submissions

    subs = _folder(tmp_path / "subs")
    (_folder(subs / "alice" / "fx-add") / "adder.py").write_text(REFERENCE)
    (_folder(subs / "bob" / "fx-add") / "adder.py").write_text(REFERENCE)
    closed, real = subs / "alice" / "fx-add", os.listdir

    def refuse(fd):
        if isinstance(fd, int) and os.path.samefile(f"/proc/self/fd/{fd}", closed):
            raise PermissionError(13, "Permission denied", str(closed))
        return real(fd)

    monkeypatch.setattr(submissions.os, "listdir", refuse)
    rows = _grade(subs, tmp_path / "out", problems, similarity=None)
    assert rows["alice"]["total"] == "" and rows["bob"]["total"] == "10"
    assert rows["alice"]["status"] == "error: the folder fx-add could not be read (Permission denied)", rows["alice"]


def test_work_judged_with_less_isolation_is_judged_again_when_the_level_is_raised(tmp_path, problems):
    """The stored Results are reused only for the same sandbox: a run at --sandbox plain, then at the user level
    or bubblewrap, judges everyone again (red team round 9, R1: a 4/4 made at plain was kept)."""
    from judge.commands.grade import _isolation
    from judge.engines.native import NativeEngine
    from judge.sandbox import levels

    plain = NativeEngine(levels.choose("plain"))
    strong = NativeEngine(levels.choose("auto"))
    assert _isolation(Options(engine=plain)) != _isolation(Options(engine=strong))
    subs = _folder(tmp_path / "subs")
    _zip(subs / "ann.zip", {"fx-add/adder.py": REFERENCE})
    found, _ = discover_problems(problems)
    first = grade_class(subs, tmp_path / "out", found, Options(engine=plain, similarity=None))
    again = grade_class(subs, tmp_path / "out", found, Options(engine=plain, similarity=None))
    raised = grade_class(subs, tmp_path / "out", found, Options(engine=strong, similarity=None))
    assert (first.judged, again.judged, raised.judged) == (1, 0, 1)
    assert {r.sandbox for r in raised.graded[0].results} == {strong.sandbox.level}


def test_one_student_claimed_twice_is_never_graded_as_either(tmp_path, problems):
    """Ids that differ only in case, or a Blackboard attempt or a Canvas file named after a classmate beside
    the classmate's folder, were graded as two students sharing files, or replaced the classmate's work
    (red team round 9, M1 M3 L1): each is now one row saying there are two submissions."""
    subs = _folder(tmp_path / "subs")
    (_folder(subs / "alee" / "fx-add") / "adder.py").write_text(REFERENCE)
    _zip(subs / "Alee.zip", {"fx-add/adder.py": "def add(a, b):\n    return 0\n"})
    (_folder(subs / "alice" / "fx-add") / "adder.py").write_text(REFERENCE)
    (subs / "hw1_alice_attempt_2026-12-09-10-00-00_adder.py").write_text("def add(a, b):\n    return 0\n")
    (_folder(subs / "lovelaceada_1234" / "fx-add") / "adder.py").write_text(REFERENCE)
    (subs / "lovelaceada_1234_5678_adder.py").write_text(REFERENCE)
    (_folder(subs / "bob" / "fx-add") / "adder.py").write_text(REFERENCE)
    (_folder(subs / os.fsdecode(b"Jos\xe9") / "fx-add") / "adder.py").write_text(REFERENCE)  # not UTF-8...
    (_folder(subs / "Jos\\xe9" / "fx-add") / "adder.py").write_text(REFERENCE)  # ...and the name it is shown as
    rows = _grade(subs, tmp_path / "out", problems, similarity=None)
    assert set(rows) == {"Alee", "alice", "lovelaceada_1234", "bob", "Jos\\xe9"}, rows
    for student in ("Alee", "alice", "lovelaceada_1234", "Jos\\xe9"):
        assert rows[student]["total"] == "" and "two submissions" in rows[student]["status"], rows[student]
    assert rows["bob"]["total"] == "10"
    names = [p.name.lower() for p in (tmp_path / "out" / "feedback").iterdir()]
    assert len(names) == len(set(names)), names  # no two files a case-blind file system would make one


def test_plain_names_that_are_case_variants_or_windows_devices_are_hashed():
    assert safe_name("alice") == "alice"
    assert safe_name("CON") != "CON" and safe_name("con.txt") != "con.txt" and safe_name("lpt1") != "lpt1"
    assert safe_name("console") == "console"


def test_learner_words_in_feedback_and_gradescope_objectives_are_quoted(tmp_path, problems):
    """A failing test's first line (the learner's values) is an objective's note: in feedback/*.md and on
    Gradescope it was Markdown of its own (an image, a link, raw HTML); the student's name in the heading too."""
    from markdown_it import MarkdownIt

    _edit_toml(problems / "fx-add", '\n[[objectives]]\nid = "add"\ntitle = "Adding"\npoints = 10\n'
                                    'tests = ["test_*"]\n')
    subs = _folder(tmp_path / "subs")
    hostile = "<img src=x onerror=alert(1)> [click](http://evil.example) ![i](http://evil.example/i.png)"
    (_folder(subs / "mallory" / "fx-add") / "adder.py").write_text(f"def add(a, b):\n    return {hostile!r}\n")
    (_folder(subs / "**bold** [x](y)" / "fx-add") / "adder.py").write_text(REFERENCE)
    _grade(subs, tmp_path / "out", problems, similarity=None, feedback="full")
    for path in (tmp_path / "out" / "feedback").iterdir():
        blocks = MarkdownIt().parse(path.read_text())
        kinds = {t.type for block in blocks for t in [block, *(block.children or [])]}
        assert not kinds & {"image", "link_open", "html_inline", "html_block"}, (path.name, path.read_text())
        heading = blocks[1]  # the inline content of "# Feedback for <student>"
        assert {t.type for t in heading.children or []} == {"text"}, (path.name, heading.content)
    assert "Feedback for **bold** [x](y)" in "".join(
        MarkdownIt().render(p.read_text()) for p in (tmp_path / "out" / "feedback").iterdir())
