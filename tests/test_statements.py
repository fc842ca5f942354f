"""A statement in two languages (README.md and README.zh.md, judge/commands/statements.py): ``judge
check`` validates the translation like the default (links, assets, the code blocks' signatures) and
says which languages a problem has; a problem without a translation is fine, with a note."""

from __future__ import annotations

import io
import re
import shutil
from pathlib import Path

from judge.commands.check import ProblemCheck, check_files, check_problems, language_notes
from judge.commands.practice import create_practice
from judge.commands.statements import signatures, statement_file, translations
from judge.core.findings import kinds
from judge.core.problem import load_problem
from tests.conftest import FIXTURE_PROBLEMS

ENGLISH = """# Add two numbers

Write `add(a, b)` returning \\( a + b \\); the figure ![sum](assets/sum.svg) shows it.

```python
def add(a: int, b: int) -> int:
    \"\"\"The sum of a and b.\"\"\"
```
"""
CHINESE = """# 两数相加

编写 `add(a, b)`，返回 \\( a + b \\)；图 ![和](assets/sum.svg) 画出了它。

```python
def add(a: int,
        b: int) -> int:
    \"\"\"a 与 b 之和。\"\"\"
```
"""


def two_languages(tmp_path: Path, chinese: str = CHINESE, name: str = "fx-add", titles: bool = True) -> Path:
    """fx-add with its statement in English and Chinese, and the figure both link to; with ``titles``, each
    test's Chinese title too."""
    folder = tmp_path / "problems" / name
    shutil.copytree(FIXTURE_PROBLEMS / "fx-add", folder, ignore=shutil.ignore_patterns("__pycache__"))
    for path in folder.glob("tests/*/test_*.py") if titles else ():
        text = path.read_text(encoding="utf-8")
        text = re.sub(r"^((?:@pytest\.mark\.parametrize.*\n)?def (test_\w+))", r'@pytest.mark.title(zh="测试 \2")\n\1',
                      text, flags=re.M)
        path.write_text(text if "import pytest" in text else "import pytest\n" + text, encoding="utf-8")
    (folder / "README.md").write_text(ENGLISH, encoding="utf-8")
    (folder / "README.zh.md").write_text(chinese, encoding="utf-8")
    (folder / "assets").mkdir()
    (folder / "assets" / "sum.svg").write_text("<svg xmlns='http://www.w3.org/2000/svg'/>", encoding="utf-8")
    if name != "fx-add":
        toml = folder / "problem.toml"
        toml.write_text(toml.read_text(encoding="utf-8").replace('id = "fx-add"', f'id = "{name}"'), encoding="utf-8")
    return folder


def findings(folder: Path) -> ProblemCheck:
    found = ProblemCheck(load_problem(folder))
    check_files(found)
    return found


def test_signatures_ignore_layout_and_prose() -> None:
    assert signatures(ENGLISH) == signatures(CHINESE) == ["def add(a: int, b: int) -> int"]


def test_signatures_written_without_a_body_are_compared_too() -> None:
    block = ("```python\n"
             "def backward_input(grad_out, weight) -> np.ndarray   # B of one Linear: grad_out @ weight.T\n"
             "def backward_weight(grad_out, x_in) -> (grad_weight, grad_bias)\n"
             "def q1() -> float: ...\n"
             "def run(sched,\n        tf: float = 1.0) -> dict\n"
             "```\n")
    assert signatures(block) == ["def backward_input(grad_out, weight) -> np.ndarray",
                                 "def backward_weight(grad_out, x_in) -> (grad_weight, grad_bias)",
                                 "def q1() -> float", "def run(sched, tf: float = 1.0) -> dict"]


def test_a_faithful_translation_passes_and_the_languages_are_named(tmp_path: Path) -> None:
    folder = two_languages(tmp_path)
    found = findings(folder)
    assert found.failures == []
    assert kinds(found.notes) == ["statement-languages"]
    assert list(translations(folder)) == ["zh"]


def test_a_translation_is_held_to_the_defaults_rules(tmp_path: Path) -> None:
    bad = CHINESE.replace("b: int) -> int", "b: float) -> float").replace("assets/sum.svg", "assets/和.svg")
    found = findings(two_languages(tmp_path, bad + "\nTODO\n"))
    where = [(f.kind, f.path, f.line) for f in found.failures]
    assert where == [("todo", "README.zh.md", 0), ("broken-link", "README.zh.md", 3),
                     ("signature-mismatch", "README.zh.md", 0)], found.failures
    assert "assets/%E5%92%8C.svg" in found.failures[1].message  # the link as written, the path decoded
    assert "def add(a: int, b: float) -> float" in found.failures[2].message
    assert [(f.kind, f.path) for f in found.notes if f.kind == "link-targets-differ"] == [
        ("link-targets-differ", "README.zh.md")]


def test_a_translated_problem_without_a_tests_title_in_its_language_fails_check(tmp_path: Path) -> None:
    found = findings(two_languages(tmp_path, titles=False))
    missing = [f for f in found.failures if f.kind == "untranslated-title"]
    assert [f.path for f in missing] == ["tests/public/test_add.py", "tests/public/test_add.py",
                                         "tests/secret/test_big.py"], found.failures
    assert all(f.line > 0 for f in missing)
    assert 'add @pytest.mark.title(zh="...") above it' in missing[0].message
    assert findings(two_languages(tmp_path / "titled")).failures == []


def test_a_missing_translation_is_a_note_and_falls_back_to_english(tmp_path: Path) -> None:
    with_zh = two_languages(tmp_path)
    without = two_languages(tmp_path, name="fx-sub")
    (without / "README.zh.md").unlink()
    checks = [findings(with_zh), findings(without)]
    language_notes(checks)
    assert checks[1].failures == [] and "missing-translation" in kinds(checks[1].notes)
    assert "zh" in next(n.message for n in checks[1].notes if n.kind == "missing-translation")
    assert "missing-translation" not in kinds(checks[0].notes)
    assert statement_file(without, "zh") == without / "README.md"
    assert statement_file(with_zh, "zh") == with_zh / "README.zh.md"


def test_the_practice_folder_gets_every_language(tmp_path: Path) -> None:
    folder = two_languages(tmp_path)
    create_practice(tmp_path / "practice", [load_problem(folder)])
    assert (tmp_path / "practice" / "fx-add" / "README.zh.md").read_text(encoding="utf-8") == CHINESE


def test_judge_check_of_a_problem_in_two_languages(tmp_path: Path) -> None:
    folder = two_languages(tmp_path)
    out = io.StringIO()
    assert check_problems(folder, parallel=2, stream=out) == 0, out.getvalue()
    assert "OK      fx-add" in out.getvalue()
    assert "    - statement languages: en (README.md), zh (README.zh.md)\n" in out.getvalue()


def test_judge_build_publishes_each_language(tmp_path: Path) -> None:
    import json

    from judge.commands.site.build import build_site

    two_languages(tmp_path)
    site = tmp_path / "site"
    build_site(site, pyodide="cdn", problems_dir=tmp_path / "problems")
    manifest = json.loads(next((site / "assets").glob("problems-*.json")).read_text(encoding="utf-8"))
    [entry] = manifest["problems"]
    assert "README.zh.md" in {f["path"] for f in entry["files"]}
    assert "<h1>Add two numbers</h1>" in entry["statement_html"]
    assert list(entry["statements_html"]) == ["zh"] and "<h1>两数相加</h1>" in entry["statements_html"]["zh"]
    [folder] = (site / "assets").glob("problem-fx-add-*")
    assert f'src="assets/{folder.name}/sum.svg"' in entry["statements_html"]["zh"], "the assets' site folder"
