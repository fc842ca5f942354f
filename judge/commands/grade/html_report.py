"""report.html: one self-contained page about the class (no scripts, no network) that prints legibly.

Per problem: the distribution of scores (an inline SVG histogram of eleven bins, 100 % in its
own), each test's pass rate (the hardest :data:`HARDEST_SHOWN` always shown, the rest folded), the
most frequent failure messages (numbers folded, each counted once per submission: the number is
how many submissions hit it). Then the submissions that could not be read, errored or timed
out; the pairs of students whose code is similar (:mod:`.similarity`); and each student's code
beside their Result, folded. Folded parts (``<details>``) stay out of a printout, the bars
print in colour (``print-color-adjust``), so the printed report is a few pages whatever the class
size. Every piece of text from a submission is HTML-escaped.
"""

from __future__ import annotations

import html
import re
from collections import Counter
from statistics import mean, median

from ...core.problem import Problem
from ...core.result import Result
from ...formats.objectives import objective_lines
from ...formats.points import text
from .feedback import verdict
from .model import ClassGrades, Graded, safe_name
from .similarity import INSTALL_HINT, Pair, identical_groups

BINS = 11  # 0-9 %, 10-19 %, ..., 90-99 %, and 100 % alone
TOP_MESSAGES = 8
HARDEST_SHOWN = 10
_NUMBERS = re.compile(r"\d+(\.\d+)?")

_STYLE = """
body { font: 15px/1.45 system-ui, sans-serif; margin: 2rem auto; max-width: 64rem; color: #1d2430; padding: 0 1rem; }
h1 { font-size: 1.6rem; } h2 { margin-top: 2.2rem; border-bottom: 1px solid #ccd; padding-bottom: .2rem; }
table { border-collapse: collapse; width: 100%; margin: .6rem 0 1.2rem; }
th, td { text-align: left; padding: .25rem .5rem; border-bottom: 1px solid #e3e6ee; vertical-align: top; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.rate { white-space: nowrap; width: 11rem; }
.bar { display: inline-block; height: .7rem; background: #3b6fd8; vertical-align: middle; }
.bar.bad { background: #d8563b; }
.bar, svg rect { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
code, pre { font: 13px/1.35 ui-monospace, monospace; white-space: pre-wrap; word-break: break-word; }
pre { background: #f5f6f9; padding: .5rem; margin: .3rem 0; max-height: 30rem; overflow: auto; }
.side { display: grid; grid-template-columns: minmax(0, 3fr) minmax(0, 2fr); gap: 1rem; }
.muted { color: #5b6475; }
svg text { font: 11px system-ui, sans-serif; fill: #1d2430; }
@media print {
  body { margin: 0; max-width: none; font-size: 11px; }
  h2, p:has(+ table) { break-after: avoid; margin-top: 1rem; } table, svg, .side { break-inside: avoid; }
  details:not([open]) { display: none; } pre { max-height: none; }
}
"""


def render_report(grades: ClassGrades, pairs: list[Pair] | None = None) -> str:
    """The whole page as text."""
    from .feedback import untouched

    parts = [_summary(grades)]
    for problem in grades.problems:  # an untouched starter is not a submission of the problem
        results = [r for g in grades.graded for r in g.results if g.submitted(problem.id) and r.problem == problem.id
                   and not untouched(g, problem) and problem.id not in g.submission.unreadable]  # judged ones
        parts.append(_problem_section(problem, results, grades.max_points(problem.id)))
        parts.append(_struggling(grades, problem))
    parts += [_trouble(grades), _similarity(pairs, grades), _students(grades)]
    body = "\n".join(parts)
    return (f"<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            f"<title>Class report</title>\n<style>{_STYLE}</style>\n</head>\n<body>\n{body}\n</body>\n</html>\n")


def _summary(grades: ClassGrades) -> str:
    late = grades.options.late
    students = grades.students
    totals = [float(g.total(late)) for g in students if not g.no_grade(grades.options)]  # as the gradebooks have them
    unreadable = sum(bool(g.unreadable) for g in students)
    rows = [("submissions", str(len(students))),
            ("points available", text(grades.max_total)),
            ("mean total", text(mean(totals)) if totals else "-"),
            ("median total", text(median(totals)) if totals else "-"),
            ("no grade (could not be read)" if not grades.options.zero_unreadable else "could not be read (0 given)",
             str(unreadable))]
    strays = len(grades.graded) - len(students)
    if strays:
        rows.append(("loose files of no student (not graded)", str(strays)))
    table = "".join(f"<tr><th>{html.escape(k)}</th><td class=\"num\">{v}</td></tr>" for k, v in rows)
    problems = ", ".join(html.escape(p.id) for p in grades.problems)
    regraded = (f"<p>This run regraded <a href=\"#{_anchor(grades.regraded)}\">{html.escape(grades.regraded)}</a>; "
                "the other rows are as they were stored.</p>" if grades.regraded else "")
    return (f"<h1>Class report</h1>\n<p class=\"muted\">Problems: {problems}.</p>\n{regraded}"
            f"<table style=\"width:auto\">{table}</table>")


def _problem_section(problem: Problem, results: list[Result], max_points: float) -> str:
    head = f"<h2>{html.escape(problem.id)}: {html.escape(problem.title)}</h2>"
    if not results:
        return head + "\n<p class=\"muted\">No submission contains this problem.</p>"
    shares = [r.points / max_points if max_points else 0.0 for r in results]
    intro = (f"<p>{len(results)} submitted; mean {text(mean(r.points for r in results))} of "
             f"{text(max_points)} points; {sum(r.status == 'passed' for r in results)} passed every test.</p>")
    return "\n".join([head, intro, histogram(shares), _objective_means(results), _test_rates(results),
                      _messages(results)])


def _objective_means(results: list[Result]) -> str:
    """The class's mean points per learning objective (nothing when the problem declares none)."""
    earned: dict[str, list[float]] = {}
    worth: dict[str, tuple[str, float]] = {}
    for result in results:
        for objective in result.objectives:
            earned.setdefault(objective.id, []).append(objective.points)
            worth[objective.id] = (objective.title, objective.max_points)
    if not worth:
        return ""
    rows = "".join(f"<tr><td>{html.escape(title)}</td><td class=\"num\">{text(mean(earned[key]))} / "
                   f"{text(points)}</td></tr>" for key, (title, points) in worth.items())
    return ("<p>Mean points per objective:</p><table style=\"width:auto\"><tr><th>objective</th>"
            f"<th class=\"num\">mean</th></tr>{rows}</table>")


def _struggling(grades: ClassGrades, problem: Problem) -> str:
    """Per objective, the students below the threshold of its points: whom to help with what."""
    from .objectives import struggling

    threshold = grades.options.objective_threshold
    below = struggling(grades, problem, threshold)
    if not any(students for _, students in below):
        return ""
    rows = "".join(f"<tr><td>{html.escape(column.title)}</td><td class=\"num\">{len(students)}</td><td>"
                   + ", ".join(_link(s) for s in students) + "</td></tr>" for column, students in below if students)
    return (f"<p>Below {threshold:.0%} of an objective's points (students who handed this problem in; "
            "objectives.csv has every student's points per objective):</p>"
            "<table class=\"struggling\"><tr><th>objective</th><th class=\"num\">students</th><th>who</th></tr>"
            f"{rows}</table>")


def bin_of(share: float) -> int:
    """The histogram bin of a score's share of the points: 0..9 by tenths, 10 for full marks only."""
    return BINS - 1 if share >= 1 else min(BINS - 2, int(share * 10))


def histogram(shares: list[float]) -> str:
    """An SVG bar chart of how many submissions scored in each bin."""
    counts = [0] * BINS
    for share in shares:
        counts[bin_of(share)] += 1
    width, height, top = 572, 150, max(counts) or 1
    step = width / BINS
    bars = []
    for index, count in enumerate(counts):
        bar = (height - 30) * count / top
        x, y = index * step + 4, height - 18 - bar
        label = "100%" if index == BINS - 1 else f"{index * 10}-{index * 10 + 9}%"
        bars.append(f"<rect x=\"{x:.1f}\" y=\"{y:.1f}\" width=\"{step - 8:.1f}\" height=\"{bar:.1f}\" fill=\"#3b6fd8\">"
                    f"<title>{label}: {count} submissions</title></rect>"
                    f"<text x=\"{x + (step - 8) / 2:.1f}\" y=\"{y - 3:.1f}\" text-anchor=\"middle\">"
                    f"{count or ''}</text>"
                    f"<text x=\"{x + (step - 8) / 2:.1f}\" y=\"{height - 4}\" text-anchor=\"middle\">{label}</text>")
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
    rows = [_rate_row(names[t], passed[t], seen[t]) for t in sorted(seen, key=lambda t: (passed[t] / seen[t], t))]
    head = "<tr><th>test</th><th class=\"num\">passed</th><th>rate</th></tr>"
    shown = f"<p>Pass rate of the hardest tests:</p><table>{head}{''.join(rows[:HARDEST_SHOWN])}</table>"
    rest = rows[HARDEST_SHOWN:]
    return shown + (f"<details><summary>The other {len(rest)} tests</summary><table>{head}{''.join(rest)}"
                    "</table></details>" if rest else "")


def _rate_row(name: str, passed: int, seen: int) -> str:
    rate = passed / seen
    return (f"<tr><td>{html.escape(name)}</td><td class=\"num\">{passed}/{seen}</td><td class=\"rate\">"
            f"<span class=\"bar{' bad' if rate < .5 else ''}\" style=\"width:{rate * 7:.2f}rem\"></span> "
            f"{rate:.0%}</td></tr>")


def failure_keys(result: Result) -> dict[str, str]:
    """The failure messages of one submission's run, numbers folded: key -> one example line."""
    lines = [(t.message or t.outcome).splitlines()[0] for t in result.tests
             if t.outcome in ("failed", "error") and (t.message or t.outcome).strip()]
    if result.status in ("error", "timeout") and result.message:
        lines.append(result.message.splitlines()[0])
    keys: dict[str, str] = {}
    for line in lines:
        keys.setdefault(_NUMBERS.sub("N", line)[:300], line)
    return keys


def _messages(results: list[Result]) -> str:
    counts: Counter[str] = Counter()
    example: dict[str, str] = {}
    for result in results:
        keys = failure_keys(result)
        counts.update(list(keys))  # once per submission: how many students hit it
        for key, line in keys.items():
            example.setdefault(key, line)
    if not counts:
        return ""
    rows = "".join(f"<tr><td class=\"num\">{n}</td><td><code>{html.escape(example[key][:500])}</code></td></tr>"
                   for key, n in counts.most_common(TOP_MESSAGES))
    return ("<p>Most frequent failure messages (numbers aside):</p>"
            "<table><tr><th class=\"num\">submissions</th><th>message (first line, one example)</th></tr>"
            f"{rows}</table>")


def _trouble(grades: ClassGrades) -> str:
    rows = []
    for item in grades.graded:
        if item.submission.error:
            rows.append((item.student, "(whole submission)", "unreadable", item.submission.error))
            continue
        for result in item.results:
            if result.status in ("error", "timeout") and item.submitted(result.problem):
                rows.append((item.student, result.problem, result.status, result.message.splitlines()[0]
                             if result.message else ""))
    if not rows:
        return "<h2>Errors and timeouts</h2>\n<p>None.</p>"
    body = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>" for row in rows)
    return ("<h2>Errors and timeouts</h2>\n<table><tr><th>student</th><th>problem</th><th>status</th>"
            f"<th>why</th></tr>{body}</table>")


def _similarity(pairs: list[Pair] | None, grades: ClassGrades) -> str:
    head = "<h2>Similar code</h2>\n"
    if grades.options.similarity is None:
        return head + "<p class=\"muted\">Not computed (--similarity off).</p>"
    if pairs is None:
        return head + f"<p class=\"muted\">Not computed: it needs copydetect (<code>{INSTALL_HINT}</code>).</p>"
    intro = (f"<p>Pairs whose code for a problem overlaps by at least {grades.options.similarity:.0%} "
             "(copydetect's fingerprints, the starter's code left out; also in similarity.csv):</p>")
    if not pairs:
        return head + intro + "<p>None.</p>"
    same = "".join(f"<tr><td>{html.escape(problem)}</td><td>{', '.join(_link(s) for s in students)}</td></tr>"
                   for problem, students in identical_groups(pairs))
    rows = "".join(f"<tr><td>{html.escape(p.problem)}</td><td>{_link(p.first)}</td><td>{_link(p.second)}</td>"
                   f"<td class=\"num\">{p.first_share:.0%} / {p.second_share:.0%}</td></tr>"
                   for p in pairs if not p.identical)
    return (head + intro
            + (f"<p>Byte-identical code:</p><table><tr><th>problem</th><th>students</th></tr>{same}</table>"
               if same else "")
            + (f"<p>Similar code:</p><table><tr><th>problem</th><th>student</th><th>student</th>"
               f"<th class=\"num\">shared</th></tr>{rows}</table>" if rows else ""))


def _students(grades: ClassGrades) -> str:
    blocks = [_student(item, grades) for item in grades.students]
    return "<h2>Each student's code and Result</h2>\n" + "\n".join(blocks)


def _student(item: Graded, grades: ClassGrades) -> str:
    late = grades.options.late
    total = ("no grade" if item.no_grade(grades.options)
             else f"{text(item.total(late))} / {text(grades.max_total)}")
    summary = (f"{html.escape(item.student)}: {total} "
               f"<span class=\"muted\">{html.escape(item.status)}</span>")
    sides = []
    for problem, result in zip(grades.problems, item.results):
        code = item.submission.sources.get(problem.id)
        left = (f"<pre>{html.escape(code)}</pre>" if code is not None
                else "<p class=\"muted\">(no code)</p>")
        sides.append(f"<h3>{html.escape(problem.id)}</h3><div class=\"side\"><div>{left}</div>"
                     f"<div>{_result_side(item, problem, result, grades)}</div></div>")
    return (f"<details id=\"{_anchor(item.student)}\"{' open' if item.student == grades.regraded else ''}>"
            f"<summary>{summary}</summary>{''.join(sides)}</details>")


def _result_side(item: Graded, problem: Problem, result: Result, grades: ClassGrades) -> str:
    lines = [f"<p><b>{text(result.points)} / {text(grades.max_points(problem.id))}</b>: "
             f"{html.escape(verdict(item, problem, result))}</p>"]
    if result.objectives:
        lines.append("<ul>" + "".join(f"<li>{html.escape(line)}</li>" for line in objective_lines(result)) + "</ul>")
    failing = [t for t in result.tests if t.outcome != "passed"]
    lines += [f"<p><code>{html.escape(t.name)}</code>{' (secret)' if t.visibility == 'secret' else ''}: "
              f"{html.escape((t.message or t.outcome).splitlines()[0][:300])}</p>" for t in failing[:8]]
    if len(failing) > 8:
        lines.append(f"<p class=\"muted\">and {len(failing) - 8} more failing tests</p>")
    return "".join(lines)


def _anchor(student: str) -> str:
    return "student-" + html.escape(safe_name(student))


def _link(student: str) -> str:
    return f"<a href=\"#{_anchor(student)}\">{html.escape(student)}</a>"
