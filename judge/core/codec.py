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
(:class:`Malformed`). A JSON array is a list; ``null``, ``true``, ``false``, numbers and strings are
themselves; a JSON object is a dict of ``str`` keys, or, with the key ``"~"``, a tagged value (a tuple,
a dict of other keys, bytes, a Fraction, a big int, a non-finite float, a numpy array or scalar, a
record, a reference). Tagged values are rebuilt while the JSON is parsed (the parser's object
hook), so a message costs one pass of the standard library's C parser. Pure standard library
(numpy is used only when the value is a numpy object, or a numpy tree is decoded): runs in both
engines.
"""

from __future__ import annotations

import base64
import binascii
import builtins
import json
import math
import sys
from collections.abc import Callable, Iterable
from itertools import chain
from typing import Any, Protocol

TAG = "~"
MAX_DEPTH = 100  # nesting of containers where a refused value is looked for
MAX_NESTING = 200  # containers inside containers a value may have (a list that contains itself has no end)
MAX_MESSAGE = 32 * 1024 * 1024  # characters of one message's JSON text
#: lists, tuples and dicts one message may hold: what bounds the memory and time its decoding costs
#: (a message of tiny nested containers costs far more to decode than its size says)
MAX_CONTAINERS = 1_000_000
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
        """The declared name ``cls`` crosses as: its own, or that of the declared dataclass it copies (a
        learner's own ``@dataclass class SimResult`` with the declared one's name and fields, as an older
        starter defined it, crosses as the declared ``SimResult`` and is rebuilt as it on the other side)."""
        name = self._record_names.get(cls)
        if name is None and _is_dataclass(cls):
            name = self._look_alike(cls)
        return name

    def _look_alike(self, cls: type) -> str | None:
        fields = [f.name for f in _fields(cls)]
        for name, declared in self.records.items():
            if (declared.__qualname__ == cls.__qualname__ and _is_dataclass(declared)
                    and [f.name for f in _fields(declared)] == fields):
                self._record_names[cls] = name
                return name
        return None


def _is_dataclass(value: Any) -> bool:
    """``dataclasses.is_dataclass(value)``, without importing :mod:`dataclasses` where nothing has: no
    dataclass exists then, and a learner process that does not use them starts 20-30 ms sooner."""
    module = sys.modules.get("dataclasses")
    return module is not None and bool(module.is_dataclass(value))


def _fields(value: Any) -> tuple[Any, ...]:
    """``dataclasses.fields(value)`` of a value :func:`_is_dataclass` accepted."""
    return tuple(sys.modules["dataclasses"].fields(value))


def _fraction_class() -> type | None:
    """``fractions.Fraction`` where something imported :mod:`fractions` (else no Fraction exists here);
    the module and :mod:`decimal` under it cost a learner process's start about 10 ms."""
    return getattr(sys.modules.get("fractions"), "Fraction", None)


def qualified_name(cls: type) -> str:
    """``module.QualName`` of a class: how declarations and the wire name it."""
    return f"{cls.__module__}.{cls.__qualname__}"


def describe_type(value: Any) -> str:
    """How a message names the type of a refused value."""
    cls = type(value)
    plain = next((base for base in cls.__mro__[1:] if base in (*_PLAIN_BASES, _fraction_class())), None)
    where = "" if cls.__module__ == "builtins" else f" (from {cls.__module__})"
    if plain is not None:
        return f"{cls.__qualname__}{where}, a subclass of {plain.__name__}"
    return f"{cls.__qualname__}{where}"


_PLAIN_BASES = (bool, int, float, complex, str, bytes, bytearray, tuple, list, dict, set, frozenset)


# --------------------------------------------------------------------------------------------- encoding
class _Refused(Exception):
    """Raised inside the encoder at the first value that cannot cross (turned into :class:`NotPlain`)."""

    def __init__(self, value: Any, what: str = "", advice: str = "") -> None:
        self.value, self.what, self.advice = value, what, advice


class Encoder:
    """Plain values -> JSON trees; objects by reference through ``refs``.

    The hot path does no bookkeeping: a value that cannot cross stops it, and only then is its
    place in the whole value looked for (:func:`_locate`), for the message.
    """

    def __init__(self, registry: Registry | None = None, refs: References | None = None) -> None:
        self.registry = registry or Registry()
        self.refs = refs or NoReferences()
        self._numpy: Any = None
        self._depth = 0

    def encode(self, value: Any) -> Any:
        """The JSON tree of ``value``; raises :class:`NotPlain` naming the first value that cannot cross."""
        self._numpy = sys.modules.get("numpy")
        try:
            return self._encode(value)
        except RecursionError:
            raise NotPlain("a value nested too deeply", "is it a list that contains itself?") from None
        except _Refused as refused:
            where = _at(_locate(value, refused.value))
            what = refused.what or f"an object of type {describe_type(refused.value)}"
            raise NotPlain(what + where, refused.advice) from None

    def _encode(self, value: Any) -> Any:
        kind = type(value)
        if kind is str or value is None or kind is bool:
            return value
        if kind is int:
            return value if -_SMALL_INT < value < _SMALL_INT else {TAG: "i", "h": hex(value)}
        if kind is float:
            return value if math.isfinite(value) else {TAG: "f", "r": repr(value)}
        if kind is list:
            return self._encode_list(value)
        if kind is tuple:
            return {TAG: "t", "v": value if _all_scalars(value) else self._nested(list, map(self._encode, value))}
        if kind is dict:
            if TAG not in value and all(type(key) is str for key in value):
                return self._nested(dict, ((key, self._encode(item)) for key, item in value.items()))
            return {TAG: "d", "v": self._nested(list, ([self._encode(key), self._encode(item)]
                                                        for key, item in value.items()))}
        return self._encode_other(value, kind)

    def _encode_list(self, value: list[Any]) -> Any:
        kinds = set(map(type, value))
        if kinds <= _JSON_SCALARS and _scalars_fit(value, kinds):
            return value  # the JSON encoder writes it as it is
        if kinds == _TUPLES:
            if _rows_of_scalars(value):
                return {TAG: "T", "v": value}  # a list of tuples of scalars (schedules, timelines): one tag
            if _tuple_trees(value):
                return {TAG: "N", "v": value}  # a list of tuples of tuples (pairs of operations): one tag
        return self._nested(list, map(self._encode, value))

    def _nested(self, build: Callable[[Any], Any], items: Any) -> Any:
        """``build(items)`` one level deeper; counted here, not left to the recursion limit, which the
        learner's code or a test may have raised."""
        self._depth += 1
        try:
            if self._depth > MAX_NESTING:
                raise RecursionError
            return build(items)
        finally:
            self._depth -= 1

    def _encode_other(self, value: Any, kind: type) -> Any:
        if kind is bytes:
            return {TAG: "b", "v": base64.b64encode(value).decode("ascii")}
        if kind is _fraction_class():
            return {TAG: "q", "n": self._encode(value.numerator), "d": self._encode(value.denominator)}
        numpy = self._numpy
        if numpy is not None and isinstance(value, (numpy.ndarray, numpy.generic)):
            return _encode_numpy(numpy, value)
        name = self.registry.record_name(kind)
        if name is not None:
            return self._nested(lambda _: self._encode_record(name, value), None)
        reference = self.refs.reference(value)
        if reference is not None:
            return reference
        raise _Refused(value)

    def _encode_record(self, name: str, value: Any) -> dict[str, Any]:
        if _is_dataclass(value):
            return {TAG: "r", "n": name, "f": {f.name: self._encode(getattr(value, f.name))
                                               for f in _fields(value)}}
        return {TAG: "r", "n": name, "v": [self._encode(item) for item in tuple.__iter__(value)]}


#: the scalars JSON writes as they are (ints of 64 bits and finite floats only: see :func:`_scalars_fit`)
_JSON_SCALARS = frozenset({str, bool, type(None), int, float})
_NUMBERS = frozenset({bool, int, float})
_TUPLES = frozenset({tuple})
_FEW = 8  # items below which a plain loop checks a sequence faster than the C builtins' set-up


def _all_scalars(items: Any) -> bool:
    """Whether every item is a str, bool, None, an int of 64 bits or a finite float (JSON as it is)."""
    if len(items) <= _FEW:
        return _each_fits(items)
    kinds = set(map(type, items))
    return kinds <= _JSON_SCALARS and _scalars_fit(items, kinds)


def _scalars_fit(items: Any, kinds: set[type]) -> bool:
    """Whether the ints and floats among ``items``, whose types are ``kinds`` (all of them scalars), fit
    JSON as they are. Lists of numbers only are checked in C: their smallest and largest item, then their
    exact sum, which is not finite when one of them is nan or infinite; anything else item by item."""
    if int not in kinds and float not in kinds:
        return True
    if not kinds <= _NUMBERS or len(items) <= _FEW:
        return _each_fits(items)
    try:
        if min(items) > -_SMALL_INT and max(items) < _SMALL_INT and math.isfinite(math.fsum(items)):
            return True
    except (OverflowError, ValueError):  # a sum beyond the floats, or inf - inf
        pass
    return _each_fits(items)  # nan, a float beyond 2**63 (which fits), a big int (which does not): exactly


def _each_fits(items: Any) -> bool:
    """:func:`_all_scalars` item by item."""
    for item in items:
        kind = type(item)
        if kind is str or kind is bool or item is None:
            continue
        if kind is int:
            if -_SMALL_INT < item < _SMALL_INT:
                continue
            return False
        if kind is float and item - item == 0.0:  # finite: inf - inf and nan - nan are nan
            continue
        return False
    return True


def _rows_of_scalars(rows: list[tuple[Any, ...]]) -> bool:
    """Whether every tuple of ``rows`` holds only scalars :func:`_all_scalars` passes: a column at a time
    when the rows are of one width (a schedule's ``(op, micro-batch, stage)``: each column of one type)."""
    if len(set(map(len, rows))) == 1:
        return all(map(_all_scalars, zip(*rows)))
    return _all_scalars(list(chain.from_iterable(rows)))


def _tuple_trees(items: list[Any]) -> bool:
    """Whether every item is a scalar :func:`_all_scalars` passes or a tuple of such items, at any depth
    up to :data:`MAX_NESTING`: checked a level at a time (every tuple of one level unpacked into the next)."""
    level = items
    for _ in range(MAX_NESTING):
        tuples = [item for item in level if type(item) is tuple]
        if len(tuples) < len(level) and not _all_scalars([item for item in level if type(item) is not tuple]):
            return False
        if not tuples:
            return True
        level = list(chain.from_iterable(tuples))
    return False


def _encode_numpy(numpy: Any, value: Any) -> dict[str, Any]:
    scalar = isinstance(value, numpy.generic)
    if not scalar and type(value) is not numpy.ndarray:
        raise _Refused(value, advice="pass a plain numpy.ndarray (numpy.asarray(x)), not a subclass")
    little = _LITTLE_ENDIAN.get(value.dtype)
    if little is None:
        if value.dtype.kind not in _NUMERIC_KINDS or value.dtype.fields is not None:
            raise _Refused(value, f"a numpy {'scalar' if scalar else 'array'} of dtype {value.dtype}",
                           "only numeric dtypes (bool, integers, floats, complex) cross")
        little = _LITTLE_ENDIAN[value.dtype] = value.dtype.newbyteorder("<")
    array = numpy.asarray(value)
    data = base64.b64encode(array.astype(little, order="C", copy=False).tobytes()).decode("ascii")
    if scalar:
        return {TAG: "s", "t": little.str, "v": data}
    return {TAG: "a", "t": little.str, "s": list(array.shape), "v": data}


#: numeric dtype -> the same dtype little-endian (what the wire carries); numeric dtypes only, a few dozen
_LITTLE_ENDIAN: dict[Any, Any] = {}


def _locate(value: Any, target: Any, where: str = "", depth: int = 0) -> str:
    """Where ``target`` sits inside ``value`` (``[1][0]``, ``['key']``, ``.field``); '' at the top or unknown."""
    if value is target or depth > MAX_DEPTH:
        return where
    items: list[tuple[str, Any]] = []
    if type(value) in (list, tuple):
        items = [(f"{where}[{i}]", item) for i, item in enumerate(value)]
    elif type(value) is dict:
        items = [(f"{where} key {k!r}", k) for k in value] + [(f"{where}[{k!r}]", v) for k, v in value.items()]
    elif _is_dataclass(value) and not isinstance(value, type):
        items = [(f"{where}.{f.name}", getattr(value, f.name)) for f in _fields(value)]
    for place, item in items:
        if item is target:
            return place
        if type(item) in (list, tuple, dict) or _is_dataclass(item):
            found = _locate(item, target, place, depth + 1)
            if found:
                return found
    return ""


def _at(where: str) -> str:
    return f" (at {where})" if where else ""


# --------------------------------------------------------------------------------------------- decoding
class Decoder:
    """JSON text -> values. Decoding happens while the JSON is parsed: a JSON array is a list, and
    every JSON object goes through :meth:`hook`, which rebuilds a tagged value (checking its format:
    the peer may be hostile) or keeps an untagged one as the dict of ``str`` keys it is."""

    def __init__(self, registry: Registry | None = None, refs: References | None = None) -> None:
        self.registry = registry or Registry()
        self.refs = refs or NoReferences()
        # json.loads(text, object_hook=...) builds a decoder for every message: one is kept instead
        self._json = json.JSONDecoder(object_hook=self.hook)

    def loads(self, text: str | bytes) -> Any:
        """The value (or message) in ``text``; :class:`Malformed` when it does not follow the format."""
        if len(text) > MAX_MESSAGE:
            raise Malformed("a message larger than the limit")
        if _containers(text) > MAX_CONTAINERS:
            raise Malformed(f"a value with more than {MAX_CONTAINERS:,} lists, tuples and dicts, more than the tests "
                            "accept: return a smaller value")
        if type(text) is bytes and text.isascii():
            # a message off the pipe: json.loads would guess its encoding and build a decoder for it
            text = text.decode("ascii")
        try:
            if type(text) is str and not text.startswith("\ufeff"):
                return self._json.decode(text)  # what json.loads does with such a text
            return json.loads(text, object_hook=self.hook)
        except (ValueError, RecursionError) as exc:
            if isinstance(exc, Malformed):
                raise
            raise Malformed(f"a message that is not valid JSON ({type(exc).__name__})") from None

    def hook(self, tree: dict[str, Any]) -> Any:
        tag = tree.get(TAG)
        if tag is None:
            return tree
        decode = _DECODERS.get(tag) if type(tag) is str else None
        if decode is None:
            raise Malformed(f"unknown value kind {tag!r}")
        return decode(self, tree)

    def _tuple(self, tree: dict[str, Any]) -> tuple[Any, ...]:
        return tuple(_field(tree, "v", list))

    def _tuples(self, tree: dict[str, Any]) -> list[tuple[Any, ...]]:
        rows = _field(tree, "v", list)
        if not set(map(type, rows)) <= _LISTS:
            raise Malformed("a list of tuples with an item that is not one")
        return list(map(tuple, rows))

    def _tuple_trees(self, tree: dict[str, Any]) -> list[tuple[Any, ...]]:
        rows = []
        for row in _field(tree, "v", list):
            if type(row) is not list:
                raise Malformed("a list of tuples with an item that is not one")
            for item in row:
                if type(item) is list:  # a tuple of tuples (a pair of operations)
                    rows.append(_as_tuples(row, 0))
                    break
            else:  # a tuple of scalars (most rows): no call per row (pp-dualpipe decodes thousands)
                rows.append(tuple(row))
        return rows

    def _dict(self, tree: dict[str, Any]) -> dict[Any, Any]:
        result = {}
        for pair in _field(tree, "v", list):
            if type(pair) is not list or len(pair) != 2:
                raise Malformed("a dict item that is not a [key, value] pair")
            try:
                result[pair[0]] = pair[1]
            except TypeError:
                raise Malformed("an unhashable dict key") from None
        return result

    def _int(self, tree: dict[str, Any]) -> int:
        text = _field(tree, "h", str)
        if len(text) > 100_000:
            raise Malformed("an integer too large")
        try:
            return int(text, 16)
        except ValueError:
            raise Malformed("a malformed integer") from None

    def _float(self, tree: dict[str, Any]) -> float:
        text = _field(tree, "r", str)
        if text not in ("nan", "inf", "-inf"):
            raise Malformed("a malformed float")
        return float(text)

    def _bytes(self, tree: dict[str, Any]) -> bytes:
        return _b64(tree)

    def _fraction(self, tree: dict[str, Any]) -> Any:
        from fractions import Fraction

        numerator, denominator = tree.get("n"), tree.get("d")
        if type(numerator) is not int or type(denominator) is not int or denominator <= 0:
            raise Malformed("a malformed Fraction")
        return Fraction(numerator, denominator)

    def _numpy(self, tree: dict[str, Any]) -> Any:
        import numpy

        dtype = _field(tree, "t", str)
        kinds = _WIRE_DTYPES.get(dtype)
        if kinds is None:
            kinds = _wire_dtype(dtype)
        kind, native = kinds
        data = _b64(tree)
        if tree[TAG] == "s":
            if len(data) != kind.itemsize:
                raise Malformed("a numpy scalar of the wrong size")
            return numpy.frombuffer(data, dtype=kind)[0].astype(native)
        shape = _field(tree, "s", list)
        if len(shape) > 32 or not all(type(n) is int and n >= 0 for n in shape):
            raise Malformed("a malformed array shape")
        if math.prod(shape) * kind.itemsize != len(data):
            raise Malformed("an array whose data does not match its shape")
        return numpy.frombuffer(data, dtype=kind).astype(native).reshape(shape)

    def _record(self, tree: dict[str, Any]) -> Any:
        name = _field(tree, "n", str)
        cls = self.registry.records.get(name)
        if cls is None:
            raise Malformed(f"an undeclared record type {name!r}")
        try:
            if "f" in tree:
                return cls(**_field(tree, "f", dict))
            return cls(*_field(tree, "v", list))
        except TypeError as exc:
            raise Malformed(f"record {name} cannot be rebuilt: {exc}") from None

    def _ref(self, tree: dict[str, Any]) -> Any:
        return self.refs.resolve(tree)


#: dtype text on the wire -> (that dtype, the same in native byte order); only texts that passed
#: :func:`_wire_dtype`'s checks, so a hostile peer cannot grow it past the few hundred numeric ones
_WIRE_DTYPES: dict[str, tuple[Any, Any]] = {}
_LISTS = frozenset({list})


def _wire_dtype(dtype: str) -> tuple[Any, Any]:
    import numpy

    try:
        kind = numpy.dtype(dtype)
    except (TypeError, ValueError):
        raise Malformed(f"an unknown dtype {dtype!r}") from None
    if kind.kind not in _NUMERIC_KINDS or kind.fields is not None or len(dtype) > 8:
        raise Malformed(f"a non-numeric dtype {dtype!r}")
    kinds = _WIRE_DTYPES[dtype] = (kind, kind.newbyteorder("="))
    return kinds


def _as_tuples(items: list[Any], depth: int) -> tuple[Any, ...]:
    """``items`` as a tuple, and every list inside it as a tuple too (what :data:`TAG` "N" carries)."""
    if depth > MAX_NESTING:
        raise Malformed("tuples nested too deeply")
    return tuple([_as_tuples(item, depth + 1) if type(item) is list else item for item in items])


def _field(tree: dict[str, Any], key: str, kind: type) -> Any:
    value = tree.get(key)
    if type(value) is not kind:
        raise Malformed(f"{tree.get(TAG)!r} without {key!r}")
    return value


def _b64(tree: dict[str, Any]) -> bytes:
    try:
        return binascii.a2b_base64(_field(tree, "v", str), strict_mode=True)  # base64.b64decode(validate=True)
    except (ValueError, TypeError):
        raise Malformed("malformed base64 data") from None


_DECODERS: dict[str, Callable[[Decoder, dict[str, Any]], Any]] = {
    "t": Decoder._tuple, "T": Decoder._tuples, "N": Decoder._tuple_trees, "d": Decoder._dict, "i": Decoder._int,
    "f": Decoder._float, "b": Decoder._bytes, "q": Decoder._fraction, "a": Decoder._numpy, "s": Decoder._numpy,
    "r": Decoder._record, "ref": Decoder._ref,
}


# --------------------------------------------------------------------------------------------- exceptions
#: builtin exception classes by name: what a raised exception crosses as (or its nearest builtin base)
BUILTIN_EXCEPTIONS = {name: cls for name, cls in vars(builtins).items()
                      if isinstance(cls, type) and issubclass(cls, Exception)}


def exception_tree(exc: BaseException, encoder: Encoder) -> dict[str, Any]:
    """An exception as plain data: its declared or builtin type, args (when they cross) and message."""
    name = _crossing_name(type(exc), encoder.registry)
    try:
        args = encoder.encode(list(exc.args))
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


def exception_from_tree(tree: Any, registry: Registry) -> Exception:
    """The exception a tree of :func:`exception_tree` describes (as parsed: its args decoded), rebuilt
    from this side's classes."""
    if type(tree) is not dict or type(tree.get("type")) is not str or type(tree.get("message")) is not str:
        raise Malformed("a malformed exception")
    name = tree["type"]
    cls = registry.exceptions.get(name) or BUILTIN_EXCEPTIONS.get(name)
    if cls is None:
        raise Malformed(f"an unknown exception type {name!r}")
    args = tree.get("args")
    exc = None
    if type(args) is list:
        try:
            exc = cls(*args)
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


# --------------------------------------------------------------------------------------------- text
#: json.dumps(tree, ensure_ascii=True, separators=(",", ":"), allow_nan=True) makes this encoder for
#: every call; one is kept instead (encoding with it is reentrant). It does not look for cycles: a tree
#: holds no container that can contain itself (the :class:`Encoder` builds every dict and every list but
#: lists of scalars or of tuples, which cannot), and that check cost a quarter of the encoding.
_JSON_ENCODER = json.JSONEncoder(ensure_ascii=True, separators=(",", ":"), allow_nan=True, check_circular=False)


def dumps(tree: Any) -> str:
    """A tree as one line of JSON text (ASCII only, so a message never contains a newline)."""
    text = _JSON_ENCODER.encode(tree)
    if len(text) > MAX_MESSAGE:
        raise NotPlain(f"a value of {len(text) / 2**20:.1f} MiB", f"the limit is {MAX_MESSAGE // 2**20} MiB")
    if _containers(text) > MAX_CONTAINERS:
        raise NotPlain(f"a value of more than {MAX_CONTAINERS:,} lists, tuples and dicts",
                       f"the limit is {MAX_CONTAINERS:,}")
    return text


def _containers(text: str | bytes) -> int:
    """At least the number of lists and dicts in a message's JSON text (brackets inside strings count too)."""
    if isinstance(text, bytes):
        return text.count(b"[") + text.count(b"{")
    return text.count("[") + text.count("{")


def loads(text: str | bytes) -> Any:
    """One message of plain data only (no references, no records): :meth:`Decoder.loads` of a bare decoder."""
    return Decoder().loads(text)


def round_trip(value: Any, registry: Registry | None = None) -> Any:
    """``value`` encoded and decoded again: the copy the other side would get (plain data only)."""
    return Decoder(registry).loads(dumps(Encoder(registry).encode(value)))
