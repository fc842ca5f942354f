"""The codec: the one way values cross between the learner's code and the tests.

Only plain data crosses: None, bool, int, float, str, bytes, tuple, list, dict, Fraction, numpy
arrays and scalars of numeric dtypes (bool, integer, float, complex), and the records (dataclasses
and named tuples) a problem declares. Types are checked exactly (``type(v) is int``, never
``isinstance``): a subclass of a plain type with a permissive ``__eq__`` or a lying ``__len__``, an
ndarray subclass, an object with ``__array_function__``, all are refused with a message the learner
can act on (:class:`NotPlain`). Objects that cross *by reference* (a generator of the learner's, an
object the tests lend) are the endpoints' business: the codec asks a :class:`References` hook.

The wire format is JSON text (the standard library's ``json``): its parser builds only dicts,
lists, strings and numbers and never runs code, it ships with CPython and Pyodide alike (nothing to
add to the browser's bundle), and it costs about 30 us per small message, nothing next to a test.
Nothing decoded is ever unpickled or evaluated; a tree that does not follow the format is refused
(:class:`Malformed`). Every JSON object the codec writes is ``{"~": KIND, ...}``; a JSON array is a
list; ``null``, ``true``, ``false``, numbers and strings are themselves. Pure standard library
(numpy is used only when the value is a numpy object, or a numpy tree is decoded): runs in both
engines.
"""

from __future__ import annotations

import base64
import builtins
import dataclasses
import json
import math
import sys
from collections.abc import Callable, Iterable
from fractions import Fraction
from typing import Any, Protocol

TAG = "~"
MAX_DEPTH = 100  # nesting of containers
MAX_NODES = 1_000_000  # values in one message
MAX_MESSAGE = 32 * 1024 * 1024  # characters of one message's JSON text
_SMALL_INT = 2**63
_NUMERIC_KINDS = "biufc"  # numpy dtype kinds that cross: bool, signed, unsigned, float, complex
PLAIN_TYPES = ("None, bool, int, float, str, bytes, tuple, list, dict, fractions.Fraction, numpy arrays "
               "and scalars of numeric dtypes")


class NotPlain(TypeError):
    """A value that cannot cross. ``what`` names it ("an object of type X at [0]"); the message also
    says what crosses instead. :meth:`explain` puts it in a context ("simulate() returned ...")."""

    def __init__(self, what: str, advice: str = "") -> None:
        self.what = what
        self.advice = advice or f"plain values cross: {PLAIN_TYPES}"
        super().__init__(f"{what} cannot be passed between the learner's code and the tests; {self.advice}")

    def explain(self, context: str) -> str:
        """``context`` ("simulate() returned") followed by what was refused and the advice."""
        return f"{context} {self.what}, which cannot be passed between the learner's code and the tests; {self.advice}"


class Malformed(ValueError):
    """A decoded tree that does not follow the codec's format (never produced by an honest peer)."""


class References(Protocol):
    """How an endpoint passes objects by reference (the codec itself passes only plain data)."""

    def reference(self, value: Any) -> dict[str, Any] | None:
        """A JSON object standing for ``value`` (``{"~": "ref", ...}``), or None when it is not one."""
        ...

    def resolve(self, tree: dict[str, Any]) -> Any:
        """The object a reference stands for (raises :class:`Malformed` for an unknown one)."""
        ...


class NoReferences:
    """An endpoint with no objects by reference: plain data only."""

    def reference(self, value: Any) -> dict[str, Any] | None:
        return None

    def resolve(self, tree: dict[str, Any]) -> Any:
        raise Malformed("a reference where only plain data may cross")


class Registry:
    """The types a problem declares: records that cross by value and exception types.

    Both sides build one from the same declarations (``[boundary]`` in problem.toml), each from its
    own import of the problem's support modules, so a record is rebuilt on the receiving side from
    its fields by that side's class.
    """

    def __init__(self, records: Iterable[type] = (), exceptions: Iterable[type] = ()) -> None:
        self.records = {qualified_name(cls): cls for cls in records}
        self.exceptions = {qualified_name(cls): cls for cls in exceptions}
        self._record_names = {cls: name for name, cls in self.records.items()}

    def record_name(self, cls: type) -> str | None:
        return self._record_names.get(cls)


def qualified_name(cls: type) -> str:
    """``module.QualName`` of a class: how declarations and the wire name it."""
    return f"{cls.__module__}.{cls.__qualname__}"


def describe_type(value: Any) -> str:
    """How a message names the type of a refused value."""
    cls = type(value)
    plain = next((base for base in cls.__mro__[1:] if base in _PLAIN_BASES), None)
    where = "" if cls.__module__ == "builtins" else f" (from {cls.__module__})"
    if plain is not None:
        return f"{cls.__qualname__}{where}, a subclass of {plain.__name__}"
    return f"{cls.__qualname__}{where}"


_PLAIN_BASES = (bool, int, float, complex, str, bytes, bytearray, tuple, list, dict, set, frozenset, Fraction)


# --------------------------------------------------------------------------------------------- encoding
class Encoder:
    """Plain values -> JSON trees; objects by reference through ``refs``."""

    def __init__(self, registry: Registry | None = None, refs: References | None = None) -> None:
        self.registry = registry or Registry()
        self.refs = refs or NoReferences()
        self._nodes = 0

    def encode(self, value: Any) -> Any:
        """The JSON tree of ``value``; raises :class:`NotPlain` naming the first value that cannot cross."""
        self._nodes = 0
        return self._encode(value, 0, "")

    def _encode(self, value: Any, depth: int, where: str) -> Any:
        self._nodes += 1
        if self._nodes > MAX_NODES:
            raise NotPlain(f"a value with more than {MAX_NODES:,} parts", "pass something smaller")
        if depth > MAX_DEPTH:
            raise NotPlain(f"a value nested more than {MAX_DEPTH} levels deep",
                           "is it a list that contains itself?")
        kind = type(value)
        if value is None or kind is bool or kind is str:
            return value
        if kind is int:
            return value if -_SMALL_INT < value < _SMALL_INT else {TAG: "int", "hex": hex(value)}
        if kind is float:
            return value if math.isfinite(value) else {TAG: "float", "repr": repr(value)}
        if kind is list:
            return [self._encode(item, depth + 1, f"{where}[{i}]") for i, item in enumerate(value)]
        if kind is tuple:
            return {TAG: "tuple", "items": [self._encode(item, depth + 1, f"{where}[{i}]")
                                            for i, item in enumerate(value)]}
        if kind is dict:
            return {TAG: "dict", "items": [[self._encode(k, depth + 1, f"{where} key {k!r}"),
                                            self._encode(v, depth + 1, f"{where}[{k!r}]")]
                                           for k, v in value.items()]}
        if kind is bytes:
            return {TAG: "bytes", "b64": base64.b64encode(value).decode("ascii")}
        if kind is Fraction:
            return {TAG: "fraction", "n": self._encode(value.numerator, depth + 1, where),
                    "d": self._encode(value.denominator, depth + 1, where)}
        numpy = sys.modules.get("numpy")
        if numpy is not None and isinstance(value, (numpy.ndarray, numpy.generic)):
            return _encode_numpy(numpy, value, where)
        name = self.registry.record_name(kind)
        if name is not None:
            return self._encode_record(name, value, depth, where)
        reference = self.refs.reference(value)
        if reference is not None:
            return reference
        raise NotPlain(_refusal(value, where))

    def _encode_record(self, name: str, value: Any, depth: int, where: str) -> dict[str, Any]:
        if dataclasses.is_dataclass(value):
            fields = [[f.name, self._encode(getattr(value, f.name), depth + 1, f"{where}.{f.name}")]
                      for f in dataclasses.fields(value)]
            return {TAG: "record", "type": name, "fields": fields}
        items = [self._encode(item, depth + 1, f"{where}.{field}")
                 for field, item in zip(type(value)._fields, tuple.__iter__(value))]
        return {TAG: "record", "type": name, "items": items}


def _encode_numpy(numpy: Any, value: Any, where: str) -> dict[str, Any]:
    scalar = isinstance(value, numpy.generic)
    if not scalar and type(value) is not numpy.ndarray:
        raise NotPlain(_refusal(value, where), "pass a plain numpy.ndarray (numpy.asarray(x)), not a subclass")
    if value.dtype.kind not in _NUMERIC_KINDS or value.dtype.fields is not None:
        raise NotPlain(f"a numpy {'scalar' if scalar else 'array'} of dtype {value.dtype}{_at(where)}",
                       "only numeric dtypes (bool, integers, floats, complex) cross")
    array = numpy.asarray(value)
    little = array.astype(array.dtype.newbyteorder("<"), copy=False)
    data = numpy.ascontiguousarray(little).tobytes()
    tree = {TAG: "npscalar" if scalar else "ndarray", "dtype": little.dtype.str,
            "b64": base64.b64encode(data).decode("ascii")}
    if not scalar:
        tree["shape"] = list(array.shape)
    return tree


def _refusal(value: Any, where: str) -> str:
    return f"an object of type {describe_type(value)}{_at(where)}"


def _at(where: str) -> str:
    return f" (at {where})" if where else ""


# --------------------------------------------------------------------------------------------- decoding
class Decoder:
    """JSON trees -> values, checking the format at every step (the peer may be hostile)."""

    def __init__(self, registry: Registry | None = None, refs: References | None = None) -> None:
        self.registry = registry or Registry()
        self.refs = refs or NoReferences()
        self._nodes = 0

    def decode(self, tree: Any) -> Any:
        self._nodes = 0
        return self._decode(tree, 0)

    def _decode(self, tree: Any, depth: int) -> Any:
        self._nodes += 1
        if self._nodes > MAX_NODES or depth > MAX_DEPTH + 2:
            raise Malformed("a value too large or too deeply nested")
        kind = type(tree)
        if tree is None or kind in (bool, int, float, str):
            return tree
        if kind is list:
            return [self._decode(item, depth + 1) for item in tree]
        if kind is not dict:
            raise Malformed(f"unexpected {kind.__name__} in a message")
        tag = tree.get(TAG)
        decode = _DECODERS.get(tag) if isinstance(tag, str) else None
        if decode is None:
            raise Malformed(f"unknown value kind {tag!r}")
        return decode(self, tree, depth)

    def _items(self, tree: dict[str, Any], key: str, depth: int) -> list[Any]:
        items = tree.get(key)
        if type(items) is not list:
            raise Malformed(f"{tree.get(TAG)!r} without a list of {key}")
        return [self._decode(item, depth + 1) for item in items]

    def _tuple(self, tree: dict[str, Any], depth: int) -> tuple[Any, ...]:
        return tuple(self._items(tree, "items", depth))

    def _dict(self, tree: dict[str, Any], depth: int) -> dict[Any, Any]:
        result = {}
        for pair in _field(tree, "items", list):
            if type(pair) is not list or len(pair) != 2:
                raise Malformed("a dict item that is not a [key, value] pair")
            key = self._decode(pair[0], depth + 1)
            try:
                result[key] = self._decode(pair[1], depth + 1)
            except TypeError:
                raise Malformed("an unhashable dict key") from None
        return result

    def _int(self, tree: dict[str, Any], depth: int) -> int:
        text = _field(tree, "hex", str)
        if len(text) > 100_000:
            raise Malformed("an integer too large")
        try:
            return int(text, 16)
        except ValueError:
            raise Malformed("a malformed integer") from None

    def _float(self, tree: dict[str, Any], depth: int) -> float:
        text = _field(tree, "repr", str)
        if text not in ("nan", "inf", "-inf"):
            raise Malformed("a malformed float")
        return float(text)

    def _bytes(self, tree: dict[str, Any], depth: int) -> bytes:
        return _b64(tree)

    def _fraction(self, tree: dict[str, Any], depth: int) -> Fraction:
        numerator, denominator = self._decode(tree.get("n"), depth + 1), self._decode(tree.get("d"), depth + 1)
        if type(numerator) is not int or type(denominator) is not int or denominator <= 0:
            raise Malformed("a malformed Fraction")
        return Fraction(numerator, denominator)

    def _numpy(self, tree: dict[str, Any], depth: int) -> Any:
        import numpy

        dtype = _field(tree, "dtype", str)
        try:
            kind = numpy.dtype(dtype)
        except (TypeError, ValueError):
            raise Malformed(f"an unknown dtype {dtype!r}") from None
        if kind.kind not in _NUMERIC_KINDS or kind.fields is not None or len(dtype) > 8:
            raise Malformed(f"a non-numeric dtype {dtype!r}")
        data = _b64(tree)
        if tree[TAG] == "npscalar":
            if len(data) != kind.itemsize:
                raise Malformed("a numpy scalar of the wrong size")
            return numpy.frombuffer(data, dtype=kind)[0].astype(kind.newbyteorder("="))
        shape = _field(tree, "shape", list)
        if not all(type(n) is int and n >= 0 for n in shape) or len(shape) > 32:
            raise Malformed("a malformed array shape")
        if math.prod(shape) * kind.itemsize != len(data):
            raise Malformed("an array whose data does not match its shape")
        native = kind.newbyteorder("=")
        return numpy.frombuffer(data, dtype=kind).astype(native).reshape(shape)

    def _record(self, tree: dict[str, Any], depth: int) -> Any:
        name = _field(tree, "type", str)
        cls = self.registry.records.get(name)
        if cls is None:
            raise Malformed(f"an undeclared record type {name!r}")
        try:
            if "fields" in tree:
                pairs = _field(tree, "fields", list)
                if not all(type(p) is list and len(p) == 2 and type(p[0]) is str for p in pairs):
                    raise Malformed("malformed record fields")
                return cls(**{field: self._decode(item, depth + 1) for field, item in pairs})
            return cls(*self._items(tree, "items", depth))
        except TypeError as exc:
            raise Malformed(f"record {name} cannot be rebuilt: {exc}") from None

    def _ref(self, tree: dict[str, Any], depth: int) -> Any:
        return self.refs.resolve(tree)


def _field(tree: dict[str, Any], key: str, kind: type) -> Any:
    value = tree.get(key)
    if type(value) is not kind:
        raise Malformed(f"{tree.get(TAG)!r} without {key!r}")
    return value


def _b64(tree: dict[str, Any]) -> bytes:
    try:
        return base64.b64decode(_field(tree, "b64", str), validate=True)
    except (ValueError, TypeError):
        raise Malformed("malformed base64 data") from None


_DECODERS: dict[str, Callable[[Decoder, dict[str, Any], int], Any]] = {
    "tuple": Decoder._tuple, "dict": Decoder._dict, "int": Decoder._int, "float": Decoder._float,
    "bytes": Decoder._bytes, "fraction": Decoder._fraction, "ndarray": Decoder._numpy,
    "npscalar": Decoder._numpy, "record": Decoder._record, "ref": Decoder._ref,
}


# --------------------------------------------------------------------------------------------- exceptions
_UNCROSSABLE = (KeyboardInterrupt, SystemExit, GeneratorExit)
#: builtin exception classes by name: what a raised exception crosses as (or its nearest builtin base)
BUILTIN_EXCEPTIONS = {name: cls for name, cls in vars(builtins).items()
                      if isinstance(cls, type) and issubclass(cls, Exception)}


def exception_tree(exc: BaseException, encoder: Encoder) -> dict[str, Any]:
    """An exception as plain data: its declared or builtin type, args (when they cross) and message."""
    name = _crossing_name(type(exc), encoder.registry)
    try:
        args = encoder.encode(exc.args)["items"]
    except NotPlain:
        args = None
    try:
        message = str(exc)
    except Exception:  # noqa: BLE001 - a __str__ that fails still leaves the type
        message = f"<{type(exc).__name__} whose message could not be read>"
    notes = getattr(exc, "__notes__", None)
    tree: dict[str, Any] = {"type": name, "args": args, "message": message[:20000],
                            "raised": type(exc).__name__}
    if isinstance(notes, list) and all(type(n) is str for n in notes):
        tree["notes"] = notes[:10]
    return tree


def _crossing_name(cls: type, registry: Registry) -> str:
    for base in cls.__mro__:
        name = qualified_name(base)
        if name in registry.exceptions:
            return name
        if base.__module__ == "builtins" and base.__name__ in BUILTIN_EXCEPTIONS:
            return base.__name__
    return "Exception"


def exception_from_tree(tree: Any, decoder: Decoder) -> Exception:
    """The exception a tree of :func:`exception_tree` describes, rebuilt from this side's classes."""
    if type(tree) is not dict or type(tree.get("type")) is not str or type(tree.get("message")) is not str:
        raise Malformed("a malformed exception")
    name = tree["type"]
    cls = decoder.registry.exceptions.get(name) or BUILTIN_EXCEPTIONS.get(name)
    if cls is None:
        raise Malformed(f"an unknown exception type {name!r}")
    args = tree.get("args")
    exc = None
    if type(args) is list:
        try:
            exc = cls(*decoder.decode(args))
        except Exception:  # noqa: BLE001 - a signature the args do not fit: the message is enough
            exc = None
    if exc is None or str(exc) != tree["message"]:
        try:
            exc = cls(tree["message"])
        except Exception:  # noqa: BLE001
            exc = Exception(tree["message"])
    for note in tree.get("notes") or []:
        if type(note) is str:
            exc.add_note(note)
    return exc


def crosses_as_exception(exc: BaseException) -> bool:
    """False for what ends a run rather than fails a call (exit, Ctrl-C, a closed generator)."""
    return not isinstance(exc, _UNCROSSABLE)


# --------------------------------------------------------------------------------------------- text
def dumps(tree: Any) -> str:
    """A tree as one line of JSON text (ASCII only, so a message never contains a newline)."""
    text = json.dumps(tree, ensure_ascii=True, separators=(",", ":"), allow_nan=True)
    if len(text) > MAX_MESSAGE:
        raise NotPlain(f"a value of {len(text) / 2**20:.1f} MiB", f"the limit is {MAX_MESSAGE // 2**20} MiB")
    return text


def loads(text: str | bytes) -> Any:
    """The tree of one JSON message; :class:`Malformed` when it is not valid JSON."""
    if len(text) > MAX_MESSAGE:
        raise Malformed("a message larger than the limit")
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise Malformed(f"a message that is not valid JSON ({type(exc).__name__})") from None


def round_trip(value: Any, registry: Registry | None = None) -> Any:
    """``value`` encoded and decoded again: the copy the other side would get (plain data only)."""
    return Decoder(registry).decode(loads(dumps(Encoder(registry).encode(value))))
