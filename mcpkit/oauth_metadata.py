"""What an OAuth-protected MCP server says, and where its documents are: the challenges of a
``WWW-Authenticate`` header, the well-known URLs of protected-resource and authorization
server metadata (RFC 9728, RFC 8414, OpenID discovery) in the order the MCP authorization
spec gives, and a bounded fetch of such a document. Pure helpers of :mod:`mcpkit.oauth`,
which runs the flow; nothing here keeps state.
"""

from __future__ import annotations

import json
import logging
import re
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx

log = logging.getLogger("mcpkit.oauth")

MAX_DOCUMENT_SIZE = 256 * 1024

class OAuthError(Exception):
    """The flow cannot give a token: what went wrong, said for a person (no secrets)."""


# -- WWW-Authenticate (RFC 9110 section 11.6.1) ------------------------------------------


class Challenge(dict[str, str]):
    """One challenge of a ``WWW-Authenticate`` header: its auth-params (lower-case names),
    and the scheme in :attr:`scheme` (lower case)."""

    scheme: str = ""


_TOKEN = r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+"
_PARAM = re.compile(rf'({_TOKEN})[ \t]*=[ \t]*("(?:[^"\\]|\\.)*"|[^\s,]*)')
_SCHEME = re.compile(rf"({_TOKEN})(?:[ \t]+[A-Za-z0-9\-._~+/]+=*(?=[ \t]*(?:,|$)))?")
_GAP = re.compile(r"[\s,]*")


def parse_www_authenticate(header: str) -> list[Challenge]:
    """The challenges in a ``WWW-Authenticate`` value, in order. Lenient: a part that does
    not parse ends the list rather than raising."""
    challenges: list[Challenge] = []
    current: Challenge | None = None
    at = _GAP.match(header).end()
    while at < len(header):
        param = _PARAM.match(header, at)
        if param is not None and current is not None:
            value = param.group(2)
            if value.startswith('"'):
                value = re.sub(r"\\(.)", r"\1", value[1:-1])
            current[param.group(1).lower()] = value
            at = param.end()
        else:
            scheme = _SCHEME.match(header, at)
            if scheme is None or param is not None:
                break
            current = Challenge()
            current.scheme = scheme.group(1).lower()
            challenges.append(current)
            at = scheme.end()
        at = _GAP.match(header, at).end()
    return challenges


def bearer_challenge(header: str | None) -> Challenge | None:
    """The ``Bearer`` (else the ``DPoP``) challenge of a ``WWW-Authenticate`` value, if it
    has one: both carry the same auth-params (RFC 6750, RFC 9449 section 7.1)."""
    challenges = parse_www_authenticate(header or "")
    for scheme in ("bearer", "dpop"):
        for challenge in challenges:
            if challenge.scheme == scheme:
                return challenge
    return None


# -- discovery helpers --------------------------------------------------------------------


def _origin(url: str) -> tuple[str, str]:
    parts = urlsplit(url)
    return parts.scheme.lower(), parts.netloc.lower()


def resource_covers(resource: str, server_url: str) -> bool:
    """True if the resource identifier ``resource`` is ``server_url`` or a parent of it:
    same scheme and authority, and a path that is a prefix ending at a segment boundary."""
    if _origin(resource) != _origin(server_url) or urlsplit(resource).fragment:
        return False
    want = urlsplit(resource).path.rstrip("/")
    have = urlsplit(server_url).path.rstrip("/")
    return have == want or have.startswith(want + "/")


def protected_resource_urls(server_url: str) -> list[str]:
    """RFC 9728 well-known URLs for ``server_url``: path-based first, then the root."""
    parts = urlsplit(server_url)
    path = parts.path.rstrip("/")
    base = "/.well-known/oauth-protected-resource"
    urls = [urlunsplit((parts.scheme, parts.netloc, base + path, "", ""))] if path else []
    urls.append(urlunsplit((parts.scheme, parts.netloc, base, "", "")))
    return urls


def authorization_server_urls(issuer: str) -> list[str]:
    """Where an issuer's metadata may be, in the order the MCP spec says to try them."""
    parts = urlsplit(issuer)
    path = parts.path.rstrip("/")

    def at(p: str) -> str:
        return urlunsplit((parts.scheme, parts.netloc, p, "", ""))

    if path:
        return [at(f"/.well-known/oauth-authorization-server{path}"),
                at(f"/.well-known/openid-configuration{path}"),
                at(f"{path}/.well-known/openid-configuration")]
    return [at("/.well-known/oauth-authorization-server"), at("/.well-known/openid-configuration")]


async def get_json(http: httpx.AsyncClient, url: str, what: str,
                    timeout: float) -> dict[str, Any] | None:
    """GET a JSON document: None if the server has none there (4xx); OAuthError if it is
    unreachable, too large, or not a JSON object."""
    try:
        async with http.stream("GET", url, headers={"accept": "application/json"},
                               timeout=timeout) as response:
            if 400 <= response.status_code < 500:
                log.debug("%s: HTTP %s from %s", what, response.status_code, url)
                return None
            if response.status_code != 200:
                raise OAuthError(f"{what}: HTTP {response.status_code} from {url}")
            body = bytearray()
            async for chunk in response.aiter_bytes():
                body += chunk
                if len(body) > MAX_DOCUMENT_SIZE:
                    raise OAuthError(f"{what} at {url} is larger than {MAX_DOCUMENT_SIZE} bytes")
    except httpx.HTTPError as exc:
        raise OAuthError(f"{what}: cannot fetch {url}: {exc!r}") from None
    try:
        document = json.loads(body)
    except ValueError:
        raise OAuthError(f"{what} at {url} is not JSON") from None
    if not isinstance(document, dict):
        raise OAuthError(f"{what} at {url} is not a JSON object")
    return document


def need_string(document: dict[str, Any], field: str, what: str) -> str:
    value = document.get(field)
    if not isinstance(value, str) or not value:
        raise OAuthError(f"{what} has no valid {field!r}")
    return value


def scopes_of(value: Any) -> list[str]:
    if isinstance(value, str):
        return value.split()
    if isinstance(value, list):
        return [s for s in value if isinstance(s, str) and s]
    return []
