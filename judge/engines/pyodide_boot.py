"""The Python half of Pyodide's set-up for judging; the JavaScript half is ``web/js/boot.mjs``.

Both hosts of the browser engine, the page's Web Worker (``web/worker.js``) and the Node.js harness
behind ``judge check --pyodide`` and the parity tests (``judge/engines/pyodide_harness/``), boot Pyodide
through ``boot.mjs``, which unpacks the judge and calls these functions. So the engine those tests
exercise is the one the site ships. Runs on Pyodide's Python 3.12 (and on CPython, for tests).
"""

from __future__ import annotations

import gc
import importlib
import os
import shutil
import signal
from pathlib import Path

#: Where the hosts write the problem folders they judge (one folder per problem id).
PROBLEMS_ROOT = "/home/pyodide/problems"

_WARM_UP_SOURCE = "def f():\n    return 1\n"
_WARM_UP_FILES = {
    "problem.toml": 'format = 1\nid = "warm-up"\ntitle = "Warm-up"\nsummary = "Warm-up."\norder = 0\n'
                    'difficulty = "easy"\nentry = "warm.py"\ntime_limit = 10\ntags = []\n',
    "README.md": "# Warm-up\n",
    "starter/warm.py": _WARM_UP_SOURCE,
    "tests/public/test_warm.py": (
        "import pytest\nimport numpy as np\nfrom judge.artifacts import timeline\nimport warm\n\n"
        "@pytest.mark.parametrize('x', [1, 2])\ndef test_f(x, record_property, capsys):\n"
        "    record_property('timeline', timeline([[('F', 0, 0, 1)]]))\n"
        "    print(np.arange(2, dtype=np.float64).sum())\n    assert warm.f() == x, f'expected {x}'\n"),
}


def prepare(problems_root: str = PROBLEMS_ROOT) -> None:
    """Import what every run needs (numpy, pytest, the runner) and make the problems folder."""
    importlib.invalidate_caches()
    import numpy  # noqa: F401
    import pytest  # noqa: F401

    import judge.core.runner  # noqa: F401

    os.makedirs(problems_root, exist_ok=True)


def warm_up(problems_root: str = PROBLEMS_ROOT) -> None:
    """One throw-away run of a tiny problem.

    The first run pays for pytest's first start (plugin set-up, assertion rewriting, first
    imports); that cost must not land on a learner's time limit.
    """
    folder = Path(problems_root) / "warm-up"
    for name, text in _WARM_UP_FILES.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text, encoding="utf-8")
    try:
        run(str(folder), _WARM_UP_SOURCE)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def freeze() -> None:
    """Move everything loaded so far out of the garbage collector's generations.

    It lives as long as the interpreter, so the collections that runs trigger need not walk
    numpy's and pytest's objects again and again.
    """
    gc.collect()
    gc.freeze()


def run(problem_dir: str, source: str, include_secret: bool = False) -> str | None:
    """Judge ``source``: the Result JSON, or ``None`` when an interrupt (Stop, time limit) escaped the runner.

    The host that sent the interrupt knows why, and builds that Result with
    :func:`judge.engines.unfinished.unfinished_result`. Any other exception escapes: the
    interpreter is then in doubt and the host replaces it.
    """
    from ..core.runner import judge_source_json

    # an earlier run may have changed the handler; the host's interrupt needs the default one
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        return judge_source_json(problem_dir, source, include_secret)
    except KeyboardInterrupt:
        return None
