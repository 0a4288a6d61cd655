"""Checks for lab 08 (streamable HTTP): the HTTP checks of a request, and an ASGI front
for the notes server.

The references are mcpkit's own: :class:`~mcpkit.transports.http_security.Guard` (with the
path and method rules of ``McpHttpApp._http``) decides which generated requests are
refused and with which status, and :class:`~mcpkit.transports.http.McpHttpApp` answers the
same generated HTTP requests as the learner's app, both driven as ASGI applications in this
process. The hand-written cases run the learner's app under uvicorn on 127.0.0.1 and talk to
it over real HTTP, with httpx and with mcpkit's own client.
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .. import jsonrpc, versions
from ..context import Context
from ..transports.http_headers import NAME_FIELDS, encode_header_value
from ..transports.http_security import Guard, HttpError, RequestHeaders
from . import lab04
from .core import (
    CaseResult,
    Gen,
    Seen,
    Step,
    _,
    _Stuck,
    case,
    differential,
    drop_each,
    predicate,
    run_checks,
    seen,
)

#: The pieces of mcpkit that do what the exercises ask.
OFF_LIMITS = {
    "mcpkit.transports.http_security": {"Guard"},
    "mcpkit.transports.http": {"McpHttpApp", "create_app", "HttpServerThread",
                               "serve_in_thread", "uvicorn_server"},
}

MODERN = versions.LATEST_VERSION
META = {versions.META_PROTOCOL_VERSION: MODERN, versions.META_CLIENT_CAPABILITIES: {}}
ACCEPT = "application/json, text/event-stream"
TOKEN = "tok-8"
BODY_LIMIT = 4096
#: A request whose answer is an SSE stream (the tool logs a line first).
COUNT = jsonrpc.request(1, "tools/call", {"name": "count_words", "arguments": {
    "text": "a b c"}, "_meta": {**META, versions.META_LOG_LEVEL: "info"}})


# --------------------------------------------------------------------------- part 1


def reference_refusal(method: str, path: str, headers: dict[str, str], token: str | None
                      ) -> int | None:
    """What mcpkit's app answers before it reads a body: a status, or None (admitted)."""
    raw = RequestHeaders([(k.encode("latin-1"), v.encode("latin-1")) for k, v in headers.items()])
    if path.rstrip("/") != "/mcp":
        return 404
    guard = Guard(token=token)
    try:
        guard.check(raw)
        if method not in ("GET", "POST", "DELETE"):
            return 405
        if method == "POST":
            guard.check_post(raw)
    except HttpError as exc:
        return exc.status
    return None


def _learner_refusal(refusal: Callable, method: str, path: str, headers: dict[str, str],
                     token: str | None) -> Any:
    try:
        value = refusal(method, path, dict(headers), token)
    except (NotImplementedError, _Stuck):
        raise
    except Exception as exc:
        return Seen.of(exc, raised=True)
    value = seen(value)
    if isinstance(value, list) and len(value) == 2 and isinstance(value[1], str):
        return value[0]  # (status, message): the message is the learner's to word
    return value if value is None else {"not (status, message)": value}


_BASE = {"host": "127.0.0.1:8000", "content-type": "application/json", "accept": ACCEPT}
_REFUSAL_CASES: list[tuple[str, str, str, str, dict[str, str], str | None, Any, str, str]] = [
    ("a good POST", "un POST correcto", "POST", "/mcp", {}, None, None,
     "admitted: return None", "admitido: devuelve None"),
    ("another path", "otra ruta", "POST", "/api", {}, None, 404,
     "only /mcp (a trailing / is fine): 404", "solo /mcp (con o sin / final): 404"),
    ("Host: evil.example", "Host: evil.example", "POST", "/mcp", {"host": "evil.example"}, None,
     403, "a Host that does not name this machine: 403 (DNS rebinding)",
     "un Host que no nombra esta máquina: 403 (DNS rebinding)"),
    ("Host: localhost, any port", "Host: localhost, cualquier puerto", "POST", "/mcp",
     {"host": "LOCALHOST:3000"}, None, None,
     "compare the host name only, without the port, ignoring case",
     "compara solo el nombre del host, sin el puerto, sin distinguir mayúsculas de "
     "minúsculas"),
    ("Host: [::1]:8000", "Host: [::1]:8000", "GET", "/mcp", {"host": "[::1]:8000"}, None, None,
     "host_name('[::1]:8000') is '::1', a loopback name",
     "host_name('[::1]:8000') es '::1', un nombre de loopback"),
    ("no Host", "sin Host", "POST", "/mcp", {"host": None}, None, 403,
     "no Host header at all: 403", "sin ninguna cabecera Host: 403"),
    ("Origin: http://evil.example", "Origin: http://evil.example", "POST", "/mcp",
     {"origin": "http://evil.example"}, None, 403,
     "an Origin, when present, must be http(s) on a loopback name: 403",
     "un Origin, si lo hay, debe ser http(s) con un nombre de loopback: 403"),
    ("Origin: http://localhost:5173", "Origin: http://localhost:5173", "POST", "/mcp",
     {"origin": "http://localhost:5173"}, None, None,
     "a page served from this machine may call", "una página servida desde esta máquina puede "
     "llamar"),
    ("Origin: http://localhost.evil.example", "Origin: http://localhost.evil.example", "POST",
     "/mcp", {"origin": "http://localhost.evil.example"}, None, 403,
     "compare the origin's host name (origin_parts) with LOOPBACK, not how the origin starts",
     "compara el nombre de host del origen (origin_parts) con LOOPBACK, no cómo empieza el "
     "origen"),
    ("Origin: file://localhost", "Origin: file://localhost", "POST", "/mcp",
     {"origin": "file://localhost"}, None, 403,
     "the Origin's scheme must be http or https: a file:// page is refused even on this "
     "machine", "el esquema del Origin debe ser http o https: una página file:// se rechaza "
     "aunque sea de esta máquina"),
    ("Origin: null", "Origin: null", "POST", "/mcp", {"origin": "null"}, None, 403,
     "'null' (a sandboxed page, a file) is not a loopback origin",
     "'null' (una página aislada, un archivo) no es un origen de loopback"),
    ("an empty Origin", "un Origin vacío", "POST", "/mcp", {"origin": ""}, None, 403,
     "an Origin header that is there but empty names no loopback page: 403 (only a missing "
     "Origin is skipped)", "una cabecera Origin presente pero vacía no nombra ninguna página "
     "de loopback: 403 (solo se salta un Origin ausente)"),
    ("Host: 0.0.0.0", "Host: 0.0.0.0", "POST", "/mcp", {"host": "0.0.0.0:8000"}, None, 403,
     "only the three names of LOOPBACK: 0.0.0.0 is not one of them",
     "solo los tres nombres de LOOPBACK: 0.0.0.0 no es uno de ellos"),
    ("Origin: https://localhost", "Origin: https://localhost", "POST", "/mcp",
     {"origin": "https://localhost"}, None, None, "http and https are both fine",
     "http y https valen los dos"),
    ("/MCP", "/MCP", "POST", "/MCP", {}, None, 404,
     "a path is case-sensitive: /MCP is not /mcp", "una ruta distingue mayúsculas de "
     "minúsculas: /MCP no es /mcp"),
    ("/mcp//", "/mcp//", "POST", "/mcp//", {}, None, None,
     "every trailing / is dropped (path.rstrip('/')): /mcp// is /mcp",
     "se quitan todas las / finales (path.rstrip('/')): /mcp// es /mcp"),
    ("token \"\": no token", "token \"\": sin token", "POST", "/mcp", {}, "", None,
     "a token of \"\" (like None) requires nothing", "un token \"\" (como None) no exige nada"),
    ("no token", "sin token", "POST", "/mcp", {}, TOKEN, 401,
     "with a token set, no Authorization header: 401",
     "con un token configurado y sin cabecera Authorization: 401"),
    ("the right token", "el token correcto", "POST", "/mcp", {"authorization": f"Bearer {TOKEN}"},
     TOKEN, None, "Authorization: Bearer <token>", "Authorization: Bearer <token>"),
    ("'bearer' in lower case", "'bearer' en minúsculas", "POST", "/mcp",
     {"authorization": f"bearer {TOKEN}"}, TOKEN, None,
     "the scheme is case-insensitive", "el esquema no distingue mayúsculas de minúsculas"),
    ("a wrong token", "un token equivocado", "POST", "/mcp", {"authorization": "Bearer guess"},
     TOKEN, 401, "compare the credentials with same_secret: 401 when they differ",
     "compara las credenciales con same_secret: 401 si difieren"),
    ("Basic credentials", "credenciales Basic", "POST", "/mcp",
     {"authorization": f"Basic {TOKEN}"}, TOKEN, 401,
     "only the Bearer scheme: 401", "solo el esquema Bearer: 401"),
    ("a prefix of the token", "un prefijo del token", "POST", "/mcp",
     {"authorization": f"Bearer {TOKEN[:-1]}"}, TOKEN, 401,
     "compare the whole credentials with the token (same_secret): a part of it is not it",
     "compara las credenciales completas con el token (same_secret): una parte no es el "
     "token"),
    ("the token in capitals", "el token en mayúsculas", "POST", "/mcp",
     {"authorization": f"Bearer {TOKEN.upper()}"}, TOKEN, 401,
     "only the scheme ignores case: the credentials must be the token exactly",
     "solo el esquema no distingue mayúsculas de minúsculas: las credenciales deben ser "
     "exactamente el token"),
    ("a tab after Bearer", "un tabulador tras Bearer", "POST", "/mcp",
     {"authorization": f"Bearer\t{TOKEN}"}, TOKEN, 401,
     "split at the first space (partition(' ')): with a tab there is no space, so no Bearer "
     "scheme", "divide en el primer espacio (partition(' ')): con un tabulador no hay "
     "espacio, así que no hay esquema Bearer"),
    ("PUT", "PUT", "PUT", "/mcp", {}, None, 405,
     "only GET, POST and DELETE: 405", "solo GET, POST y DELETE: 405"),
    ("HEAD", "HEAD", "HEAD", "/mcp", {}, None, 405,
     "HEAD and OPTIONS are not GET, POST or DELETE either: 405",
     "HEAD y OPTIONS tampoco son GET, POST ni DELETE: 405"),
    ("post in lower case", "post en minúsculas", "post", "/mcp", {}, None, 405,
     "method names are case-sensitive (RFC 9110): 'post' is not POST",
     "los nombres de método distinguen mayúsculas de minúsculas (RFC 9110): 'post' no es "
     "POST"),
    ("PUT without the token", "PUT sin el token", "PUT", "/mcp", {}, TOKEN, 401,
     "Host, Origin and token come before the method: 401",
     "Host, Origin y token van antes que el método: 401"),
    ("Content-Type: text/plain", "Content-Type: text/plain", "POST", "/mcp",
     {"content-type": "text/plain"}, None, 415,
     "a POST must send application/json: 415", "un POST debe enviar application/json: 415"),
    ("JSON with a charset", "JSON con charset", "POST", "/mcp",
     {"content-type": "application/json; charset=utf-8"}, None, None,
     "parameters after ';' do not change the media type (media_types drops them)",
     "los parámetros tras ';' no cambian el tipo de medio (media_types los quita)"),
    ("no Content-Type", "sin Content-Type", "POST", "/mcp", {"content-type": None}, None, 415,
     "a POST with no content-type header does not say application/json: 415",
     "un POST sin cabecera content-type no dice application/json: 415"),
    ("Content-Type: application/jsonx", "Content-Type: application/jsonx", "POST", "/mcp",
     {"content-type": "application/jsonx"}, None, 415,
     "compare whole media types (media_types), not substrings",
     "compara tipos de medio completos (media_types), no subcadenas"),
    ("Content-Type: text/plain, Accept: text/html", "Content-Type: text/plain, Accept: "
     "text/html", "POST", "/mcp", {"content-type": "text/plain", "accept": "text/html"}, None,
     415, "both wrong: Content-Type (415) comes before Accept (406)",
     "las dos están mal: Content-Type (415) va antes que Accept (406)"),
    ("Content-Type with two types", "Content-Type con dos tipos", "POST", "/mcp",
     {"content-type": "text/plain, application/json"}, None, None,
     "content-type's media types must include application/json: any of them may be it",
     "los tipos de medio de content-type deben incluir application/json: puede ser "
     "cualquiera de ellos"),
    ("Accept: application/json", "Accept: application/json", "POST", "/mcp",
     {"accept": "application/json"}, None, 406,
     "a POST must accept both application/json and text/event-stream: 406",
     "un POST debe aceptar application/json y text/event-stream: 406"),
    ("an empty Accept", "un Accept vacío", "POST", "/mcp", {"accept": ""}, None, 406,
     "an Accept header that is there but empty accepts nothing: 406 (only a missing one "
     "accepts anything)",
     "una cabecera Accept presente pero vacía no acepta nada: 406 (solo una ausente acepta "
     "cualquier cosa)"),
    ("Accept: image/*, text/*", "Accept: image/*, text/*", "POST", "/mcp",
     {"accept": "image/*, text/*"}, None, 406,
     "a family accepts its own types only: image/* is not application/*",
     "una familia solo acepta sus propios tipos: image/* no es application/*"),
    ("Accept: application/*, text/*", "Accept: application/*, text/*", "POST", "/mcp",
     {"accept": "application/*, text/*"}, None, None,
     "a family (type/*) accepts every type of its own", "una familia (tipo/*) acepta todos "
     "sus tipos"),
    ("Accept with q=0", "Accept con q=0", "POST", "/mcp",
     {"accept": "application/json, text/event-stream;q=0"}, None, 406,
     "q=0 means not acceptable: media_types leaves that type out, so text/event-stream is "
     "missing", "q=0 significa no aceptable: media_types deja fuera ese tipo, así que falta "
     "text/event-stream"),
    ("Accept: */*", "Accept: */*", "POST", "/mcp", {"accept": "*/*"}, None, None,
     "*/* (or type/*) accepts both", "*/* (o tipo/*) acepta los dos"),
    ("no Accept", "sin Accept", "POST", "/mcp", {"accept": None}, None, None,
     "no Accept header accepts anything (RFC 9110)",
     "sin cabecera Accept se acepta cualquier cosa (RFC 9110)"),
    ("GET ignores Content-Type", "GET ignora Content-Type", "GET", "/mcp",
     {"content-type": "text/plain", "accept": "text/html"}, None, None,
     "Content-Type and Accept are checked for POST only",
     "Content-Type y Accept solo se comprueban en POST"),
]


def _headers(extra: dict[str, str | None]) -> dict[str, str]:
    merged = {**_BASE, **extra}
    return {k: v for k, v in merged.items() if v is not None}


@dataclass(frozen=True)
class RefusalCase:
    requests: tuple[tuple[str, str, str, str | None], ...]  # method, path, headers JSON, token


_HOSTS = ["127.0.0.1:8000", "127.0.0.1:8000", "localhost", "localhost:3000", "[::1]:8000",
          "evil.example", "127.0.0.1.evil.example", "LocalHost:1", None, "127.0.0.2", "[::1",
          "0.0.0.0:8000", ""]
_ORIGINS = [None, None, None, "http://localhost:3000", "https://127.0.0.1", "http://evil.example",
            "null", "file://localhost", "http://[::1]:5", "ftp://localhost", "HTTP://LOCALHOST",
            "http://localhost.evil.example", "https://127.0.0.1.nip.io",
            "http://localhost@evil.example", "http://[::1].evil.example", "https://localhost/",
            ""]
_AUTHS = [None, f"Bearer {TOKEN}", f"bearer {TOKEN}", f"Bearer  {TOKEN} ", "Bearer wrong",
          f"Basic {TOKEN}", "Bearer", f"Bearer {TOKEN}x", f"BEARER {TOKEN}",
          f"Bearer {TOKEN[:-1]}", f"Bearer {TOKEN.upper()}", f"Bearer\t{TOKEN}", "Bearer "]
_TYPES = ["application/json", "application/json", "application/json; charset=utf-8",
          "text/plain", "APPLICATION/JSON", None, "application/jsonx", "text/json",
          "text/plain, application/json", "application/json-seq"]
_ACCEPTS = [ACCEPT, ACCEPT, "*/*", "application/json", "text/event-stream",
            "application/*, text/*", "application/json, text/event-stream;q=0", None,
            "text/event-stream, application/json;q=0.5", "text/html", "", "image/*, text/*",
            "application/*, image/*", "*/*;q=0, application/json, text/*"]


def _refusal_request(rng: Gen) -> tuple[str, str, str, str | None]:
    method = rng.choice(["POST"] * 6 + ["GET", "DELETE", "PUT", "PATCH", "HEAD", "OPTIONS",
                                        "post", "get"])
    path = rng.choice(["/mcp"] * 6 + ["/mcp/", "/", "/other", "/MCP", "/mcp/x", "/mcp//",
                                      "/mcp///", "//mcp"])
    headers = {"host": rng.choice(_HOSTS), "origin": rng.choice(_ORIGINS),
               "authorization": rng.choice(_AUTHS), "content-type": rng.choice(_TYPES),
               "accept": rng.choice(_ACCEPTS)}
    headers = {k: v for k, v in headers.items() if v is not None}
    return method, path, json.dumps(headers), rng.choice([None, None, TOKEN, TOKEN, ""])


def _refusal_case(rng: Gen) -> RefusalCase:
    return RefusalCase(tuple(_refusal_request(rng) for _i in range(rng.randint(1, 4))))


def _refusal_label(method: str, path: str, headers: str, token: str | None) -> str:
    return f"refusal({method!r}, {path!r}, {headers}, {token!r})"


def _refusal_trial(refusal: Any, x: RefusalCase) -> list[Step]:
    steps = []
    for method, path, headers, token in x.requests:
        if refusal is reference_refusal:
            outcome = reference_refusal(method, path, json.loads(headers), token)
        else:
            outcome = _learner_refusal(refusal, method, path, json.loads(headers), token)
        steps.append(Step(_refusal_label(method, path, headers, token), outcome))
    return steps


def _refusal_hint(x: RefusalCase, expected: Step | None, got: Step | None) -> str | None:
    texts = {
        404: _("the path is not /mcp", "la ruta no es /mcp"),
        403: _("Host or Origin is not on this machine", "Host u Origin no son de esta máquina"),
        401: _("the bearer token is missing or wrong",
               "falta el token de portador o no es el correcto"),
        405: _("a method MCP does not use", "un método que MCP no usa"),
        415: _("a POST that does not say application/json",
               "un POST que no dice application/json"),
        406: _("a POST that does not accept both formats",
               "un POST que no acepta los dos formatos"),
        None: _("nothing is wrong with this request: admit it (None)",
                "esta solicitud no tiene ningún problema: admítela (None)"),
    }
    if expected is None:
        return None
    want = expected.seen
    if want == 403:
        request = next((r for r in x.requests if _refusal_label(*r) == expected.label), None)
        headers = json.loads(request[2]) if request else {}
        scheme, name = _origin_parts(headers.get("origin"))
        if reference_refusal("GET", "/mcp", {"host": headers.get("host", "")}, None) is None \
                and name in ("localhost", "127.0.0.1", "::1") \
                and scheme not in ("http", "https"):
            return _("the Origin's scheme must be http or https: its host is this machine, "
                     "but not over HTTP", "el esquema del Origin debe ser http o https: su "
                     "host es esta máquina, pero no usa HTTP")
    return texts.get(want) if isinstance(want, int | type(None)) else None


def _origin_parts(origin: str | None) -> tuple[str | None, str | None]:
    from urllib.parse import urlsplit

    if origin is None:
        return None, None
    try:
        parts = urlsplit(origin)
        return parts.scheme, parts.hostname
    except ValueError:
        return None, None


def check_refusal(refusal: Callable) -> None:
    """Part 1: ``refusal(method, path, headers, token)``."""
    results = []
    for en, es, method, path, extra, token, expected, hint_en, hint_es in _REFUSAL_CASES:
        headers = _headers(extra)
        results.append(case(
            _(en, es), lambda m=method, p=path, h=headers, t=token: _learner_refusal(
                refusal, m, p, h, t),
            expected, given=_refusal_label(method, path, json.dumps(headers), token),
            hint=_(hint_en, hint_es)))
    results.append(differential(
        _("generated requests, against mcpkit's Guard", "solicitudes generadas, frente al Guard "
          "de mcpkit"),
        key="lab08/refusal", generate=_refusal_case, trial=_refusal_trial,
        reference=reference_refusal, learner=refusal,
        show=lambda x: "; ".join(_refusal_label(*r) for r in x.requests),
        shrink=lambda x: (RefusalCase(tuple(s)) for s in drop_each(list(x.requests)) if s),
        hint=_refusal_hint, cases=1000))
    run_checks(results)


# --------------------------------------------------------------------------- part 2: the app


def notes_front_server() -> Any:
    """A fresh notes server (lab 04's reference) plus a tool that logs before it answers."""
    server = lab04.reference_make_notes_server(lab04._seed())

    @server.tool(read_only=True)
    def count_words(text: str, ctx: Context) -> int:
        """Count the words of a text, logging what it does."""
        ctx.log("info", f"counting {len(text)} characters")
        return len(text.split())

    @server.tool(read_only=True)
    def notes_lock(note_id: str) -> str:
        """Lock a note (always busy: a server-defined error, which travels with 200)."""
        raise jsonrpc.JsonRpcError(-32000, f"note {note_id} is locked by another editor")

    @server.tool(read_only=True)
    def notes_share(note_id: str) -> str:
        """Share a note (it needs a capability no client here declares: -32021, a 400)."""
        raise jsonrpc.JsonRpcError(jsonrpc.MISSING_REQUIRED_CLIENT_CAPABILITY,
                                   f"sharing note {note_id} needs the elicitation capability",
                                   {"requiredCapabilities": {"elicitation": {}}})

    @server.tool(read_only=True)
    def notes_tag(note_id: str, tag: str, ctx: Context) -> str:
        """Tag a note: logs first, then refuses an empty tag (-32602 after a log line: the
        stream has started, so it is still 200)."""
        ctx.log("info", f"tagging note {note_id}")
        if not tag.strip():
            raise jsonrpc.JsonRpcError(jsonrpc.INVALID_PARAMS, "a tag must not be empty")
        return f"note {note_id} tagged {tag}"

    return server


def modern_headers(message: dict[str, Any]) -> dict[str, str]:
    version = ((message.get("params") or {}).get("_meta") or {}).get(
        versions.META_PROTOCOL_VERSION)
    headers = {"host": "127.0.0.1:8000", "content-type": "application/json", "accept": ACCEPT,
               "mcp-protocol-version": version if isinstance(version, str) else MODERN,
               "mcp-method": message["method"]}
    field = NAME_FIELDS.get(message["method"])
    params = message.get("params") or {}
    if field and isinstance(params.get(field), str):
        headers["mcp-name"] = encode_header_value(params[field])
    return headers


async def _drive_async(app: Any, method: str, path: str, headers: list[tuple[str, str]],
                       chunks: list[bytes]) -> list[dict[str, Any]]:
    events = [{"type": "http.request", "body": c, "more_body": i < len(chunks) - 1}
              for i, c in enumerate(chunks)] or [{"type": "http.request", "body": b"",
                                                  "more_body": False}]
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        if events:
            return events.pop(0)
        await asyncio.Event().wait()  # the client stays until the response is complete
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1",
             "method": method, "scheme": "http", "path": path, "raw_path": path.encode(),
             "query_string": b"", "root_path": "", "server": ("127.0.0.1", 8000),
             "client": ("127.0.0.1", 50000),
             "headers": [(k.encode("latin-1"), v.encode("latin-1")) for k, v in headers]}
    await asyncio.wait_for(app(scope, receive, send), 5.0)
    return sent


def drive(app: Any, method: str, path: str, headers: list[tuple[str, str]],
          chunks: list[bytes]) -> Any:
    """One HTTP exchange with an ASGI app, on a thread with its own event loop (a notebook's
    main thread already runs one). What the app sent, or the error it raised."""
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["sent"] = asyncio.run(_drive_async(app, method, path, headers, chunks))
        except BaseException as exc:  # the learner's bug is data here
            box["error"] = exc

    thread = threading.Thread(target=run, daemon=True, name="lab08-asgi")
    thread.start()
    thread.join(8.0)
    if thread.is_alive():
        return Seen("TimeoutError", raised=True)
    if "error" in box:
        error = box["error"]
        if isinstance(error, NotImplementedError):
            raise error
        return Seen.of(error, raised=True)
    return box["sent"]


def _normalize(message: Any) -> Any:
    """A JSON-RPC message as compared: errors by id and code (their wording is free)."""
    if isinstance(message, dict) and isinstance(message.get("error"), dict):
        return {"id": message.get("id"), "error": message["error"].get("code")}
    return message


def http_outcome(sent: Any) -> Any:
    """What a client sees of a response: status, format and the messages in it."""
    if isinstance(sent, Seen):
        return sent
    start = next((m for m in sent if m.get("type") == "http.response.start"), None)
    if start is None:
        return {"status": None}
    body = b"".join(m.get("body", b"") for m in sent if m.get("type") == "http.response.body")
    headers = {bytes(k).decode("latin-1").lower(): bytes(v).decode("latin-1")
               for k, v in start.get("headers", [])}
    kind = headers.get("content-type", "").split(";")[0].strip()
    outcome: dict[str, Any] = {"status": start.get("status")}
    ending = response_ending(sent)
    if ending != "ended":
        outcome["response"] = ending
    if kind == "text/event-stream":
        outcome["format"] = "sse"
        outcome["messages"] = [_normalize(_loads(d))
                               for d in sse_events(body.decode("utf-8", "replace"))]
    elif body.strip():
        outcome["format"] = "json" if kind == "application/json" else kind
        outcome["messages"] = [_normalize(_loads(body))]
    else:
        outcome["format"] = None
    return seen(outcome)


def response_ending(sent: list[dict[str, Any]]) -> str:
    """Whether an ASGI response was completed: one ``http.response.start``, then body events,
    the last without ``more_body`` (or with it False), and nothing after it."""
    last = next((i for i, m in enumerate(sent) if m.get("type") == "http.response.body"
                 and not m.get("more_body", False)), None)
    if last is None:
        return _("never ended (no http.response.body without more_body)",
                 "nunca terminó (ningún http.response.body sin more_body)")
    if last < len(sent) - 1:
        return _("events sent after it ended", "eventos enviados después de terminar")
    return "ended"


def sse_events(text: str) -> list[str]:
    """The data of each event of an SSE stream, read as the HTML standard reads one: lines
    end with CRLF, LF or CR; "data:" lines (one optional space after the colon) add to the
    event's data; a blank line dispatches it. An event with no blank line after it is never
    dispatched (a browser drops it too)."""
    events, data = [], []
    for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n")[:-1]:
        if not line:
            if data:
                events.append("\n".join(data))
            data = []
            continue
        field, _colon, value = line.partition(":")
        if field == "data":
            data.append(value[1:] if value.startswith(" ") else value)
    return events


def _loads(data: bytes | str) -> Any:
    try:
        return json.loads(data)
    except ValueError:
        return {"not JSON": data if isinstance(data, str) else data.decode("utf-8", "replace")}


def _reference_app(token: str | None, limit: int = BODY_LIMIT) -> Any:
    from ..transports.http import McpHttpApp

    return McpHttpApp(notes_front_server(), token=token, max_body_size=limit)


@dataclass(frozen=True)
class AppCase:
    token: str | None
    requests: tuple[tuple[str, str, str, bytes, int], ...]  # method, path, headers, body, cuts
    limit: int = BODY_LIMIT  # make_app's max_body_size


#: Valid JSON that is no JSON-RPC request or notification (a notification's envelope wrong).
NOT_MESSAGES = (b"5", b"[]", b'"text"', b'{"jsonrpc": "2.0"}',
                b'{"jsonrpc": "1.0", "method": "notifications/initialized"}',
                b'{"method": "notifications/initialized"}',
                b'{"jsonrpc": "2.0", "method": "notifications/initialized", "params": [1]}',
                b'{"jsonrpc": "2.0", "method": 5}',
                b'{"jsonrpc": "2.0", "method": "tools/list", "id": null}',
                b'{"jsonrpc": "2.0", "id": 1, "result": {}}',
                b'[{"jsonrpc": "2.0", "method": "notifications/initialized"}]')
#: A protocol version no server speaks: -32022, a 400.
OLD_VERSION = "1999-01-01"


def _body_for(rng: Gen, limit: int = BODY_LIMIT) -> tuple[dict[str, str] | None, bytes]:
    roll = rng.random()
    if roll < 0.45:
        call = rng.choice([
            ("tools/list", {}),
            ("tools/call", {"name": "notes_search", "arguments": {"query": rng.choice(
                ["mcp", "café", "zzz", ""])}}),
            ("tools/call", {"name": "count_words", "arguments": {"text": rng.text()}}),
            ("tools/call", {"name": "notes_list", "arguments": {}}),
            ("tools/call", {"name": "nope", "arguments": {}}),
            ("tools/call", {"name": "notes_lock", "arguments": {"note_id": "1"}}),
            ("tools/call", {"name": "notes_share", "arguments": {"note_id": "1"}}),
            ("tools/call", {"name": "notes_tag", "arguments": {"note_id": "1", "tag": rng.choice(
                ["", "todo"])}}),
            ("resources/read", {"uri": rng.choice(["notes://1", "notes://99"])}),
            ("prompts/list", {}),
            ("server/discover", {}),
            ("tools/unknown", {}),
        ])
        method, params = call
        meta = dict(META)
        if method == "tools/call" and params["name"] in ("count_words", "notes_tag"):
            meta[versions.META_LOG_LEVEL] = rng.choice(["info", "info", "error"])
        if rng.random() < 0.08:
            meta[versions.META_PROTOCOL_VERSION] = OLD_VERSION
        message = jsonrpc.request(rng.choice([1, "a", 7]), method, {**params, "_meta": meta})
        return modern_headers(message), json.dumps(message).encode()
    if roll < 0.55:
        message = rng.choice([
            jsonrpc.notification("notifications/initialized", {"_meta": META}),
            jsonrpc.notification("notifications/cancelled", {"requestId": 1, "_meta": META}),
            jsonrpc.notification("notifications/initialized"),  # no _meta, no params
            jsonrpc.notification("notifications/made_up", {"x": [1]})])
        return modern_headers(message), json.dumps(message).encode()
    if roll < 0.62:
        return None, rng.choice([b"{not json", b"", b"[1, 2", b"\xff"])
    if roll < 0.7:
        return None, rng.choice(NOT_MESSAGES)
    if roll < 0.78:
        message = jsonrpc.request(1, "tools/list")  # no _meta: -32602
        return None, json.dumps(message).encode()
    size = rng.choice([limit - 1, limit, limit + 1, limit + 7, limit + 100, 3 * limit])
    message = sized_request(size)
    return modern_headers(message), json.dumps(message).encode()


def sized_request(size: int) -> dict[str, Any]:
    """A count_words call whose JSON (json.dumps) is exactly ``size`` bytes long."""
    message = jsonrpc.request(1, "tools/call", {"name": "count_words", "arguments": {
        "text": ""}, "_meta": META})
    pad = max(0, size - len(json.dumps(message)))
    message["params"]["arguments"]["text"] = "w " * (pad // 2) + "w" * (pad % 2)
    return message


def _app_request(rng: Gen, limit: int = BODY_LIMIT) -> tuple[str, str, str, bytes, int]:
    method = rng.choice(["POST"] * 8 + ["GET", "DELETE"])
    headers, body = _body_for(rng, limit)
    headers = dict(headers or {"host": "127.0.0.1:8000", "content-type": "application/json",
                               "accept": ACCEPT})
    roll = rng.random()
    if roll < 0.06:
        headers["host"] = "evil.example"
    elif roll < 0.1:
        headers["origin"] = "http://evil.example"
    elif roll < 0.14:
        headers["accept"] = "application/json"
    if rng.random() < 0.5:
        headers["authorization"] = rng.choice([f"Bearer {TOKEN}", "Bearer no"])
    if method != "POST":
        body = b""
    pairs = list(headers.items())
    if "accept" in headers and rng.random() < 0.15:  # a list header sent as several lines
        pairs = [p for p in pairs if p[0] != "accept"] + [
            ("accept", part.strip()) for part in headers["accept"].split(",")]
    return method, rng.choice(["/mcp"] * 9 + ["/x"]), json.dumps(pairs), body, \
        rng.randint(1, 4)


def _app_case(rng: Gen) -> AppCase:
    token = rng.choice([None, None, TOKEN])
    limit = rng.choice([BODY_LIMIT, BODY_LIMIT, 1000, 6000])
    return AppCase(token, tuple(_app_request(rng, limit) for _i in range(rng.randint(1, 3))),
                   limit)


def _chunks(body: bytes, cuts: int) -> list[bytes]:
    if not body or cuts <= 1:
        return [body]
    size = -(-len(body) // cuts)
    return [body[i:i + size] for i in range(0, len(body), size)]


def _show_headers(pairs: str) -> str:
    """A request's header lines (JSON pairs) as a client writes them: {name: value, ...}."""
    return "{" + ", ".join(f"{k}: {v}" for k, v in json.loads(pairs)) + "}"


def _short(body: bytes) -> str:
    text = body.decode("utf-8", "replace")
    return text if len(text) <= 120 else f"{text[:100]}… ({len(body)} bytes)"


def _app_trial(make_app: Any, x: AppCase) -> list[Step]:
    if make_app is _reference_app:
        app = _reference_app(x.token, x.limit)
    else:
        app = make_app(notes_front_server(), token=x.token, max_body_size=x.limit)
    steps = []
    try:
        for method, path, headers, body, cuts in x.requests:
            sent = drive(app, method, path, [tuple(p) for p in json.loads(headers)],
                         _chunks(body, cuts))
            steps.append(Step(f"{method} {path} {_show_headers(headers)} {_short(body)}",
                              http_outcome(sent)))
    finally:
        close = getattr(app, "close", None)
        if make_app is _reference_app and close is not None:
            close()
    return steps


def _app_hint(x: AppCase, expected: Step | None, got: Step | None) -> str | None:
    want = expected.seen if expected else None
    have = got.seen if got else None
    if not isinstance(want, dict) or not isinstance(have, dict):
        return None
    if "response" in have:
        return _ending_hint(have)
    refused = {404, 403, 401, 405, 406, 415}
    if want.get("status") != have.get("status") and (want.get("status") in refused
                                                     or have.get("status") in refused):
        return _("refusal(...) (part 1) decides first, with the request's method, path, "
                 "header_dict(scope) and make_app's token; then GET and DELETE get 405; only "
                 "then is the body read", "refusal(...) (parte 1) decide primero, con el "
                 "método, la ruta, header_dict(scope) y el token de make_app; después GET y "
                 "DELETE reciben 405; solo entonces se lee el cuerpo")
    if want.get("format") != have.get("format"):
        return _("JSON when the final response is the only message; an SSE stream when "
                 "notifications come first; no body for 202",
                 "JSON cuando la respuesta final es el único mensaje; un flujo SSE cuando "
                 "antes llegan notificaciones; sin cuerpo para 202")
    if have.get("status") == 413 and want.get("status") != 413:
        return _("only a body longer than max_body_size bytes is 413: exactly the limit is "
                 "fine (>, not >=)", "solo un cuerpo de más de max_body_size bytes es 413: "
                 "exactamente el límite está bien (>, no >=)")
    if want.get("status") == 413:
        return _("count the body's bytes as they arrive (not decoded characters), and answer "
                 "413 once they pass max_body_size", "cuenta los bytes del cuerpo según "
                 "llegan (no los caracteres decodificados), y responde 413 en cuanto pasen de "
                 "max_body_size")
    if want.get("status") != have.get("status"):
        return _("the status: 202 for a notification, 413 over the limit, 400 for a body that "
                 "is not a JSON-RPC request, 404 for -32601, 400 for the other protocol errors",
                 "el código de estado: 202 para una notificación, 413 por encima del límite, "
                 "400 para un cuerpo que no es una solicitud JSON-RPC, 404 para -32601, 400 "
                 "para los demás errores de protocolo")
    return None


def _over_http(hint: str) -> Callable[[Any], str | None]:
    """A case's hint, unless the client saw the connection end before the response did: then
    what an unfinished ASGI response looks like from outside."""

    def choose(got: Any) -> str | None:
        if isinstance(got, Seen) and got.type in ("RemoteProtocolError", "ReadTimeout"):
            return _("the connection closed before the response ended; "
                     + _ending_hint({"response": True}),
                     "la conexión se cerró antes de que terminara la respuesta; "
                     + _ending_hint({"response": True}))
        return hint

    return choose


def _ending_hint(have: Any) -> str | None:
    if not isinstance(have, dict) or "response" not in have:
        return None
    return _("end every response: after http.response.start, body events, the last one "
             "without more_body (or more_body False), and nothing after it; a 202 still needs "
             "its empty body event", "termina cada respuesta: tras http.response.start, "
             "eventos de cuerpo, el último sin more_body (o con more_body False), y nada "
             "después; un 202 también necesita su evento de cuerpo vacío")


def app_differential(make_app: Callable) -> CaseResult:
    return differential(
        _("generated HTTP requests, against mcpkit's McpHttpApp",
          "solicitudes HTTP generadas, frente al McpHttpApp de mcpkit"),
        key="lab08/app", generate=_app_case, trial=_app_trial, reference=_reference_app,
        learner=make_app,
        show=lambda x: f"token={x.token!r}, max_body_size={x.limit}; " + "; ".join(
            f"{m} {p} {_show_headers(h)} {_short(b)}" for m, p, h, b, _c in x.requests),
        shrink=lambda x: (AppCase(x.token, tuple(s), x.limit)
                          for s in drop_each(list(x.requests)) if s),
        hint=_app_hint, cases=30)


class _Uvicorn:
    """The learner's app under uvicorn on 127.0.0.1, on a thread."""

    def __init__(self, app: Any) -> None:
        import uvicorn

        self._socket = socket.socket()
        self._socket.bind(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._socket.getsockname()[1]}/mcp"
        self._server = uvicorn.Server(uvicorn.Config(app, log_level="critical",
                                                     lifespan="off",
                                                     timeout_graceful_shutdown=1))
        self._thread = threading.Thread(target=self._server.run,
                                        kwargs={"sockets": [self._socket]}, daemon=True)

    def __enter__(self) -> _Uvicorn:
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started and self._thread.is_alive():
            if time.monotonic() > deadline:
                break
            time.sleep(0.01)
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.should_exit = True
        self._thread.join(5)
        self._socket.close()


def _post(url: str, message: Any, headers: dict[str, str] | None = None,
          content: bytes | None = None) -> Any:
    import httpx

    base = modern_headers(message) if isinstance(message, dict) and "method" in message else {
        "content-type": "application/json", "accept": ACCEPT}
    base.pop("host", None)
    response = httpx.post(url, content=content if content is not None else json.dumps(message),
                          headers={**base, **(headers or {})}, timeout=10)
    kind = response.headers.get("content-type", "").split(";")[0]
    result: dict[str, Any] = {"status": response.status_code}
    if kind == "text/event-stream":
        result["format"] = "sse"
        result["methods"] = [_loads(data).get("method", "response") if isinstance(
            _loads(data), dict) else data for data in sse_events(response.text)]
    elif response.content.strip():
        result["format"] = "json" if kind == "application/json" else kind
        body = _loads(response.content)
        result["code"] = body.get("error", {}).get("code") if isinstance(body, dict) else None
    else:
        result["format"] = None
    return result


def check_notes_front(make_app: Callable) -> None:
    """Part 2: ``make_app(server, token=None, max_body_size=...)``, an ASGI app."""
    import httpx

    from ..client import Client

    results: list[CaseResult] = []
    try:
        app = make_app(notes_front_server(), token=None, max_body_size=BODY_LIMIT)
        guarded = make_app(notes_front_server(), token=TOKEN, max_body_size=BODY_LIMIT)
    except NotImplementedError:
        app = guarded = None
    if app is None:
        results.append(case(_("make_app", "make_app"), lambda: make_app(None), None))
        results.append(app_differential(make_app))
        run_checks(results)
        return
    count = COUNT
    search = jsonrpc.request(2, "tools/call", {"name": "notes_search", "arguments": {
        "query": "mcp"}, "_meta": META})
    unknown = jsonrpc.request(3, "tools/unknown", {"_meta": META})
    lock = jsonrpc.request(4, "tools/call", {"name": "notes_lock", "arguments": {
        "note_id": "1"}, "_meta": META})
    note = jsonrpc.notification("notifications/initialized", {"_meta": META})
    too_big = json.dumps(sized_request(BODY_LIMIT + 1)).encode()
    exact = sized_request(BODY_LIMIT)
    with _Uvicorn(app) as http, _Uvicorn(guarded) as guarded_http:
        def with_client() -> Any:
            with Client(url=http.url, version="modern", listen=False, timeout=10,
                        probe_timeout=5) as client:
                tools = sorted(t["name"] for t in client.list_tools())
                found = json.loads(client.call_tool(
                    "notes_search", {"query": "café"})["content"][0]["text"])
                return [client.era, tools, [n["id"] for n in found]]

        results.append(case(
            _("mcpkit's client over HTTP: discover, list, call",
              "el cliente de mcpkit por HTTP: descubrir, listar, llamar"),
            with_client, ["modern", ["count_words", "notes_create", "notes_delete",
                                     "notes_list", "notes_lock", "notes_search", "notes_share",
                                     "notes_tag"], ["3"]],
            hint=_("a real client must get through: POST /mcp, one JSON-RPC message, its "
                   "answer as application/json",
                   "un cliente real debe poder pasar: POST /mcp, un mensaje JSON-RPC, su "
                   "respuesta como application/json")))
        for name, thunk, expected, hint in (
            (_("a plain answer is JSON", "una respuesta simple es JSON"),
             lambda: _post(http.url, search), {"status": 200, "format": "json", "code": None},
             _("one message out (the final response): application/json, 200",
               "un solo mensaje (la respuesta final): application/json, 200")),
            (_("a log line first: SSE", "antes una línea de registro: SSE"),
             lambda: _post(http.url, count),
             {"status": 200, "format": "sse", "methods": ["notifications/message", "response"]},
             _("more than one message: text/event-stream, one 'event: message' + 'data: ...' "
               "block each, the response last",
               "más de un mensaje: text/event-stream, un bloque 'event: message' + "
               "'data: ...' por mensaje, y la respuesta final en último lugar")),
            (_("a notification: 202", "una notificación: 202"), lambda: _post(http.url, note),
             {"status": 202, "format": None},
             _("a notification gets 202 and no body", "una notificación recibe 202 sin cuerpo")),
            (_("any notification: 202", "cualquier notificación: 202"),
             lambda: [_post(http.url, jsonrpc.notification(m, p))["status"]
                      for m, p in (("notifications/made_up", {"x": [1]}),
                                   ("notifications/initialized", None))],
             [202, 202],
             _("every notification gets 202 and no body, whatever its method or params: it "
               "does not go to the server",
               "toda notificación recibe 202 sin cuerpo, sean cuales sean su método o sus "
               "params: no va al servidor")),
            (_("an unknown method: 404", "un método desconocido: 404"),
             lambda: _post(http.url, unknown), {"status": 404, "format": "json", "code": -32601},
             _("-32601 travels with HTTP 404 in the modern era",
               "-32601 viaja con HTTP 404 en la era moderna")),
            (_("not JSON: 400, -32700", "no es JSON: 400, -32700"),
             lambda: _post(http.url, None, content=b"{oops"),
             {"status": 400, "format": "json", "code": -32700},
             _("a body that does not parse: 400 with a -32700 error",
               "un cuerpo que no se puede analizar: 400 con un error -32700")),
            (_("over the body limit: 413", "por encima del límite: 413"),
             lambda: _post(http.url, None, content=too_big),
             {"status": 413, "format": "json", "code": -32600},
             _("count the bytes as they arrive; over max_body_size: 413",
               "cuenta los bytes según llegan; por encima de max_body_size: 413")),
            (_("exactly the body limit", "exactamente el límite del cuerpo"),
             lambda: _post(http.url, exact, content=json.dumps(exact).encode()),
             {"status": 200, "format": "json", "code": None},
             _("max_body_size bytes are allowed; one more is 413: refuse only a body longer "
               "than the limit (>, not >=)",
               "se admiten max_body_size bytes; uno más es 413: rechaza solo un cuerpo más "
               "largo que el límite (>, no >=)")),
            (_("a server-defined error (-32000): 200", "un error definido por el servidor "
               "(-32000): 200"),
             lambda: _post(http.url, lock), {"status": 200, "format": "json", "code": -32000},
             _("only -32601 (404) and the protocol errors (400) change the status; any other "
               "error travels with 200",
               "solo -32601 (404) y los errores de protocolo (400) cambian el código de "
               "estado; cualquier otro error viaja con 200")),
            (_("GET and DELETE: 405 with allow: POST", "GET y DELETE: 405 con allow: POST"),
             lambda: [{"status": r.status_code, "allow": r.headers.get("allow")}
                      for r in (httpx.get(http.url, timeout=10),
                                httpx.delete(http.url, timeout=10))],
             [{"status": 405, "allow": "POST"}] * 2,
             _("no sessions, so no GET stream and nothing to DELETE: 405, with the header "
               "allow: POST (send_error's headers=[(\"allow\", \"POST\")])",
               "sin sesiones no hay flujo GET ni nada que borrar con DELETE: 405, con la "
               "cabecera allow: POST (headers=[(\"allow\", \"POST\")] de send_error)")),
            (_("Host: evil.example: 403", "Host: evil.example: 403"),
             lambda: _post(http.url, search, {"host": "evil.example"}),
             {"status": 403, "format": "json", "code": -32600},
             _("refusal(...) first, answered with send_error",
               "primero refusal(...), respondido con send_error")),
            (_("token required", "token obligatorio"),
             lambda: [_post(guarded_http.url, search)["status"],
                      _post(guarded_http.url, search,
                            {"authorization": f"Bearer {TOKEN}"})["status"]],
             [401, 200], _("pass make_app's token to refusal",
                           "pasa el token de make_app a refusal")),
        ):
            results.append(case(name, thunk, expected, hint=_over_http(hint)))
    results.append(case(
        _("a JSON-RPC response is not a request: 400, -32600",
          "una respuesta JSON-RPC no es una solicitud: 400, -32600"),
        lambda: _responses_posted(app), [{"status": 400, "code": -32600}] * 2,
        given=_("POST /mcp {}; then POST /mcp {}", "POST /mcp {}; después POST /mcp {}").format(
            *(json.dumps(r) for r in _RESPONSES)),
        hint=_("classify(...) says 'result' or 'error': a response, which no request of this "
               "server waits for; answer 400 with -32600, and do not hand it to the server "
               "(answer would wait for a reply that never comes)",
               "classify(...) dice 'result' o 'error': una respuesta, que ninguna solicitud de "
               "este servidor espera; responde 400 con -32600, y no se la pases al servidor "
               "(answer se quedaría esperando una respuesta que nunca llegaría)")))
    results.append(case(
        _("the limit counts bytes, not characters", "el límite cuenta bytes, no caracteres"),
        lambda: _multibyte_limit(app), [{"status": 200, "code": None},
                                        {"status": 413, "code": -32600}],
        given=_("POST /mcp, bodies of {a} and {b} bytes, mostly 'é' (2 bytes each), in 3 "
                "pieces; max_body_size={m}", "POST /mcp, cuerpos de {a} y {b} bytes, casi "
                "todo letras 'é' (2 bytes cada una), en 3 trozos; max_body_size={m}").format(
                    a=BODY_LIMIT - 1, b=BODY_LIMIT + 1, m=BODY_LIMIT),
        hint=_("count len(body) of the bytes received, not of decoded text: 'é' is one "
               "character but two bytes", "cuenta len(body) de los bytes recibidos, no del "
               "texto decodificado: 'é' es un carácter pero dos bytes")))
    pieces = [b"w" * 1000] * 12  # the limit is passed in the fifth piece, with > or >=
    results.append(case(
        _("over the limit: no more is read", "por encima del límite: no se lee más"),
        lambda: _limit_reading(make_app, pieces), {"status": 413, "pieces read": 5},
        given=_("POST /mcp, a body of 12 pieces of {n} bytes; max_body_size={m}",
                "POST /mcp, un cuerpo de 12 trozos de {n} bytes; max_body_size={m}").format(
                    n=1000, m=BODY_LIMIT),
        hint=_("check the size after each receive(), and answer 413 as soon as it is over: "
               "do not read the rest first",
               "comprueba el tamaño tras cada receive() y responde 413 en cuanto lo pase: no "
               "leas antes el resto")))
    results.append(case(
        _("a client that goes away mid-body gets no answer",
          "un cliente que se va a mitad del cuerpo no recibe respuesta"),
        lambda: _goes_away(make_app), [],
        given=_("POST /mcp, the first piece of a body, then http.disconnect",
                "POST /mcp, el primer trozo de un cuerpo y luego http.disconnect"),
        hint=_("http.disconnect: the client has gone; return without sending anything (what "
               "was read is not the body)",
               "http.disconnect: el cliente se ha ido; retorna sin enviar nada (lo leído no es "
               "el cuerpo)")))
    results.append(predicate(
        _("a lifespan scope is not a request", "un scope lifespan no es una solicitud"),
        lambda: _lifespan(make_app), lambda sent: isinstance(sent, list) and all(
            isinstance(m, dict) and str(m.get("type", "")).startswith("lifespan.")
            for m in sent),
        _("the app returns (or answers the lifespan events), and sends no HTTP response",
          "la aplicación retorna (o responde a los eventos lifespan) y no envía ninguna "
          "respuesta HTTP"),
        given=_("scope {'type': 'lifespan'}, events lifespan.startup, lifespan.shutdown",
                "scope {'type': 'lifespan'}, eventos lifespan.startup, lifespan.shutdown"),
        hint=_("only an 'http' scope is a request: for any other type, return at once",
               "solo un scope 'http' es una solicitud: para cualquier otro tipo, retorna "
               "en el acto")))
    results.append(case(
        _("the event loop stays free while the server works",
          "el bucle de eventos sigue libre mientras el servidor trabaja"),
        lambda: _loop_free(make_app), {"status": 200, "loop ran during the call": True},
        given=_("POST tools/call of a tool that takes 0.5 s, with another task on the loop",
                "POST tools/call de una herramienta que tarda 0.5 s, con otra tarea en el "
                "bucle"),
        hint=_loop_hint))
    results.append(case(
        _("make_app's max_body_size is the limit", "el límite es el max_body_size de make_app"),
        lambda: _other_limit(make_app), [{"status": 200, "code": None},
                                         {"status": 413, "code": -32600}],
        given=_("make_app(server, max_body_size={m}); POST /mcp, bodies of {a} and {b} bytes",
                "make_app(server, max_body_size={m}); POST /mcp, cuerpos de {a} y {b} "
                "bytes").format(m=OTHER_LIMIT, a=OTHER_LIMIT, b=OTHER_LIMIT + 1),
        hint=_("compare with make_app's max_body_size, whatever its value (not with 4096)",
               "compara con el max_body_size de make_app, sea cual sea su valor (no con "
               "4096)")))
    results.append(case(
        _("JSON that is not a JSON-RPC request or notification: 400, -32600",
          "JSON que no es una solicitud ni una notificación JSON-RPC: 400, -32600"),
        lambda: [_status_code(drive(app, "POST", "/mcp", list(_json_headers().items()), [b]))
                 for b in _NOT_MESSAGES_SHOWN],
        [{"status": 400, "code": -32600}] * len(_NOT_MESSAGES_SHOWN),
        given="; ".join(f"POST /mcp {b.decode()}" for b in _NOT_MESSAGES_SHOWN),
        hint=_not_message_hint))
    results.append(case(
        _("the protocol errors -32602, -32021, -32022: 400",
          "los errores de protocolo -32602, -32021, -32022: 400"),
        lambda: [_status_code(drive(app, "POST", "/mcp", list(modern_headers(m).items()),
                                    [json.dumps(m).encode()])) for m in _PROTOCOL_ERRORS],
        [{"status": 400, "code": c} for c in (-32602, -32021, -32022)],
        given="; ".join(f"POST /mcp {json.dumps(m)}" for m in _PROTOCOL_ERRORS),
        hint=_("the final response's error code decides: 404 for -32601, 400 for -32700, "
               "-32600, -32602, -32020, -32021 and -32022, 200 for any other",
               "decide el código de error de la respuesta final: 404 para -32601, 400 para "
               "-32700, -32600, -32602, -32020, -32021 y -32022, 200 para cualquier otro")))
    results.append(case(
        _("an SSE stream is 200, even when it ends in an error",
          "un flujo SSE es 200, aunque termine en un error"),
        lambda: _sse_error(app), {"status": 200, "format": "sse",
                                  "last": {"id": 5, "error": -32602}},
        given=f"POST /mcp {json.dumps(_TAG_EMPTY)}",
        hint=_("with notifications first the answer is an SSE stream: status 200, sent before "
               "the messages, whatever the final response says",
               "si antes llegan notificaciones, la respuesta es un flujo SSE: código de estado "
               "200, enviado antes que los mensajes, diga lo que diga la respuesta final")))
    results.append(case(
        _("refusal comes first: before the 405 and before the body",
          "refusal va primero: antes del 405 y antes del cuerpo"),
        lambda: _refusal_first(app), [404, 403, 404],
        given=_("GET /x; DELETE /mcp with Host: evil.example; POST /x with the body {oops",
                "GET /x; DELETE /mcp con Host: evil.example; POST /x con el cuerpo {oops"),
        hint=_("call refusal(...) before anything else: a GET or DELETE it refuses gets its "
               "status, not 405, and a refused POST's body is never read",
               "llama a refusal(...) antes de nada: un GET o DELETE que rechaza recibe su "
               "código de estado, no 405, y el cuerpo de un POST rechazado no se lee")))
    results.append(case(
        _("a notification does not reach the server",
          "una notificación no llega al servidor"),
        lambda: _notification_kept(make_app), {"status": [202, 202], "messages the server got": 0},
        given=_("POST /mcp notifications/initialized; POST /mcp notifications/cancelled",
                "POST /mcp notifications/initialized; POST /mcp notifications/cancelled"),
        hint=_("answer a notification 202 yourself and do not hand it to the server (no "
               "connect, no receive): in this era no client notification travels over HTTP",
               "responde tú 202 a una notificación y no se la pases al servidor (ni connect ni "
               "receive): en esta era ninguna notificación del cliente viaja por HTTP")))
    results.append(case(
        _("Accept sent as two header lines", "Accept enviado en dos líneas de cabecera"),
        lambda: _status_code(drive(app, "POST", "/mcp", _SPLIT_ACCEPT,
                                   [json.dumps(search).encode()])),
        {"status": 200, "code": None},
        given="POST /mcp " + ", ".join(f"{k}: {v}" for k, v in _SPLIT_ACCEPT),
        hint=_("a header may come in several lines: header_dict(scope) joins them with ', '; "
               "a dict that keeps only the last line loses one of the two types",
               "una cabecera puede llegar en varias líneas: header_dict(scope) las une con "
               "', '; un dict que solo guarda la última línea pierde uno de los dos tipos")))
    results.append(predicate(
        _("a websocket scope is not a request", "un scope websocket no es una solicitud"),
        lambda: _websocket(make_app), lambda sent: isinstance(sent, list) and all(
            isinstance(m, dict) and not str(m.get("type", "")).startswith("http.")
            for m in sent),
        _("the app returns, and sends no HTTP response",
          "la aplicación retorna y no envía ninguna respuesta HTTP"),
        given=_("scope {'type': 'websocket'}, events websocket.connect, websocket.disconnect",
                "scope {'type': 'websocket'}, eventos websocket.connect, websocket.disconnect"),
        hint=_("only an 'http' scope is a request: for any other type (not only 'lifespan'), "
               "return at once", "solo un scope 'http' es una solicitud: para cualquier otro "
               "tipo (no solo 'lifespan'), retorna en el acto")))
    results.append(case(
        _("every response ends", "cada respuesta termina"),
        lambda: [response_ending(s) if isinstance(s, list) else s for s in (
            drive(app, "POST", "/mcp", list(modern_headers(note).items()),
                  [json.dumps(note).encode()]),
            drive(app, "POST", "/mcp", list(modern_headers(search).items()),
                  [json.dumps(search).encode()]),
            drive(app, "POST", "/mcp", list(modern_headers(count).items()),
                  [json.dumps(count).encode()]),
            drive(app, "POST", "/x", list(_json_headers().items()), [b"{}"]))],
        ["ended"] * 4,
        given=_("POST /mcp: a notification (202), a plain request (JSON), a request that logs "
                "(SSE); POST /x (404)", "POST /mcp: una notificación (202), una solicitud "
                "simple (JSON), una solicitud que escribe en el registro (SSE); POST /x (404)"),
        hint=lambda got: _ending_hint({"response": True}) if isinstance(got, list) else None))
    results.append(app_differential(make_app))
    run_checks(results)


OTHER_LIMIT = 1500
_NOT_MESSAGES_SHOWN = (b"5", b"[]", b'{"jsonrpc": "1.0", "method": "notifications/initialized"}',
                       b'{"jsonrpc": "2.0", "method": "notifications/initialized", '
                       b'"params": [1]}', b'{"jsonrpc": "2.0", "method": 5}')
_PROTOCOL_ERRORS = (
    jsonrpc.request(6, "tools/list"),  # no _meta: -32602
    jsonrpc.request(7, "tools/call", {"name": "notes_share", "arguments": {"note_id": "1"},
                                      "_meta": META}),
    jsonrpc.request(8, "tools/list", {"_meta": {**META,
                                                versions.META_PROTOCOL_VERSION: OLD_VERSION}}))
_TAG_EMPTY = jsonrpc.request(5, "tools/call", {"name": "notes_tag", "arguments": {
    "note_id": "1", "tag": ""}, "_meta": {**META, versions.META_LOG_LEVEL: "info"}})
_SPLIT_ACCEPT = [("host", "127.0.0.1:8000"), ("content-type", "application/json"),
                 ("accept", "text/event-stream"), ("accept", "application/json")]


def _loop_hint(got: Any) -> str | None:
    if isinstance(got, Seen) and got.type == "TimeoutError":
        return _("the app did not finish within 5 s: an event without more_body (or with "
                 "more_body False) is the body's last; and await answer(server, message), "
                 "which runs the server on a thread (exchange() would block the loop)",
                 "la aplicación no terminó en 5 s: un evento sin more_body (o con more_body "
                 "False) es el último del cuerpo; y await answer(server, message), que ejecuta "
                 "el servidor en un hilo (exchange() bloquearía el bucle)")
    if isinstance(got, Seen):
        return None
    return _("await answer(server, message): it runs the server on a thread; calling "
             "exchange() directly blocks every other request for as long as the tool takes",
             "await answer(server, message): ejecuta el servidor en un hilo; llamar a "
             "exchange() directamente bloquea cualquier otra solicitud mientras dura la "
             "herramienta")


def _not_message_hint(got: Any) -> str | None:
    if isinstance(got, list) and any(isinstance(g, dict) and g.get("code") == -32700
                                     for g in got):
        return _("json.loads accepted these bodies: -32700 is only for a body that does not "
                 "parse; JSON that is not a request or notification is -32600",
                 "json.loads aceptó estos cuerpos: -32700 es solo para un cuerpo que no se "
                 "puede analizar; un JSON que no es solicitud ni notificación es -32600")
    return _("let jsonrpc.classify judge the whole envelope (an object, \"jsonrpc\": \"2.0\", "
             "a string method, params an object): when it raises JsonRpcError, 400 with "
             "-32600, even without an \"id\"",
             "deja que jsonrpc.classify juzgue el sobre completo (un objeto, \"jsonrpc\": "
             "\"2.0\", un method que sea una cadena, unos params que sean un objeto): si lanza "
             "JsonRpcError, 400 con -32600, aunque no haya \"id\"")


def _other_limit(make_app: Callable) -> Any:
    app = make_app(notes_front_server(), token=None, max_body_size=OTHER_LIMIT)
    seen_now = []
    for size in (OTHER_LIMIT, OTHER_LIMIT + 1):
        message = sized_request(size)
        sent = drive(app, "POST", "/mcp", list(modern_headers(message).items()),
                     _chunks(json.dumps(message).encode(), 2))
        seen_now.append(_status_code(sent))
    return seen_now


def _sse_error(app: Any) -> Any:
    outcome = http_outcome(drive(app, "POST", "/mcp", list(modern_headers(_TAG_EMPTY).items()),
                                 [json.dumps(_TAG_EMPTY).encode()]))
    if not isinstance(outcome, dict):
        return outcome
    messages = outcome.get("messages") or [None]
    return {"status": outcome.get("status"), "format": outcome.get("format"),
            "last": messages[-1]}


def _refusal_first(app: Any) -> list[Any]:
    evil = {**_json_headers(), "host": "evil.example"}
    got = []
    for method, path, headers, body in (("GET", "/x", _json_headers(), b""),
                                        ("DELETE", "/mcp", evil, b""),
                                        ("POST", "/x", _json_headers(), b"{oops")):
        status = _status_code(drive(app, method, path, list(headers.items()), [body]))
        got.append(status.get("status") if isinstance(status, dict) else status)
    return got


def _recording_server(server: Any, got: list[Any]) -> Any:
    """``server``, with every message a connection of it receives added to ``got``."""

    class Recorded:
        def connect(self, send: Callable[[Any], None]) -> Any:
            connection = server.connect(send)

            class Connection:
                def receive(self, message: Any) -> Any:
                    got.append(message)
                    return connection.receive(message)

                def close(self) -> Any:
                    return connection.close()

                def __getattr__(self, name: str) -> Any:
                    return getattr(connection, name)

            return Connection()

        def __getattr__(self, name: str) -> Any:
            return getattr(server, name)

    return Recorded()


def _notification_kept(make_app: Callable) -> Any:
    got: list[Any] = []
    app = make_app(_recording_server(notes_front_server(), got), token=None,
                   max_body_size=BODY_LIMIT)
    statuses = []
    for note in (jsonrpc.notification("notifications/initialized", {"_meta": META}),
                 jsonrpc.notification("notifications/cancelled", {"requestId": 1,
                                                                  "_meta": META})):
        outcome = _status_code(drive(app, "POST", "/mcp", list(modern_headers(note).items()),
                                     [json.dumps(note).encode()]))
        statuses.append(outcome.get("status") if isinstance(outcome, dict) else outcome)
    time.sleep(0.05)  # a notification handed over on a thread of the app's own
    return {"status": statuses, "messages the server got": len(got)}


def _websocket(make_app: Callable) -> Any:
    app = make_app(notes_front_server(), token=None, max_body_size=BODY_LIMIT)
    return _raw_exchange(app, {"type": "websocket", "asgi": {"version": "3.0"},
                               "path": "/mcp", "headers": [], "subprotocols": []},
                         [{"type": "websocket.connect"}, {"type": "websocket.disconnect"}])


#: JSON-RPC responses a client might POST: neither is a request or a notification.
_RESPONSES = ({"jsonrpc": "2.0", "id": 1, "result": {}},
              {"jsonrpc": "2.0", "id": 2, "error": {"code": -32000, "message": "busy"}})


def _status_code(sent: Any) -> Any:
    """A response as a status and the JSON-RPC error code in it (None if there is none)."""
    outcome = http_outcome(sent)
    if not isinstance(outcome, dict):
        return outcome
    messages = outcome.get("messages") or [{}]
    code = messages[-1].get("error") if isinstance(messages[-1], dict) else None
    return {"status": outcome.get("status"), "code": code}


def _responses_posted(app: Any) -> Any:
    seen_now = []
    for response in _RESPONSES:
        sent = drive(app, "POST", "/mcp", list(_json_headers().items()),
                     [json.dumps(response).encode()])
        seen_now.append(_status_code(sent))
        if isinstance(sent, Seen):  # waited for an answer that never comes: once is enough
            break
    return seen_now


def sized_text_request(size: int) -> bytes:
    """A count_words call of exactly ``size`` bytes of UTF-8, its text mostly 'é' (two
    bytes, one character), sent as is (not escaped)."""
    message = jsonrpc.request(1, "tools/call", {"name": "count_words", "arguments": {
        "text": ""}, "_meta": META})
    pad = max(0, size - len(json.dumps(message, ensure_ascii=False).encode()))
    message["params"]["arguments"]["text"] = "é" * (pad // 2) + "w" * (pad % 2)
    return json.dumps(message, ensure_ascii=False).encode()


def _multibyte_limit(app: Any) -> Any:
    seen_now = []
    for size in (BODY_LIMIT - 1, BODY_LIMIT + 1):  # the same verdicts with > or >=
        body = sized_text_request(size)
        sent = drive(app, "POST", "/mcp", list(modern_headers(json.loads(body)).items()),
                     _chunks(body, 3))
        seen_now.append(_status_code(sent))
    return seen_now


def _limit_reading(make_app: Callable, pieces: list[bytes]) -> Any:
    app = make_app(notes_front_server(), token=None, max_body_size=BODY_LIMIT)
    read = [0]
    events = [{"type": "http.request", "body": c, "more_body": i < len(pieces) - 1}
              for i, c in enumerate(pieces)]
    sent = _raw_exchange(app, _scope("POST", _json_headers()), events, read)
    if isinstance(sent, Seen):
        return sent
    return {"status": http_outcome(sent).get("status"), "pieces read": read[0]}


def _raw_exchange(app: Any, scope: dict[str, Any], events: list[dict[str, Any]],
                  read: list[int] | None = None) -> Any:
    """What ``app`` sends for ``scope`` when the server side hands it ``events`` and then
    nothing more (or the error it raised); ``read[0]`` counts the events it took."""

    async def run() -> list[dict[str, Any]]:
        pending = list(events)
        sent: list[dict[str, Any]] = []

        async def receive() -> dict[str, Any]:
            if pending:
                if read is not None:
                    read[0] += 1
                return pending.pop(0)
            await asyncio.Event().wait()
            return {"type": "http.disconnect"}

        async def send(message: dict[str, Any]) -> None:
            sent.append(message)

        await asyncio.wait_for(app(scope, receive, send), 5.0)
        return sent

    return _in_thread(run)


def _goes_away(make_app: Callable) -> Any:
    app = make_app(notes_front_server(), token=None, max_body_size=BODY_LIMIT)
    return _raw_exchange(app, _scope("POST", _json_headers()), [
        {"type": "http.request", "body": b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}',
         "more_body": True}, {"type": "http.disconnect"}])


def _lifespan(make_app: Callable) -> Any:
    app = make_app(notes_front_server(), token=None, max_body_size=BODY_LIMIT)
    return _raw_exchange(app, {"type": "lifespan", "asgi": {"version": "3.0"}, "state": {}},
                         [{"type": "lifespan.startup"}, {"type": "lifespan.shutdown"}])


def _loop_free(make_app: Callable) -> Any:
    server = notes_front_server()
    ticks = [0]
    seen_ticks: list[int] = []

    @server.tool(read_only=True)
    def slow_sum(a: int, b: int) -> int:
        """Add two numbers, slowly."""
        seen_ticks.append(ticks[0])
        time.sleep(0.5)
        seen_ticks.append(ticks[0])
        return a + b

    app = make_app(server, token=None, max_body_size=BODY_LIMIT)
    message = jsonrpc.request(1, "tools/call", {"name": "slow_sum", "arguments": {
        "a": 1, "b": 2}, "_meta": META})

    async def run() -> list[dict[str, Any]]:
        body = [{"type": "http.request", "body": json.dumps(message).encode(),
                 "more_body": False}]
        sent: list[dict[str, Any]] = []

        async def receive() -> dict[str, Any]:
            if body:
                return body.pop(0)
            await asyncio.Event().wait()
            return {"type": "http.disconnect"}

        async def send(event: dict[str, Any]) -> None:
            sent.append(event)

        async def tick() -> None:
            while True:
                ticks[0] += 1
                await asyncio.sleep(0.01)

        ticker = asyncio.ensure_future(tick())
        try:
            await asyncio.wait_for(app(_scope("POST", modern_headers(message)), receive, send),
                                   5.0)
        finally:
            ticker.cancel()
        return sent

    sent = _in_thread(run)
    if isinstance(sent, Seen):
        return sent
    ran = len(seen_ticks) == 2 and seen_ticks[1] > seen_ticks[0]
    return {"status": http_outcome(sent).get("status"), "loop ran during the call": ran}


def _json_headers() -> dict[str, str]:
    return {"host": "127.0.0.1:8000", "content-type": "application/json", "accept": ACCEPT}


def _scope(method: str, headers: dict[str, str]) -> dict[str, Any]:
    return {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1",
            "method": method, "scheme": "http", "path": "/mcp", "raw_path": b"/mcp",
            "query_string": b"", "root_path": "", "server": ("127.0.0.1", 8000),
            "client": ("127.0.0.1", 50000),
            "headers": [(k.encode("latin-1"), v.encode("latin-1")) for k, v in headers.items()]}


def _in_thread(run: Callable[[], Any]) -> Any:
    """``asyncio.run(run())`` on a thread of its own (a notebook's thread runs a loop)."""
    box: dict[str, Any] = {}

    def work() -> None:
        try:
            box["sent"] = asyncio.run(run())
        except BaseException as exc:  # the learner's bug is data here
            box["error"] = exc

    thread = threading.Thread(target=work, daemon=True, name="lab08-asgi")
    thread.start()
    thread.join(8.0)
    if thread.is_alive():
        return Seen("TimeoutError", raised=True)
    if "error" in box:
        if isinstance(box["error"], NotImplementedError):
            raise box["error"]
        return Seen.of(box["error"], raised=True)
    return box["sent"]
