"""Lab 05's test server: a JSON-RPC peer that behaves well or badly on request.

Run as a plain script (``python -I lab05_server.py``): standard library only, so it starts
in a few tens of milliseconds. It reads newline-delimited JSON on standard input and answers
on standard output; what it does depends on the method of each request:

==============  ==============================================================================
``echo``        answers ``{"echo": params}``
``notify``      sends ``params.count`` notifications (``notifications/message``), then answers
``notify_later`` answers at once, then sends one notification a moment later (nothing waits)
``error``       answers with the error ``params.code`` / ``params.message`` (and ``params.data``
                when given)
``stray``       first sends a response for an id nobody used (each of ``params.ids`` when
                given: ids of any JSON type, ``true`` and ``1.0`` included), then its own answer
``junk``        first writes lines a real peer may write: not JSON, blank, a JSON scalar, an
                array, an object that is no message, and a request of its own (a ``method``
                and an ``id``: no notification); then its own answer
``shape``       answers ``{"params": params}``, or ``{"params": "absent"}`` when there were none
``hold``        is not answered until a ``release`` arrives
``release``     waits for ``params.count`` held requests, answers them newest first, then itself
``late``        answers after ``params.delay`` seconds (on a thread of its own)
``silent``      is never answered
``cancelled``   answers with the methods of the requests a ``notifications/cancelled`` named,
                and the reasons it gave
``die``         exits at once (status 3), answering nothing
``linger``      answers at once; at the end of its input it then waits ``params.seconds``
                before it exits, its output still open (a server slow to go: the reader
                does not end when stdin closes)
``hangup``      closes its standard output (the client reads the end of the stream) and goes
                on reading its input, answering nothing, until the input ends
==============  ==============================================================================

Messages without a ``method`` (a client answering the server's own request) are read and
dropped. Every request id must be new, and an integer or a string, and ``params``, when present, an
object or an array: otherwise the answer is the error -32600, so a session that reuses ids
sees it fail. End of input ends the server.

When it exits (end of input, or ``die``) it writes on standard error one line of JSON: how it
ended and how many messages of each method it received. The checks read it, to know that the
requests really went through the pipe.
"""

import json
import os
import sys
import threading
import time

_out = sys.stdout.buffer
_lock = threading.Lock()


def send(message):
    data = json.dumps(message, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"
    with _lock:
        _out.write(data)
        _out.flush()


def answer(request_id, result):
    send({"jsonrpc": "2.0", "id": request_id, "result": result})


def fail(request_id, code, message, data=None):
    error = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    send({"jsonrpc": "2.0", "id": request_id, "error": error})


def raw(line):
    with _lock:
        _out.write(line)
        _out.flush()


received = {}  # method -> how many messages named it
hung_up = False  # after "hangup": stdout is closed, stdin still read (and nothing answered)
linger = 0.0  # seconds to wait at the end of the input before exiting ("linger")


def summary(how):
    sys.stderr.write(json.dumps({"how": how, "received": received}) + "\n")
    sys.stderr.flush()


def main():
    global hung_up, linger
    if os.environ.get("MCPKIT_LAB05_READY"):  # the grader's checks time requests from here
        sys.stderr.write('{"ready": true}\n')
        sys.stderr.flush()
    seen = {}  # id -> method
    cancelled = []
    reasons = []
    held = []
    for line in sys.stdin.buffer:
        try:
            message = json.loads(line)
        except ValueError:
            fail(None, -32700, "parse error")
            continue
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            fail(None, -32600, "not JSON-RPC 2.0")
            continue
        if "method" not in message:
            continue  # a response to the request "junk" sends: nothing to do
        method = message.get("method")
        received[str(method)] = received.get(str(method), 0) + 1
        if hung_up:
            continue
        absent = "params" not in message
        params = message.get("params", {})
        if not isinstance(params, dict | list):
            fail(message.get("id"), -32600, f"params must be an object or an array, not {params!r}")
            continue
        if isinstance(params, list):
            params = {}
        if "id" not in message:
            if method == "notifications/cancelled" and isinstance(params, dict):
                cancelled.append(seen.get(_key(params.get("requestId")), "unknown"))
                reasons.append(params.get("reason", "(none)"))
            continue
        request_id = message["id"]
        if type(request_id) not in (int, str):
            fail(None, -32600, f"request ids are integers or strings, not {request_id!r}")
            continue
        if _key(request_id) in seen:
            fail(request_id, -32600, f"id {request_id!r} was already used")
            continue
        seen[_key(request_id)] = method
        if method == "echo":
            answer(request_id, {"echo": params})
        elif method == "notify":
            count = params.get("count", 1)
            for n in range(count):
                send({"jsonrpc": "2.0", "method": "notifications/message",
                      "params": {"level": "info", "data": f"{n + 1} of {count}"}})
            answer(request_id, {"sent": count})
        elif method == "notify_later":
            answer(request_id, {})
            threading.Timer(0.05, send, [{"jsonrpc": "2.0", "method": "notifications/message",
                                          "params": {"level": "info", "data": "later"}}]
                            ).start()
        elif method == "error":
            fail(request_id, params.get("code", -32000), params.get("message", "error"),
                 params.get("data"))
        elif method == "stray":
            for stray_id in params.get("ids", ["no-such-request"]):
                answer(stray_id, {"stray": True})
            answer(request_id, {"ok": True})
        elif method == "junk":
            for line in (b"this line is not JSON\n", b"\n", b"  \r\n", b"7\n", b"[1,2]\n",
                         b'"text"\n', b"null\n", b'{"jsonrpc":"2.0"}\n', b"{\"half\":\n",
                         b"\xff\xfe\n",
                         b'{"jsonrpc":"2.0","id":"server-1","method":"ping"}\n'):
                raw(line)
            answer(request_id, {"after": "junk"})
        elif method == "shape":
            answer(request_id, {"params": "absent" if absent else message.get("params")})
        elif method == "hold":
            held.append((request_id, params))
        elif method == "release":
            deadline = time.monotonic() + 3
            # The held requests may still be on their way (their callers are other threads).
            while len(held) < params.get("count", 0) and time.monotonic() < deadline:
                more = sys.stdin.buffer.readline()
                if not more:
                    return
                extra = json.loads(more)
                received[str(extra.get("method"))] = received.get(str(extra.get("method")), 0) + 1
                if extra.get("method") == "hold" and "id" in extra:
                    seen[_key(extra["id"])] = "hold"
                    held.append((extra["id"], extra.get("params") or {}))
            for held_id, held_params in reversed(held):
                answer(held_id, {"held": held_params})
            answer(request_id, {"released": len(held)})
            held.clear()
        elif method == "late":
            threading.Timer(params.get("delay", 0.2), answer,
                            [request_id, {"late": True}]).start()
        elif method == "silent":
            pass
        elif method == "cancelled":
            answer(request_id, {"cancelled": list(cancelled), "reasons": list(reasons)})
        elif method == "linger":
            linger = float(params.get("seconds", 1.0))
            answer(request_id, {"lingering": linger})
        elif method == "hangup":
            fd = _out.fileno()
            _out.close()  # (sys.stdout's buffer does not own fd 1)
            os.close(fd)  # the client reads the end of the stream; its writes still succeed
            hung_up = True
        elif method == "die":
            _out.flush()
            summary("die")
            os._exit(3)  # at once: no pending timer holds it up
        else:
            fail(request_id, -32601, f"no method {method!r}")


def _key(request_id):
    return (type(request_id).__name__, request_id)


if __name__ == "__main__":
    try:
        main()
        time.sleep(linger)
        summary("hangup" if hung_up else "eof")
    except (BrokenPipeError, KeyboardInterrupt):
        pass
