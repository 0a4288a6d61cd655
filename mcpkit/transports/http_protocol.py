"""uvicorn's HTTP protocols with deadlines for a slow client, reading and writing.

uvicorn times out an idle keep-alive connection, but not one that sends its request line
and headers a byte at a time (slowloris), nor one that stops reading its response: either
would hold a socket, a file descriptor and a task for as long as the client likes. The ASGI
app sees neither (it gets a request only once its head is complete, and a write to a full
socket just waits), so the deadlines live here, in the protocol:

- the request head must be complete within ``HEAD_TIMEOUT_S`` of its first byte (or of the
  connection's start);
- once the socket's send buffer is full (asyncio pauses writing), the client has
  ``WRITE_TIMEOUT_S`` to read some of it; otherwise the connection is aborted, which the
  app sees as the client leaving (a modern request is then cancelled).

The body has its own deadline in the app (:attr:`McpHttpApp.body_timeout_s`).

The protocols also batch writes under load (:class:`_BatchedWrites`): while other requests
are in progress on the server, a response's writes wait for the end of the event loop's
current round, and go out as one write per connection then. The requests read together are
answered together, so the client is woken once for several answers instead of once per head
and once per body: with 16 connections this cut the server's CPU per request by 10-20%.
A request alone is written at once, as before. (An open stream, a listen or a session's
GET, is a request in progress too: while one is open, every answer waits for the end of its
round, a few microseconds.)

The deadlines are one mixin over both of uvicorn's protocols: :class:`HeadDeadlineProtocol`
(h11, pure Python) and :class:`FastHeadDeadlineProtocol` (httptools, a C parser about 100 us
cheaper per request, used when it is installed). uvicorn imports them by name
(``http="mcpkit.transports.http_protocol:..."``), so worker processes can load them too.
"""

from __future__ import annotations

import asyncio
import logging
import os
import weakref
from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol

log = logging.getLogger("mcpkit.http")

#: Seconds from a request's first byte (or the connection's start) to its last header.
HEAD_TIMEOUT_S = float(os.environ.get("MCPKIT_HTTP_HEAD_TIMEOUT", "10"))
#: Seconds a paused write (a full send buffer) may wait for the client to read.
WRITE_TIMEOUT_S = float(os.environ.get("MCPKIT_HTTP_WRITE_TIMEOUT", "30"))
#: Bytes a connection may hold for the end of the loop's round; more are written at once,
#: so a large answer still meets the socket's flow control (a paused write) promptly.
BATCH_LIMIT = 64 * 1024


class _RoundFlush:
    """The connections of one server holding writes for the end of this loop round."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.held: list[_BatchedWrites] = []

    def hold(self, writes: _BatchedWrites) -> None:
        if not self.held:
            self.loop.call_soon(self.flush)  # after the callbacks already due this round
        self.held.append(writes)

    def flush(self) -> None:
        held, self.held = self.held, []
        for writes in held:
            try:
                writes.flush()
            except Exception:  # one broken transport must not keep the others' bytes
                log.exception("failed to write a held response")


# One per uvicorn server (its ServerState), which runs on one loop.
_round_flushes: weakref.WeakKeyDictionary[Any, _RoundFlush] = weakref.WeakKeyDictionary()


class _BatchedWrites:
    """A connection's transport, as uvicorn's protocol sees it: ``write`` holds the bytes
    for the end of the loop round while other requests are in progress on the server
    (``tasks``, uvicorn's set of running requests, this one included), and writes them at
    once otherwise. Everything else is the transport's own."""

    __slots__ = ("_transport", "_tasks", "_round", "_held", "_size")

    def __init__(self, transport: asyncio.Transport, tasks: set[Any],
                 round_flush: _RoundFlush) -> None:
        self._transport = transport
        self._tasks = tasks
        self._round = round_flush
        self._held: list[bytes] | None = None
        self._size = 0

    def write(self, data: bytes) -> None:
        held = self._held
        if held is not None:  # bytes already wait: these go after them, in order
            if len(data) >= BATCH_LIMIT:
                self.flush()
                self._transport.write(data)  # (not copied into a join)
                return
            held.append(data)
            self._size += len(data)
            if self._size >= BATCH_LIMIT:
                self.flush()
        elif len(self._tasks) > 1 and len(data) < BATCH_LIMIT:
            self._held = [data]
            self._size = len(data)
            self._round.hold(self)
        else:
            self._transport.write(data)

    def flush(self) -> None:
        held, self._held = self._held, None
        if held and not self._transport.is_closing():
            self._transport.write(b"".join(held) if len(held) > 1 else held[0])

    def close(self) -> None:
        self.flush()  # close() still sends what is buffered; so must we
        self._transport.close()

    def abort(self) -> None:
        self._held = None
        self._transport.abort()

    def writelines(self, chunks: Any) -> None:
        self.write(b"".join(chunks))

    def write_eof(self) -> None:
        self.flush()
        self._transport.write_eof()

    def get_write_buffer_size(self) -> int:
        return self._transport.get_write_buffer_size() + (self._size if self._held else 0)

    def is_closing(self) -> bool:
        return self._transport.is_closing()

    def __getattr__(self, name: str) -> Any:  # get_extra_info, pause_reading, ...
        return getattr(self._transport, name)


class Deadlines:
    """Close a connection whose request head is not complete within ``HEAD_TIMEOUT_S``, or
    whose client reads nothing of a full send buffer for ``WRITE_TIMEOUT_S``; batch its
    writes under load (:class:`_BatchedWrites`). Mixed into a uvicorn protocol, which has
    ``loop``, ``transport``, ``client``, ``cycle``, ``server_state`` and ``tasks``."""

    loop: asyncio.AbstractEventLoop
    transport: asyncio.Transport
    client: Any
    cycle: Any
    server_state: Any
    tasks: set[Any]

    _head_timer: asyncio.TimerHandle | None = None
    _write_timer: asyncio.TimerHandle | None = None
    # When the request head being read began; None while the app has the request, or
    # between requests. One timer per connection checks it (re-armed for the time left),
    # rather than a timer per request: arming and cancelling one cost about 3 us a request.
    _head_since: float | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        state = self.server_state
        round_flush = _round_flushes.get(state)
        if round_flush is None or round_flush.loop is not self.loop:  # (a server run again)
            round_flush = _round_flushes[state] = _RoundFlush(self.loop)
        super().connection_made(_BatchedWrites(transport, self.tasks, round_flush))
        self._head_since = self.loop.time()
        self._head_timer = self.loop.call_at(self._head_since + HEAD_TIMEOUT_S,
                                             self._check_head)

    def data_received(self, data: bytes) -> None:
        if self._head_since is None and (self.cycle is None or self.cycle.response_complete):
            self._head_since = self.loop.time()  # the first bytes of the next request
        super().data_received(data)
        if self.cycle is not None and not self.cycle.response_complete:
            self._head_since = None  # a request's head is complete: the app has it now

    def connection_lost(self, exc: Exception | None) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None
        if self._write_timer is not None:
            self._write_timer.cancel()
        super().connection_lost(exc)

    def pause_writing(self) -> None:
        super().pause_writing()
        if self._write_timer is None:
            self._write_timer = self.loop.call_later(WRITE_TIMEOUT_S, self._write_timed_out)

    def resume_writing(self) -> None:
        super().resume_writing()
        if self._write_timer is not None:
            self._write_timer.cancel()
            self._write_timer = None

    def _write_timed_out(self) -> None:
        self._write_timer = None
        log.info("aborting a connection from %s: it read nothing for %g s", self.client,
                 WRITE_TIMEOUT_S)
        # abort, not close: close would wait, forever, to flush what the client won't read.
        self.transport.abort()

    def _check_head(self) -> None:
        since, now = self._head_since, self.loop.time()
        if since is None or now - since < HEAD_TIMEOUT_S:
            self._head_timer = self.loop.call_at(
                (now if since is None else since) + HEAD_TIMEOUT_S, self._check_head)
            return
        self._head_timer = None
        if not self.transport.is_closing():
            log.info("closing a connection from %s: no complete request head in %g s",
                     self.client, HEAD_TIMEOUT_S)
            self.transport.close()


class HeadDeadlineProtocol(Deadlines, H11Protocol):
    """uvicorn's h11 protocol with the deadlines."""


def _fast_protocol() -> type | None:
    try:
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
    except ImportError:  # httptools is not installed
        return None
    return type("FastHeadDeadlineProtocol", (Deadlines, HttpToolsProtocol),
                {"__doc__": "uvicorn's httptools protocol with the deadlines.",
                 "__module__": __name__})


FastHeadDeadlineProtocol = _fast_protocol()
