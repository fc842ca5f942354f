"""Where a run's modules come from: record every import, then check ``sys.modules`` and the hooks.

:class:`Recorder` sits first on ``sys.meta_path`` for the run (the runner's collector moves it back
in front of pytest's assertion-rewriting hook when the session starts). It asks the finders after
it for a spec and wraps the loader, so that right after a module has executed, the run's watch
snapshots it: a module first imported during the run (``fractions``, a test helper, a support
module) is then watched like the ones loaded before. It also notes the ``sys.modules`` entries a
module adds under its own package while it executes (C extensions such as pyexpat do that).

:func:`entry_findings` classifies every ``sys.modules`` entry that appeared or changed during the
run. An entry is fine when it is the module the import system loaded under that name (or one of
the entries it made for its package); the learner's own modules may not take a name that the
tests or the judge could import (a standard, installed or test-helper module). A test helper or
support module must be the one loaded from its file in the work directory. Anything else under
such a name is a stand-in and voids the verdict. Pure Python: runs in both engines.
"""

from __future__ import annotations

import functools
import importlib.machinery
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from types import FunctionType, MethodType, ModuleType
from typing import Any

from .namespaces import module_of

_MODULE_DICT = ModuleType.__dict__["__dict__"].__get__  # type: ignore[index]  # the real __dict__, not an override


@dataclass(eq=False)
class Record:
    """A module the import system executed during the run."""

    module: ModuleType
    name: str
    origin: str  # realpath of spec.origin ("" for built-in, frozen or namespace modules)
    own: bool  # the learner's code: a file the judge did not lay out, in the learner's writable area


class Recorder:
    """A meta path finder that wraps the loader of every module imported while it is installed."""

    def __init__(self, is_own: Callable[[str], bool], executed: Callable[[ModuleType, bool], None]) -> None:
        self.records: dict[int, Record] = {}
        self.made: dict[str, str] = {}  # sys.modules key -> the module that put it there while executing
        self._is_own = is_own
        self._executed = executed

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        spec = None
        after = False
        for finder in list(sys.meta_path):
            if finder is self:
                after = True
            elif after and hasattr(finder, "find_spec"):
                spec = finder.find_spec(name, path, target)
                if spec is not None:
                    break
        loader = getattr(spec, "loader", None)
        if spec is not None and loader is not None and hasattr(loader, "exec_module"):
            spec.loader = _Loader(loader, self)  # type: ignore[assignment]  # a loader that wraps the real one  # (a watch's run inside a run wraps the outer one's)
        return spec

    def execute(self, loader: Any, module: ModuleType) -> None:
        """Run ``loader.exec_module(module)`` and record the module once it has executed."""
        namespace = _MODULE_DICT(module)
        spec = namespace.get("__spec__")
        if spec is not None and type(spec.loader) is _Loader:
            spec.loader = loader  # the module sees its real loader, as without the judge
        if type(namespace.get("__loader__")) is _Loader:
            namespace["__loader__"] = loader
        keys, records = list(sys.modules), len(self.records)
        loader.exec_module(module)
        name = spec.name if spec is not None else namespace.get("__name__", "")
        origin = spec.origin if spec is not None and spec.has_location and spec.origin else ""
        origin = os.path.realpath(origin) if origin else ""
        own = bool(origin) and self._is_own(origin)
        self.records[id(module)] = Record(module, name, origin, own)
        if not own:
            if len(sys.modules) - len(keys) > len(self.records) - records:
                self._note_made(name, set(sys.modules).difference(keys))
            self._executed(module, own)

    def _note_made(self, name: str, added: set[str]) -> None:
        package = name.partition(".")[0]
        for key in added:
            if key == name or key.startswith(package + "."):
                self.made.setdefault(key, name)


class _Loader:
    """Delegates to the real loader; records the module after it executed."""

    def __init__(self, loader: Any, recorder: Recorder) -> None:
        self._loader = loader
        self._recorder = recorder

    def create_module(self, spec: Any) -> Any:
        create = getattr(self._loader, "create_module", None)
        return create(spec) if create is not None else None

    def exec_module(self, module: ModuleType) -> None:
        self._recorder.execute(self._loader, module)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._loader, name)


@dataclass
class Imports:
    """What a run may find in ``sys.modules``, and the import hooks as they were before it."""

    modules: dict[str, Any]  # sys.modules before the learner's code
    local: dict[str, str]  # test helper and support module names -> their file in the work directory
    meta_path: list[Any]
    path_hooks: list[Any]
    importer_cache: dict[str, Any]
    path: list[str]
    tolerated: tuple[type, ...]  # meta path finders pytest installs and removes itself
    workdir: str


def entry_findings(imports: Imports, recorder: Recorder, shadows: Callable[[str], bool],
                   who: Callable[[Any], str]) -> list[str]:
    """What is wrong with ``sys.modules`` now (one sentence per entry)."""
    found = []
    current = dict(sys.modules)
    for key, module in imports.modules.items():
        now = current.get(key, module)
        if now is not module and not _reloaded(recorder, key, now):
            found.append(f"sys.modules[{key!r}] was replaced{who(now)}")
    for key in current.keys() - imports.modules.keys():
        problem = _new_entry(key, current[key], imports, recorder, shadows)
        if problem:
            found.append(f"{key} in sys.modules {problem}{who(current[key])}")
    return sorted(found)


def _reloaded(recorder: Recorder, key: str, module: Any) -> bool:
    record = recorder.records.get(id(module))
    return record is not None and record.module is module and record.name == key and not record.own


def _new_entry(key: str, module: Any, imports: Imports, recorder: Recorder, shadows: Callable[[str], bool]) -> str:
    record = recorder.records.get(id(module))
    if record is not None and record.module is not module:
        record = None
    expected = imports.local.get(key)
    if expected is not None:
        if record is None or record.origin != expected or record.name != key:
            return f"is a stand-in, not {_short(expected, imports)}"
        return ""
    genuine = record is not None and not record.own and record.name == key or key in recorder.made
    if genuine or not shadows(key):
        return ""
    if record is not None and record.own:
        return "comes from a file the code wrote, in place of the module the tests would import"
    return "is a stand-in, not the module the import system would load"


def _short(path: str, imports: Imports) -> str:
    return os.path.relpath(path, imports.workdir).replace(os.sep, "/")


def hook_findings(imports: Imports, recorder: Recorder, who: Callable[[Any], str]) -> list[str]:
    """Finders or path hooks added, removed or replaced; foreign finders in the importer cache."""
    found = []
    meta = [f for f in sys.meta_path if f is not recorder and type(f) not in imports.tolerated]
    if not _same_list(meta, [f for f in imports.meta_path if type(f) not in imports.tolerated]):
        extra = [f for f in meta if not any(f is g for g in imports.meta_path)]
        found.append(f"sys.meta_path was changed{who(extra[0]) if extra else ''}")
    if not _same_list(list(sys.path_hooks), imports.path_hooks):
        hooks = [f for f in sys.path_hooks if not any(f is g for g in imports.path_hooks)]
        found.append(f"sys.path_hooks was changed{who(hooks[0]) if hooks else ''}")
    allowed = {type(f) for f in imports.importer_cache.values()} | {importlib.machinery.FileFinder, type(None)}
    loaders = {cls for f in imports.importer_cache.values() for cls, _ in getattr(f, "_loaders", ())}
    for path, finder in list(sys.path_importer_cache.items()):
        if imports.importer_cache.get(path, None) is finder and path in imports.importer_cache:
            continue
        kinds = ({cls for cls, _ in finder._loaders}  # type: ignore[attr-defined]  # FileFinder's private table
                 if type(finder) is importlib.machinery.FileFinder else set())
        if type(finder) not in allowed or not kinds <= loaders:
            found.append(f"sys.path_importer_cache[{path!r}] holds a finder of the code's{who(finder)}")
            break
    return found


def _same_list(now: list[Any], before: list[Any]) -> bool:
    return len(now) == len(before) and all(a is b for a, b in zip(now, before))


def restore_imports(imports: Imports, recorder: Recorder, keep: Callable[[str, Any], bool]) -> None:
    """Put ``sys.modules`` and the hooks back: originals return, stand-ins and the code's modules go."""
    for key in list(sys.modules.keys() - imports.modules.keys()):
        if not keep(key, sys.modules[key]):
            del sys.modules[key]
    for key, module in imports.modules.items():
        if sys.modules.get(key) is not module:
            sys.modules[key] = module
    sys.meta_path[:] = imports.meta_path
    sys.path_hooks[:] = imports.path_hooks
    for path in [p for p, f in sys.path_importer_cache.items()
                 if p not in imports.importer_cache or imports.importer_cache[p] is not f]:
        del sys.path_importer_cache[path]
    sys.path_importer_cache.update(imports.importer_cache)
    sys.path[:] = imports.path


def genuine(recorder: Recorder, key: str, module: Any) -> bool:
    """True for a module the import system loaded during the run that is not the learner's."""
    record = recorder.records.get(id(module))
    if record is not None and record.module is module:
        return not record.own and record.name == key
    return key in recorder.made


def planter(value: Any, inside: str) -> str:
    """The file under ``inside`` whose code made ``value`` ('' when it cannot be told)."""
    if issubclass(type(value), ModuleType):
        for item in list(_MODULE_DICT(value).values()):
            found = code_file(item, inside)
            if found:
                return found
        return ""
    return code_file(value, inside)


def code_file(value: Any, inside: str) -> str:
    """The file under ``inside`` that defines ``value`` (a function, method, property, class or
    instance of such a class), relative to ``inside``; '' when it is not code from there."""
    for _ in range(4):
        kind = type(value)
        if kind is FunctionType:  # by its code's file, or else by its globals' (code made with exec)
            file = value.__code__.co_filename
            if not os.path.isabs(file):
                file = value.__globals__.get("__file__")
            return _relative(file, inside) if isinstance(file, str) else ""
        if kind in (staticmethod, classmethod, MethodType):
            value = value.__func__
        elif kind is property:
            value = value.fget
        elif kind is functools.partial:
            value = value.func
        else:
            break
    module = sys.modules.get(module_of(value))
    file = _MODULE_DICT(module).get("__file__") if issubclass(type(module), ModuleType) else None
    return _relative(file, inside) if isinstance(file, str) else ""


def _relative(file: str, inside: str) -> str:
    full = os.path.realpath(file)
    return os.path.relpath(full, inside) if full.startswith(inside + os.sep) else ""
