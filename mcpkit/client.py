"""An MCP client session: one connection to one server, with a blocking API.

    with Client("python", ["-m", "mcpkit", "serve", "mcpkit.examples.notes:server"]) as notes:
        notes.list_tools()
        result = notes.call_tool("notes_search", {"query": "mcp"})

    with Client(url="http://127.0.0.1:8000/mcp") as notes:    # streamable HTTP
        notes.list_tools()

The API blocks the calling thread and uses no event loop of the caller's, so it works the
same in a script and in a Jupyter kernel (which already runs one). Over HTTP the messages
travel through :mod:`mcpkit.transports.http_client`; everything below is the same.

Theory of operation
-------------------
Threads. Next to the caller's, a session runs:

- the **reader**, which owns the server's stdout. It decodes each message and, for a
  response, hands it to the waiting request right there: it pops the request from
  ``_pending`` and releases a lock the caller is blocked on. No queue, no thread hop.
  Everything else (notifications; in the legacy era, the server's own requests) is put on
  a queue, so the reader is back to reading at once;
- the **dispatcher**, which runs user callbacks from that queue in order. A slow callback
  delays later callbacks, never a response. A legacy server request (sampling,
  elicitation, roots) runs its callback on a short-lived thread of its own instead,
  because it may wait for a human;
- the stderr **drain**, owned by :class:`~mcpkit.transports.process.ServerProcess`.

Over HTTP there is no reader and no drain: the transport's I/O thread hands each message
to :meth:`Client._receive`, which does the reader's job (and a failed exchange to
:meth:`Client._on_http_failure`). Cancelling is closing the request's stream (2026-07-28),
or ``notifications/cancelled`` (legacy); the end of the session is the server becoming
unreachable or ending the legacy session, rather than end of stream.

State:

- ``_pending`` maps request id -> :class:`PendingRequest`. An entry is added before the
  request is written and removed by whoever settles it: the reader (a response), the
  caller (timeout or cancel) or the reader at end of stream (all of them, failed with
  :class:`ConnectionClosed`). ``dict.pop`` is atomic, so exactly one of them wins.
- The era is decided once, at :meth:`Client.connect` (``server/discover`` probe, falling
  back to ``initialize`` as the 2026-07-28 stdio and HTTP rules say) and kept for the
  life of the process (or HTTP session). In the modern era every request carries
  ``params._meta``; ``_base_meta`` is that object, built once (and ``_meta_json`` its
  encoding, spliced into each request).
- List caches (tools, prompts, resources) stay valid while the server can tell us about
  changes (a legacy ``listChanged`` capability, or a modern ``subscriptions/listen``
  stream it acknowledged); otherwise for the ``ttlMs`` the server gave. The reader marks
  a list stale the moment a ``list_changed`` arrives; the dispatcher then re-fetches it.
  Re-fetches are coalesced (``_refresh_queued``): per kind, at most one in flight and one
  pending, however many notifications arrive.

Hostile servers
---------------
Nothing the server does may make a wait outlast its timeout, or settle a request with
something that is not its answer:

- Every answer is checked with :func:`mcpkit.jsonrpc.classify` before it settles its
  request. One that is not JSON-RPC 2.0 fails the request it names with
  :class:`ProtocolError`; other garbage is logged and skipped.
- A message over ``max_message_size`` is dropped by the decoder, which keeps its first
  bytes: the ``id`` found there (or, failing that, the only request waiting) fails at once
  with :class:`ResponseTooLarge`, rather than with a timeout later.
- Every write has a deadline (see :mod:`mcpkit.transports.process`): a request's own
  timeout or ``write_timeout``, and a short one for cancellations, which are sent after a
  timeout has already expired. A write that cannot start raises :class:`WriteTimeout` and
  the session goes on; one cut short leaves half a message in the pipe, so the session is
  closed (:class:`ConnectionClosed` saying why, ``on_closed`` called once).
"""

from __future__ import annotations

import concurrent.futures
import itertools
import json
import logging
import os
import queue
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from . import jsonrpc, versions
from .framing import (
    DEFAULT_MAX_MESSAGE_SIZE,
    FramingError,
    MessageTooLarge,
    decoder_for,
    encoder_for,
)
from .jsonrpc import JsonRpcError
from .transports.process import ServerProcess, StdinTimeout, describe_exit
from .versions import (
    META_CLIENT_CAPABILITIES,
    META_CLIENT_INFO,
    META_LOG_LEVEL,
    META_PROTOCOL_VERSION,
    META_SERVER_INFO,
    META_SUBSCRIPTION_ID,
)

if TYPE_CHECKING:
    from .transports.http_client import HttpFailure, HttpTransport

__all__ = [
    "Client",
    "ConnectionClosed",
    "HttpError",
    "PendingRequest",
    "ProtocolError",
    "RequestCancelled",
    "RequestTimeout",
    "ResponseTooLarge",
    "ServerError",
    "SessionError",
    "Subscription",
    "WriteTimeout",
    "connect",
    "is_error",
    "result_text",
]

log = logging.getLogger("mcpkit.client")

DEFAULT_TIMEOUT = 60.0
# The spec asks for "a reasonable timeout" on the probe. Slow-starting servers (a Python
# SDK server takes most of a second to import) must not be mistaken for silent legacy ones.
DEFAULT_PROBE_TIMEOUT = 10.0
DEFAULT_MAX_ROUNDS = 10
# How long a message may wait to be written to a stdio server that does not read its
# stdin (a request's own, shorter, timeout bounds its write too).
DEFAULT_WRITE_TIMEOUT = 10.0
# A cancellation is sent after a timeout has already expired: it gets a short budget of
# its own, so that a server that stopped reading cannot stretch the caller's wait.
_CANCEL_WRITE_TIMEOUT = 1.0
MAX_PAGES = 1000
_JUNK_WARNINGS = 5  # warn about this many bad stdout lines, then only log at debug

Callback = Callable[[dict[str, Any]], dict[str, Any]]
_USE_DEFAULT: Any = object()
# The same encoder as mcpkit.framing's: compact, UTF-8, no NaN.
_dumps = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode

# list kind -> (method, result key, the capability that announces changes)
_LISTS = {
    "tools": ("tools/list", "tools", "tools"),
    "prompts": ("prompts/list", "prompts", "prompts"),
    "resources": ("resources/list", "resources", "resources"),
    "resourceTemplates": ("resources/templates/list", "resourceTemplates", "resources"),
}
_LOG_LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "notice": logging.INFO,
               "warning": logging.WARNING}


# -- errors ------------------------------------------------------------------------------


class ServerError(JsonRpcError):
    """The server answered a request with a JSON-RPC error (``code``, ``message``, ``data``)."""

    def __init__(self, code: int, message: str, data: Any = None, method: str | None = None):
        super().__init__(code, message, data)
        self.method = method

    def __str__(self) -> str:
        where = f"{self.method}: " if self.method else ""
        return f"{where}{self.message} (JSON-RPC error {self.code})"


class SessionError(Exception):
    """A request could not complete for a reason other than the server's answer."""


class ConnectionClosed(SessionError, ConnectionError):
    """The server's process ended, or closed its stdout; over HTTP, the server cannot be
    reached or ended the session. The session is dead."""

    def __init__(
        self,
        server: str,
        returncode: int | None,
        stderr_tail: Sequence[str] = (),
        reason: str = "the server closed the connection",
        method: str | None = None,
        url: str | None = None,
    ) -> None:
        self.server = server
        self.returncode = returncode
        self.stderr_tail = list(stderr_tail)
        self.reason = reason
        self.method = method
        self.url = url
        super().__init__(self._describe())

    def _describe(self) -> str:
        if self.url is not None:
            text = f"server {self.server!r} ({self.url}): {self.reason}"
        else:
            text = f"server {self.server!r}: {self.reason} ({describe_exit(self.returncode)})"
        if self.method:
            text += f" while waiting for {self.method}"
        if self.stderr_tail:
            text += "; last stderr lines:\n    " + "\n    ".join(self.stderr_tail[-10:])
        return text

    def for_method(self, method: str) -> ConnectionClosed:
        return ConnectionClosed(self.server, self.returncode, self.stderr_tail, self.reason,
                                method, self.url)


class HttpError(SessionError):
    """An HTTP exchange gave no JSON-RPC answer: an error ``status`` with no JSON-RPC body
    (401 and 403 always land here), or a response stream that ended before its answer
    (``status`` None)."""

    def __init__(self, message: str, status: int | None = None, method: str | None = None,
                 url: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.method = method
        self.url = url


class RequestTimeout(SessionError, TimeoutError):
    """No response in time; ``notifications/cancelled`` was sent to the server."""

    def __init__(self, method: str, timeout: float, request_id: jsonrpc.RequestId) -> None:
        super().__init__(f"{method} (request {request_id}) got no response in {timeout:g} s; "
                         "cancelled it")
        self.method = method
        self.timeout = timeout
        self.request_id = request_id


class RequestCancelled(SessionError):
    """The request was cancelled on this side (``PendingRequest.cancel``, Ctrl-C)."""


class ProtocolError(SessionError):
    """The server broke the protocol in a way this client cannot work around."""


class WriteTimeout(SessionError, TimeoutError):
    """A message could not be written in time: the server stopped reading its stdin.

    ``what`` is the method (or "the response to ..."), ``request_id`` the request's id if
    it was one. If part of the message had been written (``torn``), the stream is unusable
    and the session is closed (:class:`ConnectionClosed` for everything else)."""

    def __init__(self, what: str, request_id: jsonrpc.RequestId | None,
                 cause: StdinTimeout) -> None:
        name = f"{what} (request {request_id})" if request_id is not None else what
        if cause.queued:
            detail = (f"it waited {cause.timeout:g} s behind another message the server "
                      "is not reading")
        else:
            detail = f"{cause.written} of {cause.size} bytes written in {cause.timeout:g} s"
        text = (f"{name} could not be sent: server {cause.server!r} stopped reading its "
                f"stdin ({detail})")
        if cause.torn:
            text += "; the message was cut short, so the session is closed"
        else:
            text += "; nothing was sent (raise write_timeout= if the server is only slow)"
        super().__init__(text)
        self.what = what
        self.request_id = request_id
        self.timeout = cause.timeout
        self.written = cause.written
        self.size = cause.size
        self.torn = cause.torn


class ResponseTooLarge(ProtocolError):
    """The server's answer to a request is larger than ``max_message_size``."""

    def __init__(self, method: str, request_id: jsonrpc.RequestId, size: int, limit: int,
                 by_elimination: bool = False) -> None:
        text = (f"{method} (request {request_id}): the server's answer is too large "
                f"(at least {size} bytes; the limit is {limit}): raise it with "
                "Client(max_message_size=...)")
        if by_elimination:
            text += " [the answer's id could not be read; this was the only request waiting]"
        super().__init__(text)
        self.method = method
        self.request_id = request_id
        self.size = size
        self.limit = limit


def is_error(result: Mapping[str, Any]) -> bool:
    """Whether a ``tools/call`` result reports a tool failure (``isError: true``).

    A tool that fails still *answers*: the error is in the result, for the model to read,
    and is not raised as an exception.
    """
    return result.get("isError") is True


def result_text(result: Mapping[str, Any]) -> str:
    """The text blocks of a tool result (or prompt message list), joined by newlines."""
    blocks = result.get("content")
    if blocks is None and "messages" in result:
        blocks = [m.get("content") for m in result["messages"]]
    parts = []
    for block in blocks or ():
        if isinstance(block, dict) and block.get("type") == "text":
            parts.append(block.get("text", ""))
    return "\n".join(parts)


# -- one request in flight ---------------------------------------------------------------


class PendingRequest:
    """A request sent and not yet settled. :meth:`result` waits for it."""

    __slots__ = ("id", "method", "on_progress", "notify_cancel", "_client", "_lock",
                 "_response", "_error", "_settled", "_send_wait")

    def __init__(self, client: Client, request_id: int, method: str,
                 on_progress: Callable[[dict[str, Any]], None] | None,
                 notify_cancel: bool = True) -> None:
        self.id = request_id
        self.method = method
        self.on_progress = on_progress
        self.notify_cancel = notify_cancel
        self._client = client
        # A lock used as a one-shot signal: created held, released when settled. It is
        # the cheapest thing CPython can block on, and a timed acquire can be interrupted
        # by Ctrl-C.
        self._lock = threading.Lock()
        self._lock.acquire()
        self._response: dict[str, Any] | None = None
        self._error: BaseException | None = None
        self._settled = False
        self._send_wait = 0.0  # seconds the write waited for the server to read

    def _resolve(self, response: dict[str, Any] | None = None,
                 error: BaseException | None = None) -> None:
        """Called once, by whoever popped this request from ``_pending``."""
        self._response = response
        self._error = error
        self._lock.release()

    def done(self) -> bool:
        return self._settled or not self._lock.locked()

    def result(self, timeout: float | None = _USE_DEFAULT) -> dict[str, Any]:
        """Wait for the result (the session's default timeout unless given; None waits
        for ever). Raises :class:`ServerError`, :class:`RequestTimeout`,
        :class:`ConnectionClosed` or :class:`RequestCancelled`."""
        if timeout is _USE_DEFAULT:
            timeout = self._client.timeout
        return self._outcome(timeout, timeout)

    def _outcome(self, wait: float | None, timeout: float | None) -> dict[str, Any]:
        """Wait ``wait`` seconds at most (what is left of ``timeout``, the budget an error
        names), then return the result or raise."""
        if not self._settled:
            self._wait(wait, timeout)
            self._settled = True
        if self._error is not None:
            raise self._error
        response = self._response
        assert response is not None
        result = response.get("result")
        if type(result) is dict:
            return result
        error = response.get("error")
        if isinstance(error, dict):
            raise ServerError(error.get("code", jsonrpc.INTERNAL_ERROR),
                              str(error.get("message", "")), error.get("data"), self.method)
        raise ProtocolError(f"malformed response to {self.method}: {str(response)[:200]}")

    def _wait(self, wait: float | None, timeout: float | None) -> None:
        try:
            got = self._lock.acquire(True, -1 if wait is None else max(wait, 0))
        except BaseException:  # Ctrl-C / kernel interrupt while waiting
            if self._client._cancel(self, "interrupted"):
                self._error = RequestCancelled(f"{self.method} was interrupted")
            raise
        if got:
            return
        if self._client._cancel(self, f"timed out after {timeout:g} s"):
            self._error = RequestTimeout(self.method, timeout or 0, self.id)
        else:
            # The response won the race with the timeout: it is being handed over now.
            self._lock.acquire()

    def cancel(self, reason: str = "cancelled by the client") -> bool:
        """Cancel from any thread: the server is told, the waiter gets RequestCancelled.
        False if the request had already settled."""
        if not self._client._cancel(self, reason):
            return False
        self._resolve(error=RequestCancelled(f"{self.method}: {reason}"))
        return True

    def __repr__(self) -> str:
        return f"<PendingRequest {self.id} {self.method} {'done' if self.done() else 'waiting'}>"


# -- subscriptions -----------------------------------------------------------------------


class Subscription:
    """Notifications about resources (and, modern, list changes) until :meth:`close`.

    Modern era: one ``subscriptions/listen`` request; ``granted`` is the part of the
    request the server acknowledged. Legacy era: ``resources/subscribe`` per URI.
    ``callback(uri, params)`` runs on the dispatcher thread for each update.
    """

    def __init__(self, client: Client, request_id: int | None, uris: list[str],
                 notifications: dict[str, Any],
                 callback: Callable[[str, dict[str, Any]], None] | None) -> None:
        self.client = client
        self.id = request_id
        self.uris = uris
        self.notifications = notifications
        self.callback = callback
        self.granted: dict[str, Any] = {}
        self.active = True
        self.error: BaseException | None = None
        self._acknowledged = threading.Event()

    def _acknowledge(self, granted: dict[str, Any]) -> None:
        self.granted = granted
        self._acknowledged.set()

    def _end(self, error: BaseException | None = None) -> None:
        self.active = False
        self.error = error
        self._acknowledged.set()
        if self is self.client._change_listen:
            # No more news about list changes: cached lists now last their ttlMs only.
            self.client._change_listen = None
            self.client._change_channel.clear()

    def close(self) -> None:
        if self.active:
            self.client._end_subscription(self)

    def __enter__(self) -> Subscription:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<Subscription {self.id} {self.uris} {'active' if self.active else 'ended'}>"


# -- the session -------------------------------------------------------------------------


class Client:
    """A session with one MCP server: a child process over stdio, or a URL over HTTP.

    ``command`` and ``args`` start the server (``command`` may also be a list holding
    both). ``url`` instead reaches a streamable HTTP endpoint (a ``command`` that is an
    ``http(s)://`` URL means the same); ``headers`` go with every request, and ``token``
    (or the environment variable named by ``token_env``) is sent as
    ``Authorization: Bearer``. ``version`` forces a revision ("2025-06-18", or
    "legacy"/"modern" for the latest of an era); by default the era is probed.
    ``sampling``, ``elicitation`` and ``roots`` answer the server's questions (they also
    decide the capabilities the client declares): ``sampling(params) ->
    CreateMessageResult``, ``elicitation(params) -> ElicitResult``, ``roots`` a list of
    roots or a function returning one.

    Every wait is bounded. ``timeout`` is a request's default (None: wait for ever for
    the answer); ``write_timeout`` bounds each write to a stdio server that stopped
    reading its stdin (a request's shorter timeout bounds its write too), raising
    :class:`WriteTimeout`. A message larger than ``max_message_size`` is refused; if it
    answers a request, that request fails with :class:`ResponseTooLarge`.

    Callbacks run on the dispatcher thread: ``on_notification(method, params)`` for every
    notification, ``on_log(params)`` for log messages (default: the ``mcpkit.client``
    logger), ``on_list_changed(kind)`` after a changed list was re-fetched (once per
    re-fetch: a burst of ``list_changed`` notifications is coalesced).
    ``on_closed(client, error)`` runs once when the server goes away unasked, or when a
    write cut short ruined the stream (on the reader thread for stdio, where it must not
    block; on a thread of its own for HTTP and for a ruined stream).
    """

    def __init__(
        self,
        command: str | Sequence[str] | None = None,
        args: Sequence[str] = (),
        *,
        url: str | None = None,
        headers: Mapping[str, str] | None = None,
        token: str | None = None,
        token_env: str | None = None,
        connect_timeout: float = 10.0,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        inherit_env: bool = True,
        name: str | None = None,
        framing: str = "ndjson",
        version: str | None = None,
        timeout: float | None = DEFAULT_TIMEOUT,
        probe_timeout: float = DEFAULT_PROBE_TIMEOUT,
        write_timeout: float = DEFAULT_WRITE_TIMEOUT,
        sampling: Callback | None = None,
        elicitation: Callback | None = None,
        roots: Sequence[dict[str, Any]] | Callable[[], Sequence[dict[str, Any]]] | None = None,
        log_level: str | None = None,
        listen: bool = True,
        max_rounds: int = DEFAULT_MAX_ROUNDS,
        client_info: dict[str, Any] | None = None,
        on_notification: Callable[[str, dict[str, Any]], None] | None = None,
        on_log: Callable[[dict[str, Any]], None] | None = None,
        on_list_changed: Callable[[str], None] | None = None,
        on_closed: Callable[[Client, ConnectionClosed], None] | None = None,
        on_stderr: Callable[[str], None] | None = None,
        stderr_lines: int = 200,
        shutdown_timeouts: tuple[float, float, float] = (2.0, 2.0, 2.0),
        max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
    ) -> None:
        if url is None and isinstance(command, str) and command.startswith(
                ("http://", "https://")):
            url, command = command, None
        if (command is None) == (url is None):
            raise ValueError("give either a command (a stdio server) or a url (HTTP)")
        if command is not None and not isinstance(command, str):
            command, *more = command
            args = [*more, *args]
        if token_env is not None and token is None:
            token = os.environ.get(token_env)
            if not token:
                raise ValueError(f"the environment variable {token_env} (the bearer token for "
                                 f"{url}) is not set")
        if version in ("legacy", "modern"):
            version = versions.LATEST_LEGACY_VERSION if version == "legacy" \
                else versions.LATEST_VERSION
        if version is not None and not versions.is_supported(version):
            raise ValueError(f"unsupported protocol version {version!r}; one of "
                             f"{', '.join(versions.SUPPORTED_VERSIONS)}")
        if log_level is not None and log_level not in versions.LOG_LEVELS:
            raise ValueError(f"unknown log level {log_level!r}")
        self.command = command
        self.args = list(args)
        self.url = url
        self.name = name or (_guess_name(command, self.args) if command is not None
                             else _name_from_url(url or ""))
        self.requested_version = version
        self.timeout = timeout
        self.probe_timeout = probe_timeout
        self.write_timeout = write_timeout
        self.sampling = sampling
        self.elicitation = elicitation
        self.roots = roots
        self.log_level = log_level
        self.listen = listen
        self.max_rounds = max_rounds
        self.client_info = client_info or _default_client_info()
        self.on_notification = on_notification
        self.on_log = on_log
        self.on_list_changed = on_list_changed
        self.on_closed = on_closed
        self.shutdown_timeouts = shutdown_timeouts

        # What the handshake learns.
        self.era: versions.Era | None = None
        self.protocol_version: str | None = None
        self.server_info: dict[str, Any] = {}
        self.server_capabilities: dict[str, Any] = {}
        self.instructions: str | None = None
        self.junk_lines = 0  # stdout lines that were not JSON-RPC

        # The wire: a child process, or (imported only then: httpx) an HTTP transport.
        self._process: ServerProcess | None = None
        self._http: HttpTransport | None = None
        if url is not None:
            from .transports.http_client import HttpTransport

            self._http = HttpTransport(url, on_message=self._receive,
                                       on_failure=self._on_http_failure, headers=headers,
                                       token=token, name=self.name,
                                       connect_timeout=connect_timeout,
                                       max_message_size=max_message_size)
        else:
            assert command is not None
            self._process = ServerProcess(command, self.args, env=env, cwd=cwd,
                                          inherit_env=inherit_env, name=self.name,
                                          stderr_lines=stderr_lines, on_stderr=on_stderr)
        self._encode = encoder_for(framing)
        self._decoder = decoder_for(framing, max_message_size)
        self._ids = itertools.count(1)
        self._pending: dict[int, PendingRequest] = {}
        self._base_meta: dict[str, Any] | None = None  # set in the modern era only
        self._meta_json: str | None = None  # _base_meta, encoded
        self._framing = framing
        self._queue: queue.SimpleQueue[tuple[Callable[[Any], Any], Any] | None] = \
            queue.SimpleQueue()
        self._reader: threading.Thread | None = None
        self._dispatcher: threading.Thread | None = None
        self._helpers: set[threading.Thread] = set()  # legacy server-request threads
        self._reader_done = threading.Event()
        self._dead: ConnectionClosed | None = None
        self._dead_lock = threading.Lock()
        self._started = False
        self._closing = False
        self._close_lock = threading.Lock()
        self._closed = False
        # Lists: kind -> (items, expires at (monotonic)); generation guards against a
        # list_changed arriving while a fetch is under way.
        self._cache: dict[str, tuple[list[dict[str, Any]], float]] = {}
        self._generation = dict.fromkeys(_LISTS, 0)
        self._ever_fetched: set[str] = set()  # kinds to re-fetch when they change
        self._latest: dict[str, list[dict[str, Any]]] = {}  # as last fetched, even if stale
        self._refresh_queued: set[str] = set()  # list_changed kinds waiting to be re-fetched
        self._change_channel: dict[str, bool] = {}
        self._listens: dict[int, Subscription] = {}
        self._subscriptions: list[Subscription] = []
        self._change_listen: Subscription | None = None

    # -- lifecycle ---------------------------------------------------------------------

    def connect(self) -> Client:
        """Start the server and agree on an era. On failure everything is cleaned up."""
        if self._started:
            raise RuntimeError("this client was already connected; make a new one")
        self._started = True
        try:
            if self._http is not None:
                self._http.start()
            else:
                assert self._process is not None
                self._process.start()
        except BaseException:
            self._closed = self._closing = True
            raise
        if self._process is not None:
            self._reader = threading.Thread(target=self._read_loop, daemon=True,
                                            name=f"mcpkit-reader-{self.name}")
            self._reader.start()
        self._dispatcher = threading.Thread(target=self._dispatch_loop, daemon=True,
                                            name=f"mcpkit-callbacks-{self.name}")
        self._dispatcher.start()
        try:
            self._handshake()
            if self.era == "modern" and self.listen:
                self._open_change_listen()
        except BaseException:
            self.close()
            raise
        return self

    def __enter__(self) -> Client:
        return self if self._started else self.connect()

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def alive(self) -> bool:
        return self._started and self._dead is None and not self._closing

    @property
    def closed_error(self) -> ConnectionClosed | None:
        """Why the session is dead (None while it is alive)."""
        return self._dead

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    @property
    def returncode(self) -> int | None:
        return self._process.returncode if self._process is not None else None

    def stderr_tail(self, lines: int | None = None) -> list[str]:
        """The last lines the server wrote to stderr (none over HTTP)."""
        return self._process.stderr_tail(lines) if self._process is not None else []

    def close(self) -> None:
        """End the session: stop the server (stdin EOF, SIGTERM, SIGKILL), reap it, stop
        the threads; over HTTP, close every stream and end a legacy session (DELETE).
        Requests still waiting fail with ConnectionClosed. Idempotent."""
        with self._close_lock:
            if self._closed:
                return
            self._closed = True
        self._closing = True
        if not self._started:
            return
        if self._http is not None:
            self._close_http()
            return
        assert self._process is not None
        if self._dead is None:
            for sub in list(self._listens.values()):  # end listen streams politely
                self._send_cancel(sub.id, "the client is closing")
        self._process.shutdown(*self.shutdown_timeouts)
        me = threading.current_thread()
        reader = self._reader
        if reader is not None and reader is not me:
            reader.join(2.0)
            if reader.is_alive():  # stdout held open by a leftover grandchild
                self._process.kill()
                reader.join(1.0)
        self._queue.put(None)
        if self._dispatcher is not None and self._dispatcher is not me:
            self._dispatcher.join(2.0)
        for helper in list(self._helpers):
            if helper is not me:
                helper.join(0.5)
        if reader is None or not reader.is_alive():
            self._process.close()

    def _close_http(self) -> None:
        assert self._http is not None
        self._http.close()  # ends listen streams too: over HTTP that is how they end
        self._fail_all(ConnectionClosed(self.name, None, (), "the session was closed",
                                        url=self.url))
        me = threading.current_thread()
        if self._dispatcher is not None and self._dispatcher is not me:
            self._dispatcher.join(2.0)
        for helper in list(self._helpers):
            if helper is not me:
                helper.join(0.5)

    # -- the era -----------------------------------------------------------------------

    def _handshake(self) -> None:
        forced = self.requested_version
        if forced is None:
            self._probe()
        elif versions.era_of(forced) == "modern":
            self._discover(forced)
        else:
            self._initialize(forced)

    def _probe(self) -> None:
        """Modern or legacy? The backward-compatibility rules of 2026-07-28:

        a DiscoverResult, or -32022 (unsupported version) means modern: retry -32022 with
        a version from ``error.data.supported`` and do not fall back (unless that list
        offers only legacy versions). Any other error, or silence until the probe
        timeout, means legacy: ``initialize``. Over HTTP, a 400, 404 or 405 without a
        JSON-RPC error in the body means legacy too (401 and 403 are raised: no era
        would get further without credentials).
        """
        version = versions.LATEST_VERSION
        for attempt in range(2):
            try:
                result = self._start("server/discover", {"_meta": self._meta_for(version)},
                                     stamp=False, notify_cancel=False
                                     ).result(self.probe_timeout)
            except RequestTimeout:
                # No cancellation: a legacy server should see nothing before initialize.
                log.info("%s: no answer to server/discover in %g s: legacy server",
                         self.name, self.probe_timeout)
                self._initialize(None, reprobe=attempt == 0)
                return
            except HttpError as exc:
                if exc.status not in (400, 404, 405):
                    raise
                log.info("%s: server/discover got HTTP %s: legacy server", self.name,
                         exc.status)
                self._initialize(None)
                return
            except ServerError as exc:
                if exc.code == jsonrpc.UNSUPPORTED_PROTOCOL_VERSION:
                    supported = _supported_versions(exc.data)
                    mutual = [v for v in versions.MODERN_VERSIONS[::-1] if v in supported]
                    # Retried once, even with the same version if the server lists it.
                    if mutual and attempt == 0:
                        version = mutual[0]
                        continue
                    if any(v in versions.LEGACY_VERSIONS for v in supported):
                        self._initialize(None)
                        return
                    raise ProtocolError(
                        f"server {self.name!r} supports only {supported or 'unknown versions'}; "
                        f"this client speaks {', '.join(versions.SUPPORTED_VERSIONS)}") from exc
                if exc.code in (jsonrpc.HEADER_MISMATCH,
                                jsonrpc.MISSING_REQUIRED_CLIENT_CAPABILITY):
                    log.warning("%s: modern server refused server/discover (%s); "
                                "continuing without its capabilities", self.name, exc)
                    self._adopt_modern(version, {})
                    return
                log.info("%s: server/discover answered %s: legacy server", self.name, exc.code)
                self._initialize(None)
                return
            supported = result.get("supportedVersions")
            if not isinstance(supported, list):
                log.info("%s: server/discover result is not a DiscoverResult: legacy",
                         self.name)
                self._initialize(None)
                return
            if version not in supported:
                mutual = [v for v in versions.MODERN_VERSIONS[::-1] if v in supported]
                if not mutual:
                    if any(v in versions.LEGACY_VERSIONS for v in supported):
                        self._initialize(None)
                        return
                    raise ProtocolError(f"server {self.name!r} supports only {supported}")
                version = mutual[0]
            self._adopt_modern(version, result)
            return

    def _discover(self, version: str) -> None:
        """Forced modern: ask for capabilities; no fallback, but a -32022 is retried once
        with a version the server says it supports."""
        for attempt in range(2):
            try:
                result = self._start("server/discover", {"_meta": self._meta_for(version)},
                                     stamp=False).result(self.probe_timeout)
            except ServerError as exc:
                supported = _supported_versions(exc.data)
                mutual = [v for v in versions.MODERN_VERSIONS[::-1] if v in supported]
                if exc.code != jsonrpc.UNSUPPORTED_PROTOCOL_VERSION or not mutual or attempt:
                    raise
                version = mutual[0]
                continue
            self._adopt_modern(version, result)
            return

    def _adopt_modern(self, version: str, discovered: dict[str, Any]) -> None:
        self.era = "modern"
        self.protocol_version = version
        self.server_capabilities = discovered.get("capabilities") or {}
        meta = discovered.get("_meta") or {}
        self.server_info = meta.get(META_SERVER_INFO) or discovered.get("serverInfo") or {}
        self.instructions = discovered.get("instructions")
        self._set_base_meta(version)

    def _initialize(self, version: str | None, reprobe: bool = False) -> None:
        requested = version or versions.LATEST_LEGACY_VERSION
        params = {"protocolVersion": requested, "capabilities": self._capabilities("legacy"),
                  "clientInfo": self.client_info}
        try:
            result = self._start("initialize", params, stamp=False,
                                 notify_cancel=False).result()
        except ServerError as exc:
            supported = _supported_versions(exc.data)
            mutual = [v for v in versions.MODERN_VERSIONS[::-1] if v in supported]
            if reprobe and exc.code == jsonrpc.UNSUPPORTED_PROTOCOL_VERSION and mutual:
                # The probe timed out here but reached a slow server, which is now modern.
                log.info("%s: initialize refused with -32022: the server is modern", self.name)
                self._discover(mutual[0])
                return
            raise
        negotiated = result.get("protocolVersion")
        if negotiated not in versions.LEGACY_VERSIONS:
            raise ProtocolError(f"server {self.name!r} answered initialize with version "
                                f"{negotiated!r}, which this client does not support")
        self.era = "legacy"
        self.protocol_version = negotiated
        self.server_capabilities = result.get("capabilities") or {}
        self.server_info = result.get("serverInfo") or {}
        self.instructions = result.get("instructions")
        for feature in ("tools", "prompts", "resources"):
            announced = (self.server_capabilities.get(feature) or {}).get("listChanged")
            self._change_channel[feature] = announced is True
        self.notify("notifications/initialized")
        if self._http is not None:
            self._http.open_event_stream()  # what the server sends outside any request
        if self.log_level is not None and "logging" in self.server_capabilities:
            self.request("logging/setLevel", {"level": self.log_level})

    def _set_base_meta(self, version: str) -> None:
        meta = self._meta_for(version)
        self._meta_json = _dumps(meta)
        self._base_meta = meta

    def _capabilities(self, era: str) -> dict[str, Any]:
        caps: dict[str, Any] = {}
        if self.roots is not None:
            caps["roots"] = {"listChanged": True} if era == "legacy" else {}
        if self.sampling is not None:
            caps["sampling"] = {}
        if self.elicitation is not None:
            caps["elicitation"] = {}  # {} = form mode, in every revision that has it
        return caps

    def _meta_for(self, version: str) -> dict[str, Any]:
        meta: dict[str, Any] = {
            META_PROTOCOL_VERSION: version,
            META_CLIENT_CAPABILITIES: self._capabilities("modern"),
            META_CLIENT_INFO: self.client_info,
        }
        if self.log_level is not None:
            meta[META_LOG_LEVEL] = self.log_level
        return meta

    # -- sending -----------------------------------------------------------------------

    def _start(
        self,
        method: str,
        params: dict[str, Any],
        on_progress: Callable[[dict[str, Any]], None] | None = None,
        *,
        stamp: bool = True,
        notify_cancel: bool = True,
        timeout: float | None = None,
    ) -> PendingRequest:
        """Send a request; ``timeout`` (None: ``write_timeout``) bounds the write."""
        request_id = next(self._ids)
        message: dict[str, Any] | None = None
        if self._http is None and stamp and self._meta_json is not None \
                and on_progress is None and "_meta" not in params:
            data = self._encode_modern(request_id, method, params)  # the common case
        else:
            if stamp:
                base = self._base_meta
                if base is not None:  # modern: version, capabilities, identity, every time
                    meta = base.copy()
                    extra = params.get("_meta")
                    if extra:
                        meta.update(extra)
                    if on_progress is not None:
                        meta["progressToken"] = request_id
                    params = {**params, "_meta": meta}
                elif on_progress is not None:
                    meta = {**(params.get("_meta") or {}), "progressToken": request_id}
                    params = {**params, "_meta": meta}
            message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
            data = b"" if self._http is not None else self._encode(message)
        pending = PendingRequest(self, request_id, method, on_progress, notify_cancel)
        self._pending[request_id] = pending
        if self._dead is not None and self._pending.pop(request_id, None) is not None:
            raise self._dead.for_method(method)
        try:
            if message is not None and self._http is not None:
                try:
                    self._http.send(message)  # the HTTP headers are read off the message
                except (OSError, RuntimeError):
                    raise self._closed_error(method) from None
            else:
                pending._send_wait = self._write(data, method, request_id,
                                                 self._write_budget(timeout))
        except BaseException:
            self._pending.pop(request_id, None)
            raise
        return pending

    def _send_request(self, message: dict[str, Any], timeout: float | None) -> None:
        """Send a request whose answer someone else tracks (a listen stream)."""
        if self._http is not None:
            self._http.send(message)
        else:
            self._write(self._encode(message), message["method"], message["id"],
                        self._write_budget(timeout))

    def _write_budget(self, timeout: float | None) -> float:
        """How long a write may take: ``write_timeout``, or less if the caller has less."""
        return self.write_timeout if timeout is None else min(timeout, self.write_timeout)

    def _write(self, data: bytes, what: str, request_id: jsonrpc.RequestId | None,
               timeout: float) -> float:
        """Write one message to the server's stdin within ``timeout`` seconds, or raise
        :class:`WriteTimeout` (or :class:`ConnectionClosed` if stdin is gone). Returns
        the seconds it waited."""
        assert self._process is not None
        try:
            return self._process.write(data, timeout)
        except StdinTimeout as exc:
            error = WriteTimeout(what, request_id, exc)
            if exc.torn:
                self._break(f"the server stopped reading its stdin, and a message ({what}) "
                            "was cut short: the stream is unusable")
            raise error from None
        except OSError:  # the child is gone: the reader will see end of stream and why
            raise self._closed_error(what) from None
        except BaseException:  # Ctrl-C in the middle of a long write
            if self._process.stdin_gone is not None:
                self._break(f"a message ({what}) was cut short when the write was "
                            "interrupted: the stream is unusable")
            raise

    def _break(self, reason: str) -> None:
        """The session can no longer send (stdio): fail it as if the server had gone, and
        tell ``on_closed`` (from a thread of its own: the writer must not wait on it)."""
        assert self._process is not None
        error = ConnectionClosed(self.name, self.returncode, self.stderr_tail(), reason)
        if self._fail_all(error) and not self._closing:
            log.warning("%s", error)
            if self.on_closed is not None:
                helper = threading.Thread(target=self._on_closed_thread, args=(error,),
                                          daemon=True, name=f"mcpkit-closed-{self.name}")
                self._helpers.add(helper)
                helper.start()

    def _encode_modern(self, request_id: int, method: str, params: dict[str, Any]) -> bytes:
        """Encode a modern request, splicing in the session's pre-encoded ``_meta``.

        The ``_meta`` object is the same on every request of a session, and encoding it is
        about half the cost of encoding a small request: so it is encoded once, when the
        era is settled (see ``_set_base_meta``), and its text put in each request's params.
        """
        meta_json = self._meta_json
        assert meta_json is not None
        encoded = _dumps(params)
        if encoded == "{}":
            params_json = '{"_meta":' + meta_json + "}"
        else:
            params_json = encoded[:-1] + ',"_meta":' + meta_json + "}"
        body = (f'{{"jsonrpc":"2.0","id":{request_id},"method":{_dumps(method)},'
                f'"params":{params_json}}}').encode()
        if self._framing == "ndjson":
            return body + b"\n"
        return b"Content-Length: %d\r\n\r\n%b" % (len(body), body)

    def start_request(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        on_progress: Callable[[dict[str, Any]], None] | None = None,
    ) -> PendingRequest:
        """Send one request and return at once; ``.result()`` waits, ``.cancel()`` cancels.

        One round only: an ``input_required`` result is returned as is (see :meth:`request`).
        """
        self._check_usable()
        return self._start(method, params or {}, on_progress)

    def request(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        timeout: float | None = _USE_DEFAULT,
        on_progress: Callable[[dict[str, Any]], None] | None = None,
    ) -> dict[str, Any]:
        """Send a request and return its result, or raise a :class:`ServerError` (the
        server's error), :class:`RequestTimeout`, :class:`ConnectionClosed`.

        A modern ``input_required`` result is fulfilled through the callbacks and the
        request sent again (new id, ``inputResponses``, ``requestState`` echoed as
        received), at most ``max_rounds`` times. ``timeout`` applies to each round.
        """
        self._check_usable()
        params = params or {}
        if timeout is _USE_DEFAULT:
            timeout = self.timeout
        result = self._round(method, params, on_progress, timeout)
        kind = result.get("resultType")
        if kind is None or kind == "complete":  # absent: an older server, so complete
            return result
        rounds = 0
        while kind != "complete":
            if kind != "input_required":
                raise ProtocolError(f"{method}: unrecognised resultType {kind!r}")
            rounds += 1
            if rounds > self.max_rounds:
                raise ProtocolError(f"{method}: the server still wants input after "
                                    f"{self.max_rounds} rounds; giving up")
            retry = dict(params)  # from the original: nothing carries over between rounds
            asked = result.get("inputRequests")
            if asked:
                retry["inputResponses"] = self._fulfil(asked)
            if "requestState" in result:
                retry["requestState"] = result["requestState"]
            result = self._round(method, retry, on_progress, timeout)
            kind = result.get("resultType") or "complete"
        return result

    def _round(self, method: str, params: dict[str, Any],
               on_progress: Callable[[dict[str, Any]], None] | None,
               timeout: float | None) -> dict[str, Any]:
        """One request: its write and its wait share one ``timeout``."""
        if timeout is None:
            return self._start(method, params, on_progress)._outcome(None, None)
        pending = self._start(method, params, on_progress, timeout=timeout)
        return pending._outcome(timeout - pending._send_wait, timeout)

    def notify(self, method: str, params: dict[str, Any] | None = None, *,
               timeout: float | None = None) -> None:
        """Send a notification; ``timeout`` (default ``write_timeout``; over HTTP, the
        session's ``timeout``) bounds the wait for the server to take it."""
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        if self._http is not None:
            self._post(message, method, timeout)
            return
        self._write(self._encode(message), method, None, self._write_budget(timeout))

    def _post(self, message: dict[str, Any], what: str, timeout: float | None = None) -> None:
        """HTTP: POST a notification or a response, waiting until the server takes it."""
        from .transports.http_client import HttpFailure

        assert self._http is not None
        if timeout is None:
            timeout = self.timeout if self.timeout is not None else DEFAULT_TIMEOUT
        try:
            self._http.post(message, timeout)
        except HttpFailure as exc:
            if exc.fatal:
                self._on_http_failure(None, exc)
                raise self._closed_error(what) from None
            raise HttpError(exc.message, exc.status, what, self.url) from None
        except TimeoutError as exc:
            raise HttpError(f"{what}: {exc}", None, what, self.url) from None
        except (RuntimeError, concurrent.futures.CancelledError):  # closed meanwhile
            raise self._closed_error(what) from None

    def _check_usable(self) -> None:
        if not self._started:
            raise RuntimeError("call connect() first (or use the client as a context manager)")
        if self._dead is not None:
            raise self._dead
        if self._closing:
            raise ConnectionClosed(self.name, self.returncode, (), "the session was closed")

    def _closed_error(self, method: str) -> ConnectionClosed:
        if self._dead is not None:
            return self._dead.for_method(method)
        if self._http is not None:
            if self._dead is not None:
                return self._dead.for_method(method)
            return ConnectionClosed(self.name, None, (), "the session was closed", method,
                                    self.url)
        # Writing failed, so the server is going or gone: give the reader a moment to see
        # end of stream and collect the exit status and the last stderr lines.
        self._reader_done.wait(1.0)
        if self._dead is not None:
            return self._dead.for_method(method)
        return ConnectionClosed(self.name, self.returncode, self.stderr_tail(),
                                "the server's stdin is closed", method)

    def _cancel(self, pending: PendingRequest, reason: str) -> bool:
        """Take ``pending`` out of the table and tell the server; False if already settled."""
        if self._pending.pop(pending.id, None) is None:
            return False
        if pending.notify_cancel:
            self._send_cancel(pending.id, reason)
        elif self._http is not None:
            self._http.cancel(pending.id)  # stop reading an answer nobody waits for
        return True

    def _send_cancel(self, request_id: Any, reason: str) -> None:
        if self._http is not None:
            # 2026-07-28: closing the request's stream is the cancellation. Legacy: a
            # disconnect is not one, so the notification goes first.
            if self.era == "legacy":
                cancel = jsonrpc.notification("notifications/cancelled",
                                              {"requestId": request_id, "reason": reason})
                try:
                    self._post(cancel, "notifications/cancelled", timeout=5.0)
                except SessionError:
                    pass  # the server is gone, or will time the request out itself
            self._http.cancel(request_id)
            return
        try:
            self.notify("notifications/cancelled", {"requestId": request_id, "reason": reason},
                        timeout=_CANCEL_WRITE_TIMEOUT)
        except (SessionError, OSError) as exc:
            # The server is gone (nothing left to cancel), or not reading (it will not
            # see the request either; a cut-short write has closed the session).
            log.info("%s: could not cancel request %s: %s", self.name, request_id, exc)

    # -- answering the server ------------------------------------------------------------

    def _fulfil(self, asked: dict[str, Any]) -> dict[str, Any]:
        """Answer a modern ``input_required`` result's inputRequests, all of them."""
        answers = {}
        for key, item in asked.items():
            if not isinstance(item, dict):
                raise ProtocolError(f"inputRequests[{key!r}] is not an object")
            answers[key] = self._answer(item.get("method"), item.get("params") or {})
        return answers

    def _answer(self, method: Any, params: dict[str, Any]) -> dict[str, Any]:
        """Run the callback for a server question (legacy request or modern input request)."""
        if method == "elicitation/create" and self.elicitation is not None:
            return self.elicitation(params)
        if method == "sampling/createMessage" and self.sampling is not None:
            return self.sampling(params)
        if method == "roots/list" and self.roots is not None:
            roots = self.roots() if callable(self.roots) else self.roots
            return {"roots": list(roots)}
        raise jsonrpc.MethodNotFound(str(method))

    def _serve_server_request(self, message: dict[str, Any]) -> None:
        """A legacy server's request (on its own thread): answer from the callbacks."""
        request_id, method = message["id"], message["method"]
        try:
            try:
                if method == "ping":
                    response = jsonrpc.result_response(request_id, {})
                else:
                    response = jsonrpc.result_response(
                        request_id, self._answer(method, message.get("params") or {}))
            except JsonRpcError as exc:
                response = jsonrpc.error_response_from(request_id, exc)
            except Exception as exc:
                log.exception("%s: the %s callback failed", self.name, method)
                response = jsonrpc.error_response(request_id, jsonrpc.INTERNAL_ERROR,
                                                  f"{type(exc).__name__}: {exc}")
            if self._http is not None:
                self._post(response, f"the response to {method}")
            else:
                self._write(self._encode(response), f"the response to {method}", None,
                            self.write_timeout)
        except (OSError, SessionError) as exc:
            log.info("%s: could not answer %s: %s", self.name, method, exc)
        finally:
            self._helpers.discard(threading.current_thread())

    # -- reading -----------------------------------------------------------------------

    def _read_loop(self) -> None:
        read = self._process.read
        feed = self._decoder.feed
        pending = self._pending
        classify = jsonrpc.classify
        reject = self._reject
        other = self._on_message
        try:
            while True:
                data = read()
                if not data:
                    break
                for message in feed(data):
                    # The hot path: a response to one of our requests (our ids are ints).
                    if type(message) is dict and "method" not in message:
                        request_id = message.get("id")
                        if type(request_id) is int:
                            waiting = pending.pop(request_id, None)
                            if waiting is not None:
                                try:
                                    classify(message)  # only JSON-RPC 2.0 settles a call
                                except JsonRpcError as exc:
                                    reject(waiting, message, exc)
                                else:
                                    waiting._resolve(message)
                                continue
                    other(message)
            for message in self._decoder.close():
                other(message)
        except Exception:
            log.exception("%s: the reader failed; closing the session", self.name)
        finally:
            self._on_end_of_stream()
            if self._closed:  # close() ran on this thread (from on_closed): finish it
                self._process.close()

    def _settle(self, waiting: PendingRequest, message: dict[str, Any]) -> None:
        """Hand an answer to its request, if it is a JSON-RPC 2.0 response (the reader
        does the same inline)."""
        try:
            jsonrpc.classify(message)
        except JsonRpcError as exc:
            self._reject(waiting, message, exc)
        else:
            waiting._resolve(message)

    def _reject(self, waiting: PendingRequest, message: dict[str, Any],
                exc: JsonRpcError) -> None:
        """An answer that is not JSON-RPC 2.0 fails its request: taking it for a result
        could hand the caller something the server never meant as one."""
        log.warning("%s: the answer to %s (request %s) is not JSON-RPC 2.0: %s",
                    self.name, waiting.method, waiting.id, exc.message)
        waiting._resolve(error=ProtocolError(
            f"{waiting.method} (request {waiting.id}): the server's answer is not a "
            f"JSON-RPC 2.0 response ({exc.message}): {_excerpt(message)}"))

    def _on_message(self, message: Any) -> None:
        try:
            self._on_other_message(message)
        except Exception:  # a malformed message must not take the session down
            log.exception("%s: could not handle %s", self.name, str(message)[:200])

    def _on_other_message(self, message: Any) -> None:
        if isinstance(message, FramingError):
            if isinstance(message, MessageTooLarge):
                self._too_large(message)
            else:
                self._junk(message.raw, str(message))
            return
        try:
            kind = jsonrpc.classify(message)
        except JsonRpcError as exc:
            self._junk(str(message).encode()[:200], exc.message)
            return
        if kind == "notification":
            self._on_notification(message)
        elif kind == "request":
            helper = threading.Thread(target=self._serve_server_request, args=(message,),
                                      daemon=True, name=f"mcpkit-answer-{self.name}")
            self._helpers.add(helper)
            helper.start()
        else:
            self._on_stray_response(message, kind)

    def _too_large(self, item: MessageTooLarge) -> None:
        """A message over ``max_message_size`` was dropped by the decoder. If it answers a
        request, fail that request now rather than let it wait for its timeout."""
        shape, request_id = _peek_envelope(item.raw)
        waiting = None
        if type(request_id) is int:
            waiting = self._pending.pop(request_id, None)
        elif request_id is None and shape != "not a response":
            # The id is not in the first bytes the decoder kept (or the framing keeps
            # only headers). With one request waiting, the answer can only be its own.
            only = list(self._pending)
            if len(only) == 1:
                waiting = self._pending.pop(only[0], None)
                if waiting is not None:
                    waiting._resolve(error=ResponseTooLarge(
                        waiting.method, waiting.id, item.size, item.limit, by_elimination=True))
                    return
        if waiting is not None:
            waiting._resolve(error=ResponseTooLarge(waiting.method, waiting.id, item.size,
                                                    item.limit))
            return
        log.warning("%s: skipped a message of at least %d bytes, over the limit of %d "
                    "(raise it with max_message_size=...): %r", self.name, item.size,
                    item.limit, item.raw[:120])

    def _junk(self, raw: bytes, why: str) -> None:
        # The spec forbids anything but MCP messages on stdout; tolerate it, skip the line.
        self.junk_lines += 1
        level = logging.WARNING if self.junk_lines <= _JUNK_WARNINGS else logging.DEBUG
        log.log(level, "%s: skipped stdout output that is not JSON-RPC (%s): %r",
                self.name, why, raw[:120])

    def _on_stray_response(self, message: dict[str, Any], kind: str) -> None:
        request_id = message.get("id")
        sub = self._listens.pop(request_id, None) if request_id is not None else None
        if sub is not None:  # a listen stream ended by the server
            error = None
            if kind == "error":
                e = message["error"]
                error = ServerError(e.get("code", 0), e.get("message", ""), e.get("data"),
                                    "subscriptions/listen")
            sub._end(error)
        elif request_id is None:
            log.warning("%s: the server reported an error not tied to a request: %s",
                        self.name, message.get("error"))
        elif type(request_id) is not int:
            log.warning("%s: the server answered request %r, an id this client never sent "
                        "(its ids are integers); ignored", self.name, request_id)
        else:
            log.debug("%s: response to request %r, which is no longer waiting (late or "
                      "duplicate answer, or an id never sent)", self.name, request_id)

    def _on_notification(self, message: dict[str, Any]) -> None:
        method = message["method"]
        params = message.get("params") or {}
        enqueue = self._queue.put
        if method == "notifications/progress":
            token = params.get("progressToken")
            waiting = self._pending.get(token) if type(token) is int else None
            if waiting is not None and waiting.on_progress is not None:
                enqueue((waiting.on_progress, params))
        elif method == "notifications/message":
            enqueue((self._log_message, params))
        elif method.endswith("/list_changed"):
            kind = method.split("/")[1]
            if kind in ("tools", "prompts", "resources"):
                self._invalidate(kind)
                # Coalesced: one re-fetch queued per kind at most. The dispatcher takes
                # the mark off as it starts one, so a change during that re-fetch queues
                # exactly one more (one in flight, one pending), and a storm of them costs
                # two fetches, not one per notification. The mark is taken after the cache
                # was invalidated here, so the re-fetch always sees this change.
                if kind not in self._refresh_queued:
                    self._refresh_queued.add(kind)
                    enqueue((self._list_changed, kind))
        elif method == "notifications/resources/updated":
            enqueue((self._resource_updated, params))
        elif method == "notifications/subscriptions/acknowledged":
            sub = self._listens.get((params.get("_meta") or {}).get(META_SUBSCRIPTION_ID))
            if sub is not None:
                sub._acknowledge(params.get("notifications") or {})
        elif method == "notifications/cancelled":
            # Modern servers send it only to end a listen stream.
            sub = self._listens.pop(params.get("requestId"), None)  # type: ignore[arg-type]
            if sub is not None:
                sub._end()
        if self.on_notification is not None:
            enqueue((self._user_notification, (method, params)))

    def _on_end_of_stream(self) -> None:
        # Collect what explains the end: the exit status and the last stderr lines.
        assert self._process is not None
        returncode = self._process.wait(0.5)
        self._process.wait_stderr(0.3)
        reason = "the session was closed" if self._closing else "the server closed the connection"
        error = ConnectionClosed(self.name, returncode, self.stderr_tail(), reason)
        first = self._fail_all(error)  # not if a cut-short write closed the session before
        self._reader_done.set()
        if first and not self._closing:
            log.warning("%s", error)
            self._call_on_closed(error)

    def _fail_all(self, error: ConnectionClosed) -> bool:
        """The session is dead: fail every waiting request and listen, stop the dispatcher
        once it has run what is queued. False if it was dead already."""
        with self._dead_lock:
            if self._dead is not None:
                return False
            self._dead = error
        for request_id in list(self._pending):
            waiting = self._pending.pop(request_id, None)
            if waiting is not None:
                waiting._resolve(error=error.for_method(waiting.method))
        for request_id in list(self._listens):
            sub = self._listens.pop(request_id, None)
            if sub is not None:
                sub._end(error)
        self._queue.put(None)
        return True

    def _call_on_closed(self, error: ConnectionClosed) -> None:
        if self.on_closed is not None:
            try:
                self.on_closed(self, error)
            except Exception:
                log.exception("%s: on_closed callback failed", self.name)

    def _on_closed_thread(self, error: ConnectionClosed) -> None:
        try:
            self._call_on_closed(error)
        finally:
            self._helpers.discard(threading.current_thread())

    # -- what the HTTP transport reports (on its I/O thread: nothing here blocks) -------

    def _receive(self, message: Any) -> None:
        """One message off an HTTP answer: the reader's job, for one message."""
        if type(message) is dict and "method" not in message:
            request_id = message.get("id")
            if type(request_id) is int:
                waiting = self._pending.pop(request_id, None)
                if waiting is not None:
                    self._settle(waiting, message)
                    return
        self._on_message(message)

    def _on_http_failure(self, request_id: Any, failure: HttpFailure) -> None:
        """An exchange gave no answer: fail its request; a fatal one ends the session."""
        from .transports.http_client import AnswerTooLarge

        if failure.fatal:
            error = ConnectionClosed(self.name, None, (), failure.message, url=self.url)
            if self._fail_all(error) and not self._closing:
                log.warning("%s", error)
                if self.on_closed is not None:
                    # Its own thread: the callback may block, or close this client.
                    helper = threading.Thread(target=self._on_closed_thread, args=(error,),
                                              daemon=True, name=f"mcpkit-closed-{self.name}")
                    self._helpers.add(helper)
                    helper.start()
            return
        waiting = self._pending.pop(request_id, None)
        if waiting is not None:
            if isinstance(failure, AnswerTooLarge):
                waiting._resolve(error=ResponseTooLarge(waiting.method, waiting.id,
                                                        failure.size, failure.limit))
            else:
                waiting._resolve(error=HttpError(failure.message, failure.status,
                                                 waiting.method, self.url))
            return
        sub = self._listens.pop(request_id, None)
        if sub is not None:
            sub._end(HttpError(failure.message, failure.status, "subscriptions/listen",
                               self.url))
        else:
            log.info("%s: %s", self.name, failure.message)  # nobody waits for it any more

    # -- the dispatcher thread ---------------------------------------------------------

    def _dispatch_loop(self) -> None:
        get = self._queue.get
        while True:
            item = get()
            if item is None:
                return
            function, argument = item
            try:
                function(argument)
            except Exception:
                log.exception("%s: a notification callback failed", self.name)

    def _user_notification(self, item: tuple[str, dict[str, Any]]) -> None:
        assert self.on_notification is not None
        self.on_notification(*item)

    def _log_message(self, params: dict[str, Any]) -> None:
        if self.on_log is not None:
            self.on_log(params)
            return
        level = _LOG_LEVELS.get(params.get("level", "info"), logging.ERROR)
        logger = f" {params['logger']}:" if params.get("logger") else ""
        log.log(level, "[%s]%s %s", self.name, logger, params.get("data"))

    def _list_changed(self, kind: str) -> None:
        self._refresh_queued.discard(kind)  # a change from now on queues another round
        kinds = ("resources", "resourceTemplates") if kind == "resources" else (kind,)
        for each in kinds:
            if each in self._ever_fetched:
                try:
                    self._list(each, refresh=True)
                except (SessionError, ServerError) as exc:
                    log.info("%s: could not re-fetch %s after list_changed: %s",
                             self.name, each, exc)
        if self.on_list_changed is not None:
            self.on_list_changed(kind)

    def _resource_updated(self, params: dict[str, Any]) -> None:
        uri = params.get("uri", "")
        tag = (params.get("_meta") or {}).get(META_SUBSCRIPTION_ID)
        for sub in list(self._subscriptions):
            if sub.callback is None or not sub.active:
                continue
            if (sub.id == tag) if sub.id is not None else (uri in sub.uris):
                sub.callback(uri, params)

    # -- lists and their caches ----------------------------------------------------------

    def _invalidate(self, feature: str) -> None:
        for kind, (_, _, announced_by) in _LISTS.items():
            if announced_by == feature:
                self._generation[kind] += 1
                self._cache.pop(kind, None)

    def _list(self, kind: str, refresh: bool = False) -> list[dict[str, Any]]:
        method, key, feature = _LISTS[kind]
        if not refresh:
            cached = self._cache.get(kind)
            if cached is not None and (self._change_channel.get(feature)
                                       or time.monotonic() < cached[1]):
                return list(cached[0])
        generation = self._generation[kind]
        items: list[dict[str, Any]] = []
        ttl_ms: float | None = None
        cursor: str | None = None
        seen: set[str] = set()
        for _ in range(MAX_PAGES):
            result = self.request(method, {"cursor": cursor} if cursor is not None else {})
            page = result.get(key)
            if not isinstance(page, list):
                raise ProtocolError(f"{method}: the result has no {key!r} list")
            items.extend(page)
            page_ttl = result.get("ttlMs")
            page_ttl = page_ttl if isinstance(page_ttl, int) and page_ttl > 0 else 0
            ttl_ms = page_ttl if ttl_ms is None else min(ttl_ms, page_ttl)
            cursor = result.get("nextCursor")
            if cursor is None:  # absent means the end; "" is a valid cursor
                break
            if cursor in seen:
                raise ProtocolError(f"{method}: the server repeated cursor {cursor!r}")
            seen.add(cursor)
        else:
            raise ProtocolError(f"{method}: more than {MAX_PAGES} pages")
        if kind == "tools" and self._http is not None and self.era == "modern":
            # Streamable HTTP, 2026-07-28: tools whose x-mcp-header annotations are invalid
            # MUST be left out; the transport keeps the others' for the Mcp-Param-* headers.
            items = self._http.accept_tools(items)
        self._ever_fetched.add(kind)
        self._latest[kind] = items
        if self._generation[kind] == generation:
            self._cache[kind] = (items, time.monotonic() + (ttl_ms or 0) / 1000)
        return list(items)

    def list_tools(self, refresh: bool = False) -> list[dict[str, Any]]:
        """Every tool (all pages). Cached while the server can announce changes."""
        return self._list("tools", refresh)

    def list_prompts(self, refresh: bool = False) -> list[dict[str, Any]]:
        return self._list("prompts", refresh)

    def list_resources(self, refresh: bool = False) -> list[dict[str, Any]]:
        return self._list("resources", refresh)

    def list_resource_templates(self, refresh: bool = False) -> list[dict[str, Any]]:
        return self._list("resourceTemplates", refresh)

    def cached_tools(self) -> list[dict[str, Any]] | None:
        """The tools as last fetched, without asking the server (None if never fetched)."""
        return self.cached_list("tools")

    def cached_list(self, kind: str) -> list[dict[str, Any]] | None:
        """A list as last fetched, without asking the server, even if a change was
        announced since (None if never fetched). ``kind``: "tools", "prompts",
        "resources" or "resourceTemplates"."""
        if kind not in _LISTS:
            raise ValueError(f"unknown list {kind!r}; one of {', '.join(_LISTS)}")
        latest = self._latest.get(kind)
        return list(latest) if latest is not None else None

    # -- the features ------------------------------------------------------------------

    def call_tool(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        *,
        timeout: float | None = _USE_DEFAULT,
        on_progress: Callable[[dict[str, Any]], None] | None = None,
    ) -> dict[str, Any]:
        """Call a tool; the result dict. A failing tool is a result: test :func:`is_error`.

        Over HTTP (2026-07-28) arguments marked ``x-mcp-header`` in the tool's schema also
        travel as ``Mcp-Param-*`` headers, so the tools are listed first if they never
        were; a -32020 (headers and body disagree) re-lists them and tries once more.
        """
        params = {"name": name, "arguments": arguments or {}}
        http = self._http
        if http is None or self.era != "modern":
            return self.request("tools/call", params, timeout=timeout, on_progress=on_progress)
        if "tools" not in self._ever_fetched:
            self.list_tools()
        if name in http.rejected_tools:
            raise ProtocolError(f"tool {name!r} was left out of tools/list: "
                                f"{http.rejected_tools[name]}")
        try:
            return self.request("tools/call", params, timeout=timeout, on_progress=on_progress)
        except ServerError as exc:
            if exc.code != jsonrpc.HEADER_MISMATCH:
                raise
            log.info("%s: %s; listing the tools again and retrying", self.name, exc)
        self.list_tools(refresh=True)
        return self.request("tools/call", params, timeout=timeout, on_progress=on_progress)

    def read_resource(self, uri: str, *, timeout: float | None = _USE_DEFAULT) -> dict[str, Any]:
        """A resource's ``contents``. Not found is a ServerError (-32602, legacy -32002)."""
        return self.request("resources/read", {"uri": uri}, timeout=timeout)

    def get_prompt(self, name: str, arguments: dict[str, str] | None = None, *,
                   timeout: float | None = _USE_DEFAULT) -> dict[str, Any]:
        params: dict[str, Any] = {"name": name}
        if arguments:
            params["arguments"] = arguments
        return self.request("prompts/get", params, timeout=timeout)

    def complete(self, ref: dict[str, Any], argument: str, value: str,
                 context: dict[str, str] | None = None) -> dict[str, Any]:
        """Completions for a prompt argument or template variable: the ``completion``
        object (``values``, ``total``, ``hasMore``). ``ref`` is e.g.
        ``{"type": "ref/prompt", "name": "review_note"}``."""
        params: dict[str, Any] = {"ref": ref, "argument": {"name": argument, "value": value}}
        if context:
            params["context"] = {"arguments": context}
        return self.request("completion/complete", params).get("completion", {})

    def set_log_level(self, level: str | None) -> None:
        """Ask for the server's log messages at ``level`` and above (None: stop, modern).

        Legacy: ``logging/setLevel``. Modern: the level goes in every request's ``_meta``.
        """
        if level is not None and level not in versions.LOG_LEVELS:
            raise ValueError(f"unknown log level {level!r}")
        self.log_level = level
        if self.era == "modern":
            assert self.protocol_version is not None
            self._set_base_meta(self.protocol_version)
        elif level is not None:
            self.request("logging/setLevel", {"level": level})

    def notify_roots_changed(self) -> None:
        """Tell a legacy server the roots changed (modern servers ask again each time)."""
        if self.era == "legacy":
            self.notify("notifications/roots/list_changed")

    def ping(self, timeout: float | None = _USE_DEFAULT) -> None:
        """Check the server answers (legacy ``ping``; modern ``server/discover``)."""
        self.request("ping" if self.era == "legacy" else "server/discover", timeout=timeout)

    def subscribe(
        self,
        uris: str | Sequence[str],
        callback: Callable[[str, dict[str, Any]], None] | None = None,
        *,
        timeout: float | None = _USE_DEFAULT,
    ) -> Subscription:
        """Get ``notifications/resources/updated`` for ``uris`` until the subscription is
        closed. ``callback(uri, params)`` runs on the dispatcher thread."""
        self._check_usable()
        uri_list = [uris] if isinstance(uris, str) else list(uris)
        if self.era == "legacy":
            for uri in uri_list:
                self.request("resources/subscribe", {"uri": uri}, timeout=timeout)
            sub = Subscription(self, None, uri_list, {}, callback)
            sub.granted = {"resourceSubscriptions": uri_list}
        else:
            sub = self._listen({"resourceSubscriptions": uri_list}, callback, timeout)
        self._subscriptions.append(sub)
        return sub

    def _listen(self, notifications: dict[str, Any],
                callback: Callable[[str, dict[str, Any]], None] | None,
                timeout: float | None) -> Subscription:
        """Open a ``subscriptions/listen`` stream and wait for its acknowledgment."""
        request_id = next(self._ids)
        sub = Subscription(self, request_id, list(notifications.get("resourceSubscriptions", [])),
                           notifications, callback)
        self._listens[request_id] = sub
        assert self._base_meta is not None
        params = {"_meta": self._base_meta.copy(), "notifications": notifications}
        wait = self.timeout if timeout is _USE_DEFAULT else timeout
        try:
            self._send_request(jsonrpc.request(request_id, "subscriptions/listen", params), wait)
        except SessionError:
            self._listens.pop(request_id, None)
            raise
        except (OSError, RuntimeError):  # HTTP: the transport is closed
            self._listens.pop(request_id, None)
            raise self._closed_error("subscriptions/listen") from None
        if not sub._acknowledged.wait(wait):
            self._listens.pop(request_id, None)
            self._send_cancel(request_id, "no acknowledgment")
            raise RequestTimeout("subscriptions/listen", wait or 0, request_id)
        if sub.error is not None:
            raise sub.error
        return sub

    def _end_subscription(self, sub: Subscription) -> None:
        sub.active = False
        if sub in self._subscriptions:
            self._subscriptions.remove(sub)
        if not self.alive:
            return
        if sub.id is None:
            for uri in sub.uris:
                try:
                    self.request("resources/unsubscribe", {"uri": uri})
                except (ServerError, SessionError) as exc:
                    log.info("%s: unsubscribe %s failed: %s", self.name, uri, exc)
        elif self._listens.pop(sub.id, None) is not None:
            self._send_cancel(sub.id, "unsubscribed")

    def _open_change_listen(self) -> None:
        """Modern: listen for the list changes the server says it can announce."""
        wanted = {}
        for feature in ("tools", "prompts", "resources"):
            if (self.server_capabilities.get(feature) or {}).get("listChanged"):
                wanted[f"{feature}ListChanged"] = True
        if not wanted:
            return
        try:
            sub = self._listen(wanted, None, self.probe_timeout)
        except (ServerError, RequestTimeout) as exc:
            log.info("%s: no change notifications (subscriptions/listen: %s)", self.name, exc)
            return
        self._change_listen = sub
        for feature in ("tools", "prompts", "resources"):
            self._change_channel[feature] = sub.granted.get(f"{feature}ListChanged") is True

    def __repr__(self) -> str:
        state = "alive" if self.alive else ("dead" if self._dead else "not connected")
        where = self.url if self.url is not None else f"pid={self.pid}"
        return (f"<Client {self.name} {self.era or '?'} {self.protocol_version or ''} "
                f"{where} {state}>")


def connect(command: str | Sequence[str] | None = None, args: Sequence[str] = (),
            **options: Any) -> Client:
    """Start a server and connect to it: ``Client(command, args, **options).connect()``
    (``connect(url="http://...")`` or ``connect("http://...")`` for an HTTP server)."""
    return Client(command, args, **options).connect()


def _guess_name(command: str, args: Sequence[str]) -> str:
    """A short name for logs and errors: the script, the module, else the program."""
    for i, arg in enumerate(args):
        if arg.endswith((".py", ".js", ".mjs", ".ts")):
            return os.path.splitext(os.path.basename(arg))[0]
        if arg == "-m" and i + 1 < len(args):
            return args[i + 1]
    return os.path.basename(command)


def _name_from_url(url: str) -> str:
    """``http://127.0.0.1:8000/mcp`` -> ``127.0.0.1:8000``."""
    try:
        return urlsplit(url).netloc or url
    except ValueError:
        return url


def _excerpt(message: Any) -> str:
    text = str(message)
    return text if len(text) <= 200 else text[:200] + "..."


_scan_value = json.JSONDecoder().raw_decode


def _peek_envelope(prefix: bytes) -> tuple[str, Any]:
    """What the first bytes of a too-large message say about it: ``(shape, id)``.

    ``shape`` is "response" (a top-level ``result`` or ``error`` was seen), "not a
    response" (``method`` or ``params``) or "unknown"; ``id`` is the top-level ``id`` if
    it is there whole, else None. Only the top level counts: an ``"id"`` inside
    ``result`` belongs to something else. A truncated prefix just ends the scan.
    """
    text = prefix.decode("utf-8", "replace")
    shape, found = "unknown", None
    i = _skip_space(text, 0)
    if text[i:i + 1] != "{":
        return shape, found
    i += 1
    while True:
        i = _skip_space(text, i)
        if text[i:i + 1] != '"':
            return shape, found
        try:
            key, i = _scan_value(text, i)
        except ValueError:
            return shape, found
        i = _skip_space(text, i)
        if text[i:i + 1] != ":":
            return shape, found
        i = _skip_space(text, i + 1)
        if key in ("result", "error"):
            shape = "response"
        elif key in ("method", "params"):
            shape = "not a response"
        try:
            value, i = _scan_value(text, i)
        except ValueError:
            return shape, found  # the value runs past the prefix
        i = _skip_space(text, i)
        if i >= len(text):
            return shape, found  # "id": 12 at the very end could have been 123
        if key == "id":
            found = jsonrpc.request_id_of({"id": value})  # None unless a valid id
        if text[i] != ",":
            return shape, found
        i += 1


def _skip_space(text: str, i: int) -> int:
    while i < len(text) and text[i] in " \t\r\n":
        i += 1
    return i


def _supported_versions(data: Any) -> list[str]:
    supported = data.get("supported") if isinstance(data, dict) else None
    return [v for v in supported if isinstance(v, str)] if isinstance(supported, list) else []


def _default_client_info() -> dict[str, Any]:
    return {"name": "mcpkit", "version": versions.PACKAGE_VERSION}
