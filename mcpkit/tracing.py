"""Trace context in ``_meta`` and spans through the OpenTelemetry API, when it is in use.

MCP reserves three ``_meta`` keys for W3C trace context: ``traceparent``, ``tracestate``
and ``baggage`` (2026-07-28, "OpenTelemetry trace context", from SEP-414; older revisions
carry them the same way, as any ``_meta`` key). A client puts its span's context on every
request it sends; a server makes the span of its work a child of it, so that one trace runs
from the application through the host and the client into the server and back, over stdio
or HTTP. A server that asks its client something (legacy sampling, elicitation, roots) puts
the context of the request it is serving on that question, the other way round.

Spans follow OpenTelemetry's semantic conventions for MCP: named ``{method} {target}``
(``tools/call get_weather``), of kind CLIENT or SERVER, with ``mcp.method.name``,
``mcp.protocol.version``, ``jsonrpc.request.id``, ``gen_ai.tool.name`` or
``gen_ai.prompt.name``, ``mcp.resource.uri``, ``network.transport`` and ``error.type``.

Cost. mcpkit never imports OpenTelemetry. Tracing is on in a process whose application set
a tracer provider (``trace.set_tracer_provider``: where spans go) before it made its clients
and servers; otherwise :func:`tracer` is None and the only cost is one test of it per
request. A library that merely imports OpenTelemetry turns nothing on. Install with
``pip install mcpkit[otel]``.
"""

from __future__ import annotations

import sys
from typing import Any

from .versions import PACKAGE_VERSION

#: The ``_meta`` keys trace context travels in (W3C Trace Context and Baggage).
TRACE_KEYS = ("traceparent", "tracestate", "baggage")

_TARGET_KEYS = {"tools/call": ("name", "gen_ai.tool.name"),
                "prompts/get": ("name", "gen_ai.prompt.name")}


class Tracing:
    """The OpenTelemetry modules, once found in ``sys.modules``: makes and ends spans."""

    def __init__(self, trace: Any, propagate: Any) -> None:
        self._trace = trace
        self._propagate = propagate
        self._tracer = trace.get_tracer("mcpkit", PACKAGE_VERSION)

    # -- the side that sends a request -------------------------------------------------

    def start_client(self, method: str, request_id: Any, params: dict[str, Any],
                     transport: str, version: str | None) -> tuple[Any, dict[str, Any]]:
        """A CLIENT span for a request about to be sent (a child of the caller's current
        span), and the params to send: a copy whose ``_meta`` carries the span's context."""
        span = self._tracer.start_span(
            _span_name(method, params), kind=self._trace.SpanKind.CLIENT,
            attributes=_attributes(method, request_id, params, transport, version))
        return span, self.with_context(params, self._trace.set_span_in_context(span))

    def with_context(self, params: dict[str, Any], context: Any = None) -> dict[str, Any]:
        """``params`` with the trace context (the current one, unless given) in ``_meta``."""
        carrier: dict[str, str] = {}
        self._propagate.inject(carrier, context=context)
        if not carrier:
            return params
        return {**params, "_meta": {**(params.get("_meta") or {}), **carrier}}

    def end(self, span: Any, error: str | None = None) -> None:
        """End a span; ``error``: why the request failed (a JSON-RPC code, a timeout...)."""
        if error is not None:
            span.set_attribute("error.type", error)
            span.set_status(self._trace.Status(self._trace.StatusCode.ERROR))
        span.end()

    # -- the side that serves it -------------------------------------------------------

    def start_server(self, method: str, request_id: Any, params: dict[str, Any],
                     transport: str, version: str | None) -> tuple[Any, Any]:
        """A SERVER span for a request received, child of the context in its ``_meta``,
        made current on this thread (spans the handler makes nest under it); and the token
        :meth:`end_server` needs to make the previous context current again."""
        meta = params.get("_meta")
        carrier = {k: meta[k] for k in TRACE_KEYS if isinstance(meta, dict)
                   and isinstance(meta.get(k), str)}
        parent = self._propagate.extract(carrier) if carrier else None
        span = self._tracer.start_span(
            _span_name(method, params), context=parent, kind=self._trace.SpanKind.SERVER,
            attributes=_attributes(method, request_id, params, transport, version))
        token = self._trace.context_api.attach(self._trace.set_span_in_context(span))
        return span, token

    def end_server(self, span: Any, token: Any, response: dict[str, Any] | None) -> None:
        self._trace.context_api.detach(token)
        error = response.get("error") if isinstance(response, dict) else None
        if response is None:
            self.end(span, "no response")
        elif isinstance(error, dict):
            span.set_attribute("rpc.response.status_code", str(error.get("code")))
            self.end(span, str(error.get("code")))
        elif isinstance(response.get("result"), dict) and response["result"].get("isError"):
            self.end(span, "tool_error")
        else:
            self.end(span)


_made: Tracing | None = None


def tracer() -> Tracing | None:
    """Tracing for a client or server made now: None unless the application has imported
    OpenTelemetry's API (nothing is imported here to find out)."""
    global _made
    trace = sys.modules.get("opentelemetry.trace")
    if trace is None:
        return None
    # Imported by a library (the official SDK imports it) is not in use: no tracer provider
    # set means every span would be dropped, so none is made.
    if isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider):
        return None
    if _made is None or _made._trace is not trace:
        import opentelemetry.propagate as propagate  # installed with the API it came with

        _made = Tracing(trace, propagate)
    return _made


def _span_name(method: str, params: dict[str, Any]) -> str:
    target = _TARGET_KEYS.get(method)
    name = params.get(target[0]) if target else None
    return f"{method} {name}" if isinstance(name, str) else method


def _attributes(method: str, request_id: Any, params: dict[str, Any], transport: str,
                version: str | None) -> dict[str, Any]:
    attributes: dict[str, Any] = {"mcp.method.name": method,
                                  "network.transport": "tcp" if transport == "http" else "pipe"}
    if request_id is not None:
        attributes["jsonrpc.request.id"] = str(request_id)
    if version:
        attributes["mcp.protocol.version"] = version
    target = _TARGET_KEYS.get(method)
    if target and isinstance(params.get(target[0]), str):
        attributes[target[1]] = params[target[0]]
        if method == "tools/call":
            attributes["gen_ai.operation.name"] = "execute_tool"
    if isinstance(params.get("uri"), str):
        attributes["mcp.resource.uri"] = params["uri"]
    return attributes
