"""Dispatch: from a method name to the function that handles it.

The dispatcher owns three rules that every MCP peer needs and that are easy to get wrong:

1. an unknown method gets -32601, bad params -32602, and a handler that crashes gets
   -32603 with a short message: the traceback goes to the local log (stderr), never to
   the peer, which could not act on it and should not see our internals;
2. a notification is never answered, not even when it fails or is unknown;
3. a response that arrives (the peer answering one of *our* requests) is not a call:
   it is handed to ``on_response`` so that whoever sent the request can pick it up.

It does no I/O: messages in, messages out.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import jsonrpc
from .jsonrpc import JsonRpcError
from .logs import LazyLogger

log = LazyLogger("mcpkit.dispatch")  # see mcpkit.logs

Handler = Callable[[dict[str, Any], Any], Any]


class Dispatcher:
    """A table from method name to handler. Handlers take ``(params, context)``.

    A request handler returns the result object (a dict); raising :class:`JsonRpcError`
    answers with that error. A notification handler's return value is ignored.
    """

    def __init__(
        self,
        on_response: Callable[[dict[str, Any]], None] | None = None,
        reraise: tuple[type[BaseException], ...] = (),
    ) -> None:
        self._requests: dict[str, Handler] = {}
        # Exceptions that are signals to the caller, not failures (e.g. "input required").
        self._reraise = reraise
        self._notifications: dict[str, Handler] = {}
        self.on_response = on_response

    def add_request(self, method: str, handler: Handler) -> None:
        self._requests[method] = handler

    def add_notification(self, method: str, handler: Handler) -> None:
        self._notifications[method] = handler

    def request(self, method: str) -> Callable[[Handler], Handler]:
        """Decorator form of :meth:`add_request`."""

        def register(handler: Handler) -> Handler:
            self.add_request(method, handler)
            return handler

        return register

    def notification(self, method: str) -> Callable[[Handler], Handler]:
        """Decorator form of :meth:`add_notification`."""

        def register(handler: Handler) -> Handler:
            self.add_notification(method, handler)
            return handler

        return register

    @property
    def methods(self) -> list[str]:
        return sorted(self._requests)

    def has_request(self, method: str) -> bool:
        return method in self._requests

    def dispatch(self, message: Any, context: Any = None) -> dict[str, Any] | None:
        """Handle one decoded message; return the response to send, or None."""
        try:
            kind = jsonrpc.classify(message)
        except JsonRpcError as exc:
            return jsonrpc.error_response_from(jsonrpc.request_id_of(message), exc)
        params = message.get("params") or {}
        if kind == "request":
            return self.call(message["id"], message["method"], params, context)
        if kind == "notification":
            self.notify(message["method"], params, context)
            return None
        if self.on_response is not None:
            self.on_response(message)
        else:
            log.warning("dropped a response nobody waits for (id %r)", message.get("id"))
        return None

    def call(
        self, id: jsonrpc.RequestId, method: str, params: dict[str, Any], context: Any = None
    ) -> dict[str, Any]:
        """Run a request handler and wrap what it returns or raises as a response."""
        handler = self._requests.get(method)
        if handler is None:
            return jsonrpc.error_response_from(id, jsonrpc.MethodNotFound(method))
        try:
            return jsonrpc.result_response(id, handler(params, context))
        except JsonRpcError as exc:
            return jsonrpc.error_response_from(id, exc)
        except self._reraise:
            raise
        except Exception:
            log.exception("handler for %s (request id %r) raised", method, id)
            return jsonrpc.error_response(
                id,
                jsonrpc.INTERNAL_ERROR,
                f"Internal error while handling {method}; the server log has the details",
            )

    def notify(self, method: str, params: dict[str, Any], context: Any = None) -> None:
        handler = self._notifications.get(method)
        if handler is None:
            log.debug("ignored notification %s (no handler)", method)
            return
        try:
            handler(params, context)
        except Exception:
            log.exception("handler for notification %s raised", method)
