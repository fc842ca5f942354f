"""Detect learner code that monkeypatches the judge, pytest or the standard modules they rely on.

:func:`snapshot` records the identity of every attribute of the modules (and their classes) that
produce a verdict; :func:`changed` lists what differs afterwards. The runner takes the snapshot
before the learner's module is imported and compares after the tests ran; any change voids the
verdict. Pure Python: runs in both engines.
"""

from __future__ import annotations

import sys
from types import ModuleType

WATCHED = (
    "judge.core.collector", "judge.core.runner", "judge.core.guard", "judge.core.result", "judge.core.workdir", "judge.core.integrity",
    "pytest", "_pytest.runner", "_pytest.reports", "_pytest.main", "_pytest.python", "_pytest.capture",
    "_pytest.fixtures", "_pytest.outcomes", "_pytest.nodes", "_pytest.assertion.rewrite",
    "_pytest.assertion.util", "_pytest.config", "pluggy", "pluggy._hooks", "pluggy._callers",
    "pluggy._manager", "json", "json.encoder", "builtins", "contextlib", "io",
)

Snapshot = dict[str, object]


def snapshot() -> Snapshot:
    """Identity of every watched module, its attributes and its classes' attributes."""
    marks: Snapshot = {"sys.meta_path": tuple(sys.meta_path), "sys.path_hooks": tuple(sys.path_hooks)}
    for name in WATCHED:
        module = sys.modules.get(name)
        if module is None:
            continue
        marks[name] = module
        for attr, value in list(vars(module).items()):
            marks[f"{name}.{attr}"] = value
            if isinstance(value, type) and getattr(value, "__module__", None) == name:
                for inner, member in list(vars(value).items()):
                    marks[f"{name}.{attr}.{inner}"] = member
    return marks


def changed(before: Snapshot, after: Snapshot | None = None) -> list[str]:
    """Names whose object differs between two snapshots (new attributes are ignored)."""
    after = snapshot() if after is None else after
    return sorted(key for key, value in before.items()
                  if key in after and after[key] is not value and not _benign(key, value, after[key])
                  or key not in after and not _optional(key))


def restore(before: Snapshot, names: list[str]) -> None:
    """Put back the original objects under ``names`` (as listed by :func:`changed`).

    The browser engine keeps one interpreter for many runs, so a replaced judge or pytest function
    must not outlive the run that replaced it.
    """
    for key in names:
        if key in ("sys.meta_path", "sys.path_hooks"):
            getattr(sys, key.split(".")[1])[:] = list(before[key])  # type: ignore[call-overload]
            continue
        if key in WATCHED:
            sys.modules[key] = before[key]  # type: ignore[assignment]
            continue
        owner_name, attr = key.rsplit(".", 1)
        owner = _resolve(owner_name, before)
        if owner is not None:
            try:
                setattr(owner, attr, before[key])
            except (AttributeError, TypeError):
                pass


def _resolve(name: str, before: Snapshot) -> object | None:
    if name in before and isinstance(before[name], (ModuleType, type)):
        return before[name]
    return sys.modules.get(name)


def _benign(key: str, old: object, new: object) -> bool:
    # caches and counters that pytest and the standard library update on their own
    if key in ("sys.meta_path", "sys.path_hooks"):
        return tuple(type(x) for x in old) == tuple(type(x) for x in new)  # pytest adds/removes its rewriter
    if not callable(old) and not isinstance(old, (type, ModuleType)):
        return True  # plain data (counters, caches, flags) may change; behaviour lives in callables
    return False


def _optional(key: str) -> bool:
    return key.count(".") >= 1 and key.rsplit(".", 1)[1].startswith("_")
