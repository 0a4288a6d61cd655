"""Lab 09's test server: an MCP peer whose quirks are chosen on its command line.

Run as a plain script (``python -I lab09_server.py '<json>'``): standard library only, so it
starts in a few tens of milliseconds. The JSON argument says how it behaves; every key is
optional. The quirks are the ones real peers have, so a harness that copes with them copes
with the real world:

=================  ==========================================================================
``version``        the protocolVersion it answers with, whatever the client asked
``page``           list results this many at a time, with ``nextCursor`` (0: all at once)
``tools``          names of its tools, from ``echo``, ``add``, ``fail``, ``image``
``resources``      ``{uri: text}``, readable with ``resources/read``
``templates``      URI templates it lists (never readable: reading one is a miss)
``prompts``        names of its prompts
``unknown_tool``   ``"protocol"`` (error -32602) or ``"result"`` (``isError: true``)
``missing``        the error code for a resource it does not have (-32002 by default)
``chatty``         before every answer, a ``notifications/message`` and a ``ping`` request
``stray``          before every answer, a response for an id nobody used
``noise``          lines of plain text it prints on stdout first (a classic stdio bug)
``silent``         methods it never answers
``linger``         does not exit at the end of its input (it must be killed)
``scalars``        before every answer, a line of JSON that is not an object (``42``, ...)
``stray_ids``      with ``stray``: the stray response's id is the request's id as text
                   (``"2"`` for 2), or the next id (``"next"``)
``errors_data``    every error it answers carries ``data``
``die_after``      exits (without answering) when this many requests have come
``log``            a file to append every line it receives to (the checks read what the
                   client wrote)
``init_error``     answers initialize with this error code (and everything else as usual)
``slow_start``     seconds it takes before it reads its input (a heavy import, a cold disk)
``slow_exit``      seconds it takes to exit once its input ended (it flushes, closes files)
``slow``           ``{method: seconds}``: holds that answer back that long, sending a
                   ``notifications/message`` every 0.1 s meanwhile (a server that logs while
                   it works); it reads nothing else in that time
=================  ==========================================================================

Its tools carry annotations and required arguments in an order that is not sorted, and its
resources and templates have names that are not their URIs: a transcript keeps what the lab
says, sorted, and nothing else. Its noise lines include a blank one.

Whatever the client does, the server never outlives it by long: it exits when its parent
process is gone (a harness killed mid-run leaves no orphan behind).
"""

import json
import os
import sys
import threading
import time

CONFIG = json.loads(sys.argv[1]) if len(sys.argv) > 1 else {}
OUT = sys.stdout


def send(message):
    OUT.write(json.dumps(message, ensure_ascii=False) + "\n")
    OUT.flush()


def page(items, params, key):
    size = CONFIG.get("page", 0)
    start = int((params or {}).get("cursor") or 0)
    if not size:
        return {key: items}
    result = {key: items[start : start + size]}
    if start + size < len(items):
        result["nextCursor"] = str(start + size)
    return result


#: Required arguments and annotations out of sorted order (and a hint that is false).
_TOOL_EXTRAS = {
    "add": {"schema": {"required": ["b", "a"]},
            "annotations": {"readOnlyHint": True, "idempotentHint": True}},
    "fail": {"annotations": {"openWorldHint": True, "destructiveHint": False}},
    "echo": {"schema": {"required": ["text"]}},
}


def call_tool(params):
    name = params.get("name")
    args = params.get("arguments") or {}
    if name not in CONFIG.get("tools", []):
        if CONFIG.get("unknown_tool") == "result":
            return {"content": [{"type": "text", "text": f"Unknown tool: {name}"}],
                    "isError": True}
        return {"code": -32602, "message": f"Unknown tool: {name}"}
    if name == "echo":
        return {"content": [{"type": "text", "text": str(args.get("text", ""))}]}
    if name == "add":
        return {"content": [{"type": "text", "text": str(args.get("a", 0) + args.get("b", 0))}]}
    if name == "image":
        return {"content": [{"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"},
                            {"type": "text", "text": "a tiny image"}]}
    return {"content": [{"type": "text", "text": "it failed"}], "isError": True}


def answer(method, params):
    """(result, None) or (None, error)."""
    if method == "initialize":
        if CONFIG.get("init_error"):
            return None, {"code": CONFIG["init_error"], "message": "unsupported client"}
        caps = {"logging": {}}
        for kind in ("tools", "resources", "prompts"):
            if CONFIG.get(kind) or (kind == "resources" and CONFIG.get("templates")):
                caps[kind] = {}
        return {"protocolVersion": CONFIG.get("version", "2025-11-25"), "capabilities": caps,
                "serverInfo": {"name": "lab09-test", "version": "0.1"}}, None
    if method == "ping":
        return {}, None
    if method == "tools/list":
        tools = [{"name": n, "inputSchema": {"type": "object", "properties": {},
                                             **_TOOL_EXTRAS.get(n, {}).get("schema", {})},
                  **{k: v for k, v in _TOOL_EXTRAS.get(n, {}).items() if k != "schema"}}
                 for n in CONFIG.get("tools", [])]
        return page(tools, params, "tools"), None
    if method == "tools/call":
        result = call_tool(params or {})
        return (None, result) if "code" in result else (result, None)
    if method == "resources/list":
        items = [{"uri": u, "name": f"resource {i}"}
                 for i, u in enumerate(CONFIG.get("resources", {}))]
        return page(items, params, "resources"), None
    if method == "resources/templates/list":
        items = [{"uriTemplate": t, "name": f"template {i}"}
                 for i, t in enumerate(CONFIG.get("templates", []))]
        return page(items, params, "resourceTemplates"), None
    if method == "resources/read":
        uri = (params or {}).get("uri")
        text = CONFIG.get("resources", {}).get(uri)
        if text is None:
            return None, {"code": CONFIG.get("missing", -32002), "message": f"no {uri}"}
        return {"contents": [{"uri": uri, "mimeType": "text/plain", "text": text}]}, None
    if method == "prompts/list":
        return page([{"name": n} for n in CONFIG.get("prompts", [])], params, "prompts"), None
    if method == "prompts/get":
        name = (params or {}).get("name")
        if name not in CONFIG.get("prompts", []):
            return None, {"code": -32602, "message": f"no prompt {name}"}
        args = (params or {}).get("arguments") or {}
        words = " ".join(f"{k}={args[k]}" for k in sorted(args))
        return {"messages": [
            {"role": "user", "content": {"type": "resource", "resource": {
                "uri": f"prompt://{name}", "text": f"about {name}"}}},
            {"role": "user", "content": {"type": "text", "text": f"{name}: {words}"}},
            {"role": "assistant", "content": {"type": "image", "data": "iVBORw0KGgo=",
                                              "mimeType": "image/png"}}]}, None
    return None, {"code": -32601, "message": f"no method {method}"}


def _orphaned():
    parent = os.getppid()
    while os.getppid() == parent:
        time.sleep(0.2)
    os._exit(0)


def main():
    threading.Thread(target=_orphaned, daemon=True).start()
    log = open(CONFIG["log"], "a", encoding="utf-8") if CONFIG.get("log") else None
    requests = 0
    for n in range(CONFIG.get("noise", 0)):
        OUT.write("starting the lab 09 test server...\n" if n % 2 == 0 else "\n")
    OUT.flush()
    time.sleep(CONFIG.get("slow_start", 0))
    extra = 0
    for line in sys.stdin:
        if log is not None:
            log.write(line if line.endswith("\n") else line + "\n")
            log.flush()
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if not isinstance(message, dict) or "id" not in message or "method" not in message:
            continue  # notifications and responses to our pings
        method = message["method"]
        requests += 1
        if CONFIG.get("die_after") and requests >= CONFIG["die_after"]:
            os._exit(3)
        if method in CONFIG.get("silent", []):
            continue
        held = CONFIG.get("slow", {}).get(method, 0)
        until = time.monotonic() + held
        while time.monotonic() < until:
            send({"jsonrpc": "2.0", "method": "notifications/message",
                  "params": {"level": "info", "data": f"still working on {method}"}})
            time.sleep(0.1)
        if CONFIG.get("chatty"):
            extra += 1
            send({"jsonrpc": "2.0", "method": "notifications/message",
                  "params": {"level": "info", "data": f"handling {method}"}})
            send({"jsonrpc": "2.0", "id": f"server-{extra}", "method": "ping"})
        if CONFIG.get("stray"):
            stray_id = {"text": str(message["id"]), "next": message["id"] + 1}.get(
                CONFIG.get("stray_ids"), 987654) if isinstance(message["id"], int) else 987654
            send({"jsonrpc": "2.0", "id": stray_id, "result": {}})
        if CONFIG.get("scalars"):
            OUT.write(["42", '"text"', "[1, 2]", "null", "true"][requests % 5] + "\n")
            OUT.flush()
        result, error = answer(method, message.get("params"))
        if error is not None and CONFIG.get("errors_data"):
            error = {**error, "data": {"method": method, "detail": "from the lab 09 server"}}
        reply = {"jsonrpc": "2.0", "id": message["id"]}
        reply.update({"error": error} if error is not None else {"result": result})
        send(reply)
    time.sleep(CONFIG.get("slow_exit", 0))
    if CONFIG.get("linger"):
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            time.sleep(0.2)


if __name__ == "__main__":
    main()
