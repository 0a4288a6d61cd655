"""Checks for lab 07 (modern MCP): the era of a request, ``server/discover``, sealed
``requestState``, the client's probe.

The references are mcpkit's own: a real :class:`~mcpkit.connection.Connection` of a real
:class:`~mcpkit.Server` decides the era of every generated request (what it answers shows
it: a modern result carries ``resultType``), the same connection answers ``server/discover``,
and states sealed by the learner must open under :class:`mcpkit.mrtr.StateSealer` (and its
states under the learner's code). The sealing and the probe are also compared, on generated
inputs, with :func:`reference_seal_state` / :func:`reference_open_state` (mrtr's format with
the clock as an argument) and :func:`reference_next_step` (the rules of ``Client._probe``).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from .. import jsonrpc, mrtr, versions
from ..context import Context
from ..jsonrpc import InvalidParams, JsonRpcError
from ..server import Server
from ..versions import (
    META_CLIENT_CAPABILITIES,
    META_CLIENT_INFO,
    META_LOG_LEVEL,
    META_PROTOCOL_VERSION,
)
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
    run_checks,
    seen,
)

#: The pieces of mcpkit that do what the exercises ask.
OFF_LIMITS = {"mcpkit.mrtr": {"StateSealer"}, "mcpkit.connection": {"Connection"},
              # A server's registry holds a StateSealer (Registry(..., state_secret=s).sealer).
              "mcpkit.registry": {"Registry"}, "mcpkit.server": {"Server"}}

MODERN = versions.LATEST_VERSION
_REAL = object()  # stands for "mcpkit's real connection" in the era and discover trials
_NO_KEY = object()  # a key a dict does not have, when two dicts are compared key by key


def _meta(version: Any = MODERN, capabilities: Any = None, **more: Any) -> dict[str, Any]:
    meta = {META_PROTOCOL_VERSION: version,
            META_CLIENT_CAPABILITIES: {} if capabilities is None else capabilities}
    meta.update(more)
    return meta


# --------------------------------------------------------------------------- part 1: the era


def _era_server() -> Any:
    server = Server("era-check", "1.0.0")

    @server.tool(read_only=True)
    def echo(text: str) -> str:
        """Say it back."""
        return text

    return server


def _real_era(method: str, params: dict[str, Any], initialized: bool) -> Any:
    """What mcpkit's own connection decides, read from its answer."""
    sent: list[dict[str, Any]] = []
    connection = _era_server().connect(sent.append)
    if initialized:
        connection.receive(jsonrpc.request(0, "initialize", {
            "protocolVersion": versions.LATEST_LEGACY_VERSION, "capabilities": {},
            "clientInfo": {"name": "check", "version": "1"}}))
        connection.receive(jsonrpc.notification("notifications/initialized"))
    sent.clear()
    connection.receive(jsonrpc.request(1, method, json.loads(json.dumps(params))))
    connection.close(0.5)
    answer = sent[0]
    if "method" in answer:  # subscriptions/listen acknowledged: a modern stream
        return "modern"
    if "error" in answer:
        return _error_seen(answer["error"]["code"], answer["error"].get("data"))
    return "modern" if "resultType" in answer["result"] else "legacy"


def _error_seen(code: Any, data: Any) -> dict[str, Any]:
    shown: dict[str, Any] = {"error": seen(code)}
    if code == jsonrpc.UNSUPPORTED_PROTOCOL_VERSION:
        shown["data"] = seen(data)
    return shown


def _learner_era(request_era: Callable, method: str, params: dict[str, Any],
                 initialized: bool) -> Any:
    try:
        value = request_era(method, json.loads(json.dumps(params)), initialized)
    except (NotImplementedError, _Stuck):
        raise
    except JsonRpcError as exc:
        return _error_seen(seen(getattr(exc, "code", None)), getattr(exc, "data", None))
    except Exception as exc:
        return Seen.of(exc, raised=True)
    return seen(value)


def _era_of(request_era: Any, method: str, params: dict[str, Any], initialized: bool) -> Any:
    if request_era is _REAL:
        return _real_era(method, params, initialized)
    return _learner_era(request_era, method, params, initialized)


_SUPPORTED = list(versions.SUPPORTED_VERSIONS)


def _unsupported(version: str) -> dict[str, Any]:
    return {"error": jsonrpc.UNSUPPORTED_PROTOCOL_VERSION,
            "data": {"supported": _SUPPORTED, "requested": version}}


_LEGACY_ONLY_HINT = (
    "step 6: ping, logging/setLevel, resources/subscribe, resources/unsubscribe and "
    "initialize are legacy-only: -32601 in the modern era",
    "paso 6: ping, logging/setLevel, resources/subscribe, resources/unsubscribe e initialize "
    "son solo heredados: -32601 en la era moderna")

_ERA_CASES: list[tuple[str, str, str, dict[str, Any], bool, Any, tuple[str, str]]] = [
    # (name en, name es, method, params, initialized, expected, hint en/es)
    ("a modern request", "una solicitud moderna", "tools/list", {"_meta": _meta()}, False,
     "modern", ("a request whose _meta names a supported modern version is modern",
                "una solicitud cuyo _meta nombra una versión moderna admitida es moderna")),
    ("after initialize, legacy", "tras initialize, heredada", "tools/list", {}, True, "legacy",
     ("a connection that completed initialize is legacy for its whole life",
      "una conexión que completó initialize es heredada toda su vida")),
    ("after initialize, _meta does not matter", "tras initialize, _meta no importa",
     "tools/list", {"_meta": _meta()}, True, "legacy",
     ("the handshake decided the era: a modern _meta on a legacy connection changes nothing",
      "el handshake decidió la era: un _meta moderno en una conexión heredada no cambia nada")),
    ("no handshake, no _meta", "sin handshake ni _meta", "tools/list", {}, False,
     {"error": -32602}, ("neither a handshake nor a version in _meta: malformed, -32602",
                         "ni handshake ni versión en _meta: mal formada, -32602")),
    ("ping before anything", "ping antes de nada", "ping", {}, False, "legacy",
     ("ping without _meta is the one request allowed before initialize",
      "ping sin _meta es la única solicitud permitida antes de initialize")),
    ("ping is legacy only", "ping solo existe en la era heredada", "ping", {"_meta": _meta()},
     False,
     {"error": -32601}, ("2026-07-28 has no ping (server/discover does its job): -32601",
                         "2026-07-28 no tiene ping (server/discover hace su trabajo): -32601")),
    ("server/discover after initialize", "server/discover tras initialize", "server/discover",
     {}, True, {"error": -32601},
     ("server/discover and subscriptions/listen exist only in the modern era: -32601",
      "server/discover y subscriptions/listen solo existen en la era moderna: -32601")),
    ("subscriptions/listen after initialize", "subscriptions/listen tras initialize",
     "subscriptions/listen", {"notifications": {}}, True, {"error": -32601},
     ("server/discover and subscriptions/listen exist only in the modern era: -32601",
      "server/discover y subscriptions/listen solo existen en la era moderna: -32601")),
    ("no client capabilities", "sin capacidades del cliente", "tools/list",
     {"_meta": {META_PROTOCOL_VERSION: MODERN}}, False, {"error": -32602},
     ("clientCapabilities is required in 2026-07-28 (an empty object if none)",
      "clientCapabilities es obligatorio en 2026-07-28 (un objeto vacío si no hay ninguna)")),
    ("a version from the future", "una versión del futuro", "tools/list",
     {"_meta": _meta("2027-01-01")}, False, _unsupported("2027-01-01"),
     ("-32022 with data {'supported': SUPPORTED_VERSIONS, 'requested': the version}",
      "-32022 con data {'supported': SUPPORTED_VERSIONS, 'requested': version}")),
    ("a legacy version in _meta", "una versión heredada en _meta", "tools/list",
     {"_meta": _meta("2025-11-25")}, False, _unsupported("2025-11-25"),
     ("in _meta only modern versions are supported: a legacy date is -32022 too",
      "en _meta solo se admiten versiones modernas: una fecha heredada también es -32022")),
    ("version before method", "versión antes que método", "logging/setLevel",
     {"level": "info", "_meta": _meta("2027-01-01")}, False, _unsupported("2027-01-01"),
     ("check the version before the method: -32022 comes first",
      "comprueba la versión antes que el método: -32022 va primero")),
    ("logging/setLevel is legacy only", "logging/setLevel solo existe en la era heredada",
     "logging/setLevel", {"level": "info", "_meta": _meta()}, False, {"error": -32601},
     ("the modern era sends the log level in _meta: logging/setLevel is -32601",
      "la era moderna envía el nivel de registro en _meta: logging/setLevel es -32601")),
    ("an unknown log level", "un nivel de registro desconocido", "tools/list",
     {"_meta": _meta(**{META_LOG_LEVEL: "loud"})}, False, {"error": -32602},
     ("the log level must be one of versions.LOG_LEVELS: -32602",
      "el nivel de registro debe ser uno de versions.LOG_LEVELS: -32602")),
    ("an empty version string", "una cadena de versión vacía", "tools/list",
     {"_meta": _meta("")}, False, _unsupported(""),
     ("\"\" is a version (a string), just not a supported one: -32022, not 'no version'",
      "\"\" es una versión (una cadena), solo que no admitida: -32022, no 'sin versión'")),
    ("an empty version string on ping", "una cadena de versión vacía en ping", "ping",
     {"_meta": _meta("")}, False, _unsupported(""),
     ("\"\" is a version: the request is modern, and its version is unsupported (-32022)",
      "\"\" es una versión: la solicitud es moderna, y su versión no se admite (-32022)")),
    ("no capabilities and a future version", "sin capacidades y una versión futura",
     "tools/list", {"_meta": {META_PROTOCOL_VERSION: "2027-01-01"}}, False, {"error": -32602},
     ("step 4 before step 5: a missing clientCapabilities is -32602 whatever the version",
      "el paso 4 antes que el 5: sin clientCapabilities es -32602 sea cual sea la versión")),
    ("an unknown log level after initialize", "un nivel de registro desconocido tras "
     "initialize", "tools/list", {"_meta": {META_LOG_LEVEL: "loud"}}, True, "legacy",
     ("step 1 checks only the types; the log level's value is checked in the modern era only "
      "(step 7)", "el paso 1 solo comprueba los tipos; el valor del nivel de registro solo se "
      "comprueba en la era moderna (paso 7)")),
    ("capabilities not an object", "capacidades que no son un objeto", "tools/list",
     {"_meta": _meta(capabilities=[])}, True, {"error": -32602},
     ("a _meta key of the wrong type is -32602 in either era, checked first",
      "una clave de _meta del tipo equivocado es -32602 en las dos eras, y se comprueba "
      "primero")),
    # Step 6 names five legacy-only methods: each one is sent, not only ping and setLevel.
    # (mcpkit's Connection answers initialize as the handshake before any era is decided, so
    # initialize is a hand-written case only, never a generated one.)
    ("initialize in the modern era", "initialize en la era moderna", "initialize",
     {"_meta": _meta()}, False, {"error": -32601}, _LEGACY_ONLY_HINT),
    ("resources/subscribe in the modern era", "resources/subscribe en la era moderna",
     "resources/subscribe", {"uri": "notes://1", "_meta": _meta()}, False, {"error": -32601},
     _LEGACY_ONLY_HINT),
    ("resources/unsubscribe in the modern era", "resources/unsubscribe en la era moderna",
     "resources/unsubscribe", {"uri": "notes://1", "_meta": _meta()}, False,
     {"error": -32601}, _LEGACY_ONLY_HINT),
    ("_meta: None, no handshake", "_meta: None, sin handshake", "ping", {"_meta": None},
     False, "legacy",
     ("_meta: None counts as absent (step 1): a ping with no version is legacy",
      "_meta: None cuenta como ausente (paso 1): un ping sin versión es heredado")),
    ("_meta: None after initialize", "_meta: None tras initialize", "tools/list",
     {"_meta": None}, True, "legacy",
     ("_meta: None counts as absent (step 1), not as a _meta of the wrong type",
      "_meta: None cuenta como ausente (paso 1), no como un _meta del tipo equivocado")),
    ("_meta: [] (empty, but not an object)", "_meta: [] (vacío, pero no un objeto)",
     "tools/list", {"_meta": []}, True, {"error": -32602},
     ("only None counts as no _meta: [], \"\" or 0 is a _meta of the wrong type, -32602 "
      "(test `is not None`, not truthiness)",
      "solo None cuenta como sin _meta: [], \"\" o 0 son un _meta del tipo equivocado, -32602 "
      "(comprueba `is not None`, no si el valor es verdadero o falso)")),
    ("an empty log level", "un nivel de registro vacío", "tools/list",
     {"_meta": _meta(**{META_LOG_LEVEL: ""})}, False, {"error": -32602},
     ("\"\" is a log level (a string), and not one of LOG_LEVELS: test `is not None`, not "
      "truthiness", "\"\" es un nivel de registro (una cadena), y no es uno de LOG_LEVELS: "
      "comprueba `is not None`, no si el valor es verdadero o falso")),
    ("a log level in capitals", "un nivel de registro en mayúsculas", "tools/list",
     {"_meta": _meta(**{META_LOG_LEVEL: "INFO"})}, False, {"error": -32602},
     ("log levels are compared as they are: \"INFO\" is not one of LOG_LEVELS",
      "los niveles de registro se comparan tal cual: \"INFO\" no es uno de LOG_LEVELS")),
]


_METHODS = ("tools/list", "tools/list", "ping", "server/discover", "logging/setLevel",
            "subscriptions/listen", "resources/subscribe", "resources/unsubscribe")
#: Methods the era server has no capability for: after initialize they are -32601 for that
#: reason, not for their era, so they are generated without a handshake only.
_NO_HANDSHAKE = ("resources/subscribe", "resources/unsubscribe")


def _era_request(rng: Gen) -> tuple[str, dict[str, Any], bool]:
    method = rng.choice(_METHODS)
    params: dict[str, Any] = {}
    if method == "logging/setLevel":
        params["level"] = "info"
    if method == "subscriptions/listen":
        params["notifications"] = {}
    if method in _NO_HANDSHAKE:
        params["uri"] = "notes://1"
    roll = rng.random()
    if roll < 0.12:
        pass
    elif roll < 0.18:
        params["_meta"] = rng.choice(["x", [], 3, None])
    else:
        meta: dict[str, Any] = {}
        version = rng.choice([MODERN, MODERN, MODERN, "2025-11-25", "2024-11-05",
                              "2027-03-01", "", 20260728, None, "absent"])
        if version != "absent":
            meta[META_PROTOCOL_VERSION] = version
        caps = rng.choice([{}, {}, {"elicitation": {}}, {"roots": {"listChanged": True}},
                           [], "none", None, "absent"])
        if caps != "absent":
            meta[META_CLIENT_CAPABILITIES] = caps
        if rng.random() < 0.35:
            meta[META_LOG_LEVEL] = rng.choice(["info", "debug", "emergency", "loud", "INFO",
                                               "Debug", "", 3, None])
        if rng.random() < 0.3:
            meta[META_CLIENT_INFO] = rng.choice([{"name": "c", "version": "1"}, "c", None])
        if rng.random() < 0.15:
            meta["com.example/trace"] = rng.text()
        params["_meta"] = meta
    return method, params, method not in _NO_HANDSHAKE and rng.random() < 0.3


@dataclass(frozen=True)
class EraCase:
    requests: tuple[tuple[str, str, bool], ...]  # method, params as JSON, initialized


def _era_case(rng: Gen) -> EraCase:
    return EraCase(tuple((m, json.dumps(p, ensure_ascii=False), i)
                         for m, p, i in (_era_request(rng) for _ in range(rng.randint(1, 4)))))


def _era_label(method: str, params: str, initialized: bool) -> str:
    handshake = _("after initialize", "tras initialize") if initialized else \
        _("no handshake", "sin handshake")
    return f"request_era({method!r}, {params}, {initialized})  [{handshake}]"


def _era_trial(request_era: Any, x: EraCase) -> list[Step]:
    return [Step(_era_label(m, p, i), _era_of(request_era, m, json.loads(p), i))
            for m, p, i in x.requests]


def _show_era(x: EraCase) -> str:
    return "; ".join(_era_label(*r) for r in x.requests)


def _shrink_era(x: EraCase) -> Iterator[EraCase]:
    for smaller in drop_each(list(x.requests)):
        if smaller:
            yield EraCase(tuple(smaller))
    # Then simpler params: each _meta key that is not the version, then the whole _meta.
    for n, (method, params, initialized) in enumerate(x.requests):
        for simpler in _simpler_params(json.loads(params)):
            request = (method, json.dumps(simpler, ensure_ascii=False), initialized)
            yield EraCase(x.requests[:n] + (request,) + x.requests[n + 1:])


def _simpler_params(params: dict[str, Any]) -> Iterator[dict[str, Any]]:
    meta = params.get("_meta")
    if isinstance(meta, dict):
        for key in meta:
            if key != META_PROTOCOL_VERSION:
                yield {**params, "_meta": {k: v for k, v in meta.items() if k != key}}
        if meta.get(META_CLIENT_CAPABILITIES) not in ({}, None):
            yield {**params, "_meta": {**meta, META_CLIENT_CAPABILITIES: {}}}
    if "_meta" in params:
        yield {k: v for k, v in params.items() if k != "_meta"}


def _era_fault(want: Any, have: Any) -> str | None:
    """What differs, when the code is right but the way it answers is not: an error returned
    instead of raised, or a -32022 whose data alone is wrong."""
    if isinstance(have, Seen) and not have.raised and have.type.endswith(
            ("Error", "InvalidParams", "MethodNotFound")):
        return _("raise the error (raise InvalidParams(...)), do not return it",
                 "lanza el error (raise InvalidParams(...)), no lo devuelvas")
    if not (isinstance(want, dict) and isinstance(have, dict) and "data" in want
            and have.get("error") == want.get("error")):
        return None
    data = have.get("data")
    if not isinstance(data, dict):
        return _("-32022 carries data = {'supported': [...], 'requested': version}",
                 "-32022 lleva data = {'supported': [...], 'requested': version}")
    if data.get("supported") != want["data"]["supported"]:
        return _("data['supported'] is list(SUPPORTED_VERSIONS) as it is: every version of both "
                 "eras, newest first",
                 "data['supported'] es list(SUPPORTED_VERSIONS) tal cual: todas las versiones "
                 "de las dos eras, la más reciente primero")
    if data.get("requested") != want["data"]["requested"]:
        return _("data['requested'] is the version the request sent, as it is",
                 "data['requested'] es la versión que envió la solicitud, tal cual")
    return _("data has exactly two keys, 'supported' and 'requested'",
             "data tiene exactamente dos claves, 'supported' y 'requested'")


def _era_case_hint(want: Any, hint: str) -> Callable[[Any], str]:
    """The hint of a hand-written case: what differs, if that can be told, else its rule."""
    return lambda have: _era_fault(want, have) or hint


def _era_hint(x: EraCase, expected: Step | None, got: Step | None) -> str | None:
    want = expected.seen if expected else None
    fault = _era_fault(want, got.seen if got else None)
    if fault:
        return fault
    if isinstance(want, dict) and want.get("error") == jsonrpc.UNSUPPORTED_PROTOCOL_VERSION:
        return _("an unsupported version: JsonRpcError(-32022, ..., {'supported': [...], "
                 "'requested': version})",
                 "una versión no admitida: JsonRpcError(-32022, ..., {'supported': [...], "
                 "'requested': version})")
    if want == {"error": -32602}:
        return _("-32602 (InvalidParams): _meta of the wrong shape, a missing version or "
                 "capabilities, or an unknown log level",
                 "-32602 (InvalidParams): un _meta con la forma equivocada, sin versión o sin "
                 "capacidades, o un nivel de registro desconocido")
    if want == {"error": -32601}:
        return _("-32601 (MethodNotFound): a method of the other era",
                 "-32601 (MethodNotFound): un método de la otra era")
    return None


def era_differential(request_era: Callable) -> CaseResult:
    return differential(
        _("the era of generated requests, against mcpkit's connection",
          "la era de solicitudes generadas, frente a la conexión de mcpkit"),
        key="lab07/era", generate=_era_case, trial=_era_trial, reference=_REAL,
        learner=request_era, show=_show_era, shrink=_shrink_era, hint=_era_hint, cases=60)


#: Requests sent to a real server process in each era (after initialize, and without).
_PROCESS_REQUESTS: list[tuple[str, dict[str, Any]]] = [
    ("tools/list", {"_meta": _meta()}),
    ("tools/list", {}),
    ("ping", {}),
    ("ping", {"_meta": _meta()}),
    ("server/discover", {"_meta": _meta()}),
    ("tools/list", {"_meta": _meta("2027-01-01")}),
    ("logging/setLevel", {"level": "info", "_meta": _meta()}),
    ("tools/list", {"_meta": _meta(**{META_LOG_LEVEL: "loud"})}),
]


def _process_outcomes(initialized: bool) -> list[Any]:
    """What a real ``python -m mcpkit serve`` process answers to _PROCESS_REQUESTS."""
    import subprocess
    import sys

    from .. import framing

    messages = []
    if initialized:
        messages += [jsonrpc.request(0, "initialize", {
            "protocolVersion": versions.LATEST_LEGACY_VERSION, "capabilities": {},
            "clientInfo": {"name": "check", "version": "1"}}),
            jsonrpc.notification("notifications/initialized")]
    messages += [jsonrpc.request(n, method, params)
                 for n, (method, params) in enumerate(_PROCESS_REQUESTS, 1)]
    done = subprocess.run(
        [sys.executable, "-m", "mcpkit", "serve", "mcpkit.examples.notes:server"],
        input=b"".join(framing.encode_ndjson(m) for m in messages), capture_output=True,
        timeout=30)
    answers = {m.get("id"): m for m in map(json.loads, done.stdout.splitlines())}
    outcomes = []
    for n in range(1, len(_PROCESS_REQUESTS) + 1):
        answer = answers.get(n, {})
        if "error" in answer:
            outcomes.append(_error_seen(answer["error"]["code"], answer["error"].get("data")))
        else:
            outcomes.append("modern" if "resultType" in answer.get("result", {}) else "legacy")
    return outcomes


def check_request_era(request_era: Callable) -> None:
    """Part 1: ``request_era(method, params, initialized)``."""
    results = []
    for initialized in (False, True):
        expected = _process_outcomes(initialized)
        results.append(case(
            _("agrees with a real server process, after initialize" if initialized else
              "agrees with a real server process, no handshake",
              "coincide con un proceso servidor real, tras initialize" if initialized else
              "coincide con un proceso servidor real, sin handshake"),
            lambda i=initialized: [_learner_era(request_era, m, p, i)
                                   for m, p in _PROCESS_REQUESTS],
            expected,
            given="python -m mcpkit serve mcpkit.examples.notes:server <- " + "; ".join(
                f"{m} {json.dumps(p)}" for m, p in _PROCESS_REQUESTS),
            hint=_("the same requests, answered by mcpkit's notes server in a subprocess",
                   "las mismas solicitudes, respondidas por el servidor de notas de mcpkit en "
                   "un subproceso")))
    for name_en, name_es, method, params, initialized, expected, (hint_en, hint_es) in _ERA_CASES:
        results.append(case(
            _(name_en, name_es),
            lambda m=method, p=params, i=initialized: _learner_era(request_era, m, p, i),
            expected, given=_era_label(method, json.dumps(params), initialized),
            hint=_era_case_hint(expected, _(hint_en, hint_es))))
    results.append(era_differential(request_era))
    run_checks(results)


# --------------------------------------------------------------------------- part 2: discover


@dataclass(frozen=True)
class DiscoverCase:
    name: str
    version: str
    title: str | None
    features: tuple[str, ...]
    instructions: str | None
    ttl_ms: int
    scope: str


def _discover_server(x: DiscoverCase) -> Any:
    server = Server(x.name, x.version, title=x.title, instructions=x.instructions,
                    cache_ttl_ms=x.ttl_ms, cache_scope=x.scope)
    if "tools" in x.features:
        server.tool(read_only=True)(_ping_tool)
    if "resources" in x.features:
        server.resource("demo://hello", name="hello")(lambda: "hello")
    if "prompts" in x.features:
        server.prompt()(_greet_prompt)
    return server


def _ping_tool() -> str:
    """Answer pong."""
    return "pong"


def _greet_prompt(name: str) -> str:
    """Greet someone."""
    return f"Say hello to {name}."


def _discover_trial(discover_result: Any, x: DiscoverCase) -> list[Step]:
    server = _discover_server(x)
    if discover_result is _REAL:
        sent: list[dict[str, Any]] = []
        server.connect(sent.append).receive(
            jsonrpc.request(1, "server/discover", {"_meta": _meta()}))
        value = sent[0].get("result", sent[0])
    else:
        value = _attempt_plain(lambda: discover_result(
            json.loads(json.dumps(server.info)), json.loads(json.dumps(server.capabilities())),
            x.instructions, x.ttl_ms, x.scope))
    label = (f"discover_result({server.info!r}, {server.capabilities()!r}, "
             f"{x.instructions!r}, {x.ttl_ms!r}, {x.scope!r})")
    return [Step(label, seen(json.loads(json.dumps(value))) if not isinstance(value, Seen)
                 else value)]


def _attempt_plain(thunk: Callable[[], Any]) -> Any:
    try:
        value = thunk()
        json.dumps(value)
    except (NotImplementedError, _Stuck):
        raise
    except Exception as exc:
        return Seen.of(exc, raised=True)
    return value


def _discover_case(rng: Gen) -> DiscoverCase:
    features = tuple(f for f in ("tools", "resources", "prompts") if rng.random() < 0.6)
    return DiscoverCase(
        rng.choice(["notes", "weather", "café"]), rng.choice(["1.0.0", "0.3.1"]),
        rng.choice([None, "Notes", "El tiempo"]), features,
        rng.choice([None, None, "", "  ", "Use notes_search first.",
                    "Pregunta antes de borrar."]),
        rng.choice([0, 0, 1000, 60_000]), rng.choice(["public", "private"]))


def _shrink_discover(x: DiscoverCase) -> Iterator[DiscoverCase]:
    if x.features:
        for smaller in drop_each(list(x.features)):
            yield DiscoverCase(**{**x.__dict__, "features": tuple(smaller)})
    if x.instructions is not None:
        yield DiscoverCase(**{**x.__dict__, "instructions": None})
    if x.title is not None:
        yield DiscoverCase(**{**x.__dict__, "title": None})


def _discover_hint(x: DiscoverCase, expected: Step | None, got: Step | None) -> str | None:
    return _key_differing(expected.seen if expected else None, got.seen if got else None)


def _first_key(want: Any, have: Any) -> str | None:
    if not isinstance(want, dict) or not isinstance(have, dict):
        return None
    return next((k for k in [*want, *have] if want.get(k, _NO_KEY) != have.get(k, _NO_KEY)), None)


def _key_differing(want: Any, have: Any) -> str | None:
    """The first key whose value differs, and both values: the expected and got lines are cut
    to a width, and the key that differs may be off-screen."""
    if not isinstance(want, dict) or not isinstance(have, dict):
        return None
    for key in ("supportedVersions", "capabilities", "instructions", "ttlMs", "cacheScope",
                "resultType", "_meta", *sorted(set(have) - set(want), key=str)):
        w, h = want.get(key, _NO_KEY), have.get(key, _NO_KEY)
        if w != h:
            return _("the first key that differs is {k!r}: expected {w}, got {h}",
                     "la primera clave que difiere es {k!r}: se esperaba {w}, se obtuvo {h}"
                     ).format(k=key, w=_short_value(w), h=_short_value(h))
    return None


def _short_value(value: Any) -> str:
    text = _("(absent)", "(ausente)") if value is _NO_KEY else repr(value)
    return text if len(text) <= 90 else text[:89] + "…"


def check_discover_result(discover_result: Callable) -> None:
    """Part 2: ``discover_result(info, capabilities, instructions, ttl_ms, cache_scope)``."""
    plain = DiscoverCase("notes", "1.0.0", None, ("tools",), None, 0, "public")
    told = DiscoverCase("notes", "1.0.0", "Notes", ("tools", "prompts"),
                        "Use notes_search first.", 60_000, "private")
    results = []
    empty = DiscoverCase("notes", "1.0.0", None, ("tools",), "", 0, "public")
    for name, x, hint in (
        (_("a server with tools, no instructions", "un servidor con herramientas, sin "
           "instrucciones"), plain,
         _("no instructions: leave the key out (not null)",
           "sin instrucciones: omite la clave (no null)")),
        (_("empty instructions", "instrucciones vacías"), empty,
         _("instructions \"\" say nothing: leave the key out, as for None",
           "unas instrucciones \"\" no dicen nada: omite la clave, como con None")),
        (_("instructions and caching hints", "instrucciones e indicaciones de caché"), told,
         _("ttlMs and cacheScope say how long, and for whom, a client may keep this result",
           "ttlMs y cacheScope dicen cuánto tiempo, y para quién, puede guardar un cliente "
           "este resultado")),
    ):
        expected = _discover_trial(_REAL, x)[0].seen
        # The case's rule when the instructions differ, else the key that does.
        results.append(case(name, lambda x=x: _discover_trial(discover_result, x)[0].seen,
                            expected, hint=lambda got, want=expected, rule=hint: rule if
                            _first_key(want, got) in (None, "instructions") else
                            _key_differing(want, got)))
    def versions_listed() -> Any:
        value = _discover_trial(discover_result, plain)[0].seen
        return value.get("supportedVersions") if isinstance(value, dict) else value

    results.append(case(
        _("newest version first", "la versión más reciente primero"), versions_listed, _SUPPORTED,
        hint=_("list(versions.SUPPORTED_VERSIONS): newest first, both eras",
               "list(versions.SUPPORTED_VERSIONS): la más reciente primero, de las dos "
               "eras")))
    results.append(differential(
        _("server/discover of generated servers, against mcpkit's connection",
          "server/discover de servidores generados, frente a la conexión de mcpkit"),
        key="lab07/discover", generate=_discover_case, trial=_discover_trial, reference=_REAL,
        learner=discover_result, show=lambda x: repr(x), shrink=_shrink_discover,
        hint=_discover_hint, cases=40))
    run_checks(results)


# --------------------------------------------------------------------------- part 3: state


def _b64(data: bytes) -> str:
    return mrtr._b64(data)


def reference_seal_state(secret: bytes, method: str, params: dict[str, Any],
                         payload: dict[str, Any], now: float, ttl_s: float = 900) -> str:
    """mcpkit.mrtr.StateSealer.seal, with the clock as an argument."""
    body = {"v": mrtr.STATE_VERSION, "f": mrtr.request_fingerprint(method, params),
            "exp": int(now + ttl_s), "p": payload}
    raw = json.dumps(body, separators=(",", ":"), sort_keys=True).encode()
    return _b64(raw) + "." + _b64(hmac.new(secret, raw, hashlib.sha256).digest())


def reference_open_state(secret: bytes, method: str, params: dict[str, Any], state: Any,
                         now: float) -> dict[str, Any]:
    """mcpkit.mrtr.StateSealer.open, with the clock as an argument."""
    if not isinstance(state, str) or state.count(".") != 1:
        raise InvalidParams("requestState is malformed")
    raw_text, mac_text = state.split(".")
    try:
        raw, mac = mrtr._unb64(raw_text), mrtr._unb64(mac_text)
    except ValueError:
        raise InvalidParams("requestState is malformed") from None
    if not hmac.compare_digest(mac, hmac.new(secret, raw, hashlib.sha256).digest()):
        raise InvalidParams("requestState failed its integrity check")
    body = json.loads(raw)
    if body.get("f") != mrtr.request_fingerprint(method, params):
        raise InvalidParams("requestState belongs to a different request")
    if body.get("exp", 0) < now:
        raise InvalidParams("requestState has expired")
    return body["p"]


_SECRET = b"lab07-secret"
_OTHER_SECRET = b"another-server"
_NOW = 1_800_000_000
_CALL = {"name": "book_table", "arguments": {"guests": 2}}
_PAYLOAD = {"answers": {"when": {"action": "accept", "content": {"time": "20:00"}}}}


def _refused(thunk: Callable[[], Any]) -> Any:
    """What opening a state did: its payload, or {"refused": code} for a JSON-RPC error."""
    try:
        value = thunk()
    except (NotImplementedError, _Stuck):
        raise
    except JsonRpcError as exc:
        return _refusal(seen(getattr(exc, "code", None)))
    except Exception as exc:
        return Seen.of(exc, raised=True)
    return seen(value)


def _refusal(code: Any) -> dict[str, Any]:
    """{"refused": code}, labelled in the report's language."""
    return {_("refused", "rechazado"): code}


def _tamper_body(state: Any, change: Callable[[dict[str, Any]], None]) -> Any:
    """The state with its body edited and its MAC kept (what a client could try)."""
    if not isinstance(state, str) or state.count(".") != 1:
        return state + "x" if isinstance(state, str) else state
    raw_text, mac_text = state.split(".")
    try:
        body = json.loads(mrtr._unb64(raw_text))
        change(body)
    except Exception:
        return "x" + state
    raw = json.dumps(body, separators=(",", ":"), sort_keys=True).encode()
    return _b64(raw) + "." + mac_text


def _set_answer(body: dict[str, Any]) -> None:
    body["p"] = {"answers": {"when": {"action": "accept", "content": {"time": "23:59"}}}}


def _later(body: dict[str, Any]) -> None:
    body["exp"] = body.get("exp", 0) + 10**6


def _exp_fault() -> str:
    return _("'exp' is int(now + ttl_s): a whole second, cut, not rounded",
             "'exp' es int(now + ttl_s): un segundo entero, truncado, no redondeado")


def _format_fault(state: Any, reference: str) -> str | None:
    """What makes a learner's sealed state differ from mcpkit's for the same inputs, in words
    (None when they are the same bytes): the text fixes the format byte for byte."""
    if state == reference:
        return None
    if not isinstance(state, str) or state.count(".") != 1:
        return _("the state is one string, b64(body) + '.' + b64(mac)",
                 "el estado es una cadena, b64(body) + '.' + b64(mac)")
    if "=" in state:
        return _("base64 without the '=' padding: use the setup cell's b64()",
                 "base64 sin el relleno '=': usa b64() de la celda de preparación")
    if "+" in state or "/" in state:
        return _("URL-safe base64 ('-' and '_', not '+' and '/'): use the setup cell's b64()",
                 "base64 apto para URL ('-' y '_', no '+' y '/'): usa b64() de la celda de "
                 "preparación")
    body_text, mac_text = state.split(".")
    want_text, want_mac = reference.split(".")
    if re.fullmatch(r"[0-9a-f]{64}", mac_text):
        return _("the MAC is b64 of the raw 32-byte digest, sign(secret, body), not its hex",
                 "el MAC es b64 de los 32 bytes en bruto de sign(secret, body), no su "
                 "representación hexadecimal")
    if body_text == want_text:
        return _("the MAC is b64(sign(secret, body)): HMAC-SHA256 of the body's bytes",
                 "el MAC es b64(sign(secret, body)): HMAC-SHA256 de los bytes del cuerpo")
    try:
        raw = mrtr._unb64(body_text)
        body = json.loads(raw)
    except ValueError:
        return _("the body is b64 of the JSON text's bytes",
                 "el cuerpo es b64 de los bytes del texto JSON")
    want = json.loads(mrtr._unb64(want_text))
    if not isinstance(body, dict) or set(body) != set(want):
        return _("the body has exactly the keys 'v' (STATE_VERSION), 'f', 'exp' and 'p'",
                 "el cuerpo tiene exactamente las claves 'v' (STATE_VERSION), 'f', 'exp' y 'p'")
    for key in ("v", "f", "exp", "p"):
        if body[key] != want[key] or type(body[key]) is not type(want[key]):
            return {"v": _("'v' is STATE_VERSION", "'v' es STATE_VERSION"),
                    "f": _("'f' is request_fingerprint(method, params)",
                           "'f' es request_fingerprint(method, params)"),
                    "exp": _exp_fault(),
                    "p": _("'p' is the payload, as given", "'p' es la carga útil, tal cual")}[key]
    if not raw.isascii():
        return _("json.dumps escapes non-ASCII characters (its default ensure_ascii=True): "
                 "keep it", "json.dumps escapa los caracteres no ASCII (ensure_ascii=True, "
                 "su valor por defecto): mantenlo")
    if raw != json.dumps(body, separators=(",", ":")).encode() and \
            raw != json.dumps(body, separators=(",", ":"), sort_keys=True).encode():
        return _("compact JSON: separators=(',', ':'), no spaces",
                 "JSON compacto: separators=(',', ':'), sin espacios")
    return _("sorted keys: json.dumps(body, separators=(',', ':'), sort_keys=True)",
             "claves ordenadas: json.dumps(body, separators=(',', ':'), sort_keys=True)")


def _real_server_state() -> tuple[dict[str, Any], str]:
    """A requestState issued by a real mcpkit Server for an elicitation, and its params."""
    server = Server("booking", "1.0.0", state_secret=_SECRET)

    @server.tool()
    def book_table(guests: int, ctx: Context) -> str:
        """Book a table, asking for the time."""
        answer = ctx.elicit("What time?", {"type": "object", "properties": {
            "time": {"type": "string"}}, "required": ["time"]}, key="when")
        return f"{guests} at {answer['content']['time']}"

    sent: list[dict[str, Any]] = []
    connection = server.connect(sent.append)
    params = {**_CALL, "_meta": _meta(capabilities={"elicitation": {}})}
    connection.receive(jsonrpc.request(1, "tools/call", params))
    # The call runs on a thread of its own: wait for its answer before closing, since
    # close() cancels a call still in flight (under load the thread may not have run yet).
    deadline = time.monotonic() + 30.0
    while not any(m.get("id") == 1 for m in sent) and time.monotonic() < deadline:
        time.sleep(0.005)
    connection.close(2.0)
    return params, next(m for m in sent if m.get("id") == 1)["result"]["requestState"]


def check_request_state(seal_state: Callable, open_state: Callable) -> None:
    """Part 3: ``seal_state(secret, method, params, payload, now, ttl_s=900)`` and
    ``open_state(secret, method, params, state, now)``."""
    def sealed(now: float = _NOW, ttl_s: float = 900, params: Any = None) -> Any:
        return seal_state(_SECRET, "tools/call", params or dict(_CALL), dict(_PAYLOAD), now,
                          ttl_s)

    def opened(state: Any, now: float = _NOW, params: Any = None, secret: bytes = _SECRET
               ) -> Any:
        return open_state(secret, "tools/call", params or dict(_CALL), state, now)

    # Inputs where each slip in the format shows in the bytes: keys out of order, text that is
    # not ASCII, and a fraction of a second (.75) that int() cuts and round() would not.
    odd_call = {"name": "réserver", "arguments": {"z": 1, "a": "café"}}
    odd_payload = {"state": {"b": 2, "a": "ñ"}, "answers": {}}
    exact = reference_seal_state(_SECRET, "tools/call", odd_call, odd_payload, _NOW + 0.75, 60)
    default = reference_seal_state(_SECRET, "tools/call", _CALL, _PAYLOAD, _NOW)
    # When the learner's state is not mcpkit's, a check that expects it to open says so.
    try:
        fault = _format_fault(attempt_value(lambda: sealed()), reference_seal_state(
            _SECRET, "tools/call", _CALL, _PAYLOAD, _NOW, 900))
    except (NotImplementedError, _Stuck):  # not written yet, or stuck: the cases say so
        fault = None

    def or_format(hint: str) -> Callable[[Any], str]:
        return lambda got: _("first make the state mcpkit's: {f}",
                             "primero haz que el estado tenga el formato de mcpkit: {f}"
                             ).format(f=fault) if fault else hint

    other_meta = {**_CALL, "_meta": _meta(), "inputResponses": {"x": {}}, "requestState": "s"}
    other_args = {"name": "book_table", "arguments": {"guests": 9}}
    refusal = _("refused with InvalidParams (-32602)", "rechazado con InvalidParams (-32602)")
    refused = _refusal(jsonrpc.INVALID_PARAMS)
    results = [
        case(_("seal, then open: the payload", "sellar y abrir: la carga útil"),
             lambda: _refused(lambda: opened(sealed())), _PAYLOAD,
             hint=or_format(_("open_state returns the payload that seal_state sealed",
                              "open_state devuelve la carga útil que selló seal_state"))),
        case(_("mcpkit's format: a StateSealer with the secret opens it",
               "el formato de mcpkit: un StateSealer con el secreto lo abre"),
             lambda: _refused(lambda: mrtr.StateSealer(_SECRET).open(
                 mrtr.request_fingerprint("tools/call", _CALL),
                 seal_state(_SECRET, "tools/call", dict(_CALL), dict(_PAYLOAD), time.time()))),
             _PAYLOAD,
             hint=or_format(_(
                 "b64(body) + '.' + b64(HMAC-SHA256(secret, body)); body = compact JSON, "
                 "sorted keys, {'v': 1, 'f': fingerprint, 'exp': int(now + ttl_s), "
                 "'p': payload}",
                 "b64(body) + '.' + b64(HMAC-SHA256(secret, body)); body = JSON compacto, "
                 "claves ordenadas, {'v': 1, 'f': fingerprint, 'exp': int(now + ttl_s), "
                 "'p': payload}"))),
        case(_("mcpkit's format, byte for byte", "el formato de mcpkit, byte a byte"),
             lambda: seal_state(_SECRET, "tools/call", json.loads(json.dumps(odd_call)),
                                json.loads(json.dumps(odd_payload)), _NOW + 0.75, 60),
             exact, given=f"seal_state({_SECRET!r}, 'tools/call', {odd_call!r}, "
                          f"{odd_payload!r}, {_NOW + 0.75}, 60)",
             hint=lambda got: _format_fault(got, exact)),
        case(_("ttl_s defaults to 900", "ttl_s vale 900 por defecto"),
             lambda: seal_state(_SECRET, "tools/call", dict(_CALL), dict(_PAYLOAD), _NOW),
             default, given=f"seal_state({_SECRET!r}, 'tools/call', {_CALL!r}, {_PAYLOAD!r}, "
                            f"{_NOW})",
             hint=lambda got: _("the signature is seal_state(..., now, ttl_s=900): 15 minutes "
                                "when no ttl_s is given", "la firma es seal_state(..., now, "
                                "ttl_s=900): 15 minutos cuando no se pasa ttl_s")
             if _format_fault(got, default) == _exp_fault() else _format_fault(got, default)),
        case(_("a state from a real mcpkit server opens",
               "se abre un estado emitido por un servidor mcpkit real"),
             lambda: _refused(lambda: sorted(open_state(
                 _SECRET, "tools/call", *_real_server_state(), time.time()))),
             ["answers", "asked", "state"],
             hint=_("another replica with the same secret must open what any of them sealed",
                    "otra réplica con el mismo secreto debe abrir lo que selló cualquiera")),
        case(_("_meta and the round-trip fields are not bound",
               "_meta y los campos de cada ronda (`inputResponses`, `requestState`) no "
               "quedan ligados"),
             lambda: _refused(lambda: opened(sealed(), params=other_meta)), _PAYLOAD,
             hint=or_format(_("use mrtr.request_fingerprint: _meta, inputResponses and "
                              "requestState change between rounds",
                              "usa mrtr.request_fingerprint: _meta, inputResponses y "
                              "requestState cambian entre rondas"))),
        case(_("tampered answer", "respuesta manipulada"),
             lambda: _refused(lambda: opened(_tamper_body(sealed(), _set_answer))), refused,
             given=refusal,
             hint=_("recompute the HMAC over the body and compare with hmac.compare_digest",
                    "recalcula el HMAC sobre el cuerpo y compáralo con hmac.compare_digest")),
        case(_("the MACs are compared with hmac.compare_digest",
               "los MAC se comparan con hmac.compare_digest"),
             lambda: _calls_compare_digest(lambda: _refused(
                 lambda: opened(_tamper_body(sealed(), _set_answer)))), True,
             given=_("open_state of a tampered state: was hmac.compare_digest called?",
                     "open_state de un estado manipulado: ¿se llamó a hmac.compare_digest?"),
             hint=_("a plain == (or !=) stops at the first byte that differs: its timing tells "
                    "an attacker how much of a forged MAC was right",
                    "una comparación simple con == (o !=) se detiene en el primer byte "
                    "distinto: el tiempo que tarda le revela a un atacante cuánto de un MAC "
                    "falsificado era correcto")),
        case(_("tampered expiry", "caducidad manipulada"),
             lambda: _refused(lambda: opened(_tamper_body(sealed(), _later))), refused,
             given=refusal,
             hint=_("the expiry is inside the signed body: changing it breaks the MAC",
                    "la caducidad va dentro del cuerpo firmado: cambiarla rompe el MAC")),
        case(_("sealed by another server", "sellado por otro servidor"),
             lambda: _refused(lambda: opened(sealed(), secret=_OTHER_SECRET)), refused,
             given=refusal, hint=_("a MAC made with another secret does not verify",
                                   "un MAC hecho con otro secreto no se verifica")),
        case(_("replayed with other params", "reenviado con otros params"),
             lambda: _refused(lambda: opened(sealed(), params=other_args)), refused,
             given=refusal,
             hint=_("bind the state to the request: compare the fingerprint of these params",
                    "liga el estado a la solicitud: compara la huella de estos params")),
        case(_("expired", "caducado"),
             lambda: _refused(lambda: opened(sealed(ttl_s=60), now=_NOW + 61)), refused,
             given=refusal, hint=_("exp < now: expired", "exp < now: caducado")),
        case(_("now with a fraction of a second", "now con una fracción de segundo"),
             lambda: _refused(lambda: reference_open_state(
                 _SECRET, "tools/call", dict(_CALL), sealed(now=_NOW + 0.5, ttl_s=60),
                 _NOW + 60.25)), refused, given=_(
                 "seal_state(..., now={n}, ttl_s=60), opened by mcpkit at now={m}",
                 "seal_state(..., now={n}, ttl_s=60), abierto por mcpkit en now={m}").format(
                 n=_NOW + 0.5, m=_NOW + 60.25),
             hint=_("'exp' is int(now + ttl_s), a whole second: here the state has expired",
                    "'exp' es int(now + ttl_s), un segundo entero: aquí el estado ha "
                    "caducado")),
        case(_("the last valid second", "el último segundo válido"),
             lambda: _refused(lambda: opened(sealed(ttl_s=60), now=_NOW + 60)), _PAYLOAD,
             hint=or_format(_("expired means exp < now, not exp <= now",
                              "caducado significa exp < now, no exp <= now"))),
        # A valid state and one more part: split(".", 1) or rsplit(".", 1) would still find
        # the two valid parts, at one end or the other (the lenient base64 decoder skips the
        # '.' and the '!'s, and four characters more keep the padding right).
        case(_("a valid state with one more '.'", "un estado válido con un '.' de más"),
             lambda: [_refused(lambda: opened(sealed() + ".!!!")),
                      _refused(lambda: opened("!!!." + sealed()))], [refused, refused],
             given="open_state(state + '.!!!'), open_state('!!!.' + state)",
             hint=_("exactly two parts: a state with another '.' is malformed, even when two "
                    "of its parts verify", "exactamente dos partes: un estado con otro '.' "
                    "está mal formado, aunque dos de sus partes se verifiquen")),
        # Five base64 characters cannot be decoded (one more than a multiple of 4).
        case(_("malformed: not base64", "mal formado: no es base64"),
             lambda: _refused(lambda: opened("abcde.fghij")), refused,
             given="open_state(..., 'abcde.fghij', ...)",
             hint=lambda got: _(
                 "unb64 raises binascii.Error, a ValueError: catch it, and raise InvalidParams",
                 "unb64 lanza binascii.Error, un ValueError: captúralo y lanza InvalidParams")
             if isinstance(got, Seen) else _(
                 "anything that does not parse is InvalidParams, not a crash",
                 "todo lo que no se puede analizar es InvalidParams, no una caída")),
    ]
    for junk in ("garbage", "a.b.c", "!!.??", 42, None):
        results.append(case(
            _("malformed: {j!r}", "mal formado: {j!r}").format(j=junk),
            lambda junk=junk: _refused(lambda: opened(junk)), refused, given=refusal,
            hint=_("anything that does not parse is InvalidParams, not a crash",
                   "todo lo que no se puede analizar es InvalidParams, no una caída")))
    results.append(differential(
        _("generated states, against mcpkit's sealing", "estados generados, frente al sellado "
          "de mcpkit"),
        key="lab07/state", generate=_state_case, trial=_state_trial,
        reference=(reference_seal_state, reference_open_state), learner=(seal_state, open_state),
        show=_show_state, shrink=_shrink_state, hint=_state_hint, cases=40))
    run_checks(results)


def _calls_compare_digest(action: Callable[[], Any]) -> bool:
    """Whether ``action`` calls hmac.compare_digest, however the code imported it (the
    interpreter reports every call of a built-in function to a profiler)."""
    called = False
    target = hmac.compare_digest

    def watch(frame: Any, event: str, arg: Any) -> None:
        nonlocal called
        if event == "c_call" and arg is target:
            called = True

    before = sys.getprofile()
    sys.setprofile(watch)
    try:
        action()
    finally:
        sys.setprofile(before)
    return called


@dataclass(frozen=True)
class StateCase:
    secret: bytes
    method: str
    params: str  # JSON
    payload: str  # JSON
    now: int
    ttl_s: int
    opens: tuple[tuple[str, str, int], ...]  # (what to open, params JSON, seconds later)


_VARIANTS = ("same", "same", "tampered", "other-secret", "truncated", "swapped", "extra-dot",
             "not-base64")


def _state_case(rng: Gen) -> StateCase:
    method = rng.choice(["tools/call", "prompts/get", "resources/read"])
    if method == "resources/read":
        params: dict[str, Any] = {"uri": rng.choice(["notes://1", "notes://café"])}
    else:
        params = {"name": rng.choice(["book", "review_note"]), "arguments": rng.json_object()}
    payload = {"answers": rng.json_object(), "state": rng.json_object()}
    ttl = rng.choice([1, 60, 900])
    opens = []
    for _i in range(rng.randint(1, 4)):
        variant = rng.choice(_VARIANTS)
        later = rng.choice([0, 1, ttl - 1, ttl, ttl + 1, 10**6])
        other = dict(params)
        roll = rng.random()
        if roll < 0.2:
            other["_meta"] = _meta(capabilities={"elicitation": {}})
        elif roll < 0.35:
            other["arguments" if "arguments" in other else "uri"] = rng.json_object()
        elif roll < 0.45:
            other["inputResponses"] = {"k": {"action": "accept"}}
        opens.append((variant, json.dumps(other, ensure_ascii=False), later))
    return StateCase(rng.choice([b"s", b"k" * 32, "clé".encode()]), method,
                     json.dumps(params, ensure_ascii=False),
                     json.dumps(payload, ensure_ascii=False),
                     _NOW + rng.randint(0, 999) + rng.choice([0, 0, 0.5, 0.999]), ttl,
                     tuple(opens))


def _variant(state: Any, kind: str, x: StateCase, impl_seal: Callable) -> Any:
    if kind == "tampered":
        return _tamper_body(state, lambda b: b.__setitem__("p", {"answers": {"forged": {}}}))
    if kind == "other-secret":
        return impl_seal(x.secret + b"!", x.method, json.loads(x.params),
                         json.loads(x.payload), x.now, x.ttl_s)
    if kind == "truncated":
        return state[:-3] if isinstance(state, str) else state
    if kind == "swapped" and isinstance(state, str) and state.count(".") == 1:
        body, mac = state.split(".")
        return mac + "." + body
    if kind == "extra-dot" and isinstance(state, str):
        return state + ".!!!" if len(state) % 2 else "!!!." + state
    if kind == "not-base64" and isinstance(state, str):
        return "abcde." + state.rpartition(".")[2]
    return state


def _state_trial(impl: Any, x: StateCase) -> list[Step]:
    seal, open_ = impl
    steps: list[Step] = []
    state = attempt_value(lambda: seal(x.secret, x.method, json.loads(x.params),
                                       json.loads(x.payload), x.now, x.ttl_s))
    if isinstance(state, Seen):
        return [Step("seal_state(...)", state)]
    # The text fixes the format byte for byte: the state itself is compared first.
    steps.append(Step("seal_state(...)", seen(state)))
    # Every sealer's state must open under mcpkit's own rules (another replica).
    steps.append(Step(_("seal_state(...), opened by mcpkit", "seal_state(...), abierto por "
                        "mcpkit"),
                      _refused(lambda: reference_open_state(x.secret, x.method,
                                                            json.loads(x.params), state,
                                                            x.now))))
    for kind, params, later in x.opens:
        variant = _variant(state, kind, x, seal)
        steps.append(Step(f"open_state({kind} state, {params}, now + {later})",
                          _refused(lambda v=variant, p=params, t=later: open_(
                              x.secret, x.method, json.loads(p), v, x.now + t))))
    return steps


def attempt_value(thunk: Callable[[], Any]) -> Any:
    try:
        return thunk()
    except (NotImplementedError, _Stuck):
        raise
    except Exception as exc:
        return Seen.of(exc, raised=True)


def _show_state(x: StateCase) -> str:
    return (f"secret={x.secret!r} {x.method} params={x.params} payload={x.payload} "
            f"now={x.now} ttl_s={x.ttl_s}")


def _shrink_state(x: StateCase) -> Iterator[StateCase]:
    for smaller in drop_each(list(x.opens)):
        if smaller:
            yield StateCase(**{**x.__dict__, "opens": tuple(smaller)})
    if x.payload != '{"answers": {}, "state": {}}':
        yield StateCase(**{**x.__dict__, "payload": '{"answers": {}, "state": {}}'})


def _state_hint(x: StateCase, expected: Step | None, got: Step | None) -> str | None:
    label = (expected or got).label if (expected or got) else ""
    if label == "seal_state(...)" and expected is not None and got is not None:
        return _format_fault(got.seen, expected.seen)
    if "mcpkit" in label:
        return _("mcpkit could not open your state: check the format (b64url without '=', "
                 "compact sorted JSON, HMAC-SHA256 over the body bytes)",
                 "mcpkit no pudo abrir tu estado: revisa el formato (b64url sin '=', JSON "
                 "compacto y ordenado, HMAC-SHA256 sobre los bytes del cuerpo)")
    refused = _refusal(jsonrpc.INVALID_PARAMS)
    if "now +" in label and expected is not None and expected.seen != refused:
        return _("this one must open: same request (only _meta or round-trip fields differ), "
                 "not yet expired", "este debe abrirse: la misma solicitud (solo difieren "
                 "_meta o los campos propios de cada ronda, inputResponses y "
                 "requestState) y aún sin caducar")
    if expected is not None and expected.seen == refused:
        return _("this one must be refused with InvalidParams (-32602)",
                 "este debe rechazarse con InvalidParams (-32602)")
    return None


# --------------------------------------------------------------------------- part 4: the probe


def _supported(data: Any) -> list[str]:
    listed = data.get("supported") if isinstance(data, dict) else None
    return [v for v in listed if isinstance(v, str)] if isinstance(listed, list) else []


def reference_next_step(sent: str, reply: dict[str, Any], attempt: int) -> tuple[str, Any]:
    """The rules of ``mcpkit.client.Client._probe``, over plain values."""
    modern = list(versions.MODERN_VERSIONS[::-1])
    if "timeout" in reply:
        return ("initialize", None)
    if "http_status" in reply:
        return ("initialize", None) if reply["http_status"] in (400, 404, 405) else ("fail", None)
    if "error" in reply:
        error = reply["error"]
        code = error.get("code")
        if code == jsonrpc.UNSUPPORTED_PROTOCOL_VERSION:
            supported = _supported(error.get("data"))
            mutual = [v for v in modern if v in supported]
            if mutual and attempt == 0:
                return ("retry", mutual[0])
            if any(v in versions.LEGACY_VERSIONS for v in supported):
                return ("initialize", None)
            return ("fail", None)
        if code in (jsonrpc.HEADER_MISMATCH, jsonrpc.MISSING_REQUIRED_CLIENT_CAPABILITY):
            return ("modern", sent)
        return ("initialize", None)
    supported = reply["result"].get("supportedVersions")
    if not isinstance(supported, list):
        return ("initialize", None)
    if sent in supported:
        return ("modern", sent)
    mutual = [v for v in modern if v in supported]
    if mutual:
        return ("modern", mutual[0])
    if any(v in versions.LEGACY_VERSIONS for v in supported):
        return ("initialize", None)
    return ("fail", None)


_ALL = list(versions.SUPPORTED_VERSIONS)
_LEGACY_ONLY = list(versions.LEGACY_VERSIONS[::-1])
_PROBE_CASES = [
    # (en, es, reply, attempt, expected, hint en, hint es)
    ("a DiscoverResult", "un DiscoverResult", {"result": {"supportedVersions": _ALL}}, 0,
     ("modern", MODERN), "a DiscoverResult listing our version: modern, that version",
     "un DiscoverResult que lista nuestra versión: moderna, esa versión"),
    ("Method not found", "Method not found",
     {"error": {"code": -32601, "message": "Method not found"}}, 0, ("initialize", None),
     "a legacy server does not know server/discover: fall back to initialize",
     "un servidor heredado no conoce server/discover: recurre a initialize (el handshake "
     "heredado)"),
    ("silence", "silencio", {"timeout": True}, 0, ("initialize", None),
     "no answer before the probe's timeout: a legacy server that waits for initialize",
     "ninguna respuesta antes de que se agote el tiempo de espera del sondeo: un servidor "
     "heredado que espera initialize"),
    ("-32022 listing ours", "-32022 que lista la nuestra",
     {"error": {"code": -32022, "message": "Unsupported", "data": {"supported": _ALL}}}, 0,
     ("retry", MODERN), "-32022 with a modern version we share: retry once with it",
     "-32022 con una versión moderna en común: reintenta una vez con ella"),
    ("-32022 again", "-32022 otra vez",
     {"error": {"code": -32022, "message": "Unsupported", "data": {"supported": _ALL}}}, 1,
     ("initialize", None), "only one retry; then legacy if the server lists a legacy version",
     "un solo reintento; después, heredada si el servidor lista una versión heredada"),
    ("-32022, legacy versions only", "-32022, solo versiones heredadas",
     {"error": {"code": -32022, "message": "Unsupported", "data": {"supported": _LEGACY_ONLY}}},
     0, ("initialize", None), "no modern version in common, but legacy ones: initialize",
     "ninguna versión moderna en común, pero sí heredadas: initialize"),
    ("-32022, nothing in common", "-32022, nada en común",
     {"error": {"code": -32022, "message": "Unsupported", "data": {"supported": ["2099-01-01"]}}},
     0, ("fail", None), "no version in common at all: give up (a ProtocolError)",
     "ninguna versión en común: abandona (un ProtocolError)"),
    ("HTTP 404", "HTTP 404", {"http_status": 404}, 0, ("initialize", None),
     "an HTTP 400, 404 or 405 without a JSON-RPC error: a legacy server",
     "un HTTP 400, 404 o 405 sin error JSON-RPC: un servidor heredado"),
    ("HTTP 401", "HTTP 401", {"http_status": 401}, 0, ("fail", None),
     "401 and 403 need credentials in either era: no fallback",
     "401 y 403 indican un problema de credenciales, en las dos eras: no se recurre a la era "
     "heredada"),
    ("missing client capability", "falta una capacidad del cliente",
     {"error": {"code": -32021, "message": "Missing", "data": {}}}, 0, ("modern", MODERN),
     "-32021 (or -32020) comes from a modern server: stay modern",
     "-32021 (o -32020) viene de un servidor moderno: sigue en la moderna"),
    ("-32022 whose data is null", "-32022 con data null",
     {"error": {"code": -32022, "message": "Unsupported", "data": None}}, 0,
     ("fail", None), "data missing, null or not an object: no versions listed, so fail",
     "data ausente, null o que no es un objeto: no lista versiones, así que fail"),
    ("-32022 whose data is a list", "-32022 con data que es una lista",
     {"error": {"code": -32022, "message": "Unsupported", "data": [MODERN]}}, 0,
     ("fail", None), "data missing, null or not an object: no versions listed, so fail",
     "data ausente, null o que no es un objeto: no lista versiones, así que fail"),
    ("not a DiscoverResult", "no es un DiscoverResult", {"result": {}}, 0,
     ("initialize", None), "a result without supportedVersions is not a DiscoverResult: legacy",
     "un resultado sin supportedVersions no es un DiscoverResult: heredada"),
    # A string holds our version as a substring: `sent in supported` must not see it.
    ("supportedVersions is a string", "supportedVersions es una cadena",
     {"result": {"supportedVersions": MODERN}}, 0, ("initialize", None),
     "a supportedVersions that is not a list is no DiscoverResult, even a string naming ours",
     "un supportedVersions que no es una lista no es un DiscoverResult, aunque sea una cadena "
     "que nombre nuestra versión"),
    ("-32022 whose supported is a string", "-32022 con supported que es una cadena",
     {"error": {"code": -32022, "message": "Unsupported", "data": {"supported": MODERN}}}, 0,
     ("fail", None), "supported must be a list: a string, even one naming our version, lists "
     "nothing", "supported debe ser una lista: una cadena, aunque nombre nuestra versión, no "
     "lista nada"),
    ("HTTP 429", "HTTP 429", {"http_status": 429}, 0, ("fail", None),
     "only 400, 404 and 405 mean a legacy server; any other status (409, 429, 502...) is fail",
     "solo 400, 404 y 405 indican un servidor heredado; cualquier otro código (409, 429, "
     "502...) es fail"),
    ("-32022, an older legacy version", "-32022, una versión heredada más antigua",
     {"error": {"code": -32022, "message": "Unsupported", "data": {"supported": ["2025-06-18"]}}},
     0, ("initialize", None), "every legacy version counts (LEGACY_VERSIONS), not only the "
     "latest", "cuenta cualquier versión heredada (LEGACY_VERSIONS), no solo la más reciente"),
    ("-32022, an unknown older date", "-32022, una fecha antigua desconocida",
     {"error": {"code": -32022, "message": "Unsupported", "data": {"supported": ["2024-10-07"]}}},
     0, ("fail", None), "a legacy version is one this client knows (LEGACY_VERSIONS): an unknown "
     "older date is not", "una versión heredada es una que este cliente conoce "
     "(LEGACY_VERSIONS): una fecha antigua desconocida no lo es"),
]


def _probe_reply(rng: Gen) -> dict[str, Any]:
    lists = [_ALL, _LEGACY_ONLY, [MODERN], ["2099-01-01"], [], [MODERN, 5], "x", MODERN,
             ["2099-01-01", *_ALL], _ALL[::-1], [_NEWER, MODERN],
             [rng.choice(versions.LEGACY_VERSIONS)], ["2024-10-07"], ["2023-01-01", "2099-01-01"]]
    roll = rng.random()
    if roll < 0.1:
        return {"timeout": True}
    if roll < 0.25:
        return {"http_status": rng.choice([400, 401, 403, 404, 405, 500, 402, 406, 409, 422,
                                           429, 502])}
    if roll < 0.6:
        code = rng.choice([-32022, -32022, -32601, -32602, -32603, -32021, -32020, -32000])
        error: dict[str, Any] = {"code": code, "message": "x"}
        if rng.random() < 0.8:
            error["data"] = rng.choice([{"supported": rng.choice(lists)}, {}, None, "x", [],
                                        {"supported": rng.choice(lists), "requested": MODERN}])
        return {"error": error}
    result: dict[str, Any] = {"capabilities": {}}
    if rng.random() < 0.85:
        result["supportedVersions"] = rng.choice(lists)
    return {"result": result}


@dataclass(frozen=True)
class ProbeCase:
    rounds: tuple[tuple[str, int], ...]  # reply JSON, attempt
    sent: str = MODERN  # the version the probe carried (a newer client may send a later one)


def _probe_case(rng: Gen) -> ProbeCase:
    return ProbeCase(tuple((json.dumps(_probe_reply(rng)), rng.choice([0, 0, 1]))
                           for _i in range(rng.randint(1, 4))),
                     rng.choice([MODERN, MODERN, _NEWER]))


def _probe_trial(next_step: Callable, x: ProbeCase) -> list[Step]:
    steps = []
    for reply, attempt_no in x.rounds:
        outcome = _attempt_tuple(lambda r=reply, a=attempt_no: next_step(x.sent, json.loads(r),
                                                                          a))
        steps.append(Step(f"next_step({x.sent!r}, {reply}, {attempt_no})", outcome))
    return steps


#: A version a newer client may speak and probe with (not one of MODERN_VERSIONS).
_NEWER = "2027-03-01"


#: A version newer still, that no server in the two-modern-versions cases lists.
_LATER = "2028-01-01"


def _two_modern(next_step: Callable, modern: list[str], thunk: Callable[[], Any]) -> Any:
    """``thunk()`` while MODERN_VERSIONS (and SUPPORTED_VERSIONS) hold the modern versions
    ``modern`` (newest first): in mcpkit.versions and in the notebook's own names, the ones
    the setup cell imports. The text says so; everything is put back afterwards."""
    newer = {"MODERN_VERSIONS": tuple(modern[::-1]),
             "SUPPORTED_VERSIONS": tuple(modern) + versions.LEGACY_VERSIONS[::-1]}
    spaces = [vars(versions)]
    names = getattr(next_step, "__globals__", None)
    if isinstance(names, dict) and names is not vars(versions):
        spaces.append(names)
    saved = [{k: space[k] for k in newer if k in space} for space in spaces]
    for space, old in zip(spaces, saved, strict=True):
        space.update({k: newer[k] for k in old})
    try:
        return thunk()
    finally:
        for space, old in zip(spaces, saved, strict=True):
            space.update(old)


def _attempt_tuple(thunk: Callable[[], Any]) -> Any:
    try:
        value = thunk()
    except (NotImplementedError, _Stuck):
        raise
    except Exception as exc:
        return Seen.of(exc, raised=True)
    value = seen(value)
    return list(value) if isinstance(value, list) else value


def check_next_step(next_step: Callable) -> None:
    """Part 4: ``next_step(sent, reply, attempt)``, the client's probe."""
    results = [
        case(_(en, es), lambda r=reply, a=attempt_no: _attempt_tuple(
            lambda: next_step(MODERN, json.loads(json.dumps(r)), a)), list(expected),
             given=f"next_step({MODERN!r}, {json.dumps(reply)}, {attempt_no})",
             hint=_(hint_en, hint_es))
        for en, es, reply, attempt_no, expected, hint_en, hint_es in _PROBE_CASES
    ]
    newer = {"result": {"supportedVersions": [_NEWER, *_ALL]}}
    results.append(case(
        _("a DiscoverResult listing the version we sent", "un DiscoverResult que lista la "
          "versión que enviamos"),
        lambda: _attempt_tuple(lambda: next_step(_NEWER, json.loads(json.dumps(newer)), 0)),
        ["modern", _NEWER], given=f"next_step({_NEWER!r}, {json.dumps(newer)}, 0)",
        hint=_("sent is in supportedVersions: ('modern', sent), whatever MODERN_VERSIONS holds",
               "sent está en supportedVersions: ('modern', sent), tenga lo que tenga "
               "MODERN_VERSIONS")))
    # mcpkit knows one modern version: to tell "the newest" from "the first listed", the
    # learner's function runs once more with two (see _two_modern).
    both = [_NEWER, MODERN]
    for en, es, reply, want in (
            ("two modern versions: a DiscoverResult", "dos versiones modernas: un "
             "DiscoverResult", {"result": {"supportedVersions": [MODERN, _NEWER]}},
             ["modern", _NEWER]),
            ("two modern versions: -32022", "dos versiones modernas: -32022",
             {"error": {"code": -32022, "message": "Unsupported",
                        "data": {"supported": [MODERN, _NEWER]}}}, ["retry", _NEWER])):
        results.append(case(
            _(en, es), lambda r=reply: _two_modern(next_step, both, lambda: _attempt_tuple(
                lambda: next_step(_LATER, json.loads(json.dumps(r)), 0))), want,
            given=_("MODERN_VERSIONS = {m}: next_step({s!r}, {r}, 0)",
                    "MODERN_VERSIONS = {m}: next_step({s!r}, {r}, 0)").format(
                m=tuple(both[::-1]), s=_LATER, r=json.dumps(reply)),
            hint=_("the newest of MODERN_VERSIONS that the server lists, whatever the server's "
                   "order", "la más reciente de MODERN_VERSIONS que lista el servidor, sea cual "
                   "sea el orden del servidor")))
    results.append(differential(
        _("generated replies, against mcpkit's client rules",
          "respuestas generadas, frente a las reglas del cliente de mcpkit"),
        key="lab07/probe", generate=_probe_case, trial=_probe_trial,
        reference=reference_next_step, learner=next_step,
        show=lambda x: f"sent={x.sent!r}: " + "; ".join(f"{r} (attempt {a})"
                                                       for r, a in x.rounds),
        shrink=lambda x: (ProbeCase(tuple(s), x.sent) for s in drop_each(list(x.rounds))
                          if s),
        cases=150))
    run_checks(results)
