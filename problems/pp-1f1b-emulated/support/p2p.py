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

try:  # the learner's language during a judged run (the runtime also runs without the judge: English)
    from judge.lang import say
except ImportError:  # pragma: no cover - outside the judge
    def say(en: str, /, **translations: str) -> str:
        return en

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
        raise TypeError(say(
            f"{self.describe()} was used without `yield`: comm.{self.kind}(...) only describes the "
            f"operation; the runtime performs it when the program yields it. Write `{what}`.",
            zh=f"{self.describe()} 没有经过 `yield` 就被使用了：comm.{self.kind}(...) 只是描述这个操作，"
               f"程序 yield 它时运行时才执行它。请写 `{what}`。"))

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
            raise KeyError(say(f"rank {self._comm.rank}: no activation saved for {key!r} "
                               f"(saved: {sorted(self._data, key=repr)})",
                               zh=f"rank {self._comm.rank}：没有为 {key!r} 保存激活"
                                  f"（已保存：{sorted(self._data, key=repr)}）")) from None

    def __setitem__(self, key: Hashable, value: Any) -> None:
        __tracebackhide__ = True
        if key in self._data:
            raise P2PError(say(f"rank {self._comm.rank}: an activation for {key!r} is already saved",
                               zh=f"rank {self._comm.rank}：{key!r} 的激活已经保存过了"))
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
        self.unwaited: list[str] = []  # the isend handles it finished without waiting for (run(strict=False))
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
                raise TypeError(say(f"rank {self.rank}: waitall expects Handles from "
                                    f"`h = yield comm.isend(...)`, got {h!r}",
                                    zh=f"rank {self.rank}：waitall 需要 `h = yield comm.isend(...)` 得到的 "
                                       f"Handle，实际得到 {h!r}"))
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
            raise TypeError(say(f"rank {self.rank}: {what} needs an integer rank, got {peer!r}",
                                zh=f"rank {self.rank}：{what} 需要整数 rank，实际得到 {peer!r}"))
        peer = int(peer.__index__())
        if not 0 <= peer < self.size:
            raise P2PError(say(f"rank {self.rank}: {what} with rank {peer}, but ranks are 0..{self.size - 1}",
                               zh=f"rank {self.rank}：{what} 的对象是 rank {peer}，但 rank 只有 0..{self.size - 1}"))
        if peer == self.rank:
            raise P2PError(say(f"rank {self.rank}: {what} with itself", zh=f"rank {self.rank}：{what} 的对象是它自己"))
        return peer

    def __repr__(self) -> str:
        return f"<Comm rank {self.rank} of {self.size}>"


class World:
    """All ranks and their mailboxes. Build one with :func:`run`."""

    def __init__(self, size: int, strict: bool = True) -> None:
        if not isinstance(size, int) or size < 1:
            raise ValueError(f"the number of ranks must be a positive integer, got {size!r}")
        self.size = size
        self.strict = strict  # False: a rank that finishes with isend handles never waited is noted, not fatal
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
                raise TypeError(say(
                    f"the program for rank {comm.rank} returned {type(gen).__name__}, not a generator: "
                    "a rank's program must `yield` its communication operations "
                    "(x = yield comm.recv(src); yield comm.send(dst, x))",
                    zh=f"rank {comm.rank} 的程序返回了 {type(gen).__name__}，而不是生成器：每个 rank 的程序都必须 "
                       "`yield` 它的通信操作（x = yield comm.recv(src); yield comm.send(dst, x)）"))
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
                            raise P2PError(say(f"more than {MAX_STEPS} operations: does a rank loop forever?",
                                               zh=f"操作超过 {MAX_STEPS} 个：是不是有 rank 在无限循环？"))
                        try:
                            op = gens[r].send(values[r])
                        except StopIteration as stop:
                            self._finish(comm, stop.value)
                            progress = True
                            break
                        except Exception as exc:
                            if hasattr(exc, "add_note"):
                                exc.add_note(say(f"(raised by the program of rank {r} of {self.size})",
                                                 zh=f"（由 {self.size} 个 rank 中 rank {r} 的程序抛出）"))
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
            raise P2PError(say(
                f"every rank finished, but {len(leftover)} message(s) were never received, e.g. "
                f"rank {m.src} -> rank {m.dst}{m.label()}: each send needs a matching recv",
                zh=f"每个 rank 都结束了，但有 {len(leftover)} 条消息从未被接收，例如 "
                   f"rank {m.src} -> rank {m.dst}{m.label()}：每次发送都需要一个对应的 recv"))
        return self

    def _start(self, comm: Comm, op: Any) -> None:
        __tracebackhide__ = True  # pytest: show the program's frames, not the runtime's
        r = comm.rank
        if not getattr(op, "_is_p2p_op", False):
            raise TypeError(say(
                f"rank {r} yielded {op!r}; a program may only yield comm.send / comm.isend / "
                "comm.recv / handle.wait() / comm.waitall(...) operations",
                zh=f"rank {r} yield 了 {op!r}；程序只能 yield comm.send / comm.isend / "
                   "comm.recv / handle.wait() / comm.waitall(...) 操作"))
        if op.comm is not comm:
            raise P2PError(say(f"rank {r} yielded {op.describe()} created by rank {op.comm.rank}'s comm",
                               zh=f"rank {r} yield 了由 rank {op.comm.rank} 的 comm 创建的 {op.describe()}"))
        try:
            comm._unyielded.remove(op)
        except ValueError:
            raise P2PError(say(f"rank {r} yielded {op.describe()} twice",
                               zh=f"rank {r} 把 {op.describe()} yield 了两次")) from None
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
                    raise P2PError(say(f"rank {r} waited on a handle of rank {h._comm.rank}",
                                       zh=f"rank {r} 等待了 rank {h._comm.rank} 的 handle"))
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
            raise P2PError(say(
                f"rank {comm.rank} called recv(from={op.peer}, tag={op.tag!r}) but the oldest message "
                f"from rank {op.peer} has tag={msg.tag!r}. Messages between two ranks arrive in the "
                f"order they were sent (FIFO): rank {op.peer} sent them in a different order than "
                f"rank {comm.rank} receives them.",
                zh=f"rank {comm.rank} 调用了 recv(from={op.peer}, tag={op.tag!r})，但来自 rank {op.peer} 的最早"
                   f"一条消息的 tag={msg.tag!r}。两个 rank 之间的消息按发送顺序到达（先进先出）：rank {op.peer} "
                   f"发送它们的顺序与 rank {comm.rank} 接收的顺序不同。"))
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
            raise P2PError(say(
                f"rank {r} created {op.describe()} but never yielded it, so it never happened: "
                f"write `yield comm.{op.kind}(...)`",
                zh=f"rank {r} 创建了 {op.describe()} 却从未 yield 它，所以它从未发生：请写 `yield comm.{op.kind}(...)`"))
        unwaited = [h for h in comm._handles if not h.waited]
        if unwaited:
            comm.unwaited = [h.describe() for h in unwaited]
            if self.strict:
                raise P2PError(unwaited_message(r, comm.unwaited))
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
            return say("has finished", zh="已经结束")
        op = self._pending[r]
        return (say(f"is blocked in {op.describe()}", zh=f"阻塞在 {op.describe()}") if op is not None
                else say("is running", zh="正在运行"))

    def _deadlock_message(self) -> str:
        lines = [say("deadlock: no rank can make progress.", zh="死锁：没有任何 rank 能继续推进。")]
        kinds = set()
        for r, comm in enumerate(self.ranks):
            if comm.finished:
                lines.append(say(f"  rank {r} has finished", zh=f"  rank {r} 已经结束"))
                continue
            op = self._pending[r]
            kinds.add(op.kind)
            peer = self._waits_for(r)
            done = (say(f" after {comm.trace[-1]}", zh=f"（在 {comm.trace[-1]} 之后）") if comm.trace
                    else say(" before any compute", zh="（在任何计算之前）"))
            if op.kind == "send":
                why = say(f"rank {peer} has not received it with recv(from={r}); rank {peer} {self._status(peer)}",
                          zh=f"rank {peer} 还没有用 recv(from={r}) 接收它；rank {peer} {self._status(peer)}")
            elif op.kind == "recv":
                why = say(f"no message from rank {op.peer} is queued; rank {op.peer} {self._status(op.peer)}",
                          zh=f"没有来自 rank {op.peer} 的消息在排队；rank {op.peer} {self._status(op.peer)}")
            else:
                why = say(f"rank {peer} has not received it yet; rank {peer} {self._status(peer)}",
                          zh=f"rank {peer} 还没有接收它；rank {peer} {self._status(peer)}")
            lines.append(say(f"  rank {r} blocked in {op.describe()}{done}: {why}",
                             zh=f"  rank {r} 阻塞在 {op.describe()}{done}：{why}"))
            if comm._unyielded:
                lines.append(say(f"    (rank {r} also created {comm._unyielded[0].describe()} without "
                                 "yielding it, so that operation never happened)",
                                 zh=f"    （rank {r} 还创建了 {comm._unyielded[0].describe()} 却没有 yield 它，"
                                    "所以那个操作从未发生）"))
        cycle = self._find_cycle()
        if cycle:
            lines.append(say("  waiting cycle: ", zh="  等待环：") + " -> ".join(f"rank {r}" for r in cycle))
        if "send" in kinds:
            lines.append(say(
                "A blocking send(to=d) returns only after rank d has taken the message with a "
                "matching recv. Here ranks wait in sends for partners that are themselves waiting, "
                "so none can reach its recv. Post sends with isend (h = yield comm.isend(dst, x)) "
                "and wait for the handles later, so a rank can go on to its next recv while its "
                "message is in flight.",
                zh="阻塞的 send(to=d) 只有在 rank d 用对应的 recv 取走消息之后才返回。这里各 rank 在 send 中等待的"
                   "对方自己也在等待，所以谁都到不了自己的 recv。用 isend 发出（h = yield comm.isend(dst, x)），"
                   "稍后再等待 handle，这样消息在途中时 rank 可以继续执行下一个 recv。"))
        if "wait" in kinds:
            lines.append(say(
                "h.wait() returns only once the destination has received the isend's message; "
                "waiting right after the isend is the same as a blocking send.",
                zh="h.wait() 只有在目标 rank 收到 isend 的消息后才返回；isend 之后立刻等待，就等于阻塞的 send。"))
        if kinds == {"recv"}:
            lines.append(say(
                "Every waiting rank is in a recv: some message that a rank expects is never "
                "sent (check the number of sends and recvs on both sides of each link).",
                zh="每个在等待的 rank 都在 recv 中：某个 rank 期待的消息从未被发送（检查每条链路两端 send 和 recv 的数量）。"))
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


def unwaited_message(rank: int, handles: list[str]) -> str:
    """What is wrong with a rank that finished with the isend ``handles`` (described) never waited."""
    shown = ", ".join(handles[:3]) + (", ..." if len(handles) > 3 else "")
    return say(f"rank {rank} finished with {len(handles)} isend handle(s) never waited ({shown}): complete every "
               "non-blocking send with `yield h.wait()` or `yield comm.waitall(handles)` before the program returns",
               zh=f"rank {rank} 结束时还有 {len(handles)} 个 isend 的 handle 从未等待（{shown}）：在程序返回前，"
                  "用 `yield h.wait()` 或 `yield comm.waitall(handles)` 完成每个非阻塞发送")


def run(size: int, program: Callable[[Comm], Generator[Op, Any, Any]], strict: bool = True) -> World:
    """Run ``program(comm)`` on ``size`` ranks until all finish; return the :class:`World`.

    Raises :class:`DeadlockError` when no rank can make progress, and re-raises any exception
    raised by a rank's program. A rank that finishes with isend handles never waited raises
    :class:`P2PError`; with ``strict=False`` it finishes, and its ``comm.unwaited`` says so (the
    tests check it in one place, so that slip costs what it weighs).
    """
    __tracebackhide__ = True
    return World(size, strict).run(program)
