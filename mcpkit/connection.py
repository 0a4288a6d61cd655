"""The server's side of one transport connection.

Theory of operation
-------------------
A transport (stdio, HTTP) calls :meth:`Server.connect` with a ``send`` function and feeds
the returned :class:`Connection` every decoded message with :meth:`Connection.receive`.
The connection answers from its server's :class:`~mcpkit.registry.Registry` (the layer
below; the :class:`~mcpkit.server.Server` above makes connections).

What it holds: in the legacy era the ``initialize`` handshake fixes version, client
capabilities and log level for the connection's life; in both eras it tracks requests in
flight (for cancellation and duplicate ids), requests *we* sent to the client (legacy
sampling / elicitation / roots), resource subscriptions and ``subscriptions/listen``
streams. Everything else about a request lives in its :class:`~mcpkit.context.Context`.

Which era a request belongs to: a connection that completed ``initialize`` is legacy for
its lifetime. Otherwise a request carrying ``_meta["io.modelcontextprotocol/protocolVersion"]``
is modern, and anything else is malformed (-32602), except ``ping``.

Threads: the transport's reader calls ``receive``. Plain tools run right there (the fast
path: no thread hop). A tool that takes a :class:`Context` may wait on the client (legacy
elicitation, a cancellable loop), so it runs on a thread of the connection's
:class:`_CallThreads`, one per call running, kept for the next call when it ends, and its
response is sent from that thread. ``send`` is serialised by a lock.
"""

from __future__ import annotations

import contextvars
import itertools
import threading
from collections.abc import Callable
from typing import Any

from . import content as content_mod
from . import jsonrpc, mrtr, tracing, versions
from . import params as params_mod
from . import tasks as tasks_mod
from .context import Context, Send
from .framing import FramingError, MessageTooLarge
from .jsonrpc import InvalidParams, JsonRpcError
from .logs import LazyLogger
from .registry import Registry
from .versions import (
    META_CLIENT_CAPABILITIES,
    META_LOG_LEVEL,
    META_PROTOCOL_VERSION,
    META_SERVER_INFO,
    META_SUBSCRIPTION_ID,
)

log = LazyLogger("mcpkit.connection")  # see mcpkit.logs

CLIENT_REQUEST_TIMEOUT_S = 120.0
CALL_THREAD_IDLE_S = 30.0  # how long a call thread waits for the next call before it ends

# Methods that exist only in one era.
_LEGACY_ONLY = frozenset({"initialize", "ping", "logging/setLevel", "resources/subscribe",
                          "resources/unsubscribe"})
_MODERN_ONLY = frozenset({"server/discover", "subscriptions/listen"})
# The capability a feature's methods need the server to have advertised.
_CAPABILITY_FOR_METHOD = {"tools": "tools", "resources": "resources", "prompts": "prompts",
                          "completion": "completions"}
# Results that may come back as input_required in the modern era.
_MRTR_METHODS = frozenset({"tools/call", "prompts/get", "resources/read"})


class Connection:
    """The server's side of one transport connection. Feed it with :meth:`receive`."""

    def __init__(self, server: Registry, send: Send) -> None:
        self.server = server
        self._raw_send = send
        self._send_lock = threading.Lock()
        self.closed = False
        # Legacy handshake state: fixed once initialize succeeds.
        self.initialized = False
        self.protocol_version: str | None = None
        self.client_capabilities: dict[str, Any] = {}
        self.client_info: dict[str, Any] = {}
        self.log_level: str | None = None
        self.subscriptions: set[str] = set()
        # Requests being served, by id: for cancellation and duplicate-id detection.
        self.in_flight: dict[jsonrpc.RequestId, Context] = {}
        # Modern subscriptions/listen streams, by the listen request's id.
        self.listens: dict[jsonrpc.RequestId, _Listen] = {}
        # Requests we sent to the client (legacy era), by id.
        self._outgoing: dict[int, _Waiter] = {}
        self._next_id = itertools.count(1)
        self._calls: _CallThreads | None = None  # see _call_threads
        self._state_lock = threading.Lock()
        # OpenTelemetry, if the application uses it (mcpkit.tracing): a SERVER span per
        # request served; "http" set by the HTTP transport, for the spans' attributes.
        self.tracing = tracing.tracer()
        self.transport = "stdio"
        # Shared by requests that keep nothing on it (HTTP's 2026-07-28 requests whose
        # handler takes no Context): it tracks no request, so ids may repeat across clients.
        self.stateless = False

    # -- sending -------------------------------------------------------------------------

    def send(self, message: dict[str, Any]) -> None:
        if self.closed:
            return
        with self._send_lock:
            self._raw_send(message)

    def request_client(self, method: str, params: dict[str, Any],
                       send: Send | None = None) -> dict[str, Any]:
        """Send a request to the client and wait for its result (legacy era).

        ``send``: the channel of the request that asks (default: the connection's own).
        """
        send = send or self.send
        request_id = next(self._next_id)
        waiter = _Waiter()
        with self._state_lock:
            self._outgoing[request_id] = waiter
        if self.tracing is not None:  # the question belongs to the trace of what asks it
            params = self.tracing.with_context(params)
        send(jsonrpc.request(request_id, method, params))
        try:
            if not waiter.event.wait(CLIENT_REQUEST_TIMEOUT_S):
                send(jsonrpc.notification(
                    "notifications/cancelled", {"requestId": request_id, "reason": "timeout"}))
                raise TimeoutError(f"the client did not answer {method} in "
                                   f"{CLIENT_REQUEST_TIMEOUT_S:.0f} s")
        finally:
            with self._state_lock:
                self._outgoing.pop(request_id, None)
        if waiter.message is None:
            raise ConnectionError("the connection closed while waiting for the client")
        if "error" in waiter.message:
            raise JsonRpcError.from_error(waiter.message["error"])
        return waiter.message["result"]

    # -- receiving -----------------------------------------------------------------------

    def receive(self, message: Any, reply: Send | None = None, *,
                may_block: bool = False) -> None:
        """Handle one decoded message (or a :class:`FramingError` from the decoder).

        ``reply`` is where this message's response and request-scoped notifications go
        (progress, log messages, a listen stream); by default the connection's ``send``.
        HTTP gives each POST its own. ``may_block``: the caller's thread may wait as long as
        the handler does (HTTP's executor), so a handler that takes a Context runs right here
        rather than on one of the connection's call threads: in a 2026-07-28 request always,
        in a legacy session when it cannot wait for another message (it never asks the
        client, :mod:`mcpkit.context_use`), which only another thread could read.
        """
        reply = reply or self.send
        try:
            if isinstance(message, FramingError):
                code = jsonrpc.INVALID_REQUEST if isinstance(message, MessageTooLarge) \
                    else jsonrpc.PARSE_ERROR
                reply(jsonrpc.error_response(None, code, str(message)))
                return
            if isinstance(message, list) and self.protocol_version == "2025-03-26":
                self._receive_batch(message, reply)
                return
            try:
                kind = jsonrpc.classify(message)
            except JsonRpcError as exc:
                reply(jsonrpc.error_response_from(jsonrpc.request_id_of(message), exc))
                return
            if kind == "request":
                self._on_request(message, reply, may_block)
            elif kind == "notification":
                self._on_notification(message)
            else:
                self._on_response(message)
        except Exception:
            # A bug of ours (or a handler's) must cost one answer, never the connection.
            request_id = jsonrpc.request_id_of(message)
            log.exception("failed on a message (request id %r)", request_id)
            if isinstance(message, dict) and "method" in message and request_id is not None:
                reply(jsonrpc.error_response(request_id, jsonrpc.INTERNAL_ERROR,
                                             "Internal error; the server log has the details"))

    def receive_request(self, message: dict[str, Any], reply: Send, *,
                        may_block: bool = False) -> None:
        """:meth:`receive` for a message the transport has already classified as a request
        and whose ``params._meta`` it has checked (HTTP does both to choose the era). The
        caller answers -32603 if this raises."""
        self._on_request(message, reply, may_block, meta_checked=True)

    def _receive_batch(self, batch: list[Any], reply: Send) -> None:
        """A JSON-RPC batch (revision 2025-03-26 only): the responses go back as one array.

        Notifications (progress, log) for the batch's requests still go out on their own.
        """
        if not batch:
            reply(jsonrpc.error_response(None, jsonrpc.INVALID_REQUEST, "an empty batch"))
            return
        expected = 0
        for item in batch:
            try:
                expected += jsonrpc.classify(item) == "request"
            except JsonRpcError:
                expected += 1
        responses: list[dict[str, Any]] = []
        lock = threading.Lock()

        def collect(message: dict[str, Any]) -> None:
            if "method" in message:
                reply(message)
                return
            with lock:
                responses.append(message)
                done = len(responses) == expected
            if done:
                reply(responses)  # type: ignore[arg-type]

        for item in batch:
            self.receive(item, collect)

    def _on_response(self, message: dict[str, Any]) -> None:
        with self._state_lock:
            waiter = self._outgoing.get(message["id"])
        if waiter is None:
            log.warning("ignored a response to unknown request id %r", message.get("id"))
            return
        waiter.message = message
        waiter.event.set()

    def _on_notification(self, message: dict[str, Any]) -> None:
        method = message["method"]
        params = message.get("params") or {}
        if method == "notifications/initialized":
            return
        if method == "notifications/cancelled":
            self.cancel(params.get("requestId"), respond=True)
            return
        log.debug("ignored notification %s", method)

    def cancel(self, request_id: Any, respond: bool = False) -> None:
        """Cancel a call in flight or end a listen stream (unknown ids are ignored).

        ``respond``: close a listen stream with its final result (stdio); over HTTP the
        client closing the stream is the cancellation and nothing more is sent.
        """
        if not isinstance(request_id, str | int):
            return  # not an id at all (a list, an object): nothing it could cancel
        with self._state_lock:
            ctx = self.in_flight.get(request_id)
            listen = self.listens.pop(request_id, None)
        if ctx is not None:
            ctx.cancelled.set()
        if listen is not None and respond:
            self._end_listen(request_id, listen)

    def _on_request(self, message: dict[str, Any], reply: Send, may_block: bool = False,
                    meta_checked: bool = False) -> None:
        request_id = message["id"]
        method = message["method"]
        params = message.get("params") or {}
        if request_id in self.in_flight:
            reply(jsonrpc.error_response(
                request_id, jsonrpc.INVALID_REQUEST,
                f"request id {request_id!r} is already in flight; use a new id per request"))
            return
        try:
            if not meta_checked:
                params_mod.check_meta(method, params)
            ctx = self._context_for(request_id, method, params, reply)
        except JsonRpcError as exc:
            reply(jsonrpc.error_response_from(request_id, exc))
            return
        if ctx is None:  # initialize was handled
            return
        needed = _CAPABILITY_FOR_METHOD.get(method.split("/")[0])
        if needed and not self.server.offers(needed):
            # A method of a feature the server does not offer is unknown to it.
            reply(jsonrpc.error_response_from(request_id, jsonrpc.MethodNotFound(method)))
            return
        if method == "subscriptions/listen":
            self._listen(ctx)
            return
        if not self._may_wait(method, params) or self.stateless:
            # (On a stateless connection, a handler that came to take a Context after the
            # transport looked, its tool registered again, is served here all the same:
            # nothing can cancel it, but no other client's request shares its id.)
            self._serve(ctx)
            return
        # Only a call on its own thread can be cancelled: an inline one is over before the
        # reader could read the cancellation. So only these pay for an Event.
        ctx.cancelled = threading.Event()
        with self._state_lock:
            self.in_flight[request_id] = ctx
        if may_block and (ctx.era == "modern" or not self._asks_client(method, params)):
            # A modern request waits on nothing this connection could receive later (no
            # requests to the client; cancellation comes from the transport), nor does a
            # legacy handler that only reports progress or logs: no thread.
            self._serve_on_thread(ctx)
            return
        self._call_threads().run(self._serve_on_thread, ctx)

    def _call_threads(self) -> _CallThreads:
        """The connection's call threads, made for the first call that may wait."""
        with self._state_lock:
            if self._calls is None:
                self._calls = _CallThreads()
            return self._calls

    def may_wait(self, message: Any) -> bool:
        """Whether a request not checked yet names a handler that takes a Context (see
        :meth:`_may_wait`); False for anything malformed, which is answered at once."""
        if not isinstance(message, dict):
            return False
        params = message.get("params")
        if not isinstance(params, dict):
            return False
        key = "uri" if message.get("method") == "resources/read" else "name"
        if not isinstance(params.get(key), str):
            return False
        return self._may_wait(message["method"], params)

    def _may_wait(self, method: str, params: dict[str, Any]) -> bool:
        """Whether a request's handler takes a Context, so it may wait on the client (legacy
        elicitation, sampling, roots) or on cancellation. Such a handler must not run on the
        reader: the answer it waits for could only be read by the thread it blocks."""
        if method == "tasks/result":
            return True  # (2025-11-25) it waits for the task to end
        handler = self._handler(method, params)
        return handler is not None and handler.context_param is not None

    def _asks_client(self, method: str, params: dict[str, Any]) -> bool:
        """Whether a handler with a Context may wait for another message of this
        connection (see :mod:`mcpkit.context_use`); if not, a thread that may block can run
        it in a legacy session too."""
        if method == "tasks/result":
            return True
        handler = self._handler(method, params)
        return handler is None or handler.asks_client

    def _handler(self, method: str, params: dict[str, Any]) -> Any:
        server = self.server
        if method == "tools/call":
            return server.tools.get(params["name"])
        if method == "prompts/get":
            return server.prompts.get(params["name"])
        if method == "resources/read":
            found = server._find_resource(params["uri"])
            return found[0] if found else None
        return None

    def _context_for(
        self, request_id: jsonrpc.RequestId, method: str, params: dict[str, Any], reply: Send
    ) -> Context | None:
        """Decide the request's era, check it is allowed there, and build its context."""
        meta = params.get("_meta")
        modern_version = meta.get(META_PROTOCOL_VERSION) if isinstance(meta, dict) else None
        if method == "initialize":
            params_mod.check(method, params)
            self._initialize(request_id, params, reply)
            return None
        if self.initialized:
            if method in _MODERN_ONLY:
                raise jsonrpc.MethodNotFound(method)
            params_mod.check(method, params)
            return Context(self, request_id, method, params, "legacy", self.protocol_version,
                           self.client_capabilities, self.log_level, reply)
        if modern_version is None:
            if method == "ping":
                return Context(self, request_id, method, params, "legacy",
                               versions.LATEST_LEGACY_VERSION, {}, None, reply)
            # Neither a handshake nor modern _meta: malformed either way (the spec: -32602).
            raise InvalidParams(
                f'{method} needs params._meta["{META_PROTOCOL_VERSION}"] and '
                f'params._meta["{META_CLIENT_CAPABILITIES}"] (revision 2026-07-28), '
                "or an initialize handshake first (earlier revisions)")
        return self._modern_context(request_id, method, params, meta, modern_version, reply)

    def _modern_context(self, request_id, method, params, meta, version, reply) -> Context:
        # Checks in the order the spec's error table implies: shape, version, method.
        capabilities = meta.get(META_CLIENT_CAPABILITIES)
        if not isinstance(capabilities, dict):
            raise InvalidParams(
                f'params._meta["{META_CLIENT_CAPABILITIES}"] is required in 2026-07-28 '
                "(an empty object if the client has none)")
        # A supported modern revision: the modern entries of SUPPORTED_VERSIONS are exactly
        # MODERN_VERSIONS (a legacy date here is as unsupported as an unknown one).
        if not isinstance(version, str) or version not in versions.MODERN_VERSIONS:
            raise JsonRpcError(
                jsonrpc.UNSUPPORTED_PROTOCOL_VERSION,
                f"Unsupported protocol version: {version}",
                {"supported": list(versions.SUPPORTED_VERSIONS), "requested": str(version)})
        if method in _LEGACY_ONLY:
            raise jsonrpc.MethodNotFound(method)
        log_level = meta.get(META_LOG_LEVEL)
        if log_level is not None and log_level not in versions.LOG_LEVELS:
            raise InvalidParams(f"unknown log level {log_level!r}; one of "
                                f"{', '.join(versions.LOG_LEVELS)}")
        params_mod.check(method, params)
        return Context(self, request_id, method, params, "modern", version, capabilities,
                       log_level, reply)

    def _initialize(self, request_id: jsonrpc.RequestId, params: dict[str, Any],
                    reply: Send) -> None:
        if self.initialized:
            reply(jsonrpc.error_response(request_id, jsonrpc.INVALID_REQUEST,
                                             "initialize was already called on this connection"))
            return
        requested = params.get("protocolVersion")
        if not isinstance(requested, str):
            reply(jsonrpc.error_response(request_id, jsonrpc.INVALID_PARAMS,
                                         'initialize needs a string "protocolVersion"'))
            return
        version = versions.negotiate_legacy(requested)
        self.protocol_version = version
        caps = params.get("capabilities")
        self.client_capabilities = caps if isinstance(caps, dict) else {}
        info = params.get("clientInfo")
        self.client_info = info if isinstance(info, dict) else {}
        self.initialized = True
        capabilities = self.server.capabilities()
        if versions.at_least(version, "2025-11-25") and self.server.offers_tasks():
            capabilities["tasks"] = {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
        result: dict[str, Any] = {
            "protocolVersion": version,
            "capabilities": capabilities,
            "serverInfo": self.server.info,
        }
        if self.server.instructions:
            result["instructions"] = self.server.instructions
        reply(jsonrpc.result_response(request_id, result))

    def _serve(self, ctx: Context) -> None:
        """Run one request on the reader and send its response (the fast path)."""
        ctx._send(self._run(ctx))

    def _serve_on_thread(self, ctx: Context) -> None:
        """Run one request that may wait, on a call thread (or a caller's that may block):
        it may be cancelled, and is tracked till done."""
        try:
            response = self._run(ctx)
        except Exception:  # a bug: the caller still gets its one answer
            log.exception("failed on %s (request id %r)", ctx.method, ctx.request_id)
            response = jsonrpc.error_response(ctx.request_id, jsonrpc.INTERNAL_ERROR,
                                              "Internal error; the server log has the details")
        finally:
            with self._state_lock:
                self.in_flight.pop(ctx.request_id, None)
        if ctx.cancelled.is_set():
            return  # the spec: no response to a cancelled request
        ctx._send(response)

    def _run(self, ctx: Context) -> dict[str, Any]:
        tracer = self.tracing  # read once: a shared connection's may be replaced meanwhile
        if tracer is None:
            return self._answer(ctx)
        span, token = tracer.start_server(ctx.method, ctx.request_id, ctx.params,
                                          self.transport, ctx.version)
        response = None
        try:
            response = self._answer(ctx)
            return response
        finally:
            tracer.end_server(span, token, response)

    def _answer(self, ctx: Context) -> dict[str, Any]:
        request_id, method, params = ctx.request_id, ctx.method, ctx.params
        dispatcher = self.server.dispatcher
        if ctx.era == "legacy":
            try:
                return dispatcher.call(request_id, method, params, ctx)
            except mrtr.MissingClientCapability as exc:
                result = content_mod.error_result(str(exc)).to_dict()
                return jsonrpc.result_response(request_id, result)
            except mrtr.InputRequired:  # pragma: no cover - legacy asks the client directly
                raise
        try:
            if method in _MRTR_METHODS and ("requestState" in params or "inputResponses" in params):
                self._load_round_trip(ctx)
            response = dispatcher.call(request_id, method, params, ctx)
        except JsonRpcError as exc:
            return jsonrpc.error_response_from(request_id, exc)
        except mrtr.InputRequired as exc:
            response = jsonrpc.result_response(request_id, self.input_required(ctx, exc))
        except mrtr.MissingClientCapability as exc:
            return jsonrpc.error_response(
                request_id, jsonrpc.MISSING_REQUIRED_CLIENT_CAPABILITY,
                f"Server requires the {exc.capability} capability for this request",
                {"requiredCapabilities": {exc.capability: {}}})
        return self._modern_wrap(ctx, response)

    def _modern_wrap(self, ctx: Context, response: dict[str, Any]) -> dict[str, Any]:
        result = response.get("result")
        if result is None:
            return response
        result.setdefault("resultType", "complete")
        # (A task's ttlMs is how long it is kept, not a caching hint.)
        if "ttlMs" in result and result["resultType"] != "task" and (
                "requestState" in ctx.params or "inputResponses" in ctx.params):
            result["ttlMs"] = 0  # the result of a round trip must not be cached
        meta = result.setdefault("_meta", {})
        meta[META_SERVER_INFO] = self.server.info
        return response

    def _load_round_trip(self, ctx: Context) -> None:
        """Give the context the answers of earlier rounds (from a verified requestState)."""
        params = ctx.params
        responses = params.get("inputResponses")
        if responses is not None and not isinstance(responses, dict):
            raise InvalidParams('"inputResponses" must be an object keyed like inputRequests')
        asked: dict[str, Any] = {}
        if "requestState" in params:
            fingerprint = mrtr.request_fingerprint(ctx.method, params)
            payload = self.server.sealer.open(fingerprint, params["requestState"])
            ctx._answers.update(payload.get("answers", {}))
            ctx.state.update(payload.get("state", {}))
            asked = payload.get("asked", {})
        for key, value in (responses or {}).items():
            # Answers to questions this server asked count; the rest are only offered.
            if key in asked and isinstance(value, dict) and mrtr.answer_fits(asked[key], value):
                ctx._answers[key] = value
            else:
                ctx._offered[key] = value

    def input_required(self, ctx: Context, exc: mrtr.InputRequired) -> dict[str, Any]:
        payload = {
            "answers": ctx._answers,
            "state": ctx.state,
            "asked": {k: v for k, v in exc.requests.items()},
        }
        state = self.server.sealer.seal(mrtr.request_fingerprint(ctx.method, ctx.params), payload)
        return {"resultType": "input_required", "inputRequests": exc.requests,
                "requestState": state}

    # -- subscriptions and change notifications -------------------------------------------

    def _listen(self, ctx: Context) -> None:
        wanted = ctx.params.get("notifications")
        if not isinstance(wanted, dict):
            ctx._send(jsonrpc.error_response(ctx.request_id, jsonrpc.INVALID_PARAMS,
                                             'subscriptions/listen needs a "notifications" object'))
            return
        # Acknowledge only what this server can deliver.
        caps = self.server.capabilities()
        accepted: dict[str, Any] = {}
        for key, feature in (("toolsListChanged", "tools"), ("resourcesListChanged", "resources"),
                             ("promptsListChanged", "prompts")):
            if wanted.get(key) is True and feature in caps:
                accepted[key] = True
        uris = wanted.get("resourceSubscriptions")
        if isinstance(uris, list) and "resources" in caps:
            accepted["resourceSubscriptions"] = [u for u in uris if isinstance(u, str)]
        task_ids = wanted.get("taskIds")
        if isinstance(task_ids, list):
            if not tasks_mod.client_declares(ctx.client_capabilities):
                ctx._send(jsonrpc.error_response(
                    ctx.request_id, jsonrpc.MISSING_REQUIRED_CLIENT_CAPABILITY,
                    f"taskIds needs the {tasks_mod.EXTENSION} extension",
                    {"requiredCapabilities": {"extensions": {tasks_mod.EXTENSION: {}}}}))
                return
            accepted["taskIds"] = [t for t in task_ids if self._task_exists(t)]
        with self._state_lock:
            self.listens[ctx.request_id] = _Listen(accepted, ctx._send)
        ctx._send(jsonrpc.notification("notifications/subscriptions/acknowledged", {
            "_meta": {META_SUBSCRIPTION_ID: ctx.request_id}, "notifications": accepted}))

    def _task_exists(self, task_id: Any) -> bool:
        try:
            self.server.tasks.get(task_id)
        except tasks_mod.UnknownTask:
            return False
        return True

    def _end_listen(self, request_id: jsonrpc.RequestId, listen: _Listen) -> None:
        listen.send(jsonrpc.result_response(request_id, {
            "resultType": "complete",
            "_meta": {META_SUBSCRIPTION_ID: request_id, META_SERVER_INFO: self.server.info},
        }))

    def list_changed(self, kind: str) -> None:
        method = f"notifications/{kind}/list_changed"
        if self.initialized:
            self.send(jsonrpc.notification(method))
        key = f"{kind}ListChanged"
        for listen_id, listen in list(self.listens.items()):
            if listen.wanted.get(key):
                tag = {"_meta": {META_SUBSCRIPTION_ID: listen_id}}
                listen.send(jsonrpc.notification(method, tag))

    def resource_updated(self, uri: str) -> None:
        method = "notifications/resources/updated"
        if self.initialized and uri in self.subscriptions:
            self.send(jsonrpc.notification(method, {"uri": uri}))
        for listen_id, listen in list(self.listens.items()):
            if uri in listen.wanted.get("resourceSubscriptions", ()):
                listen.send(jsonrpc.notification(
                    method, {"uri": uri, "_meta": {META_SUBSCRIPTION_ID: listen_id}}))

    def task_status(self, task: tasks_mod.Task) -> None:
        """A task's new status: ``notifications/tasks/status`` to the session that owns it
        (2025-11-25), ``notifications/tasks`` (the whole task, as tasks/get shows it) to the
        listen streams that asked for it."""
        if task.owner is self:
            self.send(jsonrpc.notification("notifications/tasks/status", task.legacy_info()))
        for listen_id, listen in list(self.listens.items()):
            if task.id in listen.wanted.get("taskIds", ()):
                listen.send(jsonrpc.notification("notifications/tasks", {
                    **task.detailed(), "_meta": {META_SUBSCRIPTION_ID: listen_id}}))

    # -- closing -------------------------------------------------------------------------

    @property
    def idle(self) -> bool:
        """No call thread busy (running a call, or sending its answer) and no request to
        the client waiting: closing now has nothing to wait for."""
        return not (self._calls and self._calls.busy) and not self._outgoing

    def close(self, timeout: float = 5.0) -> None:
        """Stop: cancel calls in flight, fail our pending requests, wait for call threads."""
        with self._state_lock:
            waiters = list(self._outgoing.values())
            contexts = list(self.in_flight.values())
            calls = self._calls
        for ctx in contexts:
            ctx.cancelled.set()
        for waiter in waiters:
            waiter.event.set()
        if calls is not None:
            calls.close(timeout)
        self.closed = True
        self.server._forget(self)


class _CallThreads:
    """The threads of a connection's calls that may wait (handlers that take a Context).

    Starting a thread costs about as much as the rest of a small request, so a thread whose
    call has ended waits :data:`CALL_THREAD_IDLE_S` for the next one before it ends. The
    number is not bounded: a call may wait minutes for the client (a legacy elicitation),
    and the next call must not wait behind it. ``close`` ends the idle threads at once and
    waits for the busy ones, which end when their call does.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._idle: list[_Slot] = []
        self._threads: set[threading.Thread] = set()
        self._closed = False

    @property
    def busy(self) -> bool:
        return len(self._threads) > len(self._idle)

    def run(self, work: Callable[..., None], *args: Any) -> None:
        with self._lock:
            if self._idle:
                slot = self._idle.pop()
                slot.work = (work, args)
                slot.ready.release()  # wakes its thread
                return
            slot = _Slot((work, args))
            thread = threading.Thread(target=self._serve, args=(slot,), daemon=True,
                                      name="mcpkit-call")
            self._threads.add(thread)
        thread.start()

    def _serve(self, slot: _Slot) -> None:
        try:
            while slot.work is not None:
                work, args = slot.work
                slot.work = None
                # A fresh context per call, as a new thread would have: a context variable
                # one handler set must not show up in the next one's call.
                contextvars.Context().run(work, *args)
                del work, args  # an idle thread must not keep its last call's objects alive
                with self._lock:
                    if self._closed:
                        return
                    self._idle.append(slot)
                if not slot.ready.acquire(timeout=CALL_THREAD_IDLE_S):
                    with self._lock:
                        if slot in self._idle:
                            self._idle.remove(slot)
                            return
                    # run() handed it a call just as the wait ended (and released the
                    # lock, under self._lock): take the lock back for the next wait.
                    slot.ready.acquire()
        finally:
            with self._lock:
                self._threads.discard(threading.current_thread())

    def close(self, timeout: float) -> None:
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
            threads = self._threads - {threading.current_thread()}  # (a call may close)
        for slot in idle:
            slot.ready.release()  # with no work: the thread ends
        for thread in threads:
            thread.join(timeout)


class _Slot:
    """What a call thread runs next. ``ready`` is a lock its idle thread waits to acquire:
    held while there is nothing to run, released to hand it a call (a bare lock rather than
    a threading.Event, whose set, clear and wait are Python code around one: the hand-over
    is on the path of every call that may wait)."""

    __slots__ = ("work", "ready")

    def __init__(self, work: tuple[Callable[..., None], tuple[Any, ...]] | None) -> None:
        self.work = work
        self.ready = threading.Lock()
        self.ready.acquire()


class _Listen:
    __slots__ = ("wanted", "send")

    def __init__(self, wanted: dict[str, Any], send: Send) -> None:
        self.wanted, self.send = wanted, send


class _Waiter:
    __slots__ = ("event", "message")

    def __init__(self) -> None:
        self.event = threading.Event()
        self.message: dict[str, Any] | None = None
