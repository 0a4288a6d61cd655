"""Streamable HTTP: an mcpkit :class:`~mcpkit.server.Server` behind one endpoint, ``/mcp``.

Theory of operation
-------------------
:class:`McpHttpApp` is a plain ASGI application (no web framework): the routing and the
handling of each era are here, by name (``_post_modern``, ``_post_legacy``, ``_get``,
``_delete``); the security checks are in :mod:`~mcpkit.transports.http_security`
(:class:`~mcpkit.transports.http_security.Guard`), the header rules in
:mod:`~mcpkit.transports.http_headers`, the deadlines for slow clients in
:mod:`~mcpkit.transports.http_protocol`. Every client message arrives as its own POST. The
app first checks what HTTP alone can tell (path, ``Host`` and ``Origin``, bearer token,
``Content-Type``, ``Accept``, body size), decodes one JSON-RPC message, decides which era
it belongs to, and hands it to a :class:`~mcpkit.connection.Connection`:

- **modern** (2026-07-28): the ``MCP-Protocol-Version`` header or ``params._meta`` names a
  modern revision. Stateless: the standard headers must repeat what the body says
  (-32020 otherwise), and each POST gets a Connection of its own that lives exactly as
  long as its response. Nothing is remembered between POSTs, so any worker process can
  answer any request.
- **legacy** (2025-11-25 and earlier): ``initialize`` opens a :class:`_Session`, which
  keeps one Connection for the session's life under an unguessable ``Mcp-Session-Id``.
  Messages the server sends outside any request (list changes, resource updates,
  requests to the client) wait in the session until the client opens its GET stream.

Where state lives: ``McpHttpApp._sessions`` (legacy sessions by id) and one
:class:`_Outbox` per open response. The server answers from its own threads (a tool may
block, or wait for the client), so replies cross into the event loop through the outbox.

The first message out of the server picks the response's format. If it is the final
response, the POST is answered with ``application/json`` (and, in the modern era, the
status the spec gives its error code: 400, or 404 for an unknown method). If a
notification (progress, log, a listen acknowledgment) or a request to the client comes
first, the answer becomes an SSE stream that ends with the final response. In the modern
era the client closing a stream cancels its request; in the legacy era it does not
(there, cancelling is the ``notifications/cancelled`` message).

Resumable streams (legacy era): every SSE event of a session carries an ``id``, the first
one (no data) a ``retry`` hint too, and the app keeps recent events in a bounded
:class:`~mcpkit.transports.sse_store.EventStore`. When a call's stream ends before its
answer (the client left, or the tool called ``ctx.end_stream()`` to free the connection),
what the call still sends is kept there; a GET with ``Last-Event-ID`` gets the events after
that id, then the rest of the call as it happens. An id no longer kept is a 400 that says
so, never a silent gap.

Several processes
-----------------
Because a modern request carries everything it needs, several uvicorn workers behind one
socket (or any load balancer) can serve the same server::

    export MCPKIT_STATE_SECRET=$(openssl rand -hex 32)   # the same for every worker
    mcpkit serve mcpkit.examples.everything:server --http --workers 4

The one thing the workers must share is the key that seals ``requestState`` (an
``input_required`` round may come back to another worker): ``MCPKIT_STATE_SECRET``
(:func:`mcpkit.launch.run_http` draws one for its workers when it is unset). What stays per process:
a legacy session (route legacy clients by ``Mcp-Session-Id``, or run one worker), and a
list change, which reaches the listen streams open on the worker where it happened.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import importlib.util
import logging
import secrets
import socket
import threading
import time
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from .. import jsonrpc, tracing, versions
from .. import params as params_mod
from ..connection import Connection
from ..framing import DEFAULT_MAX_MESSAGE_SIZE, FramingError, encode_ndjson, loads
from ..server import Server
from .http_headers import H_SESSION, H_VERSION, HeaderMirror
from .http_security import LOOPBACK_NAMES, Guard, HttpError, RequestHeaders, accepts
from .sse_store import EventStore, UnknownEvent

if TYPE_CHECKING:  # http_auth needs the OAuth libraries: loaded only by who builds one
    from .http_auth import ResourceServer, TokenInfo

log = logging.getLogger("mcpkit.http")

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
AsgiSend = Callable[[dict[str, Any]], Awaitable[None]]

DEFAULT_PATH = "/mcp"
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000
KEEPALIVE_S = 15.0
SESSION_IDLE_TIMEOUT_S = 3600.0
#: Messages a legacy session keeps for a GET stream that is not open (yet).
SESSION_BACKLOG = 1000
#: Live legacy sessions at most; a new one then ends the one idle the longest.
MAX_SESSIONS = 1000
#: Seconds a client has to send a request's body (its head: see http_protocol).
BODY_TIMEOUT_S = 30.0
#: The ``retry`` hint of a legacy SSE stream: how long a client waits to reconnect.
SSE_RETRY_MS = 1000
#: Handlers that answer within this many seconds every time run on the event loop.
INLINE_BUDGET_S = 0.002
#: Quick answers in a row on the executor that bring a handler back inline (see
#: :class:`_QuickHandlers`), doubled after each demotion.
PROMOTE_AFTER = 100
#: uvicorn's HTTP protocol with mcpkit's deadlines: the C parser when httptools is there.
PROTOCOL = "mcpkit.transports.http_protocol:" + (
    "FastHeadDeadlineProtocol" if importlib.util.find_spec("httptools") else "HeadDeadlineProtocol")

# 2026-07-28 requests that keep state on their Connection whatever their handler: a listen
# stream stays open there, and tasks/result waits for its task on one of its call threads.
_OWN_CONNECTION = frozenset({"subscriptions/listen", "tasks/result"})

# 2026-07-28, streamable HTTP: the HTTP status of an error response, by JSON-RPC code.
# Other errors (and every legacy error) travel with 200, as JSON-RPC over HTTP usually does.
_MODERN_ERROR_STATUS = {
    jsonrpc.PARSE_ERROR: 400,
    jsonrpc.INVALID_REQUEST: 400,
    jsonrpc.INVALID_PARAMS: 400,
    jsonrpc.HEADER_MISMATCH: 400,
    jsonrpc.MISSING_REQUIRED_CLIENT_CAPABILITY: 400,
    jsonrpc.UNSUPPORTED_PROTOCOL_VERSION: 400,
    jsonrpc.METHOD_NOT_FOUND: 404,
}

#: The checked token of the request being served (each ASGI request is its own task).
_request_auth: contextvars.ContextVar[TokenInfo | None] = contextvars.ContextVar(
    "mcpkit_request_auth", default=None)


class _ClientGone(Exception):
    """The client disconnected while we were still reading its request."""


# Markers that travel through an outbox next to messages.
_DISCONNECTED = object()  # the client closed the connection
_END = object()  # we are closing this response (session ended, app shutting down)
_IDLE = object()  # nothing arrived within the keep-alive interval
_BREAK = object()  # the handler closes its response stream now (Context.end_stream)


# -- responses -------------------------------------------------------------------------


def _error_body(exc: HttpError) -> dict[str, Any]:
    body = jsonrpc.error_response(exc.request_id, exc.code, exc.message, exc.data)
    if exc.request_id is None:
        del body["id"]  # MCP's schema: an error that answers no request has no id (not null)
    return body


def _encode(message: dict[str, Any] | list[Any]) -> bytes | None:
    # A value JSON cannot carry (NaN in a result) costs that message, never the response.
    return jsonrpc.encode_or_replace(encode_ndjson, message)


async def _send_json(send: AsgiSend, status: int, message: dict[str, Any] | list[Any],
                     headers: Iterable[tuple[str, str]] = ()) -> None:
    body = _encode(message) or encode_ndjson(jsonrpc.error_response(
        None, jsonrpc.INTERNAL_ERROR, "Internal error; the server log has the details"))
    head = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]
    if headers:
        head += [(k.encode(), v.encode()) for k, v in headers]
    await send({"type": "http.response.start", "status": status, "headers": head})
    await send({"type": "http.response.body", "body": body})


async def _send_empty(send: AsgiSend, status: int) -> None:
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-length", b"0")]})
    await send({"type": "http.response.body", "body": b""})


async def _start_sse(send: AsgiSend) -> None:
    await send({"type": "http.response.start", "status": 200, "headers": [
        (b"content-type", b"text/event-stream"),
        (b"cache-control", b"no-cache"),
        # Reverse proxies (nginx) would otherwise hold events back until a buffer fills.
        (b"x-accel-buffering", b"no"),
    ]})


def _sse_event(message: dict[str, Any] | list[Any]) -> bytes | None:
    # encode_ndjson gives one line (JSON escapes newlines), so one data: field is enough.
    data = _encode(message)
    return None if data is None else b"event: message\ndata: " + data + b"\n"


def _with_id(event_id: str, payload: bytes) -> bytes:
    return b"id: " + event_id.encode() + b"\n" + payload


def _final_for(message: dict[str, Any] | list[Any]) -> Callable[[Any], bool]:
    """How to recognise the answer that completes a POSTed request (or batch)."""
    if isinstance(message, list):  # a batch: its responses come back as one array
        return lambda item: isinstance(item, list)
    request_id = message["id"]
    return lambda item: (isinstance(item, dict) and "method" not in item
                         and item.get("id") == request_id
                         and ("result" in item or "error" in item))


class _BodyDeadlines:
    """The deadline of every request body being read on one event loop, by task.

    One timer, armed for the earliest deadline (re-armed when it fires, and sooner for a
    body whose deadline comes first), cancels the tasks whose body is late: a timer per
    request (armed, then cancelled as the body arrives at once) cost about 3 us a request.
    A task cut off is in ``late`` until :meth:`end`.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.reading: dict[asyncio.Task[Any], float] = {}
        self.late: set[asyncio.Task[Any]] = set()
        self._timer: asyncio.TimerHandle | None = None

    def start(self, task: asyncio.Task[Any], seconds: float) -> None:
        deadline = self.reading[task] = self.loop.time() + seconds
        timer = self._timer
        if timer is None or deadline < timer.when():  # (earlier: the timeout was lowered)
            if timer is not None:
                timer.cancel()
            self._timer = self.loop.call_at(deadline, self._check)

    def end(self, task: asyncio.Task[Any]) -> None:
        self.reading.pop(task, None)
        self.late.discard(task)

    def _check(self) -> None:
        now = self.loop.time()
        for task in [task for task, deadline in self.reading.items() if deadline <= now]:
            del self.reading[task]
            self.late.add(task)
            task.cancel()
        self._timer = (self.loop.call_at(min(self.reading.values()), self._check)
                       if self.reading else None)


# -- from server threads to the event loop --------------------------------------------


class _Outbox:
    """Messages for one HTTP response, handed from any thread to the event loop in order.

    Not bounded: the server's threads must never block on a slow client. What a response
    holds is bounded by what its request produces; a GET stream whose client stops reading
    (but stays connected) grows until the client goes or the session is deleted.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._loop_thread = threading.get_ident()  # made on the loop, for the loop
        # A deque and a future to wake the reader rather than an asyncio.Queue: most
        # responses are one message put inline and taken at once, and a wake-up that
        # times out or is cancelled can never lose a message.
        self._items: deque[Any] = deque()
        self._waiter: asyncio.Future[None] | None = None
        # What closing the app does to this response before ending it (e.g. end a listen
        # with its result rather than just cutting the stream).
        self.on_shutdown: Callable[[], None] | None = None

    def put(self, message: Any) -> None:
        """Queue a message (or a marker). Safe from any thread, and after the loop is gone."""
        if threading.get_ident() == self._loop_thread:
            self._push(message)  # an inline handler: no wake-up to schedule
            return
        try:
            self._loop.call_soon_threadsafe(self._push, message)
        except RuntimeError:
            pass  # the event loop has stopped: nobody can write this response any more

    def _push(self, message: Any) -> None:
        self._items.append(message)
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def ready(self) -> Any:
        """The next item if one is queued already, else ``_IDLE`` (no waiting)."""
        return self._items.popleft() if self._items else _IDLE

    def holds(self, test: Callable[[Any], bool]) -> bool:
        """Whether an item queued already passes ``test``."""
        return any(test(item) for item in self._items)

    async def get(self, timeout: float | None = None) -> Any:
        """The next item, or ``_IDLE`` after ``timeout`` seconds without one."""
        if not self._items:
            waiter = self._waiter = self._loop.create_future()
            timer = None if timeout is None else self._loop.call_later(
                timeout, _wake, waiter)
            try:
                await waiter
            finally:
                self._waiter = None
                if timer is not None:
                    timer.cancel()
            if not self._items:
                return _IDLE
        return self._items.popleft()

    def shutdown(self) -> None:
        if self.on_shutdown is not None:
            self.on_shutdown()
        self.put(_END)

    def discard(self) -> None:
        if self._waiter is not None:
            self._waiter.cancel()


def _wake(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)


# -- legacy sessions -------------------------------------------------------------------


class _Reply:
    """Where a legacy request's messages go: its response's outbox. It can also close
    the response early (:meth:`mcpkit.context.Context.end_stream`); the client resumes."""

    def __init__(self, outbox: _Outbox) -> None:
        self._outbox = outbox

    def __call__(self, message: Any) -> None:
        self._outbox.put(message)

    def end_stream(self) -> None:
        self._outbox.put(_BREAK)


class _Authorized:
    """A reply channel that also says whose token the request came with (``ctx.auth``)."""

    def __init__(self, reply: Callable[[Any], None], auth: TokenInfo) -> None:
        self._reply = reply
        self.auth = auth
        end_stream = getattr(reply, "end_stream", None)
        if end_stream is not None:
            self.end_stream = end_stream

    def __call__(self, message: Any) -> None:
        self._reply(message)


class _Recorder:
    """Gives one legacy SSE stream's events their ids and keeps them in the app's
    :class:`~mcpkit.transports.sse_store.EventStore`, so the client can resume the stream.

    A call's stream (``label="call"``) lives on after its response closes: what the call
    still sends is recorded, and handed to ``follower``, the GET stream that resumed it.
    Used on the event loop only.
    """

    def __init__(self, store: EventStore, session: _Session, label: str,
                 stream_id: str | None = None) -> None:
        self.store = store
        self.session = session
        self.label = label
        # Opened with the first event: a request answered with plain JSON costs nothing.
        self.stream_id = stream_id if stream_id and store.alive(stream_id) else None
        self.follower: _Outbox | None = None

    def _keep(self, payload: bytes) -> bytes:
        if self.stream_id is None or not self.store.alive(self.stream_id):
            # (Or dropped to make room: the stream goes on under a new id.)
            self.stream_id = self.store.open(self.session.id, self.label)
            if self.label == "call":
                self.session.recorders[self.stream_id] = self
        event_id = self.store.append(self.stream_id, payload)
        return _with_id(event_id, payload)

    def priming(self, retry_ms: int) -> bytes:
        """The first event: an id and the ``retry`` hint, no data (the spec's advice, so a
        client can resume even before the first message)."""
        return self._keep(f"retry: {retry_ms}\ndata: \n\n".encode())

    def event(self, message: Any) -> bytes | None:
        payload = _sse_event(message)
        if payload is None:
            return None
        event = self._keep(payload)
        if self.follower is not None:
            self.follower.put(event)
        return event

    def finish(self) -> None:
        if self.stream_id is not None:
            self.store.finish(self.stream_id)
        if self.follower is not None:
            self.follower.put(_END)


class _Session:
    """One legacy session (2025-11-25 and earlier): its Connection and its GET stream."""

    connection: Connection  # set right after: the Connection sends through push()
    owner: Any = None  # who opened it, with a ResourceServer (TokenInfo.owner)

    def __init__(self, session_id: str) -> None:
        self.id = session_id
        self.last_seen = time.monotonic()
        self.ended = False
        # POST responses in progress, by request id: ended early if the client cancels.
        self.requests: dict[jsonrpc.RequestId, _Outbox] = {}
        # Call streams that outlive their response (resumable), by their stream id.
        self.recorders: dict[str, _Recorder] = {}
        self._lock = threading.Lock()
        self._stream: _Outbox | None = None
        self._backlog: deque[dict[str, Any]] = deque(maxlen=SESSION_BACKLOG)
        self._dropping = False

    def push(self, message: dict[str, Any]) -> None:
        """The Connection's own ``send``: messages that belong to no request (any thread)."""
        with self._lock:
            if self._stream is not None:
                self._stream.put(message)
                return
            if len(self._backlog) == SESSION_BACKLOG and not self._dropping:
                self._dropping = True  # once per session: a client without GET would flood
                log.warning("session %s...: %d messages wait for a GET stream that is not "
                            "open; dropping the oldest from now on", self.id[:8],
                            SESSION_BACKLOG)
            self._backlog.append(message)

    def attach(self, stream: _Outbox) -> bool:
        """Make ``stream`` the session's GET stream; False if one is open already."""
        with self._lock:
            if self._stream is not None:
                return False
            self._stream = stream
            while self._backlog:
                stream.put(self._backlog.popleft())
            return True

    def detach(self, stream: _Outbox) -> None:
        with self._lock:
            if self._stream is stream:
                self._stream = None

    def end_streams(self) -> None:
        """End the session's open responses (on the event loop: ``requests`` lives there)."""
        self.ended = True  # from now on its id answers 404
        with self._lock:
            streams = [self._stream, *self.requests.values()]
        for stream in streams:
            if stream is not None:
                stream.put(_END)


# -- which handlers run on the event loop ----------------------------------------------


class _QuickHandlers:
    """Which handlers may run inline, on the event loop.

    Handing a request to the executor and its answer back costs two thread hops, about a
    fifth of a small request's whole cost. But a handler that blocks (a tool doing I/O)
    must not run on the loop, where it would stall every other client. So a handler, known
    by method and tool or prompt name, runs on the executor until it has answered within
    :data:`INLINE_BUDGET_S`; from then on it runs inline; the first time it takes longer it
    goes back to the executor. A pause of the whole process (a garbage collection, a busy
    machine) makes a quick handler look slow once, so a handler sent back earns its place
    on the loop again by answering quickly :data:`PROMOTE_AFTER` times in a row on the
    executor, and twice as many times after each further demotion; a handler that really
    blocks is slow on the executor too, and stays there. (A handler that waits on the
    client, or for cancellation, takes a Context: in a legacy session it runs on a thread
    of its own either way, and handing it that thread is what takes no time; a 2026-07-28
    request's runs on the executor's thread, which may wait, and once it answers quickly,
    inline like any other: its progress reports then reach the response with no thread
    hop. So does a legacy one whose Context, by its code, only reports or logs:
    :mod:`mcpkit.context_use`.) This is a speed-up that costs reading: without it,
    everything would simply go to the executor.
    """

    def __init__(self, server: Server) -> None:
        self._server = server
        self._quick: dict[tuple[str, str | None], bool] = {}
        # For handlers sent back to the executor: quick answers in a row since, and how
        # many it takes to run inline again.
        self._streak: dict[tuple[str, str | None], int] = {}
        self._needed: dict[tuple[str, str | None], int] = {}

    def key(self, message: Any) -> tuple[str, str | None] | None:
        if not isinstance(message, dict):
            return None  # a batch: the executor
        method = message["method"]
        if method == "tools/call":
            registry = self._server.tools
        elif method == "prompts/get":
            registry = self._server.prompts
        else:
            return method, None
        name = (message.get("params") or {}).get("name")
        # Only registered names: a client inventing names must not grow this table.
        return method, name if isinstance(name, str) and name in registry else None

    def inline(self, key: tuple[str, str | None] | None) -> bool:
        return key is not None and self._quick.get(key, False)

    def record(self, key: tuple[str, str | None] | None, seconds: float) -> None:
        if key is None:
            return
        quick = self._quick.get(key)
        if seconds <= INLINE_BUDGET_S:
            if quick is None:
                self._quick[key] = True
            elif not quick:
                streak = self._streak[key] = self._streak.get(key, 0) + 1
                if streak >= self._needed[key]:
                    self._quick[key] = True
                    log.info("%s %s answers quickly again: it runs inline", *key)
            return
        if quick is not False:
            if quick:
                log.info("%s %s took %.1f ms on the event loop: it runs on the executor",
                         key[0], key[1] or "", seconds * 1000)
                needed = self._needed.get(key)
                self._needed[key] = PROMOTE_AFTER if needed is None else needed * 2
            else:
                self._needed[key] = PROMOTE_AFTER
            self._quick[key] = False
        self._streak[key] = 0


# -- the application -------------------------------------------------------------------


class McpHttpApp:
    """An ASGI application serving ``server`` over streamable HTTP at ``path``.

    ``allowed_hosts``, ``allowed_origins`` and ``token`` make its security policy: see
    :class:`~mcpkit.transports.http_security.Guard` (the defaults suit a local server).
    ``auth``: tokens from an external authorization server instead of one static ``token``
    (:class:`~mcpkit.transports.http_auth.ResourceServer`).
    """

    def __init__(
        self,
        server: Server,
        *,
        path: str = DEFAULT_PATH,
        allowed_hosts: Iterable[str] | None = None,
        allowed_origins: Iterable[str] | None = None,
        token: str | None = None,
        auth: ResourceServer | None = None,
        max_body_size: int = DEFAULT_MAX_MESSAGE_SIZE,
        keepalive_s: float = KEEPALIVE_S,
        session_idle_timeout_s: float = SESSION_IDLE_TIMEOUT_S,
        max_sessions: int = MAX_SESSIONS,
        body_timeout_s: float = BODY_TIMEOUT_S,
        max_threads: int = 64,
        sse_retry_ms: int = SSE_RETRY_MS,
    ) -> None:
        self.server = server
        self.path = "/" + path.strip("/")
        self.guard = Guard(allowed_hosts, allowed_origins, token)
        if auth is not None and token is not None:
            raise ValueError("give a static token or auth=ResourceServer(...), not both")
        self.auth = auth
        self._mirror = HeaderMirror(server.tools)
        self.max_body_size = max_body_size
        self.keepalive_s = keepalive_s
        self.session_idle_timeout_s = session_idle_timeout_s
        self.max_sessions = max_sessions
        self.body_timeout_s = body_timeout_s
        self._body_deadlines: _BodyDeadlines | None = None  # made on the first POST
        self.sse_retry_ms = sse_retry_ms
        self._sessions: dict[str, _Session] = {}
        self._streams: set[_Outbox] = set()
        # The recent events of legacy SSE streams, every session's: one bound for them all.
        self.events = EventStore()
        self._lock = threading.Lock()
        # conn.receive may run a plain tool right there, so it never runs on the event loop.
        self._executor = ThreadPoolExecutor(max_threads, thread_name_prefix="mcpkit-http")
        self._quick = _QuickHandlers(server)
        # Every 2026-07-28 request that cannot wait and opens no stream is served by this
        # one Connection (see _post_modern): such a request keeps nothing on it.
        self._stateless = server.connect(_nowhere)
        self._stateless.transport = "http"
        self._stateless.stateless = True
        self.closed = False

    # -- ASGI entry ------------------------------------------------------------------

    async def __call__(self, scope: Scope, receive: Receive, send: AsgiSend) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        if scope["type"] != "http":
            return  # websockets are not part of MCP
        try:
            await self._http(scope, receive, send)
        except HttpError as exc:
            await _send_json(send, exc.status, _error_body(exc), exc.headers)
        except _ClientGone:
            pass
        except Exception:
            # A bug of ours: still a JSON-RPC body, never uvicorn's plain-text page. (If the
            # response had started, this send fails and uvicorn closes the connection.)
            log.exception("failed on a %s request", scope.get("method"))
            with contextlib.suppress(Exception):
                await _send_json(send, 500, _error_body(HttpError(
                    500, jsonrpc.INTERNAL_ERROR, "Internal error; the server log has the details")))

    async def _lifespan(self, receive: Receive, send: AsgiSend) -> None:
        while True:
            event = await receive()
            if event["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif event["type"] == "lifespan.shutdown":
                self.close()
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def _http(self, scope: Scope, receive: Receive, send: AsgiSend) -> None:
        headers = RequestHeaders(scope["headers"])
        headers.refuse_repeated()
        if self.auth is not None and scope["path"] in self.auth.metadata_paths:
            await self._resource_metadata(scope, send)  # public: before the checks
            return
        if scope["path"].rstrip("/") != self.path:
            raise HttpError(404, jsonrpc.INVALID_REQUEST,
                            f"No MCP endpoint at {scope['path']}; it is at {self.path}")
        self.guard.check(headers)
        if self.auth is not None:
            _request_auth.set(await self.auth.authorize(headers))
        if self.closed:
            raise HttpError(503, jsonrpc.INVALID_REQUEST, "The server is shutting down")
        method = scope["method"]
        if method == "POST":
            await self._post(receive, send, headers)
        elif method == "GET":
            await self._get(receive, send, headers)
        elif method == "DELETE":
            await self._delete(send, headers)
        else:
            raise HttpError(405, jsonrpc.INVALID_REQUEST, f"{method} is not used by MCP",
                            headers=[("allow", "GET, POST, DELETE")])

    async def _resource_metadata(self, scope: Scope, send: AsgiSend) -> None:
        """RFC 9728: where tokens for this server come from."""
        assert self.auth is not None
        if scope["method"] != "GET":
            raise HttpError(405, jsonrpc.INVALID_REQUEST, "The metadata is read with GET",
                            headers=[("allow", "GET")])
        await _send_json(send, 200, self.auth.metadata(), [("cache-control", "max-age=300")])

    async def _read_body(self, receive: Receive, headers: RequestHeaders) -> bytes:
        length = headers.get("content-length")
        if length is not None and length.isdigit() and int(length) > self.max_body_size:
            raise self._too_large()
        # The deadline cancels this task (rather than asyncio.timeout, 4.7 us a request), and
        # one timer keeps every body's deadline on this loop (see _BodyDeadlines).
        task = asyncio.current_task()
        assert task is not None
        deadlines = self._body_deadlines
        if deadlines is None or deadlines.loop is not task.get_loop():
            # (A deadline already kept by the one replaced stays with it and its timer.)
            deadlines = self._body_deadlines = _BodyDeadlines(task.get_loop())
        deadlines.start(task, self.body_timeout_s)
        try:
            return await self._receive_body(receive)
        except asyncio.CancelledError:
            if task not in deadlines.late:
                raise  # not ours: the server is stopping, or the task was cancelled
            task.uncancel()
            raise HttpError(408, jsonrpc.INVALID_REQUEST,
                            f"The request body did not arrive within {self.body_timeout_s:g} s",
                            headers=[("connection", "close")]) from None
        finally:
            deadlines.end(task)

    async def _receive_body(self, receive: Receive) -> bytes:
        chunks: list[bytes] = []
        size = 0
        while True:
            event = await receive()
            if event["type"] == "http.disconnect":
                raise _ClientGone
            chunk = event.get("body", b"")
            size += len(chunk)
            if size > self.max_body_size:
                raise self._too_large()
            if not event.get("more_body"):
                return b"".join((*chunks, chunk)) if chunks else chunk
            chunks.append(chunk)

    def _too_large(self) -> HttpError:
        return HttpError(413, jsonrpc.INVALID_REQUEST,
                         f"Request body larger than {self.max_body_size} bytes")

    # -- POST: one client message ------------------------------------------------------

    async def _post(self, receive: Receive, send: AsgiSend, headers: RequestHeaders) -> None:
        self.guard.check_post(headers)
        body = await self._read_body(receive, headers)
        try:
            message = loads(body)  # the same parser as stdio: no NaN, no stack overflow
        except FramingError as exc:
            raise HttpError(400, jsonrpc.PARSE_ERROR, f"Parse error: {exc}") from None
        if isinstance(message, list):
            await self._post_batch(receive, send, headers, message)
            return
        try:
            kind = jsonrpc.classify(message)
        except jsonrpc.JsonRpcError as exc:
            raise HttpError(400, exc.code, exc.message, jsonrpc.request_id_of(message)) from None
        if _era_of(message, headers) == "modern":
            await self._post_modern(receive, send, headers, message, kind)
        else:
            await self._post_legacy(receive, send, headers, message, kind)

    async def _post_modern(self, receive: Receive, send: AsgiSend, headers: RequestHeaders,
                           message: dict[str, Any], kind: str) -> None:
        if kind in ("result", "error"):
            raise HttpError(400, jsonrpc.INVALID_REQUEST,
                            "2026-07-28 servers send no requests, so there is nothing to answer")
        if kind == "notification":
            # The core defines no client notifications over HTTP: closing a stream cancels.
            await _send_empty(send, 202)
            return
        request_id = message["id"]
        try:  # the params' shape first: the checks below read them
            params_mod.check_meta(message["method"], message.get("params") or {})
        except jsonrpc.JsonRpcError as exc:
            raise HttpError(400, exc.code, exc.message, request_id, exc.data) from None
        if _meta_complete(message):  # an incomplete _meta is -32602, which comes first
            problem = self._mirror.problem(headers, message)
            if problem:
                raise HttpError(400, jsonrpc.HEADER_MISMATCH, problem, request_id)
        if message["method"] == "initialize":
            # Sent as a modern request (its headers or _meta say so), where initialize does
            # not exist; the Connection would otherwise start a legacy handshake.
            raise HttpError(404, jsonrpc.METHOD_NOT_FOUND, "Method not found: initialize",
                            request_id, {"method": "initialize"})
        outbox = _Outbox(asyncio.get_running_loop())
        stateless = self._stateless
        if message["method"] not in _OWN_CONNECTION and not stateless.may_wait(message):
            # A handler without a Context neither waits (no call in flight to cancel, no
            # question to the client) nor opens a stream, and its answer goes to the outbox:
            # nothing of this request stays on the connection, so one is shared by all of
            # them rather than made and closed for each (about 2 us a request).
            stateless.tracing = tracing.tracer()  # as a new Connection would see it
            await self._answer(receive, send, stateless, message, outbox, modern=True)
            return
        connection = self.server.connect(outbox.put)
        connection.transport = "http"
        # At shutdown a listen ends with its result; a call is just cancelled.
        outbox.on_shutdown = lambda: connection.cancel(request_id, respond=True)
        try:
            await self._answer(receive, send, connection, message, outbox, modern=True)
        finally:
            # The connection sends into the outbox and the outbox's shutdown reaches the
            # connection: break that cycle, or every request leaves garbage for the
            # collector (13 objects, and collections that grow with the load).
            outbox.on_shutdown = None
            if connection.idle:
                connection.close()  # nothing to wait for: no thread hop
            else:
                self._spawn(connection.close)

    async def _post_legacy(self, receive: Receive, send: AsgiSend, headers: RequestHeaders,
                           message: dict[str, Any], kind: str) -> None:
        request_id = message.get("id") if kind == "request" else None
        session_id = headers.get(H_SESSION)
        if session_id is None:
            if kind == "request" and message["method"] == "initialize":
                await self._initialize(send, message)
                return
            raise HttpError(400, jsonrpc.INVALID_REQUEST,
                            "Missing Mcp-Session-Id header: send initialize first "
                            "(2025-11-25 and earlier), or put the per-request "
                            f'params._meta["{versions.META_PROTOCOL_VERSION}"] on every '
                            "request (2026-07-28)", request_id)
        session = self._session(session_id, headers, request_id)
        connection = session.connection
        if kind != "request":
            # A notification, or the client's answer to one of our requests: 202, no body.
            await self._take(connection, message)
            if message.get("method") == "notifications/cancelled":
                # No response will come for a cancelled call, so end its POST response now.
                target = (message.get("params") or {}).get("requestId")
                if isinstance(target, str | int) and target in session.requests:
                    session.requests[target].put(_END)
            await _send_empty(send, 202)
            return
        outbox = _Outbox(asyncio.get_running_loop())
        session.requests[request_id] = outbox
        recorder = _Recorder(self.events, session, "call")
        try:
            await self._answer(receive, send, connection, message, outbox, modern=False,
                               reply=_Reply(outbox), recorder=recorder)
        finally:
            session.requests.pop(request_id, None)
            if recorder.stream_id is not None:
                session.recorders.pop(recorder.stream_id, None)

    async def _post_batch(self, receive: Receive, send: AsgiSend, headers: RequestHeaders,
                          batch: list[Any]) -> None:
        """A JSON-RPC batch, which only revision 2025-03-26 has (so: inside such a session)."""
        session_id = headers.get(H_SESSION)
        session = self._session(session_id, headers) if session_id is not None else None
        if not batch or session is None or session.connection.protocol_version != "2025-03-26":
            raise HttpError(400, jsonrpc.INVALID_REQUEST,
                            "A JSON-RPC batch must be non-empty and sent in a session of "
                            "revision 2025-03-26, the only one with batches; otherwise send "
                            "one message per POST")
        answered = False  # whether anything in it gets a response (as the Connection counts)
        for item in batch:
            try:
                answered |= jsonrpc.classify(item) == "request"
            except jsonrpc.JsonRpcError:
                answered = True
        if not answered:  # notifications and responses only
            await self._take(session.connection, batch)
            await _send_empty(send, 202)
            return
        outbox = _Outbox(asyncio.get_running_loop())
        await self._answer(receive, send, session.connection, batch, outbox, modern=False)

    async def _take(self, connection: Connection, message: Any) -> None:
        """Hand the server what gets no response (the caller answers 202), off the loop.
        (``receive`` logs its own failures: nothing is owed to the client for these.)"""
        await asyncio.get_running_loop().run_in_executor(
            self._executor, connection.receive, message)

    async def _initialize(self, send: AsgiSend, message: dict[str, Any]) -> None:
        self._purge_idle_sessions()
        self._make_room_for_a_session(message.get("id"))
        session = _Session(secrets.token_urlsafe(32))  # 256 random bits, URL-safe ASCII
        auth = _request_auth.get()
        session.owner = auth.owner if auth is not None else None
        connection = self.server.connect(session.push)
        connection.transport = "http"
        session.connection = connection
        replies: list[dict[str, Any]] = []
        # initialize is answered inline (no tool runs), so collecting the replies is enough.
        await asyncio.get_running_loop().run_in_executor(
            self._executor, connection.receive, message, replies.append)
        response = next(filter(_final_for(message), replies), None)
        if response is None or "error" in response:
            self._spawn(connection.close)
            await _send_json(send, 200, response or jsonrpc.error_response(
                message["id"], jsonrpc.INTERNAL_ERROR, "initialize produced no response"))
            return
        with self._lock:
            self._sessions[session.id] = session
        await _send_json(send, 200, response, [(H_SESSION, session.id)])

    def _session(self, session_id: str, headers: RequestHeaders,
                 request_id: jsonrpc.RequestId | None = None) -> _Session:
        """The live session a request names, or the HTTP error the spec gives."""
        with self._lock:
            session = self._sessions.get(session_id)
        auth = _request_auth.get()
        if session is not None and session.owner != (auth.owner if auth else None):
            log.warning("session %s... used with another user's token", session_id[:8])
            session = None  # not theirs: as if it did not exist
        if session is None or session.ended:
            raise HttpError(404, jsonrpc.INVALID_REQUEST,
                            "Session not found (it ended or never existed): initialize again",
                            request_id)
        session.last_seen = time.monotonic()
        version = headers.get(H_VERSION)
        negotiated = session.connection.protocol_version
        # The header is optional (absent means 2025-03-26); when sent it must be the one
        # this session negotiated.
        if version is not None and version != negotiated:
            raise HttpError(400, jsonrpc.INVALID_REQUEST,
                            f"MCP-Protocol-Version {version!r} is not the version this session "
                            f"negotiated ({negotiated})", request_id)
        return session

    def _spawn(self, work: Callable[..., Any], *args: Any) -> None:
        """Run ``work`` on the executor, or on a thread of its own once close() shut it down
        (a response still open then ends after it, and must close its Connection)."""
        try:
            self._executor.submit(work, *args)
        except RuntimeError:
            threading.Thread(target=work, args=args, daemon=True).start()

    def _purge_idle_sessions(self) -> None:
        cutoff = time.monotonic() - self.session_idle_timeout_s
        with self._lock:
            idle = [s for s in self._sessions.values()
                    if s.last_seen < cutoff and not s.requests and s._stream is None]
            for session in idle:
                del self._sessions[session.id]
        for session in idle:
            log.info("ending idle session %s...", session.id[:8])
            session.ended = True
            self.events.forget(session.id)
            self._spawn(session.connection.close)

    def _make_room_for_a_session(self, request_id: jsonrpc.RequestId | None) -> None:
        """At ``max_sessions``, end the session idle the longest; 503 if every one is busy."""
        with self._lock:
            if len(self._sessions) < self.max_sessions:
                return
            idle = [s for s in self._sessions.values() if not s.requests and s._stream is None]
            oldest = min(idle, key=lambda s: s.last_seen, default=None)
            if oldest is not None:
                del self._sessions[oldest.id]
        if oldest is None:
            raise HttpError(503, jsonrpc.INVALID_REQUEST,
                            f"Too many sessions ({self.max_sessions}), all of them busy: try "
                            "again later, or DELETE sessions you no longer use", request_id,
                            headers=[("retry-after", "5")])
        log.warning("%d sessions: ending %s..., idle the longest", self.max_sessions,
                    oldest.id[:8])
        oldest.end_streams()
        self.events.forget(oldest.id)
        self._spawn(oldest.connection.close)

    # -- GET and DELETE (legacy sessions only) ------------------------------------------

    async def _get(self, receive: Receive, send: AsgiSend, headers: RequestHeaders) -> None:
        session_id = headers.get(H_SESSION)
        if session_id is None:
            raise HttpError(405, jsonrpc.INVALID_REQUEST,
                            "GET opens a session's server-to-client stream (2025-11-25 and "
                            "earlier) and needs Mcp-Session-Id; 2026-07-28 uses "
                            "subscriptions/listen instead", headers=[("allow", "POST")])
        if not accepts(headers, "text/event-stream"):
            raise HttpError(406, jsonrpc.INVALID_REQUEST, "Accept must list text/event-stream")
        session = self._session(session_id, headers)
        last_event_id = headers.get("last-event-id")
        stream_id, missed = None, []
        if last_event_id is not None:
            stream_id, missed = self._missed(session, last_event_id)
            if self.events.label(stream_id) == "call":
                await self._resume_call(receive, send, session, stream_id, missed)
                return
        outbox = _Outbox(asyncio.get_running_loop())
        if not session.attach(outbox):
            raise HttpError(409, jsonrpc.INVALID_REQUEST,
                            "This session already has its GET stream open")
        # The session's own stream: resumed, it goes on under the same stream id.
        recorder = _Recorder(self.events, session, "get", stream_id)
        try:
            async with self._open(receive, outbox):
                await self._stream(send, outbox, None, lambda item: False, recorder, missed)
        finally:
            session.detach(outbox)

    async def _delete(self, send: AsgiSend, headers: RequestHeaders) -> None:
        session_id = headers.get(H_SESSION)
        if session_id is None:
            raise HttpError(405, jsonrpc.INVALID_REQUEST,
                            "DELETE ends a session and needs Mcp-Session-Id",
                            headers=[("allow", "POST")])
        session = self._session(session_id, headers)
        with self._lock:
            self._sessions.pop(session.id, None)
        session.end_streams()
        self.events.forget(session.id)
        self._spawn(session.connection.close)
        await _send_empty(send, 204)

    # -- answering a request -------------------------------------------------------------

    async def _answer(self, receive: Receive, send: AsgiSend, connection: Connection,
                      message: dict[str, Any] | list[Any], outbox: _Outbox, *,
                      modern: bool, reply: Callable[[Any], None] | None = None,
                      recorder: _Recorder | None = None) -> None:
        """Feed one request (or batch) to ``connection``; write what comes out as the
        response (an SSE one resumable when there is a ``recorder``)."""
        key = self._quick.key(message)
        first = _IDLE
        reply = reply or outbox.put
        auth = _request_auth.get()
        if auth is not None and self.auth is not None:
            self.auth.check_message(auth, message)  # the scopes this very request needs
            reply = _Authorized(reply, auth)
        inline = self._quick.inline(key)
        if modern and not inline and connection.may_wait(message):
            # A handler that takes a Context may wait (for its cancellation, say): it runs
            # on the executor's thread, which may (starting a thread for it would cost more
            # than the rest of the request), until it has shown it answers quickly.
            self._spawn(_receive, connection, message, reply, self._quick, key, True)
        elif inline:
            _receive(connection, message, reply, self._quick, key, modern)
            first = outbox.ready()
        else:
            self._spawn(_receive, connection, message, reply, self._quick, key)
        is_final = _final_for(message)
        answered = False
        if first is not _IDLE:
            if is_final(first):  # answered inline: no stream to watch
                await _send_json(send, _status_of(first, modern), first)
                return
            if outbox.holds(is_final):
                # Answered inline after notifications (a progress report): all of it is
                # queued, so the stream is written (in one write) without waiting, or
                # watching the client.
                await self._stream(send, outbox, first, is_final, recorder)
                return
        try:
            async with self._open(receive, outbox):
                if first is _IDLE:
                    first = await outbox.get()
                if is_final(first):
                    await _send_json(send, _status_of(first, modern), first)
                    answered = True
                elif first is not _DISCONNECTED:
                    answered = is_final(
                        await self._stream(send, outbox, first, is_final, recorder))
        finally:
            if modern and not answered and not connection.stateless:
                # 2026-07-28: a client that closes the stream cancels its request (and a
                # listen ends); so does our own shutdown. Unknown ids are ignored. (The
                # shared connection tracks no request: another client's may have this id.)
                connection.cancel(message["id"])  # modern messages are never batches

    @contextlib.asynccontextmanager
    async def _open(self, receive: Receive, outbox: _Outbox) -> AsyncIterator[None]:
        """While a response is open: notice the client leaving, and let close() end it."""
        watcher = asyncio.ensure_future(_watch_disconnect(receive, outbox))
        with self._lock:
            self._streams.add(outbox)
        try:
            yield
        finally:
            watcher.cancel()
            outbox.discard()
            with self._lock:
                self._streams.discard(outbox)

    async def _stream(self, send: AsgiSend, outbox: _Outbox, first: Any,
                      is_final: Callable[[Any], bool], recorder: _Recorder | None = None,
                      missed: Iterable[tuple[str, bytes]] = ()) -> Any:
        """Write an SSE response until ``is_final`` says a message completes it, the
        client leaves or the response is ended. Returns what ended it.

        With a ``recorder`` the events carry ids, and a call's stream that ends before its
        answer (the client left, or the handler closed it) is drained into the event store
        until the answer, for the client to resume. ``missed``: events to send again
        first (a resumed stream's)."""
        await _start_sse(send)
        item = first
        ended = False  # the last event went out with the end of the body, in one write
        # Events go out together when the outbox has nothing more for now: a burst (the
        # priming event and the first message, a progress report and the result) costs one
        # write, and nothing is held while the stream waits.
        pending = [_with_id(event_id, payload) for event_id, payload in missed]
        try:
            if recorder is not None and recorder.label == "call":
                # (A GET stream's every event has an id: it needs no priming.)
                pending.append(recorder.priming(self.sse_retry_ms))
            while item is not _DISCONNECTED and item is not _END:
                if item is _IDLE:
                    # A comment line: keeps proxies from timing the stream out, and lets
                    # us notice a client that went away.
                    pending.append(b": keepalive\n\n")
                elif item is _BREAK:
                    if recorder is not None:
                        break
                elif item is not None:
                    event = _sse_event(item) if recorder is None else recorder.event(item)
                    if event is not None:
                        pending.append(event)
                    if is_final(item):
                        ended = True
                        await send({"type": "http.response.body", "body": b"".join(pending),
                                    "more_body": False})
                        if recorder is not None:
                            recorder.finish()
                        return item
                item = outbox.ready()
                if item is _IDLE:
                    if pending:
                        await _write(send, b"".join(pending))
                        pending.clear()
                    item = await outbox.get(self.keepalive_s)
        except OSError:
            item = _DISCONNECTED
        finally:
            try:
                if not ended:
                    await send({"type": "http.response.body", "body": b"".join(pending),
                                "more_body": False})
            except OSError:
                pass  # the client is gone: nothing left to end
        if recorder is not None and recorder.label == "call" and item is not _END:
            return await self._drain(outbox, recorder, is_final)
        return item

    async def _drain(self, outbox: _Outbox, recorder: _Recorder,
                     is_final: Callable[[Any], bool]) -> Any:
        """Record what a call sends after its response closed, until its answer."""
        while True:
            item = await outbox.get(self.keepalive_s)
            if item is _END:  # the session ended: no answer will come
                recorder.finish()
                return item
            if item is _IDLE or item is _DISCONNECTED or item is _BREAK or item is None:
                continue
            recorder.event(item)
            if is_final(item):
                recorder.finish()
                return item

    def _missed(self, session: _Session, last_event_id: str) -> tuple[str, list[Any]]:
        """The stream a ``Last-Event-ID`` names, and its events after that one."""
        try:
            return self.events.after(last_event_id, session.id)
        except UnknownEvent as exc:
            raise HttpError(400, jsonrpc.INVALID_REQUEST,
                            f"Last-Event-ID: {exc}; send GET without it for a fresh stream, "
                            "or repeat the request") from None

    async def _resume_call(self, receive: Receive, send: AsgiSend, session: _Session,
                           stream_id: str, missed: list[tuple[str, bytes]]) -> None:
        """GET with the ``Last-Event-ID`` of a call's stream: what it said after that
        event, then (if the call still runs) what it says next, until its answer."""
        follower = _Outbox(asyncio.get_running_loop())
        recorder = session.recorders.get(stream_id)
        live = recorder is not None and not self.events.finished(stream_id)
        if live:
            assert recorder is not None
            recorder.follower = follower  # no await since after(): nothing missed between
        await _start_sse(send)
        try:
            for event_id, payload in missed:
                await _write(send, _with_id(event_id, payload))
            if live:
                async with self._open(receive, follower):
                    item = await follower.get(self.keepalive_s)
                    while item is not _END and item is not _DISCONNECTED:
                        await _write(send, b": keepalive\n\n" if item is _IDLE else item)
                        item = await follower.get(self.keepalive_s)
        except OSError:
            pass
        finally:
            if recorder is not None and recorder.follower is follower:
                recorder.follower = None
            with contextlib.suppress(OSError):
                await send({"type": "http.response.body", "body": b"", "more_body": False})

    # -- shutting down -------------------------------------------------------------------

    def close(self) -> None:
        """End every open stream and session. Call it before stopping the HTTP server, so
        that long-lived streams (listen, GET) do not hold the shutdown up."""
        if self.closed:
            return
        self.closed = True
        with self._lock:
            streams = list(self._streams)
            sessions = list(self._sessions.values())
            self._sessions.clear()
        for stream in streams:  # every open response, the sessions' included
            stream.shutdown()
        for session in sessions:
            session.ended = True
            self._spawn(session.connection.close)
        self._spawn(self._stateless.close)
        self._executor.shutdown(wait=False)


def _nowhere(message: dict[str, Any]) -> None:
    """The shared modern Connection's own channel: 2026-07-28 has no session to send on
    (a request's messages go to its reply; list changes to listen streams)."""


def _receive(connection: Connection, message: dict[str, Any], reply: Callable[[Any], None],
             quick: _QuickHandlers, key: tuple[str, str | None] | None,
             modern: bool = False) -> None:
    """``connection.receive``, timed for :class:`_QuickHandlers`: a bug must not leave the
    client waiting. ``modern``: a 2026-07-28 request, whose envelope and ``_meta`` the
    transport has checked. Either way a handler may block this thread, unless it may wait
    for another message of a legacy session (the connection gives that one a thread)."""
    started = time.perf_counter()
    try:
        if modern:
            connection.receive_request(message, reply, may_block=True)
        else:
            connection.receive(message, reply, may_block=True)
    except Exception:
        log.exception("the server failed on %s", message.get("method"))
        reply(jsonrpc.error_response(message.get("id"), jsonrpc.INTERNAL_ERROR,
                                     "Internal error; the server log has the details"))
    quick.record(key, time.perf_counter() - started)


def _status_of(response: dict[str, Any], modern: bool) -> int:
    """2026-07-28 gives some errors their own HTTP status; everything else travels as 200."""
    if modern and "error" in response:
        return _MODERN_ERROR_STATUS.get(response["error"].get("code"), 200)
    return 200


async def _write(send: AsgiSend, chunk: bytes) -> None:
    await send({"type": "http.response.body", "body": chunk, "more_body": True})


async def _watch_disconnect(receive: Receive, outbox: _Outbox) -> None:
    """Tell the outbox when the client goes away (the body has been read by now)."""
    while True:
        event = await receive()
        if event["type"] == "http.disconnect":
            outbox.put(_DISCONNECTED)
            return


def _meta_complete(message: dict[str, Any]) -> bool:
    """Whether the request has the ``_meta`` fields every modern request must carry."""
    meta = (message.get("params") or {}).get("_meta")
    return (isinstance(meta, dict) and versions.META_PROTOCOL_VERSION in meta
            and versions.META_CLIENT_CAPABILITIES in meta)


def _era_of(message: dict[str, Any], headers: RequestHeaders) -> versions.Era:
    """Which era a POSTed message belongs to (a dual-era endpoint serves both).

    The header is the strongest sign; then a session id; then the body's ``_meta``. A
    message with none of them is legacy only if it is ``initialize``; anything else is a
    modern request with its ``_meta`` missing, which the server answers with -32602.
    """
    version = headers.get(H_VERSION)
    if version is not None and versions.era_of(version) == "modern":
        return "modern"
    if headers.get(H_SESSION) is not None:
        return "legacy"
    meta = (message.get("params") or {}).get("_meta") if "method" in message else None
    if isinstance(meta, dict) and versions.META_PROTOCOL_VERSION in meta:
        return "modern"
    if message.get("method") == "initialize" or version is not None:
        return "legacy"
    return "modern"


# -- running it ------------------------------------------------------------------------


def create_app(server: Server, **options: Any) -> McpHttpApp:
    """The ASGI application for ``server`` (options: see :class:`McpHttpApp`)."""
    return McpHttpApp(server, **options)


def with_bind_host(host: str, allowed_hosts: Iterable[str] | None) -> list[str]:
    """Serving a specific address means clients may use it as Host: allow it too."""
    extra = list(allowed_hosts or ())
    if host not in ("0.0.0.0", "::", "") and host not in LOOPBACK_NAMES:
        extra.append(host)
    return extra


def uvicorn_server(app: McpHttpApp, **config: Any) -> Any:
    """A uvicorn server that ends the app's streams as its shutdown begins.

    uvicorn waits for open responses before it tells the app (lifespan) to stop, and a
    listen or GET stream never ends by itself.
    """
    import uvicorn  # only when HTTP is used: keeps `import mcpkit` light

    class Server(uvicorn.Server):
        async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
            app.close()
            await super().shutdown(sockets)

    config.setdefault("http", PROTOCOL)
    return Server(uvicorn.Config(app, **config))


class HttpServerThread:
    """An MCP server over HTTP under uvicorn, on a background thread.

    For notebooks and tests (the notebook's own event loop stays free)::

        with HttpServerThread(server) as http:      # port 0: a free port is picked
            print(http.url)                          # http://127.0.0.1:PORT/mcp
    """

    def __init__(self, server: Server, host: str = DEFAULT_HOST, port: int = 0, *,
                 log_level: str = "warning", **options: Any) -> None:
        options["allowed_hosts"] = with_bind_host(host, options.get("allowed_hosts"))
        self.app = McpHttpApp(server, **options)
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self._socket = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        self._socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._socket.bind((host, port))
        self.host = host
        self.port = self._socket.getsockname()[1]
        # asyncio's own loop, not uvloop: a loop on a background thread (a notebook, a test)
        # must give back every file descriptor when it stops, which uvloop's does only later.
        self._uvicorn = uvicorn_server(self.app, log_level=log_level, lifespan="off",
                                        timeout_graceful_shutdown=2, loop="asyncio")
        self._thread = threading.Thread(target=self._uvicorn.run,
                                        kwargs={"sockets": [self._socket]},
                                        name=f"mcpkit-http-{self.port}", daemon=True)

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}{self.app.path}"

    def start(self, timeout: float = 10.0) -> HttpServerThread:
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not self._uvicorn.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"the HTTP server did not start on {self.url}")
            time.sleep(0.01)
        return self

    def stop(self, timeout: float = 5.0) -> None:
        """Stop uvicorn (open streams end first) and wait for its thread."""
        self._uvicorn.should_exit = True
        self._thread.join(timeout)
        self._socket.close()

    def __enter__(self) -> HttpServerThread:
        return self.start() if not self._thread.is_alive() else self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def serve_in_thread(server: Server, host: str = DEFAULT_HOST, port: int = 0,
                    **options: Any) -> HttpServerThread:
    """Start serving ``server`` on a background thread; ``.url`` says where, ``.stop()``."""
    return HttpServerThread(server, host, port, **options).start()
