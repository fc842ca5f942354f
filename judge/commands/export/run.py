"""Grade one submission against a bundle on a grading platform, and write the platform's result file.

    python -m judge.commands.export.run FORMAT --bundle DIR --submission PATH -o FILE [--sandbox LEVEL]
        [--sandbox-user NAME] [--github-output]

With ``--github-output`` (GitHub Classroom), each problem's runner result, base64, is also
appended to ``$GITHUB_OUTPUT`` as ``<runner>=<value>`` (:func:`judge.formats.github_classroom.runner_outputs`:
two runners per problem, each within the limits of a step's environment), which the workflow hands
to the grading reporter as ``<RUNNER>_RESULTS``.

FORMAT is gradescope, prairielearn or github-classroom (a format of :mod:`judge.formats`). The
submission (a folder, a zip, or a folder holding one zip) is read into memory by
:func:`judge.commands.grade.submissions.read_submission`, never extracted; every problem of the bundle is
judged with its public and secret tests and scored against the bundle's canonical Results, as
``judge grade`` does. A problem that was not submitted is worth its points and earns 0.

The learner's code runs in a sandboxed learner process (``--sandbox``, default: bubblewrap when it
works, else as root the unprivileged ``--sandbox-user``; :mod:`judge.sandbox.levels`); the tests and
the judge stay in their own process, so the code can neither stop them nor write the result file.
A level that cannot be used is an error that names the fix (the platform scripts run this before
the first submission: a set-up that would grade wrong fails loudly). The exit code is 0 whenever
the result file was written, whatever the grade: platforms read the file, not the code.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ...core.errors import ExitCode, JudgeError, UsageError
from ...core.problem import Problem
from ...core.result import Result
from ...core.scoring import rescore
from ...formats.points import add, text
from ...i18n import _, current_language, use_language
from ...lang import tests_language
from ...sandbox.levels import Sandbox
from ..grade.submissions import Submission, read_submission
from ..options import sandbox_options
from .bundle import Bundle, read_bundle

FORMATS = ("gradescope", "prairielearn", "github-classroom")
CHECK = "check-sandbox"


@dataclass
class Graded:
    """One submission's Results, scored, and why it could not be read (if so)."""

    results: list[Result]
    submission_error: str
    seconds: float


def grade(bundle: Bundle, submission_path: Path, sandbox: Sandbox | None = None, parallel: int = 1) -> Graded:
    """Judge ``submission_path`` against every problem of ``bundle`` (learner code at ``sandbox``'s level)."""
    from ...engines.native import Job, judge_many

    started = time.monotonic()
    submission = read_any(submission_path, bundle.problems)
    timeout = bundle.config.get("timeout")
    todo = [p for p in bundle.problems if p.id in submission.sources]
    share = _wall_share(bundle.config.get("budget"), len(todo))
    jobs = [Job(p, None, include_secret=True, time_limit=timeout, source=submission.sources[p.id], wall_limit=share)
            for p in todo]
    judged = dict(zip((p.id for p in todo), judge_many(jobs, parallel, sandbox=sandbox)))
    results = []
    for problem in bundle.problems:
        result = judged.get(problem.id) or Result.error(problem.id, _why_not_judged(submission, problem.id))
        canonical = bundle.canonical[problem.id]
        with tests_language(current_language()):  # titles and notes in the learner's language
            result = rescore(result, canonical, problem)
        result.max_points = canonical.max_points
        results.append(result)
    return Graded(results, _unreadable(submission), time.monotonic() - started)


def _wall_share(budget: float | None, jobs: int) -> float | None:
    """Each job's wall-clock backstop where the platform stops the whole grading after a time (config.json's
    ``budget``): an equal share of it, as if the jobs ran one after another (a named sandbox user is one
    identity, whose jobs take turns). The CPU time limits are unchanged: only code that waits, or a grading host
    far too busy, meets this bound, and then the result file is written in time, saying so."""
    if budget is None or jobs == 0:
        return None
    return float(budget) / jobs


def read_any(path: Path, problems: list[Problem]) -> Submission:
    """Read a submission folder or zip; a folder holding nothing but one zip (an upload) is read as that zip."""
    submission = read_submission(path, problems)
    if path.is_dir() and submission.error and not submission.sources:
        zips = [p for p in path.iterdir() if p.suffix.lower() == ".zip" and p.is_file() and not p.is_symlink()]
        if len(zips) == 1:
            inner = read_submission(zips[0], problems)
            inner.student = submission.student
            return inner
    return submission


def _why_not_judged(submission: Submission, pid: str) -> str:
    reason = submission.error or submission.unreadable.get(pid)
    return (_("not judged: {reason}").format(reason=reason) if reason
            else _("not submitted: no file for this problem in the submission"))


def _unreadable(submission: Submission) -> str:
    """Why nothing of the submission could be judged ("" when something could)."""
    if submission.sources:
        return ""
    return submission.error or "; ".join(f"{pid}: {why}" for pid, why in sorted(submission.unreadable.items()))


def write(format_name: str, graded: Graded, bundle: Bundle, out: Path, github_output: bool = False) -> str:
    """Render ``graded`` in ``format_name`` to ``out``; with ``github_output`` also each runner's result."""
    from ...formats import FormatContext, get

    context = FormatContext(problems={p.id: p for p in bundle.problems}, execution_time=graded.seconds,
                            feedback=bundle.config.get("feedback", "names"), submission_error=graded.submission_error)
    text = get(format_name).render(graded.results, context)
    out.parent.mkdir(parents=True, exist_ok=True)
    _write_atomically(out, text)
    if github_output:
        from ...formats.github_classroom import runner_outputs

        _append_github_output(runner_outputs(graded.results, context))
    return text


def _write_atomically(out: Path, text: str) -> None:
    """``out`` replaced in one step by a file made here (never opened through a link someone planted)."""
    import tempfile

    fd, temporary = tempfile.mkstemp(prefix=".results-", dir=out.parent)
    try:
        with open(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.chmod(temporary, 0o644)
        os.replace(temporary, out)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def _append_github_output(outputs: dict[str, str]) -> None:
    target = os.environ.get("GITHUB_OUTPUT")
    if not target:
        raise UsageError("--github-output needs the GITHUB_OUTPUT environment variable (set by GitHub Actions)")
    with open(target, "a", encoding="utf-8") as handle:
        handle.writelines(f"{name}={value}\n" for name, value in outputs.items())


def choose_sandbox(args: argparse.Namespace, bundle: Bundle) -> Sandbox:
    """The run's sandbox (probed once), said on stderr with the warning of a plain level."""
    from ...sandbox.levels import choose, problems_options

    sandbox = choose(args.sandbox, user=args.sandbox_user, grading=True, unattended=True,
                     **problems_options(bundle.problems))
    print(f"Sandbox: {sandbox.summary}" + (f" [{sandbox.note}]" if sandbox.note else ""), file=sys.stderr)
    if sandbox.warning:
        print(f"warning: {sandbox.warning}", file=sys.stderr)
    return sandbox


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(allow_abbrev=False, prog="python -m judge.commands.export.run",
                                     description="Grade one submission "
                                     "against a judge bundle and write a grading platform's result file.")
    parser.add_argument("format", choices=(*FORMATS, CHECK), help=f"the result's format; {CHECK}: only check "
                        "that learner code can be sandboxed here (the platform's set-up runs this)")
    parser.add_argument("--bundle", type=Path, required=True, metavar="DIR", help="the bundle an export wrote")
    parser.add_argument("--submission", type=Path, metavar="PATH",
                        help="a folder (practice/ layout, a web-app zip's content or loose entry files) or a zip")
    parser.add_argument("-o", "--out", type=Path, metavar="FILE", help="the result file to write")
    sandbox_options(parser)
    parser.add_argument("--github-output", action="store_true",
                        help="also append result=<base64 of the result> to $GITHUB_OUTPUT")
    parser.add_argument("-j", dest="parallel", type=int, default=os.cpu_count() or 1, metavar="N")
    parser.add_argument("--lang", metavar="LANG", help="the language of what the student reads (default: the "
                        "bundle's, which `judge export --lang` set; English without one)")
    args = parser.parse_args(argv)
    if args.format != CHECK and (args.submission is None or args.out is None):
        parser.error("--submission and -o are required")
    try:
        bundle = read_bundle(args.bundle)
    except JudgeError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return ExitCode.USAGE
    # the student's language, baked into the bundle: the result file's words and the tests' messages
    with use_language(args.lang or bundle.config.get("lang") or "en"):
        try:
            if args.format == CHECK:
                choose_sandbox(args, bundle)
                return ExitCode.OK
            if not args.submission.exists():
                raise UsageError(_("{path}: no such submission").format(path=args.submission))
            graded = grade(bundle, args.submission, choose_sandbox(args, bundle), max(1, args.parallel))
            write(args.format, graded, bundle, args.out, args.github_output)
        except JudgeError as exc:
            print(_("error: {message}").format(message=exc), file=sys.stderr)
            return ExitCode.USAGE
    points, worth = add(r.points for r in graded.results), add(r.max_points for r in graded.results)
    print(f"Wrote {args.out}: {text(points)} of {text(worth)} points.")
    return ExitCode.OK


if __name__ == "__main__":
    sys.exit(main())
