"""The protocol between the test side and the learner side: requests, replies, nesting.

Each side is an endpoint with a :class:`Connection`. A request is ``{"id": N, "op": OP, ...}``; its
reply is ``{"re": N, KIND: value}`` with KIND one of :data:`REPLY_KINDS` (``ok``, a return value;
``raise``, an exception, :func:`judge.core.codec.exception_tree`; ``yield`` / ``stop``, a generator
step; ...), told apart by :func:`reply_kind`. Every message is declared below, in one place: the
learner side serves the :data:`LearnerOp` requests, the test side the :data:`TestOp` ones, each with
one table of servers keyed by op (``judge.sandbox.learner`` and ``judge.sandbox.standin``). While a
side waits for its reply it serves the other side's requests, so calls nest both ways: the tests
call the learner's generator, whose code calls a method of an object the tests lent it, and so on,
strictly last in, first out. Values in messages are codec trees (:mod:`judge.core.codec`).

What each side may ask is its own business (the handler); here: the message shapes, the checks
that a reply answers the request being waited for, the nesting limit, and two transports: a pipe
pair between processes (:class:`PipeConnection`, native) and a direct call into an endpoint in the
same interpreter (:class:`DirectConnection`, the browser), which still passes every message through
the JSON text so both engines hand the tests the same values.

Errors of the boundary itself are :class:`BoundaryError`, a ``BaseException``: test code written
``except Exception`` cannot swallow them, so a call that timed out, crashed the learner's process or
returned what cannot cross always fails its test.
"""

from __future__ import annotations

import os
import select
import time
from collections.abc import Callable, Mapping
from typing import Any, Literal, TypedDict, get_args

from . import codec

MAX_NESTING = 100  # calls in progress at once (both directions)
SPIN_SECONDS = float(os.environ.get("JUDGE_SPIN_US", "200")) / 1e6  # how long a side polls before it sleeps
# bytes asked of the pipe per read: below malloc's mmap threshold (128 KiB), so a read of a small
# message does not map, fault in and unmap a buffer of its own (measured at idle: add(1, 2) across
# the boundary took 112-124 us a call with 1 MiB reads, 40-70 us with these)
_READ_CHUNK = 1 << 16

# --- the messages ------------------------------------------------------------------------------
# Values are codec trees on the wire and arrive decoded (each side's Connection decodes them). A
# request as received is untrusted (the learner's side may be hostile): its server checks each field.

#: what the test side asks of the learner's side
LearnerOp = Literal["getattr", "setattr", "call", "gen", "repr", "fresh"]
#: what the learner's code asks of the test side, about an object the tests lent it (``target``)
TestOp = Literal["method", "getattr", "repr"]
LEARNER_OPS: tuple[LearnerOp, ...] = get_args(LearnerOp)
TEST_OPS: tuple[TestOp, ...] = get_args(TestOp)


class GetattrRequest(TypedDict):
    """An attribute of the learner's module (``name``) or, with ``target``, of a lent object."""

    op: Literal["getattr"]
    name: str


class LentGetattrRequest(GetattrRequest):
    target: int


class SetattrRequest(TypedDict):
    """Set an attribute of the learner's module (a test's ``monkeypatch``)."""

    op: Literal["setattr"]
    name: str
    value: Any


class CallRequest(TypedDict):
    """Call one of the learner's functions (``target``: its reference id)."""

    op: Literal["call"]
    target: int
    args: list[Any]
    kwargs: dict[str, Any]


class MethodRequest(TypedDict):
    """Call a method the tests lend (``target``: the lent object's id)."""

    op: Literal["method"]
    target: int
    name: str
    args: list[Any]
    kwargs: dict[str, Any]


class GeneratorRequest(TypedDict, total=False):
    """One step of a learner's generator: ``send`` a value, ``throw`` an exception tree, or ``close``."""

    op: Literal["gen"]
    target: int
    action: Literal["send", "throw", "close"]
    value: Any
    exc: dict[str, Any]


class ReprRequest(TypedDict):
    """``repr()`` of a learner's object or of a lent one."""

    op: Literal["repr"]
    target: int


class FreshRequest(TypedDict):
    """Import the learner's module anew, before a test."""

    op: Literal["fresh"]


class Ready(TypedDict):
    """The learner process's first message: why its module did not import (or ""), and its functions."""

    op: Literal["ready"]
    id: Literal[0]
    error: str
    bound: dict[str, Any]


Request = (GetattrRequest | LentGetattrRequest | SetattrRequest | CallRequest | MethodRequest | GeneratorRequest
           | ReprRequest | FreshRequest)
#: what a reply carries: a value, an exception, a generator step, a refused value (the message), a
#: missing attribute (its name), or what ended the call without an exception (exit(), Ctrl-C)
ReplyKind = Literal["ok", "raise", "yield", "stop", "refused", "missing", "exit"]
REPLY_KINDS: tuple[ReplyKind, ...] = get_args(ReplyKind)
#: a reply: ``{KIND: value}`` (``re`` added by the connection; the learner's side may add ``bound``,
#: the module's functions that changed, see judge.sandbox.learner.LearnerSide.rebound)
Reply = dict[str, Any]
Handler = Callable[[dict[str, Any]], Reply]


def reply(kind: ReplyKind, value: Any) -> Reply:
    """A reply of ``kind`` carrying ``value``."""
    return {kind: value}


def reply_kind(message: Mapping[str, Any]) -> ReplyKind:
    """The kind of a reply: the one of :data:`REPLY_KINDS` it carries (ProtocolViolation if not exactly one)."""
    found = [kind for kind in REPLY_KINDS if kind in message]
    if len(found) != 1:
        raise ProtocolViolation("a reply that carries " + ("no value" if not found else " and ".join(found)))
    return found[0]


class BoundaryError(BaseException):
    """A call between the tests and the learner's code could not complete; the message says why."""


class LearnerCrashed(BoundaryError):
    """The learner's process ended (exit, crash, memory limit) while the tests needed it."""


class ProtocolViolation(BoundaryError):
    """The other side sent what the protocol does not allow (only a hostile learner side does)."""


class StartTimedOut(BoundaryError):
    """The learner's module did not finish importing within its limit; ``seconds`` is that limit."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"the learner's module did not finish importing within {seconds:g} s (an infinite "
                         "loop at module level?)")
        self.seconds = seconds


class ValueRefused(BoundaryError):
    """A value that cannot cross (:class:`judge.core.codec.NotPlain`), as the failure of a test."""


class Connection:
    """One side's end: send requests and get their replies, serving the other side meanwhile."""

    def __init__(self, handler: Handler, on_send: Callable[[dict[str, Any]], None] | None = None,
                 on_receive: Callable[[dict[str, Any]], None] | None = None,
                 loads: Callable[[str | bytes], Any] = codec.loads) -> None:
        self.handler = handler
        self.loads = loads  # this side's decoder: values in incoming messages arrive decoded
        self.on_send = on_send or (lambda message: None)
        self.on_receive = on_receive or (lambda message: None)
        self._next_id = 0
        self._waiting: list[int] = []

    def request(self, message: Request) -> Reply:
        """Send ``message`` and return its reply (a dict with ``re`` and one KIND of :data:`REPLY_KINDS`)."""
        if len(self._waiting) >= MAX_NESTING:
            raise BoundaryError(f"more than {MAX_NESTING} calls between the tests and the learner's code "
                                "in progress at once (a recursion through a lent object?)")
        self._next_id += 1
        ident = self._next_id
        self._waiting.append(ident)
        try:
            return self._exchange(dict(message, id=ident), ident)
        finally:
            self._waiting.pop()

    def serve(self, message: dict[str, Any]) -> dict[str, Any]:
        """The reply to one request from the other side (the handler's reply, with ``re``)."""
        self.on_receive(message)
        ident = message.get("id")
        if type(ident) is not int or type(message.get("op")) is not str:
            raise ProtocolViolation("a request without an id or an op")
        reply = dict(self.handler(message), re=ident)
        self.on_send(reply)
        return reply

    def _exchange(self, message: dict[str, Any], ident: int) -> dict[str, Any]:
        raise NotImplementedError

    def _parse(self, text: str | bytes) -> dict[str, Any]:
        try:
            message = self.loads(text)
        except codec.Malformed as exc:
            raise ProtocolViolation(str(exc)) from None
        if type(message) is not dict:
            raise ProtocolViolation("a message that is not a JSON object")
        return message

    def _check_reply(self, reply: Reply, ident: int) -> Reply:
        if reply.get("re") != ident:
            raise ProtocolViolation("a reply that does not answer the call in progress")
        reply_kind(reply)
        return reply


class DirectConnection(Connection):
    """Both ends in one interpreter: a request is the peer's :meth:`Connection.serve`, through JSON text."""

    def __init__(self, handler: Handler, **hooks: Any) -> None:
        super().__init__(handler, **hooks)
        self.peer: DirectConnection | None = None

    def _exchange(self, message: dict[str, Any], ident: int) -> dict[str, Any]:
        assert self.peer is not None, "connect() both ends first"
        self.on_send(message)
        reply = self._parse(codec.dumps(self.peer.serve(self.peer._parse(codec.dumps(message)))))
        self.on_receive(reply)
        return self._check_reply(reply, ident)


def connect(a: DirectConnection, b: DirectConnection) -> None:
    """Make two direct connections each other's peer."""
    a.peer, b.peer = b, a


_load_checked = [0.0, True]  # when the load was last read, and whether a core was idle then


def _idle_cores() -> bool:
    """Whether the machine had a core to spare at the last look, read at most once a second: no more
    processes ready to run than cores (this side and its peer among them; True where it cannot be
    read). Not the 1-minute load average: it stays high for a minute after other work has stopped,
    and two sides of a judge run alone on two cores kept it near 2, so neither ever polled."""
    now = time.monotonic()
    if now - _load_checked[0] > 1.0:
        _load_checked[1] = _runnable() <= (os.cpu_count() or 1)
        _load_checked[0] = now
    return bool(_load_checked[1])


def _runnable() -> float:
    """Processes ready to run now (the kernel's count in /proc/loadavg), else the 1-minute load average
    plus a half (no /proc), else 0."""
    try:
        with open("/proc/loadavg", "rb") as handle:
            return int(handle.read().split()[3].split(b"/")[0])
    except (OSError, IndexError, ValueError):
        pass
    try:
        return os.getloadavg()[0] + 0.5
    except (OSError, AttributeError):  # no load average on this system
        return 0


class PipeConnection(Connection):
    """One JSON message per line over a pair of pipes (file descriptors) to another process."""

    def __init__(self, handler: Handler, read_fd: int, write_fd: int, **hooks: Any) -> None:
        super().__init__(handler, **hooks)
        self.read_fd, self.write_fd = read_fd, write_fd
        self._buffer = bytearray()
        self._scanned = 0  # bytes at the start of the buffer known to hold no newline
        self.deadline: float | None = None  # monotonic time after which waiting raises (set by the owner)
        self.on_deadline: Callable[[], BaseException] = lambda: BoundaryError("timed out")

    def _exchange(self, message: dict[str, Any], ident: int) -> dict[str, Any]:
        self.send(message)
        while True:
            incoming = self.receive()
            if "re" in incoming:
                self.on_receive(incoming)
                return self._check_reply(incoming, ident)
            self.send(self.serve(incoming))

    def send(self, message: dict[str, Any]) -> None:
        if "re" not in message:
            self.on_send(message)
        data = (codec.dumps(message) + "\n").encode("ascii")
        view = memoryview(data)
        try:
            while view:
                written = os.write(self.write_fd, view)
                view = view[written:]
        except (BrokenPipeError, OSError) as exc:
            raise LearnerCrashed(f"the other side closed the connection ({exc.strerror or exc})") from None

    def receive(self) -> dict[str, Any]:
        """The next message (blocks until one is complete, EOF, or the deadline)."""
        while True:
            end = self._buffer.find(b"\n", self._scanned)
            if end >= 0:
                line = bytes(self._buffer[:end])
                del self._buffer[:end + 1]
                self._scanned = 0
                return self._parse(line)
            # what is read next is searched alone: searching the whole message again after each read made a
            # 30 MiB one cost seconds of CPU time
            self._scanned = len(self._buffer)
            if len(self._buffer) > codec.MAX_MESSAGE:
                raise ProtocolViolation(f"a message larger than {codec.MAX_MESSAGE // 2**20} MiB")
            if not self._spin_readable():
                self._wait_readable()
            chunk = os.read(self.read_fd, _READ_CHUNK)
            if not chunk:
                raise LearnerCrashed("the other side's process ended")
            self._buffer += chunk

    def _spin_readable(self) -> bool:
        """Poll for a while before sleeping: the peer usually answers within microseconds, and waking a
        sleeping process costs far more than that (most of all in a virtual machine). Not on a busy
        machine: there the spinning side takes the core the peer needs (measured at load 9 on 2
        cores: 1.7 ms a call with the spin, 1.0 ms without)."""
        if SPIN_SECONDS <= 0 or not _idle_cores():
            return False
        until = time.perf_counter() + SPIN_SECONDS
        while True:
            if select.select([self.read_fd], [], [], 0)[0]:
                return True
            if time.perf_counter() > until:
                return False

    def _wait_readable(self) -> None:
        if self.deadline is None:
            return
        remaining = self.deadline - time.monotonic()
        if remaining <= 0 or not select.select([self.read_fd], [], [], remaining)[0]:
            raise self.on_deadline()

