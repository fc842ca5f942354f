"""A problem's statement in several languages: ``README.md`` (the default, English) and
``README.<lang>.md`` beside it (``README.zh.md``; docs/problem-format.md).

A translation says the same in another language: ``judge check`` holds it to the default's rules
for links and assets, and to the same function signatures in its code blocks. A language without a
translation reads the default statement.
"""

from __future__ import annotations

import re
from pathlib import Path

DEFAULT = "README.md"
DEFAULT_LANGUAGE = "en"
_TRANSLATION = re.compile(r"README\.([a-z]{2,3}(?:-[A-Za-z0-9]{2,8})?)\.md")
# a definition (``def f(x) -> int:``) or a signature written on its own (``def f(x) -> int``, ``def f(x): ...``)
_DEF = re.compile(r"^[ \t]*(?:async[ \t]+)?def[ \t]+(\w+)[ \t]*\((.*?)\)[ \t]*(?:->(.*?))?"
                  r"(?::[ \t]*(?:\.\.\.)?)?[ \t]*(?:#[^\n]*)?$", re.MULTILINE | re.DOTALL)


def translations(folder: Path) -> dict[str, Path]:
    """The statement's translations in ``folder``: language (``zh``) -> ``README.<lang>.md``."""
    found = {}
    for path in sorted(folder.glob("README.*.md")):
        match = _TRANSLATION.fullmatch(path.name)
        if match and path.is_file():
            found[match.group(1)] = path
    return found


def is_translation(name: str) -> bool:
    """Whether a file name is a statement's translation (``README.zh.md``)."""
    return _TRANSLATION.fullmatch(name) is not None


def statement_file(folder: Path, lang: str) -> Path:
    """The statement a reader of ``lang`` gets: its translation (``zh-CN`` reads ``README.zh.md`` when
    there is no ``README.zh-CN.md``), else the default (English)."""
    found = translations(folder)
    return found.get(lang) or found.get(lang.split("-")[0]) or folder / DEFAULT


def signatures(text: str) -> list[str]:
    """The function signatures (``def name(args) -> returns``) of a statement's code blocks, in order,
    their white space normalised."""
    from .site.markdown import code_blocks

    found = []
    for block in code_blocks(text):
        for name, args, returns in _DEF.findall(block):
            args = re.sub(r"\s+", " ", args).strip().rstrip(",")
            found.append(f"def {name}({args})" + (f" -> {' '.join(returns.split())}" if returns.strip() else ""))
    return found
