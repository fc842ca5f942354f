"""Load a problem's files as modules for the project's own tests of that problem (one copy of this).

Each file is loaded under a unique name; while it runs, the problem's support modules are served
under their own names (``import p2p``, ``from sim_result import SimResult``) and ``sys.modules`` is
put back afterwards, so problems whose files share names (two ``pp_sim.py``) do not meet.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

PROBLEMS = Path(__file__).resolve().parents[2] / "problems"


def load(problem_id: str, relative: str, name: str | None = None) -> ModuleType:
    """``problems/<problem_id>/<relative>`` as a module named ``name`` (default: derived from both)."""
    folder = PROBLEMS / problem_id
    name = name or f"_{problem_id.replace('-', '_')}_{relative.replace('/', '_').removesuffix('.py')}"
    support = {p.stem: p for p in sorted((folder / "support").glob("*.py"))}
    saved = {key: sys.modules.get(key) for key in support}
    try:
        for key, path in support.items():
            sys.modules[key] = _exec(path, f"_{problem_id.replace('-', '_')}_support_{key}")
        return _exec(folder / relative, name)
    finally:
        for key, module in saved.items():
            if module is None:
                sys.modules.pop(key, None)
            else:
                sys.modules[key] = module


def support(problem_id: str, stem: str) -> ModuleType:
    """The support module ``stem`` of the problem, as :func:`load` serves it to the files it loads."""
    return sys.modules[f"_{problem_id.replace('-', '_')}_support_{stem}"]


def _exec(path: Path, name: str) -> ModuleType:
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module
