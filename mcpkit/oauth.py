"""OAuth 2.1 for the HTTP client: what to do when an MCP server answers 401 or 403.

    def authorize(url: str) -> str:          # the application's interactive step
        webbrowser.open(url)
        return input("paste the URL the browser was sent back to: ")

    with Client(url="https://example.com/mcp", auth=OAuth(authorize=authorize)) as c:
        c.list_tools()

Theory of operation
-------------------
A protected MCP server refuses a request with ``401`` and a ``WWW-Authenticate: Bearer``
challenge. The transport (:mod:`mcpkit.transports.http_client`) hands the challenge to
:meth:`OAuth.challenged`, which runs the flow the MCP authorization spec (2025-11-25,
2026-07-28) describes, then the transport retries the request with the new token:

1. **Protected-resource metadata** (RFC 9728): from the challenge's ``resource_metadata``,
   else ``/.well-known/oauth-protected-resource`` with the server's path, then without.
   Its ``resource`` must be the server's URL or a parent of it (same origin): a server
   cannot send the client to get a token for somebody else's resource.
2. **Authorization-server metadata** (RFC 8414, OpenID discovery) for the first of its
   ``authorization_servers``, from the well-known URLs the spec lists in order. The
   document's ``issuer`` must be exactly the issuer the URL was built from.
3. **Who the client is**: pre-registered credentials if the application gave them; else a
   client ID metadata document URL if the server accepts those; else dynamic client
   registration (RFC 7591). A registration belongs to one authorization server: a new
   issuer means a new registration, never the old credentials.
4. **Scope**: the challenge's ``scope``, else the resource's ``scopes_supported``, else
   none; ``offline_access`` added when the authorization server lists it. On ``403
   insufficient_scope`` (step-up) the new scopes are added to those asked for before.
5. **Authorization code with PKCE (S256)**, the ``resource`` parameter (RFC 8707) exactly
   as the resource metadata publishes it, ``state`` checked, and the RFC 9207 ``iss``
   parameter compared with the issuer by plain string comparison (required when the server
   advertises it). The interactive step is the application's ``authorize(url)`` callback:
   it returns the URL the browser was redirected to.
6. Or, for machine clients, **client credentials** (``grant="client_credentials"``), with
   a client secret or a private key (``private_key_jwt``).
7. **DPoP** (RFC 9449) when the authorization server offers it (``dpop=None``, the default;
   ``True`` insists, ``False`` never): every token request and every request to the MCP
   server carries a fresh proof signed with a key this object keeps
   (:mod:`mcpkit.oauth_dpop`), the token is sent as ``Authorization: DPoP``, and a
   server's ``use_dpop_nonce`` refusal is met by sending the request again with its nonce.

Tokens are refreshed when they expire (and on a 401, if a refresh token is held), kept in
a :class:`TokenStore` (:class:`MemoryTokenStore` by default) and never logged: this module
logs URLs and outcomes, and the ``repr`` of :class:`OAuth` and of its store shows none.

The OAuth mechanics (PKCE, the authorization URL, token requests and their client
authentication methods, refresh, JWT client assertions) are Authlib's
(``authlib.integrations.httpx_client``); the discovery above is MCP's own and is here.
Every request has a timeout, every document a size limit; a malformed document, a wrong
issuer or a loop of refusals ends in :class:`OAuthError`, never in a hang.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any, Protocol
from urllib.parse import parse_qs, urlsplit

import httpx
from authlib.common.errors import AuthlibBaseError
from authlib.common.security import generate_token
from authlib.integrations.httpx_client import AsyncOAuth2Client
from authlib.oauth2.rfc7523 import PrivateKeyJWT
from joserfc.jwk import ECKey, OKPKey, RSAKey

from . import deprecations, oauth_exchange
from .oauth_dpop import USE_NONCE, DPoPKey
from .oauth_dpop import supported as offers_dpop
from .oauth_metadata import (
    Challenge,
    OAuthError,
    authorization_server_urls,
    bearer_challenge,
    get_json,
    need_string,
    parse_www_authenticate,
    protected_resource_urls,
    resource_covers,
    scopes_of,
)

#: ``grant=``: a user at a browser; a machine with its own credentials; a workload with a
#: JWT its platform issued (RFC 7523, SEP-1933); a user's ID token from the enterprise's
#: identity provider, exchanged for an ID-JAG first (SEP-990).
GRANTS = ("authorization_code", "client_credentials", "jwt_bearer", "enterprise")
JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"

try:  # what Authlib's httpx integration runs on: httpx2 when installed, else httpx
    import httpx2 as _authlib_httpx
except ImportError:  # pragma: no cover
    _authlib_httpx = httpx
# What a request made through Authlib may raise when the network fails.
_AUTHLIB_HTTP_ERRORS = (httpx.HTTPError, _authlib_httpx.HTTPError)

__all__ = [
    "Challenge",
    "MemoryTokenStore",
    "OAuth",
    "OAuthError",
    "TokenStore",
    "parse_www_authenticate",
]

log = logging.getLogger("mcpkit.oauth")

DEFAULT_TIMEOUT = 10.0  # each metadata, registration and token request
DEFAULT_AUTHORIZE_TIMEOUT = 300.0  # the user's turn in the browser
REFRESH_MARGIN = 30.0  # refresh a token that expires within this many seconds
DEFAULT_REDIRECT_URI = "http://127.0.0.1:33418/callback"


# -- the token store ---------------------------------------------------------------------


class TokenStore(Protocol):
    """Where tokens and client registrations live between requests (and, for a store
    that writes them somewhere, between runs). Keys are strings such as
    ``"tokens <server url>"`` and ``"client <issuer>"``; values are JSON-able dicts."""

    def get(self, key: str) -> dict[str, Any] | None: ...

    def set(self, key: str, value: dict[str, Any]) -> None: ...

    def delete(self, key: str) -> None: ...


class MemoryTokenStore:
    """The default :class:`TokenStore`: a dict, gone when the process ends."""

    def __init__(self) -> None:
        self._items: dict[str, dict[str, Any]] = {}

    def get(self, key: str) -> dict[str, Any] | None:
        return self._items.get(key)

    def set(self, key: str, value: dict[str, Any]) -> None:
        self._items[key] = dict(value)

    def delete(self, key: str) -> None:
        self._items.pop(key, None)

    def __repr__(self) -> str:
        return f"<MemoryTokenStore: {len(self._items)} entries>"


def _signing_key(pem: str | None, algorithm: str) -> Any:
    """A PEM private key as the JOSE key its algorithm needs (RS*, PS*: RSA; ES*: EC)."""
    if pem is None:
        raise OAuthError("private_key_jwt needs private_key (a PEM private key)")
    kind = {"ES": ECKey, "Ed": OKPKey}.get(algorithm[:2], RSAKey)
    try:
        return kind.import_key(pem)
    except Exception as exc:
        raise OAuthError(f"private_key is not a {kind.__name__[:-3]} private key for "
                         f"{algorithm}: {type(exc).__name__}") from None


# -- the flow -----------------------------------------------------------------------------


Authorize = Callable[[str], "str | Awaitable[str]"]


class OAuth:
    """OAuth 2.1 for one or more MCP servers: pass it as ``Client(url=..., auth=OAuth(...))``.

    ``authorize(url)`` is the interactive step: send the user to ``url`` and return the URL
    the authorization server redirected the browser to (``redirect_uri`` plus ``code``,
    ``state``, maybe ``iss``); a plain function runs on a worker thread, a coroutine
    function is awaited; it gets ``authorize_timeout`` seconds. ``client_id`` and
    ``client_secret`` are pre-registered credentials; ``client_metadata_url`` is this
    client's metadata document (used as its ``client_id`` where the server accepts those).
    ``grant="client_credentials"`` is for machine clients: no user, the client's own
    credentials (a secret, or ``private_key`` PEM for ``private_key_jwt``).
    ``grant="jwt_bearer"`` presents ``assertion``, a JWT the workload's platform issued
    (workload identity federation); ``grant="enterprise"`` exchanges ``assertion``, the
    user's ID token, at ``idp_token_endpoint`` (as ``idp_client_id``) for an ID-JAG and
    presents that (enterprise-managed authorization). ``assertion`` may be a function that
    returns a fresh JWT. ``scope`` replaces the scope selection. Tokens go to ``store``.
    ``dpop``: DPoP-bound tokens where the authorization server offers them (None), always
    (True: an authorization server that does not offer them is an error), never (False).
    """

    def __init__(
        self,
        authorize: Authorize | None = None,
        *,
        client_id: str | None = None,
        client_secret: str | None = None,
        client_metadata_url: str | None = None,
        grant: str = "authorization_code",
        assertion: str | Callable[[], str] | None = None,
        idp_token_endpoint: str | None = None,
        idp_client_id: str | None = None,
        idp_client_secret: str | None = None,
        private_key: str | None = None,
        signing_algorithm: str = "ES256",
        redirect_uri: str = DEFAULT_REDIRECT_URI,
        client_name: str = "mcpkit",
        scope: str | None = None,
        store: TokenStore | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        authorize_timeout: float = DEFAULT_AUTHORIZE_TIMEOUT,
        dpop: bool | None = None,
    ) -> None:
        if grant not in GRANTS:
            raise ValueError(f"grant must be one of {', '.join(map(repr, GRANTS))}, "
                             f"not {grant!r}")
        if grant == "authorization_code" and authorize is None:
            raise ValueError("the authorization code grant needs an authorize(url) callback")
        if grant != "authorization_code" and client_id is None:
            raise ValueError(f"the {grant} grant needs a client_id")
        if grant in ("jwt_bearer", "enterprise") and assertion is None:
            raise ValueError(f"the {grant} grant needs an assertion (a JWT, or a function "
                             "that returns a fresh one)")
        if grant == "enterprise" and idp_token_endpoint is None:
            raise ValueError("the enterprise grant needs the identity provider's "
                             "idp_token_endpoint")
        self._assertion = assertion
        self.idp_token_endpoint = idp_token_endpoint
        self.idp_client_id = idp_client_id
        self._idp_client_secret = idp_client_secret
        self.authorize = authorize
        self.client_id = client_id
        self._client_secret = client_secret
        self.client_metadata_url = client_metadata_url
        self.grant = grant
        self._private_key = private_key
        self.signing_algorithm = signing_algorithm
        self.redirect_uri = redirect_uri
        self.client_name = client_name
        self.scope = scope
        self.store: TokenStore = store if store is not None else MemoryTokenStore()
        self.timeout = timeout
        self.authorize_timeout = authorize_timeout
        self.dpop = dpop
        self._dpop_key: DPoPKey | None = None  # made at the first DPoP token request
        self._lock: asyncio.Lock | None = None
        self._lock_loop: asyncio.AbstractEventLoop | None = None
        # server url -> scopes a step-up already asked for (a refusal of those is final)
        self._stepped_up: dict[str, frozenset[str]] = {}

    def __repr__(self) -> str:
        return f"<OAuth grant={self.grant} client_id={self.client_id!r} store={self.store!r}>"

    # -- what the transport calls ----------------------------------------------------------

    def current_token(self, server_url: str) -> str | None:
        """The access token held for ``server_url`` (no refresh, no I/O); not one bound to
        a key this object does not hold (a store that outlived the process that made it)."""
        tokens = self.store.get(f"tokens {server_url}")
        if not tokens:
            return None
        if tokens.get("jkt") is not None and (
                self._dpop_key is None or tokens["jkt"] != self._dpop_key.thumbprint):
            return None
        return tokens.get("access_token")

    def authorization_headers(self, server_url: str, method: str,
                              token: str) -> dict[str, str]:
        """The headers that present ``token`` in a ``method`` request to ``server_url``:
        ``Authorization: Bearer``, or ``Authorization: DPoP`` and a fresh proof."""
        tokens = self.store.get(f"tokens {server_url}") or {}
        if (self._dpop_key is not None and tokens.get("jkt") == self._dpop_key.thumbprint
                and tokens.get("access_token") == token):
            return {"authorization": f"DPoP {token}",
                    "dpop": self._dpop_key.proof(method, server_url, token)}
        return {"authorization": f"Bearer {token}"}

    def saw_dpop_nonce(self, url: str, nonce: str | None) -> bool:
        """A server's ``DPoP-Nonce`` answer header, for the next proofs; True if it is new."""
        return self._dpop_key is not None and self._dpop_key.saw_nonce(url, nonce)

    async def token(self, server_url: str) -> str | None:
        """The access token to send to ``server_url``, refreshed first if it is about to
        expire (and a refresh token is held); None before the first challenge."""
        tokens = self.store.get(f"tokens {server_url}")
        if not tokens:
            return None
        expires_at = tokens.get("expires_at")
        if isinstance(expires_at, int | float) and expires_at - REFRESH_MARGIN < time.time():
            async with self._flow_lock():
                again = self.store.get(f"tokens {server_url}")
                if again is tokens or again == tokens:
                    if not await self._refresh(server_url, tokens):
                        if self.grant != "authorization_code":  # no user: just ask again
                            await self._run(server_url, None, step_up=False)
                        else:
                            self.store.delete(f"tokens {server_url}")
                            return None  # the server's 401 starts a new authorization
        return self.current_token(server_url)

    async def challenged(self, server_url: str, status: int, www_authenticate: str | None,
                         sent_token: str | None, dpop_nonce: str | None = None) -> None:
        """The server refused a request (401, or 403 with ``insufficient_scope``): get a
        token it may accept. Returns when the request is worth retrying; raises
        :class:`OAuthError` when it is not. ``dpop_nonce`` is the answer's ``DPoP-Nonce``."""
        challenge = bearer_challenge(www_authenticate) or Challenge()
        error = challenge.get("error")
        if error == USE_NONCE:  # the token is fine; the proof lacked the server's nonce
            if self.saw_dpop_nonce(server_url, dpop_nonce):
                return
            raise OAuthError(f"{server_url} asks for a DPoP proof with its nonce but gave "
                             "no new one (DPoP-Nonce header)")
        step_up = status == 403
        if step_up and error != "insufficient_scope":
            raise OAuthError(f"{server_url} refused the request (HTTP 403"
                             f"{', ' + error if error else ''}): not a scope problem, so a "
                             "new token would not help")
        async with self._flow_lock():
            if self.current_token(server_url) != sent_token:
                return  # another request got a new token meanwhile: retry with it
            wanted = frozenset(scopes_of(challenge.get("scope")))
            if step_up and wanted and wanted <= self._stepped_up.get(server_url, frozenset()):
                raise OAuthError(f"{server_url} still answers insufficient_scope for "
                                 f"{' '.join(sorted(wanted))} after re-authorization with "
                                 "those scopes: giving up")
            tokens = self.store.get(f"tokens {server_url}")
            if not step_up and tokens and tokens.get("refresh_token"):
                if await self._refresh(server_url, tokens, check_issuer=challenge):
                    return
            await self._run(server_url, challenge, step_up=step_up)
            if step_up:
                self._stepped_up[server_url] = self._stepped_up.get(server_url,
                                                                    frozenset()) | wanted

    def _flow_lock(self) -> asyncio.Lock:
        loop = asyncio.get_running_loop()
        if self._lock is None or self._lock_loop is not loop:
            self._lock, self._lock_loop = asyncio.Lock(), loop
        return self._lock

    # -- discovery --------------------------------------------------------------------------

    async def _discover(self, http: httpx.AsyncClient, server_url: str,
                        challenge: Challenge | None) -> tuple[dict[str, Any], dict[str, Any]]:
        """(protected-resource metadata, authorization-server metadata), both checked."""
        candidates = protected_resource_urls(server_url)
        hinted = (challenge or {}).get("resource_metadata")
        if hinted:
            candidates = [hinted]
        prm = None
        for url in candidates:
            prm = await get_json(http, url, "the protected resource metadata", self.timeout)
            if prm is not None:
                log.info("protected resource metadata: %s", url)
                break
        if prm is None:
            raise OAuthError(f"{server_url} wants a token but publishes no protected resource "
                             f"metadata (tried {', '.join(candidates)})")
        resource = need_string(prm, "resource", "the protected resource metadata")
        if not resource_covers(resource, server_url):
            raise OAuthError(f"the protected resource metadata is for {resource!r}, not for "
                             f"{server_url}: refusing to get a token for it")
        servers = prm.get("authorization_servers")
        if not isinstance(servers, list) or not servers or not all(
                isinstance(s, str) and s for s in servers):
            raise OAuthError("the protected resource metadata names no authorization_servers")
        issuer = servers[0]
        for url in authorization_server_urls(issuer):
            asm = await get_json(http, url, "the authorization server metadata", self.timeout)
            if asm is None:
                continue
            if asm.get("issuer") != issuer:
                raise OAuthError(f"the authorization server metadata at {url} names issuer "
                                 f"{asm.get('issuer')!r}, not {issuer!r}: refusing to use it")
            for field in ("authorization_endpoint", "token_endpoint"):
                if self.grant != "authorization_code" and field == "authorization_endpoint":
                    continue
                need_string(asm, field, f"the authorization server metadata at {url}")
            log.info("authorization server metadata: %s", url)
            return prm, asm
        raise OAuthError(f"no authorization server metadata for {issuer}")

    def _select_scope(self, server_url: str, prm: dict[str, Any], asm: dict[str, Any],
                      challenge: Challenge | None, step_up: bool) -> str | None:
        if self.scope is not None:
            wanted = self.scope.split()
        else:
            wanted = scopes_of((challenge or {}).get("scope")) or scopes_of(
                prm.get("scopes_supported"))
        if step_up:  # the union with what was asked for before (SEP-2350)
            before = (self.store.get(f"tokens {server_url}") or {}).get("requested_scope", "")
            wanted = list(dict.fromkeys(before.split() + wanted))
        if (self.grant == "authorization_code" and "offline_access" in scopes_of(
                asm.get("scopes_supported")) and "offline_access" not in wanted):
            wanted.append("offline_access")
        return " ".join(wanted) or None

    # -- the client's identity ----------------------------------------------------------------

    async def _client(self, http: httpx.AsyncClient, asm: dict[str, Any]) -> dict[str, Any]:
        """``{"client_id", "client_secret"?, "token_endpoint_auth_method"}`` for this AS."""
        issuer = asm["issuer"]
        methods = scopes_of(asm.get("token_endpoint_auth_methods_supported")) or [
            "client_secret_basic"]
        if self.client_id is not None:
            if self._private_key is not None:
                method = "private_key_jwt"
            elif self._client_secret is None:
                method = "none"
            else:
                method = next((m for m in ("client_secret_basic", "client_secret_post")
                               if m in methods), "client_secret_basic")
            return {"client_id": self.client_id, "client_secret": self._client_secret,
                    "token_endpoint_auth_method": method}
        if self.client_metadata_url and asm.get("client_id_metadata_document_supported") is True:
            return {"client_id": self.client_metadata_url, "token_endpoint_auth_method": "none"}
        key = f"client {issuer}"
        registered = self.store.get(key)
        if registered:
            return registered
        endpoint = asm.get("registration_endpoint")
        if not isinstance(endpoint, str) or not endpoint:
            raise OAuthError(f"{issuer} supports neither dynamic client registration nor "
                             "client ID metadata documents: pass client_id (and "
                             "client_secret) registered with it")
        deprecations.warn("dynamic client registration",
                          f"registering with {issuer}, which "
                          + ("does not support Client ID Metadata Documents"
                             if self.client_metadata_url else "was given no client_metadata_url"))
        method = next((m for m in ("none", "client_secret_basic", "client_secret_post")
                       if m in methods), "none")
        request = {"client_name": self.client_name, "redirect_uris": [self.redirect_uri],
                   "grant_types": ["authorization_code", "refresh_token"],
                   "response_types": ["code"], "token_endpoint_auth_method": method,
                   "application_type": "native"}
        try:
            response = await http.post(endpoint, json=request, timeout=self.timeout)
        except httpx.HTTPError as exc:
            raise OAuthError(f"client registration at {endpoint} failed: {exc!r}") from None
        if response.status_code not in (200, 201):
            raise OAuthError(f"client registration at {endpoint}: HTTP "
                             f"{response.status_code}: {response.text[:200]}")
        try:
            answer = response.json()
        except ValueError:
            answer = None
        if not isinstance(answer, dict) or not isinstance(answer.get("client_id"), str):
            raise OAuthError(f"client registration at {endpoint} returned no client_id")
        secret = answer.get("client_secret")
        registered = {
            "client_id": answer["client_id"],
            "client_secret": secret if isinstance(secret, str) else None,
            "token_endpoint_auth_method": answer.get("token_endpoint_auth_method")
            or (method if secret or method == "none" else "none"),
        }
        if registered["client_secret"] is None:
            registered["token_endpoint_auth_method"] = "none"
        log.info("registered with %s as client %s", issuer, registered["client_id"])
        self.store.set(key, registered)
        return registered

    def _oauth_client(self, client: dict[str, Any], scope: str | None,
                      issuer: str | None = None, dpop: bool = False) -> AsyncOAuth2Client:
        method: Any = client["token_endpoint_auth_method"]
        secret = client.get("client_secret")
        if method == "private_key_jwt":
            # The assertion's audience is the authorization server: its issuer.
            method = PrivateKeyJWT(token_endpoint=issuer, alg=self.signing_algorithm)
            secret = _signing_key(self._private_key, self.signing_algorithm)
        hooks: dict[str, list[Callable[[Any], Awaitable[None]]]] = {}
        if dpop:  # a proof on each request Authlib sends; the nonce of each answer kept
            key = self._dpop_key = self._dpop_key or DPoPKey()

            async def prove(request: Any) -> None:
                request.headers["DPoP"] = key.proof(request.method, str(request.url))

            async def keep_nonce(response: Any) -> None:
                key.saw_nonce(str(response.request.url), response.headers.get("DPoP-Nonce"))

            hooks = {"request": [prove], "response": [keep_nonce]}
        return AsyncOAuth2Client(
            client_id=client["client_id"], client_secret=secret,
            token_endpoint_auth_method=method, redirect_uri=self.redirect_uri, scope=scope,
            code_challenge_method="S256", timeout=self.timeout, follow_redirects=False,
            event_hooks=hooks)

    def _binds(self, asm: dict[str, Any]) -> bool:
        """Whether to ask this authorization server for DPoP-bound tokens."""
        if self.dpop is False:
            return False
        if offers_dpop(asm):
            return True
        if self.dpop:
            raise OAuthError(f"{asm['issuer']} does not offer DPoP with ES256 "
                             "(dpop_signing_alg_values_supported), and dpop=True insists")
        return False

    # -- getting tokens -----------------------------------------------------------------------

    async def _run(self, server_url: str, challenge: Challenge | None, step_up: bool) -> None:
        async with httpx.AsyncClient(timeout=self.timeout, follow_redirects=False) as http:
            prm, asm = await self._discover(http, server_url, challenge)
            issuer = asm["issuer"]
            old = self.store.get(f"tokens {server_url}")
            if old and old.get("issuer") != issuer:
                log.info("%s now names authorization server %s", server_url, issuer)
                self.store.delete(f"tokens {server_url}")
            scope = self._select_scope(server_url, prm, asm, challenge, step_up)
            resource = prm["resource"]
            if self.grant == "client_credentials":
                client = await self._client(http, asm)
                token = await self._token_request(client, scope, asm, issuer,
                                                  grant_type="client_credentials",
                                                  resource=resource)
            elif self.grant in ("jwt_bearer", "enterprise"):
                client = await self._client(http, asm)
                assertion = self._assertion() if callable(self._assertion) else self._assertion
                if self.grant == "enterprise":  # SEP-990: the user's ID token for an ID-JAG
                    assert self.idp_token_endpoint is not None and assertion is not None
                    try:
                        assertion = await oauth_exchange.id_jag(
                            http, self.idp_token_endpoint, assertion, audience=issuer,
                            resource=resource, client_id=self.idp_client_id,
                            client_secret=self._idp_client_secret, timeout=self.timeout)
                    except oauth_exchange.ExchangeError as exc:
                        raise OAuthError(str(exc)) from None
                token = await self._token_request(client, scope, asm, issuer,
                                                  grant_type=JWT_BEARER, assertion=assertion,
                                                  resource=resource)
            else:
                token = await self._authorization_code(http, asm, scope, resource)
        self._save(server_url, token, issuer, scope, asm["token_endpoint"], resource)

    async def _authorization_code(self, http: httpx.AsyncClient, asm: dict[str, Any],
                                  scope: str | None, resource: str) -> dict[str, Any]:
        issuer = asm["issuer"]
        if "S256" not in scopes_of(asm.get("code_challenge_methods_supported")):
            raise OAuthError(f"{issuer} does not advertise PKCE with S256 "
                             "(code_challenge_methods_supported): refusing to authorize")
        client = await self._client(http, asm)
        verifier = generate_token(64)
        async with self._oauth_client(client, scope) as oauth:
            url, state = oauth.create_authorization_url(
                asm["authorization_endpoint"], code_verifier=verifier, resource=resource)
        log.info("authorization request to %s", asm["authorization_endpoint"])
        assert self.authorize is not None
        try:
            if inspect.iscoroutinefunction(self.authorize):
                answer = self.authorize(url)
            else:
                answer = asyncio.to_thread(self.authorize, url)
            redirected = await asyncio.wait_for(answer, self.authorize_timeout)
        except TimeoutError:
            raise OAuthError(f"no authorization within {self.authorize_timeout:g} s") from None
        if not isinstance(redirected, str):
            raise OAuthError("authorize(url) must return the URL the browser was sent back to")
        query = parse_qs(urlsplit(redirected).query)
        got = {k: v[0] for k, v in query.items() if v}
        if "error" in got:
            raise OAuthError(f"the authorization server refused: {got['error']}"
                             + (f" ({got['error_description']})"
                                if "error_description" in got else ""))
        if got.get("state") != state:
            raise OAuthError("the authorization response's state does not match the request")
        iss = got.get("iss")
        if iss is None and asm.get("authorization_response_iss_parameter_supported") is True:
            raise OAuthError(f"{issuer} advertises the iss parameter but the authorization "
                             "response has none: refusing it")
        if iss is not None and iss != issuer:
            raise OAuthError(f"the authorization response comes from issuer {iss!r}, not "
                             f"{issuer!r}: refusing it")
        if not got.get("code"):
            raise OAuthError("the authorization response has no code")
        return await self._token_request(client, scope, asm, issuer,
                                         grant_type="authorization_code", code=got["code"],
                                         code_verifier=verifier, resource=resource)

    async def _token_request(self, client: dict[str, Any], scope: str | None,
                             asm: dict[str, Any], issuer: str, **params: Any) -> dict[str, Any]:
        endpoint = asm["token_endpoint"]
        if params.get("grant_type") in ("client_credentials", JWT_BEARER) and scope:
            params["scope"] = scope
        bound = self._binds(asm)
        try:
            token = await _once_more_for_nonce(
                bound, lambda: self._oauth_client(client, scope, issuer, dpop=bound),
                lambda oauth: oauth.fetch_token(endpoint, **params))
        except AuthlibBaseError as exc:
            raise OAuthError(f"the token request to {endpoint} failed: {exc}") from None
        except _AUTHLIB_HTTP_ERRORS as exc:
            raise OAuthError(f"the token request to {endpoint} failed: {exc!r}") from None
        except ValueError:
            raise OAuthError(f"the token endpoint {endpoint} answered something that is not "
                             "a token response") from None
        if not isinstance(token.get("access_token"), str) or not token["access_token"]:
            raise OAuthError(f"the token endpoint {endpoint} returned no access_token")
        kind = str(token.get("token_type", "bearer")).lower()
        if kind not in (("bearer", "dpop") if bound else ("bearer",)):
            raise OAuthError(f"the token endpoint {endpoint} returned a {kind!r} token; "
                             "mcpkit sends bearer tokens, and DPoP ones where it asked")
        if kind == "dpop":
            assert self._dpop_key is not None
            token["jkt"] = self._dpop_key.thumbprint
        log.info("got a token from %s (grant %s)", endpoint, params.get("grant_type"))
        return dict(token)

    async def _refresh(self, server_url: str, tokens: dict[str, Any],
                       check_issuer: Challenge | None = None) -> bool:
        """Refresh ``tokens``; False (and no exception) if that is not possible."""
        refresh_token = tokens.get("refresh_token")
        if not refresh_token:
            return False
        if check_issuer is not None:
            # A 401 may mean the server moved to another authorization server: look first.
            try:
                async with httpx.AsyncClient(timeout=self.timeout) as http:
                    _, asm = await self._discover(http, server_url, check_issuer)
            except OAuthError:
                return False
            if asm["issuer"] != tokens.get("issuer"):
                return False
        client = self.store.get(f"client {tokens.get('issuer')}") or (
            {"client_id": self.client_id, "client_secret": self._client_secret,
             "token_endpoint_auth_method": tokens.get("auth_method", "none")}
            if self.client_id else None)
        if client is None and self.client_metadata_url:
            client = {"client_id": self.client_metadata_url, "token_endpoint_auth_method": "none"}
        if client is None:
            return False
        endpoint = tokens["token_endpoint"]
        bound = tokens.get("jkt") is not None
        if bound and (self._dpop_key is None or tokens["jkt"] != self._dpop_key.thumbprint):
            return False  # bound to a key that is gone: its refresh token is bound too
        try:
            fresh = await _once_more_for_nonce(
                bound, lambda: self._oauth_client(client, tokens.get("requested_scope"),
                                                  tokens.get("issuer"), dpop=bound),
                lambda oauth: oauth.refresh_token(endpoint, refresh_token=refresh_token,
                                                  resource=tokens.get("resource")))
        except (AuthlibBaseError, *_AUTHLIB_HTTP_ERRORS, ValueError) as exc:
            log.info("refreshing the token at %s failed: %s", endpoint, type(exc).__name__)
            return False
        if not isinstance(fresh.get("access_token"), str):
            return False
        if bound and str(fresh.get("token_type", "")).lower() == "dpop":
            fresh["jkt"] = tokens["jkt"]
        log.info("refreshed the token at %s", endpoint)
        self._save(server_url, dict(fresh), tokens["issuer"], tokens.get("requested_scope"),
                   endpoint, tokens.get("resource"))
        return True

    def _save(self, server_url: str, token: dict[str, Any], issuer: str, scope: str | None,
              token_endpoint: str, resource: str | None) -> None:
        expires_at = token.get("expires_at")
        if not isinstance(expires_at, int | float) and isinstance(
                token.get("expires_in"), int | float):
            expires_at = time.time() + token["expires_in"]
        self.store.set(f"tokens {server_url}", {
            "access_token": token["access_token"],
            "refresh_token": token.get("refresh_token"),
            "expires_at": expires_at,
            "scope": token.get("scope"),
            "requested_scope": scope or "",
            "issuer": issuer,
            "token_endpoint": token_endpoint,
            "resource": resource,
            "jkt": token.get("jkt"),  # the DPoP key's thumbprint if the token is bound to it
        })


async def _once_more_for_nonce(bound: bool, open_client: Callable[[], AsyncOAuth2Client],
                               call: Callable[[AsyncOAuth2Client], Awaitable[Any]]) -> Any:
    """``call`` a fresh Authlib client; a DPoP ``use_dpop_nonce`` refusal (RFC 9449 section
    8) is met once more, the answer's nonce now in the proof."""
    try:
        async with open_client() as oauth:
            return await call(oauth)
    except AuthlibBaseError as exc:
        if not (bound and getattr(exc, "error", None) == USE_NONCE):
            raise
    async with open_client() as oauth:  # the refusal's DPoP-Nonce is in the key by now
        return await call(oauth)
