"""The site's title and introduction, set by the course: ``judge build --title/--intro`` or ``course.toml``.

A problems folder may hold ``course.toml`` (beside the problem folders)::

    title = "Distributed training, week 3"
    intro = "Solve these before Friday's lab. *Graded* work is judged with `judge grade`."

``--title`` and ``--intro`` (Markdown) override it. The build writes the title into the page's
``<title>``, its top bar and its home heading, and the introduction (rendered) in place of the
home page's first paragraph; without either, the page keeps the judge's own wording.
"""

from __future__ import annotations

import html
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from ...core.errors import JudgeError
from ...i18n import _
from .markdown import render_markdown

COURSE_FILE = "course.toml"
_TITLE = re.compile(r"<title>[^<]*</title>")
# the judge's own wording carries data-i18n (web/js/i18n.js translates it); the course's does not
_BRAND = re.compile(r'(<a class="brand" href="#/")(?: data-i18n)?(>)[^<]*(</a>)')
_HEADING = re.compile(r'(<section id="home" class="home" hidden>\s*<h1)(?: data-i18n)?(>)[^<]*(</h1>)')
_FIRST_PARAGRAPH = re.compile(r'(<section id="home" class="home" hidden>\s*<h1[^>]*>[^<]*</h1>\s*)<p[^>]*>.*?</p>',
                              re.S)


@dataclass(frozen=True)
class CourseText:
    """What the course says on its site (empty: the judge's own wording)."""

    title: str = ""
    intro: str = ""  # Markdown


def course_text(problems_dir: Path, title: str | None = None, intro: str | None = None) -> CourseText:
    """``course.toml`` of ``problems_dir`` (if any), with ``title`` and ``intro`` taking precedence."""
    data: dict[str, object] = {}
    path = problems_dir / COURSE_FILE
    if path.is_file():
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, tomllib.TOMLDecodeError) as exc:
            raise JudgeError(_("{path}: not valid TOML ({error})").format(path=path, error=exc)) from None
        unknown = sorted(set(data) - {"title", "intro", "assignments"})  # assignments: judge.commands.assignments
        if unknown or not all(isinstance(data.get(k, ""), str) for k in ("title", "intro")):
            raise JudgeError(_("{path}: only the text fields title and intro are known (got {fields})").format(
                path=path, fields=", ".join(data)))
    chosen = CourseText(str(title if title is not None else data.get("title", "")).strip(),
                        str(intro if intro is not None else data.get("intro", "")).strip())
    if "\n" in chosen.title:
        raise JudgeError(_("the site's title must be one line"))
    return chosen


def apply_course_text(page: str, text: CourseText) -> str:
    """``page`` (web/index.html) with the course's title and introduction in place."""
    if text.title:
        escaped = html.escape(text.title)
        page = _TITLE.sub(f"<title>{escaped}</title>", page, count=1)
        page = _BRAND.sub(lambda m: m.group(1) + m.group(2) + escaped + m.group(3), page, count=1)
        page = _HEADING.sub(lambda m: m.group(1) + m.group(2) + escaped + m.group(3), page, count=1)
    if text.intro:
        rendered = render_markdown(text.intro, None)
        page = _FIRST_PARAGRAPH.sub(lambda m: m.group(1) + rendered, page, count=1)
    return page
