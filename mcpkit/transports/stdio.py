"""Serve an MCP server over standard input and output.

stdout is the protocol channel: a stray ``print()`` in a tool would corrupt it. So while
serving the process's real stdout is set aside for protocol messages only, and file
descriptor 1 (and ``sys.stdout``) are pointed at stderr: prints and log lines of the tool,
and of any child it starts, land in the log, not on the wire.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable
from typing import Any, BinaryIO, Protocol

from ..framing import DEFAULT_MAX_MESSAGE_SIZE, decoder_for, encoder_for
from ..jsonrpc import encode_or_replace
from ..logs import LazyLogger


class Receiver(Protocol):
    """One connection of a server: fed every decoded message, closed at end of input."""

    def receive(self, message: Any) -> None: ...

    def close(self) -> None: ...


class Connectable(Protocol):
    """A server (:class:`~mcpkit.server.Server`): this module, one layer below it, needs only
    its ``connect``. That keeps ``Server.run()`` an import downwards."""

    def connect(self, send: Callable[[dict[str, Any]], None]) -> Receiver: ...

log = LazyLogger("mcpkit.stdio")  # see mcpkit.logs

READ_SIZE = 64 * 1024


def serve_stdio(
    server: Connectable,
    stdin: BinaryIO | None = None,
    stdout: BinaryIO | int | None = None,
    framing: str = "ndjson",
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
) -> None:
    """Serve until end of input. With no streams given, uses this process's stdin/stdout.

    ``stdout`` may be a binary stream or a file descriptor already set aside with
    :func:`claim_stdout` (as ``mcpkit serve`` does before it imports the server).
    """
    encode = encoder_for(framing)
    decoder = decoder_for(framing, max_message_size)
    restore = None
    if stdout is None:
        out_fd, restore = claim_stdout()
        write = _fd_writer(out_fd)
    elif isinstance(stdout, int):
        write = _fd_writer(stdout)
    else:
        write = _stream_writer(stdout)
    read = _fd_reader(0) if stdin is None else _stream_reader(stdin)

    broken = False
    # Answers the reader produces while it handles a chunk of several messages are held and
    # written together when the chunk is done: one write instead of one per answer, which
    # is most of a small request's cost when a client keeps many in flight. Messages sent
    # from other threads (tools that take a Context) are written at once, as before; the
    # lock keeps a held batch and such a message from interleaving in the pipe.
    held: list[bytes] | None = None
    reader = threading.get_ident()
    write_lock = threading.Lock()

    def send(message: dict[str, Any]) -> None:
        nonlocal broken
        if broken:
            return
        try:
            data = encode(message)
        except ValueError:
            # A value JSON cannot carry is this message's problem, not the connection's.
            data = encode_or_replace(encode, message)
            if data is None:
                return
        if held is not None and threading.get_ident() == reader:
            held.append(data)
            return
        put(data)

    def put(data: bytes) -> None:
        nonlocal broken
        try:
            with write_lock:
                write(data)
        except (OSError, ValueError) as exc:  # ValueError: a closed stream
            broken = True
            log.warning("the client went away (%s); dropping further output", exc)

    connection = server.connect(send)
    receive = connection.receive
    try:
        while not broken:
            try:
                data = read()
            except (OSError, ValueError) as exc:
                log.warning("reading stdin failed: %s", exc)
                break
            if not data:
                break
            items = decoder.feed(data)
            if len(items) == 1:  # one message per read: a client waiting for each answer
                receive(items[0])
                continue
            held = []
            try:
                for item in items:
                    receive(item)
            finally:
                batch, held = held, None
                if batch and not broken:
                    put(b"".join(batch))
        for item in decoder.close():
            receive(item)
    except KeyboardInterrupt:
        log.info("interrupted")
    finally:
        connection.close()
        if restore:
            restore()


def claim_stdout() -> tuple[int, Any]:
    """Keep fd 1 for protocol output only; send everything else written to it to stderr."""
    sys.stdout.flush()
    out_fd = os.dup(1)
    os.dup2(2, 1)
    saved_stdout = sys.stdout
    sys.stdout = sys.stderr

    def restore() -> None:
        sys.stdout = saved_stdout
        os.dup2(out_fd, 1)
        os.close(out_fd)

    return out_fd, restore


def _fd_writer(fd: int):
    def write(data: bytes) -> None:
        written = os.write(fd, data)
        # A pipe takes a message whole unless it is bigger than the pipe's free space, so
        # the loop (over a memoryview, to slice without copying) is only for big ones.
        if written < len(data):
            view = memoryview(data)[written:]
            while view:
                view = view[os.write(fd, view):]

    return write


def _stream_writer(stream: BinaryIO):
    def write(data: bytes) -> None:
        stream.write(data)
        stream.flush()

    return write


def _fd_reader(fd: int):
    return lambda: os.read(fd, READ_SIZE)


def _stream_reader(stream: BinaryIO):
    read1 = getattr(stream, "read1", None)
    if read1 is not None:
        return lambda: read1(READ_SIZE)
    return lambda: stream.read(READ_SIZE)
