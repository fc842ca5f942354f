"""The test side of the boundary: the stand-in for the learner's module, and what the tests lend.

The tests import the learner's module by its name (``import pp_sim``) and get a
:class:`StandInModule`: each attribute is asked of the learner's side, each function is a
:class:`RemoteFunction` whose calls cross the codec, each generator of the learner's a
:class:`RemoteGenerator` (``next``, ``send``, ``throw``, ``close``). Problem authors write ordinary
pytest tests against it.

Objects the tests pass to the learner's code that are not plain data stay here and are *lent*: the
learner's side gets a proxy, and each use of it comes back as a request that :class:`TestSide`
serves, limited to the members the problem declares for that type (callables lend only their
call). Everything lent during a test is revoked when the test ends, so a proxy kept by the
learner's code cannot reach into a later test.

The learner's side is started on first use and started again after it crashed or a call ran past
its test's time limit: :class:`TestSide` holds the current one (a :class:`Learner`, from the
engine: a sandboxed process natively, an endpoint in the same interpreter in the browser).
"""

from __future__ import annotations

import functools
import inspect
import types
from collections.abc import Callable, Generator, Iterator, MappingView, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import pytest

from ..core import codec, protocol
from ..core.collector import OUTPUT_LIMIT
from ..core.problem import Problem

#: more functions than a learner's module has: the test side keeps a stand-in for each one it hears of,
#: so a hostile learner side that announced new ones with every reply would fill root's test process
MAX_MODULE_FUNCTIONS = 10_000
#: bytes of messages the test side takes from the learner's side during one test (the references' largest test
#: takes under 2 MiB): each is decoded in root's test process, and a lent object keeps what it is given (30 MiB
#: strings stored again and again into pp-1f1b-emulated's stash held 1.2 GB there within one test's CPU time)
MAX_INPUT_PER_TEST = 64 * 2**20
_CALLABLES = (types.FunctionType, types.MethodType, types.BuiltinFunctionType, functools.partial)


@dataclass
class LearnerSpec:
    """What a learner process holds and how it is limited."""

    module: str  # the import name of the entry file
    entry: str  # its file name
    source: str
    support: dict[str, str] = field(default_factory=dict)  # file name -> text
    declarations: dict[str, list[str]] = field(default_factory=dict)  # records, exceptions (module.Name)
    memory_limit: int = 1024  # MiB
    numpy: bool = False  # import numpy before the learner's module (it or a support module uses it)
    start_timeout: float = 10.0  # seconds to start and import the learner's module


class Learner(Protocol):
    """A started learner's side, as an engine provides it."""

    @property
    def connection(self) -> protocol.Connection:
        """The connection to the learner's side."""
        ...

    @property
    def import_error(self) -> str:
        """Why the learner's module did not import (empty when it did)."""
        ...

    @property
    def bound(self) -> dict[str, Any]:
        """The module's functions when it was ready: ``{name: RemoteFunction}``."""
        ...

    def stop(self, ended: bool = False) -> str:
        """End it; a sentence on how it ended when that explains a crash (else empty). ``ended``: its
        channel closed, so it is ending by itself."""
        ...


@dataclass
class Members:
    """What a lent type offers the learner's code: methods to call, attributes to read, and of those
    the ``fixed`` ones, which never change once an object is lent (they travel with it)."""

    methods: list[str] = field(default_factory=list)
    attributes: list[str] = field(default_factory=list)
    fixed: list[str] = field(default_factory=list)


def members_of(cls: type, names: list[str], fixed: Sequence[str] = ()) -> Members:
    """Sort the declared ``names`` of ``cls`` into methods and attributes (a name the class does not
    define is an attribute its instances set)."""
    members = Members()
    for name in names:
        try:
            static = inspect.getattr_static(cls, name)
        except AttributeError:
            members.attributes.append(name)
            continue
        is_method = callable(static) and not isinstance(static, property) or isinstance(
            static, (staticmethod, classmethod))
        (members.methods if is_method else members.attributes).append(name)
    members.fixed = [name for name in fixed if name in members.attributes]
    return members


class TestSide:
    """The test process's endpoint for one run: the stand-in module, lent objects, remote objects."""

    __test__ = False  # not a test class, whatever pytest's naming rules say

    def __init__(self, module_name: str, start: Callable[[TestSide], Learner], registry: codec.Registry,
                 lendable: dict[type, Members]) -> None:
        self.module_name = module_name
        self._start = start
        self.registry = registry
        self.lendable = lendable
        self.encoder = codec.Encoder(registry, self)
        self.decoder = codec.Decoder(registry, self)
        self.learner: Learner | None = None
        self.generation = 0
        self.module = StandInModule(module_name, self)
        self.functions: dict[str, RemoteFunction] = {}  # the module's functions, called without asking first
        self._lent: dict[int, Any] = {}
        self._lent_ids: dict[int, int] = {}
        self._next_lent = 0
        self._described: set[type] = set()
        self._used = False  # the learner's module was called since it was (last) imported
        # characters of the learner's stdout ("out") and stderr ("err") the current test may still keep (natively)
        self.output_left = {"out": 0, "err": 0}
        self.input_left = MAX_INPUT_PER_TEST  # bytes the current test may still receive from the learner's side

    def loads(self, text: str | bytes) -> Any:
        """A message from the learner's side, decoded, within what one test may receive from it (counted before
        it is decoded): past that, the message is refused and the learner's side replaced."""
        self.input_left -= len(text)
        if self.input_left < 0:
            raise codec.Malformed(f"more than {MAX_INPUT_PER_TEST // 2**20} MiB sent to the tests during one test, "
                                  "more than any test needs: pass smaller values")
        return self.decoder.loads(text)

    # --- the learner's side ------------------------------------------------------------------
    def start(self) -> str:
        """Start the learner's side; the import error message, or '' when the module imported."""
        self.learner = self._start(self)
        self._used = False
        self._described.clear()
        self.functions = {name: f for name, f in self.learner.bound.items() if isinstance(f, RemoteFunction)}
        if len(self.functions) > MAX_MODULE_FUNCTIONS:
            self.stop()
            raise _too_many_functions()
        return self.learner.import_error

    def stop(self) -> None:
        if self.learner is not None:
            self.learner.stop()
            self.learner = None

    def request(self, message: protocol.Request) -> protocol.Reply:
        """Send a request to the learner's side (started again if needed); any failure replaces it."""
        __tracebackhide__ = True
        if self.learner is None:
            error = self.start()
            if error:
                self.stop()
                raise protocol.LearnerCrashed(f"the learner's code was started again and failed: {error}")
        learner = self.learner
        assert learner is not None
        self._used = True
        try:
            reply = learner.connection.request(message)
        except BaseException as exc:
            self._replace(learner, exc)
            raise
        changes = reply.get("bound")
        if type(changes) is dict:
            if len(self.functions.keys() | changes.keys()) > MAX_MODULE_FUNCTIONS:
                violation = _too_many_functions()
                self._replace(learner, violation)
                raise violation
            for name, function in changes.items():
                if isinstance(function, RemoteFunction):
                    self.functions[name] = function
                else:
                    self.functions.pop(name, None)
        return reply

    def _replace(self, learner: Learner, exc: BaseException) -> None:
        """Drop a learner side whose call did not complete: the next call starts a fresh one."""
        how = learner.stop(ended=isinstance(exc, protocol.LearnerCrashed))
        self.learner = None
        self.functions = {}
        self.generation += 1
        if isinstance(exc, protocol.LearnerCrashed) and how:
            exc.args = (how,)

    def outcome(self, reply: protocol.Reply, context: str) -> Any:
        """The value of a reply, or the exception it stands for, raised."""
        __tracebackhide__ = True
        kind = protocol.reply_kind(reply)
        value = reply[kind]  # values arrive decoded (the connection's loads is this side's decoder)
        if kind == "ok":
            return value
        if kind == "raise":
            raise self.learner_exception(value)
        if kind == "refused":
            raise protocol.ValueRefused(f"{context} returned{value}")
        if kind == "exit":
            raise protocol.BoundaryError(exit_message(value))
        raise protocol.ProtocolViolation(f"an unexpected reply to {context}")

    def learner_exception(self, tree: Any) -> BaseException:
        """An exception of the learner's code, rebuilt here, with its frames in the learner's files."""
        try:
            exc = codec.exception_from_tree(tree, self.registry)
        except codec.Malformed as error:
            return protocol.ProtocolViolation(f"the learner's side sent a malformed exception ({error})")
        frames = tree.get("frames")
        exc.__judge_frames__ = frames if type(frames) is list else []  # type: ignore[attr-defined]
        return exc

    def encode_arguments(self, args: tuple[Any, ...], kwargs: dict[str, Any], context: str
                         ) -> tuple[list[Any], dict[str, Any]]:
        try:
            return self.encoder.encode(list(args)), self.encoder.encode(dict(kwargs))
        except codec.NotPlain as exc:
            raise protocol.ValueRefused(exc.explain(f"the test passed {context}")) from None

    # --- the codec's references ----------------------------------------------------------------
    def reference(self, value: Any) -> dict[str, Any] | None:
        if isinstance(value, RemoteObject):
            return value.ref(self)
        members = self.lendable.get(type(value))
        if members is None and isinstance(value, _CALLABLES):
            members = Members(methods=["__call__"])
        if members is None:
            return None
        ident = self._lent_ids.get(id(value))
        if ident is None or self._lent.get(ident) is not value:
            self._next_lent += 1
            ident = self._next_lent
            self._lent[ident], self._lent_ids[id(value)] = value, ident
        tree: dict[str, Any] = {codec.TAG: "ref", "side": "test", "id": ident}
        tree.update(type=codec.qualified_name(type(value)), methods=members.methods, attributes=members.attributes)
        if members.fixed:
            tree["fixed"] = {name: self.encoder._encode(getattr(value, name)) for name in members.fixed}
        return tree

    def resolve(self, tree: dict[str, Any]) -> Any:
        side = tree.get("side")
        if side == "class":
            cls = self.registry.records.get(tree.get("type"))  # type: ignore[arg-type]
            if cls is None:
                raise codec.Malformed("an undeclared class")
            return cls
        ident = tree.get("id")
        if type(ident) is not int:
            raise codec.Malformed("a reference without an id")
        if side == "test":
            if ident not in self._lent:
                raise codec.Malformed("an object the tests lent to an earlier test, or never lent")
            return self._lent[ident]
        if side == "learner":
            kind, name = tree.get("kind"), tree.get("name")
            name = name if type(name) is str else "?"
            if kind == "generator":
                return RemoteGenerator(self, ident, name)
            if kind == "function":
                return RemoteFunction(self, ident, name)
        raise codec.Malformed("a reference of an unknown kind")

    def fresh(self) -> None:
        """Before each test: the learner's module as written, imported anew if an earlier test used it,
        so no test's verdict depends on what earlier tests left in the module (both engines alike)."""
        __tracebackhide__ = True
        if self.learner is None or not self._used:
            return
        reply = self.request(protocol.FreshRequest(op="fresh"))
        self._used = False
        self.outcome(reply, "importing the learner's module again for this test")

    def revoke(self) -> None:
        """Forget every object lent so far (at the end of each test)."""
        self._lent.clear()
        self._lent_ids.clear()

    # --- serving the learner's side ------------------------------------------------------------
    def handle(self, message: dict[str, Any]) -> protocol.Reply:
        """The reply to one request of the learner's code about an object the tests lent it."""
        serve = _SERVERS.get(message.get("op"))  # type: ignore[arg-type]
        if serve is None:
            raise protocol.ProtocolViolation(f"the test side does not serve {message.get('op')!r}")
        ident = message.get("target")
        target = self._lent.get(ident) if type(ident) is int else None
        if target is None:
            return protocol.reply("raise", self._exception_tree(ReferenceError(
                "this object was lent to the learner's code for an earlier test and is no longer available")))
        members = self.lendable.get(type(target)) or Members(methods=["__call__"])
        try:
            return protocol.reply("ok", self.encoder.encode(serve(self, target, members, message)))
        except codec.NotPlain as exc:
            refused = TypeError(exc.explain(f"{type(target).__name__} gave"))
            return protocol.reply("raise", self._exception_tree(refused))
        except codec.Malformed as exc:
            raise protocol.ProtocolViolation(f"the learner's side sent a malformed value ({exc})") from None
        except Exception as exc:  # noqa: BLE001 - the lent object's own exception, for the learner's code
            return protocol.reply("raise", self._exception_tree(exc))

    def _lent_attribute(self, target: Any, members: Members, message: dict[str, Any]) -> Any:
        name = message.get("name")
        if name not in members.attributes:
            raise AttributeError(f"{type(target).__name__} lends no attribute {name!r} to the learner's code "
                                 f"(it lends {', '.join(members.attributes + members.methods)})")
        return getattr(target, str(name))

    def _lent_repr(self, target: Any, members: Members, message: dict[str, Any]) -> str:  # noqa: ARG002
        return repr(target)[:2000]

    def _call_member(self, target: Any, members: Members, message: dict[str, Any]) -> Any:
        name = message.get("name")
        if name not in members.methods:
            raise AttributeError(f"{type(target).__name__} lends no method {name!r} to the learner's code "
                                 f"(it lends {', '.join(members.methods + members.attributes)})")
        args, kwargs = message.get("args"), message.get("kwargs")
        if type(args) is not list or type(kwargs) is not dict:
            raise protocol.ProtocolViolation("a call with malformed arguments")
        result = getattr(target, str(name))(*args, **kwargs)
        return list(result) if isinstance(result, (Iterator, MappingView)) else result  # type: ignore[arg-type]

    def _exception_tree(self, exc: BaseException) -> dict[str, Any]:
        return codec.exception_tree(exc, self.encoder)

    @property
    def plugin(self) -> object:
        """The pytest plugin of this run: the learner's module fresh before each test, lent objects
        revoked after it."""
        return _RevokePlugin(self)


#: the test side's one dispatch table: a server per request it serves (judge.core.protocol.TestOp), each
#: given the lent object the request is about, what it lends, and the request
_SERVERS: dict[protocol.TestOp, Callable[[TestSide, Any, Members, dict[str, Any]], Any]] = {
    "method": TestSide._call_member, "getattr": TestSide._lent_attribute, "repr": TestSide._lent_repr}


class _RevokePlugin:
    def __init__(self, side: TestSide) -> None:
        self.side = side

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        self.side.fresh()

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> Generator[None, Any, None]:
        # one more than allowed: the test fails for printing too much
        self.side.output_left = dict.fromkeys(("out", "err"), OUTPUT_LIMIT + 1)
        self.side.input_left = MAX_INPUT_PER_TEST
        try:
            yield
        finally:
            self.side.revoke()
            self.side.output_left = {"out": 0, "err": 0}  # output that comes between tests is dropped
            self.side.input_left = MAX_INPUT_PER_TEST


def _too_many_functions() -> protocol.ProtocolViolation:
    return protocol.ProtocolViolation(f"the learner's side announced more than {MAX_MODULE_FUNCTIONS:,} functions "
                                      "of its module")


def exit_message(tree: Any) -> str:
    """The failure of a call that ended in exit(), KeyboardInterrupt or another BaseException."""
    tree = tree if type(tree) is dict else {}
    kind = str(tree.get("type", "BaseException"))
    if kind == "SystemExit":
        return (f"the code called exit() / sys.exit({str(tree.get('code', ''))}) during the test; a solution "
                "must return, not exit")
    if kind == "KeyboardInterrupt":
        return "the code raised KeyboardInterrupt during the test; a solution must return a value"
    origin = str(tree.get("module", ""))
    where = f" (from {origin})" if origin and origin != "builtins" else ""
    return (f"the code raised {kind}{where}, which is not an ordinary exception: it cannot end, skip or pass "
            f"a test, so the test fails ({str(tree.get('message', ''))[:200]})")


# ------------------------------------------------------------------------------------------- remote objects
class RemoteObject:
    """An object of the learner's side: a function or a generator, reached by its id."""

    def __init__(self, side: TestSide, ident: int, name: str) -> None:
        self._side, self._id, self._name = side, ident, name
        self._generation = side.generation

    def ref(self, side: TestSide) -> dict[str, Any]:
        if self._generation != side.generation:
            raise protocol.BoundaryError(f"{self._name} belonged to a learner process that was replaced "
                                         "(after a crash or a time limit)")
        return {codec.TAG: "ref", "side": "learner", "id": self._id}

    def _live_id(self) -> int:
        if self._generation != self._side.generation:
            raise protocol.BoundaryError(f"{self._name} belonged to a learner process that was replaced "
                                         "(after a crash or a time limit)")
        return self._id


class RemoteFunction(RemoteObject):
    """A function of the learner's module; calling it calls the learner's code with copied arguments."""

    def __init__(self, side: TestSide, ident: int, name: str) -> None:
        super().__init__(side, ident, name)
        self.__name__ = self.__qualname__ = name

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        __tracebackhide__ = True
        side = self._side
        target = self._target()
        encoded_args, encoded_kwargs = side.encode_arguments(args, kwargs, f"to {self._name}()")
        message = protocol.CallRequest(op="call", target=target, args=encoded_args, kwargs=encoded_kwargs)
        return side.outcome(side.request(message), f"{self._name}()")

    def _target(self) -> int:
        if self._generation == self._side.generation:
            return self._id
        fresh = self._side.module.__getattr__(self._name.rpartition(".")[2])  # the same name, started again
        if not isinstance(fresh, RemoteFunction):
            raise protocol.BoundaryError(f"{self._name} is no longer a function of the learner's module")
        self._id, self._generation = fresh._id, fresh._generation
        return self._id

    def __repr__(self) -> str:
        return f"<function {self._name} of the learner's code>"


class RemoteGenerator(RemoteObject, Generator):
    """A generator of the learner's code: each step runs in the learner's side."""

    def send(self, value: Any) -> Any:
        __tracebackhide__ = True
        side = self._side
        try:
            tree = side.encoder.encode(value)
        except codec.NotPlain as exc:
            raise protocol.ValueRefused(exc.explain(f"the test sent into {self._name}")) from None
        return self._step(protocol.GeneratorRequest(op="gen", target=self._live_id(), action="send", value=tree))

    def throw(self, typ: Any, value: Any = None, traceback: Any = None) -> Any:  # noqa: ARG002
        __tracebackhide__ = True
        exc = typ if isinstance(typ, BaseException) else (typ(value) if value is not None else typ())
        tree = codec.exception_tree(exc, self._side.encoder)
        return self._step(protocol.GeneratorRequest(op="gen", target=self._live_id(), action="throw", exc=tree))

    def close(self) -> None:
        if self._generation == self._side.generation and self._side.learner is not None:
            self._side.request(protocol.GeneratorRequest(op="gen", target=self._id, action="close"))

    def _step(self, message: protocol.GeneratorRequest) -> Any:
        __tracebackhide__ = True
        side = self._side
        reply = side.request(message)
        kind = protocol.reply_kind(reply)
        if kind == "yield":
            return reply["yield"]
        if kind == "stop":
            raise StopIteration(reply["stop"])
        if kind == "refused":
            raise protocol.ValueRefused(f"{self._name} yielded or returned{reply['refused']}")
        return side.outcome(reply, self._name)

    def __repr__(self) -> str:
        return f"<generator {self._name} of the learner's code>"


class StandInModule(types.ModuleType):
    """What ``import <entry module>`` gives the tests: the learner's module, reached through the codec."""

    __judge_standin__ = True

    def __init__(self, name: str, side: TestSide) -> None:
        super().__init__(name, f"The learner's module {name}, in the learner's process.")
        object.__setattr__(self, "_judge_side", side)

    def __getattr__(self, name: str) -> Any:
        __tracebackhide__ = True
        if name.startswith("__") and name.endswith("__") or name.startswith("_judge"):
            raise AttributeError(name)
        side: TestSide = object.__getattribute__(self, "_judge_side")
        known = side.functions.get(name)
        if known is not None and known._generation == side.generation:
            return known
        reply = side.request(protocol.GetattrRequest(op="getattr", name=name))
        kind = protocol.reply_kind(reply)
        if kind == "missing":
            raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}", name=name, obj=self)
        if kind == "refused":
            raise protocol.ValueRefused(str(reply["refused"]))
        return side.outcome(reply, f"{self.__name__}.{name}")

    def __setattr__(self, name: str, value: Any) -> None:
        if name.startswith("__") and name.endswith("__"):
            super().__setattr__(name, value)
            return
        side: TestSide = object.__getattribute__(self, "_judge_side")
        try:
            tree = side.encoder.encode(value)
        except codec.NotPlain as exc:
            raise protocol.ValueRefused(exc.explain(f"the test set {self.__name__}.{name} to")) from None
        side.outcome(side.request(protocol.SetattrRequest(op="setattr", name=name, value=tree)), f"setting {name}")


def session(problem: Problem, source: str, workdir: Path,
            start: Callable[[LearnerSpec, TestSide], Learner]) -> TestSide:
    """The test side of one run of ``source`` (a :data:`judge.core.runner.LearnerFactory` once ``start``
    is bound): the declared types imported from the tests' work directory, which is on ``sys.path``."""
    from .learner import load_class

    spec = learner_spec(problem, source)
    lend = problem.boundary.lend
    registry = codec.Registry(records=[load_class(n) for n in problem.boundary.records],
                              exceptions=[load_class(n) for n in problem.boundary.exceptions])
    fixed = problem.boundary.fixed
    lendable = {load_class(name): members_of(load_class(name), members, fixed.get(name, []))
                for name, members in lend.items()}
    return TestSide(problem.module_name, lambda side: start(spec, side), registry, lendable)


def learner_spec(problem: Problem, source: str) -> LearnerSpec:
    """What the learner's side of a run of ``source`` holds."""
    support = {path.name: path.read_text(encoding="utf-8") for path in problem.support_files}
    uses_numpy = any("numpy" in text for text in (source, *support.values()))
    return LearnerSpec(module=problem.module_name, entry=problem.entry, source=source, support=support,
                       declarations=problem.boundary.declarations, memory_limit=problem.memory_limit,
                       numpy=uses_numpy, start_timeout=problem.per_test_time_limit)
