"""Point-to-point messages between p emulated ranks, all in one process (read-only support module).

Every rank runs the same *program*: a generator function that takes a :class:`Comm` and
``yield``s each communication operation to the runtime, which performs it and sends the
result back into the generator::

    def program(comm):
        if comm.rank == 0:
            h = yield comm.isend(1, np.ones(3), tag="x")   # non-blocking: returns a Handle
            yield h.wait()                                 # blocks until rank 1 has received it
        else:
            x = yield comm.recv(0, tag="x")                # blocks until a message is queued

    world = run(2, program)

Rules of the runtime (the same as MPI / torch.distributed point-to-point):

* There is one FIFO mailbox per ordered pair (src, dst): messages from one rank to another
  arrive in the order they were sent. ``recv(src)`` takes the oldest message from ``src``.
* ``isend(dst, obj)`` queues a *copy* of ``obj`` and returns at once with a :class:`Handle`.
  Before the rank's program ends, every handle must be completed with ``yield h.wait()``
  (or ``yield comm.waitall(handles)``).
* ``send(dst, obj)`` queues a copy too, but *blocks* until rank ``dst`` has taken that
  message with ``recv``. Two ranks that both ``send`` to each other before they ``recv``
  therefore wait for each other forever.
* Ranks run one at a time, in a fixed order, with no threads: a run is deterministic. When no
  rank can make progress the runtime raises :class:`DeadlockError`, whose message names every
  rank's pending operation and the cycle of ranks waiting for each other.

The runtime also records, per rank, the compute operations (``comm.trace``: forward ``F`` and
backward ``B`` with their micro-batch and start/end times on the rank's logical clock) and
the activation memory (``comm.stash``, ``comm.live_history``, ``comm.peak_live``).

Logical clock: every rank has a clock. A compute operation advances it by its duration; a
message carries the sender's clock, and ``recv`` moves the receiver's clock forward to it (a
rank cannot use data before it was produced). A blocking ``send`` or a ``wait`` ends no
earlier than the moment the receiver took the message.
"""

from __future__ import annotations

import copy
from collections import deque
from collections.abc import Callable, Generator, Hashable, Iterable, Iterator, MutableMapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "P2PError", "DeadlockError", "Op", "Handle", "ComputeEvent", "ActivationStash", "Comm",
    "World", "run",
]

MAX_STEPS = 2_000_000  # operations per run; a safety net against a program that never ends


class P2PError(RuntimeError):
    """A program misused the runtime (bad rank, mismatched tag, unwaited handle, ...)."""


class DeadlockError(P2PError):
    """No rank can make progress. ``.world`` holds the ranks' state (traces so far)."""

    def __init__(self, message: str, world: World | None = None) -> None:
        super().__init__(message)
        self.world = world


@dataclass
class _Message:
    src: int
    dst: int
    tag: Any
    payload: Any
    sent_at: float
    taken: bool = False
    taken_at: float = 0.0

    def label(self) -> str:
        return _tag_text(self.tag)


def _tag_text(tag: Any) -> str:
    return "" if tag is None else f", tag={tag!r}"


class Op:
    """One communication operation; a program must ``yield`` it to have it performed."""

    _is_p2p_op = True

    def __init__(self, comm: Comm, kind: str, peer: int | None = None, tag: Any = None,
                 payload: Any = None, handles: tuple[Handle, ...] = ()) -> None:
        self.comm = comm
        self.kind = kind          # "send" | "isend" | "recv" | "wait"
        self.peer = peer
        self.tag = tag
        self.payload = payload
        self.handles = handles
        self.message: _Message | None = None   # for send: the queued message
        comm._unyielded.append(self)

    def describe(self) -> str:
        """E.g. ``send(to=1, tag='act 3')``."""
        if self.kind in ("send", "isend"):
            return f"{self.kind}(to={self.peer}{_tag_text(self.tag)})"
        if self.kind == "recv":
            return f"recv(from={self.peer}{_tag_text(self.tag)})"
        open_ = [h for h in self.handles if not h.done]
        shown = ", ".join(h.describe() for h in open_[:3]) + (", ..." if len(open_) > 3 else "")
        if len(self.handles) == 1:
            return f"wait() on {shown}"
        return f"waitall() on {len(open_)} unfinished isend(s): {shown}"

    def __repr__(self) -> str:
        return f"<p2p operation {self.describe()} of rank {self.comm.rank}>"

    def _not_yielded(self, *args: Any, **kwargs: Any) -> Any:
        __tracebackhide__ = True
        what = "x = yield comm.recv(src)" if self.kind == "recv" else (
            "h = yield comm.isend(dst, x)" if self.kind == "isend" else f"yield comm.{self.kind}(...)")
        raise TypeError(
            f"{self.describe()} was used without `yield`: comm.{self.kind}(...) only describes the "
            f"operation; the runtime performs it when the program yields it. Write `{what}`.")

    __array__ = _not_yielded
    __iter__ = _not_yielded
    __getitem__ = _not_yielded
    __float__ = _not_yielded

    def wait(self) -> Op:
        """Error: a handle comes from *yielding* ``comm.isend(...)``."""
        return self._not_yielded()


class Handle:
    """The result of ``h = yield comm.isend(dst, obj)``; ``yield h.wait()`` completes it."""

    def __init__(self, comm: Comm, message: _Message) -> None:
        self._comm = comm
        self._message = message
        self.waited = False

    @property
    def done(self) -> bool:
        """True once the destination rank has received the message."""
        return self._message.taken

    @property
    def dst(self) -> int:
        return self._message.dst

    @property
    def tag(self) -> Any:
        return self._message.tag

    def wait(self) -> Op:
        """The operation that blocks until the message has been received; ``yield`` it."""
        return Op(self._comm, "wait", peer=self._message.dst, handles=(self,))

    def describe(self) -> str:
        return f"isend(to={self._message.dst}{self._message.label()})"

    def __repr__(self) -> str:
        return f"<Handle {self.describe()} {'received' if self.done else 'in flight'}>"


@dataclass(frozen=True)
class ComputeEvent:
    """One compute operation of a rank: ``op`` ("F" or "B") on micro-batch ``mb``."""

    op: str
    mb: int
    start: float
    end: float

    def __str__(self) -> str:
        return f"{self.op}{self.mb}"


class ActivationStash(MutableMapping):
    """A rank's activation memory: a dict ``micro-batch -> activation`` whose size is recorded.

    ``stash[mb] = act`` saves, ``act = stash.pop(mb)`` (or ``del stash[mb]``) frees. Every
    change appends ``(clock, len(stash))`` to the rank's ``live_history``.
    """

    def __init__(self, comm: Comm) -> None:
        self._comm = comm
        self._data: dict[Hashable, Any] = {}

    def __getitem__(self, key: Hashable) -> Any:
        __tracebackhide__ = True
        try:
            return self._data[key]
        except KeyError:
            raise KeyError(f"rank {self._comm.rank}: no activation saved for {key!r} "
                           f"(saved: {sorted(self._data, key=repr)})") from None

    def __setitem__(self, key: Hashable, value: Any) -> None:
        __tracebackhide__ = True
        if key in self._data:
            raise P2PError(f"rank {self._comm.rank}: an activation for {key!r} is already saved")
        self._data[key] = value
        # an activation counts as saved also inside a tuple, list or dict value, e.g. (act, x)
        inner = value.values() if isinstance(value, dict) else value if isinstance(value, (tuple, list)) else ()
        for item in [value, *inner]:
            if hasattr(item, "_saved"):
                item._saved = True
        self._comm._note_live()

    def __delitem__(self, key: Hashable) -> None:
        __tracebackhide__ = True
        self[key]  # raises the explanatory KeyError if missing
        del self._data[key]
        self._comm._note_live()

    def __iter__(self) -> Iterator[Hashable]:
        return iter(list(self._data))

    def __len__(self) -> int:
        return len(self._data)

    def __repr__(self) -> str:
        return f"ActivationStash(rank={self._comm.rank}, keys={list(self._data)})"


class Comm:
    """One rank's view of the world: its id, the communication operations and its records."""

    def __init__(self, world: World, rank: int) -> None:
        self._world = world
        self.rank = rank
        self.size = world.size
        self.clock = 0.0
        self.trace: list[ComputeEvent] = []
        self.stash = ActivationStash(self)
        self.live_history: list[tuple[float, int]] = [(0.0, 0)]
        self.peak_live = 0
        self.result: Any = None
        self.finished = False
        self._unyielded: list[Op] = []
        self._handles: list[Handle] = []

    # -- communication operations (yield them) -------------------------------------------
    def send(self, dst: int, obj: Any, tag: Any = None) -> Op:
        """Blocking send: ``yield comm.send(dst, obj)`` returns once ``dst`` has received it."""
        return Op(self, "send", self._check_peer(dst, "send"), tag, obj)

    def isend(self, dst: int, obj: Any, tag: Any = None) -> Op:
        """Non-blocking send: ``h = yield comm.isend(dst, obj)`` returns a :class:`Handle` at once."""
        return Op(self, "isend", self._check_peer(dst, "isend"), tag, obj)

    def recv(self, src: int, tag: Any = None) -> Op:
        """``x = yield comm.recv(src)``: the oldest message from ``src`` (blocks until there is one).

        With ``tag`` given, the message must carry that tag (a check that catches messages
        received out of order).
        """
        return Op(self, "recv", self._check_peer(src, "recv"), tag)

    def waitall(self, handles: Iterable[Handle]) -> Op:
        """``yield comm.waitall(handles)``: blocks until every handle's message was received."""
        handles = tuple(handles)
        for h in handles:
            if not isinstance(h, Handle):
                raise TypeError(f"rank {self.rank}: waitall expects Handles from "
                                f"`h = yield comm.isend(...)`, got {h!r}")
        return Op(self, "wait", handles=handles)

    # -- records -----------------------------------------------------------------------
    def record_compute(self, op: str, mb: int, duration: float) -> ComputeEvent:
        """Append a compute operation to the trace and advance the clock (used by the model)."""
        event = ComputeEvent(str(op), int(mb), self.clock, self.clock + float(duration))
        self.clock = event.end
        self.trace.append(event)
        return event

    def order(self) -> list[str]:
        """The compute trace as labels, e.g. ``['F0', 'F1', 'B0', ...]``."""
        return [str(e) for e in self.trace]

    def _note_live(self) -> None:
        n = len(self.stash)
        self.live_history.append((self.clock, n))
        self.peak_live = max(self.peak_live, n)

    def _check_peer(self, peer: Any, what: str) -> int:
        if isinstance(peer, bool) or not hasattr(peer, "__index__"):
            raise TypeError(f"rank {self.rank}: {what} needs an integer rank, got {peer!r}")
        peer = int(peer.__index__())
        if not 0 <= peer < self.size:
            raise P2PError(f"rank {self.rank}: {what} with rank {peer}, but ranks are 0..{self.size - 1}")
        if peer == self.rank:
            raise P2PError(f"rank {self.rank}: {what} with itself")
        return peer

    def __repr__(self) -> str:
        return f"<Comm rank {self.rank} of {self.size}>"


class World:
    """All ranks and their mailboxes. Build one with :func:`run`."""

    def __init__(self, size: int) -> None:
        if not isinstance(size, int) or size < 1:
            raise ValueError(f"the number of ranks must be a positive integer, got {size!r}")
        self.size = size
        self.ranks = [Comm(self, r) for r in range(size)]
        self._mailbox: dict[tuple[int, int], deque[_Message]] = {
            (s, d): deque() for s in range(size) for d in range(size) if s != d}
        self._pending: list[Op | None] = [None] * size

    def orders(self) -> list[list[str]]:
        """Every rank's compute trace as labels."""
        return [c.order() for c in self.ranks]

    # -- scheduler ---------------------------------------------------------------------
    def run(self, program: Callable[[Comm], Generator[Op, Any, Any]]) -> World:
        __tracebackhide__ = True  # pytest: show the program's frames, not the runtime's
        gens = []
        for comm in self.ranks:
            gen = program(comm)
            if not isinstance(gen, Generator):
                raise TypeError(
                    f"the program for rank {comm.rank} returned {type(gen).__name__}, not a generator: "
                    "a rank's program must `yield` its communication operations "
                    "(x = yield comm.recv(src); yield comm.send(dst, x))")
            gens.append(gen)
        values: list[Any] = [None] * self.size
        steps = 0
        while not all(c.finished for c in self.ranks):
            progress = False
            for r, comm in enumerate(self.ranks):
                while not comm.finished:
                    if self._pending[r] is None:
                        steps += 1
                        if steps > MAX_STEPS:
                            raise P2PError(f"more than {MAX_STEPS} operations: does a rank loop forever?")
                        try:
                            op = gens[r].send(values[r])
                        except StopIteration as stop:
                            self._finish(comm, stop.value)
                            progress = True
                            break
                        except Exception as exc:
                            if hasattr(exc, "add_note"):
                                exc.add_note(f"(raised by the program of rank {r} of {self.size})")
                            raise
                        values[r] = None
                        self._start(comm, op)
                        progress = True
                    done, value = self._try_complete(comm, self._pending[r])
                    if not done:
                        break
                    self._pending[r] = None
                    values[r] = value
                    progress = True
            if not progress:
                raise DeadlockError(self._deadlock_message(), self)
        leftover = [m for box in self._mailbox.values() for m in box]
        if leftover:
            m = leftover[0]
            raise P2PError(
                f"every rank finished, but {len(leftover)} message(s) were never received, e.g. "
                f"rank {m.src} -> rank {m.dst}{m.label()}: each send needs a matching recv")
        return self

    def _start(self, comm: Comm, op: Any) -> None:
        __tracebackhide__ = True  # pytest: show the program's frames, not the runtime's
        r = comm.rank
        if not getattr(op, "_is_p2p_op", False):
            raise TypeError(
                f"rank {r} yielded {op!r}; a program may only yield comm.send / comm.isend / "
                "comm.recv / handle.wait() / comm.waitall(...) operations")
        if op.comm is not comm:
            raise P2PError(f"rank {r} yielded {op.describe()} created by rank {op.comm.rank}'s comm")
        try:
            comm._unyielded.remove(op)
        except ValueError:
            raise P2PError(f"rank {r} yielded {op.describe()} twice") from None
        if op.kind in ("send", "isend"):
            msg = _Message(r, op.peer, op.tag, copy.deepcopy(op.payload), comm.clock)
            self._mailbox[(r, op.peer)].append(msg)
            op.message = msg
            if op.kind == "isend":
                handle = Handle(comm, msg)
                comm._handles.append(handle)
                op.handles = (handle,)
        elif op.kind == "wait":
            for h in op.handles:
                if h._comm is not comm:
                    raise P2PError(f"rank {r} waited on a handle of rank {h._comm.rank}")
        self._pending[r] = op

    def _try_complete(self, comm: Comm, op: Op) -> tuple[bool, Any]:
        __tracebackhide__ = True  # pytest: show the program's frames, not the runtime's
        if op.kind == "isend":
            return True, op.handles[0]
        if op.kind == "send":
            if not op.message.taken:
                return False, None
            comm.clock = max(comm.clock, op.message.taken_at)
            return True, None
        if op.kind == "wait":
            if not all(h.done for h in op.handles):
                return False, None
            for h in op.handles:
                h.waited = True
                comm.clock = max(comm.clock, h._message.taken_at)
            return True, None
        box = self._mailbox[(op.peer, comm.rank)]
        if not box:
            return False, None
        msg = box[0]
        if op.tag is not None and msg.tag != op.tag:
            raise P2PError(
                f"rank {comm.rank} called recv(from={op.peer}, tag={op.tag!r}) but the oldest message "
                f"from rank {op.peer} has tag={msg.tag!r}. Messages between two ranks arrive in the "
                f"order they were sent (FIFO): rank {op.peer} sent them in a different order than "
                f"rank {comm.rank} receives them.")
        box.popleft()
        msg.taken = True
        comm.clock = max(comm.clock, msg.sent_at)
        msg.taken_at = comm.clock
        return True, msg.payload

    def _finish(self, comm: Comm, value: Any) -> None:
        __tracebackhide__ = True  # pytest: show the program's frames, not the runtime's
        r = comm.rank
        if comm._unyielded:
            op = comm._unyielded[0]
            raise P2PError(
                f"rank {r} created {op.describe()} but never yielded it, so it never happened: "
                f"write `yield comm.{op.kind}(...)`")
        unwaited = [h for h in comm._handles if not h.waited]
        if unwaited:
            shown = ", ".join(h.describe() for h in unwaited[:3])
            raise P2PError(
                f"rank {r} finished with {len(unwaited)} isend handle(s) never waited ({shown}"
                f"{', ...' if len(unwaited) > 3 else ''}): complete every non-blocking send with "
                "`yield h.wait()` or `yield comm.waitall(handles)` before the program returns")
        comm.finished = True
        comm.result = value

    # -- deadlock report ---------------------------------------------------------------
    def _waits_for(self, r: int) -> int | None:
        op = self._pending[r]
        if op is None or self.ranks[r].finished:
            return None
        if op.kind == "wait":
            return next(h.dst for h in op.handles if not h.done)
        return op.peer

    def _status(self, r: int) -> str:
        if self.ranks[r].finished:
            return "has finished"
        op = self._pending[r]
        return f"is blocked in {op.describe()}" if op is not None else "is running"

    def _deadlock_message(self) -> str:
        lines = ["deadlock: no rank can make progress."]
        kinds = set()
        for r, comm in enumerate(self.ranks):
            if comm.finished:
                lines.append(f"  rank {r} has finished")
                continue
            op = self._pending[r]
            kinds.add(op.kind)
            peer = self._waits_for(r)
            done = f" after {comm.trace[-1]}" if comm.trace else " before any compute"
            if op.kind == "send":
                why = f"rank {peer} has not received it with recv(from={r}); rank {peer} {self._status(peer)}"
            elif op.kind == "recv":
                why = f"no message from rank {op.peer} is queued; rank {op.peer} {self._status(op.peer)}"
            else:
                why = f"rank {peer} has not received it yet; rank {peer} {self._status(peer)}"
            lines.append(f"  rank {r} blocked in {op.describe()}{done}: {why}")
            if comm._unyielded:
                lines.append(f"    (rank {r} also created {comm._unyielded[0].describe()} without "
                             "yielding it, so that operation never happened)")
        cycle = self._find_cycle()
        if cycle:
            lines.append("  waiting cycle: " + " -> ".join(f"rank {r}" for r in cycle))
        if "send" in kinds:
            lines.append(
                "A blocking send(to=d) returns only after rank d has taken the message with a "
                "matching recv. Here ranks wait in sends for partners that are themselves waiting, "
                "so none can reach its recv. Post sends with isend (h = yield comm.isend(dst, x)) "
                "and wait for the handles later, so a rank can go on to its next recv while its "
                "message is in flight.")
        if "wait" in kinds:
            lines.append(
                "h.wait() returns only once the destination has received the isend's message; "
                "waiting right after the isend is the same as a blocking send.")
        if kinds == {"recv"}:
            lines.append(
                "Every waiting rank is in a recv: some message that a rank expects is never "
                "sent (check the number of sends and recvs on both sides of each link).")
        return "\n".join(lines)

    def _find_cycle(self) -> list[int]:
        for start in range(self.size):
            seen: list[int] = []
            r: int | None = start
            while r is not None and r not in seen:
                seen.append(r)
                r = self._waits_for(r)
            if r is not None:
                cycle = seen[seen.index(r):]
                return cycle + [r]
        return []


def run(size: int, program: Callable[[Comm], Generator[Op, Any, Any]]) -> World:
    """Run ``program(comm)`` on ``size`` ranks until all finish; return the :class:`World`.

    Raises :class:`DeadlockError` when no rank can make progress, and re-raises any exception
    raised by a rank's program.
    """
    __tracebackhide__ = True
    return World(size).run(program)
