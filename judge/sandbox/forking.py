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
from collections.abc import Callable, Iterator, Sequence
from typing import Any

#: How a run is stopped other than by Ctrl-C: SIGTERM (a container stopped, a CI job or a platform's time
#: limit ending), SIGHUP (the terminal closed). Their default ends the judge at once, and a job's learner
#: processes and folders outlived it; within :func:`ctrl_c_latched` each is a Ctrl-C instead (also where
#: SIGINT is ignored: a judge started in the background still cleans up when it is stopped).
STOP_SIGNALS = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name))


def _handle_pending() -> None:
    """Nothing: entering a Python function runs the handlers of signals already caught."""


@contextlib.contextmanager
def ctrl_c_held() -> Iterator[None]:
    """SIGINT (and :data:`STOP_SIGNALS`) blocked for the block (which forks), and raised after it if it
    came. It holds a Ctrl-C sent to the process only while no other thread runs (the kernel hands such a
    signal to any thread that does not block it): the judge has none while it starts jobs (the sandbox
    probe's thread is joined before the first fork)."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "pthread_sigmask"):
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, *STOP_SIGNALS})
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
def _handled(numbers: Sequence[int], handler: Callable[[int, Any], Any]) -> Iterator[None]:
    """``handler`` for the signals ``numbers`` during the block; their handlers of before restored after it."""
    previous = {number: signal.signal(number, handler) for number in numbers}
    try:
        yield
    finally:
        for number, before in previous.items():
            signal.signal(number, before)


@contextlib.contextmanager
def ctrl_c_deferred() -> Iterator[None]:
    """Ctrl-C during the block is raised as KeyboardInterrupt when it ends, not inside it: for code that
    catches KeyboardInterrupt itself (pytest returns when one reaches a run, and the judge's warm-up runs
    pytest in the judge's own process: the judge would go on grading)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    pressed: list[int] = []
    deferred = [signal.SIGINT] if _hears_ctrl_c() else []  # an ignored Ctrl-C stays ignored
    deferred += [number for number in STOP_SIGNALS if signal.getsignal(number) is _on_ctrl_c]
    with _handled(deferred, lambda number, frame: pressed.append(number)):
        yield
    if pressed:
        raise KeyboardInterrupt


_pressed = [False]


def _on_ctrl_c(number: int, frame: object) -> None:
    _pressed[0] = True
    raise KeyboardInterrupt


@contextlib.contextmanager
def ctrl_c_latched() -> Iterator[None]:
    """Within the block, Ctrl-C raises KeyboardInterrupt as ever and is remembered for
    :func:`raise_if_pressed`, and SIGTERM and SIGHUP (:data:`STOP_SIGNALS`) whose action is the default
    do what Ctrl-C does; the handlers are restored after it."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    # SIGINT ignored (the judge runs in the background) stays so, as does a handler of a program embedding
    # the judge; a stop signal ignored (nohup's SIGHUP) or handled by such a program is left alone too
    latched = [signal.SIGINT] if signal.getsignal(signal.SIGINT) is signal.default_int_handler else []
    latched += [number for number in STOP_SIGNALS if signal.getsignal(number) == signal.SIG_DFL]
    _pressed[0] = False
    try:
        with _handled(latched, _on_ctrl_c):
            yield
    finally:
        _pressed[0] = False


def raise_if_pressed() -> None:
    """KeyboardInterrupt if Ctrl-C was pressed in :func:`ctrl_c_latched`'s block (its first raise may have
    been dropped)."""
    if _pressed[0]:
        raise KeyboardInterrupt


def die_with_parent() -> bool:
    """In a child just forked: be killed when the process that forked it dies (Linux's parent-death signal).
    False where the system has no such signal."""
    import ctypes

    try:
        ctypes.CDLL(None).prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return False
    return True
