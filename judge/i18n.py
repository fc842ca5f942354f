"""The judge's own words in the reader's language: one gettext catalog per language.

The sources are ``judge/locale/<lang>/LC_MESSAGES/judge.po``, compiled to ``judge.mo`` beside them
(both ship in the wheel); the standard library's :mod:`gettext` reads the ``.mo`` files at run time,
natively and in Pyodide. A message marked with :func:`_` (or :func:`ngettext`, or :func:`N_` for a
constant translated where it is used) that a catalog lacks reads in English, as does every message
when no catalog matches the language. Updating the catalogs (docs/i18n.md)::

    pybabel extract -F babel.cfg -o judge/locale/judge.pot --no-location --sort-output .
    pybabel update -i judge/locale/judge.pot -d judge/locale -D judge --no-fuzzy-matching
    pybabel compile -d judge/locale -D judge
"""

from __future__ import annotations

import gettext
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

LOCALE_DIR = Path(__file__).resolve().parent / "locale"
DOMAIN = "judge"
_ENV = ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG")  # where gettext looks, in its order
_active: gettext.NullTranslations = gettext.NullTranslations()
_active_language = "en"  # the language asked for (``zh``, ``pt-BR``), whether or not it has a catalog


def available_languages() -> list[str]:
    """The languages with a compiled catalog, besides English (the messages as written)."""
    if not LOCALE_DIR.is_dir():
        return []
    return sorted(p.name for p in LOCALE_DIR.iterdir() if (p / "LC_MESSAGES" / f"{DOMAIN}.mo").is_file())


def translation(lang: str | None = None) -> gettext.NullTranslations:
    """The catalog for ``lang`` (``zh``, ``zh-CN``, ``zh_CN.UTF-8``); without one, the environment's
    (``$LANGUAGE``, ``$LC_ALL``, ``$LC_MESSAGES``, ``$LANG``); English when none matches."""
    languages = [lang.replace("-", "_")] if lang else None
    found = gettext.translation(DOMAIN, str(LOCALE_DIR), languages=languages, fallback=True)
    _drop_untranslated(found)
    return found


def _drop_untranslated(found: gettext.NullTranslations) -> None:
    """A partial catalog's untranslated plurals read in English, by English's plural rule, as its
    untranslated singulars do. Babel's compiler writes an untranslated plural with the English forms as
    its translation, which would follow the catalog's plural rule (French would say "0 test passed")
    and reach the page as a translation: such a plural (its first form the English singular) is dropped."""
    catalog: dict[Any, str] = vars(found).get("_catalog", {})
    english = {key[0] for key, text in catalog.items() if isinstance(key, tuple) and key[1] == 0 and text == key[0]}
    for key in [key for key in catalog if isinstance(key, tuple) and key[0] in english]:
        del catalog[key]


def requested_language() -> str | None:
    """The language the environment asks for, as gettext reads it (None when unset)."""
    for name in _ENV:
        if os.environ.get(name):
            return os.environ[name].split(":")[0]
    return None


def normalize(lang: str | None) -> str:
    """A language as a statement's file name spells it: ``zh_CN.UTF-8`` -> ``zh-CN``, ``C`` -> ``en``."""
    tag = (lang or "").split(":")[0].split(".")[0].split("@")[0].replace("_", "-")
    return "en" if tag in ("", "C", "POSIX") else tag


def current_language() -> str:
    """The language :func:`use_language` made active (``en`` outside it): what the judge's words are in,
    and what the problems' tests are told (:mod:`judge.lang`)."""
    return _active_language


def has_catalog(lang: str) -> bool:
    """Whether ``lang`` is English or has a catalog (``zh_CN`` finds ``zh``)."""
    if lang.replace("-", "_").split("_")[0].split(".")[0] in ("en", "C", "POSIX"):
        return True
    return type(translation(lang)) is not gettext.NullTranslations


@contextmanager
def use_language(lang: str | None = None) -> Iterator[gettext.NullTranslations]:
    """Within the block, :func:`_` translates into ``lang`` (None: the environment's language)."""
    global _active, _active_language
    before = _active, _active_language
    _active, _active_language = translation(lang), normalize(lang or requested_language())
    try:
        yield _active
    finally:
        _active, _active_language = before


def _(message: str) -> str:
    """``message`` in the active language (English when it has no translation)."""
    return _active.gettext(message)


def ngettext(singular: str, plural: str, n: int) -> str:
    """The singular or plural form for ``n``, in the active language."""
    return _active.ngettext(singular, plural, n)


def N_(message: str) -> str:
    """Marks ``message`` for the catalog, untranslated: a constant that :func:`_` translates where it is used."""
    return message
