"""Ctrl-C kept by the judge's own process: held while it forks, deferred past code that catches it, latched.

CPython runs the handlers registered with :func:`os.register_at_fork` (the ``logging`` module's,
among others) around every ``os.fork()`` and every subprocess started with a ``preexec_fn``, and
an exception raised inside one of them is printed and dropped. A Ctrl-C whose handler ran there
was lost: ``judge grade`` went on grading (reproduced with a SIGINT sent at random moments of a
loaded grading run: about one in fifty). Inside :func:`ctrl_c_held`, SIGINT is blocked, so it
stays pending in the kernel, and a Ctrl-C that came just before is raised on entry; it is
delivered when the block ends and raised at the next Python call, in ordinary code (the caller must
record the child before it makes one). Fork inside the block and leave it in the child too (the
child's mask is restored; pending signals are not inherited).

:func:`ctrl_c_deferred` raises a Ctrl-C pressed during code that catches KeyboardInterrupt itself
(the warm-up's pytest run) once that code is done.

:func:`ctrl_c_latched` (the command line, around a command) makes SIGTERM and SIGHUP a Ctrl-C, so that
a judge stopped by a container, a platform or a closed terminal ends its jobs as after Ctrl-C, and
keeps a Ctrl-C that Python drops anyway:
a KeyboardInterrupt raised while a destructor, a weakref callback or a garbage collection runs is
printed as "Exception ignored" and the program goes on. The press is also remembered, and the
judging loop calls :func:`raise_if_pressed` on every turn. A judge started with SIGINT ignored (in
the background, under nohup) keeps ignoring it, as CPython does.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from typing import Any


def _handle_pending() -> None:
    """Nothing: entering a Python function runs the handlers of signals already caught."""


@contextlib.contextmanager
def ctrl_c_held() -> Iterator[None]:
    """SIGINT blocked for the block (which forks), and raised after it if it came. It holds a Ctrl-C sent
    to the process only while no other thread runs (the kernel hands such a signal to any thread that
    does not block it): the judge has none while it starts jobs (the sandbox probe's thread is joined
    before the first fork)."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "pthread_sigmask"):
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        _handle_pending()  # a Ctrl-C caught before the block is raised here, not inside a fork handler
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)  # a Ctrl-C held is raised at the next Python call


def _hears_ctrl_c() -> bool:
    """Whether this code may handle SIGINT: on the main thread, and SIGINT not ignored (a judge started in
    the background, under nohup, keeps ignoring it)."""
    return threading.current_thread() is threading.main_thread() and \
        signal.getsignal(signal.SIGINT) != signal.SIG_IGN


@contextlib.contextmanager
def ctrl_c_deferred() -> Iterator[None]:
    """Ctrl-C during the block is raised as KeyboardInterrupt when it ends, not inside it: for code that
    catches KeyboardInterrupt itself (pytest returns when one reaches a run, and the judge's warm-up runs
    pytest in the judge's own process: the judge would go on grading)."""
    if not _hears_ctrl_c():
        yield
        return
    pressed: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda number, frame: pressed.append(number))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if pressed:
        raise KeyboardInterrupt


_pressed = [False]


def _on_ctrl_c(number: int, frame: object) -> None:
    _pressed[0] = True
    raise KeyboardInterrupt


#: How a run is stopped other than by Ctrl-C: SIGTERM (a container stopped, a CI job or a platform's time
#: limit ending), SIGHUP (the terminal closed). Their default ends the judge at once, and a job's learner
#: processes and folders outlived it; within :func:`ctrl_c_latched` each is a Ctrl-C instead.
STOP_SIGNALS = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name))


def _as_ctrl_c(number: int, frame: Any) -> None:
    """A stop signal taken as a Ctrl-C: inside :func:`ctrl_c_held` a SIGINT left pending until the fork is
    recorded; elsewhere SIGINT's handler of the moment (latched, or deferred by :func:`ctrl_c_deferred`)
    called at once (a SIGINT raised from here would wait for the next signal check, past a blocking call)."""
    if hasattr(signal, "pthread_sigmask") and signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, []):
        signal.raise_signal(signal.SIGINT)
        return
    handler = signal.getsignal(signal.SIGINT)
    if callable(handler):
        handler(signal.SIGINT, frame)


@contextlib.contextmanager
def ctrl_c_latched() -> Iterator[None]:
    """Within the block, Ctrl-C raises KeyboardInterrupt as ever and is remembered for
    :func:`raise_if_pressed`, and SIGTERM and SIGHUP (:data:`STOP_SIGNALS`) whose action is the default
    do what Ctrl-C does; the handlers are restored after it."""
    if not _hears_ctrl_c() or signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        yield  # ignored (the judge runs in the background), or a handler of the program embedding the judge
        return
    _pressed[0] = False
    signal.signal(signal.SIGINT, _on_ctrl_c)
    stops = [number for number in STOP_SIGNALS if signal.getsignal(number) == signal.SIG_DFL]  # nohup's SIGHUP stays
    for number in stops:
        signal.signal(number, _as_ctrl_c)
    try:
        yield
    finally:
        for number in stops:
            signal.signal(number, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        _pressed[0] = False


def raise_if_pressed() -> None:
    """KeyboardInterrupt if Ctrl-C was pressed in :func:`ctrl_c_latched`'s block (its first raise may have
    been dropped)."""
    if _pressed[0]:
        raise KeyboardInterrupt
