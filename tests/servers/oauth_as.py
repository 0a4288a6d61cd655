"""A small OAuth 2.1 authorization server, and the protected-resource metadata of one MCP
resource, over real loopback HTTP (stdlib ``http.server`` on a thread), for
tests/test_oauth.py.

It does what the MCP authorization spec asks of the other side, strictly enough to catch a
client that gets it wrong: PKCE S256 is checked (a wrong ``code_verifier`` is
``invalid_grant``), codes are single use, ``resource`` must match, refresh tokens rotate,
client credentials are checked. Knobs make it misbehave on purpose: ``metadata_issuer``
(a metadata document that names another issuer), ``iss_mode`` (``correct``, ``wrong``,
``omit`` in the authorization response), ``expires_in``.
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit


class MockAuthServer:
    def __init__(self, *, scopes_supported: list[str] | None = None,
                 metadata_issuer: str | None = None, iss_mode: str = "correct",
                 expires_in: int = 3600, prm_document: Any = None) -> None:
        self.scopes_supported = scopes_supported
        self.metadata_issuer = metadata_issuer
        self.iss_mode = iss_mode
        self.expires_in = expires_in
        self.prm_document = prm_document
        self.requests: list[tuple[str, str, dict[str, str]]] = []  # (method, path, params)
        self.issued: list[str] = []  # every access and refresh token handed out
        self.clients: dict[str, str | None] = {"machine": "machine-secret"}
        self._codes: dict[str, dict[str, str]] = {}
        self._refresh: dict[str, dict[str, str]] = {}
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

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
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)

    def __enter__(self) -> MockAuthServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def seen(self, path: str) -> list[dict[str, str]]:
        return [params for _, p, params in self.requests if p == path]

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
        if self.scopes_supported is not None:
            document["scopes_supported"] = self.scopes_supported
        return document

    def _issue(self, scope: str, resource: str, client_id: str) -> dict[str, Any]:
        access = "at-" + secrets.token_urlsafe(16)
        refresh = "rt-" + secrets.token_urlsafe(16)
        self.issued += [access, refresh]
        self._refresh[refresh] = {"scope": scope, "resource": resource, "client_id": client_id}
        answer: dict[str, Any] = {"access_token": access, "token_type": "Bearer",
                                  "expires_in": self.expires_in, "refresh_token": refresh}
        if scope:
            answer["scope"] = scope
        return answer

    def _token(self, form: dict[str, str], authorization: str | None) -> tuple[int, Any]:
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
            return 200, self._issue(code["scope"], code["resource"], code["client_id"])
        if grant == "refresh_token":
            held = self._refresh.pop(form.get("refresh_token", ""), None)
            if held is None:
                return 400, {"error": "invalid_grant"}
            return 200, self._issue(held["scope"], held["resource"], held["client_id"])
        if grant == "client_credentials":
            if not authorization or not authorization.startswith("Basic "):
                return 401, {"error": "invalid_client"}
            client_id, _, secret = base64.b64decode(authorization[6:]).decode().partition(":")
            if self.clients.get(client_id) != secret:
                return 401, {"error": "invalid_client"}
            return 200, self._issue(form.get("scope", ""), form.get("resource", ""), client_id)
        return 400, {"error": "unsupported_grant_type"}

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
                    if path != "/token":
                        self._send(404, {"error": "not_found"})
                        return
                    status, body = mock._token(form, self.headers.get("authorization"))
                self._send(status, body)

        return Handler
