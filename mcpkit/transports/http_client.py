"""Streamable HTTP, client side: the wire under :class:`~mcpkit.client.Client` for URLs.

    with Client(url="http://127.0.0.1:8000/mcp") as notes:   # the same API as stdio
        notes.call_tool("notes_search", {"query": "mcp"})

Theory of operation
-------------------
Every message the client sends is its own POST to the one MCP endpoint. A request is
answered with one JSON object, or with an SSE stream that carries notifications (progress,
log messages; in the legacy era also the server's own requests) before the response. The
session (:mod:`mcpkit.client`) decides *what* to send and what the answers mean; this
module only moves messages, and knows HTTP's rules.

Threads. All HTTP runs on **one private event loop**, on one I/O thread, with httpx's
async client. The session's threads hand work over (:meth:`HttpTransport.send` returns at
once; :meth:`HttpTransport.post` waits) and never run on the loop themselves. Each open
answer (a request's JSON or SSE response, a ``subscriptions/listen`` stream, the legacy GET
stream) is one task; cancelling the task closes its connection, which in the 2026-07-28
era *is* how a request is cancelled. A loop of its own also keeps the blocking API usable
in Jupyter, whose loop is busy running the kernel. Under :class:`~mcpkit.aclient.AsyncClient`
there is no I/O thread: ``start(loop=...)`` puts the same tasks on the caller's loop, and
:meth:`HttpTransport.apost` and :meth:`HttpTransport.aclose` are awaited there.

Headers come from the message itself. A request that carries the modern
``params._meta`` gets ``MCP-Protocol-Version`` (the version in that ``_meta``),
``Mcp-Method``, ``Mcp-Name`` and, for ``tools/call``, one ``Mcp-Param-*`` per
``x-mcp-header`` argument. Anything else is legacy and gets the session's
``Mcp-Session-Id`` and the version ``initialize`` negotiated, both picked up from the
``initialize`` response as it passes through.

State (written on the loop unless said otherwise):

- ``session_id`` and ``protocol_version``: legacy only, from the ``initialize`` response.
- ``_futures``: request id -> the task streaming its answer, so a session thread can
  cancel it (added by the sending thread, removed when the task ends).
- ``_param_headers``: tool name -> its ``x-mcp-header`` annotations, replaced whole by
  :meth:`accept_tools` after each ``tools/list`` (any thread; readers take the current dict).

What comes back goes to ``on_message`` one JSON-RPC message at a time, on the I/O thread
(so it must not block). What goes wrong goes to ``on_failure(request_id, HttpFailure)``:
an HTTP error without a JSON-RPC answer, a response stream that ended before its answer,
or, with ``request_id`` None and ``fatal`` set, a server that cannot be reached or a legacy
session the server ended (HTTP 404).

Resumption (legacy, SEP-1699): a server may end a POST's SSE stream before the answer,
after an event that had an ``id``. The client waits the ``retry`` time the stream gave,
then reconnects with GET and ``Last-Event-ID``, and the answer comes there. The 2026-07-28
era has no resumption: the request is lost.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import logging
import re
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

import httpx

from ..framing import DEFAULT_MAX_MESSAGE_SIZE, encode_json
from ..versions import META_PROTOCOL_VERSION
from .http_headers import H_METHOD, H_NAME, H_SESSION, H_VERSION, NAME_FIELDS, encode_header_value

if TYPE_CHECKING:  # authlib is imported only by those who use OAuth
    from ..oauth import OAuth

__all__ = [
    "AnswerTooLarge",
    "EventTooLarge",
    "HttpFailure",
    "HttpTransport",
    "InvalidToolSchema",
    "SseEvent",
    "SseParser",
    "header_annotations",
    "param_headers",
]

log = logging.getLogger("mcpkit.http_client")

ACCEPT_BOTH = "application/json, text/event-stream"
DEFAULT_CONNECT_TIMEOUT = 10.0
#: How long to wait before reconnecting when a stream gave no ``retry`` (the SSE default
#: is left to the client; browsers use about 3 s).
DEFAULT_RETRY_MS = 1000
#: Reconnections in a row that bring nothing new before a resumed request is given up.
MAX_RESUME_ATTEMPTS = 5
#: Authorizations (401, then perhaps a 403 step-up, a DPoP nonce) one request may set off
#: before it fails.
MAX_AUTH_RETRIES = 3
#: A DPoP server's refusal of a proof without its nonce (RFC 9449 section 9); the name is
#: mcpkit.oauth_dpop's, not imported so that a client without OAuth imports no JOSE.
USE_DPOP_NONCE = "use_dpop_nonce"
_EXCERPT = 300
# JSON-RPC errors that 2026-07-28 servers answer with HTTP 400 or 404: header mismatch,
# missing client capability, unsupported version, method not found.
_SPEC_CODES = frozenset({-32020, -32021, -32022, -32601})


class HttpFailure(Exception):
    """An exchange that produced no JSON-RPC answer. ``status`` is the HTTP status if there
    was one; ``fatal`` means the whole session is gone (server unreachable, session ended)."""

    def __init__(self, message: str, status: int | None = None, fatal: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.fatal = fatal


class AnswerTooLarge(HttpFailure):
    """A response body or SSE event is over the size limit: at least ``size`` bytes."""

    def __init__(self, message: str, size: int, limit: int, status: int | None = None) -> None:
        super().__init__(message, status)
        self.size = size
        self.limit = limit


class EventTooLarge(ValueError):
    """An SSE event (or line) is longer than the parser's ``max_size``."""

    def __init__(self, size: int, limit: int) -> None:
        super().__init__(f"an SSE event is larger than {limit} bytes")
        self.size = size
        self.limit = limit


# -- server-sent events ------------------------------------------------------------------


class SseEvent(NamedTuple):
    event: str
    data: str
    id: str | None


class SseParser:
    """An ``text/event-stream`` decoder, fed bytes as they arrive (the WHATWG rules).

    :meth:`feed` returns the events completed so far. Events without data (the "priming"
    event a server sends to hand out an id and a ``retry`` time) are not returned, but
    their ``id`` and ``retry`` still land in :attr:`last_event_id` and :attr:`retry_ms`.
    An event (or a line) longer than ``max_size`` bytes raises :class:`EventTooLarge` (a
    ValueError): the stream is broken or hostile, and buffering it would have no end.
    """

    _LINE_END = re.compile(rb"\r\n|\r|\n")

    def __init__(self, max_size: int = DEFAULT_MAX_MESSAGE_SIZE) -> None:
        self.max_size = max_size
        self.last_event_id: str | None = None
        self.retry_ms: int | None = None
        self.events_seen = 0  # events dispatched, priming ones included
        self._buffer = b""
        self._data: list[str] = []
        self._size = 0  # the characters in _data
        self._type = ""
        self._dirty = False  # a field arrived since the last blank line
        self._started = False

    def feed(self, chunk: bytes) -> list[SseEvent]:
        buffer = self._buffer + chunk
        if not self._started and buffer:
            if len(buffer) < 3 and b"\xef\xbb\xbf".startswith(buffer):
                self._buffer = buffer  # maybe the start of a BOM: wait for more
                return []
            self._started = True
            if buffer.startswith(b"\xef\xbb\xbf"):
                buffer = buffer[3:]
        events: list[SseEvent] = []
        start = 0
        while True:
            match = self._LINE_END.search(buffer, start)
            if match is None:
                break
            if match.group() == b"\r" and match.end() == len(buffer):
                break  # a CR at the end may be the first half of CRLF
            self._line(buffer[start:match.start()].decode("utf-8", "replace"), events)
            start = match.end()
        self._buffer = buffer[start:]
        if len(self._buffer) + self._size > self.max_size:
            raise EventTooLarge(len(self._buffer) + self._size, self.max_size)
        return events

    def _line(self, line: str, events: list[SseEvent]) -> None:
        if not line:  # a blank line dispatches the event
            if self._dirty:
                self.events_seen += 1
            data = "\n".join(self._data)
            if data:
                events.append(SseEvent(self._type or "message", data, self.last_event_id))
            self._data = []
            self._size = 0
            self._type = ""
            self._dirty = False
            return
        if line.startswith(":"):
            return  # a comment: keep-alive
        field, _, value = line.partition(":")
        if value.startswith(" "):
            value = value[1:]
        self._dirty = True
        if field == "data":
            self._data.append(value)
            self._size += len(value) + 1
        elif field == "event":
            self._type = value
        elif field == "id":
            if "\0" not in value:
                self.last_event_id = value
        elif field == "retry" and value.isdigit():
            self.retry_ms = int(value)


# -- x-mcp-header (2026-07-28) -------------------------------------------------------------


class InvalidToolSchema(ValueError):
    """A tool's ``x-mcp-header`` annotations break the spec's rules: drop the tool."""


# RFC 9110 token characters (field names): no controls, spaces, separators or non-ASCII.
_TCHAR = frozenset("!#$%&'*+-.^_`|~0123456789"
                   "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
_HEADER_TYPES = frozenset({"string", "integer", "boolean"})
# JSON Schema keywords whose values are schemas. An annotation found through any of them
# (rather than through ``properties`` alone) is not statically reachable.
_SCHEMA_KEYWORDS = frozenset({
    "additionalProperties", "unevaluatedProperties", "propertyNames", "items",
    "additionalItems", "unevaluatedItems", "contains", "not", "if", "then", "else",
})
_SCHEMA_LIST_KEYWORDS = frozenset({"allOf", "anyOf", "oneOf", "prefixItems", "items"})
_SCHEMA_MAP_KEYWORDS = frozenset({"patternProperties", "$defs", "definitions",
                                  "dependentSchemas"})

HeaderAnnotation = tuple[tuple[str, ...], str]  # (path of property names, header name)


def header_annotations(schema: Any) -> list[HeaderAnnotation]:
    """The ``x-mcp-header`` annotations of a tool's ``inputSchema``, checked.

    Returns ``[(path, name)]``: the argument at ``path`` (a chain of property names) goes
    in the ``Mcp-Param-{name}`` header. Raises :class:`InvalidToolSchema` when an annotation
    is empty, not an RFC 9110 token, repeated (case-insensitively), on a property that is
    not a string, integer or boolean, or reached through anything but ``properties``.
    ``$ref`` is never followed (nor fetched).
    """
    found: list[HeaderAnnotation] = []
    seen: dict[str, str] = {}

    def check(node: dict[str, Any], path: tuple[str, ...], reachable: bool) -> None:
        name = node["x-mcp-header"]
        where = "properties." + ".".join(path) if path else "the schema root"
        if not reachable or not path:
            raise InvalidToolSchema(f"x-mcp-header {name!r} at {where} is not on a property "
                                    "reached through 'properties' alone")
        if not isinstance(name, str) or not name:
            raise InvalidToolSchema(f"x-mcp-header at {where} must be a non-empty string")
        bad = sorted({repr(ch) for ch in name if ch not in _TCHAR})
        if bad:
            raise InvalidToolSchema(f"x-mcp-header {name!r} at {where} has characters a "
                                    f"header name cannot have: {', '.join(bad)}")
        kind = node.get("type")
        kinds = [kind] if isinstance(kind, str) else kind if isinstance(kind, list) else []
        kinds = [k for k in kinds if k != "null"]
        if not kinds or not all(k in _HEADER_TYPES for k in kinds):
            raise InvalidToolSchema(f"x-mcp-header {name!r} at {where}: type {kind!r} is not "
                                    "string, integer or boolean")
        if name.lower() in seen:
            raise InvalidToolSchema(f"x-mcp-header {name!r} at {where} repeats "
                                    f"{seen[name.lower()]!r} (names are case-insensitive)")
        seen[name.lower()] = name
        found.append((path, name))

    def walk(node: Any, path: tuple[str, ...], reachable: bool) -> None:
        if not isinstance(node, dict):
            return
        if "x-mcp-header" in node:
            check(node, path, reachable)
        for key, value in node.items():
            if key == "properties" and isinstance(value, dict):
                for prop, sub in value.items():
                    walk(sub, path + (prop,), reachable)
            elif key in _SCHEMA_MAP_KEYWORDS and isinstance(value, dict):
                for sub in value.values():
                    walk(sub, path, False)
            elif key in _SCHEMA_LIST_KEYWORDS and isinstance(value, list):
                for sub in value:
                    walk(sub, path, False)
            elif key in _SCHEMA_KEYWORDS:
                walk(value, path, False)

    walk(schema, (), True)
    return found


def param_headers(annotations: Iterable[HeaderAnnotation],
                  arguments: Any) -> Iterator[tuple[str, str]]:
    """The ``Mcp-Param-*`` headers for a call: one per annotated argument that has a value
    (absent or null arguments send no header)."""
    for path, name in annotations:
        value = arguments
        for key in path:
            value = value.get(key) if isinstance(value, dict) else None
        if isinstance(value, float) and value.is_integer():
            value = int(value)  # 42.0 is the integer 42
        if isinstance(value, bool | int | str):  # anything else cannot travel: the server decides
            yield f"Mcp-Param-{name}", encode_header_value(value)


# -- the transport ---------------------------------------------------------------------


def _media_type(response: httpx.Response) -> str:
    return response.headers.get("content-type", "").split(";")[0].strip().lower()


async def _read_body(response: httpx.Response, limit: int = DEFAULT_MAX_MESSAGE_SIZE) -> bytes:
    """The body, refused past ``limit`` bytes (``aread`` would hold any amount)."""
    chunks, size = [], 0
    async for chunk in response.aiter_bytes():
        size += len(chunk)
        if size > limit:
            raise AnswerTooLarge(f"the response from {response.url} is larger than {limit} "
                                 "bytes", size, limit, response.status_code)
        chunks.append(chunk)
    return b"".join(chunks)


def _is_answer(message: Any) -> bool:
    return isinstance(message, dict) and "method" not in message and (
        "result" in message or "error" in message)


class HttpTransport:
    """Client side of streamable HTTP for one MCP endpoint (see the module docstring).

    ``headers`` are sent with every request (e.g. an API key); ``token`` adds
    ``Authorization: Bearer <token>``; ``auth`` (an :class:`~mcpkit.oauth.OAuth`) gets
    tokens when the server asks for them (401/403 with a Bearer challenge), refreshes them
    and retries the request (at most ``MAX_AUTH_RETRIES`` times). A response body or SSE
    event larger than ``max_message_size`` bytes fails its exchange with :class:`AnswerTooLarge`.
    """

    def __init__(
        self,
        url: str,
        *,
        on_message: Callable[[Any], None],
        on_failure: Callable[[Any, HttpFailure], None],
        headers: Mapping[str, str] | None = None,
        token: str | None = None,
        auth: OAuth | None = None,
        name: str | None = None,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
        max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
    ) -> None:
        self.url = url
        self.max_message_size = max_message_size
        self.name = name or url
        self.on_message = on_message
        self.on_failure = on_failure
        self.connect_timeout = connect_timeout
        self.auth = auth
        self.session_id: str | None = None
        self.protocol_version: str | None = None
        base = {str(k).lower(): str(v) for k, v in (headers or {}).items()}
        if token:
            base["authorization"] = f"Bearer {token}"
        base["accept"] = ACCEPT_BOTH
        base["content-type"] = "application/json"
        self._base_headers = base
        self._param_headers: dict[str, list[HeaderAnnotation]] = {}
        self.rejected_tools: dict[str, str] = {}
        self._futures: dict[Any, concurrent.futures.Future[None]] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._http: httpx.AsyncClient | None = None
        self._events: concurrent.futures.Future[None] | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._closed = False

    # -- the I/O thread ------------------------------------------------------------------

    def start(self, loop: asyncio.AbstractEventLoop | None = None) -> HttpTransport:
        """Start the I/O thread and its loop; or, given a running ``loop`` (an asyncio
        caller's: :class:`~mcpkit.aclient.AsyncClient`), run on that one, no thread."""
        self._loop = loop or asyncio.new_event_loop()
        self._http = httpx.AsyncClient(
            # No read timeout: a listen stream or a long tool call may be quiet for a long
            # time. Waiting for an answer is bounded by the session's own timeouts instead.
            timeout=httpx.Timeout(connect=self.connect_timeout, read=None, write=30.0,
                                  pool=None),
            follow_redirects=True,
        )
        if loop is None:
            self._thread = threading.Thread(target=self._loop.run_forever, daemon=True,
                                            name=f"mcpkit-http-client-{self.name}")
            self._thread.start()
        return self

    def _submit(self, coroutine: Any) -> concurrent.futures.Future[Any]:
        if self._closed or self._loop is None:
            coroutine.close()
            raise RuntimeError("the HTTP transport is closed")
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop)

    def _wait(self, coroutine: Any, timeout: float | None) -> Any:
        future = self._submit(coroutine)
        try:
            return future.result(timeout)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise TimeoutError(f"no answer from {self.url} in {timeout:g} s") from None

    # -- sending -------------------------------------------------------------------------

    def send(self, message: dict[str, Any]) -> None:
        """POST a request in the background: its answer goes to ``on_message``, a failure
        to ``on_failure``. Raises RuntimeError once the transport is closed, and
        :class:`~mcpkit.framing.UnencodableMessage` (nothing sent) for a message JSON
        cannot carry, as the stdio transport does."""
        request_id = message.get("id")
        body = encode_json(message)
        future = self._submit(self._background(request_id, self._exchange(message, body)))
        self._futures[request_id] = future

        def forget(done: concurrent.futures.Future[None]) -> None:
            # Runs when the task ends, even if that was before the line above: the entry
            # is removed only if it is still this task's.
            if self._futures.get(request_id) is done:
                self._futures.pop(request_id, None)

        future.add_done_callback(forget)

    def post(self, message: dict[str, Any], timeout: float | None = 30.0) -> None:
        """POST a notification or a response and wait until the server accepts it.
        Raises :class:`HttpFailure` or TimeoutError."""
        self._wait(self._exchange(message, encode_json(message)), timeout)

    async def apost(self, message: dict[str, Any], timeout: float | None = 30.0) -> None:
        """:meth:`post`, awaited on the transport's own loop (the caller's)."""
        if self._closed:
            raise RuntimeError("the HTTP transport is closed")
        try:
            await asyncio.wait_for(self._exchange(message, encode_json(message)), timeout)
        except TimeoutError:
            raise TimeoutError(f"no answer from {self.url} in {timeout:g} s") from None

    def cancel(self, request_id: Any) -> bool:
        """Stop reading the answer to ``request_id`` and close its connection (the
        2026-07-28 cancellation). False if it had already ended."""
        future = self._futures.pop(request_id, None)
        return future is not None and future.cancel()

    async def _background(self, request_id: Any, work: Any) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)  # a shared loop has other tasks: close() ends only these
        try:
            await work
        except HttpFailure as exc:
            if not self._closed:
                self.on_failure(request_id if not exc.fatal else None, exc)
        except Exception as exc:  # a bug here must not leave the request waiting for ever
            log.exception("%s: the HTTP exchange failed", self.name)
            if not self._closed:
                self.on_failure(request_id, HttpFailure(f"{type(exc).__name__}: {exc}"))
        finally:
            self._tasks.discard(task)

    def _headers_for(self, message: dict[str, Any]) -> dict[str, str]:
        headers = dict(self._base_headers)
        method = message.get("method")
        params = message.get("params")
        meta = params.get("_meta") if isinstance(params, dict) else None
        version = meta.get(META_PROTOCOL_VERSION) if isinstance(meta, dict) else None
        if isinstance(version, str) and isinstance(method, str):
            # 2026-07-28: the headers repeat the body, so that proxies can route on them.
            assert isinstance(params, dict)
            headers[H_VERSION] = version
            headers[H_METHOD] = method
            field = NAME_FIELDS.get(method)
            if field is not None and isinstance(params.get(field), str):
                headers[H_NAME] = encode_header_value(params[field])
            tool = params.get("name")
            if method == "tools/call" and isinstance(tool, str):
                annotations = self._param_headers.get(tool)
                if annotations:
                    headers.update(param_headers(annotations, params.get("arguments")))
            return headers
        headers.update(self._session_headers())
        return headers

    def _bodiless_headers(self, last_event_id: str | None = None,
                          method: str = "GET") -> dict[str, str]:
        """For the legacy session's GET (resuming after ``last_event_id``) and DELETE."""
        headers = {**self._base_headers, **self._session_headers(),
                   "accept": "text/event-stream"}
        token = self.auth.current_token(self.url) if self.auth is not None else None
        if token:
            assert self.auth is not None
            headers.update(self.auth.authorization_headers(self.url, method, token))
        del headers["content-type"]
        if last_event_id is not None:
            headers["last-event-id"] = last_event_id
        return headers

    def _session_headers(self) -> dict[str, str]:
        headers = {}
        if self.protocol_version is not None:
            headers[H_VERSION] = self.protocol_version
        if self.session_id is not None:
            headers[H_SESSION] = self.session_id
        return headers

    # -- one exchange --------------------------------------------------------------------

    async def _exchange(self, message: dict[str, Any], body: bytes) -> None:
        """POST ``message`` (``body``, encoded by the caller) and deliver its answer.
        Raises :class:`HttpFailure`."""
        assert self._http is not None
        request_id = message.get("id") if "method" in message else None
        method = message.get("method") or "a response"
        try:
            headers = self._headers_for(message)
        except ValueError as exc:  # a value a header cannot carry: nothing is sent
            raise HttpFailure(f"{method}: not sent: {exc}") from None
        try:
            refused: int | None = None  # the status the last authorization answered
            for attempt in range(MAX_AUTH_RETRIES + 1):
                sent = await self._authorize(headers)
                async with self._http.stream("POST", self.url, content=body,
                                             headers=headers) as response:
                    nonce = response.headers.get("dpop-nonce")
                    # A 401 for a token just obtained for a 401 is final: no new flow
                    # (unless all it lacked is the server's DPoP nonce).
                    challenge = None if refused == 401 == response.status_code \
                        and USE_DPOP_NONCE not in response.headers.get("www-authenticate", "") \
                        else self._challenge(response, attempt)
                    if challenge is None:
                        if nonce is not None and self.auth is not None:
                            self.auth.saw_dpop_nonce(self.url, nonce)
                        await self._answer(response, request_id, method, headers)
                        return
                assert self.auth is not None
                refused = response.status_code
                try:
                    await self.auth.challenged(self.url, response.status_code, challenge, sent,
                                               dpop_nonce=nonce)
                except Exception as exc:  # OAuthError, or a bug: this request fails
                    raise HttpFailure(f"{method}: HTTP {response.status_code} from {self.url} "
                                      f"and no token for it: {exc}",
                                      response.status_code) from None
        except httpx.ConnectTimeout as exc:
            raise HttpFailure(f"{self.url} did not accept a connection in time ({exc!r})",
                              fatal=True) from None
        except httpx.ConnectError as exc:
            raise HttpFailure(f"cannot connect to {self.url}: {exc}", fatal=True) from None
        except httpx.HTTPError as exc:
            raise HttpFailure(f"{method}: the connection broke: {exc!r}") from None

    async def _authorize(self, headers: dict[str, str]) -> str | None:
        """Put the OAuth token (refreshed if need be) in ``headers``; the token sent."""
        if self.auth is None:
            return None
        token = await self.auth.token(self.url)
        headers.pop("dpop", None)
        if token:
            headers.update(self.auth.authorization_headers(self.url, "POST", token))
        return token

    def _challenge(self, response: httpx.Response, attempt: int) -> str | None:
        """The ``WWW-Authenticate`` value if this answer is a Bearer challenge that
        :attr:`auth` should meet (and the request then be sent again), else None."""
        if self.auth is None or response.status_code not in (401, 403) \
                or attempt >= MAX_AUTH_RETRIES:
            return None
        challenge = response.headers.get("www-authenticate", "")
        if response.status_code == 403 and "insufficient_scope" not in challenge:
            return None
        if response.status_code == 401 and challenge and not any(
                scheme in challenge.lower() for scheme in ("bearer", "dpop")):
            return None
        return challenge

    async def _answer(self, response: httpx.Response, request_id: Any, method: str,
                      sent: Mapping[str, str]) -> None:
        status = response.status_code
        if method == "initialize" and status == 200:
            session_id = response.headers.get(H_SESSION)
            if session_id is not None:
                if not (session_id.isascii() and session_id.isprintable()
                        and " " not in session_id):
                    raise HttpFailure(f"the server issued an invalid session id {session_id!r}")
                self.session_id = session_id
        if status == 404 and H_SESSION in sent:
            raise HttpFailure(f"the server at {self.url} ended the session (HTTP 404)",
                              status, fatal=True)
        if request_id is None:  # a notification or a response: any 2xx means accepted
            if status >= 300:
                raise HttpFailure(await self._describe(response, method), status)
            return
        if status in (401, 403):
            raise HttpFailure(await self._describe(response, method), status)
        media = _media_type(response)
        if status == 200 and media == "text/event-stream":
            # Only legacy streams resume: those of requests sent without Mcp-Method.
            await self._read_sse(response, request_id, method, H_METHOD not in sent)
            return
        raw = await _read_body(response, self.max_message_size)
        try:
            decoded = json.loads(raw) if media == "application/json" \
                or raw[:1] in (b"{", b"[") else None
        except ValueError:
            decoded = None
        answered = False
        for item in decoded if isinstance(decoded, list) else [decoded]:
            if _is_answer(item) and "error" in item and item.get("id") is None:
                # A refusal that names no request: ours. One of the spec's own codes is
                # the server's answer (a modern server's -32022 leads to a retry); any other
                # is an HTTP-level refusal, told by its status.
                code = item["error"].get("code") if isinstance(item["error"], dict) else None
                if status >= 400 and code not in _SPEC_CODES:
                    raise HttpFailure(await self._describe(response, method, raw), status)
                item = {**item, "id": request_id}
            if isinstance(item, dict):
                answered |= self._deliver(item, request_id, method)
        if not answered:
            if status >= 300:
                raise HttpFailure(await self._describe(response, method, raw), status)
            raise HttpFailure(f"{method}: the server answered HTTP {status} "
                              f"({media or 'no content type'}) without a JSON-RPC response",
                              status)

    async def _describe(self, response: httpx.Response, method: str,
                        raw: bytes | None = None) -> str:
        """``HTTP 401 Unauthorized from URL: <what the body says>`` and a hint."""
        if raw is None:
            raw = await _read_body(response, self.max_message_size)
        text = raw.decode("utf-8", "replace").strip()
        try:  # a JSON-RPC error body says it best
            text = json.loads(text)["error"]["message"]
        except (ValueError, TypeError, KeyError):
            pass
        status = response.status_code
        description = f"{method}: HTTP {status} {response.reason_phrase} from {self.url}"
        if text:
            description += f": {text[:_EXCERPT]}"
        if status == 401:
            challenge = response.headers.get("www-authenticate")
            description += (f" (WWW-Authenticate: {challenge})" if challenge else "") + \
                ("; the bearer token was refused" if "authorization" in self._base_headers
                 or self.auth is not None else
                 "; the server wants a bearer token: pass token=..., token_env=... or "
                 "auth=OAuth(...)")
        return description

    def _deliver(self, message: dict[str, Any], request_id: Any, method: str) -> bool:
        """Hand one message to the session; True if it answers ``request_id``."""
        answers = request_id is not None and _is_answer(message) \
            and message.get("id") == request_id
        if answers and method == "initialize" and isinstance(message.get("result"), dict):
            # Before the session sees the result: its next POST needs the header.
            version = message["result"].get("protocolVersion")
            self.protocol_version = version if isinstance(version, str) else None
        try:
            self.on_message(message)
        except Exception:
            log.exception("%s: handling %s failed", self.name, str(message)[:200])
        return answers

    async def _read_sse(self, response: httpx.Response, request_id: Any, method: str,
                        resumable: bool) -> None:
        """Read a request's SSE answer; resume it (legacy) if it ends before the answer."""
        parser = SseParser(self.max_message_size)
        try:
            if await self._read_events(response, parser, request_id, method):
                return
            why = "the server ended the response stream before answering"
        except httpx.HTTPError as exc:
            why = f"the response stream broke ({exc!r})"
        if resumable and parser.last_event_id is not None:
            await self._resume(request_id, method, parser.last_event_id, parser.retry_ms)
            return
        raise HttpFailure(f"{method}: {why}")

    async def _read_events(self, response: httpx.Response, parser: SseParser,
                           request_id: Any, method: str) -> bool:
        """Deliver a stream's messages until it ends, or until the answer to
        ``request_id`` came (True). Raises httpx errors if the connection breaks."""
        async for chunk in response.aiter_bytes():
            answered = False
            try:
                events = parser.feed(chunk)
            except EventTooLarge as exc:
                raise AnswerTooLarge(f"{method}: {exc}", exc.size, exc.limit) from None
            for event in events:
                if event.event != "message":
                    continue  # MCP sends only "message" events
                try:
                    decoded = json.loads(event.data)
                except ValueError:
                    log.warning("%s: skipped an SSE event that is not JSON: %r", self.name,
                                event.data[:120])
                    continue
                for item in decoded if isinstance(decoded, list) else [decoded]:
                    if isinstance(item, dict):
                        answered |= self._deliver(item, request_id, method)
            if answered:
                return True  # the stream SHOULD end here; no need to wait for it
        return False

    async def _resume(self, request_id: Any, method: str, last_event_id: str,
                      retry_ms: int | None) -> None:
        """Reconnect (GET + ``Last-Event-ID``, after ``retry``) until the answer comes."""
        assert self._http is not None
        fruitless = 0
        while fruitless < MAX_RESUME_ATTEMPTS:
            await asyncio.sleep((retry_ms if retry_ms is not None else DEFAULT_RETRY_MS) / 1000)
            headers = self._bodiless_headers(last_event_id)
            parser = SseParser(self.max_message_size)
            try:
                async with self._http.stream("GET", self.url, headers=headers) as response:
                    if response.status_code == 404:
                        raise HttpFailure(f"the server at {self.url} ended the session "
                                          "(HTTP 404)", 404, fatal=True)
                    if response.status_code != 200 or \
                            _media_type(response) != "text/event-stream":
                        raise HttpFailure(f"{method}: the stream ended before the answer and "
                                          f"resuming it failed (GET: HTTP "
                                          f"{response.status_code})", response.status_code)
                    if await self._read_events(response, parser, request_id, method):
                        return
            except httpx.ConnectError as exc:
                raise HttpFailure(f"cannot connect to {self.url}: {exc}", fatal=True) from None
            except httpx.HTTPError:
                pass  # broke again: try again
            last_event_id = parser.last_event_id or last_event_id
            retry_ms = parser.retry_ms if parser.retry_ms is not None else retry_ms
            fruitless = 0 if parser.events_seen else fruitless + 1
        raise HttpFailure(f"{method}: the response stream ended before the answer, and "
                          f"{MAX_RESUME_ATTEMPTS} attempts to resume it brought nothing")

    # -- the legacy GET stream -----------------------------------------------------------

    def open_event_stream(self) -> None:
        """Legacy: listen on GET for what the server sends outside any request (its own
        requests, list changes, resource updates), reconnecting when the stream ends."""
        if self._events is None:
            self._events = self._submit(self._background(None, self._event_stream()))

    async def _event_stream(self) -> None:
        assert self._http is not None
        last_event_id: str | None = None
        retry_ms: int | None = None
        while True:
            headers = self._bodiless_headers(last_event_id)
            parser = SseParser(self.max_message_size)
            try:
                async with self._http.stream("GET", self.url, headers=headers) as response:
                    status = response.status_code
                    if status == 404 and self.session_id is not None:
                        raise HttpFailure(f"the server at {self.url} ended the session "
                                          "(HTTP 404)", 404, fatal=True)
                    if status != 200 or _media_type(response) != "text/event-stream":
                        # 405 is the spec's "no such stream here"; others mean the same to us.
                        log.debug("%s: no GET stream (HTTP %s)", self.name, status)
                        return
                    await self._read_events(response, parser, None, "GET")
            except httpx.ConnectError as exc:
                raise HttpFailure(f"cannot connect to {self.url}: {exc}", fatal=True) from None
            except httpx.HTTPError as exc:
                log.info("%s: the GET stream broke (%r); reconnecting", self.name, exc)
            last_event_id = parser.last_event_id or last_event_id
            retry_ms = parser.retry_ms if parser.retry_ms is not None else retry_ms
            await asyncio.sleep((retry_ms if retry_ms is not None else DEFAULT_RETRY_MS) / 1000)

    # -- tools -------------------------------------------------------------------------

    def accept_tools(self, tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """A ``tools/list`` as a 2026-07-28 HTTP client must see it: tools whose
        ``x-mcp-header`` annotations are invalid are dropped (with a warning); the
        annotations of the others are kept for :meth:`send`."""
        kept = []
        annotations: dict[str, list[HeaderAnnotation]] = {}
        rejected: dict[str, str] = {}
        for tool in tools:
            name = tool.get("name")
            try:
                found = header_annotations(tool.get("inputSchema"))
            except InvalidToolSchema as exc:
                log.warning("%s: ignoring tool %r: %s", self.name, name, exc)
                rejected[str(name)] = str(exc)
                continue
            if found and isinstance(name, str):
                annotations[name] = found
            kept.append(tool)
        self._param_headers = annotations
        self.rejected_tools = rejected
        return kept

    # -- closing -------------------------------------------------------------------------

    def close(self, timeout: float = 5.0) -> None:
        """Stop every stream, end a legacy session (DELETE), stop the I/O thread.
        Idempotent; call it from any thread but the I/O thread."""
        if self._closed or self._loop is None:
            self._closed = True
            return
        loop, thread = self._loop, self._thread
        try:
            self._wait(self._shutdown(), timeout)
        except Exception as exc:
            log.info("%s: closing the HTTP transport: %r", self.name, exc)
        self._closed = True
        loop.call_soon_threadsafe(loop.stop)
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)
            if not thread.is_alive():
                loop.close()

    async def aclose(self) -> None:
        """:meth:`close`, awaited on the caller's loop (``start(loop=...)``)."""
        if not self._closed and self._loop is not None:
            await self._shutdown()
        self._closed = True

    async def _shutdown(self) -> None:
        self._closed = True  # from now on failures are not reported
        me = asyncio.current_task()
        # On the private loop every task is ours; on a caller's, only those we started.
        mine = asyncio.all_tasks() if self._thread is not None else set(self._tasks)
        tasks = [t for t in mine if t is not me]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        assert self._http is not None
        if self.session_id is not None:
            # A session the client no longer needs SHOULD be ended (405: the server keeps it).
            try:
                headers = self._bodiless_headers(method="DELETE")
                await asyncio.wait_for(self._http.delete(self.url, headers=headers), 2.0)
            except (httpx.HTTPError, TimeoutError) as exc:
                log.debug("%s: DELETE of the session failed: %r", self.name, exc)
        await self._http.aclose()
