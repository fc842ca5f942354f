"""report.html from ``judge grade`` opens in Chromium from a file, with no console errors and no requests."""

from __future__ import annotations

import json
import shutil
import subprocess
import zipfile

from judge.commands.grade import Options, grade_class
from judge.core.problem import discover_problems
from judge.core.wrong import wrong_source
from tests.conftest import PROBLEMS, SOLUTIONS
from tests.judged import SharedResults


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
    assert page.locator("svg[aria-label='distribution of scores'] rect").count() == 11  # 100 % has its own bin
    text = page.locator("body").inner_text()
    assert "pp-quiz" in text and "Errors and timeouts" in text
    submitted = 1 + len(quiz.wrong_files) + 1  # the reference, each wrong/ solution, the looper
    assert f"{submitted} submitted;" in text, "unreadable submissions are not counted as submitting the problem"
    assert "timed out after 1 s" in text and "not a readable zip file" in text
    assert "<img src=x onerror=alert(1)>" in text  # shown as text, not run
    hardest = page.locator("h2 ~ table").filter(has=page.locator("td.rate")).first.locator("tr").count()
    rest = page.locator("details:not([id]) table tr").count()
    tests = len(json.loads((out / "results" / "ref.json").read_text(encoding="utf-8"))["results"][0]["tests"])
    assert (hardest, rest) == (1 + 10, 1 + tests - 10), f"the 10 hardest of the quiz's {tests} tests shown, the rest folded"
    lines = page.evaluate("""() => [...document.querySelectorAll('td.rate')].filter((td) => td.offsetParent)
        .map((td) => td.getClientRects()[0].height / parseFloat(getComputedStyle(td).lineHeight || '20'))""")
    assert lines and max(lines) < 2, f"a pass rate wraps onto a second line: {lines}"
    page.close()


BAR_BLUE = (0x3B, 0x6F, 0xD8)  # the histogram's and the pass-rate bars' colour


def _pixels_near(ppm: bytes, colour: tuple[int, int, int], tolerance: int = 40) -> int:
    """How many pixels of a binary PPM (pdftoppm -ppm) are within ``tolerance`` of ``colour``."""
    header = ppm.split(maxsplit=4)  # P6, width, height, maxval, data
    assert header[0] == b"P6"
    data = header[4]
    return sum(1 for i in range(0, len(data) - 2, 3)
               if all(abs(data[i + k] - colour[k]) <= tolerance for k in range(3)))


def test_printed_report_is_a_few_legible_pages_with_its_charts(browser, tmp_path):
    """Chromium's print to PDF: the charts print (in colour), the folded parts (every student's code) do not."""
    pdftoppm = shutil.which("pdftoppm")
    assert pdftoppm, "pdftoppm (poppler-utils, installed by .ci/setup) turns the PDF into pictures"
    problems, _ = discover_problems(PROBLEMS)
    by_id = {p.id: p for p in problems}
    subs = tmp_path / "subs"
    for index in range(20):  # a class of 20: references, starters and wrong solutions mixed
        subs.mkdir(exist_ok=True)
        with zipfile.ZipFile(subs / f"s{index:02d}.zip", "w") as archive:
            for problem in by_id.values():
                wrongs = problem.wrong_files
                code = (problem.reference_path.read_text() if index % 3 == 0 else problem.starter if index % 3 == 1
                        else wrong_source(problem, wrongs[index % len(wrongs)]))
                archive.writestr(f"{problem.id}/{problem.entry}", code)
    out = tmp_path / "out"
    # the Results the sweeps over problems/ share (tests/judged.py): this test is about the printed page
    grade_class(subs, out, problems, Options(parallel=2, similarity=None, engine=SharedResults()))
    page = browser.new_page()
    page.goto((out / "report.html").as_uri())
    pdf = tmp_path / "report.pdf"
    page.pdf(path=str(pdf), format="A4")
    page.close()
    subprocess.run([pdftoppm, "-r", "40", str(pdf), str(tmp_path / "page")], check=True, timeout=120)
    pages = sorted(tmp_path.glob("page-*.ppm"))
    # a few pages: the summary, its charts and tables, and per learning objective the students below
    # the threshold (about 40 objectives over 8 problems, each naming its students): 15 pages here
    assert 1 <= len(pages) <= 16, f"{len(pages)} pages for a class of 20"
    blue = [_pixels_near(p.read_bytes(), BAR_BLUE) for p in pages]
    assert sum(b > 50 for b in blue) >= len(pages) // 2, f"bars printed on too few pages: {blue}"
