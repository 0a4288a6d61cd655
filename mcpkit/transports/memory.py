"""A server in this process, reached as if it were a child process: for tests and notebooks.

``Client(server=server)`` (and ``AsyncClient``, and a ``Host`` entry holding a server) talks
to a :class:`~mcpkit.server.Server` object with no process and no port. Nothing of the
protocol is skipped: the client's session encodes each message as it would for a pipe, and
the server side is :func:`~mcpkit.transports.stdio.serve_stdio` itself, on a thread of its
own, reading and writing two in-memory byte channels instead of stdin and stdout. So a test
that passes here exercises the same session, framing and connection code as stdio, in both
eras; only the kernel's pipe is replaced.

What a process would give and a thread cannot: a pid, stderr (a tool's ``print`` goes to
this process's stdout) and signals. ``shutdown`` closes the server's input, as a client
closes a child's stdin; a tool that never returns keeps its thread, which is reported, not
killed.
"""

from __future__ import annotations

import asyncio
import queue
import threading

from ..framing import DEFAULT_MAX_MESSAGE_SIZE
from ..logs import LazyLogger
from .stdio import Connectable, serve_stdio

log = LazyLogger("mcpkit.memory")  # see mcpkit.logs


class Channel:
    """One direction of an in-memory pipe: whole writes from one thread, read by another.
    ``close`` is end of stream; reads after it give ``b""``."""

    def __init__(self) -> None:
        self._chunks: queue.SimpleQueue[bytes] = queue.SimpleQueue()
        self._ended = False  # the reader saw end of stream
        self.closed = False

    def write(self, data: bytes) -> None:
        if self.closed:
            raise BrokenPipeError("the in-memory pipe is closed")
        if data:
            self._chunks.put(bytes(data))

    def flush(self) -> None:
        pass

    def read1(self, size: int = -1) -> bytes:
        if self._ended:
            return b""
        data = self._chunks.get()
        if not data:
            self._ended = True
        return data

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self._chunks.put(b"")


class _Served:
    """The server's side: ``serve_stdio`` on a thread, between two channels."""

    def __init__(self, server: Connectable, name: str, framing: str,
                 max_message_size: int) -> None:
        self.to_server = Channel()
        self.to_client = Channel()
        self.returncode: int | None = None
        self.done = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True,
                                        args=(server, framing, max_message_size),
                                        name=f"mcpkit-memory-{name}")

    def start(self) -> None:
        self._thread.start()

    def _serve(self, server: Connectable, framing: str, max_message_size: int) -> None:
        try:
            serve_stdio(server, stdin=self.to_server, stdout=self.to_client,  # type: ignore[arg-type]
                        framing=framing, max_message_size=max_message_size)
            self.returncode = 0
        except Exception:  # a process that crashed: the client sees its output end
            log.exception("the in-memory server failed")
            self.returncode = 1
        finally:
            self.to_client.close()
            self.done.set()

    def stop(self, timeout: float) -> bool:
        """Close the server's input and wait for it to finish; False if it is still busy."""
        self.to_server.close()
        self._thread.join(timeout)
        if self._thread.is_alive():
            log.warning("the in-memory server is still busy %.1f s after its input closed "
                        "(a tool that does not return?)", timeout)
            return False
        return True


class InMemoryProcess:
    """What :class:`~mcpkit.client.Client` needs of a server process, for a server object
    (:class:`~mcpkit.transports.process.ServerProcess`'s methods, same meanings)."""

    pid = None
    stdin_gone = None

    def __init__(self, server: Connectable, name: str, framing: str = "ndjson",
                 max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE) -> None:
        self._served = _Served(server, name, framing, max_message_size)

    @property
    def returncode(self) -> int | None:
        return self._served.returncode

    def start(self) -> InMemoryProcess:
        self._served.start()
        return self

    def write(self, data: bytes, timeout: float | None = None) -> float:
        self._served.to_server.write(data)  # never blocks: the channel has no bound
        return 0.0

    def read(self) -> bytes:
        return self._served.to_client.read1()

    def stderr_tail(self, lines: int | None = None) -> list[str]:
        return []

    def wait_stderr(self, timeout: float) -> bool:
        return True

    def wait(self, timeout: float) -> int | None:
        self._served.done.wait(timeout)
        return self.returncode

    def close_stdin(self, timeout: float = -1) -> bool:
        self._served.to_server.close()
        return True

    def shutdown(self, grace: float = 2.0, term_timeout: float = 2.0,
                 kill_timeout: float = 2.0) -> int | None:
        self._served.stop(grace + term_timeout + kill_timeout)
        return self.returncode

    def terminate(self) -> None:
        self.close_stdin()

    kill = terminate

    def close(self) -> None:
        self.close_stdin()


class _AsyncStdin:
    def __init__(self, channel: Channel) -> None:
        self._channel = channel

    def write(self, data: bytes) -> None:
        self._channel.write(data)

    async def drain(self) -> None:
        pass

    def close(self) -> None:
        self._channel.close()

    def is_closing(self) -> bool:
        return self._channel.closed


class AsyncInMemoryProcess:
    """What :class:`~mcpkit.aclient.AsyncClient` needs of an asyncio subprocess, for a
    server object: ``stdin``, ``stdout`` and ``stderr`` streams, ``wait()``, ``returncode``.
    A pump thread moves the server's output into the loop's stream reader."""

    pid = None

    def __init__(self, server: Connectable, name: str, framing: str = "ndjson",
                 max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE) -> None:
        self._served = _Served(server, name, framing, max_message_size)
        self.stdin = _AsyncStdin(self._served.to_server)
        self.stdout = asyncio.StreamReader()
        self.stderr = asyncio.StreamReader()
        self.stderr.feed_eof()  # a tool's print goes to this process's stdout
        self._exited = asyncio.Event()
        self._loop = asyncio.get_running_loop()
        self._pump = threading.Thread(target=self._move_output, daemon=True,
                                      name=f"mcpkit-memory-pump-{name}")

    @property
    def returncode(self) -> int | None:
        return self._served.returncode

    def start(self) -> AsyncInMemoryProcess:
        self._served.start()
        self._pump.start()
        return self

    def _move_output(self) -> None:
        call = self._loop.call_soon_threadsafe
        try:
            while data := self._served.to_client.read1():
                call(self.stdout.feed_data, data)
            self._served.done.wait()
            call(self.stdout.feed_eof)
            call(self._exited.set)
        except RuntimeError:  # the loop was closed first: nobody is reading any more
            pass

    async def wait(self) -> int | None:
        await self._exited.wait()
        return self.returncode
