"""``--watch``: judge again whenever one of the learner's files is saved."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path


def watch_and_rerun(paths: list[Path], judge_once: Callable[[], int]) -> int:
    """Block, re-judging after every change to ``paths``; return the last exit code on Ctrl+C."""
    from watchfiles import watch

    watched = {str(p.resolve()) for p in paths}
    code = 1
    print("Watching for changes (Ctrl+C to stop)...")
    try:
        for changes in watch(*{str(p.parent) for p in paths}):
            if any(str(Path(changed).resolve()) in watched for _, changed in changes):
                print("\n--- change detected, judging again ---")
                code = judge_once()
    except KeyboardInterrupt:
        pass
    return code
