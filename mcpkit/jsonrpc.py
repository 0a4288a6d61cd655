"""JSON-RPC 2.0 messages as plain dicts: build them, classify them, validate them.

MCP speaks JSON-RPC 2.0. There are four kinds of message:

- a *request* has ``id`` and ``method`` and expects exactly one response;
- a *notification* has ``method`` but no ``id`` and is never answered;
- a *result response* has ``id`` and ``result``;
- an *error response* has ``id`` (null when the request could not be read) and ``error``.

Messages stay plain dicts on the hot path: building a class per message costs more than
the whole round trip of a small request. :func:`classify` checks the shape once, at the
edge, and raises :class:`InvalidRequest` with the exact reason when a message is wrong.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from .logs import LazyLogger

log = LazyLogger("mcpkit.jsonrpc")  # see mcpkit.logs

JSONRPC_VERSION = "2.0"

# The standard codes (JSON-RPC 2.0, section 5.1).
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603

# MCP's own codes.
RESOURCE_NOT_FOUND = -32002  # legacy revisions (2024-11-05 .. 2025-11-25): resources/read
HEADER_MISMATCH = -32020  # 2026-07-28: HTTP headers disagree with the body
MISSING_REQUIRED_CLIENT_CAPABILITY = -32021  # 2026-07-28
UNSUPPORTED_PROTOCOL_VERSION = -32022  # 2026-07-28

ERROR_NAMES: dict[int, str] = {
    PARSE_ERROR: "Parse error",
    INVALID_REQUEST: "Invalid Request",
    METHOD_NOT_FOUND: "Method not found",
    INVALID_PARAMS: "Invalid params",
    INTERNAL_ERROR: "Internal error",
    RESOURCE_NOT_FOUND: "Resource not found",
    HEADER_MISMATCH: "Header mismatch",
    MISSING_REQUIRED_CLIENT_CAPABILITY: "Missing required client capability",
    UNSUPPORTED_PROTOCOL_VERSION: "Unsupported protocol version",
}

RequestId = str | int
Kind = Literal["request", "notification", "result", "error"]


class JsonRpcError(Exception):
    """An error that travels to the peer as a JSON-RPC error object.

    Raise it from a handler to answer with a specific code; the dispatcher turns it into
    an error response. ``data`` is optional structured detail (must be JSON-serialisable).
    """

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    def to_error(self) -> dict[str, Any]:
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error

    @classmethod
    def from_error(cls, error: dict[str, Any]) -> JsonRpcError:
        return cls(error.get("code", INTERNAL_ERROR), error.get("message", ""), error.get("data"))

    def __repr__(self) -> str:
        return f"{type(self).__name__}(code={self.code}, message={self.message!r})"


class InvalidRequest(JsonRpcError):
    """The message is JSON but not a valid JSON-RPC 2.0 message (-32600)."""

    def __init__(self, message: str, data: Any = None) -> None:
        super().__init__(INVALID_REQUEST, message, data)


class InvalidParams(JsonRpcError):
    """The method exists but its params are wrong (-32602)."""

    def __init__(self, message: str, data: Any = None) -> None:
        super().__init__(INVALID_PARAMS, message, data)


class MethodNotFound(JsonRpcError):
    def __init__(self, method: str) -> None:
        super().__init__(METHOD_NOT_FOUND, f"Method not found: {method}", {"method": method})


# -- building ---------------------------------------------------------------------------


def request(id: RequestId, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": JSONRPC_VERSION, "id": id, "method": method}
    if params is not None:
        message["params"] = params
    return message


def notification(method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": JSONRPC_VERSION, "method": method}
    if params is not None:
        message["params"] = params
    return message


def result_response(id: RequestId, result: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": JSONRPC_VERSION, "id": id, "result": result}


def error_response(
    id: RequestId | None, code: int, message: str, data: Any = None
) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": JSONRPC_VERSION, "id": id, "error": error}


def error_response_from(id: RequestId | None, exc: JsonRpcError) -> dict[str, Any]:
    return {"jsonrpc": JSONRPC_VERSION, "id": id, "error": exc.to_error()}


# -- reading ----------------------------------------------------------------------------


def _is_id(value: Any) -> bool:
    # bool is a subclass of int, but `true` is not a valid id.
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def classify(message: Any) -> Kind:
    """Return the kind of a decoded JSON value, or raise :class:`InvalidRequest` saying why.

    Checks only the JSON-RPC envelope; whether ``params`` fit the method is the handler's
    business (-32602).
    """
    if not isinstance(message, dict):
        if isinstance(message, list):
            raise InvalidRequest(
                "batches (JSON arrays) are not supported: send one JSON object per message"
            )
        raise InvalidRequest(f"a message must be a JSON object, got {type(message).__name__}")
    if message.get("jsonrpc") != JSONRPC_VERSION:
        got = message.get("jsonrpc", "<missing>")
        raise InvalidRequest(f'"jsonrpc" must be "2.0", got {got!r}')

    if "method" in message:
        method = message["method"]
        if not isinstance(method, str) or not method:
            raise InvalidRequest(f'"method" must be a non-empty string, got {method!r}')
        if "result" in message or "error" in message:
            raise InvalidRequest('a message with "method" must not carry "result" or "error"')
        params = message.get("params")
        if params is not None and not isinstance(params, dict):
            raise InvalidRequest(
                f'"params" must be an object (MCP uses named params), got {type(params).__name__}'
            )
        if "id" not in message:
            return "notification"
        if not _is_id(message["id"]):
            raise InvalidRequest(
                f'a request "id" must be a string or an integer, got {message["id"]!r}'
            )
        return "request"

    has_result = "result" in message
    has_error = "error" in message
    if has_result == has_error:
        raise InvalidRequest(
            'a message needs "method" (request or notification), '
            'or exactly one of "result" and "error" (response)'
        )
    if "id" not in message:
        raise InvalidRequest('a response must carry the "id" of its request')
    id_ = message["id"]
    if has_result:
        if not _is_id(id_):
            raise InvalidRequest(f'a response "id" must be a string or an integer, got {id_!r}')
        if not isinstance(message["result"], dict):
            raise InvalidRequest('"result" must be an object')
        return "result"
    if id_ is not None and not _is_id(id_):
        raise InvalidRequest(f'an error response "id" must be a string, an integer or null, '
                             f"got {id_!r}")
    error = message["error"]
    if not isinstance(error, dict):
        raise InvalidRequest('"error" must be an object with "code" and "message"')
    code = error.get("code")
    if not isinstance(code, int) or isinstance(code, bool):
        raise InvalidRequest(f'"error.code" must be an integer, got {code!r}')
    if not isinstance(error.get("message"), str):
        raise InvalidRequest('"error.message" must be a string')
    return "error"


def request_id_of(message: Any) -> RequestId | None:
    """The id to answer an invalid message with: its own if usable, else null."""
    if isinstance(message, dict) and _is_id(message.get("id")):
        return message["id"]
    return None


# -- writing ----------------------------------------------------------------------------


def encode_or_replace(encode: Callable[[Any], bytes], message: Any) -> bytes | None:
    """Encode an outgoing message; never let one bad value take the connection down.

    ``encode`` raises ``ValueError`` for a value JSON cannot carry (a tool that returns NaN).
    A response must still answer its request exactly once, so it is replaced by a -32603
    error with the same id; a request or notification is dropped (None). Both are logged.
    """
    try:
        return encode(message)
    except ValueError as exc:
        problem = exc
    if isinstance(message, list):  # a batch of responses: replace only the bad ones
        return encode([_replacement(item, problem) if _unencodable(encode, item) else item
                       for item in message])
    replacement = _replacement(message, problem)
    if replacement is None:
        log.error("dropped an outgoing %s: %s", _describe(message), problem)
        return None
    log.error("the response to request %r %s; sent -32603 instead",
              replacement["id"], problem)
    return encode(replacement)


def _unencodable(encode: Callable[[Any], bytes], message: Any) -> bool:
    try:
        encode(message)
    except ValueError:
        return True
    return False


def _replacement(message: Any, problem: Exception) -> dict[str, Any] | None:
    if not isinstance(message, dict) or "method" in message:
        return None
    request_id = message.get("id")
    if request_id is not None and not _is_id(request_id):
        request_id = None
    return error_response(request_id, INTERNAL_ERROR,
                          f"Internal error: the response {problem}; the server log has "
                          "the details")


def _describe(message: Any) -> str:
    if isinstance(message, dict) and isinstance(message.get("method"), str):
        kind = "request" if "id" in message else "notification"
        return f"{kind} {message['method']}"
    return "message"
