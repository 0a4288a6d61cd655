"""The security checks of the streamable HTTP server, in one place.

What HTTP alone can tell about a request, before any JSON-RPC is read: whether its
``Host`` names this machine (or a name the server was told to serve) and its ``Origin``, if
any, is allowed (DNS rebinding protection: a web page from elsewhere that makes its own name
resolve to 127.0.0.1 still sends that name), whether it carries the bearer token when one
is set, and whether a POST says it is JSON and accepts both answer formats.
"""

from __future__ import annotations

import functools
import hmac
import re
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

from .. import jsonrpc

#: Host names (no port, no brackets) that reach this machine only.
LOOPBACK_NAMES: tuple[str, ...] = ("localhost", "127.0.0.1", "::1")

_Q_ZERO = re.compile(r"q=0(\.0{0,3})?")  # RFC 9110 qvalue zero


class HttpError(Exception):
    """A request refused at the HTTP level: a status plus a JSON-RPC error for the body."""

    def __init__(
        self,
        status: int,
        code: int,
        message: str,
        request_id: jsonrpc.RequestId | None = None,
        data: Any = None,
        headers: Iterable[tuple[str, str]] = (),
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.request_id = request_id
        self.data = data
        self.headers = list(headers)


#: Headers a request may carry once only. RFC 9110 §5.3: a field that is not a list may not
#: be repeated; RFC 9112 §3.2: a request with more than one Host is answered 400. MCP's own
#: headers name one session, one revision, one method and one value each.
SINGLE_HEADERS = frozenset({
    "host", "content-type", "content-length", "authorization", "origin", "last-event-id",
    "mcp-session-id", "mcp-protocol-version", "mcp-method", "mcp-name"})
_SINGLE_PREFIXES = ("mcp-param-",)


class RequestHeaders(dict[str, str]):
    """A request's headers by lowercase name; repeated list headers are joined with ", ";
    a repeated single header is noted in ``repeated`` (the request is then refused).

    A dict, so that the dozen lookups of every request are plain ``dict.get`` calls.
    """

    def __init__(self, raw: Iterable[tuple[bytes, bytes]]) -> None:
        # uvicorn gives names lowercased already. RFC 9110: optional whitespace around a
        # field value is not part of it. One comprehension for the usual request, where
        # no name comes twice; the loop below only when one does.
        pairs = [(name.decode("latin-1").lower(), value.decode("latin-1").strip(" \t"))
                 for name, value in raw]
        super().__init__(pairs)
        self.repeated: list[str] = []
        if len(self) == len(pairs):
            return
        self.clear()
        for key, text in pairs:
            if key in self:
                if (key in SINGLE_HEADERS or key.startswith(_SINGLE_PREFIXES)) \
                        and key not in self.repeated:
                    self.repeated.append(key)
                self[key] = f"{self[key]}, {text}"
            else:
                self[key] = text

    def refuse_repeated(self) -> None:
        """Every request, the public ones too: a single header sent twice is a 400."""
        if self.repeated:
            names = ", ".join(name.title() for name in self.repeated)
            raise HttpError(400, jsonrpc.INVALID_REQUEST,
                            f"Repeated header: {names} may appear only once in a request "
                            "(RFC 9110 §5.3); send it once")


@functools.lru_cache(maxsize=256)  # clients send the same few values on every request
def media_types(value: str | None) -> tuple[str, ...]:
    """The media types of an Accept or Content-Type value, without parameters; those with
    ``q=0`` ("not acceptable") are left out."""
    types = []
    for item in (value or "").split(","):
        media, *params = (part.replace(" ", "").lower() for part in item.split(";"))
        if media and not any(_Q_ZERO.fullmatch(p) for p in params):
            types.append(media)
    return tuple(types)


def accepts(headers: RequestHeaders, media_type: str) -> bool:
    return _accepts(headers.get("accept"), media_type)


def _accepts(accept: str | None, media_type: str) -> bool:
    if accept is None:
        return True  # no Accept header: anything goes (RFC 9110)
    family = media_type.split("/")[0] + "/*"
    return any(m in (media_type, family, "*/*") for m in media_types(accept))


@functools.lru_cache(maxsize=256)  # a client sends the same pair on every POST
def _post_media_status(content_type: str | None, accept: str | None) -> int:
    """415 if a POST's body is not said to be JSON, 406 if it does not accept both answer
    formats, else 200."""
    if "application/json" not in media_types(content_type):
        return 415
    if not (_accepts(accept, "application/json") and _accepts(accept, "text/event-stream")):
        return 406
    return 200


@functools.lru_cache(maxsize=256)  # one or two values per server, every request
def hostname(authority: str) -> str | None:
    """``127.0.0.1:8000`` -> ``127.0.0.1``; ``[::1]:80`` -> ``::1``; None if malformed."""
    try:
        return urlsplit("//" + authority).hostname
    except ValueError:
        return None


class Guard:
    """The security policy of one server. Suits a local server by default: only requests
    whose ``Host`` names this machine (``localhost``, ``127.0.0.1``, ``[::1]``) and whose
    ``Origin``, if any, is on this machine. ``allowed_hosts`` adds names (port ignored;
    ``"*"`` turns the check off), ``allowed_origins`` the web pages that may call
    (``scheme://host[:port]``, or a bare host name for any scheme and port; ``"*"`` admits
    every origin); with ``token`` set, every request needs ``Authorization: Bearer``."""

    def __init__(self, allowed_hosts: Iterable[str] | None = None,
                 allowed_origins: Iterable[str] | None = None,
                 token: str | None = None) -> None:
        hosts = {h.lower().strip("[]") for h in (*LOOPBACK_NAMES, *(allowed_hosts or ()))}
        self._hosts: set[str] | None = None if "*" in hosts else hosts
        origins = [o.lower().rstrip("/") for o in (*LOOPBACK_NAMES, *(allowed_origins or ()))]
        self._any_origin = "*" in origins
        self._origins = {o for o in origins if "://" in o}
        self._origin_hosts = {o.strip("[]") for o in origins if "://" not in o}
        self._token = token.encode() if token else None

    def check(self, headers: RequestHeaders) -> None:
        """Host, Origin and bearer token: the checks every request passes, first."""
        host = headers.get("host")
        if self._hosts is not None and (host is None or hostname(host) not in self._hosts):
            raise HttpError(403, jsonrpc.INVALID_REQUEST,
                            f"Host {host!r} is not allowed (DNS rebinding protection); "
                            "start the server with allowed_hosts to serve other names")
        origin = headers.get("origin")
        if origin is not None and not self.origin_allowed(origin):
            raise HttpError(403, jsonrpc.INVALID_REQUEST,
                            f"Origin {origin!r} is not allowed (DNS rebinding protection); "
                            "start the server with allowed_origins to admit it")
        if self._token is not None:
            scheme, _, credentials = (headers.get("authorization") or "").partition(" ")
            if scheme.lower() != "bearer" or not credentials:
                raise HttpError(401, jsonrpc.INVALID_REQUEST,
                                "This server needs Authorization: Bearer <token>",
                                headers=[("www-authenticate", 'Bearer realm="mcp"')])
            if not hmac.compare_digest(credentials.strip().encode(), self._token):
                raise HttpError(401, jsonrpc.INVALID_REQUEST, "The bearer token is not valid",
                                headers=[("www-authenticate",
                                          'Bearer realm="mcp", error="invalid_token"')])

    def origin_allowed(self, origin: str) -> bool:
        if self._any_origin or origin.lower().rstrip("/") in self._origins:
            return True
        try:
            parts = urlsplit(origin)
            name = parts.hostname
        except ValueError:
            return False
        return parts.scheme in ("http", "https") and name in self._origin_hosts

    def check_post(self, headers: RequestHeaders) -> None:
        """A POST carries JSON and accepts both answer formats (JSON and an SSE stream)."""
        status = _post_media_status(headers.get("content-type"), headers.get("accept"))
        if status == 415:
            raise HttpError(415, jsonrpc.INVALID_REQUEST,
                            "POST a JSON-RPC message with Content-Type: application/json")
        if status == 406:
            raise HttpError(406, jsonrpc.INVALID_REQUEST,
                            "Accept must list both application/json and text/event-stream")
