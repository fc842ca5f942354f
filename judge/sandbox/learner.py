"""The learner side of the boundary: the learner's module, served to the tests through the codec.

This module runs in the learner's process (natively) or beside the tests in one interpreter (the
browser). It imports the learner's entry module and answers the test side's requests: an attribute
of the module (a function, a declared class or a plain value), a call, a step of one of the learner's
generators, a module attribute set by the tests (``monkeypatch``). Objects the tests lend to the
learner's code (a runtime, a model stage) arrive as :class:`Lent` proxies: every use of one is a
request to the test side, limited to the members the problem declares.

Standard library only, plus :mod:`judge.core.codec` and :mod:`judge.core.protocol`: these are the
only parts of the judge a learner's process holds.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import io
import operator
import os
import sys
import types
from collections.abc import Callable, Generator
from typing import Any

from ..core import codec, protocol

#: callables that cross by reference (the tests call them through the stand-in module)
_FUNCTIONS = (types.FunctionType, types.BuiltinFunctionType, types.MethodType)
_LOCAL = "learner"


class Lent:
    """A proxy for an object the tests lent; its class is made per declared type (:func:`lent_class`)."""

    __slots__ = ("_judge_ref", "_judge_fixed")

    def __init__(self, ref: dict[str, Any], fixed: dict[str, Any] | None = None) -> None:
        object.__setattr__(self, "_judge_ref", ref)
        object.__setattr__(self, "_judge_fixed", fixed or {})

    def __repr__(self) -> str:
        return str(_side(self).request_lent(protocol.ReprRequest(op="repr", target=_lent_id(self))))


_PROXY_CLASSES: dict[str, type] = {}
_SIDES: dict[int, LearnerSide] = {}


def _side(proxy: Lent) -> LearnerSide:
    return _SIDES[object.__getattribute__(proxy, "_judge_ref")["conn"]]


def _lent_id(proxy: Lent) -> int:
    """The id the tests gave the object ``proxy`` stands for."""
    return int(object.__getattribute__(proxy, "_judge_ref")["id"])


def lent_class(type_name: str, methods: list[str], attributes: list[str]) -> type:
    """A proxy class for the declared type ``type_name`` with exactly its declared members."""
    key = f"{type_name}|{','.join(methods)}|{','.join(attributes)}"
    if key in _PROXY_CLASSES:
        return _PROXY_CLASSES[key]
    namespace: dict[str, Any] = {"__slots__": (), "__module__": type_name.rpartition(".")[0] or "lent"}
    for name in methods:
        namespace[name] = _method(name)
    for name in attributes:
        namespace[name] = property(_attribute(name))
    lent = ", ".join(methods + attributes)
    short = type_name.rpartition(".")[2]

    def missing(self: Lent, name: str) -> Any:
        raise AttributeError(f"'{short}' object has no attribute '{name}' (the tests lend the learner's code "
                             f"only {lent} of it)")

    namespace["__getattr__"] = missing
    if "__iter__" in methods:
        namespace["__iter__"] = lambda self: iter(_side(self).request_lent(protocol.MethodRequest(
            op="method", target=_lent_id(self), name="__iter__", args=[], kwargs={})))
    cls = type(type_name.rpartition(".")[2], (Lent,), namespace)
    _PROXY_CLASSES[key] = cls
    return cls


def _method(name: str) -> Any:
    def method(self: Lent, *args: Any, **kwargs: Any) -> Any:
        __tracebackhide__ = True
        return _side(self).call_lent(self, name, args, kwargs)

    method.__name__ = name
    return method


def _attribute(name: str) -> Any:
    def read(self: Lent) -> Any:
        fixed = object.__getattribute__(self, "_judge_fixed")
        if name in fixed:
            return fixed[name]
        return _side(self).request_lent(protocol.LentGetattrRequest(op="getattr", target=_lent_id(self), name=name))

    return read


class LearnerSide:
    """The learner's endpoint: serves the test side's requests on the learner's module."""

    def __init__(self, module: types.ModuleType, registry: codec.Registry, root: str,
                 interruptible: bool = False) -> None:
        self.module = module
        self.interruptible = interruptible  # in the browser's one interpreter KeyboardInterrupt stops the run
        self.registry = registry
        self.root = root.rstrip("/") + "/"  # the learner's folder: frames below it are the learner's
        self.exports: dict[int, Any] = {}
        self._export_ids: dict[int, int] = {}
        self._proxies: dict[int, Lent] = {}
        self.connection: protocol.Connection | None = None
        self.encoder = codec.Encoder(registry, self)
        self.decoder = codec.Decoder(registry, self)
        self._bound: dict[str, int] = {}  # the module's functions as the test side last heard of them
        self._bound_objects: dict[str, Any] = {}  # the same functions themselves: unchanged is checked by identity
        # every name of the module and its value at the last look: most calls rebind none of them
        self._seen_names: list[str] = []
        self._seen_values: list[Any] = []
        _SIDES[id(self)] = self

    # --- the module's functions, known to the test side without asking ------------------------
    def bindings(self) -> dict[str, Any]:
        """``{name: reference}`` of every function of the module (sent once, when the side is ready)."""
        found = self._functions()
        self._bound = {name: ident for name, (ident, _) in found.items()}
        self._bound_objects = self._function_objects()
        return {name: tree for name, (_, tree) in found.items()}

    def rebound(self) -> dict[str, Any]:
        """The module's functions that changed since the test side last heard: ``{name: reference or None}``.

        The stand-in calls functions it knows by reference, so a call costs one message; this keeps
        it right when the learner's code (or a test, through the stand-in) rebinds a name."""
        namespace = vars(self.module)
        names, values = list(namespace), list(namespace.values())
        if names == self._seen_names and all(map(operator.is_, values, self._seen_values)):
            return {}  # the common case, after every call: not one name of the module rebound
        self._seen_names, self._seen_values = names, values
        objects = self._function_objects()
        if objects.keys() == self._bound_objects.keys() and all(
                value is self._bound_objects[name] for name, value in objects.items()):
            return {}  # only other names rebound (a counter the learner's code keeps): no function changed
        self._bound_objects = objects
        found = self._functions()
        now = {name: ident for name, (ident, _) in found.items()}
        if now == self._bound:
            return {}
        changes = {name: found[name][1] if name in found else None
                   for name in set(now) | set(self._bound) if now.get(name) != self._bound.get(name)}
        self._bound = now
        return changes

    def _function_objects(self) -> dict[str, Any]:
        return {name: value for name, value in list(vars(self.module).items())
                if isinstance(value, _FUNCTIONS) and not name.startswith("__")}

    def _functions(self) -> dict[str, tuple[int, Any]]:
        found = {}
        for name, value in list(vars(self.module).items()):
            if isinstance(value, _FUNCTIONS) and not name.startswith("__"):
                tree = self._export(value, "function", getattr(value, "__qualname__", name))
                found[name] = (tree["id"], tree)
        return found

    # --- the codec's references -------------------------------------------------------------
    def reference(self, value: Any) -> dict[str, Any] | None:
        if isinstance(value, Lent):
            ref = object.__getattribute__(value, "_judge_ref")
            return {codec.TAG: "ref", "side": "test", "id": ref["id"]}
        if isinstance(value, Generator):
            return self._export(value, "generator", getattr(value, "__qualname__", "generator"))
        if isinstance(value, _FUNCTIONS):
            return self._export(value, "function", getattr(value, "__qualname__", repr(value)))
        if isinstance(value, type) and self.registry.record_name(value):
            return {codec.TAG: "ref", "side": "class", "type": self.registry.record_name(value)}
        return None

    def _export(self, value: Any, kind: str, name: str) -> dict[str, Any]:
        ident = self._export_ids.get(id(value))
        if ident is None or self.exports.get(ident) is not value:
            ident = len(self.exports) + 1
            self.exports[ident] = value
            self._export_ids[id(value)] = ident
        return {codec.TAG: "ref", "side": _LOCAL, "id": ident, "kind": kind, "name": name}

    def resolve(self, tree: dict[str, Any]) -> Any:
        side, ident = tree.get("side"), tree.get("id")
        if side == _LOCAL and type(ident) is int and ident in self.exports:
            return self.exports[ident]
        if side == "test" and type(ident) is int:
            return self._proxy(tree)
        raise codec.Malformed("a reference to nothing the learner's side holds")

    def _proxy(self, tree: dict[str, Any]) -> Lent:
        proxy = self._proxies.get(tree["id"])
        if proxy is None:
            kind = tree.get("type")
            methods, attributes = tree.get("methods"), tree.get("attributes")
            if type(kind) is not str or type(methods) is not list or type(attributes) is not list:
                raise codec.Malformed("a lent object without its type")
            fixed = tree.get("fixed")
            cls = lent_class(kind, methods, attributes)
            proxy = self._proxies[tree["id"]] = cls({"id": tree["id"], "conn": id(self)},
                                                    fixed if type(fixed) is dict else None)
        return proxy

    # --- requests to the test side ----------------------------------------------------------
    def call_lent(self, proxy: Lent, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        __tracebackhide__ = True
        try:
            encoded_args, encoded_kwargs = self.encoder.encode(list(args)), self.encoder.encode(kwargs)
        except codec.NotPlain as exc:
            raise TypeError(exc.explain(f"{type(proxy).__name__}.{name}() was given")) from None
        return self.request_lent(protocol.MethodRequest(op="method", target=_lent_id(proxy), name=name,
                                                        args=encoded_args, kwargs=encoded_kwargs))

    def request_lent(self, message: protocol.Request) -> Any:
        """Ask the test side about a lent object: the value it gives, or its exception raised here."""
        __tracebackhide__ = True
        assert self.connection is not None
        reply = self.connection.request(message)
        if protocol.reply_kind(reply) == "ok":
            return reply["ok"]
        raise codec.exception_from_tree(reply.get("raise"), self.registry)

    # --- serving the test side ----------------------------------------------------------------
    def handle(self, message: dict[str, Any]) -> dict[str, Any]:
        """The reply to one request of the test side (the :class:`judge.core.protocol.Connection` handler)."""
        op = message["op"]
        serve = _SERVERS.get(op)
        if serve is None:
            raise protocol.ProtocolViolation(f"the learner's side does not serve {op!r}")
        try:
            reply = serve(self, message)
        except codec.NotPlain as exc:
            reply = protocol.reply("refused", exc.explain(""))
        except protocol.BoundaryError:
            raise
        except Exception as exc:  # noqa: BLE001 - the learner's exception, reported to the tests
            reply = protocol.reply("raise", self.exception(exc))
        except BaseException as exc:  # exit(), Ctrl-C, pytest.skip(): never an ordinary exception there
            if isinstance(exc, KeyboardInterrupt) and self.interruptible:
                raise  # the browser engine's Stop and time limit
            reply = protocol.reply("exit", self.exit_tree(exc))
        changes = self.rebound()
        if changes:
            reply["bound"] = changes
        return reply

    def exception(self, exc: BaseException) -> dict[str, Any]:
        """An exception of the learner's code as plain data, with its frames in the learner's files."""
        tree = codec.exception_tree(exc, self.encoder)
        tree["frames"] = learner_frames(exc, self.root)
        tree["message"] = tree["message"].replace(self.root, "")
        return tree

    def exit_tree(self, exc: BaseException) -> dict[str, Any]:
        """What ended a call without an ordinary exception: exit(), KeyboardInterrupt, another BaseException."""
        code = repr(exc.code) if isinstance(exc, SystemExit) else ""
        try:
            message = str(exc)[:2000]
        except Exception:  # noqa: BLE001
            message = ""
        return {"type": type(exc).__qualname__, "module": type(exc).__module__, "code": code,
                "message": message.replace(self.root, ""), "frames": learner_frames(exc, self.root)}

    def _getattr(self, message: dict[str, Any]) -> protocol.Reply:
        name = _name(message)
        try:
            value = getattr(self.module, name)
        except AttributeError:
            return protocol.reply("missing", name)
        if isinstance(value, types.ModuleType) or (isinstance(value, type) and not self.registry.record_name(value)):
            kind = "module" if isinstance(value, types.ModuleType) else "class"
            return protocol.reply("refused", f"{self.module.__name__}.{name} is a {kind}, and the tests can use "
                                  "only the functions, declared types and plain values of the learner's module")
        return protocol.reply("ok", self.encoder.encode(value))

    def _setattr(self, message: dict[str, Any]) -> protocol.Reply:
        setattr(self.module, _name(message), message.get("value"))
        return protocol.reply("ok", None)

    def _call(self, message: dict[str, Any]) -> protocol.Reply:
        function = self._target(message, "function")
        args, kwargs = message.get("args"), message.get("kwargs")
        if type(args) is not list or type(kwargs) is not dict:
            raise protocol.ProtocolViolation("a call with malformed arguments")
        return protocol.reply("ok", self.encoder.encode(function(*args, **kwargs)))

    def _generator(self, message: dict[str, Any]) -> protocol.Reply:
        generator = self._target(message, "generator")
        action = message.get("action")
        try:
            if action == "send":
                value = generator.send(message.get("value"))
            elif action == "throw":
                value = generator.throw(codec.exception_from_tree(message.get("exc"), self.registry))
            elif action == "close":
                generator.close()
                return protocol.reply("ok", None)
            else:
                raise protocol.ProtocolViolation(f"an unknown generator action {action!r}")
        except StopIteration as stop:
            return protocol.reply("stop", self.encoder.encode(stop.value))
        return protocol.reply("yield", self.encoder.encode(value))

    def _repr(self, message: dict[str, Any]) -> protocol.Reply:
        return protocol.reply("ok", repr(self._target(message, None))[:2000])

    def _fresh(self, message: dict[str, Any]) -> protocol.Reply:
        """The learner's module imported anew, as written: each test starts without what earlier tests
        left in its globals (the same in both engines). The problem's support modules stay: they are
        the problem's own, and the types they declare must stay the ones the codec knows."""
        name = self.module.__name__
        entry = os.path.basename(getattr(self.module, "__file__", "") or f"{name}.py")
        previous = sys.modules.pop(name, None)
        try:
            module, error = import_entry(name, entry, self.root)
        finally:
            if previous is not None and previous is not self.module:
                sys.modules[name] = previous  # the tests' stand-in, in the browser's one interpreter
        if module is None:
            raise ImportError(error)
        self.module = module
        return protocol.reply("ok", None)

    def _target(self, message: dict[str, Any], kind: str | None) -> Any:
        target = self.exports.get(message.get("target"))  # type: ignore[arg-type]
        if target is None or (kind == "generator" and not isinstance(target, Generator)):
            raise protocol.ProtocolViolation("a request for an object the learner's side does not hold")
        return target


def _name(message: dict[str, Any]) -> str:
    name = message.get("name")
    if type(name) is not str or not name.isidentifier():
        raise protocol.ProtocolViolation("a request with a malformed name")
    return name


#: the learner side's one dispatch table: a server per request it serves (judge.core.protocol.LearnerOp)
_SERVERS: dict[protocol.LearnerOp, Callable[[LearnerSide, dict[str, Any]], protocol.Reply]] = {
    "getattr": LearnerSide._getattr, "setattr": LearnerSide._setattr, "call": LearnerSide._call,
    "gen": LearnerSide._generator, "repr": LearnerSide._repr, "fresh": LearnerSide._fresh}


def learner_frames(exc: BaseException, root: str) -> list[dict[str, Any]]:
    """The traceback frames of ``exc`` in the learner's folder (its file and the support modules)."""
    import linecache

    frames = []
    tb = exc.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        if code.co_filename.startswith(root) and not tb.tb_frame.f_locals.get("__tracebackhide__"):
            frames.append({"file": code.co_filename[len(root):], "line": tb.tb_lineno, "function": code.co_name,
                           "code": linecache.getline(code.co_filename, tb.tb_lineno).strip()})
        tb = tb.tb_next
    return frames[-12:]


# ------------------------------------------------------------------------------------------- import
def import_entry(module_name: str, entry: str, root: str) -> tuple[types.ModuleType | None, str]:
    """Import the learner's module with its output discarded: ``(module, "")`` or ``(None, message)``."""
    out, err = sys.stdout, sys.stderr
    sys.stdout = sys.stderr = io.StringIO()
    try:
        return _execute_entry(module_name, os.path.join(root, entry)), ""
    except SystemExit as exc:
        return None, (f"{entry} called exit() / sys.exit({exc.code!r}) while being imported; remove the call "
                      "at module level (a solution defines functions, it does not exit)")
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # noqa: BLE001 - any failure at import is the learner's to see
        frames = [f for f in learner_frames(exc, root.rstrip("/") + "/") if f["file"] == entry]
        where = f" at line {frames[-1]['line']}" if frames else ""
        code = f"\n    {frames[-1]['code']}" if frames and frames[-1]["code"] else ""
        detail = describe(exc).replace(root.rstrip("/") + "/", "")
        return None, f"{entry} raised an exception while being imported{where}: {detail}{code}"
    finally:
        sys.stdout, sys.stderr = out, err


#: the learner's entry file's latest source and its compiled code: a test's fresh import (LearnerSide._fresh)
#: runs the same code again instead of compiling it again (1-3 ms a test); changed source is compiled anew
_compiled: dict[str, tuple[bytes, types.CodeType]] = {}


def _execute_entry(module_name: str, path: str) -> types.ModuleType:
    """Import the module at ``path`` as ``module_name``, as ``import`` would, its code compiled once."""
    loader = importlib.machinery.SourceFileLoader(module_name, path)
    spec = importlib.util.spec_from_file_location(module_name, path, loader=loader)
    assert spec is not None  # a file location with its loader always makes a spec
    module = importlib.util.module_from_spec(spec)
    data = loader.get_data(path)
    cached = _compiled.get(path)
    if cached is None or cached[0] != data:
        cached = _compiled[path] = (data, loader.source_to_code(data, path))
    sys.modules[module_name] = module
    try:
        exec(cached[1], module.__dict__)  # noqa: S102 - the learner's module, in the learner's side
    except BaseException:
        sys.modules.pop(module_name, None)
        raise
    return sys.modules.get(module_name, module)  # as import does: a module may put another in its place


def describe(exc: BaseException) -> str:
    """``Type: message`` of an exception, as the report shows it."""
    if isinstance(exc, RecursionError):
        return f"RecursionError: {exc} (is there a recursion without a base case?)"
    if isinstance(exc, MemoryError):
        return "MemoryError: the code ran out of memory (it hit the memory limit)"
    return f"{type(exc).__name__}: {exc}"


def registry_from(declarations: dict[str, list[str]]) -> codec.Registry:
    """The records and exception types declared by name (``module.Name``), imported on this side."""
    return codec.Registry(records=[load_class(n) for n in declarations.get("records", [])],
                          exceptions=[load_class(n) for n in declarations.get("exceptions", [])])


def load_class(name: str) -> type:
    """The class ``module.Name``, imported."""
    module, _, attribute = name.rpartition(".")
    return getattr(importlib.import_module(module), attribute)
