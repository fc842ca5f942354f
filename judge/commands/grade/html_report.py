"""report.html: one self-contained page about the class (no scripts, no network), printable.

Per problem: the distribution of scores (an inline SVG histogram) and the mean; each test's pass
rate, hardest first; the most frequent failure messages; then the submissions that could not be
read, errored or timed out. Every piece of text from a submission is HTML-escaped.
"""

from __future__ import annotations

import html
import re
from collections import Counter
from statistics import mean, median

from ...core.result import Result
from . import ClassGrades
from .outputs import number

BUCKETS = 10
TOP_MESSAGES = 8
_NUMBERS = re.compile(r"\d+(\.\d+)?")

_STYLE = """
body { font: 15px/1.45 system-ui, sans-serif; margin: 2rem auto; max-width: 60rem; color: #1d2430; padding: 0 1rem; }
h1 { font-size: 1.6rem; } h2 { margin-top: 2.2rem; border-bottom: 1px solid #ccd; padding-bottom: .2rem; }
table { border-collapse: collapse; width: 100%; margin: .6rem 0 1.2rem; }
th, td { text-align: left; padding: .25rem .5rem; border-bottom: 1px solid #e3e6ee; vertical-align: top; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.bar { display: inline-block; height: .7rem; background: #3b6fd8; vertical-align: middle; }
.bar.bad { background: #d8563b; }
code, pre { font: 13px/1.35 ui-monospace, monospace; white-space: pre-wrap; word-break: break-word; }
.muted { color: #5b6475; }
svg text { font: 11px system-ui, sans-serif; fill: #1d2430; }
@media print { body { margin: 0; max-width: none; } h2 { break-after: avoid; } table, svg { break-inside: avoid; } }
"""


def render_report(grades: ClassGrades) -> str:
    """The whole page as text."""
    parts = [_summary(grades)]
    for problem in grades.problems:
        results = [r for g in grades.graded for r in g.results if g.submitted(problem.id) and r.problem == problem.id]
        parts.append(_problem_section(problem.id, problem.title, results, grades.max_points(problem.id)))
    parts.append(_trouble(grades))
    body = "\n".join(parts)
    return (f"<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            f"<title>Class report</title>\n<style>{_STYLE}</style>\n</head>\n<body>\n{body}\n</body>\n</html>\n")


def _summary(grades: ClassGrades) -> str:
    totals = [g.points for g in grades.graded]
    rows = [("submissions", str(len(grades.graded))),
            ("points available", number(grades.max_total)),
            ("mean total", number(mean(totals)) if totals else "-"),
            ("median total", number(median(totals)) if totals else "-"),
            ("could not be read", str(sum(bool(g.submission.error) for g in grades.graded)))]
    table = "".join(f"<tr><th>{html.escape(k)}</th><td class=\"num\">{v}</td></tr>" for k, v in rows)
    problems = ", ".join(html.escape(p.id) for p in grades.problems)
    return (f"<h1>Class report</h1>\n<p class=\"muted\">Problems: {problems}.</p>\n"
            f"<table style=\"width:auto\">{table}</table>")


def _problem_section(problem_id: str, title: str, results: list[Result], max_points: float) -> str:
    head = f"<h2>{html.escape(problem_id)}: {html.escape(title)}</h2>"
    if not results:
        return head + "\n<p class=\"muted\">No submission contains this problem.</p>"
    shares = [r.points / max_points if max_points else 0.0 for r in results]
    intro = (f"<p>{len(results)} submitted; mean {number(mean(r.points for r in results))} of "
             f"{number(max_points)} points; {sum(r.status == 'passed' for r in results)} passed every test.</p>")
    return "\n".join([head, intro, _histogram(shares), _test_rates(results), _messages(results)])


def _histogram(shares: list[float]) -> str:
    counts = [0] * BUCKETS
    for share in shares:
        counts[min(BUCKETS - 1, int(share * BUCKETS))] += 1
    width, height, top = 520, 150, max(counts) or 1
    step = width / BUCKETS
    bars = []
    for index, count in enumerate(counts):
        bar = (height - 30) * count / top
        x, y = index * step + 4, height - 18 - bar
        bars.append(f"<rect x=\"{x:.1f}\" y=\"{y:.1f}\" width=\"{step - 8:.1f}\" height=\"{bar:.1f}\" fill=\"#3b6fd8\">"
                    f"<title>{count} submissions</title></rect>"
                    f"<text x=\"{x + (step - 8) / 2:.1f}\" y=\"{y - 3:.1f}\" text-anchor=\"middle\">"
                    f"{count or ''}</text>"
                    f"<text x=\"{x + (step - 8) / 2:.1f}\" y=\"{height - 4}\" text-anchor=\"middle\">"
                    f"{index * 100 // BUCKETS}%</text>")
    return (f"<svg role=\"img\" aria-label=\"distribution of scores\" width=\"{width}\" height=\"{height}\" "
            f"viewBox=\"0 0 {width} {height}\" xmlns=\"http://www.w3.org/2000/svg\">{''.join(bars)}</svg>")


def _test_rates(results: list[Result]) -> str:
    passed: Counter[str] = Counter()
    seen: Counter[str] = Counter()
    names: dict[str, str] = {}
    for result in results:
        for test in result.tests:
            seen[test.id] += 1
            passed[test.id] += test.outcome == "passed"
            names[test.id] = f"{test.name}{' (secret)' if test.visibility == 'secret' else ''}"
    if not seen:
        return "<p class=\"muted\">No test ran (every run errored or timed out).</p>"
    rows = []
    for test_id in sorted(seen, key=lambda t: (passed[t] / seen[t], t)):
        rate = passed[test_id] / seen[test_id]
        rows.append(f"<tr><td>{html.escape(names[test_id])}</td><td class=\"num\">{passed[test_id]}/{seen[test_id]}"
                    f"</td><td><span class=\"bar{' bad' if rate < .5 else ''}\" style=\"width:{rate * 8:.2f}rem\">"
                    f"</span> {rate:.0%}</td></tr>")
    return ("<details open><summary>Pass rate of each test, hardest first</summary><table><tr><th>test</th>"
            f"<th class=\"num\">passed</th><th>rate</th></tr>{''.join(rows)}</table></details>")


def _messages(results: list[Result]) -> str:
    counts: Counter[str] = Counter()
    example: dict[str, str] = {}
    for result in results:
        lines = {(t.message or t.outcome).splitlines()[0] for t in result.tests if t.outcome in ("failed", "error")}
        if result.status in ("error", "timeout") and result.message:
            lines.add(result.message.splitlines()[0])
        for line in lines:  # once per submission: how many students hit it
            key = _NUMBERS.sub("N", line)[:300]
            counts[key] += 1
            example.setdefault(key, line)
    if not counts:
        return ""
    rows = "".join(f"<tr><td class=\"num\">{n}</td><td><code>{html.escape(example[key][:500])}</code></td></tr>"
                   for key, n in counts.most_common(TOP_MESSAGES))
    return ("<p>Most frequent failure messages (numbers aside; submissions that hit each):</p>"
            "<table><tr><th class=\"num\">submissions</th><th>message (first line, one example)</th></tr>"
            f"{rows}</table>")


def _trouble(grades: ClassGrades) -> str:
    rows = []
    for item in sorted(grades.graded, key=lambda g: g.student):
        if item.submission.error:
            rows.append((item.student, "(whole submission)", "unreadable", item.submission.error))
            continue
        for result in item.results:
            if result.status in ("error", "timeout") and item.submitted(result.problem):
                rows.append((item.student, result.problem, result.status, result.message.splitlines()[0]
                             if result.message else ""))
    if not rows:
        return "<h2>Errors and timeouts</h2>\n<p>None.</p>"
    body = "".join("<tr>" + "".join(f"<td>{html.escape(cell)}</td>" for cell in row) + "</tr>" for row in rows)
    return ("<h2>Errors and timeouts</h2>\n<table><tr><th>student</th><th>problem</th><th>status</th>"
            f"<th>why</th></tr>{body}</table>")
