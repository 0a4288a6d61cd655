"""mcpkit's HTTP server as an OAuth resource server (mcpkit.transports.http_auth), against
a real token issuer on loopback (tests/servers/oauth_as.py with JWT access tokens, a JWKS
and introspection): the metadata document, the 401/403 challenges, every kind of bad
token, key rotation, introspection and its cache, the issuer being down, and mcpkit's own
OAuth client end to end."""

from __future__ import annotations

import contextlib
import json
import logging
import socket
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from mcpkit import Context, Server
from mcpkit.oauth import OAuth, parse_www_authenticate
from mcpkit.transports.http import HttpServerThread, McpHttpApp
from mcpkit.transports.http_auth import (
    IntrospectionValidator,
    JwtValidator,
    ResourceServer,
    TokenValidator,
)

sys.path.insert(0, str(Path(__file__).resolve().parent / "servers"))
from oauth_as import RESOURCE_SERVER_CLIENT, MockAuthServer, new_key  # noqa: E402

MODERN = "2026-07-28"
ACCEPT = "application/json, text/event-stream"

server = Server("guarded", "1.0.0")


@server.tool
def whoami(ctx: Context) -> str:
    """Who the token says the caller is."""
    auth = ctx.auth
    return json.dumps({"subject": auth.subject, "scopes": sorted(auth.scopes),
                       "client_id": auth.client_id})


@server.tool
def erase(ctx: Context) -> str:
    """Needs the write scope on top of mcp."""
    return "erased"


def scopes_for(message: dict[str, Any]) -> list[str]:
    name = (message.get("params") or {}).get("name")
    return ["write"] if message["method"] == "tools/call" and name == "erase" else []


@contextlib.contextmanager
def protected(mock: MockAuthServer, validator: TokenValidator | None = None,
              scopes: tuple[str, ...] = ("mcp",)) -> Iterator[HttpServerThread]:
    http = HttpServerThread(server)
    # The resource URL has the port in it, known once the socket is bound: set before start.
    http.app.auth = ResourceServer(
        http.url, [mock.base],
        validator or JwtValidator(mock.base, jwks_url=f"{mock.base}/jwks"),
        scopes=scopes, scopes_for=scopes_for, scopes_supported=["mcp", "write"])
    with http:
        yield http


@pytest.fixture(params=["RS256", "ES256"])
def issuer(request) -> Iterator[MockAuthServer]:
    with MockAuthServer(token_format="jwt", alg=request.param,
                        scopes_supported=["mcp", "write"]) as mock:
        yield mock


@pytest.fixture
def rs256() -> Iterator[MockAuthServer]:
    with MockAuthServer(token_format="jwt", scopes_supported=["mcp", "write"]) as mock:
        yield mock


def call(url: str, token: str | None, name: str = "whoami") -> httpx.Response:
    headers = {"content-type": "application/json", "accept": ACCEPT,
               "mcp-protocol-version": MODERN, "mcp-method": "tools/call", "mcp-name": name}
    if token is not None:
        headers["authorization"] = f"Bearer {token}"
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": name, "arguments": {}, "_meta": {
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": {}}}}
    return httpx.post(url, json=body, headers=headers, timeout=10)


def result_text(response: httpx.Response) -> str:
    assert response.status_code == 200, response.text
    return response.json()["result"]["content"][0]["text"]


def challenge(response: httpx.Response) -> dict[str, str]:
    (found,) = parse_www_authenticate(response.headers["www-authenticate"])
    assert found.scheme == "bearer"
    return dict(found)


def token_for(mock: MockAuthServer, http: HttpServerThread, scope: str = "mcp",
              **extra: Any) -> str:
    return mock.sign(mock.claims(scope, http.url, **extra))


def closed_port_url(path: str) -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}{path}"  # nothing listens there any more


# -- metadata and the first challenge -------------------------------------------------------


def test_metadata_and_the_challenge_without_a_token(rs256: MockAuthServer) -> None:
    with protected(rs256) as http:
        metadata_url = http.url.replace("/mcp", "/.well-known/oauth-protected-resource/mcp")
        refused = call(http.url, None)
        assert refused.status_code == 401
        assert challenge(refused) == {"resource_metadata": metadata_url, "scope": "mcp"}
        assert refused.json()["error"]["message"].startswith("This server needs")
        expected = {"resource": http.url, "authorization_servers": [rs256.base],
                    "bearer_methods_supported": ["header"], "scopes_supported": ["mcp", "write"]}
        for url in (metadata_url, metadata_url.removesuffix("/mcp")):
            document = httpx.get(url, timeout=5)  # public: no token
            assert document.status_code == 200 and document.json() == expected
        assert httpx.post(metadata_url, timeout=5).status_code == 405
        basic = httpx.post(http.url, content=b"{}", timeout=5,
                           headers={"authorization": "Basic dTpw"})
        assert basic.status_code == 401 and "error" not in challenge(basic)


def test_a_static_token_and_auth_do_not_mix(rs256: MockAuthServer) -> None:
    rs = ResourceServer("http://127.0.0.1/mcp", [rs256.base],
                        JwtValidator(rs256.base, jwks=rs256.jwks()))
    with pytest.raises(ValueError, match="not both"):
        McpHttpApp(server, token="s3cret", auth=rs)
    with pytest.raises(ValueError, match="absolute"):
        ResourceServer("/mcp", [rs256.base], rs.validator)


# -- JWT access tokens ----------------------------------------------------------------------


def test_a_valid_token_reaches_the_tool(issuer: MockAuthServer) -> None:
    with protected(issuer) as http:
        token = token_for(issuer, http, "mcp write", subject="bob", client_id="app-1")
        seen = json.loads(result_text(call(http.url, token)))
        assert seen == {"subject": "bob", "scopes": ["mcp", "write"], "client_id": "app-1"}
        assert result_text(call(http.url, token, "erase")) == "erased"
        assert http.app.auth.validator.fetches == 1  # the JWKS once, then from memory


def _bad_tokens(mock: MockAuthServer, url: str) -> dict[str, tuple[str, str]]:
    """name -> (token, the error_description's telltale)."""
    stranger = new_key("RS256", "k1")  # the issuer's kid, somebody else's key
    now = int(time.time())
    return {
        "expired": (mock.sign(mock.claims("mcp", url, exp=now - 120, iat=now - 3600)),
                    "expired"),
        "not yet valid": (mock.sign(mock.claims("mcp", url, nbf=now + 600)), "not valid yet"),
        "another audience": (mock.sign(mock.claims("mcp", "https://other.example.com/mcp")),
                             "not for this resource"),
        "another issuer": (mock.sign(mock.claims("mcp", url, iss="https://evil.example.com")),
                           "'iss'"),
        "no exp": (mock.sign({k: v for k, v in mock.claims("mcp", url).items()
                              if k != "exp"}), "'exp'"),
        "bad signature": (mock.sign(mock.claims("mcp", url), key=stranger), "signature"),
        "tampered": (_tamper(mock.sign(mock.claims("mcp", url))), "signature"),
        "not a JWT": ("at-opaque-thing", "not a valid JWT"),
        "alg none": (_unsigned(mock.claims("mcp", url)), "algorithm"),
        "HS256": (_hs256(mock.claims("mcp", url)), "algorithm"),
    }


def _tamper(token: str) -> str:
    import base64

    header, payload, signature = token.split(".")
    claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    claims["scope"] = "mcp write admin"
    raw = base64.urlsafe_b64encode(json.dumps(claims).encode()).rstrip(b"=").decode()
    return f"{header}.{raw}.{signature}"


def _hs256(claims: dict[str, Any]) -> str:
    from joserfc import jwt
    from joserfc.jwk import OctKey

    return jwt.encode({"alg": "HS256", "kid": "k1"}, claims, OctKey.import_key("k" * 32))


def _unsigned(claims: dict[str, Any]) -> str:
    import base64

    def part(value: dict) -> str:
        return base64.urlsafe_b64encode(json.dumps(value).encode()).rstrip(b"=").decode()

    return f"{part({'alg': 'none', 'typ': 'at+jwt'})}.{part(claims)}."


def test_bad_tokens_are_401_invalid_token(rs256: MockAuthServer,
                                          caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="mcpkit")
    with protected(rs256) as http:
        for name, (token, telltale) in _bad_tokens(rs256, http.url).items():
            refused = call(http.url, token)
            assert refused.status_code == 401, name
            found = challenge(refused)
            assert found["error"] == "invalid_token", name
            assert telltale in found["error_description"], (name, found)
            assert found["resource_metadata"].endswith("/oauth-protected-resource/mcp")
            assert token not in refused.text
        assert http.app.auth.validator.fetches == 1
    logged = caplog.text
    assert "refused a token" in logged
    for token, _ in _bad_tokens(rs256, "x").values():
        assert token not in logged


def test_key_rotation_refetches_the_jwks_once(rs256: MockAuthServer) -> None:
    with protected(rs256) as http:
        validator = http.app.auth.validator
        assert result_text(call(http.url, token_for(rs256, http)))
        rs256.rotate_keys()  # the issuer signs with k2 now; its JWKS has k1 and k2
        assert result_text(call(http.url, token_for(rs256, http)))
        assert validator.fetches == 2
        assert result_text(call(http.url, token_for(rs256, http)))  # k2 known now
        unknown = rs256.sign(rs256.claims("mcp", http.url), key=new_key("RS256", "k9"))
        for _ in range(3):  # an unknown kid within refetch_interval: no fetch each time
            refused = call(http.url, unknown)
            assert refused.status_code == 401
            assert "does not publish" in challenge(refused)["error_description"]
        assert validator.fetches == 2


def test_concurrent_requests_with_a_new_kid_share_one_fetch(rs256: MockAuthServer) -> None:
    import asyncio

    validator = JwtValidator(rs256.base, jwks_url=f"{rs256.base}/jwks")

    async def main() -> None:
        await validator.validate(rs256.sign(rs256.claims("mcp", "r")))
        rs256.rotate_keys()
        tokens = [rs256.sign(rs256.claims("mcp", "r")) for _ in range(8)]
        infos = await asyncio.gather(*(validator.validate(t) for t in tokens))
        assert all(info.scopes == {"mcp"} for info in infos)

    asyncio.run(main())
    assert validator.fetches == 2 and len(rs256.seen("/jwks")) == 2


def test_insufficient_scope_is_403_with_the_scopes_needed(rs256: MockAuthServer) -> None:
    with protected(rs256) as http:
        reader = token_for(rs256, http, "mcp")
        refused = call(http.url, reader, "erase")  # the scopes_for hook: erase needs write
        assert refused.status_code == 403
        found = challenge(refused)
        assert found["error"] == "insufficient_scope" and found["scope"] == "mcp write"
        assert result_text(call(http.url, reader))  # whoami needs mcp only
        nothing = token_for(rs256, http, "")
        refused = call(http.url, nothing)
        assert refused.status_code == 403 and challenge(refused)["scope"] == "mcp"


def test_a_legacy_session_belongs_to_its_token(rs256: MockAuthServer) -> None:
    with protected(rs256) as http:
        alice = token_for(rs256, http, subject="alice")
        base = {"content-type": "application/json", "accept": ACCEPT}
        opened = httpx.post(http.url, timeout=5, headers={**base, "authorization":
                            f"Bearer {alice}"}, json={
            "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"}}})
        assert opened.status_code == 200, opened.text
        session = {**base, "mcp-session-id": opened.headers["mcp-session-id"],
                   "mcp-protocol-version": "2025-11-25"}
        ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
        mallory = token_for(rs256, http, subject="mallory")
        for token, status in ((alice, 200), (mallory, 404), (alice, 200)):
            answer = httpx.post(http.url, json=ping, timeout=5,
                                headers={**session, "authorization": f"Bearer {token}"})
            assert answer.status_code == status, (token == alice, answer.text)


def test_at_jwt_typ_when_required_and_nothing_secret_in_reprs(rs256: MockAuthServer) -> None:
    import asyncio

    from joserfc import jwt

    strict = JwtValidator(rs256.base, jwks=rs256.jwks(), require_at_jwt=True)
    claims = rs256.claims("mcp", "http://x/mcp")
    plain = jwt.encode({"alg": "RS256", "kid": "k1", "typ": "JWT"}, claims, rs256.keys[0])
    with pytest.raises(Exception, match="typ at\\+jwt"):
        asyncio.run(strict.validate(plain))
    info = asyncio.run(strict.validate(rs256.sign(claims)))
    assert info.subject == "alice" and info.audience == ("http://x/mcp",)
    assert "claims" not in repr(info) and rs256.sign(claims) not in repr(info)
    assert "rs-secret" not in repr(IntrospectionValidator("http://x/i", *RESOURCE_SERVER_CLIENT))


# -- introspection (RFC 7662) -----------------------------------------------------------------


def machine_token(mock: MockAuthServer, resource: str, scope: str = "mcp") -> str:
    answer = httpx.post(f"{mock.base}/token", auth=("machine", "machine-secret"), timeout=5,
                        data={"grant_type": "client_credentials", "scope": scope,
                              "resource": resource})
    assert answer.status_code == 200, answer.text
    return answer.json()["access_token"]


def test_introspection_active_inactive_and_cached(rs256: MockAuthServer) -> None:
    validator = IntrospectionValidator(f"{rs256.base}/introspect", *RESOURCE_SERVER_CLIENT,
                                       issuer=rs256.base, cache_ttl=60)
    with protected(rs256, validator) as http:
        token = machine_token(rs256, http.url)
        seen = json.loads(result_text(call(http.url, token)))
        assert seen == {"subject": "machine", "scopes": ["mcp"], "client_id": "machine"}
        assert result_text(call(http.url, token)) and validator.requests == 1  # cached
        del rs256.active[token]  # revoked at the issuer: still good until the cache expires
        assert result_text(call(http.url, token))
        validator.cache.ttl = 0  # from now on: ask every time
        other = machine_token(rs256, http.url)
        assert result_text(call(http.url, other))
        del rs256.active[other]
        refused = call(http.url, other)
        assert refused.status_code == 401
        assert challenge(refused)["error_description"] == "the token is not active"
        for token in ("made-up", machine_token(rs256, "https://other.example.com/mcp")):
            refused = call(http.url, token)
            assert refused.status_code == 401 and challenge(refused)["error"] == "invalid_token"
        assert "for this resource" in challenge(refused)["error_description"]


def test_introspection_with_wrong_credentials_is_503(rs256: MockAuthServer) -> None:
    validator = IntrospectionValidator(f"{rs256.base}/introspect", "rs", "wrong")
    with protected(rs256, validator) as http:
        refused = call(http.url, machine_token(rs256, http.url))
        assert refused.status_code == 503 and refused.headers["retry-after"] == "5"


# -- the issuer down ----------------------------------------------------------------------------


def test_the_issuer_down_is_503_and_known_keys_keep_working(rs256: MockAuthServer) -> None:
    down = JwtValidator(rs256.base, jwks_url=closed_port_url("/jwks"), timeout=1)
    with protected(rs256, down) as http:
        started = time.monotonic()
        refused = call(http.url, token_for(rs256, http))
        assert refused.status_code == 503 and "try again later" in refused.text
        assert "www-authenticate" not in refused.headers  # not the token's fault
        assert call(http.url, token_for(rs256, http)).status_code == 503
        assert down.fetches == 1  # the next fetch waits refetch_interval
        assert time.monotonic() - started < 5
    introspect = IntrospectionValidator(closed_port_url("/introspect"), "rs", "x", timeout=1)
    with protected(rs256, introspect) as http:
        assert call(http.url, "some-token").status_code == 503
    with protected(rs256) as http:
        good = token_for(rs256, http)
        assert result_text(call(http.url, good))
        rs256.stop()  # the issuer goes away: the keys fetched are still good
        assert result_text(call(http.url, token_for(rs256, http)))
        unknown = rs256.sign(rs256.claims("mcp", http.url), key=new_key("RS256", "k7"))
        http.app.auth.validator.refetch_interval = 0  # (a new kid may be a rotation)
        assert call(http.url, unknown).status_code == 503


# -- end to end: mcpkit's OAuth client, this server, the issuer --------------------------------


def follow(url: str) -> str:
    response = httpx.get(url, follow_redirects=False, timeout=5.0)
    assert response.status_code == 302, response.text
    return response.headers["location"]


@pytest.mark.parametrize("version", ["2025-11-25", MODERN])
def test_mcpkit_client_discovers_authorizes_and_steps_up(rs256: MockAuthServer,
                                                         version: str) -> None:
    from mcpkit.client import Client

    with protected(rs256) as http:
        with Client(url=http.url, version=version, auth=OAuth(follow), timeout=20) as client:
            assert {t["name"] for t in client.list_tools()} == {"whoami", "erase"}
            seen = json.loads(client.call_tool("whoami", {})["content"][0]["text"])
            assert seen["subject"] == "alice" and seen["scopes"] == ["mcp"]
            # erase needs write: 403 insufficient_scope, the client asks for the union
            assert client.call_tool("erase", {})["content"][0]["text"] == "erased"
        assert [a["scope"] for a in rs256.seen("/authorize")] == ["mcp", "mcp write"]
        assert all(a["resource"] == http.url for a in rs256.seen("/authorize"))
