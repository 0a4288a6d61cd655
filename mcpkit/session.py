"""An MCP client session without I/O: what to send, and what the answers mean.

    session = ClientSession(name="notes")
    steps = session.call_tool("notes_search", {"query": "mcp"})   # a procedure
    call = next(steps)             # Call(id=1, method="server/discover", ...): send it
    session.feed(b'{"jsonrpc":"2.0","id":1,"result":{...}}\\n')   # bytes that came back

Theory of operation
-------------------
This module is the whole of what an MCP client *decides*; :mod:`mcpkit.client` (threads)
and :mod:`mcpkit.aclient` (asyncio) only move bytes and wait. Nothing here reads a pipe, a
socket or a clock, or starts a thread: every input is a value handed in, every output a
value handed back, so the tests drive it with plain dicts.

Two directions, two interfaces:

- **Incoming**: the front feeds what arrived, :meth:`ClientSession.feed` (bytes, decoded
  with the session's framing) or :meth:`ClientSession.receive` (one decoded message, as
  HTTP delivers them). A response settles its request right there: the request's *waiter*
  (any object with ``id``, ``method``, ``on_progress``, ``notify_cancel`` and
  ``_resolve(response=None, error=None)``, which the front put in :attr:`pending`) is popped
  and resolved. Everything else comes back as *jobs* for the front to run in order:
  a :class:`Run` (call this callback) or a procedure (below). An :class:`Answer` (a legacy
  server's own request: sampling, elicitation, roots) is a procedure the front runs on
  its own, because it may wait for a human.
- **Outgoing**: what a client *does* is a **procedure**, a generator that yields *steps*
  and gets their outcome back: :class:`Call` (send this request, resume me with its
  result, or throw its error into me), :class:`Run` (call this user callback, resume me
  with what it returned), :class:`Send` (send this notification or response), and
  :class:`Cancel` (cancel that request). The era probe, ``input_required`` rounds, paged
  lists and the HTTP header retry are all procedures; a front needs one small loop to
  drive any of them, blocking or with ``await``.

State, all of it:

- ``pending``: request id -> waiter. Added by the front before a request is written,
  removed by whoever settles it: :meth:`receive` (its response), the front (a timeout or a
  cancel, :meth:`withdraw`) or :meth:`fail_all` (the session died). Every change is one
  ``dict`` operation, so a threaded front may call in from its reader and its callers at
  once: ``pop`` is atomic, exactly one of them wins.
- The era, decided once by :meth:`handshake` (``server/discover``, falling back to
  ``initialize`` by the 2026-07-28 rules for stdio and HTTP). In the modern era every
  request carries ``params._meta`` (``_base_meta``, and ``_meta_json`` its encoding,
  spliced into each request: it is half the cost of encoding a small one).
- ``_listens``: ``subscriptions/listen`` streams, by request id. Their acknowledgment (a
  notification) settles the waiter of the request; the stream stays open until the server
  answers it or the client cancels it.
- List caches, kind -> (items, expiry by the injected ``clock``). Valid while the server
  can announce changes (a legacy ``listChanged`` capability, or a modern listen stream it
  acknowledged), else for the ``ttlMs`` it gave. A ``list_changed`` drops the cache at
  once and queues one re-fetch job; per kind, at most one re-fetch is queued
  (``_refresh_queued``, cleared as it starts), so a storm costs two fetches, not one each.

The rules of each revision, and where they live:

- *legacy* (2024-11-05 .. 2025-11-25): ``initialize`` then ``notifications/initialized``
  (:meth:`ClientSession._initialize`); the server may send requests of its own
  (:class:`Answer` jobs); list changes are announced if the ``listChanged`` capability
  says so; a cancellation is a ``notifications/cancelled``, over stdio and HTTP alike.
- *modern* (2026-07-28): no handshake but ``server/discover``; every request carries the
  client's version, capabilities and identity in ``params._meta`` (:meth:`encode`); the
  server asks for input by answering ``input_required`` (:meth:`rounds`), never by a
  request; list changes and resource updates come on a ``subscriptions/listen`` stream;
  over HTTP, closing a request's stream is its cancellation (:meth:`cancel_message`), and
  tools with invalid ``x-mcp-header`` annotations are left out (:meth:`list`).

Validation of what comes in: an answer that is not JSON-RPC 2.0 fails the request it names
(:class:`ProtocolError`); a message over ``max_message_size`` is dropped by the decoder,
and the ``id`` in its first bytes (or, failing that, the only request waiting) fails with
:class:`ResponseTooLarge` at once, rather than with a timeout later. Other garbage is
counted (``junk_lines``) and skipped.
"""

from __future__ import annotations

import itertools
import json
import logging
from collections.abc import Callable, Generator, Mapping, Sequence
from typing import Any, NamedTuple, Protocol

from . import deprecations, jsonrpc, tracing, versions
from .framing import (
    DEFAULT_MAX_MESSAGE_SIZE,
    FramingError,
    MessageTooLarge,
    decoder_for,
    encode_json,
    encoder_for,
)
from .jsonrpc import JsonRpcError
from .transports.process import StdinTimeout, describe_exit  # exceptions and words only
from .versions import (
    META_CLIENT_CAPABILITIES,
    META_CLIENT_INFO,
    META_LOG_LEVEL,
    META_PROTOCOL_VERSION,
    META_SERVER_INFO,
    META_SUBSCRIPTION_ID,
)

log = logging.getLogger("mcpkit.client")

DEFAULT_TIMEOUT = 60.0
# The spec asks for "a reasonable timeout" on the probe. Slow-starting servers (a Python
# SDK server takes most of a second to import) must not be mistaken for silent legacy ones.
DEFAULT_PROBE_TIMEOUT = 10.0
DEFAULT_MAX_ROUNDS = 10
MAX_PAGES = 1000
_JUNK_WARNINGS = 5  # warn about this many bad stdout lines, then only log at debug
USE_DEFAULT: Any = object()  # "the session's default timeout"

# list kind -> (method, result key, the capability that announces changes)
LISTS = {
    "tools": ("tools/list", "tools", "tools"),
    "prompts": ("prompts/list", "prompts", "prompts"),
    "resources": ("resources/list", "resources", "resources"),
    "resourceTemplates": ("resources/templates/list", "resourceTemplates", "resources"),
}
_FEATURES = ("tools", "prompts", "resources")
_LOG_LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "notice": logging.INFO,
               "warning": logging.WARNING}

Callback = Callable[[dict[str, Any]], Any]


# -- errors ------------------------------------------------------------------------------


class ServerError(JsonRpcError):
    """The server answered a request with a JSON-RPC error (``code``, ``message``, ``data``)."""

    def __init__(self, code: int, message: str, data: Any = None, method: str | None = None):
        super().__init__(code, message, data)
        self.method = method

    def __str__(self) -> str:
        where = f"{self.method}: " if self.method else ""
        return f"{where}{self.message} (JSON-RPC error {self.code})"


class NotOffered(ServerError):
    """A request for a feature the server did not declare (its capabilities say so): the
    -32601 it would answer, raised here without sending anything."""

    def __init__(self, method: str, capability: str, server: str,
                 capabilities: Mapping[str, Any]) -> None:
        offered = ", ".join(sorted(capabilities)) or "nothing"
        super().__init__(jsonrpc.METHOD_NOT_FOUND,
                         f"{server} does not offer {capability} (its capabilities: {offered}); "
                         "nothing was sent", {"method": method}, method)
        self.capability = capability


# The capability a server must declare for each request a client may send it.
_CAPABILITY_FOR = {
    "tools/list": "tools", "tools/call": "tools",
    "resources/list": "resources", "resources/templates/list": "resources",
    "resources/read": "resources", "resources/subscribe": "resources",
    "resources/unsubscribe": "resources",
    "prompts/list": "prompts", "prompts/get": "prompts",
    "completion/complete": "completions", "logging/setLevel": "logging",
}


class SessionError(Exception):
    """A request could not complete for a reason other than the server's answer."""


class ConnectionClosed(SessionError, ConnectionError):
    """The server's process ended, or closed its stdout; over HTTP, the server cannot be
    reached or ended the session. The session is dead."""

    def __init__(self, server: str, returncode: int | None, stderr_tail: Sequence[str] = (),
                 reason: str = "the server closed the connection", method: str | None = None,
                 url: str | None = None) -> None:
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


def outcome(response: dict[str, Any], method: str) -> dict[str, Any]:
    """A settled request's result, or its error raised (:class:`ServerError`)."""
    result = response.get("result")
    if type(result) is dict:
        return result
    error = response.get("error")
    if isinstance(error, dict):
        raise ServerError(error.get("code", jsonrpc.INTERNAL_ERROR),
                          str(error.get("message", "")), error.get("data"), method)
    raise ProtocolError(f"malformed response to {method}: {str(response)[:200]}")


# -- what a procedure asks its front to do ---------------------------------------------


class Call(NamedTuple):
    """Send this request and resume with its result (or throw its error in). ``timeout``
    (None: for ever) bounds the write and the wait together."""

    id: int
    method: str
    params: dict[str, Any]
    on_progress: Callable[[dict[str, Any]], Any] | None = None
    timeout: float | None = None
    stamp: bool = True  # add the modern era's _meta (not on the probe itself)
    notify_cancel: bool = True  # tell the server if it times out (not before initialize)


class Run(NamedTuple):
    """Call a user callback (it may return an awaitable: an async front awaits it)."""

    function: Callable[..., Any]
    args: tuple[Any, ...]


class Send(NamedTuple):
    """Send a notification or a response; ``timeout`` None is the front's own default."""

    message: dict[str, Any]
    timeout: float | None = None


class Cancel(NamedTuple):
    """Cancel a request nobody waits on in :attr:`ClientSession.pending` (a listen)."""

    request_id: int
    reason: str


class Answer(NamedTuple):
    """A job to run on its own: answering a legacy server's request may wait for a human."""

    steps: Generator[Any, Any, None]


Procedure = Generator[Any, Any, Any]
_new_tuple = tuple.__new__


class Waiter(Protocol):
    id: int
    method: str
    on_progress: Callable[[dict[str, Any]], Any] | None
    notify_cancel: bool

    def _resolve(self, response: dict[str, Any] | None = None,
                 error: BaseException | None = None) -> None: ...


class _Traced:
    """A waiter whose request has a span: settling it ends the span (see mcpkit.tracing)."""

    __slots__ = ("inner", "span", "tracing", "id", "method", "on_progress", "notify_cancel")

    def __init__(self, inner: Waiter, span: Any, tracing: tracing.Tracing) -> None:
        self.inner, self.span, self.tracing = inner, span, tracing
        self.id, self.method = inner.id, inner.method
        self.on_progress, self.notify_cancel = inner.on_progress, inner.notify_cancel

    def __getattr__(self, name: str) -> Any:  # what a front keeps on its own waiters
        return getattr(self.inner, name)

    def _resolve(self, response: dict[str, Any] | None = None,
                 error: BaseException | None = None) -> None:
        failed = response.get("error") if response is not None else None
        self.tracing.end(self.span, type(error).__name__ if error is not None else
                         str(failed.get("code")) if isinstance(failed, dict) else None)
        self.inner._resolve(response, error)


class HttpTools(Protocol):
    """What the session needs of the HTTP transport: the 2026-07-28 ``x-mcp-header``
    bookkeeping (tools with invalid annotations are left out of ``tools/list``)."""

    rejected_tools: dict[str, str]

    def open_event_stream(self) -> Any: ...

    def accept_tools(self, tools: list[dict[str, Any]]) -> list[dict[str, Any]]: ...


# -- subscriptions -----------------------------------------------------------------------


class Subscription:
    """Notifications about resources (and, modern, list changes) until :meth:`close`.

    Modern era: one ``subscriptions/listen`` request; ``granted`` is the part of the
    request the server acknowledged. Legacy era: ``resources/subscribe`` per URI.
    ``callback(uri, params)`` runs on the front's callback runner for each update.
    """

    def __init__(self, client: Any, request_id: int | None, uris: list[str],
                 notifications: dict[str, Any],
                 callback: Callable[[str, dict[str, Any]], Any] | None) -> None:
        self.client = client  # the front: closing needs I/O
        self.id = request_id
        self.uris = uris
        self.notifications = notifications
        self.callback = callback
        self.granted: dict[str, Any] = {}
        self.acknowledged = False
        self.active = True
        self.error: BaseException | None = None

    def close(self) -> Any:
        """End it (on an AsyncClient: ``await sub.close()``)."""
        if self.active:
            return self.client._end_subscription(self)
        return None

    def __enter__(self) -> Subscription:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> Subscription:
        return self

    async def __aexit__(self, *exc: object) -> None:
        closing = self.close()
        if closing is not None:
            await closing

    def __repr__(self) -> str:
        return f"<Subscription {self.id} {self.uris} {'active' if self.active else 'ended'}>"


# -- the session -------------------------------------------------------------------------


class ClientSession:
    """The state and rules of one client session (see the module docstring).

    ``transport`` is "stdio" or "http" (cancellation differs). ``sampling``,
    ``elicitation`` and ``roots`` answer the server's questions and decide the
    capabilities declared; the ``on_*`` callbacks are handed back in :class:`Run` jobs.
    ``clock`` (a monotonic one, in seconds) ages list caches that have a ``ttlMs``.
    """

    def __init__(
        self,
        *,
        name: str = "server",
        transport: str = "stdio",
        url: str | None = None,
        framing: str = "ndjson",
        max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
        version: str | None = None,
        timeout: float | None = DEFAULT_TIMEOUT,
        probe_timeout: float = DEFAULT_PROBE_TIMEOUT,
        client_info: dict[str, Any] | None = None,
        sampling: Callback | None = None,
        elicitation: Callback | None = None,
        capabilities: Mapping[str, Any] | None = None,
        roots: Sequence[dict[str, Any]] | Callable[[], Any] | None = None,
        log_level: str | None = None,
        listen: bool = True,
        max_rounds: int = DEFAULT_MAX_ROUNDS,
        on_notification: Callable[[str, dict[str, Any]], Any] | None = None,
        on_log: Callable[[dict[str, Any]], Any] | None = None,
        on_list_changed: Callable[[str], Any] | None = None,
        http_tools: HttpTools | None = None,
        clock: Callable[[], float] = lambda: 0.0,
    ) -> None:
        if version in ("legacy", "modern"):
            version = versions.LATEST_LEGACY_VERSION if version == "legacy" \
                else versions.LATEST_VERSION
        if version is not None and not versions.is_supported(version):
            raise ValueError(f"unsupported protocol version {version!r}; one of "
                             f"{', '.join(versions.SUPPORTED_VERSIONS)}")
        if log_level is not None and log_level not in versions.LOG_LEVELS:
            raise ValueError(f"unknown log level {log_level!r}")
        self.name = name
        self.transport = transport
        self.url = url
        self.requested_version = version
        self.timeout = timeout
        self.probe_timeout = probe_timeout
        self.client_info = client_info or {"name": "mcpkit", "version": versions.PACKAGE_VERSION}
        self.sampling = sampling
        self.elicitation = elicitation
        self.extra_capabilities = dict(capabilities or {})
        self.roots = roots
        self.log_level = log_level
        self.listen = listen
        self.max_rounds = max_rounds
        self.on_notification = on_notification
        self.on_log = on_log
        self.on_list_changed = on_list_changed
        self.http_tools = http_tools
        self.clock = clock
        # OpenTelemetry, if the application uses it (mcpkit.tracing): a CLIENT span per
        # request, from call() until its waiter is settled or withdrawn.
        self.tracing = tracing.tracer()
        self._spans: dict[int, Any] = {}

        # What the handshake learns.
        self.era: versions.Era | None = None
        self.protocol_version: str | None = None
        self.server_info: dict[str, Any] = {}
        self.server_capabilities: dict[str, Any] = {}
        self.instructions: str | None = None
        self.junk_lines = 0  # stdout lines that were not JSON-RPC

        self.framing = framing
        self.encode_message = encoder_for(framing)
        self._decoder = decoder_for(framing, max_message_size)
        self._ids = itertools.count(1)
        self._capabilities("modern")  # a capability without its callback fails here, early
        self.pending: dict[int, Waiter] = {}
        # Requests with callbacks (progress, log) queued as jobs ahead of their answer: that
        # answer then settles as a job too, after them, so a caller never returns before its
        # own notifications were delivered (wire order). Not a waiter whose
        # ``after_callbacks`` is false: one sent by a job, which would wait for itself.
        self._behind: set[int] = set()
        self.dead: ConnectionClosed | None = None  # why the session ended, once it has
        self._base_meta: dict[str, Any] | None = None  # set in the modern era only
        self._meta_json: bytes | None = None  # _base_meta, encoded
        self._cache: dict[str, tuple[list[dict[str, Any]], float]] = {}
        self._generation = dict.fromkeys(LISTS, 0)  # a list_changed during a fetch wins
        self._ever_fetched: set[str] = set()  # kinds to re-fetch when they change
        self._latest: dict[str, list[dict[str, Any]]] = {}  # as last fetched, even if stale
        self._refresh_queued: set[str] = set()
        self._change_channel: dict[str, bool] = {}
        self._listens: dict[int, Subscription] = {}
        self.subscriptions: list[Subscription] = []
        self.change_listen: Subscription | None = None

    # -- building requests -------------------------------------------------------------

    def call(self, method: str, params: dict[str, Any] | None = None,
             on_progress: Callable[[dict[str, Any]], Any] | None = None, *,
             timeout: float | None = USE_DEFAULT, stamp: bool = True,
             notify_cancel: bool = True) -> Call:
        """A request with a fresh id (the front sends it: see :meth:`encode`). A method of a
        feature the server did not declare raises :class:`NotOffered` with no round trip."""
        needs = _CAPABILITY_FOR.get(method)
        if needs is not None and self.server_capabilities and \
                needs not in self.server_capabilities and \
                versions.defines_server_capability(self.protocol_version, needs):
            raise NotOffered(method, needs, self.name, self.server_capabilities)
        request_id = next(self._ids)
        params = params or {}
        if self.tracing is not None:
            span, params = self.tracing.start_client(method, request_id, params, self.transport,
                                                     self.protocol_version)
            self._spans[request_id] = span
        # tuple.__new__ builds the Call without the Python frames of Call(...) or
        # Call._make: this runs once per request, on the hot path.
        return _new_tuple(Call, (request_id, method, params, on_progress,
                                 self.timeout if timeout is USE_DEFAULT else timeout, stamp,
                                 notify_cancel))

    def message(self, call: Call) -> dict[str, Any]:
        """The request as a JSON-RPC message: modern ``_meta`` and a progress token added."""
        params = call.params
        if call.stamp:
            base = self._base_meta
            if base is not None:  # modern: version, capabilities, identity, every time
                meta = base.copy()
                meta.update(params.get("_meta") or {})
            else:
                meta = dict(params.get("_meta") or {})
            if call.on_progress is not None:
                meta["progressToken"] = call.id
            if meta:
                params = {**params, "_meta": meta}
        return {"jsonrpc": "2.0", "id": call.id, "method": call.method, "params": params}

    def encode(self, call: Call) -> bytes:
        """The request's bytes in the session's framing. The common modern case splices in
        the ``_meta`` encoded once at the handshake (``_set_base_meta``)."""
        meta_json = self._meta_json
        request_id, method, params, on_progress, _, stamp, _ = call
        if meta_json is None or not stamp or on_progress is not None or "_meta" in params:
            return self.encode_message(self.message(call))
        encoded = encode_json(params)  # (framing's encoder: about 2 us less than json's)
        params_json = (b'{"_meta":' + meta_json + b"}" if encoded == b"{}"
                       else encoded[:-1] + b',"_meta":' + meta_json + b"}")
        body = b'{"jsonrpc":"2.0","id":%d,"method":%b,"params":%b}' % (
            request_id, encode_json(method), params_json)
        if self.framing == "ndjson":
            return body + b"\n"
        return b"Content-Length: %d\r\n\r\n%b" % (len(body), body)

    def track(self, waiter: Waiter) -> None:
        """Put a request's waiter in the pending table, before it is sent."""
        span = self._spans.pop(waiter.id, None) if self._spans else None
        if span is not None:
            assert self.tracing is not None
            waiter = _Traced(waiter, span, self.tracing)
        self.pending[waiter.id] = waiter
        if self.dead is not None and self.withdraw(waiter.id) is not None:
            raise self.dead.for_method(waiter.method)

    def withdraw(self, request_id: int) -> Waiter | None:
        """Take a request out of the table (timed out, cancelled, or its write failed);
        None if something else settled it first."""
        self._behind.discard(request_id)
        waiter = self.pending.pop(request_id, None)
        if type(waiter) is _Traced:
            waiter.tracing.end(waiter.span, "cancelled")  # timed out, cancelled or unsent
            return waiter.inner
        return waiter

    def cancel_message(self, request_id: int, reason: str,
                       notify: bool = True) -> dict[str, Any] | None:
        """What tells the server a request is cancelled, if anything is sent: stdio and
        legacy HTTP send ``notifications/cancelled``; in 2026-07-28 HTTP, closing the
        request's stream *is* the cancellation (the front does that too, over HTTP)."""
        if not notify or (self.transport == "http" and self.era == "modern"):
            return None
        return jsonrpc.notification("notifications/cancelled",
                                    {"requestId": request_id, "reason": reason})

    # -- the era -----------------------------------------------------------------------

    def handshake(self) -> Procedure:
        """Agree on an era: forced by ``version``, or probed. Then, modern, listen for
        list changes (if ``listen``)."""
        forced = self.requested_version
        if forced is None:
            yield from self._probe()
        elif versions.era_of(forced) == "modern":
            yield from self._discover(forced)
        else:
            yield from self._initialize(forced)
        if self.era == "modern" and self.listen:
            yield from self._open_change_listen()

    def _probe(self) -> Procedure:
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
                # No cancellation on timeout: a legacy server should see nothing before
                # initialize.
                result = yield self.call("server/discover", {"_meta": self._meta_for(version)},
                                         timeout=self.probe_timeout, stamp=False,
                                         notify_cancel=False)
            except RequestTimeout:
                log.info("%s: no answer to server/discover in %g s: legacy server",
                         self.name, self.probe_timeout)
                return (yield from self._initialize(None, reprobe=attempt == 0))
            except HttpError as exc:
                if exc.status not in (400, 404, 405):
                    raise
                log.info("%s: server/discover got HTTP %s: legacy server", self.name,
                         exc.status)
                return (yield from self._initialize(None))
            except ServerError as exc:
                if exc.code == jsonrpc.UNSUPPORTED_PROTOCOL_VERSION:
                    supported = _supported_versions(exc.data)
                    mutual = _mutual_modern(supported)
                    if mutual and attempt == 0:  # retried once, even with the same version
                        version = mutual[0]
                        continue
                    if any(v in versions.LEGACY_VERSIONS for v in supported):
                        return (yield from self._initialize(None))
                    raise ProtocolError(
                        f"server {self.name!r} supports only {supported or 'unknown versions'}; "
                        f"this client speaks {', '.join(versions.SUPPORTED_VERSIONS)}") from exc
                if exc.code in (jsonrpc.HEADER_MISMATCH,
                                jsonrpc.MISSING_REQUIRED_CLIENT_CAPABILITY):
                    log.warning("%s: modern server refused server/discover (%s); "
                                "continuing without its capabilities", self.name, exc)
                    return self._adopt_modern(version, {})
                log.info("%s: server/discover answered %s: legacy server", self.name, exc.code)
                return (yield from self._initialize(None))
            supported = result.get("supportedVersions")
            if not isinstance(supported, list):
                log.info("%s: server/discover result is not a DiscoverResult: legacy",
                         self.name)
                return (yield from self._initialize(None))
            if version not in supported:
                mutual = _mutual_modern(supported)
                if not mutual:
                    if any(v in versions.LEGACY_VERSIONS for v in supported):
                        return (yield from self._initialize(None))
                    raise ProtocolError(f"server {self.name!r} supports only {supported}")
                version = mutual[0]
            return self._adopt_modern(version, result)

    def _discover(self, version: str) -> Procedure:
        """Forced modern: ask for capabilities; no fallback, but a -32022 is retried once
        with a version the server says it supports."""
        for attempt in range(2):
            try:
                result = yield self.call("server/discover", {"_meta": self._meta_for(version)},
                                         timeout=self.probe_timeout, stamp=False)
            except ServerError as exc:
                mutual = _mutual_modern(_supported_versions(exc.data))
                if exc.code != jsonrpc.UNSUPPORTED_PROTOCOL_VERSION or not mutual or attempt:
                    raise
                version = mutual[0]
                continue
            return self._adopt_modern(version, result)

    def _adopt_modern(self, version: str, discovered: dict[str, Any]) -> None:
        self.era = "modern"
        self.protocol_version = version
        self.server_capabilities = discovered.get("capabilities") or {}
        meta = discovered.get("_meta") or {}
        self.server_info = meta.get(META_SERVER_INFO) or discovered.get("serverInfo") or {}
        self.instructions = discovered.get("instructions")
        self._set_base_meta(version)
        for feature, offered in (("sampling", self.sampling), ("roots", self.roots),
                                 ("logging", self.log_level)):
            if offered is not None:
                deprecations.warn(feature, f"client {self.name} offers it to a "
                                           f"{version} server")

    def _initialize(self, version: str | None, reprobe: bool = False) -> Procedure:
        requested = version or versions.LATEST_LEGACY_VERSION
        params = {"protocolVersion": requested, "capabilities": self._capabilities("legacy"),
                  "clientInfo": self.client_info}
        try:
            result = yield self.call("initialize", params, stamp=False, notify_cancel=False)
        except ServerError as exc:
            mutual = _mutual_modern(_supported_versions(exc.data))
            if reprobe and exc.code == jsonrpc.UNSUPPORTED_PROTOCOL_VERSION and mutual:
                # The probe timed out here but reached a slow server, which is now modern.
                log.info("%s: initialize refused with -32022: the server is modern", self.name)
                return (yield from self._discover(mutual[0]))
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
        for feature in _FEATURES:
            announced = (self.server_capabilities.get(feature) or {}).get("listChanged")
            self._change_channel[feature] = announced is True
        yield Send(jsonrpc.notification("notifications/initialized"))
        if self.http_tools is not None:
            # Streamable HTTP: what the server sends outside any request comes on a GET.
            yield Run(self.http_tools.open_event_stream, ())
        if self.log_level is not None and "logging" in self.server_capabilities:
            yield self.call("logging/setLevel", {"level": self.log_level})

    def _set_base_meta(self, version: str) -> None:
        meta = self._meta_for(version)
        self._meta_json = encode_json(meta)
        self._base_meta = meta

    def _capabilities(self, era: str) -> dict[str, Any]:
        """What the callbacks given can do, plus what the application declares itself
        (``capabilities=``: elicitation's URL mode, ``sampling.tools``, ...). A capability
        with no callback to serve it is not declared: the server would ask in vain."""
        caps: dict[str, Any] = {}
        if self.roots is not None:
            caps["roots"] = {"listChanged": True} if era == "legacy" else {}
        if self.sampling is not None:
            caps["sampling"] = {}
        if self.elicitation is not None:
            caps["elicitation"] = {}  # {} = form mode, in every revision that has it
        served = {"roots": self.roots, "sampling": self.sampling,
                  "elicitation": self.elicitation}
        for name, value in (self.extra_capabilities or {}).items():
            if name in served and served[name] is None:
                raise ValueError(f"capabilities[{name!r}] needs its callback ({name}=...)")
            caps[name] = {**caps.get(name, {}), **value} if isinstance(value, dict) else value
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

    # -- requests and their rounds -----------------------------------------------------

    def request(self, method: str, params: dict[str, Any] | None = None,
                on_progress: Callable[[dict[str, Any]], Any] | None = None,
                timeout: float | None = USE_DEFAULT) -> Procedure:
        """A request and its result, after as many rounds as it takes (:meth:`rounds`)."""
        call = self.call(method, params, on_progress, timeout=timeout)
        result = yield call
        return (yield from self.rounds(call, result))

    def rounds(self, call: Call, result: dict[str, Any]) -> Procedure:
        """The rest of a request, given its first result. A modern ``input_required``
        result is fulfilled through the callbacks and the request sent again (new id,
        ``inputResponses``, ``requestState`` echoed as received), at most ``max_rounds``
        times, each round with the first one's ``timeout``. A front may send the first
        round itself and call this only when the result is not ``complete``."""
        kind = result.get("resultType")
        rounds = 0
        while kind is not None and kind != "complete":  # absent: an older server, complete
            if kind != "input_required":
                raise ProtocolError(f"{call.method}: unrecognised resultType {kind!r}")
            rounds += 1
            if rounds > self.max_rounds:
                raise ProtocolError(f"{call.method}: the server still wants input after "
                                    f"{self.max_rounds} rounds; giving up")
            retry = dict(call.params)  # from the original: nothing carries over
            asked = result.get("inputRequests")
            if asked:
                answers = {}
                for key, item in asked.items():
                    if not isinstance(item, dict):
                        raise ProtocolError(f"inputRequests[{key!r}] is not an object")
                    answers[key] = yield from self._answer(item.get("method"),
                                                           item.get("params") or {})
                retry["inputResponses"] = answers
            if "requestState" in result:
                retry["requestState"] = result["requestState"]
            result = yield self.call(call.method, retry, call.on_progress, timeout=call.timeout)
            kind = result.get("resultType") or "complete"
        return result

    def _answer(self, method: Any, params: dict[str, Any]) -> Procedure:
        """Answer a server's question from the callbacks (a legacy request, or a modern
        input request)."""
        if method == "elicitation/create" and self.elicitation is not None:
            return (yield Run(self.elicitation, (params,)))
        if method == "sampling/createMessage" and self.sampling is not None:
            return (yield Run(self.sampling, (params,)))
        if method == "roots/list" and self.roots is not None:
            roots = (yield Run(self.roots, ())) if callable(self.roots) else self.roots
            return {"roots": list(roots)}
        raise jsonrpc.MethodNotFound(str(method))

    def call_tool(self, name: str, arguments: dict[str, Any] | None = None,
                  on_progress: Callable[[dict[str, Any]], Any] | None = None,
                  timeout: float | None = USE_DEFAULT) -> Procedure:
        """Call a tool. Over HTTP (2026-07-28) arguments marked ``x-mcp-header`` in the
        tool's schema also travel as ``Mcp-Param-*`` headers, so the tools are listed
        first if they never were; a -32020 (headers and body disagree) re-lists them and
        tries once more."""
        params = {"name": name, "arguments": arguments or {}}
        http = self.http_tools
        if http is None or self.era != "modern":
            return (yield from self.request("tools/call", params, on_progress, timeout))
        if "tools" not in self._ever_fetched:
            yield from self.list("tools")
        if name in http.rejected_tools:
            raise ProtocolError(f"tool {name!r} was left out of tools/list: "
                                f"{http.rejected_tools[name]}")
        try:
            return (yield from self.request("tools/call", params, on_progress, timeout))
        except ServerError as exc:
            if exc.code != jsonrpc.HEADER_MISMATCH:
                raise
            log.info("%s: %s; listing the tools again and retrying", self.name, exc)
        yield from self.list("tools", refresh=True)
        return (yield from self.request("tools/call", params, on_progress, timeout))

    def set_log_level(self, level: str | None) -> Procedure:
        """Legacy: ``logging/setLevel``. Modern: the level goes in every request's
        ``_meta`` (None: stop)."""
        if level is not None and level not in versions.LOG_LEVELS:
            raise ValueError(f"unknown log level {level!r}")
        self.log_level = level
        if self.era == "modern":
            assert self.protocol_version is not None
            if level is not None:
                deprecations.warn("logging", f"client {self.name} asked for log messages")
            self._set_base_meta(self.protocol_version)
        elif level is not None:
            yield from self.request("logging/setLevel", {"level": level})

    # -- lists and their caches --------------------------------------------------------

    def list(self, kind: str, refresh: bool = False) -> Procedure:
        """Every item of a list (all pages), from the cache while it is valid."""
        method, key, feature = LISTS[kind]
        if not refresh:
            cached = self._cache.get(kind)
            if cached is not None and (self._change_channel.get(feature)
                                       or self.clock() < cached[1]):
                return list(cached[0])
        generation = self._generation[kind]
        items: list[dict[str, Any]] = []
        ttl_ms: float | None = None
        cursor: str | None = None
        seen: set[str] = set()
        for _ in range(MAX_PAGES):
            result = yield from self.request(method, {"cursor": cursor} if cursor is not None
                                             else {})
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
        if kind == "tools" and self.http_tools is not None and self.era == "modern":
            # Streamable HTTP, 2026-07-28: tools whose x-mcp-header annotations are invalid
            # MUST be left out; the transport keeps the others' for the Mcp-Param-* headers.
            items = self.http_tools.accept_tools(items)
        self._ever_fetched.add(kind)
        self._latest[kind] = items
        if self._generation[kind] == generation:  # no list_changed meanwhile
            self._cache[kind] = (items, self.clock() + (ttl_ms or 0) / 1000)
        return list(items)

    def cached_list(self, kind: str) -> list[dict[str, Any]] | None:
        """A list as last fetched, even if a change was announced since (None: never)."""
        if kind not in LISTS:
            raise ValueError(f"unknown list {kind!r}; one of {', '.join(LISTS)}")
        latest = self._latest.get(kind)
        return list(latest) if latest is not None else None

    def _invalidate(self, feature: str) -> None:
        for kind, (_, _, announced_by) in LISTS.items():
            if announced_by == feature:
                self._generation[kind] += 1
                self._cache.pop(kind, None)

    def _refetch(self, feature: str) -> Procedure:
        """The job a ``list_changed`` queues: re-fetch what was fetched, then tell."""
        self._refresh_queued.discard(feature)  # a change from now on queues another round
        for kind in ("resources", "resourceTemplates") if feature == "resources" else (feature,):
            if kind in self._ever_fetched:
                try:
                    yield from self.list(kind, refresh=True)
                except (SessionError, ServerError) as exc:
                    log.info("%s: could not re-fetch %s after list_changed: %s",
                             self.name, kind, exc)
        if self.on_list_changed is not None:
            yield Run(self.on_list_changed, (feature,))

    # -- subscriptions -----------------------------------------------------------------

    def subscribe(self, client: Any, uris: list[str],
                  callback: Callable[[str, dict[str, Any]], Any] | None,
                  timeout: float | None = USE_DEFAULT) -> Procedure:
        """Legacy: ``resources/subscribe`` per URI. Modern: one listen stream."""
        if self.era == "legacy":
            for uri in uris:
                yield from self.request("resources/subscribe", {"uri": uri}, timeout=timeout)
            sub = Subscription(client, None, uris, {}, callback)
            sub.granted = {"resourceSubscriptions": uris}
        else:
            sub = yield from self.open_listen(client, {"resourceSubscriptions": uris},
                                              callback, timeout)
        self.subscriptions.append(sub)
        return sub

    def open_listen(self, client: Any, notifications: dict[str, Any],
                    callback: Callable[[str, dict[str, Any]], Any] | None,
                    timeout: float | None = USE_DEFAULT) -> Procedure:
        """Open a ``subscriptions/listen`` stream: its acknowledgment settles the call."""
        call = self.call("subscriptions/listen", {"notifications": notifications},
                         timeout=timeout)
        sub = Subscription(client, call.id, list(notifications.get("resourceSubscriptions",
                                                                   [])), notifications, callback)
        self._listens[call.id] = sub
        try:
            yield call
        except BaseException:
            self._listens.pop(call.id, None)
            raise
        if not sub.acknowledged:  # the server answered (ended it) without acknowledging
            self._end_listen(sub)
        return sub

    def end_subscription(self, sub: Subscription, connected: bool = True) -> Procedure:
        """Unsubscribe (legacy) or cancel the listen stream (modern), if still connected."""
        sub.active = False
        if sub in self.subscriptions:
            self.subscriptions.remove(sub)
        if self.dead is not None or not connected:
            return
        if sub.id is None:
            for uri in sub.uris:
                try:
                    yield from self.request("resources/unsubscribe", {"uri": uri})
                except (ServerError, SessionError) as exc:
                    log.info("%s: unsubscribe %s failed: %s", self.name, uri, exc)
        elif self._listens.pop(sub.id, None) is not None:
            yield Cancel(sub.id, "unsubscribed")

    def open_listens(self) -> list[int]:
        return list(self._listens)

    def _open_change_listen(self) -> Procedure:
        """Modern: listen for the list changes the server says it can announce."""
        wanted = {}
        for feature in _FEATURES:
            if (self.server_capabilities.get(feature) or {}).get("listChanged"):
                wanted[f"{feature}ListChanged"] = True
        if not wanted:
            return
        try:
            sub = yield from self.open_listen(None, wanted, None, self.probe_timeout)
        except (ServerError, RequestTimeout) as exc:
            log.info("%s: no change notifications (subscriptions/listen: %s)", self.name, exc)
            return
        if not sub.active:
            return
        self.change_listen = sub
        for feature in _FEATURES:
            self._change_channel[feature] = sub.granted.get(f"{feature}ListChanged") is True

    def _end_listen(self, sub: Subscription, error: BaseException | None = None) -> None:
        sub.active = False
        sub.error = error
        if sub is self.change_listen:
            # No more news about list changes: cached lists now last their ttlMs only.
            self.change_listen = None
            self._change_channel.clear()

    # -- what comes in -----------------------------------------------------------------

    def feed(self, data: bytes) -> list[Any]:
        """Bytes from the server (stdio): the jobs they bring (see :meth:`receive`)."""
        jobs: list[Any] = []
        pending = self.pending
        classify = jsonrpc.classify
        for message in self._decoder.feed(data):
            # The hot path: a response to one of our requests (our ids are ints).
            if type(message) is dict and "method" not in message:
                request_id = message.get("id")
                if type(request_id) is int:
                    waiting = pending.pop(request_id, None)
                    if waiting is not None:
                        if self._behind and request_id in self._behind:
                            self._behind.discard(request_id)
                            jobs.append(Run(self._settle, (waiting, message)))
                            continue
                        try:
                            classify(message)  # only JSON-RPC 2.0 settles a call
                        except JsonRpcError as exc:
                            self._reject(waiting, message, exc)
                        else:
                            waiting._resolve(message)
                        continue
            jobs += self._other(message)
        return jobs

    def end_of_input(self) -> list[Any]:
        """The stream ended: whatever the decoder still held."""
        jobs: list[Any] = []
        for message in self._decoder.close():
            jobs += self._other(message)
        return jobs

    def receive(self, message: Any) -> list[Any]:
        """One decoded message (or a FramingError): settle its request, or return jobs,
        each a :class:`Run`, a procedure, or an :class:`Answer`."""
        if type(message) is dict and "method" not in message:
            request_id = message.get("id")
            if type(request_id) is int:
                waiting = self.pending.pop(request_id, None)
                if waiting is not None:
                    if self._behind and request_id in self._behind:
                        self._behind.discard(request_id)
                        return [Run(self._settle, (waiting, message))]
                    self._settle(waiting, message)
                    return []
        return self._other(message)

    def _settle(self, waiting: Waiter, message: dict[str, Any]) -> None:
        """Only JSON-RPC 2.0 settles a call (:meth:`feed` does the same inline)."""
        try:
            jsonrpc.classify(message)
        except JsonRpcError as exc:
            self._reject(waiting, message, exc)
        else:
            waiting._resolve(message)

    def _reject(self, waiting: Waiter, message: dict[str, Any], exc: JsonRpcError) -> None:
        """An answer that is not JSON-RPC 2.0 fails its request: taking it for a result
        could hand the caller something the server never meant as one."""
        log.warning("%s: the answer to %s (request %s) is not JSON-RPC 2.0: %s",
                    self.name, waiting.method, waiting.id, exc.message)
        waiting._resolve(error=ProtocolError(
            f"{waiting.method} (request {waiting.id}): the server's answer is not a "
            f"JSON-RPC 2.0 response ({exc.message}): {_excerpt(message)}"))

    def _other(self, message: Any) -> list[Any]:
        try:
            if isinstance(message, FramingError):
                if isinstance(message, MessageTooLarge):
                    self._too_large(message)
                else:
                    self._junk(message.raw, str(message))
                return []
            try:
                kind = jsonrpc.classify(message)
            except JsonRpcError as exc:
                self._junk(str(message).encode()[:200], exc.message)
                return []
            if kind == "notification":
                return self._notification(message)
            if kind == "request":
                return [Answer(self._serve(message))]
            self._stray_response(message, kind)
        except Exception:  # a malformed message must not take the session down
            log.exception("%s: could not handle %s", self.name, str(message)[:200])
        return []

    def _too_large(self, item: MessageTooLarge) -> None:
        """A message over ``max_message_size`` was dropped by the decoder. If it answers a
        request, fail that request now rather than let it wait for its timeout."""
        shape, request_id = _peek_envelope(item.raw)
        by_elimination = False
        waiting = None
        if type(request_id) is int:
            waiting = self.pending.pop(request_id, None)
        elif request_id is None and shape != "not a response":
            # The id is not in the first bytes the decoder kept (or the framing keeps
            # only headers). With one request waiting, the answer can only be its own.
            only = list(self.pending)
            if len(only) == 1:
                waiting = self.pending.pop(only[0], None)
                by_elimination = True
        if waiting is not None:
            waiting._resolve(error=ResponseTooLarge(waiting.method, waiting.id, item.size,
                                                    item.limit, by_elimination))
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

    def _stray_response(self, message: dict[str, Any], kind: str) -> None:
        request_id = message.get("id")
        sub = self._listens.pop(request_id, None) if request_id is not None else None
        if sub is not None:  # a listen stream ended by the server
            error = None
            if kind == "error":
                e = message["error"]
                error = ServerError(e.get("code", 0), e.get("message", ""), e.get("data"),
                                    "subscriptions/listen")
            self._end_listen(sub, error)
        elif request_id is None:
            log.warning("%s: the server reported an error not tied to a request: %s",
                        self.name, message.get("error"))
        elif type(request_id) is not int:
            log.warning("%s: the server answered request %r, an id this client never sent "
                        "(its ids are integers); ignored", self.name, request_id)
        else:
            log.debug("%s: response to request %r, which is no longer waiting (late or "
                      "duplicate answer, or an id never sent)", self.name, request_id)

    def _notification(self, message: dict[str, Any]) -> list[Any]:
        method = message["method"]
        params = message.get("params") or {}
        jobs: list[Any] = []
        if method == "notifications/progress":
            token = params.get("progressToken")
            waiting = self.pending.get(token) if type(token) is int else None
            if waiting is not None and waiting.on_progress is not None:
                jobs.append(Run(waiting.on_progress, (params,)))
                if getattr(waiting, "after_callbacks", True):
                    self._behind.add(token)  # type: ignore[arg-type]
        elif method == "notifications/message":
            jobs.append(Run(self._log_message, (params,)))
            if self.on_log is not None:  # a log line may be any waiting request's
                self._behind.update(request_id for request_id, w in self.pending.items()
                                    if getattr(w, "after_callbacks", True))
        elif method.endswith("/list_changed"):
            feature = method.split("/")[1]
            if feature in _FEATURES:
                self._invalidate(feature)
                # Coalesced: one re-fetch queued per kind at most. The job takes the mark
                # off as it starts, so a change during that re-fetch queues exactly one
                # more. The mark is taken after the cache was dropped, so the re-fetch
                # always sees this change.
                if feature not in self._refresh_queued:
                    self._refresh_queued.add(feature)
                    jobs.append(self._refetch(feature))
        elif method == "notifications/resources/updated":
            uri = params.get("uri", "")
            tag = (params.get("_meta") or {}).get(META_SUBSCRIPTION_ID)
            for sub in list(self.subscriptions):
                if sub.callback is not None and sub.active and (
                        (sub.id == tag) if sub.id is not None else (uri in sub.uris)):
                    jobs.append(Run(sub.callback, (uri, params)))
        elif method == "notifications/subscriptions/acknowledged":
            sub = self._listens.get((params.get("_meta") or {}).get(META_SUBSCRIPTION_ID))
            if sub is not None and not sub.acknowledged:
                sub.acknowledged = True
                sub.granted = params.get("notifications") or {}
                waiting = self.pending.pop(sub.id, None)  # type: ignore[arg-type]
                if waiting is not None:
                    waiting._resolve({"jsonrpc": "2.0", "id": sub.id, "result": sub.granted})
        elif method == "notifications/cancelled":
            # Modern servers send it only to end a listen stream.
            sub = self._listens.pop(params.get("requestId"), None)  # type: ignore[arg-type]
            if sub is not None:
                self._end_listen(sub)
        if self.on_notification is not None:
            jobs.append(Run(self.on_notification, (method, params)))
        return jobs

    def _log_message(self, params: dict[str, Any]) -> Any:
        if self.on_log is not None:
            return self.on_log(params)
        level = _LOG_LEVELS.get(params.get("level", "info"), logging.ERROR)
        logger = f" {params['logger']}:" if params.get("logger") else ""
        log.log(level, "[%s]%s %s", self.name, logger, params.get("data"))
        return None

    def _serve(self, message: dict[str, Any]) -> Generator[Any, Any, None]:
        """Answer a legacy server's request from the callbacks."""
        request_id, method = message["id"], message["method"]
        try:
            if method == "ping":
                result: Any = {}
            else:
                result = yield from self._answer(method, message.get("params") or {})
            response = jsonrpc.result_response(request_id, result)
        except JsonRpcError as exc:
            response = jsonrpc.error_response_from(request_id, exc)
        except Exception as exc:
            log.exception("%s: the %s callback failed", self.name, method)
            response = jsonrpc.error_response(request_id, jsonrpc.INTERNAL_ERROR,
                                              f"{type(exc).__name__}: {exc}")
        try:
            yield Send(response)
        except (OSError, SessionError) as exc:
            log.info("%s: could not answer %s: %s", self.name, method, exc)

    # -- failures ----------------------------------------------------------------------

    def http_failure(self, request_id: Any, failure: Any) -> None:
        """An HTTP exchange gave no answer (not a fatal one): fail its request or listen."""
        waiting = self.pending.pop(request_id, None)
        if waiting is not None:
            if hasattr(failure, "limit"):  # the transport's AnswerTooLarge
                waiting._resolve(error=ResponseTooLarge(waiting.method, waiting.id,
                                                        failure.size, failure.limit))
            else:
                waiting._resolve(error=HttpError(failure.message, failure.status,
                                                 waiting.method, self.url))
            return
        sub = self._listens.pop(request_id, None)
        if sub is not None:
            self._end_listen(sub, HttpError(failure.message, failure.status,
                                            "subscriptions/listen", self.url))
        else:
            log.info("%s: %s", self.name, failure.message)  # nobody waits for it any more

    def fail_all(self, error: ConnectionClosed) -> bool:
        """The session is dead: fail every waiting request and listen. False if it was dead
        already (a threaded front calls this under a lock)."""
        if self.dead is not None:
            return False
        self.dead = error
        self._behind.clear()
        for request_id in list(self.pending):
            waiting = self.pending.pop(request_id, None)
            if waiting is not None:
                waiting._resolve(error=error.for_method(waiting.method))
        for request_id in list(self._listens):
            sub = self._listens.pop(request_id, None)
            if sub is not None:
                self._end_listen(sub, error)
        return True


def _mutual_modern(supported: list[str]) -> list[str]:
    """The modern versions both sides speak, newest first."""
    return [v for v in versions.MODERN_VERSIONS[::-1] if v in supported]


def _supported_versions(data: Any) -> list[str]:
    supported = data.get("supported") if isinstance(data, dict) else None
    return [v for v in supported if isinstance(v, str)] if isinstance(supported, list) else []


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
