"""report.html from ``judge grade`` opens in Chromium from a file, with no console errors and no requests."""

from __future__ import annotations

import shutil
import zipfile

from judge.commands.grade import Options, grade_class
from judge.core.problem import discover_problems
from judge.core.wrong import wrong_source
from tests.conftest import PROBLEMS, SOLUTIONS


def test_report_renders_offline_without_errors(browser, tmp_path):
    problems, _ = discover_problems(PROBLEMS / "pp-quiz")
    quiz = problems[0]
    subs = tmp_path / "subs"
    subs.mkdir()
    with zipfile.ZipFile(subs / "ref.zip", "w") as archive:
        archive.writestr("pp-quiz/quiz.py", quiz.reference_path.read_text())
    for index, wrong in enumerate(quiz.wrong_files):
        folder = subs / f"wrong{index}" / "pp-quiz"
        folder.mkdir(parents=True)
        (folder / "quiz.py").write_text(wrong_source(quiz, wrong), encoding="utf-8")
    (subs / "broken.zip").write_bytes(b"not a zip <script>alert(1)</script>")
    (subs / "<img src=x onerror=alert(1)>").mkdir()  # an empty submission, with a name that is HTML
    (subs / "looper" / "pp-quiz").mkdir(parents=True)
    shutil.copy(SOLUTIONS / "loop_at_import.py", subs / "looper" / "pp-quiz" / "quiz.py")
    out = tmp_path / "out"
    grade_class(subs, out, problems, Options(parallel=2, timeout=1))

    page = browser.new_page()
    messages, requests = [], []
    page.on("console", lambda m: messages.append(f"{m.type}: {m.text}"))
    page.on("pageerror", lambda e: messages.append(f"pageerror: {e}"))
    page.on("dialog", lambda d: (messages.append(f"dialog: {d.message}"), d.dismiss()))
    page.on("request", lambda r: requests.append(r.url))
    page.goto((out / "report.html").as_uri())
    page.wait_for_load_state("load")
    assert messages == []
    assert [url for url in requests if not url.startswith("file:")] == []
    assert page.locator("h1").inner_text() == "Class report"
    assert page.locator("svg[aria-label='distribution of scores'] rect").count() == 10
    text = page.locator("body").inner_text()
    assert "pp-quiz" in text and "Errors and timeouts" in text
    submitted = 1 + len(quiz.wrong_files) + 1  # the reference, each wrong/ solution, the looper
    assert f"{submitted} submitted;" in text, "unreadable submissions are not counted as submitting the problem"
    assert "timed out after 1 s" in text and "not a readable zip file" in text
    assert "<img src=x onerror=alert(1)>" in text  # shown as text, not run
    rates = page.locator("details table tr").count()
    assert rates == 1 + 12, "one row per quiz test, after the header"
    page.close()
