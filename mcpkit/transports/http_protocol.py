"""uvicorn's h11 HTTP protocol with a deadline for each request's head.

uvicorn times out an idle keep-alive connection, but not one that is sending a request line
and headers a byte at a time (slowloris): such a connection would hold a socket, and a file
descriptor, for as long as the client likes. The ASGI app cannot see a request before its
head is complete, so the deadline has to live here, in the protocol. The body has its own
deadline in the app (:attr:`McpHttpApp.body_timeout_s`).

Imported by uvicorn by name (``http="mcpkit.transports.http_protocol:HeadDeadlineProtocol"``),
so worker processes can load it too.
"""

from __future__ import annotations

import asyncio
import logging
import os

from uvicorn.protocols.http.h11_impl import H11Protocol

log = logging.getLogger("mcpkit.http")

#: Seconds from a request's first byte (or the connection's start) to its last header.
HEAD_TIMEOUT_S = float(os.environ.get("MCPKIT_HTTP_HEAD_TIMEOUT", "10"))


class HeadDeadlineProtocol(H11Protocol):
    """Close a connection whose request head is not complete within ``HEAD_TIMEOUT_S``."""

    _head_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def data_received(self, data: bytes) -> None:
        between_requests = self.cycle is None or self.cycle.response_complete
        if self._head_timer is None and between_requests:
            self._arm()  # the first bytes of the next request on a kept-alive connection
        super().data_received(data)
        if self.cycle is not None and not self.cycle.response_complete:
            self._disarm()  # a new request's head is complete: the app has it now

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _arm(self) -> None:
        self._head_timer = self.loop.call_later(HEAD_TIMEOUT_S, self._head_timed_out)

    def _disarm(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_timed_out(self) -> None:
        self._head_timer = None
        if not self.transport.is_closing():
            log.info("closing a connection from %s: no complete request head in %g s",
                     self.client, HEAD_TIMEOUT_S)
            self.transport.close()
