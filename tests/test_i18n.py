"""The judge's own words per language (judge/i18n.py): the catalogs match the sources (the Python
modules, the page's JavaScript and index.html, as babel.cfg maps them), every marked message has a
Chinese translation, the site carries them to the page, and the terminal report and feedback files
come out in Chinese with ``--lang zh`` or ``LANG=zh_CN.UTF-8`` (English, with a note, for a language
without a catalog)."""

from __future__ import annotations

import functools
import io
import os
import shutil
import string
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from babel.messages.extract import DEFAULT_KEYWORDS, extract_from_dir
from babel.messages.frontend import parse_mapping_cfg
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po

from judge.commands.site.course import CourseText, apply_course_text
from judge.commands.site.i18n import extract_html, site_catalogs
from judge.core.result import Result
from judge.core.result import TestResult as Case
from judge.formats.terminal import ReportOptions, print_report
from judge.i18n import LOCALE_DIR, available_languages, ngettext, use_language
from tests.conftest import FIXTURE_PROBLEMS, ROOT, judge_cli

# the languages with a message catalog on disk (its .po source; available_languages() reads the compiled .mo)
LANGUAGES = sorted(p.parent.parent.name for p in LOCALE_DIR.glob("*/LC_MESSAGES/judge.po"))
# a language that never has a catalog: ISO 639 reserves qaa-qtz for local use
NO_CATALOG = "qaa"
# what a catalog's header comment says when it translates only some messages (docs/i18n.md)
PARTIAL = "partial catalog"


def _catalog(lang: str, locale_dir: Path = LOCALE_DIR):
    with open(locale_dir / lang / "LC_MESSAGES" / "judge.po", "rb") as f:
        return read_po(f, locale=lang)


def _partial(catalog) -> bool:
    """Whether the catalog says it is partial: its untranslated messages read in English, one by one."""
    return PARTIAL in catalog.header_comment.lower()


COMPLETE = [lang for lang in LANGUAGES if not _partial(_catalog(lang))]


@functools.cache
def _marked(where: str = "") -> set[str]:
    """Every message marked in the judge's sources (as ``pybabel extract -F babel.cfg`` finds them: the
    Python modules, the page's scripts and index.html), or in those whose path starts with ``where``."""
    with open(ROOT / "babel.cfg", encoding="utf-8") as f:
        method_map, options_map = parse_mapping_cfg(f, str(ROOT / "babel.cfg"))
    method_map = [(pattern, method) for pattern, method in method_map if pattern.startswith(where)]
    keywords = {**DEFAULT_KEYWORDS, "N_": None}
    found = extract_from_dir(str(ROOT), method_map=method_map, options_map=options_map, keywords=keywords)
    return {message if isinstance(message, str) else message[0] for _, _, message, *_ in found}


def test_babel_cfg_reads_the_python_modules_the_pages_scripts_and_its_html() -> None:
    python, page, html = _marked("judge/"), _marked("web/js/") | _marked("web/worker.js"), _marked("web/index.html")
    assert "Summary: {solved} of {problems} problems solved{not_started}; {passed} of {tests} tests passed{subset}." \
        in python
    assert {"Python ready", "Saved in this browser", "Loading Python…", "Installing {packages}…",
            "The public test passed", "stuck: waits for {block}"} <= page
    assert {"Run", "Stop", "Skip to the editor", "Show the problem list", "Try it: call your function"} <= html
    assert "passed" in python & page, "the page and the terminal share a status word's translation"


def _fields(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name is not None}


def test_the_languages_are_those_with_catalogs() -> None:
    assert available_languages() == LANGUAGES and "zh" in COMPLETE
    assert NO_CATALOG not in available_languages() and not (LOCALE_DIR / NO_CATALOG).exists()


def _catalog_faults(lang: str, catalog) -> list[str]:
    """What is wrong with a language's catalog: messages out of step with the sources, a fuzzy entry, a
    message without translation (unless the catalog is partial), a translation whose placeholders differ."""
    ids = {m.id if isinstance(m.id, str) else m.id[0]: m for m in catalog if m.id}
    marked = _marked()
    faults = [f"{lang}: marked but not in the .po (run pybabel extract and update, docs/i18n.md): {key!r}"
              for key in sorted(marked - ids.keys())]
    faults += [f"{lang}: in the .po but no longer marked (run pybabel update): {key!r}"
               for key in sorted(ids.keys() - marked)]
    for key, message in ids.items():
        strings = message.string if isinstance(message.string, tuple) else (message.string,)
        if message.fuzzy or not (all(strings) or _partial(catalog) and not any(strings)):
            faults.append(f"{lang}: no translation of {key!r}")
            continue
        if isinstance(message.id, tuple):  # a plural: every form within the singular's and plural's names
            names = _fields(message.id[0]) | _fields(message.id[1])
            same = all(_fields(message.id[0]) <= _fields(s) <= names for s in strings if s)
        else:
            same = all(_fields(s) == _fields(key) for s in strings if s)
        if not same:
            faults.append(f"{lang}: the placeholders of {key!r} differ")
    return faults


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_marked_message_is_translated_with_the_same_placeholders(lang: str) -> None:
    """A partial catalog may leave messages untranslated (they read in English), never half a plural."""
    assert _catalog_faults(lang, _catalog(lang)) == []


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_compiled_catalog_is_that_of_the_po_file(lang: str) -> None:
    compiled = io.BytesIO()
    write_mo(compiled, _catalog(lang))
    mo = LOCALE_DIR / lang / "LC_MESSAGES" / "judge.mo"
    assert mo.read_bytes() == compiled.getvalue(), "stale .mo: run pybabel compile -d judge/locale -D judge"


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_site_carries_every_page_message_translated(lang: str) -> None:
    """judge build's config.i18n (read from the .mo with the standard library): the page's messages (those
    a partial catalog translates; the page shows the others in English)."""
    carried = site_catalogs()["catalogs"][lang]
    source = _catalog(lang)
    translated = {m.id if isinstance(m.id, str) else m.id[0] for m in source if m.id and all(
        m.string if isinstance(m.string, tuple) else (m.string,))}
    for message in _marked("web/"):
        text = carried["messages"].get(message)
        if message in translated or not _partial(source):
            assert text and all(text), f"{lang}: the site lacks a translation of the page's {message!r}"
        else:
            assert text is None, f"{lang}: an untranslated message must be absent, read in English"


def test_the_site_carries_the_chinese_catalog_with_its_plural_rule() -> None:
    carried = site_catalogs()
    catalog = carried["catalogs"]["zh"]
    assert carried["languages"]["zh"] == "中文" and catalog["plural"] == "0"
    assert catalog["messages"]["The public test passed"] == ["全部 {n} 个公开测试通过"]  # a plural, as its forms
    assert catalog["messages"]["Run"] == "运行"


def test_the_html_extractor_reads_marked_text_markup_and_attributes() -> None:
    page = (b'<p data-i18n>Two\n   words</p><p data-i18n="html">A <em>b</em> &amp; c<br></p>'
            b'<button title="Go there" aria-label="x" data-i18n-attr="title"><span data-i18n>Go</span></button>'
            b'<p>not marked</p>')
    found = [message for _, _, message, _ in extract_html(io.BytesIO(page), [], [], {})]
    assert found == ["Two words", "A <em>b</em> &amp; c<br>", "Go there", "Go"]


def test_a_courses_own_title_is_not_translated() -> None:
    page = (ROOT / "web" / "index.html").read_text(encoding="utf-8")
    assert '<a class="brand" href="#/" data-i18n>' in page, "the judge's own wording is translated"
    course = apply_course_text(page, CourseText("Week 3", "Solve *these*."))
    assert '<a class="brand" href="#/">Week 3</a>' in course and "<h1>Week 3</h1>" in course
    assert "<p>Solve <em>these</em>.</p>" in course


def _results() -> list[Result]:
    failing = Case("test_add[1-2]", "test_add[1-2]", "tests/public/test_add.py", "public", "failed",
                         "assert 4 == 3")
    secret = Case("test_big", "test_big", "tests/secret/test_big.py", "secret", "error", "boom")
    return [Result("fx-add", "failed", tests=[failing, secret], points=0, max_points=10), Result("fx-b", "passed")]


def _report(lang: str | None) -> str:
    out = io.StringIO()
    with use_language(lang):
        print_report(_results(), stream=out, options=ReportOptions(not_started={"fx-b": ("b.py", "README.md")}))
    return out.getvalue()


def test_the_terminal_report_in_chinese_and_in_english() -> None:
    chinese = _report("zh")
    assert chinese.startswith("未通过  fx-add  0/2 个测试  得分率 0%  0/10 分\n"), chinese
    assert "    未通过  test_add[1-2]\n" in chinese and "    错误  test_big（隐藏测试）" in chinese
    assert "待做    fx-b  未开始：编辑 b.py" in chinese
    assert chinese.rstrip().endswith("总结：2 道题中解出 0 道，1 道未开始；2 个测试中通过 0 个。")
    english = _report("en")
    assert english.startswith("FAIL    fx-add  0/2 tests  score 0%  0/10 points\n")
    assert english.rstrip().endswith("Summary: 0 of 2 problems solved, 1 not started; 0 of 2 tests passed.")
    assert _report(NO_CATALOG) == english, "a language without a catalog reads in English"


def test_a_time_out_is_reported_in_the_reports_language_and_kept_in_english_in_the_result() -> None:
    from judge.core.result import Result

    result = Result.timeout("fx-add", 4, max_points=10)
    for lang, words in (("zh", "4 秒后超时"), ("en", "timed out after 4 s")):
        out = io.StringIO()
        with use_language(lang):
            print_report([result], stream=out)
        assert words in out.getvalue(), out.getvalue()
    assert result.to_dict()["message"] == "timed out after 4 s", "the Result is data: the same from every engine"


def test_the_language_comes_from_the_environment(monkeypatch) -> None:
    for name in ("LANGUAGE", "LC_ALL", "LC_MESSAGES"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("LANG", "zh_CN.UTF-8")
    assert "总结" in _report(None)
    monkeypatch.setenv("LANG", "C.UTF-8")
    assert "Summary" in _report(None)


def _judge(*args: str, cwd: Path, lang_env: str = "C.UTF-8") -> subprocess.CompletedProcess:
    """``judge ARGS`` with ``LANG=lang_env``: in this process (tests.conftest.judge_cli), or in a new
    interpreter when the language comes from the environment it starts with."""
    if lang_env == "C.UTF-8":
        return judge_cli(*args, cwd=cwd, env={"LANG": lang_env, "LANGUAGE": None, "LC_ALL": None, "LC_MESSAGES": None})
    env = {k: v for k, v in os.environ.items() if k not in ("LANGUAGE", "LC_ALL", "LC_MESSAGES")}
    env.update(NO_COLOR="1", PYTHONPATH=str(ROOT), LANG=lang_env)
    return subprocess.run([sys.executable, "-m", "judge", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300)


@pytest.fixture
def problems(tmp_path: Path) -> Path:
    root = tmp_path / "problems"
    shutil.copytree(FIXTURE_PROBLEMS / "fx-add", root / "fx-add")
    return root


def test_python_m_judge_lang_zh_and_lang_environment(tmp_path: Path, problems: Path) -> None:
    by_option = _judge("practice/", "--problems", str(problems), "--lang", "zh", "-j", "1", cwd=tmp_path)
    assert by_option.returncode == 1, by_option.stderr
    assert "待做    fx-add  未开始" in by_option.stdout and "总结：1 道题中解出 0 道" in by_option.stdout
    by_env = _judge("practice/", "--problems", str(problems), "-j", "1", cwd=tmp_path, lang_env="zh_CN.UTF-8")
    assert "总结：1 道题中解出 0 道" in by_env.stdout, by_env.stdout + by_env.stderr
    other = _judge("practice/", "--problems", str(problems), "--lang", NO_CATALOG, "-j", "1", cwd=tmp_path)
    assert "Summary: 0 of 1 problems solved" in other.stdout
    assert f"note: the judge's messages have no {NO_CATALOG} translation" in other.stderr


def test_the_not_started_line_names_the_statement_in_the_reports_language(tmp_path: Path, problems: Path) -> None:
    (problems / "fx-add" / "README.zh.md").write_text((problems / "fx-add" / "README.md").read_text(encoding="utf-8"),
                                                       encoding="utf-8")
    chinese = _judge("practice/", "--problems", str(problems), "--lang", "zh", "-j", "1", cwd=tmp_path)
    assert "已在 practice/ 中用初始代码创建 1 个题目文件夹" in chinese.stdout, chinese.stdout + chinese.stderr
    assert "题面见它旁边的 README.zh.md" in chinese.stdout, chinese.stdout
    english = _judge("practice/", "--problems", str(problems), "-j", "1", cwd=tmp_path)
    assert "(the statement is README.md beside it)" in english.stdout, english.stdout


def test_judge_grade_lang_zh_writes_chinese_feedback(tmp_path: Path, problems: Path) -> None:
    subs = tmp_path / "subs"
    subs.mkdir()
    wrong = (FIXTURE_PROBLEMS / "fx-add" / "wrong" / "subtracts.py").read_text()
    with zipfile.ZipFile(subs / "s1.zip", "w") as archive:
        archive.writestr("fx-add/adder.py", wrong)
    out = tmp_path / "out"
    done = _judge("grade", str(subs), "-o", str(out), "--problems", str(problems), "-j", "1", "--lang", "zh",
                  cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    feedback = (out / "feedback" / "s1.md").read_text(encoding="utf-8")
    assert feedback.startswith("# s1 的反馈\n\n总分：**1 / 4** 分。\n"), feedback
    assert "| 题目 | 得分 | 结论 |" in feedback and "公开测试：" in feedback


# -- the CLI's errors ------------------------------------------------------------------------------

def test_cli_errors_in_chinese_with_lang_zh(tmp_path: Path, problems: Path) -> None:
    missing = _judge("grade", "nowhere", "-o", str(tmp_path / "out"), "--problems", str(problems), "--lang", "zh",
                     cwd=tmp_path)
    assert missing.returncode == 2
    assert missing.stderr.strip() == "错误：nowhere：没有这个提交文件夹或提交", missing.stderr
    unknown = _judge("export", "gradescope", "-o", str(tmp_path / "a.zip"), "--problems", str(problems),
                     "--problem", "nope", "--lang", "zh", cwd=tmp_path)
    assert unknown.returncode == 2 and "错误：--problem：未知的题目 nope" in unknown.stderr, unknown.stderr
    bad_id = _judge("new", "Bad_Id", "--problems", str(tmp_path / "new"), "--lang", "zh", cwd=tmp_path)
    assert bad_id.returncode == 2
    assert "错误：'Bad_Id' 不是有效的 id：请用小写字母、数字和 '-'" in bad_id.stderr, bad_id.stderr
    # our own check of an option's value, inside argparse's (English) frame
    zero = _judge("practice/", "-j", "0", "--lang", "zh", cwd=tmp_path)
    assert zero.returncode == 2 and "argument -j: 必须至少为 1" in zero.stderr, zero.stderr
    # the same error in English without --lang (LANG=C.UTF-8), and in Chinese from the environment
    english = _judge("grade", "nowhere", "-o", str(tmp_path / "out"), "--problems", str(problems), cwd=tmp_path)
    assert english.stderr.strip() == "error: nowhere: no such submissions folder or submission"
    by_env = _judge("grade", "nowhere", "-o", str(tmp_path / "out"), "--problems", str(problems), cwd=tmp_path,
                    lang_env="zh_CN.UTF-8")
    assert by_env.stderr.strip() == "错误：nowhere：没有这个提交文件夹或提交"


def test_a_bad_problem_toml_is_reported_in_chinese(tmp_path: Path, problems: Path) -> None:
    toml = problems / "fx-add" / "problem.toml"
    toml.write_text(toml.read_text().replace('title = ', 'titel = ').replace('time_limit = 5', 'time_limit = 900'))
    done = _judge("check", str(problems), "--lang", "zh", "-j", "1", cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "problem.toml：3 处问题：" in done.stdout, done.stdout
    assert "  - 未知字段 'titel'（是不是想写 'title'？）" in done.stdout
    assert "  - 缺少字段 'title'" in done.stdout
    assert "  - field 'time_limit': 900 必须在 0 到 600 秒之间" in done.stdout  # the field's name stays as written
    missing = _judge("check", str(tmp_path / "nothing"), "--lang", "zh", cwd=tmp_path)
    assert missing.returncode == 2 and f"错误：{tmp_path / 'nothing'}：没有这个题目文件夹" in missing.stdout


# -- a problem's messages in the learner's language (judge.lang) -----------------------------------

def test_say_picks_the_learners_language_and_falls_back_to_english() -> None:
    from judge.lang import language, say, tests_language

    assert language() == "en" and say("one over", zh="多了一个") == "one over"
    with tests_language("zh_CN.UTF-8"):
        assert language() == "zh-CN"
        assert say("one over", zh="多了一个") == "多了一个"  # zh-CN finds zh
        assert say("only in English") == "only in English"  # no translation: English
        assert say("one over", zh="") == "one over"  # an empty translation is a missing one
    with tests_language("pt-BR"):
        assert say("one", pt_BR="um", pt="uno") == "um" and say("one", pt="uno") == "uno"
    with tests_language(None):
        assert language() == "en"


def _practice_with_wrong(tmp_path: Path, problem: str, wrong: str) -> Path:
    """A practice folder holding ``problem`` with its ``wrong/`` solution as the learner's file."""
    from judge.commands.practice import create_practice
    from judge.core.problem import load_problem
    from judge.core.wrong import wrong_source

    loaded = load_problem(ROOT / "problems" / problem)
    create_practice(tmp_path / "practice", [loaded])
    (tmp_path / "practice" / problem / loaded.entry).write_text(
        wrong_source(loaded, loaded.path / "wrong" / wrong), encoding="utf-8")
    return tmp_path / "practice" / problem


def test_a_problem_hint_in_chinese_and_in_english_without_a_translation(tmp_path: Path) -> None:
    """pp-1f1b-emulated's tests give the warm-up diagnosis in Chinese with --lang zh (the page's language,
    in the browser); a language the tests have no words for reads the English hint."""
    folder = _practice_with_wrong(tmp_path, "pp-1f1b-emulated", "warmup_one_extra.diff")
    run = ("practice/pp-1f1b-emulated", "--problems", str(ROOT / "problems"), "--public-only", "-k",
           "order_is_1f1b", "--timeout", "120", "-j", "1")
    chinese = _judge(*run, "--lang", "zh", cwd=tmp_path)
    assert chinese.returncode == 1, chinese.stdout + chinese.stderr
    assert "预热数量多了一个" in chinese.stdout and "the warm-up count is one over" not in chinese.stdout, chinese.stdout
    assert "stage 0：预期 F0 F1 B0 F2 B1 F3 B2 B3，实际 F0 F1 F2 B0 F3 B1 B2 B3" in chinese.stdout
    french = _judge(*run, "--lang", NO_CATALOG, cwd=tmp_path)
    assert "the warm-up count is one over" in french.stdout and "预热" not in french.stdout, french.stdout
    assert folder.is_dir()


def test_the_p2p_runtimes_messages_read_in_the_learners_language() -> None:
    """pp-1f1b-emulated's runtime (its deadlock report among them) speaks the learner's language, and
    the hint the wrong solution declares for zh is found in the Chinese run's messages."""
    from judge.commands.hints import hint_phrases, messages
    from judge.core.problem import load_problem
    from judge.core.wrong import wrong_source
    from judge.engines.native import Job, judge_many

    problem = load_problem(ROOT / "problems" / "pp-1f1b-emulated")
    wrong = problem.path / "wrong" / "blocking_send.diff"
    assert hint_phrases(wrong) == ["ranks wait in sends for partners"]
    [zh_hint] = hint_phrases(wrong, "zh")
    [result] = judge_many([Job(problem, None, include_secret=False, keyword="gradients_match_full_batch and 2-4",
                               time_limit=120, source=wrong_source(problem, wrong), lang="zh")])
    text = messages(result)
    assert "你的循环在 blocking=False 时死锁了" in text and zh_hint in text, text
    assert "ranks wait in sends for partners" not in text


TAMPER = '''\
def add(a, b):
    import judge.lang as lang  # the learner's own process: nothing here reaches the tests
    lang._language = "en"
    lang.say = lambda en, **kw: "passed"
    return a - b
'''


def test_learner_code_cannot_change_the_tests_language_or_words(tmp_path: Path, problems: Path) -> None:
    _judge("practice/", "--problems", str(problems), "-j", "1", cwd=tmp_path)  # creates practice/
    (tmp_path / "practice" / "fx-add" / "adder.py").write_text(TAMPER, encoding="utf-8")
    run = _judge("practice/", "--problems", str(problems), "--lang", "zh", "-j", "1", cwd=tmp_path)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "未通过  fx-add" in run.stdout and "得分率 0%" in run.stdout, run.stdout


# ten messages of a French catalog that is partial (docs/i18n.md: a language may land a few messages at a time)
FRENCH = {"FAIL": "ÉCHEC", "fail": "échec", "error": "erreur", "TODO": "À FAIRE", "Run": "Lancer", "Stop": "Arrêter",
          "Reset": "Réinitialiser", "passed": "réussi", "failed": "échoué",
          "{passed} of {total} tests passed": "{passed} tests réussis sur {total}"}


def _partial_french(locale_dir: Path, mark: bool = True) -> None:
    """``pybabel init -l fr`` from the template, ten messages translated, compiled, beside the real catalogs."""
    from babel.messages.catalog import Catalog
    from babel.messages.pofile import write_po

    shutil.copytree(LOCALE_DIR, locale_dir, ignore=shutil.ignore_patterns("fr"))  # a real fr catalog too, one day
    with open(LOCALE_DIR / "judge.pot", "rb") as f:
        template = read_po(f)
    comment = "# French translations for pp-judge" + (f" ({PARTIAL}: the others read in English)." if mark else ".")
    catalog = Catalog(locale="fr", domain="judge", header_comment=comment, project="pp-judge")
    catalog.update(template)
    for msgid, text in FRENCH.items():
        catalog[msgid].string = text
    folder = locale_dir / "fr" / "LC_MESSAGES"
    folder.mkdir(parents=True)
    with open(folder / "judge.po", "wb") as f:
        write_po(f, catalog)
    with open(folder / "judge.mo", "wb") as f:
        write_mo(f, _catalog("fr", locale_dir))


def test_a_partial_catalog_passes_the_checks_and_falls_back_to_english_per_message(tmp_path, monkeypatch) -> None:
    import judge.i18n

    _partial_french(tmp_path / "locale")
    monkeypatch.setattr(judge.i18n, "LOCALE_DIR", tmp_path / "locale")
    assert _catalog_faults("fr", _catalog("fr", tmp_path / "locale")) == []  # the suite's own catalog checks
    assert available_languages() == sorted({*LANGUAGES, "fr"})
    report = _report("fr")
    assert report.startswith("ÉCHEC") and "    échec  test_add[1-2]\n" in report and "    erreur  test_big" in report
    assert "Summary: 0 of 2 problems solved" in report  # not translated yet: in English, message by message
    with use_language("fr"):  # an untranslated plural: in English, by English's plural rule (not French's)
        assert ngettext("{passed} of {n} public test passed", "{passed} of {n} public tests passed", 0) == \
            "{passed} of {n} public tests passed"
    french = site_catalogs()["catalogs"]["fr"]["messages"]
    assert {key: french[key] for key in FRENCH} == FRENCH and len(french) == len(FRENCH)


def test_a_catalog_that_does_not_say_it_is_partial_must_translate_every_message(tmp_path) -> None:
    _partial_french(tmp_path / "locale", mark=False)
    faults = _catalog_faults("fr", _catalog("fr", tmp_path / "locale"))
    assert faults and all(fault.startswith("fr: no translation of ") for fault in faults)
    assert len(faults) == len(_marked()) - len(FRENCH)
