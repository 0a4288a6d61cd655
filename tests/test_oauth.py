"""mcpkit.oauth against a real authorization server on loopback (tests/servers/oauth_as.py):
PKCE, refresh, step-up, issuer checks, bad documents, timeouts, and tokens kept out of the
logs. The same flow runs end to end under the conformance suite's auth/* scenarios
(tests/test_conformance_client.py)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from mcpkit.oauth import OAuth, OAuthError, parse_www_authenticate, resource_covers

sys.path.insert(0, str(Path(__file__).resolve().parent / "servers"))
from dpop_check import ProofError  # noqa: E402
from dpop_check import check as check_proof  # noqa: E402
from oauth_as import MockAuthServer  # noqa: E402


def follow(url: str) -> str:
    """The user's browser: the mock answers the authorization request with a redirect."""
    response = httpx.get(url, follow_redirects=False, timeout=5.0)
    assert response.status_code == 302, response.text
    return response.headers["location"]


def challenge(mock: MockAuthServer, extra: str = "") -> str:
    return (f'Bearer resource_metadata="{mock.base}/.well-known/oauth-protected-resource/mcp"'
            + extra)


def run(coroutine):
    return asyncio.run(asyncio.wait_for(coroutine, 30))


@pytest.fixture
def mock():
    with MockAuthServer(scopes_supported=["read"]) as server:
        yield server


def test_authorization_code_with_pkce(mock: MockAuthServer) -> None:
    oauth = OAuth(follow)
    run(oauth.challenged(mock.resource, 401, challenge(mock), None))
    token = oauth.current_token(mock.resource)
    assert token in mock.issued  # the mock checked the S256 verifier before issuing it
    (authorize,) = mock.seen("/authorize")
    assert authorize["code_challenge_method"] == "S256"
    assert authorize["resource"] == mock.resource  # RFC 8707, exactly as published
    assert authorize["scope"] == "read"  # from scopes_supported: the challenge had none
    (registration,) = mock.seen("/register")  # dynamic client registration (RFC 7591)
    assert registration["redirect_uris"] == [oauth.redirect_uri]
    (token_request,) = mock.seen("/token")
    assert token_request["grant_type"] == "authorization_code"
    assert token_request["client_id"] == authorize["client_id"]
    assert len(token_request["code_verifier"]) >= 43


def test_refresh_when_the_token_expires(mock: MockAuthServer) -> None:
    mock.expires_in = 1  # within the refresh margin at once
    oauth = OAuth(follow)
    run(oauth.challenged(mock.resource, 401, challenge(mock), None))
    first = oauth.current_token(mock.resource)
    second = run(oauth.token(mock.resource))
    assert second is not None and second != first and second in mock.issued
    assert [t["grant_type"] for t in mock.seen("/token")] == ["authorization_code",
                                                             "refresh_token"]
    assert mock.seen("/token")[1]["resource"] == mock.resource
    assert len(mock.seen("/authorize")) == 1  # no new authorization for a refresh


def test_step_up_asks_for_the_union_then_gives_up(mock: MockAuthServer) -> None:
    oauth = OAuth(follow)
    run(oauth.challenged(mock.resource, 401, challenge(mock, ', scope="read"'), None))
    sent = oauth.current_token(mock.resource)
    denied = challenge(mock, ', error="insufficient_scope", scope="write"')
    run(oauth.challenged(mock.resource, 403, denied, sent))
    assert [a["scope"] for a in mock.seen("/authorize")] == ["read", "read write"]
    again = oauth.current_token(mock.resource)
    with pytest.raises(OAuthError, match="insufficient_scope"):
        run(oauth.challenged(mock.resource, 403, denied, again))  # the same refusal: final
    assert len(mock.seen("/authorize")) == 2


def test_a_403_that_is_not_about_scope_is_not_retried(mock: MockAuthServer) -> None:
    with pytest.raises(OAuthError, match="not a scope problem"):
        run(OAuth(follow).challenged(mock.resource, 403, 'Bearer error="invalid_token"', None))
    assert not mock.requests


def test_metadata_with_another_issuer_is_refused() -> None:
    with MockAuthServer(metadata_issuer="https://attacker.example.com") as mock:
        with pytest.raises(OAuthError, match="attacker.example.com"):
            run(OAuth(follow).challenged(mock.resource, 401, challenge(mock), None))
        assert not mock.seen("/register") and not mock.seen("/authorize")


@pytest.mark.parametrize("mode", ["wrong", "omit"])
def test_authorization_response_from_another_issuer_is_refused(mode: str) -> None:
    with MockAuthServer(iss_mode=mode) as mock:
        with pytest.raises(OAuthError, match="issuer" if mode == "wrong" else "iss parameter"):
            run(OAuth(follow).challenged(mock.resource, 401, challenge(mock), None))
        assert mock.seen("/authorize") and not mock.seen("/token")  # the code is not used


def test_resource_metadata_for_another_resource_is_refused() -> None:
    with MockAuthServer() as mock:
        mock.prm_document = {"resource": "https://evil.example.com/mcp",
                             "authorization_servers": [mock.base]}
        with pytest.raises(OAuthError, match="evil.example.com"):
            run(OAuth(follow).challenged(mock.resource, 401, challenge(mock), None))
        assert not mock.seen("/authorize")


@pytest.mark.parametrize("document", [["a list"], {"resource": 42},
                                      {"resource": "X", "authorization_servers": "one"}])
def test_malformed_resource_metadata_is_a_clear_error(document) -> None:
    with MockAuthServer(prm_document=document) as mock:
        if isinstance(document, dict) and document.get("resource") == "X":
            document["resource"] = mock.resource
        with pytest.raises(OAuthError, match="protected resource metadata"):
            run(OAuth(follow).challenged(mock.resource, 401, challenge(mock), None))


def test_a_silent_server_times_out() -> None:
    with socket.socket() as silent:  # accepts connections, never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        url = f"http://127.0.0.1:{silent.getsockname()[1]}/mcp"
        started = time.monotonic()
        with pytest.raises(OAuthError, match="cannot fetch"):
            run(OAuth(follow, timeout=0.5).challenged(url, 401, "Bearer", None))
        assert time.monotonic() - started < 5


def test_client_credentials(mock: MockAuthServer) -> None:
    oauth = OAuth(grant="client_credentials", client_id="machine",
                  client_secret="machine-secret")
    run(oauth.challenged(mock.resource, 401, challenge(mock), None))
    assert oauth.current_token(mock.resource) in mock.issued
    assert not mock.seen("/authorize") and not mock.seen("/register")
    assert mock.seen("/token")[0]["resource"] == mock.resource
    bad = OAuth(grant="client_credentials", client_id="machine", client_secret="wrong")
    with pytest.raises(OAuthError, match="invalid_client"):
        run(bad.challenged(mock.resource, 401, challenge(mock), None))


def test_tokens_never_reach_the_logs(mock: MockAuthServer,
                                     caplog: pytest.LogCaptureFixture) -> None:
    mock.expires_in = 1
    caplog.set_level(logging.DEBUG)  # every logger: mcpkit's, httpx's, httpcore's, authlib's
    oauth = OAuth(follow)
    run(oauth.challenged(mock.resource, 401, challenge(mock), None))
    run(oauth.token(mock.resource))  # a refresh too
    assert len(mock.issued) == 4 and caplog.records
    shown = caplog.text + repr(oauth) + repr(oauth.store)
    assert not [token for token in mock.issued if token in shown]


def test_parse_www_authenticate() -> None:
    (basic, bearer) = parse_www_authenticate(
        'Basic abc==, Bearer error="insufficient_scope", scope="a b", '
        'error_description="say \\"hi\\""')
    assert basic.scheme == "basic" and bearer.scheme == "bearer"
    assert bearer == {"error": "insufficient_scope", "scope": "a b",
                      "error_description": 'say "hi"'}
    assert parse_www_authenticate("Bearer realm=x")[0] == {"realm": "x"}
    assert parse_www_authenticate("") == []


def test_resource_covers() -> None:
    assert resource_covers("http://h:1/mcp", "http://h:1/mcp")
    assert resource_covers("http://h:1", "http://h:1/mcp")
    assert not resource_covers("http://h:1/mc", "http://h:1/mcp")
    assert not resource_covers("https://evil.example.com/mcp", "http://h:1/mcp")


# -- end to end: Client(url=..., auth=OAuth(...)) against a protected mcpkit server --------


class BearerGate:
    """mcpkit's HTTP app behind a resource server's check: a request whose bearer token the
    mock authorization server did not issue (or that was revoked) gets 401 and a challenge
    naming the resource metadata."""

    def __init__(self, app: Any, mock: MockAuthServer, always_refuse: bool = False) -> None:
        self.app = app
        self.mock = mock
        self.always_refuse = always_refuse
        self.revoked: set[str] = set()
        self.refusals = 0

    def close(self) -> None:
        self.app.close()

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            sent = dict(scope.get("headers") or []).get(b"authorization", b"").decode()
            token = sent[7:] if sent.startswith("Bearer ") else None
            if self.always_refuse or token not in self.mock.issued or token in self.revoked:
                self.refusals += 1
                metadata = f"{self.mock.base}/.well-known/oauth-protected-resource/mcp"
                await send({"type": "http.response.start", "status": 401, "headers": [
                    (b"content-type", b"application/json"),
                    (b"www-authenticate",
                     f'Bearer error="invalid_token", resource_metadata="{metadata}"'.encode())]})
                await send({"type": "http.response.body", "body": b'{"error":"invalid_token"}'})
                return
        await self.app(scope, receive, send)


@contextlib.contextmanager
def notes_behind(mock: MockAuthServer, gate: Callable[[Any], Any]):
    """The notes server's HTTP app behind ``gate(app)``, on loopback, its resource metadata
    naming ``mock``: (mock, the gate, the server's URL)."""
    from test_http_client import ServedApp

    from mcpkit.examples import notes
    from mcpkit.transports.http import create_app

    guarded = gate(create_app(notes.server))
    with ServedApp(guarded) as served:
        mock.prm_document = {"resource": served.url, "authorization_servers": [mock.base]}
        yield mock, guarded, served.url


@pytest.fixture
def protected():
    with MockAuthServer() as mock, notes_behind(mock, lambda app: BearerGate(app, mock)) as up:
        yield up


@pytest.mark.parametrize("version", ["2025-11-25", "2026-07-28"])
def test_client_authorizes_retries_and_refreshes(protected, version: str) -> None:
    from mcpkit.client import Client

    mock, gate, url = protected
    oauth = OAuth(follow)
    with Client(url=url, version=version, auth=oauth, timeout=20) as client:
        assert client.list_tools()
        assert gate.refusals == 1 and len(mock.seen("/authorize")) == 1
        gate.revoked.add(oauth.current_token(url))  # the server stops taking the token
        assert client.call_tool("notes_search", {"query": "mcp"})
        assert gate.refusals == 2
        assert len(mock.seen("/authorize")) == 1  # refreshed, not authorized again
        assert [t["grant_type"] for t in mock.seen("/token")] == ["authorization_code",
                                                                 "refresh_token"]


def test_a_401_loop_ends_in_an_error(protected) -> None:
    from mcpkit.client import Client
    from mcpkit.session import HttpError

    mock, gate, url = protected
    gate.always_refuse = True
    started = time.monotonic()
    with pytest.raises(HttpError, match="401"):
        with Client(url=url, version="2026-07-28", auth=OAuth(follow), timeout=20) as client:
            client.list_tools()
    assert time.monotonic() - started < 15
    assert gate.refusals == 2 and len(mock.seen("/authorize")) == 1  # one flow, then final


def test_async_client_authorizes_on_the_callers_loop(protected) -> None:
    from mcpkit.aclient import AsyncClient

    mock, gate, url = protected

    async def authorize(url: str) -> str:  # a coroutine callback is awaited
        async with httpx.AsyncClient(timeout=5.0) as http:
            return (await http.get(url)).headers["location"]

    async def main() -> None:
        async with AsyncClient(url=url, version="2026-07-28", auth=OAuth(authorize),
                               timeout=20) as client:
            assert await client.list_tools()

    run(main())
    assert gate.refusals == 1 and len(mock.seen("/authorize")) == 1


def test_an_unreachable_token_endpoint_is_an_oauth_error() -> None:
    """Authlib may run on httpx2 (the SDK installs it): its network errors must still come
    out as OAuthError, naming the endpoint, not as that library's own exception."""
    from mcpkit.oauth import OAuthError

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens there once closed
    endpoint = f"http://127.0.0.1:{port}/token"
    oauth = OAuth(grant="client_credentials", client_id="machine", client_secret="s",
                  timeout=2.0)
    client = {"client_id": "machine", "client_secret": "s",
              "token_endpoint_auth_method": "client_secret_post"}
    with pytest.raises(OAuthError, match="token request to .*/token failed"):
        asyncio.run(oauth._token_request(client, None, {"token_endpoint": endpoint},
                                         "http://127.0.0.1", grant_type="client_credentials"))


def test_machine_grants_say_what_they_need() -> None:
    """jwt_bearer (workload identity) and enterprise (SEP-990) are run end to end against
    the official suite's mock servers (tests/test_conformance_client.py); here, the clear
    errors of a wrong configuration."""
    with pytest.raises(ValueError, match="grant must be one of"):
        OAuth(grant="password", client_id="c")
    with pytest.raises(ValueError, match="the jwt_bearer grant needs a client_id"):
        OAuth(grant="jwt_bearer", assertion="a.b.c")
    with pytest.raises(ValueError, match="needs an assertion"):
        OAuth(grant="jwt_bearer", client_id="c")
    with pytest.raises(ValueError, match="idp_token_endpoint"):
        OAuth(grant="enterprise", client_id="c", assertion="id.token.jwt")
    fresh = OAuth(grant="jwt_bearer", client_id="c", assertion=lambda: "new.jwt.each-time")
    assert fresh.grant == "jwt_bearer"


# -- DPoP (RFC 9449): tokens bound to the client's key, a fresh proof on every request ----


class DPoPGate:
    """A resource server that takes DPoP-bound tokens only: ``Authorization: DPoP`` with a
    token the mock authorization server bound to a key, and a proof by that key for this
    very request (method, URL, the token's hash, a jti never seen, its nonce when one is
    required). ``rotate_after``: hand out a new nonce in the answer to that many requests."""

    def __init__(self, app: Any, mock: MockAuthServer, nonce: str | None = None,
                 rotate_after: int | None = None) -> None:
        self.app = app
        self.mock = mock
        self.nonce = nonce
        self.rotate_after = rotate_after
        self.schemes: list[str] = []
        self.proofs: list[dict[str, Any]] = []
        self.refusals: list[str] = []
        self._jtis: set[str] = set()

    def close(self) -> None:
        self.app.close()

    async def _refuse(self, send: Any, error: str, nonce: str | None = None) -> None:
        self.refusals.append(error)
        metadata = f"{self.mock.base}/.well-known/oauth-protected-resource/mcp"
        headers = [(b"content-type", b"application/json"), (
            b"www-authenticate",
            f'DPoP error="{error}", resource_metadata="{metadata}"'.encode())]
        if nonce:
            headers.append((b"dpop-nonce", nonce.encode()))
        await send({"type": "http.response.start", "status": 401, "headers": headers})
        await send({"type": "http.response.body", "body": b'{"error":"' + error.encode() + b'"}'})

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        headers = dict(scope.get("headers") or [])
        scheme, _, token = headers.get(b"authorization", b"").decode().partition(" ")
        self.schemes.append(scheme)
        if scheme != "DPoP" or token not in self.mock.bound:
            return await self._refuse(send, "invalid_token")
        url = f"http://{headers[b'host'].decode()}{scope['path']}"
        try:
            claims = check_proof(headers.get(b"dpop", b"").decode() or None, scope["method"],
                                 url, seen_jtis=self._jtis, access_token=token,
                                 jkt=self.mock.bound[token], nonce=self.nonce)
        except ProofError as exc:
            return await self._refuse(send, "use_dpop_nonce" if str(exc) == "use_dpop_nonce"
                                      else "invalid_dpop_proof", self.nonce)
        self.proofs.append(claims)
        fresh = None
        if self.rotate_after is not None and len(self.proofs) == self.rotate_after:
            fresh = self.nonce = f"rotated-{len(self.proofs)}"

        async def send_with_nonce(message: dict) -> None:
            if fresh and message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []),
                                                  (b"dpop-nonce", fresh.encode())]}
            await send(message)

        await self.app(scope, receive, send_with_nonce)


@pytest.fixture
def dpop_protected(request):
    options = getattr(request, "param", {})
    with MockAuthServer(dpop=True, dpop_nonce=options.get("as_nonce")) as mock, notes_behind(
            mock, lambda app: DPoPGate(app, mock, nonce=options.get("rs_nonce"),
                                       rotate_after=options.get("rotate_after"))) as up:
        yield up


@pytest.mark.parametrize("version", ["2025-11-25", "2026-07-28"])
def test_dpop_binds_the_token_and_proves_every_request(dpop_protected, version: str) -> None:
    from mcpkit.client import Client

    mock, gate, url = dpop_protected
    oauth = OAuth(follow)
    with Client(url=url, version=version, auth=oauth, timeout=20) as client:
        assert client.list_tools()
        assert client.call_tool("notes_search", {"query": "mcp"})
        bound_to = mock.bound[oauth.current_token(url)]
        mock.bound.pop(oauth.current_token(url))  # the server stops taking the token
        assert client.call_tool("notes_search", {"query": "mcp"})  # refreshed, by proof
    assert [t["grant_type"] for t in mock.seen("/token")] == ["authorization_code",
                                                             "refresh_token"]
    assert len(mock.proofs) == 2 and {p["jkt"] for p in mock.proofs} == {bound_to}
    assert mock.proof_errors == []
    assert gate.refusals == ["invalid_token", "invalid_token"]  # no token; the dropped one
    assert set(gate.schemes) <= {"", "DPoP"}  # never Bearer
    methods = {p["htm"] for p in gate.proofs}
    assert "POST" in methods and len(gate.proofs) >= 3
    if version == "2025-11-25":
        assert "DELETE" in methods  # the session's end carries a proof of its own too


@pytest.mark.parametrize("dpop_protected", [
    {"as_nonce": "as-nonce-1", "rs_nonce": "rs-nonce-1", "rotate_after": 2}], indirect=True)
def test_dpop_nonces_are_asked_for_once_and_followed(dpop_protected) -> None:
    from mcpkit.client import Client

    mock, gate, url = dpop_protected
    with Client(url=url, version="2026-07-28", auth=OAuth(follow), timeout=20) as client:
        for _ in range(4):
            assert client.call_tool("notes_search", {"query": "mcp"})
    # The authorization server asked once; so did the resource server. Its new nonce,
    # given in the answer to the second request, was used from then on without a refusal.
    assert mock.proof_errors == ["use_dpop_nonce"] and len(mock.proofs) == 1
    assert gate.refusals == ["invalid_token", "use_dpop_nonce"]
    nonces = [p.get("nonce") for p in gate.proofs]
    assert len(nonces) >= 4 and nonces[:2] == ["rs-nonce-1"] * 2
    assert set(nonces[2:]) == {"rotated-2"}


def test_a_server_that_always_wants_another_nonce_is_an_error() -> None:
    with MockAuthServer(dpop=True, dpop_nonce="n", refuse_every_nonce=True) as mock:
        started = time.monotonic()
        with pytest.raises(OAuthError, match="use_dpop_nonce"):
            run(OAuth(follow).challenged(mock.resource, 401, challenge(mock), None))
    assert time.monotonic() - started < 10
    assert len(mock.seen("/token")) == 2  # the first try, and one more with the nonce


def test_dpop_true_insists_and_false_declines() -> None:
    with MockAuthServer() as mock, pytest.raises(OAuthError, match="does not offer DPoP"):
        run(OAuth(follow, dpop=True).challenged(mock.resource, 401, challenge(mock), None))
    with MockAuthServer(dpop=True) as mock:
        oauth = OAuth(follow, dpop=False)
        run(oauth.challenged(mock.resource, 401, challenge(mock), None))
        token = oauth.current_token(mock.resource)
        assert token and token not in mock.bound and mock.proofs == []
        assert oauth.authorization_headers(mock.resource, "POST", token) == {
            "authorization": f"Bearer {token}"}


def test_a_bound_token_is_not_used_without_its_key() -> None:
    """A token store that outlives the process that made the key (or is shared with another
    OAuth object) holds tokens nobody here can prove: they are not sent."""
    with MockAuthServer(dpop=True) as mock:
        first = OAuth(follow)
        run(first.challenged(mock.resource, 401, challenge(mock), None))
        assert first.current_token(mock.resource) in mock.bound
        second = OAuth(follow, store=first.store)
        assert second.current_token(mock.resource) is None
        assert run(second.token(mock.resource)) is None


def test_a_proof_names_the_request_and_nothing_else() -> None:
    from mcpkit.oauth_dpop import DPoPKey, htu

    key = DPoPKey()
    seen: set[str] = set()
    url = "https://h.example/mcp?x=1#f"
    claims = check_proof(key.proof("post", url, "tok"), "POST", "https://h.example/mcp",
                         seen_jtis=seen, access_token="tok", jkt=key.thumbprint)
    assert htu(url) == claims["htu"] == "https://h.example/mcp" and "nonce" not in claims
    again = check_proof(key.proof("POST", url, "tok"), "POST", url, seen_jtis=seen)
    assert again["jti"] != claims["jti"]  # fresh each time
    assert key.saw_nonce("https://H.example/other", "n1") and not key.saw_nonce(url, "n1")
    assert not key.saw_nonce(url, "bad\nnonce")
    assert check_proof(key.proof("GET", url), "GET", url, seen_jtis=seen)["nonce"] == "n1"
    other = "https://elsewhere.example/token"
    assert "nonce" not in check_proof(key.proof("POST", other), "POST", other, seen_jtis=seen)
    private = key._key.as_dict(private=True)["d"]
    assert private not in repr(key) and key.thumbprint[:8] in repr(key)
