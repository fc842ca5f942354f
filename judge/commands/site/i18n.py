"""The page's own words in the reader's language: the judge's gettext catalogs, carried into the site.

The page's messages live in the same catalogs as the judge's (``judge/locale/<lang>/LC_MESSAGES/judge.po``,
docs/i18n.md): ``web/js/*.js`` marks them with ``_()`` / ``ngettext()`` / ``N_()`` (Babel's
``javascript`` extractor reads them) and ``web/index.html`` with ``data-i18n`` and ``data-i18n-attr``
attributes (:func:`extract_html`, named in ``babel.cfg``, reads those). :func:`site_catalogs` reads
each compiled ``.mo`` with the standard library's :mod:`gettext` and gives the site configuration
its messages (``config.i18n``, which ``web/js/i18n.js`` reads); the build needs no Babel.
"""

from __future__ import annotations

import gettext
import html
import re
from collections.abc import Iterator
from html.parser import HTMLParser
from typing import IO, Any

from ...i18n import available_languages, translation

#: Each language's name in itself, for the page's language menu (a language missing here shows its code).
LANGUAGE_NAMES = {"en": "English", "zh": "中文"}

_PLURAL = re.compile(r"plural\s*=\s*([^;]+)")


def site_catalogs() -> dict[str, Any]:
    """``{"languages": {code: name}, "catalogs": {lang: {"plural": expr, "messages": {...}}}}``: every
    message of each compiled catalog (a plural message as the list of its forms) and the catalog's
    plural rule (a C expression of ``n``, as in its ``Plural-Forms`` header)."""
    catalogs = {lang: _catalog(lang) for lang in available_languages()}
    return {"languages": dict(LANGUAGE_NAMES), "catalogs": catalogs}


def _catalog(lang: str) -> dict[str, Any]:
    compiled = translation(lang)
    # what the standard library parsed from the .mo: msgid -> text, (msgid, i) -> the i-th plural form
    parsed: dict[Any, str] = vars(compiled).get("_catalog", {})
    messages: dict[str, Any] = {}
    for key, text in sorted(parsed.items(), key=lambda item: repr(item[0])):
        if isinstance(key, tuple):
            forms = messages.setdefault(key[0], [])
            forms.extend([""] * (key[1] + 1 - len(forms)))
            forms[key[1]] = text
        elif key and text:
            messages[key] = text
    match = _PLURAL.search(compiled.info().get("plural-forms", ""))
    plural = match.group(1).strip() if match else "n != 1"
    gettext.c2py(plural)  # a valid gettext plural expression, or ValueError
    return {"plural": plural, "messages": dict(sorted(messages.items()))}


# ---------------------------------------------------------------------------------------------
# the extractor of web/index.html's static words (for pybabel; see babel.cfg)

_VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
_SPACE = re.compile(r"\s+")


def _normal(text: str) -> str:
    return _SPACE.sub(" ", text).strip()


class _Marked(HTMLParser):
    """Collects (line, message) for elements with ``data-i18n`` (their text, or with ``="html"`` their
    markup as the browser serialises it) and the attributes ``data-i18n-attr`` names."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[tuple[int, str]] = []
        self.open: list[dict[str, Any]] = []  # the marked elements being read: {tag, depth, html, parts, line}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        line = self.getpos()[0]
        for name in (values.get("data-i18n-attr") or "").split():
            if values.get(name):
                self.found.append((line, _normal(values[name] or "")))
        for item in self.open:
            if item["html"]:
                shown = "".join(f' {k}="{html.escape(v or "", quote=True)}"' for k, v in attrs)
                item["parts"].append(f"<{tag}{shown}>")
        if tag in _VOID:
            return
        for item in self.open:
            item["depth"] += 1
        if "data-i18n" in values:
            self.open.append({"depth": 1, "html": values["data-i18n"] == "html", "parts": [], "line": line})

    def handle_endtag(self, tag: str) -> None:
        if tag in _VOID:
            return
        for item in list(self.open):
            item["depth"] -= 1
            if item["depth"] == 0:
                self.open.remove(item)
                self.found.append((item["line"], _normal("".join(item["parts"]))))
            elif item["html"]:
                item["parts"].append(f"</{tag}>")

    def handle_data(self, data: str) -> None:
        for item in self.open:
            item["parts"].append(html.escape(data, quote=False) if item["html"] else data)


def extract_html(fileobj: IO[bytes], keywords: Any, comment_tags: Any, options: Any
                 ) -> Iterator[tuple[int, str | None, str, list[str]]]:
    """A Babel extraction method for the page's static words (``data-i18n``, ``data-i18n-attr``)."""
    parser = _Marked()
    parser.feed(fileobj.read().decode(options.get("encoding", "utf-8") if options else "utf-8"))
    parser.close()
    for line, message in parser.found:
        if message:
            yield line, None, message, []
