"""The resource-server side of OAuth: an HTTP server that takes tokens from an external
authorization server.

    from mcpkit.transports.http_auth import JwtValidator, ResourceServer

    auth = ResourceServer(
        resource="https://mcp.example.com/mcp",          # this server's canonical URL
        authorization_servers=["https://auth.example.com"],
        validator=JwtValidator("https://auth.example.com",
                               jwks_url="https://auth.example.com/jwks.json"),
        scopes=["mcp"])
    app = McpHttpApp(server, auth=auth)                   # tools read ctx.auth

Theory of operation
-------------------
What the MCP authorization spec (2025-11-25, 2026-07-28) asks of a server, in order:

1. **Protected-resource metadata** (RFC 9728) at ``/.well-known/oauth-protected-resource``
   followed by the endpoint's path (and without it): ``resource``,
   ``authorization_servers``, ``scopes_supported``, ``bearer_methods_supported``. It is
   public: no token, no Host or Origin check.
2. A request **without a token** gets ``401`` and ``WWW-Authenticate: Bearer
   resource_metadata="..."`` (plus ``scope="..."`` when scopes are required): where a
   client starts the flow (:mod:`mcpkit.oauth` is mcpkit's own client for it).
3. A token is **validated** by a :class:`TokenValidator`: :class:`JwtValidator` checks a
   JWT access token (RFC 9068) with the issuer's published keys (JWKS): signature, ``iss``,
   ``exp``/``nbf`` (with some leeway); :class:`IntrospectionValidator` asks the
   authorization server (RFC 7662). Then the **audience** (RFC 8707): the token must name
   this resource in ``aud``, so a token issued for another server is refused here.
   Anything wrong is ``401 error="invalid_token"`` with a short description that never
   repeats the token.
4. **Scopes**: the ones every request needs (``scopes``), plus those a ``scopes_for(message)``
   hook asks for a given request (a tool that writes, say). Missing ones: ``403
   error="insufficient_scope", scope="..."`` naming all the request needs (the client's
   step-up asks for them).
5. The request goes on with a :class:`TokenInfo` (subject, scopes, client, expiry): a tool
   reads it as ``ctx.auth``. The token itself is kept nowhere and logged nowhere.

When the authorization server cannot be reached and is needed (first key fetch, a key
id not seen before, an introspection not cached), the answer is ``503`` with
``Retry-After``, not ``401``: the token may well be good, and a 401 would send the client
into a new authorization that cannot succeed either. Known keys and cached introspection
results keep working while the authorization server is down.

Nothing on the hot path waits for the network: keys are fetched once (then on an unknown
key id, at most once per ``refetch_interval``), introspection results are cached for
``cache_ttl`` seconds (never beyond the token's ``exp``), and both fetches are asynchronous
with a timeout. The JOSE mechanics (JWS signatures, JWK sets, claim checks) are
``joserfc``'s, the introspection request and its client authentication Authlib's.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import math
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar
from urllib.parse import urlsplit

import httpx
from authlib.common.errors import AuthlibBaseError
from authlib.integrations.httpx_client import AsyncOAuth2Client
from joserfc import errors as jose_errors
from joserfc import jwt
from joserfc.jwk import KeySet

try:  # what Authlib's httpx integration runs on: httpx2 when installed, else httpx
    import httpx2 as _authlib_httpx
except ImportError:  # pragma: no cover
    _authlib_httpx = httpx

from .. import jsonrpc
from .http_security import HttpError, RequestHeaders

__all__ = [
    "AuthUnavailable",
    "IntrospectionValidator",
    "InvalidToken",
    "JwtValidator",
    "ResourceServer",
    "TokenInfo",
    "TokenValidator",
]

log = logging.getLogger("mcpkit.http.auth")

WELL_KNOWN = "/.well-known/oauth-protected-resource"
DEFAULT_TIMEOUT = 5.0  # each key fetch and introspection request
MAX_DOCUMENT_SIZE = 256 * 1024
RETRY_AFTER_S = 5
T = TypeVar("T")
_TRANSPORT_ERRORS = (httpx.HTTPError, _authlib_httpx.HTTPError, AuthlibBaseError)


class InvalidToken(Exception):
    """The token is not good for this server; the message is safe to send to the client."""


class AuthUnavailable(Exception):
    """The authorization server is needed to decide and cannot be reached (-> 503)."""


@dataclass(frozen=True)
class TokenInfo:
    """What a valid token says about the request: who (``subject``), through which client,
    allowed what (``scopes``), until when (``expires_at``, epoch seconds). ``claims`` are
    the JWT claims or the introspection response (never the token itself)."""

    subject: str | None
    scopes: frozenset[str]
    client_id: str | None = None
    expires_at: float | None = None
    issuer: str | None = None
    audience: tuple[str, ...] = ()
    claims: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def owner(self) -> tuple[str | None, str | None]:
        """Who a legacy session belongs to: a request whose token names someone else must
        not use it (the spec: bind session ids to the user)."""
        return self.issuer, self.subject or self.client_id

    @classmethod
    def from_claims(cls, claims: Mapping[str, Any]) -> TokenInfo:
        """From RFC 9068 JWT claims or an RFC 7662 introspection response (same names)."""
        # "scope" is a space-separated string; several issuers send a list in "scp".
        scopes = _strings(claims.get("scope")) or _strings(claims.get("scp"))
        aud = claims.get("aud")
        audience = tuple(_strings([aud] if isinstance(aud, str) else aud))
        exp = claims.get("exp")
        return cls(
            subject=_str_or_none(claims.get("sub")),
            scopes=frozenset(scopes),
            client_id=_str_or_none(claims.get("client_id")) or _str_or_none(claims.get("azp")),
            expires_at=float(exp) if isinstance(exp, int | float) else None,
            issuer=_str_or_none(claims.get("iss")),
            audience=audience,
            claims=dict(claims))


def _strings(value: Any) -> list[str]:
    """A space-separated string's words, or a list's strings; else nothing."""
    if isinstance(value, str):
        return value.split()
    return [item for item in value if isinstance(item, str)] if isinstance(value, list) else []


def _str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


class TokenValidator(Protocol):
    """Turns a bearer token into a :class:`TokenInfo`, or raises :class:`InvalidToken`
    (or :class:`AuthUnavailable`). The audience is checked afterwards, by the
    :class:`ResourceServer`."""

    async def validate(self, token: str) -> TokenInfo: ...


class _PerLoop(Generic[T]):
    """One ``make()`` for whichever event loop is running: asyncio locks and HTTP clients
    belong to one loop, and a validator may outlive the loop it was first used on."""

    def __init__(self, make: Callable[[], T]) -> None:
        self._make = make
        self._loop: asyncio.AbstractEventLoop | None = None
        self._value: T | None = None

    def get(self) -> T:
        loop = asyncio.get_running_loop()
        if self._loop is not loop or self._value is None:
            self._loop, self._value = loop, self._make()
        return self._value


class _TokenCache:
    """Tokens found good, by SHA-256 (the token itself is not kept), each until
    ``ttl`` seconds have passed or the token expires, whichever is first; at most
    ``size`` of them, the least recently used going first."""

    def __init__(self, ttl: float, size: int, clock: Callable[[], float]) -> None:
        self.ttl, self.size, self.clock = ttl, size, clock
        self._entries: OrderedDict[bytes, tuple[TokenInfo, float]] = OrderedDict()

    @staticmethod
    def key(token: str) -> bytes:
        return hashlib.sha256(token.encode()).digest()

    def get(self, key: bytes) -> TokenInfo | None:
        entry = self._entries.get(key)
        if entry is None:
            return None
        if entry[1] <= self.clock():
            del self._entries[key]
            return None
        self._entries.move_to_end(key)
        return entry[0]

    def put(self, key: bytes, info: TokenInfo) -> None:
        if self.ttl <= 0:
            return
        until = self.clock() + self.ttl
        if info.expires_at is not None:
            until = min(until, info.expires_at)
        self._entries[key] = (info, until)
        while len(self._entries) > self.size:
            self._entries.popitem(last=False)


# -- JWT access tokens (RFC 9068) with the issuer's JWKS ----------------------------------

_JOSE_MESSAGES: tuple[tuple[type[Exception], str], ...] = (
    (jose_errors.ExpiredTokenError, "the token has expired"),
    (jose_errors.BadSignatureError, "the token's signature does not verify"),
    (jose_errors.UnsupportedAlgorithmError, "the token's signing algorithm is not accepted"),
    (jose_errors.InvalidKeyIdError, "the token is signed with a key the issuer does not "
                                    "publish"),
)


class JwtValidator:
    """JWT access tokens signed by ``issuer``, with the keys of its JWKS: fetched from
    ``jwks_url`` (or given as a JWK set dict in ``jwks``), kept, and fetched again when a
    token names a key id not in them (key rotation), at most once per
    ``refetch_interval`` seconds. ``leeway``: the clock skew allowed on ``exp``/``nbf``.
    A token found good is not checked again for ``cache_ttl`` seconds (or until it
    expires): a signature costs about 0.1 ms, a cache hit a few µs. ``require_at_jwt``:
    also require the ``typ: at+jwt`` header RFC 9068 asks for (off by default: several
    issuers send ``JWT``)."""

    def __init__(self, issuer: str, *, jwks_url: str | None = None,
                 jwks: Mapping[str, Any] | None = None,
                 algorithms: Sequence[str] = ("RS256", "ES256"), leeway: int = 30,
                 refetch_interval: float = 60.0, timeout: float = DEFAULT_TIMEOUT,
                 cache_ttl: float = 60.0, max_cached: int = 1024,
                 require_at_jwt: bool = False,
                 clock: Callable[[], float] = time.time) -> None:
        if (jwks_url is None) == (jwks is None):
            raise ValueError("give either jwks_url or jwks")
        self.issuer = issuer
        self.jwks_url = jwks_url
        self.algorithms = list(algorithms)
        self.leeway = leeway
        self.refetch_interval = refetch_interval
        self.timeout = timeout
        self.require_at_jwt = require_at_jwt
        self.clock = clock
        self.fetches = 0  # how many times the JWKS was fetched (for tests and curiosity)
        self._keys: KeySet | None = KeySet.import_key_set(dict(jwks)) if jwks else None
        # When the keys were last fetched for an unknown kid, or a fetch failed: no other
        # fetch for refetch_interval seconds (a stream of made-up kids must not hammer the
        # issuer). The first fetch does not count: a rotation may follow it at once.
        self._held_at = -math.inf
        self._fetch_failed = False
        self._lock = _PerLoop(asyncio.Lock)
        self._good = _TokenCache(cache_ttl, max_cached, clock)
        self._claims = jwt.JWTClaimsRegistry(
            now=lambda: int(self.clock()), leeway=leeway,
            iss={"essential": True, "value": issuer}, exp={"essential": True})

    def __repr__(self) -> str:
        return f"JwtValidator({self.issuer!r}, jwks_url={self.jwks_url!r})"

    async def validate(self, token: str) -> TokenInfo:
        key = self._good.key(token)
        info = self._good.get(key)
        if info is None:
            info = await self._validate(token)
            self._good.put(key, info)
        return info

    async def _validate(self, token: str) -> TokenInfo:
        keys = self._keys or await self._fetch_keys(None)
        try:
            return self._check(token, keys)
        except jose_errors.InvalidKeyIdError:
            if self.jwks_url is None:
                raise InvalidToken(_JOSE_MESSAGES[-1][1]) from None
        return self._check_or_refuse(token, await self._fetch_keys(keys))

    def _check_or_refuse(self, token: str, keys: KeySet) -> TokenInfo:
        try:
            return self._check(token, keys)
        except jose_errors.InvalidKeyIdError:
            raise InvalidToken(_JOSE_MESSAGES[-1][1]) from None

    def _check(self, token: str, keys: KeySet) -> TokenInfo:
        """Signature and claims, CPU only; InvalidKeyIdError passes through."""
        try:
            decoded = jwt.decode(token, keys, algorithms=self.algorithms)
        except jose_errors.InvalidKeyIdError:
            raise
        except jose_errors.JoseError as exc:
            raise InvalidToken(_message_for(exc, "the token is not a valid JWT")) from None
        except (ValueError, TypeError):
            raise InvalidToken("the token is not a valid JWT") from None
        if self.require_at_jwt and str(decoded.header.get("typ", "")).lower() not in (
                "at+jwt", "application/at+jwt"):
            raise InvalidToken("the token is not a JWT access token (typ at+jwt)")
        try:
            self._claims.validate(decoded.claims)
        except jose_errors.JoseError as exc:
            raise InvalidToken(_message_for(exc, "the token's claims are not accepted")) from None
        return TokenInfo.from_claims(decoded.claims)

    async def _fetch_keys(self, stale: KeySet | None) -> KeySet:
        """The issuer's keys, fetched unless ``stale`` was replaced meanwhile or the last
        fetch is too recent (then: the keys known, or AuthUnavailable if that fetch failed)."""
        async with self._lock.get():  # requests with the same new kid share one fetch
            if self._keys is not None and self._keys is not stale:
                return self._keys
            if time.monotonic() - self._held_at < self.refetch_interval:
                if self._fetch_failed or self._keys is None:
                    raise AuthUnavailable(f"the keys of {self.issuer} could not be fetched")
                return self._keys
            if stale is not None:
                self._held_at = time.monotonic()
            self.fetches += 1
            assert self.jwks_url is not None
            try:
                keys = KeySet.import_key_set(
                    await _get_json(self.jwks_url, self.timeout, "the JWKS"))
            except (AuthUnavailable, jose_errors.JoseError, ValueError, TypeError, KeyError,
                    AttributeError) as exc:
                self._held_at, self._fetch_failed = time.monotonic(), True
                if isinstance(exc, AuthUnavailable):
                    raise
                log.warning("the JWKS at %s is not a JWK set: %s", self.jwks_url,
                            type(exc).__name__)
                raise AuthUnavailable(f"the keys of {self.issuer} are not usable") from None
            self._keys, self._fetch_failed = keys, False
            log.info("fetched %d keys from %s", len(keys.keys), self.jwks_url)
            return keys


def _message_for(exc: Exception, default: str) -> str:
    for kind, message in _JOSE_MESSAGES:
        if isinstance(exc, kind):
            return message
    if isinstance(exc, jose_errors.InvalidClaimError) and exc.claim in ("nbf", "iat"):
        return "the token is not valid yet"
    if isinstance(exc, jose_errors.MissingClaimError | jose_errors.InvalidClaimError):
        claim = exc.claim if exc.claim.isidentifier() else "a"
        word = "lacks the" if isinstance(exc, jose_errors.MissingClaimError) else "has a wrong"
        return f"the token {word} {claim!r} claim" if claim != "a" else default
    return default


async def _get_json(url: str, timeout: float, what: str) -> Any:
    try:
        async with httpx.AsyncClient(timeout=timeout, follow_redirects=False) as http:
            response = await http.get(url, headers={"accept": "application/json"})
    except httpx.HTTPError as exc:
        log.warning("fetching %s from %s failed: %s", what, url, type(exc).__name__)
        raise AuthUnavailable(f"{what} could not be fetched") from None
    if response.status_code != 200 or len(response.content) > MAX_DOCUMENT_SIZE:
        log.warning("fetching %s from %s: HTTP %d, %d bytes", what, url,
                    response.status_code, len(response.content))
        raise AuthUnavailable(f"{what} could not be fetched")
    try:
        return response.json()
    except ValueError:
        log.warning("%s at %s is not JSON", what, url)
        raise AuthUnavailable(f"{what} is not usable") from None


# -- token introspection (RFC 7662) --------------------------------------------------------


class IntrospectionValidator:
    """Asks the authorization server's introspection endpoint about each token, as the
    client ``client_id``/``client_secret`` registered with it (HTTP Basic). An active
    answer is kept ``cache_ttl`` seconds (never past the token's ``exp``), keyed by the
    token's SHA-256, for at most ``max_cached`` tokens. ``issuer``, if given, must be the
    answer's ``iss`` when it has one."""

    def __init__(self, url: str, client_id: str, client_secret: str, *,
                 issuer: str | None = None, cache_ttl: float = 60.0, max_cached: int = 1024,
                 leeway: int = 30, timeout: float = DEFAULT_TIMEOUT,
                 clock: Callable[[], float] = time.time) -> None:
        self.url = url
        self.client_id = client_id
        self._client_secret = client_secret
        self.issuer = issuer
        self.leeway = leeway
        self.timeout = timeout
        self.clock = clock
        self.requests = 0  # introspection requests made (for tests and curiosity)
        self.cache = _TokenCache(cache_ttl, max_cached, clock)
        # One client (and its connections) per loop: making one costs about 20 ms.
        self._http = _PerLoop(lambda: AsyncOAuth2Client(
            self.client_id, self._client_secret, timeout=self.timeout))

    def __repr__(self) -> str:  # no secret
        return f"IntrospectionValidator({self.url!r}, client_id={self.client_id!r})"

    async def validate(self, token: str) -> TokenInfo:
        key = self.cache.key(token)
        cached = self.cache.get(key)
        if cached is not None:
            return cached
        now = self.clock()
        answer = await self._introspect(token)
        if answer.get("active") is not True:
            raise InvalidToken("the token is not active")
        exp = answer.get("exp")
        if isinstance(exp, int | float) and exp + self.leeway <= now:
            raise InvalidToken("the token has expired")
        if self.issuer is not None and "iss" in answer and answer["iss"] != self.issuer:
            raise InvalidToken("the token was issued by another issuer")
        info = TokenInfo.from_claims(answer)
        self.cache.put(key, info)
        return info

    async def _introspect(self, token: str) -> dict[str, Any]:
        self.requests += 1
        try:
            response = await self._http.get().introspect_token(
                self.url, token=token, token_type_hint="access_token")
        except _TRANSPORT_ERRORS as exc:
            log.warning("introspection at %s failed: %s", self.url, type(exc).__name__)
            raise AuthUnavailable("the authorization server could not be reached") from None
        if response.status_code != 200:
            # Our own credentials refused, or the server failing: nothing the client did.
            log.warning("introspection at %s: HTTP %d", self.url, response.status_code)
            raise AuthUnavailable("the authorization server refused the introspection")
        try:
            answer = response.json()
        except ValueError:
            answer = None
        if not isinstance(answer, dict):
            log.warning("introspection at %s: not a JSON object", self.url)
            raise AuthUnavailable("the introspection answer is not usable")
        return answer


# -- the resource server -------------------------------------------------------------------


class ResourceServer:
    """The OAuth policy of one MCP endpoint: which URL it is (``resource``, its canonical
    URI, what tokens must name as audience), who issues its tokens
    (``authorization_servers``), how a token is checked (``validator``), the scopes every
    request needs (``scopes``) and, through ``scopes_for(message) -> scopes``, the ones a
    given JSON-RPC request needs on top. ``audiences``: other ``aud`` values accepted (for
    an issuer that names the resource its own way); ``scopes_supported`` defaults to
    ``scopes``."""

    def __init__(self, resource: str, authorization_servers: Sequence[str],
                 validator: TokenValidator, *, scopes: Iterable[str] = (),
                 scopes_for: Callable[[dict[str, Any]], Iterable[str]] | None = None,
                 scopes_supported: Iterable[str] | None = None,
                 audiences: Iterable[str] = (), resource_name: str | None = None) -> None:
        parts = urlsplit(resource)
        if parts.scheme not in ("http", "https") or not parts.netloc or parts.fragment:
            raise ValueError(f"resource must be an absolute http(s) URL without a fragment, "
                             f"not {resource!r}")
        if not authorization_servers:
            raise ValueError("name at least one authorization server")
        self.resource = resource
        self.authorization_servers = list(authorization_servers)
        self.validator = validator
        self.scopes = list(dict.fromkeys(scopes))
        self.scopes_for = scopes_for
        self.scopes_supported = list(scopes_supported) if scopes_supported is not None \
            else list(self.scopes)
        self.audiences = frozenset({resource, *audiences})
        self.resource_name = resource_name
        origin = f"{parts.scheme}://{parts.netloc}"
        path = parts.path.rstrip("/")
        #: Where the metadata is (RFC 9728: the well-known prefix, then the resource's path).
        self.metadata_url = origin + WELL_KNOWN + path
        self.metadata_paths = frozenset({WELL_KNOWN + path, WELL_KNOWN})

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> ResourceServer:
        """From plain data (``mcpkit serve --http --resource ...``, a worker's environment):
        ``resource``, ``issuer``, ``jwks_url`` and optionally ``scopes``. JWT access tokens
        only: an introspection client secret does not belong on a command line."""
        issuer = config["issuer"]
        return cls(config["resource"], [issuer],
                   JwtValidator(issuer, jwks_url=config["jwks_url"]),
                   scopes=config.get("scopes") or ())

    def __repr__(self) -> str:
        return f"ResourceServer({self.resource!r}, validator={self.validator!r})"

    def metadata(self) -> dict[str, Any]:
        """The protected-resource metadata document (RFC 9728)."""
        document: dict[str, Any] = {
            "resource": self.resource,
            "authorization_servers": self.authorization_servers,
            "bearer_methods_supported": ["header"],
        }
        if self.scopes_supported:
            document["scopes_supported"] = self.scopes_supported
        if self.resource_name:
            document["resource_name"] = self.resource_name
        return document

    async def authorize(self, headers: RequestHeaders) -> TokenInfo:
        """The request's token, checked, with the scopes every request needs; else the
        HttpError to answer (401, 403 or 503)."""
        scheme, _, token = (headers.get("authorization") or "").partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer" or not token:
            raise self._refusal(401, None, "This server needs Authorization: Bearer <token>",
                                self.scopes)
        try:
            info = await self.validator.validate(token)
        except InvalidToken as exc:
            log.info("refused a token: %s", exc)
            raise self._refusal(401, "invalid_token", str(exc)) from None
        except AuthUnavailable as exc:
            raise HttpError(503, jsonrpc.INVALID_REQUEST,
                            f"Cannot check the token now ({exc}); try again later",
                            headers=[("retry-after", str(RETRY_AFTER_S))]) from None
        if not self.audiences.intersection(info.audience):
            log.info("refused a token for another audience")
            raise self._refusal(401, "invalid_token", "the token is not for this resource")
        self.check_scopes(info, self.scopes)
        return info

    def check_message(self, info: TokenInfo, message: Any) -> None:
        """The scopes ``scopes_for`` asks for this request (or each of a batch's)."""
        if self.scopes_for is None:
            return
        wanted: list[str] = []
        for item in message if isinstance(message, list) else [message]:
            if isinstance(item, dict) and "method" in item:
                wanted += self.scopes_for(item)
        if wanted:
            self.check_scopes(info, [*self.scopes, *wanted])

    def check_scopes(self, info: TokenInfo, needed: Iterable[str]) -> None:
        needed = list(dict.fromkeys(needed))
        if not set(needed) <= info.scopes:
            raise self._refusal(403, "insufficient_scope",
                                "the token lacks a scope this request needs", needed)

    def _refusal(self, status: int, error: str | None, description: str,
                 scopes: Iterable[str] = ()) -> HttpError:
        # RFC 6750 section 3: no error code when the request had no token at all.
        params = []
        if error is not None:
            params += [f'error="{error}"', f'error_description="{_quotable(description)}"']
        scope = " ".join(scopes)
        if scope:
            params.append(f'scope="{_quotable(scope)}"')
        params.append(f'resource_metadata="{self.metadata_url}"')
        message = description[0].upper() + description[1:]
        return HttpError(status, jsonrpc.INVALID_REQUEST, message,
                         headers=[("www-authenticate", "Bearer " + ", ".join(params))])


def _quotable(text: str) -> str:
    """What may sit in a quoted-string of ours: printable ASCII, no quote or backslash."""
    return "".join(c for c in text if " " <= c <= "~" and c not in '"\\')

