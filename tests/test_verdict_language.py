"""The whole verdict in the learner's language (issue 33): judged with ``--lang zh``, a failing
solution of every problem reads with no English objective title, partial-credit note or test title
in the terminal report, the Gradescope output and ``judge grade``'s feedback files (the page's:
tests/browser/test_verdict_language_page.py).

English is found two ways, so a check fails for real: every English title the problem set declares
(objective titles, test docstrings' first lines, test function names as reports spell them) and the
judge's English note sentences must not appear anywhere in an output; and no title or note of the
Result holds a run of three Latin words once code (quotes, calls, ``name=value``) is set aside.
"""

from __future__ import annotations

import ast
import json
import re

import pytest

from judge.core.problem import Problem, discover_problems
from judge.core.wrong import load_wrong
from tests.conftest import ROOT, run_cli

PROBLEMS = ROOT / "problems"
# the judge's own English words of an objective's note (judge/core/scoring.py, older wordings too)
ENGLISH_NOTES = ("right; it counts in full", "its tests pass", "counts as far as", "a secret test did not pass",
                 "no test ran", "as far as what it waits for")
# code a Chinese title or note may quote: 'quoted', "quoted", `quoted`, name(args), name=value, and a
# test's parameters ([all W at the end]: its pytest id, the same in every language)
_CODE = re.compile(r"'[^']*'|\"[^\"]*\"|`[^`]*`|\w+\([^()]*\)|\w+=\S+|\[[^\[\]]*\]")
LATIN_RUN = re.compile(r"\b[A-Za-z][a-z]+(?:\s+[A-Za-z][a-z]+){2,}\b")


def english_run(text: str) -> str | None:
    """The first run of three Latin words in ``text`` outside the code it quotes (None without one)."""
    match = LATIN_RUN.search(_CODE.sub(" ", text))
    return match.group(0) if match else None


def test_english_run_finds_english_and_spares_code() -> None:
    assert english_run("GPipe order") is None and english_run("1F1B 顺序：预热、冷却") is None
    assert english_run("The 1F1B order: warm-up, one forward and one backward") == "one forward and one backward"
    assert english_run("schedule('1f1b', p=4, m=6)，stage 0：预期 F0 F1") is None
    assert english_run("its tests pass; it counts 56%") == "its tests pass"
    assert english_run("推迟的 W 不改变梯度 [all W at the end]") is None


def english_titles(problem: Problem) -> set[str]:
    """Every title of ``problem`` an untranslated report would show in English (two words or more)."""
    titles = {o.title for o in problem.objectives}
    for path in [*problem.public_test_files, *problem.secret_test_files]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test"):
                doc = (ast.get_docstring(node) or "").strip()
                titles.add(doc.splitlines()[0] if doc else node.name.removeprefix("test_").replace("_", " "))
    return {t for t in titles if " " in t.strip()}


def failing_solution(problem: Problem) -> str:
    """The first of ``problem``'s wrong solutions that declares it fails (a diff applied to the reference)."""
    for path in problem.wrong_files:
        wrong = load_wrong(problem, path)
        if wrong.expectation.status == "failed":
            return wrong.source
    raise AssertionError(f"{problem.id} has no failing wrong solution")


@pytest.fixture(scope="module")
def chinese_verdicts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str | dict]:
    """One failing solution of every problem judged in Chinese: the practice run's terminal report,
    Result JSON and Gradescope file, and judge grade's feedback file of the same code."""
    problems, errors = discover_problems(PROBLEMS)
    assert not errors and len(problems) == 8
    root = tmp_path_factory.mktemp("zh")
    practice, learner = root / "practice", root / "submissions" / "learner"
    for folder in (practice, learner):
        for problem in problems:
            (folder / problem.id).mkdir(parents=True)
            (folder / problem.id / problem.entry).write_text(failing_solution(problem), encoding="utf-8")
    run = run_cli(str(practice), "--problems", str(PROBLEMS), "--lang", "zh", "-j", "2", "--json",
                  str(root / "results.json"), "--gradescope", str(root / "gradescope.json"), timeout=900)
    assert run.returncode == 1, run.stderr
    graded = run_cli("grade", str(root / "submissions"), "-o", str(root / "grades"), "--problems", str(PROBLEMS),
                     "--lang", "zh", "-j", "2", timeout=900)
    assert graded.returncode == 0, graded.stderr
    feedback = sorted((root / "grades" / "feedback").iterdir())
    assert len(feedback) == 1
    return {"terminal": run.stdout, "results": json.loads((root / "results.json").read_text(encoding="utf-8")),
            "gradescope": (root / "gradescope.json").read_text(encoding="utf-8"),
            "feedback": feedback[0].read_text(encoding="utf-8"),
            "titles": sorted(set().union(*(english_titles(p) for p in problems)))}


@pytest.mark.slow
@pytest.mark.parametrize("output", ["terminal", "gradescope", "feedback"])
def test_no_english_title_or_note_in_chinese_outputs(chinese_verdicts: dict, output: str) -> None:
    text = chinese_verdicts[output]
    if output == "gradescope":
        data = json.loads(text)
        text = "\n".join([data["output"], *(t["name"] + "\n" + t["output"] for t in data["tests"])])
    assert "pp-schedule" in text and "pp-dualpipe" in text  # every problem's verdict is there
    english = [t for t in [*chinese_verdicts["titles"], *ENGLISH_NOTES] if t in text]
    assert not english, f"English in the Chinese {output}: {english[:5]}"


@pytest.mark.slow
def test_every_title_and_note_of_the_chinese_results_is_chinese(chinese_verdicts: dict) -> None:
    results = chinese_verdicts["results"]["results"]
    assert len(results) == 8 and all(r["status"] == "failed" for r in results)
    words = [(r["problem"], o["title"]) for r in results for o in r["objectives"]]
    words += [(r["problem"], o["note"]) for r in results for o in r["objectives"]]
    words += [(r["problem"], t["name"]) for r in results for t in r["tests"]]
    english = [(problem, text, english_run(text)) for problem, text in words if english_run(text)]
    assert not english, english[:5]
    notes = [o["note"] for r in results for o in r["objectives"] if o["note"]]
    assert any(note.startswith("正确；等") for note in notes)  # a right objective that waits for another
