"""Checks for lab 09 (the real world): a wire harness, a port to the official SDK, a host
over the npm reference servers.

Part 1 runs the learner's ``harness(command, script, timeout)`` and :func:`reference_harness`
against the same real server processes, :mod:`mcpkit.grading.lab09_server` with the quirks
real peers have (pages, two error forms, an older revision, chatter, stray lines, silence, a
server that does not exit), and against mcpkit's notes server; their transcripts must be
equal. Part 2 reads the learner's port (the source of a program on the official SDK's
``MCPServer``), runs it as a real process, and compares what the reference harness sees with
what it sees of mcpkit's notes server, step by step, on a fixed script followed by a
generated one. Part 3 builds an mcpkit ``Host`` from the learner's ``mcpServers`` entries for
``server-everything`` and ``server-filesystem`` and runs the learner's calls through it.

The transcript (the lab's notebook says the same):

* ``["initialize", "2025-11-25", {"version": v, "capabilities": [...]}]`` (capabilities:
  the sorted keys among tools, resources, prompts);
* one entry per step: ``["list", kind, [...]]``, ``["call", tool, outcome]``,
  ``["read", uri, outcome]``, ``["get", prompt, outcome]``, ``["send", method, outcome]``;
* ``["end", None, {"exit": returncode or None, "stray": lines that were not JSON objects}]``.
"""

from __future__ import annotations

import ast
import contextlib
import itertools
import json
import os
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .core import (
    CaseResult,
    Gen,
    Seen,
    Step,
    _,
    case,
    cases_for,
    child_processes,
    cut_pair,
    differential,
    drop_each,
    record_returns,
    run_checks,
    seen,
)

#: A client of mcpkit's is what part 1 asks for; the host is the grader's in part 3.
OFF_LIMITS: dict[str, set[str]] = {
    "mcpkit": {"Client", "AsyncClient", "Host", "connect"},
    "mcpkit.client": {"Client", "PendingRequest", "connect", "Front"},
    "mcpkit.aclient": {"AsyncClient"},
    "mcpkit.session": {"ClientSession"},
    "mcpkit.host": {"Host"},
}

SERVER_SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "lab09_server.py")
NOTES_COMMAND = [sys.executable, "-m", "mcpkit", "serve", "mcpkit.examples.notes:server"]
ROOT = Path(__file__).resolve().parents[2]
NPM_PEERS = ROOT / "interop" / "node_modules" / "@modelcontextprotocol"
INSTALL_COMMAND = "interop/install.sh"
PROTOCOL = "2025-11-25"
#: The first answer may take this long: the server is still starting (the SDK takes ~1 s).
START_WAIT = 10.0
#: The wait for each answer of mcpkit's notes server and of a learner's port of it.
NOTES_WAIT = 10.0
#: The start wait of a second try, when a server that answers everything left a step
#: unanswered: on a busy machine (a class graded on a small box) the SDK's start can take
#: longer than START_WAIT.
PATIENT_START = 40.0
#: The wait for each answer in that second try.
PATIENT_WAIT = 20.0
MAX_PAGES = 50
#: The port may be at most this many lines of code (the source material says "well under 80").
PORT_LINES = 80


def server_command(config: dict[str, Any] | None = None) -> list[str]:
    """The command that starts lab 09's test server with the quirks in ``config``."""
    return [sys.executable, "-I", SERVER_SCRIPT, json.dumps(config or {})]


def start(command: list[str]) -> tuple[subprocess.Popen, queue.Queue]:
    """Start ``command`` with pipes; its output lines (bytes) arrive in the queue, then b""."""
    process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL)
    lines: queue.Queue = queue.Queue()

    def pump() -> None:
        with contextlib.suppress(OSError, ValueError):
            for line in process.stdout:  # type: ignore[union-attr]
                lines.put(line)
        lines.put(b"")

    threading.Thread(target=pump, daemon=True).start()
    return process, lines


# --------------------------------------------------------------------------- the reference


_LISTS = {"tools": ("tools/list", "tools"), "resources": ("resources/list", "resources"),
          "templates": ("resources/templates/list", "resourceTemplates"),
          "prompts": ("prompts/list", "prompts")}


def _list_entry(kind: str, item: Any) -> Any:
    if not isinstance(item, dict):
        return None
    if kind == "tools":
        required = (item.get("inputSchema") or {}).get("required") or []
        hints = [k for k, v in (item.get("annotations") or {}).items() if v is True]
        return [item.get("name"), sorted(required), sorted(hints)]
    return item.get({"resources": "uri", "templates": "uriTemplate"}.get(kind, "name"))


def _block_text(content: Any) -> Any:
    if not isinstance(content, dict):
        return None
    if content.get("type") == "text":
        return content.get("text")
    if content.get("type") == "resource":
        return (content.get("resource") or {}).get("text")
    return None


def outcome(kind: str, reply: dict[str, Any] | None) -> Any:
    """What the transcript keeps of one answer (the lab's table of normal forms)."""
    if reply is None:
        return "no answer"
    if "error" in reply:
        return {"error": (reply.get("error") or {}).get("code")}
    result = reply.get("result") or {}
    if kind == "call":
        if result.get("isError") is True:
            return {"isError": True}
        return {"content": [b.get("text") if b.get("type") == "text" else b.get("type")
                            for b in result.get("content", [])]}
    if kind == "read":
        return {"contents": [[c.get("uri"), c.get("mimeType"), c.get("text")]
                             for c in result.get("contents", [])]}
    if kind == "get":
        return {"messages": [[m.get("role"), (m.get("content") or {}).get("type"),
                              _block_text(m.get("content"))] for m in result.get("messages", [])]}
    return {"result": sorted(result)}


def reference_harness(command: list[str], script: list[list[Any]],
                      timeout: float = 2.0, start_wait: float | None = None) -> list[list[Any]]:
    """The harness the lab asks for: one session with ``command``, the steps of ``script``,
    the normalized transcript (the first answer may take ``start_wait``, START_WAIT unless
    told: the server is starting)."""
    process, lines = start(command)
    ids = itertools.count(1)
    stray = 0

    def send(message: dict[str, Any]) -> bool:
        try:
            process.stdin.write(json.dumps(message).encode() + b"\n")  # type: ignore[union-attr]
            process.stdin.flush()  # type: ignore[union-attr]
            return True
        except (OSError, ValueError):
            return False

    def ask(method: str, params: Any, wait: float) -> dict[str, Any] | None:
        nonlocal stray
        request_id = next(ids)
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        if not send(message):
            return None
        deadline = time.monotonic() + wait
        while (left := deadline - time.monotonic()) > 0:
            try:
                line = lines.get(timeout=left)
            except queue.Empty:
                return None
            if not line:
                lines.put(b"")  # the end stays the end for the next question too
                return None
            try:
                reply = json.loads(line)
            except ValueError:
                stray += 1
                continue
            if not isinstance(reply, dict):
                stray += 1
                continue
            if "method" in reply:
                continue  # a notification, or a request of the server's
            if type(reply.get("id")) is int and reply.get("id") == request_id:
                return reply
        return None

    def listing(kind: str) -> Any:
        method, key = _LISTS[kind]
        items: list[Any] = []
        cursor = None
        for _page in range(MAX_PAGES):
            reply = ask(method, {"cursor": cursor} if cursor else None, timeout)
            if reply is None or "error" in reply:
                return outcome("list", reply)
            result = reply.get("result") or {}
            items += [_list_entry(kind, item) for item in result.get(key, [])]
            cursor = result.get("nextCursor")
            if not cursor:
                break
        return sorted(items)

    transcript: list[list[Any]] = []
    try:
        init = ask("initialize", {"protocolVersion": PROTOCOL, "capabilities": {},
                                  "clientInfo": {"name": "lab09-harness", "version": "1.0"}},
                   max(timeout, START_WAIT if start_wait is None else start_wait))
        if init is None or "error" in init:
            transcript.append(["initialize", PROTOCOL, outcome("init", init)])
        else:
            result = init.get("result") or {}
            caps = sorted(k for k in result.get("capabilities") or {}
                          if k in ("tools", "resources", "prompts"))
            transcript.append(["initialize", PROTOCOL, {"version": result.get("protocolVersion"),
                                                        "capabilities": caps}])
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        for step in script:
            kind = step[0]
            if kind == "list":
                transcript.append(["list", step[1], listing(step[1])])
            elif kind == "call":
                reply = ask("tools/call", {"name": step[1], "arguments": step[2]}, timeout)
                transcript.append(["call", step[1], outcome("call", reply)])
            elif kind == "read":
                transcript.append(["read", step[1],
                                   outcome("read", ask("resources/read", {"uri": step[1]},
                                                       timeout))])
            elif kind == "get":
                reply = ask("prompts/get", {"name": step[1], "arguments": step[2]}, timeout)
                transcript.append(["get", step[1], outcome("get", reply)])
            else:
                transcript.append(["send", step[1], outcome("send", ask(step[1], step[2],
                                                                        timeout))])
        with contextlib.suppress(OSError, ValueError):
            process.stdin.close()  # type: ignore[union-attr]
        try:
            code: int | None = process.wait(timeout)
        except subprocess.TimeoutExpired:
            code = None
        transcript.append(["end", None, {"exit": code, "stray": stray}])
        return transcript
    finally:
        if process.poll() is None:
            process.kill()
        process.wait()
        with contextlib.suppress(OSError, ValueError):
            process.stdin.close()  # type: ignore[union-attr]


# --------------------------------------------------------------------------- running harnesses


def _entries(transcript: Any) -> list[Step]:
    """A transcript as steps (one per entry), so the report shows the first entry that differs."""
    if not isinstance(transcript, list):
        return [Step(_("the transcript", "la transcripción"), transcript)]
    steps = []
    for n, entry in enumerate(transcript):
        label = (f"#{n} {entry[0]} {entry[1]}" if isinstance(entry, list) and len(entry) >= 2
                 else f"#{n}")
        steps.append(Step(label, entry))
    return steps


def _run_harness(harness: Callable[..., Any], command: list[str], script: list[list[Any]],
                 timeout: float) -> Any:
    """The learner's transcript, as plain data (errors raised become part of it)."""
    from .core import attempt

    return attempt(lambda: harness(list(command), [list(s) for s in script], timeout))


def _show_script(config: dict[str, Any] | None, script: list[list[Any]]) -> str:
    head = (_("server ", "servidor ") + json.dumps(config, ensure_ascii=False) + "; "
            if config is not None else "")
    return head + _("script ", "guion ") + json.dumps(script, ensure_ascii=False)


# --------------------------------------------------------------------------- part 1

_BASIC = {"tools": ["echo", "add", "fail", "image"], "resources": {"mem://a": "alpha"},
          "templates": ["mem://{name}"], "prompts": ["greet"]}


def _harness_case(harness: Callable[..., Any], name: str, config: dict[str, Any],
                  script: list[list[Any]], hint: str, timeout: float = 2.0) -> CaseResult:
    command = server_command(config)
    expected = _memo.reference(command, script, timeout)
    return case(name, lambda: _run_harness(harness, command, script, timeout), expected,
                given=_show_script(config, script), hint=hint)


def check_harness(harness: Callable[..., Any]) -> None:
    """Part 1: the learner's harness against the test server's quirks and a real server."""
    h = harness
    notes_script = [["list", "tools"], ["call", "notes_search", {"query": "milk"}],
                    ["read", "notes://1"], ["get", "review_note", {"id": "2"}],
                    ["read", "notes://99"], ["send", "nope/never", {}]]
    results = [
        _harness_case(h, _("initialize, one list, the end", "initialize, una lista, el final"),
                      {**_BASIC, "slow_exit": 0.3}, [["list", "prompts"]],
                      _("the first entry is [\"initialize\", \"2025-11-25\", {\"version\": ..., "
                        "\"capabilities\": sorted keys among tools, resources, prompts}]; the "
                        "last is [\"end\", None, {\"exit\": ..., \"stray\": ...}], once the "
                        "server exited (wait up to timeout seconds for it after closing stdin)",
                        "la primera entrada es [\"initialize\", \"2025-11-25\", {\"version\": "
                        "..., \"capabilities\": las claves ordenadas entre tools, resources, "
                        "prompts}]; la última es [\"end\", None, {\"exit\": ..., \"stray\": "
                        "...}], una vez que el servidor terminó (espera hasta timeout segundos "
                        "tras cerrar stdin)")),
        _harness_case(h, _("entries: a tool's sorted required arguments and true hints, a "
                           "resource's uri, a template's uriTemplate, a send's sorted keys",
                           "entradas: los argumentos obligatorios y las indicaciones con valor "
                           "true de una herramienta, ordenados; el uri de un recurso; el "
                           "uriTemplate de una plantilla; las claves ordenadas de un send"),
                      _BASIC, [["list", "tools"], ["list", "resources"], ["list", "templates"],
                               ["send", "initialize", {}]],
                      _("a tool is [name, sorted(inputSchema.required), sorted keys of its "
                        "annotations whose value is true]; a resource its uri and a template "
                        "its uriTemplate, not their names; a send's outcome is {\"result\": "
                        "sorted keys of the result}",
                        "una herramienta es [name, sorted(inputSchema.required), las claves "
                        "ordenadas de sus anotaciones cuyo valor es true]; un recurso, su uri, "
                        "y una plantilla, su uriTemplate, no sus nombres; el outcome de un "
                        "send es {\"result\": las claves ordenadas del resultado}")),
        _harness_case(h, _("initialize refused: its error, and the session goes on",
                           "initialize rechazado: su error, y la sesión sigue"),
                      {**_BASIC, "init_error": -32602}, [["send", "ping", None]],
                      _("an initialize answered with an error writes [\"initialize\", "
                        "\"2025-11-25\", {\"error\": code}], like any other outcome",
                        "un initialize respondido con un error escribe [\"initialize\", "
                        "\"2025-11-25\", {\"error\": code}], como cualquier otro outcome")),
        _harness_case(h, _("a server slow to start: initialize waits up to 10 s, not timeout",
                           "un servidor que tarda en arrancar: initialize espera hasta 10 s, "
                           "no timeout"),
                      {**_BASIC, "slow_start": 1.0}, [["send", "ping", None]],
                      _("wait max(timeout, 10) seconds for initialize's answer: the server is "
                        "still starting", "espera max(timeout, 10) segundos la respuesta de "
                        "initialize: el servidor todavía está arrancando"), timeout=0.5),
        _harness_case(h, _("tool calls: text, isError, other blocks, an unknown tool",
                           "llamadas a herramientas: texto, isError, otros bloques, una "
                           "herramienta desconocida"),
                      _BASIC, [["call", "echo", {"text": "hola"}],
                               ["call", "add", {"a": 2, "b": 3}], ["call", "fail", {}],
                               ["call", "image", {}], ["call", "nope", {}]],
                      _("a result keeps the text of text blocks and the type of the others; "
                        "isError: true becomes {\"isError\": True}; an error answer {\"error\": "
                        "code}",
                        "un resultado guarda el texto de los bloques de texto y el tipo de los "
                        "demás; isError: true queda {\"isError\": True}; una respuesta de error, "
                        "{\"error\": code}")),
        _harness_case(h, _("the other form of an unknown tool: a result with isError",
                           "la otra forma de una herramienta desconocida: un resultado con "
                           "isError"),
                      {**_BASIC, "unknown_tool": "result"}, [["call", "nope", {"x": 1}]],
                      _("some peers answer an unknown tool with an error, others with "
                        "isError: the transcript must tell them apart",
                        "unos interlocutores responden a una herramienta desconocida con un "
                        "error y otros con isError: la transcripción debe distinguirlos")),
        _harness_case(h, _("lists in pages: follow nextCursor", "listas por páginas: sigue "
                           "nextCursor"),
                      {**_BASIC, "page": 1, "resources": {"mem://b": "b", "mem://a": "a"}},
                      [["list", "tools"], ["list", "resources"], ["list", "templates"],
                       ["list", "prompts"]],
                      _("while a result has nextCursor, ask again with params {\"cursor\": it}; "
                        "the entry holds every page's items, sorted",
                        "mientras un resultado traiga nextCursor, pide otra vez con params "
                        "{\"cursor\": ese valor}; la entrada reúne los elementos de todas las "
                        "páginas, ordenados")),
        _harness_case(h, _("read and get; a missing resource's error code",
                           "read y get; el código de error de un recurso que falta"),
                      {**_BASIC, "missing": -32602},
                      [["read", "mem://a"], ["read", "mem://zzz"], ["get", "greet", {"who": "Ada"}],
                       ["get", "nope", {}]],
                      _("read keeps [uri, mimeType, text] of each content; get keeps [role, "
                        "content type, text] of each message (the text of a resource block "
                        "is its resource's text)",
                        "read guarda [uri, mimeType, text] de cada contenido; get guarda "
                        "[role, tipo de contenido, text] de cada mensaje (el texto de un bloque "
                        "de recurso es el texto de su recurso)")),
        _harness_case(h, _("notifications and server requests in between are skipped",
                           "se saltan las notificaciones y solicitudes que el servidor envía "
                           "intercaladas"),
                      {**_BASIC, "chatty": True}, [["call", "echo", {"text": "x"}],
                                                   ["list", "prompts"]],
                      _("a message with a \"method\" is not the answer you wait for, even if "
                        "it has an id",
                        "un mensaje con \"method\" no es la respuesta que esperas, aunque "
                        "tenga id")),
        _harness_case(h, _("stray responses are dropped, non-JSON lines counted",
                           "las respuestas sueltas se descartan y las líneas que no son JSON "
                           "se cuentan"),
                      {**_BASIC, "stray": True, "noise": 2}, [["call", "add", {"a": 1, "b": 1}]],
                      _("the answer is the response with your request's id; a line that is "
                        "not a JSON object counts in \"stray\"",
                        "la respuesta es la que lleva el id de tu solicitud; una línea que no "
                        "es un objeto JSON cuenta en \"stray\"")),
        _harness_case(h, _("a request never answered: \"no answer\" after the timeout, and "
                           "the session goes on",
                           "una solicitud que nunca se responde: \"no answer\" al agotarse el "
                           "tiempo de espera, y la sesión sigue"),
                      {**_BASIC, "silent": ["prompts/get"]},
                      [["get", "greet", {}], ["call", "echo", {"text": "still here"}]],
                      _("wait at most timeout seconds for each answer (lines.get(timeout=...)), "
                        "then write \"no answer\"",
                        "espera como mucho timeout segundos cada respuesta "
                        "(lines.get(timeout=...)) y luego escribe \"no answer\""), timeout=0.5),
        _harness_case(h, _("a server that logs while it holds an answer back: the wait "
                           "still ends timeout seconds after the request",
                           "un servidor que registra mensajes mientras retiene una respuesta: "
                           "la espera acaba igualmente timeout segundos después de la "
                           "solicitud"),
                      {**_BASIC, "slow": {"prompts/get": 2.5}},
                      [["call", "echo", {"text": "x"}], ["get", "greet", {}]],
                      _("one deadline per request (time.monotonic() + timeout), not a new "
                        "timeout after every line that is not the answer: a server that "
                        "logs every second would hold the harness for ever",
                        "un plazo por solicitud (time.monotonic() + timeout), no un tiempo de "
                        "espera nuevo tras cada línea que no es la respuesta: un servidor que "
                        "registra un mensaje por segundo retendría el harness para siempre"),
                      timeout=0.5),
        _harness_case(h, _("an older revision, a server that does not exit",
                           "una revisión anterior, un servidor que no termina"),
                      {**_BASIC, "version": "2024-11-05", "linger": True},
                      [["send", "ping", None], ["send", "nope/never", {}]],
                      _("record the version the server answered; after closing stdin wait "
                        "timeout seconds, then kill it and record exit None",
                        "anota la versión que respondió el servidor; tras cerrar stdin espera "
                        "timeout segundos, luego mátalo y anota exit None"), timeout=0.5),
        _harness_case(h, _("lines of JSON that are not objects are counted as stray",
                           "las líneas JSON que no son objetos cuentan como sueltas"),
                      {**_BASIC, "scalars": True}, [["call", "echo", {"text": "a"}],
                                                    ["send", "ping", None]],
                      _("42, \"text\", [1, 2], null and true parse as JSON but are not "
                        "objects: count each in \"stray\", and do not let them stop the wait",
                        "42, \"text\", [1, 2], null y true se analizan como JSON pero no son "
                        "objetos: cuenta cada una en \"stray\", y que no corten la espera")),
        _harness_case(h, _("a stray response whose id is yours as text",
                           "una respuesta suelta cuyo id es el tuyo como texto"),
                      {**_BASIC, "stray": True, "stray_ids": "text"},
                      [["call", "add", {"a": 2, "b": 2}], ["list", "prompts"]],
                      _("the id \"2\" is not the id 2: compare ids as JSON values, without "
                        "converting them",
                        "el id \"2\" no es el id 2: compara los id como valores JSON, sin "
                        "convertirlos")),
        _harness_case(h, _("errors that carry data", "errores que llevan data"),
                      {**_BASIC, "errors_data": True, "missing": -32002},
                      [["read", "mem://zzz"], ["call", "nope", {}], ["send", "nope/never", {}],
                       ["list", "tools"]],
                      _("an error answer is {\"error\": code}, whatever else it carries",
                        "una respuesta de error es {\"error\": code}, lleve lo que lleve "
                        "además")),
        _harness_case(h, _("a server that dies mid-run",
                            "un servidor que muere a mitad de la ejecución"),
                      {**_BASIC, "die_after": 3},
                      [["call", "echo", {"text": "a"}], ["call", "add", {"a": 1, "b": 2}],
                       ["list", "tools"], ["send", "ping", None]],
                      _("the empty line start() queues at the end of the output is not a stray "
                        "line: from then on every request has \"no answer\" at once",
                        "la línea vacía que start() encola al final de la salida no es una "
                        "línea suelta: desde entonces cada solicitud tiene \"no answer\" en "
                        "el acto"), timeout=0.5),
        case(_("what the harness wrote to the server", "lo que el harness escribió al servidor"),
             lambda: _written(h, _WRITTEN_SCRIPT), _written(reference_harness, _WRITTEN_SCRIPT),
             given=_show_script({**_BASIC, "page": 1}, _WRITTEN_SCRIPT),
             hint=_("one JSON-RPC message per line: requests with ids 1, 2, 3...; params left "
                    "out when there are none (never null); notifications/initialized with no "
                    "id",
                    "un mensaje JSON-RPC por línea: solicitudes con ids 1, 2, 3...; sin params "
                    "cuando no hay (nunca null); notifications/initialized sin id")),
        case(_("no server process is left behind", "no queda ningún proceso servidor"),
             lambda: _left_behind(h), {_("processes left", "procesos que quedan"): 0,
                                       _("killed but never waited for (zombies)",
                                         "matados pero nunca esperados (zombis)"): 0},
             given=_show_script({**_BASIC, "linger": True}, [["send", "ping", None]]),
             hint=_("a server that has not exited after timeout seconds must be killed (and "
                    "waited for) before the harness returns",
                    "un servidor que no terminó tras timeout segundos debe matarse (y "
                    "esperarse) antes de que el harness retorne")),
        case(_("mcpkit's notes server, a real one", "el servidor de notas de mcpkit, uno real"),
             lambda: _run_harness(h, NOTES_COMMAND, notes_script, 10.0),
             seen(_memo.notes(notes_script)), given=_show_script(None, notes_script),
             hint=_("the same rules hold for any server", "las mismas reglas valen para "
                    "cualquier servidor")),
        differential(_("generated servers and scripts, compared with the reference harness",
                       "servidores y guiones generados, comparados con el harness de "
                       "referencia"),
                     key="lab09/harness", generate=_harness_input, trial=_harness_trial,
                     reference=reference_harness, learner=h, show=_show_input, cases=5,
                     shrink=_shrink_input),
    ]
    run_checks(results)


_WRITTEN_SCRIPT: list[list[Any]] = [["list", "tools"], ["call", "echo", {"text": "é"}],
                                     ["send", "ping", None], ["send", "nope/never", {}],
                                     ["get", "greet", {}]]


def _written(harness: Callable[..., Any], script: list[list[Any]]) -> Any:
    """The messages a harness wrote to the test server, as parsed JSON (clientInfo is the
    harness's own; a notification's empty params are the same as none)."""
    with tempfile.TemporaryDirectory(prefix="lab09-log-") as folder:
        log = os.path.join(folder, "received.log")
        command = server_command({**_BASIC, "page": 1, "log": log})
        got = _run_harness(harness, command, script, 2.0)
        if isinstance(got, Seen):
            return got
        try:
            with open(log, encoding="utf-8") as f:
                lines = f.read().splitlines()
        except OSError:
            return []
    messages: list[Any] = []
    for line in lines:
        try:
            message = json.loads(line)
        except ValueError:
            messages.append({"not JSON": line})
            continue
        if isinstance(message, dict):
            params = message.get("params")
            if isinstance(params, dict) and "clientInfo" in params:
                message["params"] = {**params, "clientInfo": "<yours>"}
            if "id" not in message and params == {}:
                message.pop("params")
        messages.append(message)
    return seen(messages)


def _left_behind(harness: Callable[..., Any]) -> Any:
    before = child_processes()
    started: list[Any] = []  # what the setup's start() gave the harness, held here
    undo = record_returns(harness, "start", started)
    try:
        _run_harness(harness, server_command({**_BASIC, "linger": True}),
                     [["send", "ping", None]], 0.5)
    finally:
        undo()
    processes = [s[0] for s in started
                 if isinstance(s, tuple) and s and isinstance(s[0], subprocess.Popen)]
    # A process killed and never waited for is a zombie until someone reaps it: its Popen
    # still has no returncode.
    unreaped = sum(process.returncode is None for process in processes)
    for process in processes:
        with contextlib.suppress(OSError, ValueError):
            process.kill()
        with contextlib.suppress(OSError, ValueError, subprocess.TimeoutExpired):
            process.wait(5)
    left = child_processes() - before
    for pid in left:  # the grader leaves nothing behind either: its own test servers
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                ours = b"lab09_server" in f.read()
        except OSError:
            ours = False
        if ours:
            with contextlib.suppress(OSError):
                os.kill(pid, 9)
            with contextlib.suppress(OSError):
                os.waitpid(pid, 0)
    return {_("processes left", "procesos que quedan"): len(left),
            _("killed but never waited for (zombies)",
              "matados pero nunca esperados (zombis)"): unreaped}


def _harness_input(rng: Gen) -> tuple[dict[str, Any], list[list[Any]]]:
    tools = rng.sample(["echo", "add", "fail", "image"], rng.randint(1, 4))
    resources = {f"mem://{rng.choice('abcdefg')}{n}": rng.text() for n in range(rng.randint(0, 3))}
    config: dict[str, Any] = {"tools": tools, "resources": resources,
                              "prompts": rng.sample(["greet", "review", "plan"], rng.randint(0, 2)),
                              "templates": ["mem://{x}"] if rng.random() < 0.5 else []}
    if rng.random() < 0.5:
        config["page"] = rng.randint(1, 3)
    for key, values in (("unknown_tool", ["protocol", "result"]),
                        ("missing", [-32002, -32602, -32603]),
                        ("version", ["2024-11-05", "2025-06-18", "2025-11-25"])):
        if rng.random() < 0.4:
            config[key] = rng.choice(values)
    for key in ("chatty", "stray", "scalars", "errors_data"):
        if rng.random() < 0.3:
            config[key] = True
    if config.get("stray") and rng.random() < 0.5:
        config["stray_ids"] = rng.choice(["text", "next"])
    if rng.random() < 0.2:
        config["noise"] = rng.randint(1, 2)
    script: list[list[Any]] = []
    for _n in range(rng.randint(1, 6)):
        roll = rng.random()
        if roll < 0.25:
            script.append(["list", rng.choice(list(_LISTS))])
        elif roll < 0.55:
            name = rng.choice([*tools, "nope"])
            args = {"text": rng.text()} if name == "echo" else (
                {"a": rng.randint(-5, 9), "b": rng.randint(0, 9)} if name == "add" else {})
            script.append(["call", name, args])
        elif roll < 0.7:
            script.append(["read", rng.choice([*resources, "mem://none"])])
        elif roll < 0.85:
            script.append(["get", rng.choice(["greet", "review", "nope"]),
                           {"topic": rng.text()} if rng.random() < 0.5 else {}])
        else:
            script.append(["send", rng.choice(["ping", "nope/never", "logging/setLevel"]),
                           rng.choice([None, {}])])
    return config, script


def _harness_trial(impl: Callable[..., Any], x: tuple[dict[str, Any], list[list[Any]]]
                   ) -> list[Step]:
    config, script = x
    command = server_command(config)
    if impl is reference_harness:
        return _entries(_memo.reference(command, script, 2.0))
    return _entries(_run_harness(impl, command, script, 2.0))


def _show_input(x: tuple[dict[str, Any], list[list[Any]]]) -> str:
    return _show_script(*x)


def _shrink_input(x: tuple[dict[str, Any], list[list[Any]]]):
    config, script = x
    for smaller in drop_each(script):
        yield config, smaller
    for key in [k for k in config if k not in ("tools", "resources", "prompts", "templates")]:
        yield {k: v for k, v in config.items() if k != key}, script


# --------------------------------------------------------------------------- part 2

#: What the port's program may import: the SDK, its pydantic, and plain data modules.
PORT_IMPORTS = frozenset("""
mcp pydantic typing typing_extensions annotated_types json itertools collections dataclasses
re datetime enum functools string textwrap math
""".split())
PORT_FORBIDDEN_NAMES = frozenset("eval exec compile __import__ open globals vars breakpoint "
                                 "getattr setattr importlib".split())


def port_problems(source: Any) -> list[str]:
    """Why ``source`` is not a port to the official SDK: empty when it is one."""
    if type(source) is not str:
        return [_("notes_port() must return a string: the source of a Python program",
                  "notes_port() debe devolver una cadena: el código fuente de un programa de "
                  "Python")]
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        return [_("the program does not parse: ", "el programa no se puede analizar: ")
                + f"{exc.msg} (line {exc.lineno})"]
    problems, uses_sdk = [], False
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            names = ["." * node.level + (node.module or "")]
        for name in names:
            root = name.split(".")[0]
            uses_sdk |= name.startswith("mcp.server.mcpserver") or (
                root == "mcp" and isinstance(node, ast.ImportFrom)
                and any(a.name == "MCPServer" for a in node.names))
            if root not in PORT_IMPORTS:
                problems.append(_("imports {name}: a port uses the SDK, not mcpkit nor another "
                                  "process", "importa {name}: un port usa el SDK, no mcpkit ni "
                                  "otro proceso").format(name=name or "."))
        if isinstance(node, ast.Name) and node.id in PORT_FORBIDDEN_NAMES:
            problems.append(_("uses {name}", "usa {name}").format(name=node.id))
        if isinstance(node, ast.Attribute) and node.attr.startswith("__"):
            problems.append(_("uses {name}", "usa {name}").format(name=node.attr))
    # e.g. a proxy that starts mcpkit's server underneath; comments and docstrings may say
    # where the port comes from ("ported from mcpkit.examples.notes")
    docstrings = _docstrings(tree)
    if any("mcpkit" in text.casefold() for text in _code_words(tree, docstrings)):
        problems.append(_("names mcpkit in its code: a port stands on the SDK alone "
                          "(comments and docstrings may name it)",
                          "menciona mcpkit en su código: un port se apoya solo en el SDK (los "
                          "comentarios y docstrings sí pueden nombrarlo)"))
    if not uses_sdk:
        problems.append(_("does not use the SDK's MCPServer (from mcp.server.mcpserver import "
                          "MCPServer)", "no usa el MCPServer del SDK (from mcp.server.mcpserver "
                          "import MCPServer)"))
    return problems


def _docstrings(tree: ast.AST) -> list[ast.Constant]:
    """The docstrings (a string alone as a statement) of ``tree``."""
    return [node.value for node in ast.walk(tree) if isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)]


def _code_words(tree: ast.AST, docstrings: list[ast.Constant]) -> list[str]:
    """The names, attributes and string literals of ``tree``, docstrings left out."""
    skip = {id(d) for d in docstrings}
    words = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            words.append(node.id)
        elif isinstance(node, ast.Attribute):
            words.append(node.attr)
        elif isinstance(node, ast.alias):
            words.append(node.name)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) \
                and id(node) not in skip:
            words.append(node.value)
    return words


def code_lines(source: str) -> int:
    """Lines that hold code: not blank, not only a comment, not in a docstring."""
    try:
        quiet = {line for d in _docstrings(ast.parse(source))
                 for line in range(d.lineno, (d.end_lineno or d.lineno) + 1)}
    except SyntaxError:
        quiet = set()
    return sum(1 for number, line in enumerate(source.splitlines(), 1)
               if line.strip() and not line.strip().startswith("#") and number not in quiet)


#: The fixed script of part 2, each step with the name of the case it belongs to.
def _port_script() -> list[tuple[str, list[Any]]]:
    listing = _("the lists: tools (names, required arguments, hints), templates, resources, "
                "prompts", "las listas: herramientas (nombres, argumentos obligatorios, "
                "indicaciones), plantillas, recursos, prompts")
    results = _("notes_list and notes_search: the results as one JSON text",
                "notes_list y notes_search: los resultados como un texto JSON")
    create = _("notes_create: a new note, listed, found and readable",
               "notes_create: una nota nueva, listada, encontrada y legible")
    failing = _("tools that fail answer isError (empty title, unknown id, bad arguments)",
                "las herramientas que fallan responden isError (título vacío, id desconocido, "
                "argumentos erróneos)")
    read = _("resources/read: a note, and a missing one (-32002)",
             "resources/read: una nota y una que falta (-32002)")
    prompt = _("prompts/get review_note, and for a missing note (-32602)",
               "prompts/get review_note, y para una nota que falta (-32602)")
    delete = _("notes_delete: the note is gone", "notes_delete: la nota desaparece")
    other = _("an unknown method (-32601) and ping", "un método desconocido (-32601) y ping")
    return [
        (listing, ["list", "tools"]), (listing, ["list", "templates"]),
        (listing, ["list", "resources"]), (listing, ["list", "prompts"]),
        (results, ["call", "notes_list", {}]),
        (results, ["call", "notes_search", {"query": "MILK"}]),
        (results, ["call", "notes_search", {"query": "e", "limit": 2}]),
        (results, ["call", "notes_search", {"query": "solicitud", "limit": 1}]),
        (results, ["call", "notes_search", {"query": "zzz"}]),
        (create, ["call", "notes_create", {"title": "Café", "body": "Ñandú ☕ at 8"}]),
        (create, ["call", "notes_list", {}]),
        (create, ["call", "notes_search", {"query": "café"}]),
        (create, ["read", "notes://4"]),
        (failing, ["call", "notes_create", {"title": "  ", "body": "x"}]),
        (failing, ["call", "notes_delete", {"id": "99"}]),
        (failing, ["call", "notes_search", {}]),
        (read, ["read", "notes://2"]), (read, ["read", "notes://99"]),
        (prompt, ["get", "review_note", {"id": "1"}]),
        (prompt, ["get", "review_note", {"id": "99"}]),
        (delete, ["call", "notes_delete", {"id": "3"}]),
        (delete, ["read", "notes://3"]), (delete, ["call", "notes_list", {}]),
        (other, ["send", "nope/never", {}]), (other, ["send", "ping", None]),
    ]


def _generated_tail(rng: Gen, length: int) -> list[list[Any]]:
    """Steps after the fixed script: the notes store as it is then (ids 1, 2, 4, 5...)."""
    words = ["milk", "MCP", "server", "café", "ÑANDÚ", "id", "x", "", "straße", "e"]
    steps: list[list[Any]] = []
    next_id = 5
    for _n in range(length):
        roll = rng.random()
        if roll < 0.3:
            title = rng.choice([rng.text(), "Plan", "Straße", "  ", "Notas de café"])
            steps.append(["call", "notes_create", {"title": title, "body": rng.text()}])
            next_id += 1 if title.strip() else 0
        elif roll < 0.5:
            args: dict[str, Any] = {"query": rng.choice(words)}
            if rng.random() < 0.3:
                args["limit"] = rng.randint(0, 3)
            steps.append(["call", "notes_search", args])
        elif roll < 0.6:
            steps.append(["call", "notes_list", {}])
        elif roll < 0.75:
            steps.append(["read", f"notes://{rng.randint(1, next_id)}"])
        elif roll < 0.85:
            steps.append(["get", "review_note", {"id": str(rng.randint(1, next_id))}])
        else:
            steps.append(["call", "notes_delete", {"id": str(rng.randint(1, next_id))}])
    return steps


class _Memo:
    """Transcripts of mcpkit's notes server per script: the same script gives the same
    transcript, so a process needs each only once (an instance, not a module-level table:
    the class grader holds every mcpkit module to what it was when imported)."""

    def __init__(self) -> None:
        self.table: dict[str, Any] = {}

    def notes(self, script: list[list[Any]]) -> Any:
        """mcpkit's notes server answers every step, so a step it left unanswered (or an end
        it did not reach in time) says the machine was busy, not what the server does: such a
        transcript is taken again, with longer waits, and never kept as is."""
        key = json.dumps(["notes", script], sort_keys=True)
        if key not in self.table:
            self.table[key] = seen(_patiently(NOTES_COMMAND, script, _unanswered))
        return self.table[key]

    def port(self, source: str, script: list[list[Any]], expected: Any) -> Any:
        """A port's transcript. One that matched ``expected`` is kept, so the same source on
        the same script runs once per process; one that did not is never kept (a port that
        failed because the machine was busy gets a fresh run next time). One that differs
        and left a step unanswered is run once more at once, with longer waits (for the
        start above all): the SDK is the slowest server here to start, and under load its start can
        outlast the usual wait, which says nothing of the port."""
        key = json.dumps(["port", source, script], sort_keys=True)
        if key in self.table:
            return self.table[key]
        with tempfile.TemporaryDirectory(prefix="lab09-port-") as folder:
            path = Path(folder) / "notes_port.py"
            path.write_text(source, encoding="utf-8")
            got = seen(_patiently([sys.executable, "-I", str(path)], script,
                                  lambda raw: seen(raw) != expected and _unanswered(raw)))
        if got == expected:
            self.table[key] = got
        return got

    def reference(self, command: list[str], script: list[list[Any]], timeout: float) -> Any:
        key = json.dumps([command, script, timeout], sort_keys=True)
        if key not in self.table:
            self.table[key] = seen(reference_harness(command, script, timeout))
        return self.table[key]


def _patiently(command: list[str], script: list[list[Any]],
               again: Callable[[list[list[Any]]], bool]) -> list[list[Any]]:
    """The transcript of ``command`` on ``script``, taken a second time with longer waits
    when ``again`` says the first one shows a busy machine rather than the server."""
    transcript = reference_harness(command, script, NOTES_WAIT)
    if again(transcript):
        transcript = reference_harness(command, script, PATIENT_WAIT, start_wait=PATIENT_START)
    return transcript


def _unanswered(transcript: list[list[Any]]) -> bool:
    """Whether a step of ``transcript`` went unanswered or its server did not exit in time."""
    return any(step[2] == "no answer" or (step[0] == "end" and step[2].get("exit") is None)
               for step in transcript)


_memo = _Memo()


def check_notes_port(notes_port: Callable[[], str]) -> None:
    """Part 2: the learner's port to the SDK (``notes_port()`` returns its source) answers
    like mcpkit's notes server."""
    from . import core

    made = core._run(notes_port)
    source: Any = ... if isinstance(made.error, NotImplementedError) else (
        made.value if made.error is None else Seen.of(made.error, raised=True))
    problems = [] if source is ... else port_problems(source)
    fixed = _port_script()
    rng = Gen(f"{core._seed}/lab09/port")
    tail = _generated_tail(rng, cases_for(8))
    script = [step for _name, step in fixed] + tail
    names = list(dict.fromkeys(name for name, _step in fixed))
    sdk_only = _("the port is a program on the official SDK (no mcpkit, no other process)",
                 "el port es un programa sobre el SDK oficial (sin mcpkit ni otro proceso)")
    short = _("the port is short: at most {n} lines of code",
              "el port es corto: como mucho {n} líneas de código").format(n=PORT_LINES)
    initialize = _("initialize: the capabilities", "initialize: las capacidades")
    generated = _("a generated script after the fixed one (creates, searches, reads, prompts, "
                  "deletes)", "un guion generado tras el fijo (crea, busca, lee, pide "
                  "prompts, borra)")
    ending = _("end of input: the server exits, nothing but JSON on stdout",
               "fin de la entrada: el servidor termina, solo JSON en stdout")
    every = [sdk_only, short, initialize, *names, generated, ending]
    if source is ...:  # the exercise cell still raises NotImplementedError
        results = [case(n, _stub, None) for n in every]
        run_checks(results)
        return
    if problems:
        details = [f"{p}" for p in problems[:3]]
        results = [CaseResult(sdk_only, False, details)]
        results += [CaseResult(n, False, [_("(not run: the port is not a program on the SDK)",
                                            "(no se ejecutó: el port no es un programa sobre "
                                            "el SDK)")]) for n in every[1:]]
        run_checks(results)
        return
    expected = _memo.notes(script)
    got = _memo.port(source, script, expected)
    results = [CaseResult(sdk_only, True)]
    lines = code_lines(source)
    results.append(CaseResult(short, lines <= PORT_LINES, [] if lines <= PORT_LINES else [
        _("got:      {n} lines", "obtenido: {n} líneas").format(n=lines)]))
    if not isinstance(got, list) or len(got) != len(expected):
        details = [_("the session did not go through: ", "la sesión no llegó al final: ")
                   + repr(got)[:200]]
        results += [CaseResult(n, False, details) for n in every[2:]]
        run_checks(results)
        return
    groups: dict[str, list[int]] = {initialize: [0]}
    for index, (name, _step) in enumerate(fixed, start=1):
        groups.setdefault(name, []).append(index)
    groups[generated] = list(range(len(fixed) + 1, len(fixed) + 1 + len(tail)))
    groups[ending] = [len(expected) - 1]
    for name in every[2:]:
        results.append(_compare(name, groups[name], expected, got, name == generated))
    run_checks(results)


def _stub() -> None:
    raise NotImplementedError()


def _port_hints() -> list[tuple[str, str]]:
    """The hint for a step whose target holds the key (made per call: the language is the
    grading's, set after this module was imported)."""
    return [
        ("notes_search", _("mcpkit sends a list as one text block: json.dumps(value, "
                           "ensure_ascii=False); return that string from the tool",
                           "mcpkit envía una lista como un solo bloque de texto: json.dumps(value, "
                           "ensure_ascii=False); devuelve esa cadena desde la herramienta")),
        ("notes_list", _("mcpkit sends a list as one text block: json.dumps(value, "
                         "ensure_ascii=False)", "mcpkit envía una lista como un solo bloque de "
                         "texto: json.dumps(value, ensure_ascii=False)")),
        ("notes://", _("a missing note is the error -32002: raise MCPError(-32002, ...) (from "
                       "mcp import MCPError) in the resource function",
                       "una nota que falta es el error -32002: lanza MCPError(-32002, ...) (from "
                       "mcp import MCPError) en la función del recurso")),
        ("review_note", _("a prompt for a missing note is the error -32602: raise MCPError(-32602, "
                          "...)", "un prompt para una nota que falta es el error -32602: lanza "
                          "MCPError(-32602, ...)")),
        ("tools", _("annotations=ToolAnnotations(readOnlyHint=..., destructiveHint=..., "
                    "idempotentHint=...) as mcpkit's notes server declares them",
                    "annotations=ToolAnnotations(readOnlyHint=..., destructiveHint=..., "
                    "idempotentHint=...) como los declara el servidor de notas de mcpkit")),
    ]


def _compare(name: str, indexes: list[int], expected: list[Any], got: list[Any],
             generated: bool) -> CaseResult:
    from .core import _equal, _label, _show

    for index in indexes:
        if _equal(got[index], expected[index]):
            continue
        want, have = cut_pair(_show(expected[index]), _show(got[index]))
        details = [_label(_("step:", "paso:")) + f"#{index} " + " ".join(
                       str(part) for part in expected[index][:2]),
                   _label(_("expected:", "esperado:")) + want,
                   _label(_("got:", "obtenido:")) + have]
        target = str(expected[index][1])
        hint = next((text for key, text in _port_hints() if key in target), None)
        missing = any(isinstance(step[2], dict) and "error" in step[2]
                      for step in (expected[index], got[index]) if isinstance(step, list)
                      and len(step) > 2)
        if target.startswith("notes://") or target == "review_note":
            hint = hint if missing else None  # those hints are about a missing note
        if hint:
            details.append(_label(_("hint:", "pista:")) + hint)
        return CaseResult(name, False, details, generated=generated)
    return CaseResult(name, True, generated=generated)


# --------------------------------------------------------------------------- part 3


def find_node() -> str | None:
    """A Node for the npm peers: the one interop/install.sh prints, else the one on PATH."""
    home = os.environ.get("CONFORMANCE_DIR", os.path.join(tempfile.gettempdir(), "conf"))
    candidate = os.path.join(home, "node-bin")
    if os.access(candidate, os.X_OK):
        return candidate
    return shutil.which("node")


def peers(report: bool = True) -> dict[str, str | None]:
    """Where the npm reference servers are (None for a missing one). With ``report``, say in
    the current language what is missing and the one command that installs it."""
    found: dict[str, str | None] = {"node": find_node()}
    for name in ("server-everything", "server-filesystem", "server-memory"):
        script = NPM_PEERS / name / "dist" / "index.js"
        found[name] = str(script) if script.exists() else None
    cli = NPM_PEERS / "inspector" / "clients" / "launcher" / "build" / "index.js"
    found["inspector"] = str(cli) if cli.exists() else None
    missing = [name for name, where in found.items() if where is None]
    if report and missing:
        print(_("Not installed: {names}. From the repository's root, run: {command}",
                "Sin instalar: {names}. Desde la raíz del repositorio, ejecuta: {command}"
                ).format(names=", ".join(missing), command=INSTALL_COMMAND))
    return found


class RecordingHost:
    """The host the learner's code gets: mcpkit's Host, with every call written down."""

    def __init__(self, host: Any) -> None:
        self._host = host
        self.calls: list[tuple[str, Any]] = []

    def tools(self) -> list[dict[str, Any]]:
        return self._host.tools()

    def call_tool(self, name: str, arguments: dict[str, Any] | None = None,
                  **options: Any) -> dict[str, Any]:
        result = self._host.call_tool(name, arguments, **options)
        self.calls.append((name, result))
        return result


def _text(result: Any) -> Any:
    try:
        return "\n".join(b.get("text", "") for b in result["content"])
    except (TypeError, KeyError, AttributeError):
        return None


def check_reference_host(make_config: Callable[..., Any], through_host: Callable[..., Any]
                         ) -> None:
    """Part 3: the learner's mcpServers entries run the npm reference servers under mcpkit's
    Host, and the learner's calls go through it."""
    from mcpkit.host import Host

    from . import core

    found = peers(report=False)
    installed = _("the npm reference servers are installed", "los servidores de referencia de "
                  "npm están instalados")
    shaped = _("the config: mcpServers with \"everything\" and \"files\", each run by Node",
               "la configuración: mcpServers con \"everything\" y \"files\", cada uno lanzado "
               "por Node")
    confined = _("files may read the folder and nothing more: its one directory argument is "
                 "the folder", "files solo puede leer la carpeta: su único argumento de "
                 "directorio es la propia carpeta")
    started = _("a Host on your config starts both and merges their tools",
                "un Host con tu configuración arranca los dos y fusiona sus herramientas")
    through = _("your calls go through the host: an echo, and a file read in the folder",
                "tus llamadas pasan por el host: un eco y la lectura de un archivo de la "
                "carpeta")
    missing = [n for n in ("node", "server-everything", "server-filesystem") if not found[n]]
    if missing:
        results = [CaseResult(installed, False, [_(
            "missing: {names}; from the repository's root run {command}, then run this cell "
            "again", "faltan: {names}; desde la raíz del repositorio ejecuta {command} y luego "
            "vuelve a ejecutar esta celda").format(names=", ".join(missing),
                                                   command=INSTALL_COMMAND)])]
        results += [CaseResult(n, False, []) for n in (shaped, confined, started, through)]
        run_checks(results)
        return
    rng = Gen(f"{core._seed}/lab09/host")
    message = f"{rng.choice(['hola', 'ping', 'café'])}-{rng.randint(1, 9999)}"
    content = f"note {rng.randint(1, 10**6)}: {rng.text()}"
    with tempfile.TemporaryDirectory(prefix="lab09-files-") as tmp, \
            contextlib.ExitStack() as stack:
        folder = str(Path(tmp).resolve())
        (Path(folder) / "note.txt").write_text(content, encoding="utf-8")
        config_outcome = core._run(lambda: make_config(dict(found), folder))
        if isinstance(config_outcome.error, NotImplementedError):
            run_checks([case(n, _stub, None)
                        for n in (installed, shaped, confined, started, through)])
            return
        config = config_outcome.value
        results = [CaseResult(installed, True)]
        shape = _config_shape(config, found["node"])
        results.append(case(shaped, lambda: shape, {"servers": ["everything", "files"],
                                                    "node": True},
                            hint=_("{\"mcpServers\": {\"everything\": {\"command\": node, "
                                   "\"args\": [script, \"stdio\"]}, \"files\": {\"command\": node, "
                                   "\"args\": [script, folder]}}}",
                                   "{\"mcpServers\": {\"everything\": {\"command\": node, "
                                   "\"args\": [script, \"stdio\"]}, \"files\": {\"command\": "
                                   "node, \"args\": [script, folder]}}}")))
        results.append(case(confined, lambda: _allowed_folders(config), [folder],
                            hint=_("a server gets the least it needs: [script, folder], not a "
                                   "parent of the folder", "un servidor recibe lo mínimo que "
                                   "necesita: [script, folder], no una carpeta que la contenga")))
        if shape != {"servers": ["everything", "files"], "node": True}:
            results += [CaseResult(started, False, []), CaseResult(through, False, [])]
            run_checks(results)
            return
        stack.enter_context(_node_within_limits())
        try:
            host = Host(config, naming="prefix", ready_timeout=30.0)
        except Exception as exc:  # the learner's config, refused
            results += [CaseResult(started, False, [repr(exc)[:200]]),
                        CaseResult(through, False, [])]
            run_checks(results)
            return
        try:
            try:  # the grader's own host: no case time limit around its start
                host.start(30.0)
                names = sorted(t.get("name") for t in host.tools())
            except Exception:  # a server of the learner's config did not start
                names = []
            wanted = ["everything__echo", "files__read_text_file"]
            results.append(case(started, lambda: [n for n in wanted if n in names], wanted,
                                hint=_start_hint))
            recorder = RecordingHost(host)
            outcome_ = core._run(lambda: through_host(recorder, folder, message))
            if isinstance(outcome_.error, NotImplementedError):
                results.append(case(through, _stub, None))
            else:
                answers = {name: _text(result) for name, result in recorder.calls}
                got = (seen(outcome_.value) if outcome_.error is None
                       else Seen.of(outcome_.error, raised=True))
                results.append(case(
                    through, lambda: [got, sorted(answers)],
                    [[f"Echo: {message}", content], ["everything__echo", "files__read_text_file"]],
                    given=f"through_host(host, folder, {message!r})  # note.txt: {content!r}",
                    hint=_("return [the echo's text, the file's text], both from "
                           "host.call_tool(...)", "devuelve [el texto del eco, el texto del "
                           "archivo], los dos de host.call_tool(...)")))
        finally:
            host.close()
    run_checks(results)


def _start_hint(got: Any) -> str | None:
    """Which server did not start, by the tools that are missing."""
    hints = []
    if not isinstance(got, list) or "everything__echo" not in got:
        hints.append(_("the server-everything entry runs [script, \"stdio\"] with Node",
                       "la entrada de server-everything ejecuta [script, \"stdio\"] con Node"))
    if not isinstance(got, list) or "files__read_text_file" not in got:
        hints.append(_("the server-filesystem entry needs the folder as its last argument",
                       "la entrada de server-filesystem necesita la carpeta como último "
                       "argumento"))
    return "; ".join(hints) or None


@contextlib.contextmanager
def _node_within_limits():
    """Under the class grader's memory limit (an address-space limit, which every child
    inherits), V8's JIT cannot reserve its code space and Node dies at start: while the host
    starts the servers, ask Node to run without the JIT."""
    try:
        import resource

        limited = resource.getrlimit(resource.RLIMIT_AS)[0] != resource.RLIM_INFINITY
    except (ImportError, ValueError, OSError):
        limited = False
    before = os.environ.get("NODE_OPTIONS")
    if limited:
        os.environ["NODE_OPTIONS"] = f"{before or ''} --jitless".strip()
    try:
        yield
    finally:
        if limited:
            if before is None:
                os.environ.pop("NODE_OPTIONS", None)
            else:
                os.environ["NODE_OPTIONS"] = before


def _allowed_folders(config: Any) -> Any:
    """The directories the config lets server-filesystem read (its arguments after the
    script), resolved: a trailing slash or a symbolic link is the same folder."""
    try:
        args = config["mcpServers"]["files"]["args"]
    except (TypeError, KeyError):
        return None
    if not isinstance(args, list) or not args:
        return seen(args)
    return [os.path.realpath(arg) if isinstance(arg, str) else seen(arg) for arg in args[1:]]


def _config_shape(config: Any, node: Any) -> Any:
    if not isinstance(config, dict) or not isinstance(config.get("mcpServers"), dict):
        return seen(config)
    servers = config["mcpServers"]
    return {"servers": sorted(str(k) for k in servers),
            "node": all(isinstance(v, dict) and v.get("command") == node
                        for v in servers.values())}
