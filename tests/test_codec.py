"""The codec (judge/core/codec.py): every declared type round-trips exactly, everything else is refused
with a message the learner can act on, and a hostile tree is refused, never evaluated."""

from __future__ import annotations

import collections
import dataclasses
import json
import math
import sys
import typing
from fractions import Fraction

import numpy as np
import pytest

from judge.core import codec


@dataclasses.dataclass
class Point:
    x: float
    y: list[int]


class Pair(typing.NamedTuple):
    a: int
    b: str


class Declared(ValueError):
    pass


REGISTRY = codec.Registry(records=[Point, Pair], exceptions=[Declared])

PLAIN = [
    None, True, False, 0, -1, 2**62, 2**63, -(2**64) - 5, 10**400, 0.0, -0.0, 1.5, 1e308, 5e-324, math.inf, -math.inf,
    "", "text", "ünïcode ✓ \n\t \"quotes\" \\", "\ud800 lone surrogate", b"", b"\x00\xffbytes",
    (), (1,), ((1, 2), [3, (4,)]), [], [1, "a", None], {}, {"a": 1, 2: "b", (1, 2): [3], None: True, 1.5: ()},
    Fraction(1, 3), Fraction(-7, 2), Fraction(10**30, 3),
    [[("F", 0, 0.0, 1.0), ("B", 0, 1.0, 3.0)]],
    [(("F", 0, 0), ("B", 1, 2)), (("W", 0, 0), None, "x")], [((1, (2, ())), "x"), (3,), ()],
    [(1, [2]), ((3,),)], [((1.5, math.inf),)], [((2**70,),)], [((b"x",),)], [(({"a": (1,)},),)],
]


@pytest.mark.parametrize("value", PLAIN, ids=repr)
def test_plain_values_round_trip_exactly(value):
    copy = codec.round_trip(value)
    assert copy == value and type(copy) is type(value)
    assert repr(copy) == repr(value)  # -0.0 stays -0.0, 1 stays an int, (1,) a tuple
    if isinstance(value, (list, dict, tuple)) and value:
        assert copy is not value


def test_a_list_of_tuples_of_tuples_crosses_under_one_tag():
    pairs = [(("F", 0, 0), ("B", 1, 2)), (("W", 0, 0), ("F", 1, (1, 2.5)))]
    wire = json.loads(codec.dumps(codec.Encoder().encode(pairs)))
    assert wire == {"~": "N", "v": [[["F", 0, 0], ["B", 1, 2]], [["W", 0, 0], ["F", 1, [1, 2.5]]]]}
    assert '"N"' not in codec.dumps(codec.Encoder().encode([(1, [2])]))  # a list inside: each tuple is tagged


LONG = 20  # items: a list this long is checked in C (type sets, smallest and largest item, exact sum), not item by item
NUMBERS_AT_EVERY_PLACE = [
    [*range(LONG - 1), 2**63], [2**63, *range(LONG - 1)], [-(2**63), *range(LONG)], [*range(LONG), 10**400],
    [*map(float, range(LONG)), math.nan], [math.nan, *map(float, range(LONG))], [*map(float, range(LONG)), math.inf],
    [-math.inf, *map(float, range(LONG))], [math.inf, -math.inf, *map(float, range(LONG))], [1e308] * LONG,
    [*range(LONG), 1e19, -1e300], [True, False] * LONG, [*range(LONG), True, 2.5], [2**63 - 1, -(2**63) + 1] * LONG,
]


@pytest.mark.parametrize("numbers", NUMBERS_AT_EVERY_PLACE, ids=lambda v: repr(v)[-30:])
def test_long_lists_of_numbers_keep_every_value_and_type_wherever_an_odd_one_sits(numbers):
    """Big ints, non-finite and huge floats at the start or the end of a long list, and in rows as a column."""
    for value in (numbers, [(n, "x") for n in numbers], [((n,), "x") for n in numbers], tuple(numbers)):
        copy = codec.round_trip(value)
        assert repr(copy) == repr(value) and type(copy) is type(value)
        # what does not fit JSON as it is (nan, inf, ints beyond 64 bits) travels tagged
        assert not _untagged_misfits(codec.dumps(codec.Encoder().encode(value)))


def _untagged_misfits(wire: str) -> list[str]:
    """The JSON numbers of ``wire`` that JSON carries inexactly or not at all: NaN, Infinity, big ints."""
    misfits: list[str] = []
    json.loads(wire, parse_constant=misfits.append,
               parse_int=lambda text: misfits.append(text) if not -(2**63) < int(text) < 2**63 else 0)
    return misfits


def test_long_lists_of_rows_of_any_width_and_depth_round_trip_under_one_tag():
    rows = [("F", mb, 0.5 * mb, None, True) for mb in range(LONG)]
    ragged = [("F", mb) if mb % 2 else ("B", mb, mb + 1) for mb in range(LONG)]
    pairs = [(("F", mb, (1, (2.5, "x"))), ("B", mb)) for mb in range(LONG)]
    for value, tag in ((rows, "T"), (ragged, "T"), (pairs, "N")):
        assert json.loads(codec.dumps(codec.Encoder().encode(value)))["~"] == tag
        copy = codec.round_trip(value)
        assert copy == value and repr(copy) == repr(value)


@pytest.mark.parametrize("place", [0, LONG // 2, LONG - 1])
def test_an_odd_value_anywhere_in_a_long_list_or_its_rows_is_refused_with_its_place(place):
    for odd, named in ((LyingInt(1), "subclass of int"), (LyingFloat(1.0), "subclass of float"),
                       (LyingStr("x"), "subclass of str"), (object(), "object")):
        numbers: list = list(range(LONG))
        numbers[place] = odd
        rows = [("F", n, n) for n in range(LONG)]
        rows[place] = ("F", odd, 0)
        pairs = [(("F", n), ("B", n)) for n in range(LONG)]
        pairs[place] = (("F", place), ("B", (odd,)))
        for value, where in ((numbers, f"[{place}]"), (rows, f"[{place}][1]"), (pairs, f"[{place}][1][1][0]")):
            with pytest.raises(codec.NotPlain) as caught:
                codec.Encoder().encode(value)
            assert named in caught.value.what and caught.value.what.endswith(f"(at {where})"), caught.value.what


def test_nan_round_trips():
    assert math.isnan(codec.round_trip(math.nan))


def test_containers_keep_their_element_types():
    value = {"t": (1, 1.0, "1", b"1", Fraction(1), True), "l": [None, [()]]}
    copy = codec.round_trip(value)
    assert [type(x) for x in copy["t"]] == [int, float, str, bytes, Fraction, bool]


@pytest.mark.parametrize("dtype", ["bool", "int8", "int32", "int64", "uint8", "uint64", "float16", "float32",
                                   "float64", "complex64", "complex128"])
def test_numpy_arrays_and_scalars_round_trip(dtype):
    array = (np.arange(24).reshape(2, 3, 4) % 7).astype(dtype)
    copy = codec.round_trip(array)
    assert type(copy) is np.ndarray and copy.dtype == array.dtype and copy.shape == array.shape
    assert np.array_equal(copy, array) and copy.flags.writeable
    scalar = array.reshape(-1)[5]
    copied = codec.round_trip(scalar)
    assert type(copied) is type(scalar) and copied == scalar


def test_numpy_special_values_and_layouts():
    array = np.array([np.nan, -0.0, np.inf, 1e-310])
    copy = codec.round_trip(array)
    assert np.array_equal(copy, array, equal_nan=True) and math.copysign(1, copy[1]) == -1
    assert np.array_equal(codec.round_trip(np.arange(12.0).reshape(3, 4).T), np.arange(12.0).reshape(3, 4).T)
    assert codec.round_trip(np.zeros((0, 3))).shape == (0, 3)
    big_endian = np.arange(4, dtype=">i4")
    assert np.array_equal(codec.round_trip(big_endian), big_endian)


def test_declared_records_are_rebuilt_from_their_fields():
    point = Point(1.5, [1, 2])
    copy = codec.round_trip(point, REGISTRY)
    assert type(copy) is Point and copy == point and copy is not point
    pair = codec.round_trip([Pair(1, "x")], REGISTRY)[0]
    assert type(pair) is Pair and pair == (1, "x")


def test_a_learners_own_dataclass_with_a_declared_records_name_and_fields_crosses_as_the_declared_one():
    """A solution written against an older starter defines the record itself (issue 33: pp-simulate's
    SimResult): same name, same fields in the same order, so it is rebuilt as the declared type."""
    def own(fields: dict[str, type]) -> type:
        return dataclasses.make_dataclass("Point", list(fields.items()))

    mine = own({"x": float, "y": list})
    copy = codec.round_trip([mine(2.5, [3])], REGISTRY)[0]
    assert type(copy) is Point and copy == Point(2.5, [3])
    for other in (own({"y": list, "x": float}), own({"x": float}), dataclasses.make_dataclass("Spot", ["x", "y"])):
        with pytest.raises(codec.NotPlain, match="cannot be passed"):
            codec.round_trip(other(1.0, [1]) if len(dataclasses.fields(other)) == 2 else other(1.0), REGISTRY)


class Anything:
    def __eq__(self, other):
        return True


class LyingList(list):
    def __len__(self):
        return 0


class LyingInt(int):
    def __eq__(self, other):
        return True

    __hash__ = int.__hash__


class LyingFloat(float):
    def __eq__(self, other):
        return True

    __hash__ = float.__hash__


class LyingStr(str):
    def __eq__(self, other):
        return True

    __hash__ = str.__hash__


class LyingFraction(Fraction):
    def __eq__(self, other):
        return True


class NEP18:
    def __array_function__(self, func, types, args, kwargs):
        return True


class ArraySubclass(np.ndarray):
    pass


@dataclasses.dataclass
class Undeclared:
    x: int


class PointLike(Point):
    def __eq__(self, other):
        return True


REFUSED = [
    (Anything(), "Anything"), (LyingList([1]), "LyingList (from tests.test_codec), a subclass of list"),
    (LyingInt(3), "a subclass of int"), (LyingFloat(1.0), "a subclass of float"), (LyingStr("x"), "a subclass of str"),
    (LyingFraction(1, 2), "a subclass of Fraction"), (NEP18(), "NEP18"), (np.arange(3).view(ArraySubclass), "ndarray"),
    (np.array(["a"]), "dtype <U1"), (np.array([object()]), "dtype object"), (np.datetime64("2020-01-01"), "datetime64"),
    ({1, 2}, "set"), (frozenset(), "frozenset"), (bytearray(b"x"), "bytearray"), (range(3), "range"),
    (iter([1]), "list_iterator"), (collections.OrderedDict(), "OrderedDict"), (1j, "complex"),
    (Undeclared(1), "Undeclared"), (PointLike(1.0, []), "PointLike"), (lambda: 1, "function"), (print, "builtin"),
    (type, "type"), (Exception("x"), "Exception"),
]


@pytest.mark.parametrize(("value", "named"), REFUSED, ids=[r[1] for r in REFUSED])
def test_anything_else_is_refused_with_a_message(value, named):
    with pytest.raises(codec.NotPlain) as caught:
        codec.Encoder(REGISTRY).encode(value)
    message = str(caught.value)
    assert named in message, message
    assert "cannot be passed between the learner's code and the tests" in message
    assert "None, bool, int, float, str" in message or "numeric dtypes" in message or "numpy.asarray" in message


def test_a_refusal_says_where_the_value_sits():
    with pytest.raises(codec.NotPlain) as caught:
        codec.Encoder().encode([[("F", 0)], [("B", LyingInt(1))]])
    assert caught.value.what == "an object of type LyingInt (from tests.test_codec), a subclass of int (at [1][0][1])"
    assert caught.value.explain("schedule() returned").startswith(
        "schedule() returned an object of type LyingInt (from tests.test_codec), a subclass of int (at [1][0][1]), which")


def test_deep_and_cyclic_values_are_refused():
    cycle: list = []
    cycle.append(cycle)
    with pytest.raises(codec.NotPlain, match="nested too deeply"):
        codec.Encoder().encode(cycle)
    deep: list = []
    for _ in range(5000):
        deep = [deep]
    with pytest.raises(codec.NotPlain, match="nested too deeply"):
        codec.Encoder().encode(deep)
    assert codec.round_trip([[[[[1]]]]] * 3) == [[[[[1]]]]] * 3


def test_nesting_is_refused_even_when_the_recursion_limit_was_raised():
    """The learner's code (or an earlier test) may raise the limit: the codec counts depth itself."""
    deep: list = []
    for _ in range(codec.MAX_NESTING + 1):
        deep = [deep, 0]
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(100_000)
    try:
        with pytest.raises(codec.NotPlain, match="nested too deeply"):
            codec.Encoder().encode(deep)
    finally:
        sys.setrecursionlimit(limit)
    assert codec.round_trip(deep[0]) == deep[0]  # MAX_NESTING levels cross


def test_too_large_values_are_refused(monkeypatch):
    monkeypatch.setattr(codec, "MAX_MESSAGE", 100)
    with pytest.raises(codec.NotPlain, match="MiB"):
        codec.dumps("x" * 200)


def _nested_lists(depth: int) -> list:
    """``[[[...]]]``, ``depth`` lists deep."""
    tree: list = []
    for _ in range(depth):
        tree = [tree]
    return tree


MALFORMED = [
    {"~": "pickle", "data": "gASV"}, {"~": "t"}, {"~": "t", "v": "x"}, {"~": 7}, {"~": "T", "v": [1]}, {"~": "N", "v": [1]},
    {"~": "N", "v": "x"}, {"~": "N", "v": [_nested_lists(codec.MAX_NESTING + 5)]},
    {"~": "d", "v": [[1]]},
    {"~": "d", "v": [[[1], 2]]}, {"~": "i", "h": "0xzz"}, {"~": "i", "h": "1" * 200_000}, {"~": "f", "r": "1e5"},
    {"~": "b", "v": "@@@"}, {"~": "q", "n": 1, "d": 0}, {"~": "q", "n": 1.5, "d": 2},
    {"~": "a", "t": "<U4", "s": [1], "v": ""}, {"~": "a", "t": "|O", "s": [1], "v": ""},
    {"~": "a", "t": "<f8", "s": [3], "v": "AAAA"}, {"~": "a", "t": "(9,)f8", "s": [1], "v": ""},
    {"~": "a", "t": "<f8", "s": [-1], "v": ""}, {"~": "s", "t": "<f8", "v": "AA=="},
    {"~": "a", "t": 8, "s": [1], "v": "AAAAAAAAAAA="}, {"~": "a", "t": "complex128", "s": [0], "v": ""},
    {"~": "a", "t": "M8[ns]", "s": [0], "v": ""}, {"~": "a", "t": "<f8", "s": [True], "v": "AAAAAAAAAAA="},
    {"~": "a", "t": "<f8", "s": [1.0], "v": "AAAAAAAAAAA="}, {"~": "a", "t": "<f8", "s": [1] * 33, "v": "AAAAAAAAAAA="},
    {"~": "r", "n": "os.system", "f": {}}, {"~": "r", "n": "tests.test_codec.Point", "f": {"z": 1}},
    {"~": "ref", "side": "test", "id": 1},
]


@pytest.mark.parametrize("tree", MALFORMED, ids=lambda tree: repr(tree)[:60])
def test_malformed_trees_are_refused(tree):
    with pytest.raises(codec.Malformed):
        codec.Decoder(REGISTRY).loads(json.dumps([1, {"nested": tree}]))


def test_a_dtype_checked_once_is_still_checked_against_its_data_and_only_numeric_ones_are_kept():
    decoder = codec.Decoder(REGISTRY)
    good = codec.dumps(codec.Encoder().encode(np.arange(3, dtype="<f8")))
    assert decoder.loads(good).tolist() == [0.0, 1.0, 2.0]  # "<f8" is known from now on
    for tree in ({"~": "a", "t": "<f8", "s": [4], "v": json.loads(good)["v"]},  # 3 items' data for 4
                 {"~": "s", "t": "<f8", "v": json.loads(good)["v"]}):
        with pytest.raises(codec.Malformed):
            decoder.loads(json.dumps(tree))
    for text in ("|O", "i4,i4", "<U4", "V8", "m8"):
        with pytest.raises(codec.Malformed):
            decoder.loads(json.dumps({"~": "a", "t": text, "s": [0], "v": ""}))
    assert all(np.dtype(text).kind in "biufc" for text in codec._WIRE_DTYPES)  # noqa: SLF001


def test_malformed_text_is_refused():
    for text in ("not json", "[" * 100_000, '{"~": "t", "v": [1,]}'):
        with pytest.raises(codec.Malformed):
            codec.loads(text)


def test_a_message_off_the_pipe_is_ascii_json_and_nothing_else():
    """What the learner's side writes reaches the tests as bytes: ASCII decodes as the same text would;
    a NUL byte, another encoding's JSON (UTF-16 holds NULs, it was once read as such) or stray
    non-ASCII bytes are refused, never guessed at."""
    text = codec.dumps(codec.Encoder().encode([("F", 0, 0), (("F", 1, 1), ("B", 0, 1))]))
    assert codec.loads(text.encode("ascii")) == codec.loads(text) == [("F", 0, 0), (("F", 1, 1), ("B", 0, 1))]
    for data in (b'{"a": 1}\x00', '{"a": 1}'.encode("utf-16-be"), '{"a": 1}'.encode("utf-32-le"),
                 b'{"a": "\xff"}', b"\x00" * 8):
        with pytest.raises(codec.Malformed):
            codec.loads(data)


def test_a_json_object_without_a_tag_is_a_dict_of_str_keys():
    assert codec.loads('{"a": [1, {"b": null}]}') == {"a": [1, {"b": None}]}
    assert codec.round_trip({"~": 1, 2: "x"}) == {"~": 1, 2: "x"}  # keys that need the tagged form


def test_builtin_and_declared_exceptions_cross_by_type_and_message():
    encoder, decoder = codec.Encoder(REGISTRY), codec.Decoder(REGISTRY)
    for exc in (ValueError("bad p"), KeyError("k"), ZeroDivisionError("division by zero"), Declared("mine"),
                OSError(2, "No such file"), IndexError()):
        tree = decoder.loads(codec.dumps(codec.exception_tree(exc, encoder)))
        copy = codec.exception_from_tree(tree, REGISTRY)
        assert type(copy) is type(exc) and str(copy) == str(exc) and copy.args == exc.args


def test_other_exceptions_cross_as_their_nearest_builtin_base():
    class BadArgs(ValueError):
        def __init__(self, a, b):
            super().__init__(f"{a}/{b}")

    class Weird(Exception):
        def __str__(self):
            raise RuntimeError("no")

    encoder = codec.Encoder(REGISTRY)
    tree = codec.exception_tree(BadArgs(1, object()), encoder)
    copy = codec.exception_from_tree(tree, REGISTRY)
    assert type(copy) is ValueError and str(copy) == "1/<object" + str(copy)[9:] and tree["raised"] == "BadArgs"
    weird = codec.exception_from_tree(codec.exception_tree(Weird(), encoder), REGISTRY)
    assert type(weird) is Exception and "could not be read" in str(weird)


def test_an_exception_tree_of_an_unknown_type_is_malformed():
    with pytest.raises(codec.Malformed):
        codec.exception_from_tree({"type": "os.system", "message": "x", "args": None}, codec.Registry())
    with pytest.raises(codec.Malformed):
        codec.exception_from_tree({"type": "SystemExit", "message": "x", "args": None}, codec.Registry())
