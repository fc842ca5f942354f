"""The command line: ``python -m judge`` (also installed as ``judge``).

    judge PATH [options]          judge a practice folder (created from the starters if missing)
    judge check [PROBLEMS ...]    verify problem folders (instructors)
    judge new ID                  scaffold a problem folder
    judge build SITE_DIR          write the static web site
    judge serve                   build and serve the site on localhost
    judge grade SUBMISSIONS -o OUT  grade a class's submissions (instructors)
    judge export PLATFORM -o OUT    package the problems for Gradescope, GitHub Classroom, PrairieLearn

This module only assembles the commands of :data:`judge.commands.COMMANDS` (each declares its
arguments and its handler in its own module) and is the one place that turns a
:class:`judge.core.errors.JudgeError` into a message and an exit code
(:class:`judge.core.errors.ExitCode`): 0 everything passed, 1 something failed, 2 usage or setup error.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from .. import __version__
from ..core.errors import ExitCode, JudgeError
from ..i18n import _, available_languages, has_catalog, use_language
from ..sandbox.forking import ctrl_c_latched
from . import COMMANDS, DEFAULT


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``judge ARGV``: the command it names (judge.commands.COMMANDS); its exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    command = COMMANDS[argv[0] if argv and argv[0] in COMMANDS and argv[0] != DEFAULT else DEFAULT]
    if command.name != DEFAULT:
        argv = argv[1:]
    lang = _lang_option(argv)
    try:
        with use_language(lang):
            parser = command.parser(__version__)
            args = parser.parse_args(argv)  # argparse's own words stay English; ours (-j's check) are translated
            _language_note(lang)
            with ctrl_c_latched():
                return command.run(args)
    except JudgeError as exc:  # every error the user can fix, from every command (judge.core.errors)
        with use_language(lang):
            print(_("error: {message}").format(message=exc), file=sys.stderr)
        return int(exc.exit_code)
    except KeyboardInterrupt:
        with use_language(lang):
            print(_("interrupted"), file=sys.stderr)
        return ExitCode.INTERRUPTED
    except BrokenPipeError:  # the reader went away (e.g. `judge check | head`): stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return ExitCode.FAILED


def _lang_option(argv: list[str]) -> str | None:
    """The value of ``--lang`` (the last one given), read before parsing: the parser's own checks speak it too."""
    lang = None
    for i, arg in enumerate(argv):
        if arg == "--":
            break
        if arg == "--lang" and i + 1 < len(argv):
            lang = argv[i + 1]
        elif arg.startswith("--lang="):
            lang = arg.split("=", 1)[1]
    return lang or None


def _language_note(lang: str | None) -> None:
    """A language asked for with --lang that has no catalog: the messages read in English, said once."""
    if lang and not has_catalog(lang):
        print(_("note: the judge's messages have no {lang} translation (there are: en, {languages}); they read in "
                "English").format(lang=lang, languages=", ".join(available_languages())), file=sys.stderr)



def parsers() -> dict[str, argparse.ArgumentParser]:
    """Every command's parser, by name (``judge`` for ``judge PATH``)."""
    return {name: command.parser(__version__) for name, command in COMMANDS.items()}
