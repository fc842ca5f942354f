"""Snapshots of module and class namespaces, compared by identity.

A :class:`Space` holds a module or a class, a shallow copy of its ``__dict__``, its type and (for a
class) its bases and MRO. :func:`intact` tells in C-speed passes whether anything in it was
rebound, added or deleted; :func:`changes` lists what, and :func:`restore` puts the saved objects
back. Values are compared with ``is`` only, never ``==``: a replacement cannot pass for the
original by defining ``__eq__``. Nothing here calls code of the objects it looks at (attribute
access goes through the descriptors of ``type`` and ``ModuleType``), so the check cannot be
steered by the objects it checks.

:func:`baseline` keeps its spaces between calls and re-copies only what changed, so a run in a
warm interpreter (the browser's, or a forked native child of a primed parent) pays for a few
identity passes, not for a fresh snapshot. Pure Python: runs in both engines.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from operator import is_
from types import ModuleType
from typing import Any, Callable

_MODULE_DICT = ModuleType.__dict__["__dict__"].__get__
_TYPE_DICT = type.__dict__["__dict__"].__get__
_FLAGS = type.__dict__["__flags__"].__get__
_MRO = type.__dict__["__mro__"].__get__
_BASES = type.__dict__["__bases__"].__get__
_QUALNAME = type.__dict__["__qualname__"].__get__
_HEAPTYPE = 1 << 9
_IMMUTABLE = 1 << 8  # Py_TPFLAGS_IMMUTABLETYPE: attributes cannot be set at all
#: values that are plain data: adding them is not adding behaviour
DATA = (type(None), bool, int, float, complex, str, bytes, tuple, list, dict, set, frozenset)
MISSING = object()


@dataclass(eq=False)
class Space:
    """A watched namespace: a module or a class, with a copy of its ``__dict__``."""

    owner: Any
    name: str  # "math" or "pathlib.Path"
    live: Any  # the namespace itself (a dict, or a class's mappingproxy)
    saved: dict
    kind: type  # type(owner)
    bases: tuple | None = None  # classes only
    mro: tuple | None = None
    classes: tuple = ()  # modules: the classes found in the namespace

    @property
    def is_class(self) -> bool:
        return self.mro is not None


def module_space(name: str, module: ModuleType) -> Space:
    """A snapshot of ``module`` and the list of the classes its namespace holds."""
    live = _MODULE_DICT(module)
    return Space(module, name, live, dict(live), type(module), classes=tuple(classes_in(live.values())))


def class_space(cls: type) -> Space:
    live = _TYPE_DICT(cls)
    module = live.get("__module__")
    name = f"{module}.{_QUALNAME(cls)}" if isinstance(module, str) else _QUALNAME(cls)
    return Space(cls, name, live, dict(live), type(cls), _BASES(cls), _MRO(cls))


def classes_in(values: Any, seen: set[int] | None = None) -> list[type]:
    """Classes whose attributes can be set, among ``values`` and the namespaces of those classes."""
    seen = set() if seen is None else seen
    found = []
    for value in values:
        if issubclass(type(value), type) and id(value) not in seen:
            flags = _FLAGS(value)
            if flags & _HEAPTYPE and not flags & _IMMUTABLE:
                seen.add(id(value))
                found.append(value)
                found += classes_in(list(_TYPE_DICT(value).values()), seen)
    return found


def intact(space: Space) -> bool:
    """True when nothing in ``space`` was rebound, added or deleted (identity passes, no calls)."""
    owner, live, saved = space.owner, space.live, space.saved
    if type(owner) is not space.kind or len(live) != len(saved):
        return False
    if space.mro is not None and (_MRO(owner) is not space.mro or _BASES(owner) is not space.bases):
        return False
    return all(map(is_, live.values(), saved.values())) and all(map(is_, live, saved))


def changes(space: Space) -> list[tuple[str, str, Any]]:
    """``(attribute, how, new value)`` for each difference: how is replaced, deleted, added, type or bases."""
    found: list[tuple[str, str, Any]] = []
    owner = space.owner
    if type(owner) is not space.kind:
        found.append(("__class__", "type", type(owner)))
    if space.mro is not None and (_BASES(owner) is not space.bases or _MRO(owner) is not space.mro):
        found.append(("__bases__", "bases", _BASES(owner)))
    live = space.live
    for key, value in space.saved.items():
        new = live.get(key, MISSING)
        if new is not value:
            found.append((key, "deleted" if new is MISSING else "replaced", new))
    found += [(key, "added", live[key]) for key in list(live) if key not in space.saved]
    return found


def allowed_addition(space: Space, key: str, value: Any) -> bool:
    """Additions that add no behaviour: plain data (caches such as ``__slotnames__``) that hides no
    inherited method or descriptor, and a module's genuine submodule (``numpy.random`` once imported)."""
    if space.mro is None:
        return type(value) in DATA or sys.modules.get(f"{space.name}.{key}") is value
    if type(value) not in DATA or key.startswith("__") and key != "__slotnames__":
        return False
    inherited = next((_TYPE_DICT(base)[key] for base in space.mro[1:] if key in _TYPE_DICT(base)), None)
    return type(inherited) in DATA  # data over data; never hiding an inherited method or descriptor


def restore(space: Space, keep: Callable[[str, Any], bool]) -> None:
    """Put the saved objects back; drop additions unless ``keep(key, value)``; then re-baseline."""
    owner, live = space.owner, space.live
    if type(owner) is not space.kind:
        owner.__class__ = space.kind
    if space.mro is not None and _BASES(owner) is not space.bases:
        owner.__bases__ = space.bases
    setter = type.__setattr__ if space.mro is not None else _module_set
    deleter = type.__delattr__ if space.mro is not None else _module_del
    for key, value in space.saved.items():
        if live.get(key, MISSING) is not value:
            setter(owner, key, value)
    for key in [k for k in list(live) if k not in space.saved and not keep(k, live[k])]:
        deleter(owner, key)
    space.saved = dict(live)
    if space.mro is not None:
        space.mro = _MRO(owner)


def _module_set(module: ModuleType, key: str, value: Any) -> None:
    _MODULE_DICT(module)[key] = value


def _module_del(module: ModuleType, key: str) -> None:
    del _MODULE_DICT(module)[key]


class Baseline:
    """Spaces of every loaded module and of the classes they hold, kept between runs.

    :meth:`refresh` re-uses each space whose namespace is intact and re-copies the others, so the
    snapshot before a run costs one identity pass in a warm interpreter.
    """

    def __init__(self) -> None:
        self.modules: dict[int, Space] = {}
        self.classes: dict[int, Space] = {}

    def refresh(self, skip: Callable[[str, ModuleType], bool]) -> list[Space]:
        """The current spaces of all modules in ``sys.modules`` (except skipped ones) and their classes."""
        modules: dict[int, Space] = {}
        classes: dict[int, Space] = {}
        for name, module in list(sys.modules.items()):
            if not issubclass(type(module), ModuleType) or id(module) in modules or skip(name, module):
                continue
            space = self.modules.get(id(module))
            if space is None or space.owner is not module or not intact(space):
                space = module_space(name, module)
            modules[id(module)] = space
            for cls in space.classes:
                if id(cls) not in classes:
                    known = self.classes.get(id(cls))
                    classes[id(cls)] = known if known is not None and known.owner is cls and intact(known) \
                        else class_space(cls)
        self.modules, self.classes = modules, classes
        return [*modules.values(), *classes.values()]

    def adopt(self, spaces: list[Space]) -> None:
        """Keep ``spaces`` (of modules imported during a run, already restored) for later runs."""
        for space in spaces:
            (self.classes if space.is_class else self.modules)[id(space.owner)] = space


def module_of(obj: Any) -> str:
    """The module name a class or function says it comes from ('' if it does not say)."""
    cls = obj if issubclass(type(obj), type) else type(obj)
    name = _TYPE_DICT(cls).get("__module__") if issubclass(type(cls), type) else None
    return name if isinstance(name, str) else ""


def qualname(cls: type) -> str:
    return _QUALNAME(cls)
