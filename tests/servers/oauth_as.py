"""A small OAuth 2.1 authorization server, and the protected-resource metadata of one MCP
resource, over real loopback HTTP (stdlib ``http.server`` on a thread), for
tests/test_oauth.py.

It does what the MCP authorization spec asks of the other side, strictly enough to catch a
client that gets it wrong: PKCE S256 is checked (a wrong ``code_verifier`` is
``invalid_grant``), codes are single use, ``resource`` must match, refresh tokens rotate,
client credentials are checked. Knobs make it misbehave on purpose: ``metadata_issuer``
(a metadata document that names another issuer), ``iss_mode`` (``correct``, ``wrong``,
``omit`` in the authorization response), ``expires_in``.

With ``token_format="jwt"`` it is also a token issuer for resource servers
(tests/test_http_auth.py): access tokens are JWTs (RFC 9068, ``typ: at+jwt``) signed with
``alg`` (RS256 or ES256) by a key it publishes at ``/jwks``; :meth:`rotate_keys` starts
signing with a new key (the old one stays published); ``/introspect`` answers RFC 7662
for the resource server client ``rs``/``rs-secret``; :meth:`sign` makes any token the tests
need (expired, another audience, ...) with the issuer's own keys.

With ``dpop=True`` it offers DPoP (RFC 9449): a token request with a proof must carry a
good one (tests/servers/dpop_check.py; without one, the token is a bearer token); the tokens
it issues are bound to the proof's key (``token_type: DPoP``, the key's thumbprint kept with
the token, and refreshing needs a proof by the same key); ``dpop_nonce`` makes it require
that nonce in proofs (a ``use_dpop_nonce`` refusal hands it out), ``refuse_every_nonce``
refuses every proof so.
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

from dpop_check import USE_NONCE, ProofError
from dpop_check import check as check_proof
from joserfc import jwt
from joserfc.jwk import ECKey, KeySet, RSAKey

RESOURCE_SERVER_CLIENT = ("rs", "rs-secret")  # how a resource server introspects


def new_key(alg: str, kid: str) -> RSAKey | ECKey:
    parameters = {"kid": kid, "alg": alg, "use": "sig"}
    if alg == "ES256":
        return ECKey.generate_key("P-256", parameters=parameters, private=True)
    return RSAKey.generate_key(2048, parameters=parameters, private=True)


class MockAuthServer:
    def __init__(self, *, scopes_supported: list[str] | None = None,
                 metadata_issuer: str | None = None, iss_mode: str = "correct",
                 expires_in: int = 3600, prm_document: Any = None,
                 token_format: str = "opaque", alg: str = "RS256",
                 subject: str = "alice", dpop: bool = False, dpop_nonce: str | None = None,
                 refuse_every_nonce: bool = False) -> None:
        self.dpop = dpop
        self.dpop_nonce = dpop_nonce
        self.refuse_every_nonce = refuse_every_nonce
        self.proofs: list[dict[str, Any]] = []  # the claims of every good proof, in order
        self.proof_errors: list[str] = []
        self._jtis: set[str] = set()
        self.bound: dict[str, str] = {}  # access or refresh token -> the key's thumbprint
        self.scopes_supported = scopes_supported
        self.metadata_issuer = metadata_issuer
        self.iss_mode = iss_mode
        self.expires_in = expires_in
        self.prm_document = prm_document
        self.token_format = token_format
        self.alg = alg
        self.subject = subject  # who logs in at /authorize
        self.keys: list[RSAKey | ECKey] = [new_key(alg, "k1")] if token_format == "jwt" else []
        self.active: dict[str, dict[str, Any]] = {}  # access token -> its claims
        self.requests: list[tuple[str, str, dict[str, str]]] = []  # (method, path, params)
        self.issued: list[str] = []  # every access and refresh token handed out
        self.clients: dict[str, str | None] = {"machine": "machine-secret"}
        self._codes: dict[str, dict[str, str]] = {}
        self._refresh: dict[str, dict[str, str]] = {}
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        # A short poll: stop() waits for it (the default half second, at every teardown).
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True,
                                        kwargs={"poll_interval": 0.05})
        self._stopped = False

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    @property
    def resource(self) -> str:
        return f"{self.base}/mcp"

    def start(self) -> MockAuthServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._stopped:
            return  # (a test may stop it early: the issuer going down)
        self._stopped = True
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)

    def __enter__(self) -> MockAuthServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def seen(self, path: str) -> list[dict[str, str]]:
        return [params for _, p, params in self.requests if p == path]

    # -- a token issuer --------------------------------------------------------------------

    def jwks(self) -> dict[str, Any]:
        return KeySet(list(self.keys)).as_dict(private=False)

    def rotate_keys(self) -> None:
        """Sign with a new key from now on; the old one stays in the JWKS."""
        self.keys.insert(0, new_key(self.alg, f"k{len(self.keys) + 1}"))

    def claims(self, scope: str = "", resource: str = "", subject: str = "alice",
               client_id: str = "client", **extra: Any) -> dict[str, Any]:
        now = int(time.time())
        claims = {"iss": self.base, "sub": subject, "aud": resource, "client_id": client_id,
                  "iat": now, "exp": now + self.expires_in,
                  "jti": secrets.token_urlsafe(8), "scope": scope}
        return {**claims, **extra}

    def sign(self, claims: dict[str, Any], key: RSAKey | ECKey | None = None,
             kid: str | None = None) -> str:
        key = key or self.keys[0]
        header = {"alg": "ES256" if isinstance(key, ECKey) else "RS256", "typ": "at+jwt",
                  "kid": kid or key.kid}
        return jwt.encode(header, claims, key)

    # -- the endpoints ---------------------------------------------------------------------

    def _metadata(self) -> dict[str, Any]:
        base = self.base
        document: dict[str, Any] = {
            "issuer": self.metadata_issuer or base,
            "authorization_endpoint": f"{base}/authorize",
            "token_endpoint": f"{base}/token",
            "registration_endpoint": f"{base}/register",
            "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code", "refresh_token",
                                      "client_credentials"],
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": ["none", "client_secret_basic"],
            "authorization_response_iss_parameter_supported": True,
        }
        if self.token_format == "jwt":
            document["jwks_uri"] = f"{base}/jwks"
            document["introspection_endpoint"] = f"{base}/introspect"
        if self.scopes_supported is not None:
            document["scopes_supported"] = self.scopes_supported
        if self.dpop:
            document["dpop_signing_alg_values_supported"] = ["ES256", "RS256"]
        return document

    def _issue(self, scope: str, resource: str, client_id: str,
               subject: str | None = None, jkt: str | None = None) -> dict[str, Any]:
        subject = subject or self.subject
        claims = self.claims(scope, resource, subject, client_id)
        access = (self.sign(claims) if self.token_format == "jwt"
                  else "at-" + secrets.token_urlsafe(16))
        refresh = "rt-" + secrets.token_urlsafe(16)
        self.issued += [access, refresh]
        self.active[access] = claims
        self._refresh[refresh] = {"scope": scope, "resource": resource, "client_id": client_id,
                                  "subject": subject}
        answer: dict[str, Any] = {"access_token": access, "token_type": "Bearer",
                                  "expires_in": self.expires_in, "refresh_token": refresh}
        if jkt is not None:
            self.bound[access] = self.bound[refresh] = jkt
            answer["token_type"] = "DPoP"
        if scope:
            answer["scope"] = scope
        return answer

    def _proof(self, proof: str | None) -> tuple[int, Any, dict[str, str]] | str | None:
        """The thumbprint of a good token-request proof (None without DPoP), or the
        refusal to send."""
        if not self.dpop or proof is None:  # DPoP is offered, not required: bearer
            return None
        try:
            claims = check_proof(proof, "POST", f"{self.base}/token", seen_jtis=self._jtis,
                                 nonce=self.dpop_nonce)
        except ProofError as exc:
            self.proof_errors.append(str(exc))
            if str(exc) == USE_NONCE:
                return 400, {"error": USE_NONCE}, {"DPoP-Nonce": self.dpop_nonce or ""}
            return 400, {"error": "invalid_dpop_proof", "error_description": str(exc)}, {}
        if self.refuse_every_nonce:
            return 400, {"error": USE_NONCE}, {"DPoP-Nonce": self.dpop_nonce or "n"}
        self.proofs.append(claims)
        return claims["jkt"]

    def _token(self, form: dict[str, str], authorization: str | None,
               proof: str | None = None) -> tuple[int, Any, dict[str, str]]:
        jkt = self._proof(proof)
        if isinstance(jkt, tuple):
            return jkt  # the code (or refresh token) is not used up by a refused proof
        status, body = self._grant(form, authorization, jkt)
        return status, body, {}

    def _grant(self, form: dict[str, str], authorization: str | None,
               jkt: str | None) -> tuple[int, Any]:
        grant = form.get("grant_type")
        if grant == "authorization_code":
            code = self._codes.pop(form.get("code", ""), None)
            if code is None:
                return 400, {"error": "invalid_grant", "error_description": "unknown code"}
            verifier = form.get("code_verifier", "")
            challenge = base64.urlsafe_b64encode(
                hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
            if challenge != code["code_challenge"] or code["method"] != "S256":
                return 400, {"error": "invalid_grant", "error_description": "PKCE failed"}
            if form.get("resource") != code["resource"]:
                return 400, {"error": "invalid_target"}
            return 200, self._issue(code["scope"], code["resource"], code["client_id"],
                                    jkt=jkt)
        if grant == "refresh_token":
            token = form.get("refresh_token", "")
            if self.bound.get(token, jkt) != jkt:  # a bound refresh token needs its key
                return 400, {"error": "invalid_grant", "error_description": "wrong key"}
            held = self._refresh.pop(token, None)
            if held is None:
                return 400, {"error": "invalid_grant"}
            return 200, self._issue(held["scope"], held["resource"], held["client_id"],
                                    held["subject"], jkt=jkt)
        if grant == "client_credentials":
            if not authorization or not authorization.startswith("Basic "):
                return 401, {"error": "invalid_client"}
            client_id, _, secret = base64.b64decode(authorization[6:]).decode().partition(":")
            if self.clients.get(client_id) != secret:
                return 401, {"error": "invalid_client"}
            return 200, self._issue(form.get("scope", ""), form.get("resource", ""), client_id,
                                    subject=client_id, jkt=jkt)
        return 400, {"error": "unsupported_grant_type"}

    def _introspect(self, form: dict[str, str], authorization: str | None) -> tuple[int, Any]:
        expected = "Basic " + base64.b64encode(":".join(RESOURCE_SERVER_CLIENT).encode()).decode()
        if authorization != expected:
            return 401, {"error": "invalid_client"}
        claims = self.active.get(form.get("token", ""))
        if claims is None or claims["exp"] <= time.time():
            return 200, {"active": False}
        return 200, {"active": True, "token_type": "Bearer", **claims}

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        mock = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _send(self, status: int, body: Any, headers: dict[str, str] | None = None
                      ) -> None:
                raw = body if isinstance(body, bytes) else json.dumps(body).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(raw)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(raw)

            def do_GET(self) -> None:
                parts = urlsplit(self.path)
                query = {k: v[0] for k, v in parse_qs(parts.query).items()}
                with mock._lock:
                    mock.requests.append(("GET", parts.path, query))
                if parts.path == "/.well-known/oauth-protected-resource/mcp":
                    document = mock.prm_document
                    if document is None:
                        document = {"resource": mock.resource,
                                    "authorization_servers": [mock.base]}
                        if mock.scopes_supported is not None:
                            document["scopes_supported"] = mock.scopes_supported
                    self._send(200, document)
                elif parts.path == "/.well-known/oauth-authorization-server":
                    self._send(200, mock._metadata())
                elif parts.path == "/jwks" and mock.keys:
                    self._send(200, mock.jwks())
                elif parts.path == "/authorize":
                    code = secrets.token_urlsafe(8)
                    with mock._lock:
                        mock._codes[code] = {
                            "code_challenge": query.get("code_challenge", ""),
                            "method": query.get("code_challenge_method", ""),
                            "scope": query.get("scope", ""),
                            "resource": query.get("resource", ""),
                            "client_id": query.get("client_id", "")}
                    answer = {"code": code, "state": query.get("state", "")}
                    if mock.iss_mode == "correct":
                        answer["iss"] = mock.base
                    elif mock.iss_mode == "wrong":
                        answer["iss"] = "https://evil.example.com"
                    target = f"{query['redirect_uri']}?{urlencode(answer)}"
                    self._send(302, b"", {"location": target})
                else:
                    self._send(404, {"error": "not_found"})

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length).decode()
                path = urlsplit(self.path).path
                if path == "/register":
                    body = json.loads(raw)
                    with mock._lock:
                        mock.requests.append(("POST", path, body))
                        client_id = "dcr-" + secrets.token_hex(4)
                        mock.clients[client_id] = None
                    self._send(201, {"client_id": client_id, **body,
                                     "token_endpoint_auth_method": "none"})
                    return
                form = {k: v[0] for k, v in parse_qs(raw).items()}
                with mock._lock:
                    mock.requests.append(("POST", path, form))
                    if path == "/introspect" and mock.keys:
                        status, body = mock._introspect(form, self.headers.get("authorization"))
                    elif path != "/token":
                        self._send(404, {"error": "not_found"})
                        return
                    else:
                        status, body, headers = mock._token(
                            form, self.headers.get("authorization"), self.headers.get("dpop"))
                        self._send(status, body, headers)
                        return
                self._send(status, body)

        return Handler
