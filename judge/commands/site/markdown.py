"""Statement rendering: a problem's README.md to HTML at site build time.

CommonMark (markdown-it-py) with tables, plus math in the delimiters the problem format allows:
``\\( ... \\)`` and ``$ ... $`` inline, ``$$ ... $$`` and ``\\[ ... \\]`` display. Math is not typeset
here: it is emitted as ``<span class="math inline">TeX</span>`` / ``<div class="math block">TeX</div>``
with the TeX HTML-escaped, and KaTeX typesets those elements in the browser. Raw HTML in the
Markdown is escaped (statements are text, not markup). Fenced code keeps its ``language-*`` class
so the page can highlight Python.

Links and images with a relative target are found on markdown-it's token stream
(:func:`statement_links`, which ``judge check`` resolves against the practice folder), and
``render_markdown(text, assets_url=...)`` points those into the problem's ``assets/`` folder at
where the site serves that folder.
"""

from __future__ import annotations

import posixpath
import unicodedata
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass

from markdown_it import MarkdownIt
from markdown_it.common.utils import escapeHtml
from markdown_it.rules_block import StateBlock
from markdown_it.rules_inline import StateInline
from markdown_it.token import Token
from mdit_py_plugins.dollarmath import dollarmath_plugin

__all__ = ["render_markdown", "statement_title", "make_renderer", "statement_links", "relative_path", "Link",
           "code_blocks"]


def _bracket_inline(state: StateInline, silent: bool) -> bool:
    """Inline math between ``\\(`` and ``\\)``; runs before the escape rule would eat the backslash."""
    src, pos = state.src, state.pos
    if not src.startswith("\\(", pos):
        return False
    end = src.find("\\)", pos + 2)
    if end < 0:
        return False
    if not silent:
        token = state.push("math_inline", "math", 0)
        token.content = src[pos + 2:end]
        token.markup = "\\("
    state.pos = end + 2
    return True


def _bracket_block(state: StateBlock, start: int, end: int, silent: bool) -> bool:
    """Display math between ``\\[`` and ``\\]``, on one line or several."""
    if state.sCount[start] - state.blkIndent >= 4:
        return False
    first = state.bMarks[start] + state.tShift[start]
    line = state.src[first:state.eMarks[start]]
    if not line.startswith("\\["):
        return False
    body = line[2:]
    last = start
    close = body.find("\\]")
    if close < 0:
        parts = [body]
        last = start + 1
        while last < end:
            text = state.src[state.bMarks[last] + state.tShift[last]:state.eMarks[last]]
            close = text.find("\\]")
            if close >= 0:
                parts.append(text[:close])
                tail = text[close + 2:]
                break
            parts.append(text)
            last += 1
        else:
            return False
        content = "\n".join(parts)
    else:
        content, tail = body[:close], body[close + 2:]
    if tail.strip():
        return False
    if silent:
        return True
    state.line = last + 1
    token = state.push("math_block", "math", 0)
    token.block = True
    token.content = content
    token.markup = "\\["
    token.map = [start, state.line]
    return True


def _render_inline_display(self, tokens, idx, options, env) -> str:  # noqa: ANN001
    """``$$...$$`` inside a paragraph: display math, as a span so the paragraph stays valid HTML."""
    return f'<span class="math display">{escapeHtml(tokens[idx].content.strip())}</span>'


def _is_wide(char: str) -> bool:
    """A character of a script written without spaces between words (Chinese, Japanese)."""
    return unicodedata.east_asian_width(char) in ("W", "F")


def _neighbour_text(tokens: list[Token], idx: int, step: int) -> str:
    """The text next to ``tokens[idx]`` in direction ``step``, across emphasis marks; "" if none."""
    idx += step
    while 0 <= idx < len(tokens) and (tokens[idx].type.endswith(("_open", "_close"))
                                      or (tokens[idx].type == "text" and not tokens[idx].content)):
        idx += step
    if 0 <= idx < len(tokens) and tokens[idx].type == "text":
        return tokens[idx].content
    return ""


def _render_softbreak(self: object, tokens: list[Token], idx: int, options: object, env: object) -> str:
    """A line break inside a paragraph: a space in a browser, except between two wide characters.

    Markdown joins a paragraph's lines with a space, which a Chinese sentence wrapped across lines
    must not get (the browser would show a stray space between two characters).
    """
    before, after = _neighbour_text(tokens, idx, -1), _neighbour_text(tokens, idx, 1)
    if before and after and _is_wide(before[-1]) and _is_wide(after[0]):
        return ""
    return "\n"


def make_renderer() -> MarkdownIt:
    """The configured Markdown renderer (CommonMark + tables + math)."""
    md = MarkdownIt("commonmark", {"html": False, "typographer": False}).enable("table")
    md.use(dollarmath_plugin, allow_labels=False, allow_space=False, allow_digits=False,
           double_inline=True, renderer=lambda content, _opts: escapeHtml(content))
    md.add_render_rule("math_inline_double", _render_inline_display)
    md.add_render_rule("softbreak", _render_softbreak)
    md.inline.ruler.before("escape", "math_inline_bracket", _bracket_inline)
    md.block.ruler.before("fence", "math_block_bracket", _bracket_block,
                          {"alt": ["paragraph", "reference", "blockquote", "list"]})
    return md


_MD = make_renderer()


def render_markdown(text: str, assets_url: str | None = None) -> str:
    """Render a statement to an HTML fragment (math left for KaTeX in the browser).

    With ``assets_url`` (e.g. ``"assets/problem-x-1a2b/"``), relative links and images into the
    statement's ``assets/`` folder are rewritten to point there instead.
    """
    if assets_url is None:
        return _MD.render(text)
    env: dict[str, object] = {}
    tokens = _MD.parse(text, env)
    for token, attr, _line in _link_tokens(tokens):
        token.attrSet(attr, _rebase(str(token.attrGet(attr)), assets_url))
    return _MD.renderer.render(tokens, _MD.options, env)


def statement_title(text: str) -> str | None:
    """The text of a statement's first top-level heading (``# Title``), None without one."""
    tokens = _MD.parse(text)
    for i, token in enumerate(tokens[:-1]):
        if token.type == "heading_open" and token.tag == "h1":
            return tokens[i + 1].content.strip() or None
    return None


@dataclass(frozen=True)
class Link:
    """A link or image of a statement: its target as written (URL-encoded) and its line (1-based)."""

    kind: str  # "image" or "link"
    url: str
    line: int


def statement_links(text: str) -> list[Link]:
    """Every link and image of a statement, in order (reference-style links resolved)."""
    return [Link("image" if token.type == "image" else "link", str(token.attrGet(attr)), line)
            for token, attr, line in _link_tokens(_MD.parse(text))]


def code_blocks(text: str) -> list[str]:
    """The text of every fenced or indented code block of a statement, in order."""
    return [token.content for token in _MD.parse(text) if token.type in ("fence", "code_block")]


def relative_path(url: str) -> str | None:
    """The file a relative link points at (decoded, normalised), or None for a URL, an absolute
    path or an anchor on the same page."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme or parts.netloc or not parts.path or parts.path.startswith("/"):
        return None
    return posixpath.normpath(urllib.parse.unquote(parts.path))


def _link_tokens(tokens: list[Token]) -> Iterator[tuple[Token, str, int]]:
    """(token, attribute, line) for every image (``src``) and link (``href``) token."""
    line = 1
    for block in tokens:
        if block.map:
            line = block.map[0] + 1
        for child in block.children or ():
            if child.type == "image":
                yield child, "src", line
            elif child.type == "link_open":
                yield child, "href", line


def _rebase(url: str, assets_url: str) -> str:
    path = relative_path(url)
    if path is None or not path.startswith("assets/"):
        return url
    parts = urllib.parse.urlsplit(url)
    rest = urllib.parse.quote(path[len("assets/"):], safe="/")
    return urllib.parse.urlunsplit(("", "", assets_url + rest, parts.query, parts.fragment))
