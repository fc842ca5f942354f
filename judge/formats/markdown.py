"""Quoting text in Markdown, for the outputs that are Markdown (Gradescope's, judge grade's feedback files).

The words a report quotes may be the learner's (an exception's message, a file name in a zip): quoted
here, they show as written, never as a link, an image, emphasis, a table cell or HTML of their own.
"""

from __future__ import annotations

import re


def fence(text: str) -> str:
    """``text`` as a Markdown code block whose fence no backtick run inside it can close."""
    text = text.rstrip("\n")
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    marks = "`" * max(3, longest + 1)
    return f"{marks}text\n{text}\n{marks}"


def code_span(text: str, in_table: bool = False) -> str:
    """``text`` (one line) as a Markdown code span no backtick run inside it can close: the learner's words
    quoted in Markdown show as written, never as a link, an image, emphasis or HTML. ``in_table``: its pipes
    escaped too, which a table cell needs even inside code (GitHub's tables)."""
    text = " ".join(text.splitlines())
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    marks = "`" * (longest + 1)
    span = f"{marks} {text} {marks}"  # a space inside each side, stripped by the renderer
    return span.replace("|", "\\|") if in_table else span


def plain_text(text: str, in_table: bool = False) -> str:
    """``text`` (a sentence of the judge's that names the learner's files) escaped so that it renders as
    written: no emphasis, link, image, code or HTML of its own (a bare address may still be shown as a link
    by renderers that make links of them). ``in_table``: its pipes escaped too."""
    escaped = _MARKDOWN.sub(r"\\\g<0>", " ".join(text.splitlines()))
    return escaped.replace("|", "\\|") if in_table else escaped


_MARKDOWN = re.compile(r"[\\`*_\[\]<]")  # what starts emphasis, code, a link or image, HTML (and the escape)
