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
from bisect import bisect_right
from collections.abc import Callable
from dataclasses import dataclass
from itertools import accumulate, chain, compress, count, repeat
from operator import eq, is_, is_not, methodcaller, not_
from types import ModuleType
from typing import Any

_MODULE_DICT = ModuleType.__dict__["__dict__"].__get__  # type: ignore[index]  # the real __dict__, not an override
_TYPE_DICT = type.__dict__["__dict__"].__get__
_FLAGS = type.__dict__["__flags__"].__get__
_MRO = type.__dict__["__mro__"].__get__
_BASES = type.__dict__["__bases__"].__get__
_QUALNAME = type.__dict__["__qualname__"].__get__
_VALUES = methodcaller("values")
_HEAPTYPE = 1 << 9
_IMMUTABLE = 1 << 8  # Py_TPFLAGS_IMMUTABLETYPE: attributes cannot be set at all
#: values that are plain data: adding them is not adding behaviour
DATA = (type(None), bool, int, float, complex, str, bytes, tuple, list, dict, set, frozenset)
MISSING = object()
#: modules whose namespace changes as a matter of course (pytest sets ``sys.last_*``, and its
#: assertion helpers per session; the host's script), checked one by one rather than in the group
VOLATILE = ("sys", "__main__", "_pytest.assertion.util")
#: dunders the interpreter stores in a class on first use (copyreg; reading ``cls.__annotations__``)
_CACHED_DUNDERS = ("__slotnames__", "__annotations__")


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
    if type(value) not in DATA or key.startswith("__") and key not in _CACHED_DUNDERS:
        return False
    inherited = next((_TYPE_DICT(base)[key] for base in space.mro[1:] if key in _TYPE_DICT(base)), None)
    return type(inherited) in DATA  # data over data; never hiding an inherited method or descriptor


def restore(space: Space, keep: Callable[[str, Any], bool]) -> list[type]:
    """Put the saved objects back; drop additions unless ``keep(key, value)``; then take the
    snapshot again (see :func:`retake`, whose result this returns)."""
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
    return retake(space)


def _module_set(module: ModuleType, key: str, value: Any) -> None:
    _MODULE_DICT(module)[key] = value


def _module_del(module: ModuleType, key: str) -> None:
    del _MODULE_DICT(module)[key]


class Group:
    """Spaces checked together in C-speed passes over all their values (no Python call per space):
    :meth:`changed` finds the few spaces that differ without looking at each one in turn."""

    def __init__(self, spaces: list[Space]) -> None:
        self.spaces = spaces
        self.rebuild()

    def rebuild(self) -> None:
        """Read the saved state of every space."""
        spaces = self.spaces
        self._index = {id(s): i for i, s in enumerate(spaces)}
        self.owners = {id(s.owner) for s in spaces}  # what the group watches, by identity
        self._lives = [s.live for s in spaces]
        self._saved = [list(s.saved.values()) for s in spaces]
        self._flat = list(chain.from_iterable(self._saved))
        self._lens = [len(s.saved) for s in spaces]
        # with the same length and the same values in the same order, a namespace can only differ
        # in its keys if its last key changed (a deleted key's successors would shift)
        self._last = [next(reversed(s.saved), None) for s in spaces]
        self._owners, self._kinds = [s.owner for s in spaces], [s.kind for s in spaces]
        self._class_pos = [i for i, s in enumerate(spaces) if s.mro is not None]
        self._classes = [spaces[i].owner for i in self._class_pos]
        self._mros = [spaces[i].mro for i in self._class_pos]
        self._bases = [spaces[i].bases for i in self._class_pos]

    def reread(self, spaces: list[Space]) -> None:
        """Read again the saved state of ``spaces`` (members whose snapshot was re-taken in place)."""
        for space in spaces:
            i = self._index.get(id(space))
            if i is None:
                continue  # not a member
            self._saved[i], self._lens[i] = list(space.saved.values()), len(space.saved)
            self._flat = None  # type: ignore[assignment]  # re-flattened below
            self._last[i], self._kinds[i] = next(reversed(space.saved), None), space.kind
            if space.mro is not None:
                j = self._class_pos.index(i)
                self._mros[j], self._bases[j] = space.mro, space.bases
        if self._flat is None:
            self._flat = list(chain.from_iterable(self._saved))

    def extend(self, spaces: list[Space]) -> None:
        """Watch these spaces too (not members yet), without reading the others again."""
        for space in spaces:
            self._index[id(space)] = len(self.spaces)
            self.owners.add(id(space.owner))
            if space.mro is not None:
                self._class_pos.append(len(self.spaces))
                self._classes.append(space.owner)
                self._mros.append(space.mro)
                self._bases.append(space.bases)
            self.spaces.append(space)
            self._lives.append(space.live)
            self._saved.append(list(space.saved.values()))
            self._flat += self._saved[-1]
            self._lens.append(len(space.saved))
            self._last.append(next(reversed(space.saved), None))
            self._owners.append(space.owner)
            self._kinds.append(space.kind)

    def add_classes(self, classes: list[type]) -> None:
        """Watch these classes too (those not watched yet)."""
        fresh = list({id(c): class_space(c) for c in classes if id(c) not in self.owners}.values())
        self.extend(fresh)

    def all_intact(self) -> bool:
        """The common case, in the fewest C-level steps per value."""
        return (list(map(len, self._lives)) == self._lens
                and all(map(is_, map(type, self._owners), self._kinds))
                and all(map(is_, map(_MRO, self._classes), self._mros))
                and all(map(is_, map(_BASES, self._classes), self._bases))
                and all(map(is_, map(next, map(reversed, self._lives), repeat(None)), self._last))
                and all(map(is_, chain.from_iterable(map(_VALUES, self._lives)), self._flat)))

    def changed(self) -> list[Space]:
        """The spaces that are not intact: usually none, found in one pass over everything."""
        if self.all_intact():
            return []
        lives = self._lives
        same = list(map(eq, map(len, lives), self._lens))
        bad = set(compress(count(), map(not_, same)))
        kept = list(compress(count(), same))
        values = chain.from_iterable(map(_VALUES, compress(lives, same)))
        differ = list(compress(count(), map(is_not, values, chain.from_iterable(compress(self._saved, same)))))
        if differ:
            ends = list(accumulate(compress(self._lens, same)))
            bad.update(kept[bisect_right(ends, position)] for position in differ)
        bad.update(compress(count(), map(is_not, map(next, map(reversed, lives), repeat(None)), self._last)))
        bad.update(compress(count(), map(is_not, map(type, self._owners), self._kinds)))
        bad.update(compress(self._class_pos, map(is_not, map(_MRO, self._classes), self._mros)))
        bad.update(compress(self._class_pos, map(is_not, map(_BASES, self._classes), self._bases)))
        return [self.spaces[i] for i in sorted(bad)]


class Baseline:
    """The spaces of every loaded module and of the classes they hold, kept between runs.

    :meth:`refresh` costs one :class:`Group` pass when ``sys.modules`` holds the same modules as
    at the previous refresh (a warm interpreter: the browser's, a child forked from a primed
    parent) and re-takes only the snapshots of the namespaces that changed; otherwise it rebuilds.
    """

    def __init__(self) -> None:
        self.group: Group | None = None
        self.volatile: list[Space] = []
        self._order: tuple[list, list] = ([], [])  # sys.modules' keys and values at the last refresh

    def refresh(self) -> tuple[Group, list[Space]]:
        """The current spaces of all modules in ``sys.modules`` and their classes: a group, and the
        few namespaces that change on their own (``sys``, ``__main__``), to be checked one by one."""
        keys, values = self._order
        group = self.group
        if (group is None or len(sys.modules) != len(keys) or not all(map(is_, sys.modules, keys))
                or not all(map(is_, sys.modules.values(), values))):
            spaces = self._collect(group, self.volatile)
            self.volatile = [s for s in spaces if s.name in VOLATILE]
            group = self.group = Group([s for s in spaces if s.name not in VOLATILE])
            self._order = (list(sys.modules), list(sys.modules.values()))
            return group, self.volatile
        changed = group.changed()
        if changed:
            classes = [cls for space in changed for cls in retake(space)]
            group.reread(changed)
            group.add_classes(classes)
        for space in self.volatile:
            if not intact(space):
                retake(space)
        return group, self.volatile

    def adopt(self, spaces: list[Space]) -> None:
        """After a run: watch the modules it imported (``spaces``, restored and still loaded) from
        now on, so that the next refresh need not rebuild the group."""
        if self.group is None:
            return
        self.group.extend([s for s in spaces if id(s.owner) not in self.group.owners and _still_loaded(s)])
        self._order = (list(sys.modules), list(sys.modules.values()))

    def _collect(self, old: Group | None, volatile: list[Space]) -> list[Space]:
        known = {id(s.owner): s for s in [*(old.spaces if old is not None else ()), *volatile]}
        spaces: dict[int, Space] = {}
        for name, module in list(sys.modules.items()):
            if issubclass(type(module), ModuleType) and id(module) not in spaces:
                spaces[id(module)] = self._fresh(known.get(id(module)), module, name)
        for space in [s for s in spaces.values() if s.mro is None]:
            for cls in space.classes:
                if id(cls) not in spaces:
                    spaces[id(cls)] = self._fresh(known.get(id(cls)), cls, "")
        return list(spaces.values())

    @staticmethod
    def _fresh(space: Space | None, owner: Any, name: str) -> Space:
        if space is not None and space.owner is owner and intact(space):
            return space
        return module_space(name, owner) if name else class_space(owner)


def _still_loaded(space: Space) -> bool:
    """A module still in ``sys.modules``, or a class whose module is."""
    if space.mro is None:
        return sys.modules.get(space.name) is space.owner
    name = space.saved.get("__module__")
    return isinstance(name, str) and name in sys.modules


def retake(space: Space) -> list[type]:
    """Take ``space``'s snapshot again, in place; for a module, return the classes it now holds."""
    owner = space.owner
    space.saved, space.kind = dict(space.live), type(owner)
    if space.mro is not None:
        space.mro, space.bases = _MRO(owner), _BASES(owner)
        return []
    space.classes = tuple(classes_in(space.live.values()))
    return list(space.classes)


def module_of(obj: Any) -> str:
    """The module name a class or function says it comes from ('' if it does not say)."""
    cls = obj if issubclass(type(obj), type) else type(obj)
    name = _TYPE_DICT(cls).get("__module__") if issubclass(type(cls), type) else None
    return name if isinstance(name, str) else ""


def qualname(cls: type) -> str:
    return _QUALNAME(cls)
