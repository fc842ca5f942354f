"""The learner process's main: limits, the guard, the learner's module, the message loop.

Started by :mod:`judge.sandbox.process` as ``python -I -S -B -c ...`` with the learner's folder, the
runtime folder (this package's few modules) and a private site folder (numpy) first on
``sys.path``, and a JSON configuration as its last argument. Two inherited pipes (their numbers in
the configuration) carry the test side's messages in and this side's out; 1 and 2 are files the
learner's output goes to, read back and sent along with every message so prints land in the test
that caused them.

Order matters: limits first, then the imports the judge trusts (numpy, the support modules that
declare types), then the guard (:mod:`judge.sandbox.guard`), and only then the learner's module.
"""

from __future__ import annotations

import io
import json
import os
import sys
from typing import Any

from ..core import codec, protocol
from . import guard
from . import learner as endpoint

OUTPUT_FILE_LIMIT = 16 * 1024 * 1024  # bytes the output files (and any file) may reach
OPEN_FILES_LIMIT = 256  # descriptors at once: bounds what files with no name could hold beside the memory limit
OUTPUT_PER_MESSAGE = 4 << 20  # bytes of output sent with one message (the rest is dropped, and said so)
def main() -> None:
    """Run the learner's side until the test side closes the channel."""
    config = json.loads(sys.argv[-1])
    root = os.path.realpath(config["root"])
    _set_limits(int(config["memory_limit"]), int(config.get("processes") or 0))
    output = _Output()
    if config.get("numpy"):
        import numpy  # noqa: F401  trusted, and before the guard (it loads native code)
    registry = endpoint.registry_from(config.get("declarations", {}))
    os.chdir(root)
    os.environ["TMPDIR"] = root
    import tempfile

    tempfile.tempdir = root
    guard.confine(root)
    module, error = endpoint.import_entry(config["module"], config["entry"], root)
    side = endpoint.LearnerSide(module, registry, root) if module is not None else None
    channel_in, channel_out = config["fds"]
    connection = protocol.PipeConnection(side.handle if side else _refuse, channel_in, channel_out,
                                         on_send=output.attach, loads=side.decoder.loads if side else codec.loads)
    if side is not None:
        side.connection = connection
    ready = protocol.Ready(op="ready", id=0, error=error, bound=side.bindings() if side else {})
    connection.send(dict(ready))
    _serve(connection)


def _refuse(message: dict[str, Any]) -> dict[str, Any]:
    raise protocol.ProtocolViolation("the learner's module did not import")


def _serve(connection: protocol.PipeConnection) -> None:
    while True:
        try:
            message = connection.receive()
        except protocol.BoundaryError:
            os._exit(0)  # the test side is gone: nothing left to do
        connection.send(connection.serve(message))


class _Output:
    """The learner's output, read back from the files behind fds 1 and 2 and sent with each message."""

    def __init__(self) -> None:
        self.offsets = {1: 0, 2: 0}
        sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), encoding="utf-8", errors="backslashreplace")
        sys.stderr = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), encoding="utf-8", errors="backslashreplace")

    def attach(self, message: dict[str, Any]) -> None:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        for fd, key in ((1, "out"), (2, "err")):
            text = self._read(fd)
            if text:
                message[key] = text

    def _read(self, fd: int) -> str:
        try:
            size = os.fstat(fd).st_size
        except OSError:
            return ""
        start = self.offsets[fd]
        if size <= start:
            return ""
        data = os.pread(fd, min(size - start, OUTPUT_PER_MESSAGE), start)
        self.offsets[fd] = size
        dropped = size - start - len(data)
        text = data.decode("utf-8", errors="replace")
        return text + (f"\n... [{dropped} more bytes of output dropped]\n" if dropped > 0 else "")


def _set_limits(memory_mib: int, processes: int = 0) -> None:
    """The address space, core files, file sizes, open files, POSIX message queues, and (``processes`` > 0: run
    as an identity of the job's own, whose processes this counts) how many processes the learner's code may
    have."""
    try:
        import resource
    except ImportError:
        return
    import signal

    # headroom on top of what the interpreter maps already, as for every level
    address_space = _mapped_bytes() + memory_mib * 1024 * 1024 + 256 * 1024 * 1024
    # no POSIX message queue: one outlives its maker, and no listing finds it without an mqueue mount
    limits = [("RLIMIT_AS", address_space), ("RLIMIT_CORE", 0), ("RLIMIT_FSIZE", OUTPUT_FILE_LIMIT),
              ("RLIMIT_NOFILE", OPEN_FILES_LIMIT), ("RLIMIT_MSGQUEUE", 0)]
    if processes > 0:
        limits.append(("RLIMIT_NPROC", processes))
    for name, value in limits:
        kind = getattr(resource, name, None)
        if kind is not None:
            resource.setrlimit(kind, (value, value))  # a limit that cannot be set is an error, never ignored
    if hasattr(signal, "SIGXFSZ"):
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # writes past the limit fail instead of killing us


def _mapped_bytes() -> int:
    try:
        with open("/proc/self/statm", encoding="ascii") as handle:
            return int(handle.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


if __name__ == "__main__":
    main()
