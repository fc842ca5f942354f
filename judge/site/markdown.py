"""Statement rendering: a problem's README.md to HTML at site build time.

CommonMark (markdown-it-py) with tables, plus math in the delimiters the problem format allows:
``\\( ... \\)`` and ``$ ... $`` inline, ``$$ ... $$`` and ``\\[ ... \\]`` display. Math is not typeset
here: it is emitted as ``<span class="math inline">TeX</span>`` / ``<div class="math block">TeX</div>``
with the TeX HTML-escaped, and KaTeX typesets those elements in the browser. Raw HTML in the
Markdown is escaped (statements are text, not markup). Fenced code keeps its ``language-*`` class
so the page can highlight Python.
"""

from __future__ import annotations

from markdown_it import MarkdownIt
from markdown_it.common.utils import escapeHtml
from markdown_it.rules_block import StateBlock
from markdown_it.rules_inline import StateInline
from mdit_py_plugins.dollarmath import dollarmath_plugin

__all__ = ["render_markdown", "make_renderer"]


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


def make_renderer() -> MarkdownIt:
    """The configured Markdown renderer (CommonMark + tables + math)."""
    md = MarkdownIt("commonmark", {"html": False, "typographer": False}).enable("table")
    md.use(dollarmath_plugin, allow_labels=False, allow_space=False, allow_digits=False,
           double_inline=True, renderer=lambda content, _opts: escapeHtml(content))
    md.add_render_rule("math_inline_double", _render_inline_display)
    md.inline.ruler.before("escape", "math_inline_bracket", _bracket_inline)
    md.block.ruler.before("fence", "math_block_bracket", _bracket_block,
                          {"alt": ["paragraph", "reference", "blockquote", "list"]})
    return md


_MD = make_renderer()


def render_markdown(text: str) -> str:
    """Render a statement to an HTML fragment (math left for KaTeX in the browser)."""
    return _MD.render(text)
