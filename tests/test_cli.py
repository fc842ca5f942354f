"""The command line: practice folders, reports, exit codes, files. In this process through ``judge.commands.cli.main``
(tests.conftest.judge_cli); the entry point, the launcher and --watch in a real subprocess."""

from __future__ import annotations

import io
import json
import shutil
import xml.etree.ElementTree as ET

import jsonschema
import pytest

from judge.commands.check import check_and_report
from tests.conftest import FIXTURE_PROBLEMS, ROOT, SOLUTIONS, judge_cli, run_cli

FX = ("--problems", str(FIXTURE_PROBLEMS))
SCHEMA = json.loads((ROOT / "judge" / "core" / "schema" / "result.schema.json").read_text())


def test_version():
    result = run_cli("--version")  # the entry point, in a new interpreter
    assert result.returncode == 0 and result.stdout.startswith("judge ")


def test_first_run_creates_practice_and_says_not_started(tmp_path):
    result = judge_cli(str(tmp_path / "practice"), *FX, cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    assert "Created 1 problem folder in" in result.stdout
    assert "TODO    fx-add  not started: edit " in result.stdout
    assert "NotImplementedError" not in result.stdout, "an untouched starter's failures are not listed"
    # the not-started problem's tests count (as in --json): its failures are not listed
    assert "Summary: 0 of 1 problems solved, 1 not started; 0 of 4 tests passed." in result.stdout
    verbose = judge_cli(str(tmp_path / "practice"), *FX, "-v", cwd=tmp_path)
    assert "FAIL    fx-add  0/4 tests" in verbose.stdout and "NotImplementedError: write add(a, b)" in verbose.stdout
    folder = tmp_path / "practice" / "fx-add"
    assert (folder / "adder.py").read_text() == (FIXTURE_PROBLEMS / "fx-add" / "starter" / "adder.py").read_text()
    assert (folder / "README.md").is_file() and (folder / "tests" / "test_add.py").is_file()
    assert not (folder / "tests" / "test_big.py").exists(), "secret tests must not be copied"
    (folder / "adder.py").write_text(folder.joinpath("adder.py").read_text() + "\n# started\n")
    started = judge_cli(str(tmp_path / "practice"), *FX, cwd=tmp_path)
    assert "FAIL    fx-add  0/4 tests" in started.stdout and "NotImplementedError: write add(a, b)" in started.stdout


def test_solved_practice_passes_and_is_never_overwritten(tmp_path):
    practice = tmp_path / "practice"
    judge_cli(str(practice), *FX)
    solution = practice / "fx-add" / "adder.py"
    shutil.copy(SOLUTIONS / "passing.py", solution)
    before = solution.read_bytes()
    result = judge_cli(str(practice), *FX)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "PASS    fx-add  4/4 tests" in result.stdout
    assert "Summary: 1 of 1 problems solved; 4 of 4 tests passed." in result.stdout
    assert "Created" not in result.stdout
    assert solution.read_bytes() == before
    single = judge_cli(str(practice / "fx-add"), *FX)  # one problem's folder
    assert single.returncode == 0 and "PASS    fx-add" in single.stdout


def test_edited_test_copy_warns_but_does_not_change_the_verdict(tmp_path):
    practice = tmp_path / "practice"
    judge_cli(str(practice), *FX)
    (practice / "fx-add" / "tests" / "test_add.py").write_text("def test_nothing():\n    pass\n")
    result = judge_cli(str(practice), *FX, "-v")
    assert result.returncode == 1
    assert "differs from the canonical copy" in result.stderr
    assert "FAIL    fx-add  0/4 tests" in result.stdout


def test_keyword_json_and_junit(tmp_path):
    practice = tmp_path / "practice"
    judge_cli(str(practice), *FX)
    shutil.copy(SOLUTIONS / "partly_failing.py", practice / "fx-add" / "adder.py")
    out_json, out_xml = tmp_path / "r.json", tmp_path / "r.xml"
    result = judge_cli(str(practice), *FX, "--json", str(out_json), "--junit", str(out_xml))
    assert result.returncode == 1
    data = json.loads(out_json.read_text())
    [problem] = data["results"]
    jsonschema.validate(problem, SCHEMA)
    assert (problem["status"], problem["passed"], problem["total"]) == ("failed", 3, 4)
    suite = ET.parse(out_xml).getroot().find("testsuite")
    assert suite.get("name") == "fx-add" and suite.get("tests") == "4" and suite.get("failures") == "1"
    filtered = judge_cli(str(practice), *FX, "-k", "zero")
    assert filtered.returncode == 0 and "2/2 tests matching -k 'zero'" in filtered.stdout
    assert "score" not in filtered.stdout and "points" not in filtered.stdout, "a subset's score reads as the problem's"
    assert "(only tests matching -k 'zero')" in filtered.stdout


def test_public_only_skips_secret_tests(tmp_path):
    practice = tmp_path / "practice"
    judge_cli(str(practice), *FX)
    shutil.copy(SOLUTIONS / "passing.py", practice / "fx-add" / "adder.py")
    result = judge_cli(str(practice), *FX, "--public-only")
    assert result.returncode == 0 and "3/3 tests" in result.stdout


@pytest.mark.parametrize("args,expected", [
    (["--problems", "/nonexistent"], "no such problems folder"),
    (["-j", "0"], "must be at least 1"),
])
def test_usage_errors_exit_2(tmp_path, args, expected):
    result = judge_cli(str(tmp_path / "practice"), *args)
    assert result.returncode == 2
    assert expected in result.stderr


def test_a_file_is_not_a_practice_folder(tmp_path):
    (tmp_path / "x.py").write_text("x = 1\n")
    result = judge_cli(str(tmp_path / "x.py"), *FX)
    assert result.returncode == 2 and "is a file" in result.stderr


def test_check_passes_on_the_fixture_problems():
    result = judge_cli("check", str(FIXTURE_PROBLEMS))
    assert result.returncode == 0, result.stdout
    assert "OK      fx-add" in result.stdout and "of the 5 s limit" in result.stdout


@pytest.mark.parametrize("breakage,kind,path", [
    ("reference", "reference-fails", ""),
    ("wrong", "passes-every-test", "wrong/passes.py"),
    ("starter", "passes-every-test", ""),
])
def test_check_fails_clearly(tmp_path, breakage, kind, path):
    folder = tmp_path / "fx-add"
    shutil.copytree(FIXTURE_PROBLEMS / "fx-add", folder)
    if breakage == "reference":
        shutil.copy(SOLUTIONS / "partly_failing.py", folder / "reference" / "adder.py")
    elif breakage == "wrong":
        shutil.copy(SOLUTIONS / "passing.py", folder / "wrong" / "passes.py")
    else:
        shutil.copy(SOLUTIONS / "passing.py", folder / "starter" / "adder.py")
    out = io.StringIO()
    code, (found,) = check_and_report(tmp_path, stream=out)
    assert code == 1, out.getvalue()
    assert (kind, path) in [(f.kind, f.path) for f in found.failures], found.failures
    assert "FAILED  fx-add" in out.getvalue()


def test_check_names_a_folder_that_does_not_load(tmp_path):
    folder = tmp_path / "fx-add"
    shutil.copytree(FIXTURE_PROBLEMS / "fx-add", folder)
    (folder / "problem.toml").write_text("format = \n")
    result = judge_cli("check", str(tmp_path))
    assert result.returncode == 1, result.stdout
    assert f"INVALID {folder / 'problem.toml'}: " in result.stdout


def test_parallel_judging_keeps_order(tmp_path):
    problems = tmp_path / "problems"
    for name in ("fx-a", "fx-b", "fx-c"):
        shutil.copytree(FIXTURE_PROBLEMS / "fx-add", problems / name)
        toml = problems / name / "problem.toml"
        toml.write_text(toml.read_text().replace('id = "fx-add"', f'id = "{name}"'))
    practice = tmp_path / "practice"
    result = judge_cli(str(practice), "--problems", str(problems), "-j", "3", "-v")
    lines = [line.split()[1] for line in result.stdout.splitlines() if line.startswith("FAIL")]
    assert lines == ["fx-a", "fx-b", "fx-c"]


def test_watch_judges_again_on_save(tmp_path):
    import os
    import subprocess
    import sys
    import time

    practice = tmp_path / "practice"
    judge_cli(str(practice), *FX)
    env = dict(os.environ, NO_COLOR="1", PYTHONPATH=str(ROOT), PYTHONUNBUFFERED="1")
    process = subprocess.Popen([sys.executable, "-m", "judge", str(practice), *FX, "--watch"], env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    seen: list[str] = []
    import threading
    watchdog = threading.Timer(120, process.kill)  # a silent hang must not hang the suite
    watchdog.start()
    try:
        deadline = time.monotonic() + 120
        saved = False
        for line in process.stdout:
            seen.append(line)
            if "Watching for changes" in line and not saved:
                time.sleep(0.5)
                shutil.copy(SOLUTIONS / "passing.py", practice / "fx-add" / "adder.py")
                saved = True
            if saved and line.startswith("PASS    fx-add"):
                break
            assert time.monotonic() < deadline, "no re-judge after saving:\n" + "".join(seen)
    finally:
        watchdog.cancel()
        process.terminate()
        process.wait(10)
        process.stdout.close()  # type: ignore[union-attr]
    text = "".join(seen)
    assert "TODO    fx-add" in text and "change detected" in text and "PASS    fx-add" in text


def test_a_mistyped_problem_path_is_an_error_not_a_new_practice_folder(tmp_path):
    practice = tmp_path / "practice"
    judge_cli(str(practice), *FX)
    typo = judge_cli(str(practice / "fx-ad"), *FX)
    assert typo.returncode == 2
    assert "no such problem folder" in typo.stderr and "did you mean" in typo.stderr and "fx-add" in typo.stderr
    assert not (practice / "fx-ad").exists()
    bare = judge_cli("fx-ad", *FX, cwd=tmp_path)
    assert bare.returncode == 2 and "looks like the problem id 'fx-add'" in bare.stderr
    assert not (tmp_path / "fx-ad").exists()


def test_a_problem_of_a_practice_folder_not_made_yet_says_how_to_make_it(tmp_path):
    """`judge practice/fx-add` before practice/ exists: the way to create it, not what was typed."""
    done = judge_cli("practice/fx-add", *FX, cwd=tmp_path)
    assert done.returncode == 2
    assert "practice is not a practice folder yet; `judge practice` creates it" in done.stderr, done.stderr
    assert "e.g. practice/fx-add" not in done.stderr
    assert not (tmp_path / "practice").exists()


def test_judging_the_problem_folder_you_stand_in(tmp_path):
    practice = tmp_path / "practice"
    judge_cli(str(practice), *FX)
    shutil.copy(SOLUTIONS / "passing.py", practice / "fx-add" / "adder.py")
    here = judge_cli(".", *FX, cwd=practice / "fx-add")
    assert here.returncode == 0, here.stdout + here.stderr
    assert "PASS    fx-add  4/4 tests" in here.stdout


def test_first_failure_of_each_test_function_comes_first(tmp_path):
    practice = tmp_path / "practice"
    judge_cli(str(practice), *FX)
    (practice / "fx-add" / "adder.py").write_text("def add(a, b):\n    return a - b + 1\n")
    report = judge_cli(str(practice), *FX).stdout
    names = [line.strip().split("  ", 1)[1] for line in report.splitlines() if line.startswith("    fail")]
    assert names[:2] == ["adds two small numbers", "zero [0-7]"], names


def test_secret_test_code_is_never_printed(tmp_path):
    practice = tmp_path / "practice"
    judge_cli(str(practice), *FX)
    shutil.copy(SOLUTIONS / "partly_failing.py", practice / "fx-add" / "adder.py")
    report = judge_cli(str(practice), *FX).stdout
    assert "adds large numbers (secret)" in report
    assert "tests/secret" not in report and "assert adder.add(10**6" not in report


def test_a_failure_in_a_helper_is_located_at_the_tests_call(tmp_path):
    problems = tmp_path / "problems"
    shutil.copytree(FIXTURE_PROBLEMS / "fx-add", problems / "fx-add")
    public = problems / "fx-add" / "tests" / "public"
    (public / "add_checks.py").write_text(
        "import adder\n\n\ndef expect_sum(a, b):\n    got = adder.add(a, b)\n"
        "    assert got == a + b, f'add({a}, {b}): expected {a + b}, got {got!r}'\n")
    (public / "test_via_helper.py").write_text(
        "from add_checks import expect_sum\n\n\ndef test_negative():\n    expect_sum(2, -7)\n")
    practice = tmp_path / "practice"
    judge_cli(str(practice), "--problems", str(problems))
    (practice / "fx-add" / "adder.py").write_text("def add(a, b):\n    return abs(a) + abs(b)\n")
    report = judge_cli(str(practice), "--problems", str(problems), "--public-only").stdout
    assert "add(2, -7): expected -5, got 9" in report
    assert "at tests/test_via_helper.py:5 in test_negative: expect_sum(2, -7)" in report, report
    assert "add_checks.py:6" not in report


def test_the_practice_folder_carries_a_launcher_that_does_what_the_judge_does(tmp_path):
    """`python practice/judge.py` (what the course chapter tells learners) = `python -m judge practice/`."""
    import os
    import subprocess
    import sys

    practice = tmp_path / "practice"
    judge_cli(str(practice), "--problems", str(FIXTURE_PROBLEMS))
    launcher = practice / "judge.py"
    assert launcher.is_file()
    shutil.copy(SOLUTIONS / "partly_failing.py", practice / "fx-add" / "adder.py")
    env = dict(os.environ, NO_COLOR="1", PYTHONPATH=str(ROOT))
    launched = subprocess.run([sys.executable, str(launcher), "--problems", str(FIXTURE_PROBLEMS)],
                              cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    direct = judge_cli(str(practice), "--problems", str(FIXTURE_PROBLEMS), cwd=tmp_path)
    assert launched.returncode == direct.returncode == 1, launched.stdout + launched.stderr
    assert launched.stdout == direct.stdout and "fx-add" in launched.stdout
    inside = judge_cli(".", "--problems", str(FIXTURE_PROBLEMS), cwd=practice)  # judge.py must not hide the judge
    assert inside.returncode == 1 and "fx-add" in inside.stdout, inside.stdout + inside.stderr


def _long_options(parser) -> list[str]:
    return [o for action in parser._actions for o in action.option_strings if o.startswith("--")]


REQUIRED = {"judge": ["practice"], "build": ["site"], "grade": ["subs", "-o", "out"],
            "export": ["gradescope", "-o", "out.zip"]}  # each parser's required arguments


def test_no_command_takes_an_abbreviated_option(capsys):
    """argparse would read --problem as --problems, --out as --out-dir...: every parser refuses a prefix."""
    from judge.commands import COMMANDS, cli
    from judge.commands.export import run

    parsers = cli.parsers()
    assert set(parsers) == set(COMMANDS)
    for name, parser in parsers.items():
        assert parser.allow_abbrev is False, name
        options = _long_options(parser)
        for option in options:
            prefix = option[:-1]
            if prefix in options or len(prefix) < 3:
                continue
            with pytest.raises(SystemExit) as exited:
                parser.parse_args([*REQUIRED.get(name, []), prefix])
            assert exited.value.code == 2, (name, prefix)
            assert f"unrecognized arguments: {prefix}" in capsys.readouterr().err, (name, prefix)
    with pytest.raises(SystemExit) as exited:  # the platform's grading step too
        run.main(["gradescope", "--bundle", "b", "--submission", "s", "-o", "o", "--github-out"])
    assert exited.value.code == 2
    assert "unrecognized arguments: --github-out" in capsys.readouterr().err


def test_grade_problem_is_not_taken_for_problems(tmp_path):
    """`judge grade --problem ID` grades that problem (it was read as --problems, "no such problems folder")."""
    problems = tmp_path / "problems"
    for pid in ("fx-add", "fx-two"):
        shutil.copytree(FIXTURE_PROBLEMS / "fx-add", problems / pid)
    toml = problems / "fx-two" / "problem.toml"
    toml.write_text(toml.read_text().replace('id = "fx-add"', 'id = "fx-two"'))
    subs = tmp_path / "subs"
    (subs / "ann" / "fx-add").mkdir(parents=True)
    shutil.copy(FIXTURE_PROBLEMS / "fx-add" / "reference" / "adder.py", subs / "ann" / "fx-add" / "adder.py")
    done = judge_cli("grade", str(subs), "-o", str(tmp_path / "out"), "--problems", str(problems),
                   "--problem", "fx-add", "--similarity", "0")
    assert done.returncode == 0, done.stderr
    header = (tmp_path / "out" / "grades.csv").read_text().splitlines()[0]
    assert header == "student,fx-add,total,max_total,status"
    wrong = judge_cli("grade", str(subs), "-o", str(tmp_path / "out2"), "--problems", str(problems),
                    "--problem", "fx-thre")
    assert wrong.returncode == 2 and "--problem: unknown problem(s) fx-thre" in wrong.stderr


def test_a_command_is_its_module_and_one_registry_line(monkeypatch, capsys):
    """cli.py assembles whatever COMMANDS names: a new module's arguments, handler and errors just work."""
    import argparse
    import sys
    import types

    from judge.commands import COMMANDS, Command, cli
    from judge.core.errors import UsageError

    module = types.ModuleType("judge.commands.lint_for_test")
    module.DESCRIPTION = "Lint problem folders."

    def add_arguments(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("name")

    def run(args: argparse.Namespace) -> int:
        if args.name == "bad":
            raise UsageError("bad: no such folder")
        print(f"linted {args.name}")
        return 0

    module.add_arguments, module.run = add_arguments, run
    monkeypatch.setitem(sys.modules, module.__name__, module)
    monkeypatch.setitem(COMMANDS, "lint", Command("lint", "lint_for_test", "lint problem folders"))
    assert cli.main(["lint", "fx"]) == 0
    assert capsys.readouterr().out == "linted fx\n"
    assert cli.main(["lint", "bad"]) == 2
    assert capsys.readouterr().err == "error: bad: no such folder\n"
    assert "lint" in cli.parsers()
