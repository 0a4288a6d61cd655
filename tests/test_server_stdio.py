"""The server over real pipes: both eras, every feature, and bad input of every kind.

Every message the server emits is validated against the JSON Schema of the revision the
test speaks (see conftest.Peer).
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading

import pytest
from conftest import MODERN, ROOT, SERVERS, Peer, modern_meta

NOTES = "mcpkit.examples.notes:server"
VERBS = "mcpkit.examples.verbs:server"
WORKBENCH = str(SERVERS / "workbench.py")
LEGACY = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"]


# -- legacy era --------------------------------------------------------------------------


@pytest.mark.parametrize("version", LEGACY)
def test_legacy_session_covers_every_feature(peer_factory, version):
    peer = peer_factory(NOTES, revision=version)
    init = peer.initialize()["result"]
    assert init["protocolVersion"] == version
    assert init["serverInfo"]["name"] == "notes"
    assert set(init["capabilities"]) >= {"tools", "resources", "prompts", "logging"}

    tools = peer.request("tools/list")["result"]["tools"]
    assert [t["name"] for t in tools] == ["notes_list", "notes_search", "notes_create",
                                          "notes_delete"]
    delete = tools[3]
    if version >= "2025-03-26":
        assert delete["annotations"]["destructiveHint"] is True
    else:
        assert "annotations" not in delete  # did not exist in 2024-11-05
    assert ("title" in delete) == (version >= "2025-06-18")

    found = peer.request("tools/call", {"name": "notes_search",
                                        "arguments": {"query": "mcp"}})["result"]
    assert json.loads(found["content"][0]["text"])[0]["title"] == "MCP"

    templates = peer.request("resources/templates/list")["result"]["resourceTemplates"]
    assert templates[0]["uriTemplate"] == "notes://{id}"
    note = peer.request("resources/read", {"uri": "notes://2"})["result"]["contents"][0]
    assert note["text"].startswith("# MCP")
    missing = peer.request("resources/read", {"uri": "notes://999"})["error"]
    assert missing["code"] == -32002 and missing["data"] == {"uri": "notes://999"}

    prompt = peer.request("prompts/get", {"name": "review_note", "arguments": {"id": "1"}})
    assert prompt["result"]["messages"][0]["content"]["resource"]["uri"] == "notes://1"
    no_arg = peer.request("prompts/get", {"name": "review_note", "arguments": {}})["error"]
    assert no_arg["code"] == -32602 and "id" in no_arg["message"]

    completion = peer.request("completion/complete", {
        "ref": {"type": "ref/resource", "uri": "notes://{id}"},
        "argument": {"name": "id", "value": "2"}})["result"]["completion"]
    assert completion["values"] == ["2"]
    assert peer.request("ping")["result"] == {}
    assert peer.close() == 0


def test_initialize_with_an_unknown_version_gets_the_latest_legacy_one(peer_factory):
    peer = peer_factory(NOTES, revision="2025-11-25")
    assert peer.initialize("1999-01-01")["result"]["protocolVersion"] == "2025-11-25"


def test_requests_before_initialize_are_rejected_but_ping_works(peer_factory):
    peer = peer_factory(NOTES, revision="2025-11-25")
    assert peer.request("ping")["result"] == {}
    error = peer.request("tools/list")["error"]
    assert error["code"] == -32602
    assert "initialize" in error["message"]
    assert peer.initialize()["result"]["protocolVersion"] == "2025-11-25"
    assert peer.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                       "clientInfo": {"name": "t", "version": "0"}})["error"]


def test_legacy_input_errors_follow_the_revision(peer_factory):
    old = peer_factory(NOTES, revision="2025-06-18")
    old.initialize()
    error = old.request("tools/call", {"name": "notes_search", "arguments": {}})["error"]
    assert error["code"] == -32602 and "query" in error["message"]
    new = peer_factory(NOTES, revision="2025-11-25")
    new.initialize()
    result = new.request("tools/call", {"name": "notes_search",
                                        "arguments": {"query": 3}})["result"]
    assert result["isError"] is True
    assert "query" in result["content"][0]["text"]


def test_legacy_subscriptions_list_changed_logging_and_progress(peer_factory):
    peer = peer_factory(WORKBENCH, revision="2025-11-25")
    peer.initialize()
    assert peer.request("resources/subscribe", {"uri": "mem://greeting"})["result"] == {}
    peer.request("tools/call", {"name": "touch", "arguments": {"uri": "mem://greeting"}})
    assert {"uri": "mem://greeting"} in [m.get("params") for m in peer.seen]
    peer.request("resources/unsubscribe", {"uri": "mem://greeting"})
    peer.request("tools/call", {"name": "touch", "arguments": {"uri": "mem://greeting"}})
    assert peer.seen == []

    peer.request("tools/call", {"name": "add_tool", "arguments": {"name": "fresh"}})
    assert [m["method"] for m in peer.seen] == ["notifications/tools/list_changed"]

    assert peer.request("logging/setLevel", {"level": "info"})["result"] == {}
    peer.request("tools/call", {"name": "report", "arguments": {"steps": 2},
                                "_meta": {"progressToken": "tok"}})
    progress = [m["params"] for m in peer.seen if m["method"] == "notifications/progress"]
    assert [p["progress"] for p in progress] == [0, 1, 2]
    assert all(p["progressToken"] == "tok" for p in progress)
    logs = [m["params"] for m in peer.seen if m["method"] == "notifications/message"]
    assert [entry["level"] for entry in logs] == ["info"] * 3  # debug is below the level


def test_legacy_elicitation_is_a_request_to_the_client(peer_factory):
    peer = peer_factory(WORKBENCH, revision="2025-11-25")
    peer.initialize(capabilities={"elicitation": {}})
    peer.send({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
               "params": {"name": "ask_name", "arguments": {}}})
    question = peer.next()
    assert question["method"] == "elicitation/create"
    assert question["params"]["requestedSchema"]["required"] == ["name"]
    peer.send({"jsonrpc": "2.0", "id": question["id"],
               "result": {"action": "accept", "content": {"name": "Ada"}}})
    answer = peer.next()
    assert answer["id"] == 7
    assert answer["result"]["content"][0]["text"] == "Hello, Ada!"


def test_legacy_tool_needing_an_undeclared_capability_reports_it(peer_factory):
    peer = peer_factory(WORKBENCH, revision="2025-11-25")
    peer.initialize()
    result = peer.request("tools/call", {"name": "ask_name", "arguments": {}})["result"]
    assert result["isError"] and "elicitation" in result["content"][0]["text"]


def test_cancellation_stops_the_call_and_suppresses_its_response(peer_factory):
    peer = peer_factory(WORKBENCH, revision="2025-11-25")
    peer.initialize()
    peer.send({"jsonrpc": "2.0", "id": "slow-1", "method": "tools/call",
               "params": {"name": "wait_for_cancel", "arguments": {"seconds": 5}}})
    duplicate = peer.request("tools/call", {"name": "echo", "arguments": {"text": "x"}},
                             id="slow-1")
    assert duplicate["error"]["code"] == -32600 and "in flight" in duplicate["error"]["message"]
    peer.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
               "params": {"requestId": "slow-1", "reason": "test"}})
    after = peer.request("tools/call", {"name": "echo", "arguments": {"text": "next"}})
    assert after["result"]["content"][0]["text"] == "next"
    assert peer.seen == []  # no response for the cancelled call


def test_pagination_walks_every_page_and_rejects_bad_cursors(peer_factory):
    peer = peer_factory(WORKBENCH, revision="2025-11-25")
    peer.initialize()
    names, cursor = [], None
    while True:
        page = peer.request("tools/list", {"cursor": cursor} if cursor else {})["result"]
        assert len(page["tools"]) <= 2
        names += [t["name"] for t in page["tools"]]
        cursor = page.get("nextCursor")
        if not cursor:
            break
    assert names[:3] == ["echo", "noisy", "crash"] and len(names) == len(set(names)) == 10
    assert peer.request("tools/list", {"cursor": "not-a-cursor"})["error"]["code"] == -32602


# -- modern era --------------------------------------------------------------------------


def test_modern_discover_and_calls_need_no_handshake(peer_factory):
    peer = peer_factory(NOTES)
    discover = peer.modern("server/discover")["result"]
    assert discover["supportedVersions"][0] == MODERN
    assert "2025-11-25" in discover["supportedVersions"]
    assert discover["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "notes"
    assert discover["resultType"] == "complete"

    tools = peer.modern("tools/list")["result"]
    assert tools["ttlMs"] >= 0 and tools["cacheScope"] in ("public", "private")
    called = peer.modern("tools/call", {"name": "notes_list", "arguments": {}})["result"]
    assert called["resultType"] == "complete"
    read = peer.modern("resources/read", {"uri": "notes://1"})["result"]
    assert read["contents"][0]["text"].startswith("# Shopping") and "ttlMs" in read
    missing = peer.modern("resources/read", {"uri": "notes://404"})["error"]
    assert missing["code"] == -32602 and missing["data"]["uri"] == "notes://404"


def test_modern_request_meta_is_checked(peer_factory):
    peer = peer_factory(NOTES)
    wrong = peer.modern("tools/list", **{"io.modelcontextprotocol/protocolVersion": "1900-01-01"})
    assert wrong["error"]["code"] == -32022
    assert wrong["error"]["data"]["requested"] == "1900-01-01"
    assert MODERN in wrong["error"]["data"]["supported"]

    meta = modern_meta()
    del meta["io.modelcontextprotocol/clientCapabilities"]
    missing = peer.request("tools/list", {"_meta": meta})["error"]
    assert missing["code"] == -32602 and "clientCapabilities" in missing["message"]

    no_info = modern_meta()
    del no_info["io.modelcontextprotocol/clientInfo"]
    assert "result" in peer.request("tools/list", {"_meta": no_info})

    for legacy_only in ("ping", "logging/setLevel", "resources/subscribe"):
        assert peer.modern(legacy_only, {"level": "info", "uri": "x"})["error"]["code"] == -32601


def test_modern_logging_only_when_the_request_asks(peer_factory):
    peer = peer_factory(WORKBENCH)
    peer.modern("tools/call", {"name": "report", "arguments": {"steps": 1}})
    assert peer.seen == []
    peer.modern("tools/call", {"name": "report", "arguments": {"steps": 1}},
                **{"io.modelcontextprotocol/logLevel": "debug", "progressToken": 5})
    methods = [m["method"] for m in peer.seen]
    assert methods.count("notifications/message") == 4
    assert methods.count("notifications/progress") == 2


def test_modern_input_required_round_trip(peer_factory):
    peer = peer_factory(WORKBENCH)
    caps = {"io.modelcontextprotocol/clientCapabilities": {"elicitation": {}, "sampling": {}}}
    first = peer.modern("tools/call", {"name": "ask_name", "arguments": {}}, **caps)["result"]
    assert first["resultType"] == "input_required"
    assert first["inputRequests"]["user_name"]["method"] == "elicitation/create"
    assert peer.seen == []  # the modern era never sends requests to the client

    retry = {"name": "ask_name", "arguments": {},
             "inputResponses": {"user_name": {"action": "accept", "content": {"name": "Ada"}}},
             "requestState": first["requestState"]}
    done = peer.modern("tools/call", retry, **caps)["result"]
    assert done["resultType"] == "complete"
    assert done["content"][0]["text"] == "Hello, Ada!"

    wrong_key = dict(retry, inputResponses={"other": {"action": "accept"}})
    again = peer.modern("tools/call", wrong_key, **caps)["result"]
    assert again["resultType"] == "input_required"  # ask again, not an error

    bad_answer = dict(retry, inputResponses={"user_name": {"action": "accept",
                                                           "content": {"nom": "x"}}})
    assert peer.modern("tools/call", bad_answer, **caps)["result"]["resultType"] == \
        "input_required"

    state = first["requestState"]
    tampered = dict(retry, requestState=state[:-2] + ("A" if state[-2] != "A" else "B") + "x")
    error = peer.modern("tools/call", tampered, **caps)["error"]
    assert error["code"] == -32602 and "requestState" in error["message"]

    other_call = dict(retry, name="two_rounds")
    assert peer.modern("tools/call", other_call, **caps)["error"]["code"] == -32602

    no_caps = peer.modern("tools/call", {"name": "ask_name", "arguments": {}})["error"]
    assert no_caps["code"] == -32021
    assert no_caps["data"]["requiredCapabilities"] == {"elicitation": {}}


def test_modern_multi_round_keeps_earlier_answers_in_request_state(peer_factory):
    peer = peer_factory(WORKBENCH)
    caps = {"io.modelcontextprotocol/clientCapabilities": {"elicitation": {}, "sampling": {}}}
    call = {"name": "two_rounds", "arguments": {}}
    r1 = peer.modern("tools/call", call, **caps)["result"]
    assert list(r1["inputRequests"]) == ["step1"]
    r2 = peer.modern("tools/call", dict(call, requestState=r1["requestState"], inputResponses={
        "step1": {"action": "accept", "content": {"a": "red"}}}), **caps)["result"]
    assert list(r2["inputRequests"]) == ["step2"]
    assert r2["requestState"] != r1["requestState"]
    sample = {"role": "assistant", "content": {"type": "text", "text": "blue"}, "model": "m"}
    r3 = peer.modern("tools/call", dict(call, requestState=r2["requestState"],
                                        inputResponses={"step2": sample}), **caps)["result"]
    assert r3["content"][0]["text"] == "red then blue"


def test_modern_subscriptions_listen(peer_factory):
    peer = peer_factory(WORKBENCH)
    peer.send({"jsonrpc": "2.0", "id": "listen-1", "method": "subscriptions/listen",
               "params": {"_meta": modern_meta(), "notifications": {
                   "toolsListChanged": True, "promptsListChanged": True,
                   "resourceSubscriptions": ["mem://greeting"]}}})
    peer.sent_methods["listen-1"] = "subscriptions/listen"
    ack = peer.next()
    assert ack["method"] == "notifications/subscriptions/acknowledged"
    assert ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == "listen-1"
    assert ack["params"]["notifications"]["toolsListChanged"] is True

    seen = []
    for name, arguments in (("add_tool", {"name": "fresh"}), ("touch", {"uri": "mem://greeting"}),
                            ("touch", {"uri": "mem://other"})):
        peer.modern("tools/call", {"name": name, "arguments": arguments})
        seen += peer.seen
    tagged = [m for m in seen if m.get("method", "").startswith("notifications/")]
    assert [m["method"] for m in tagged] == ["notifications/tools/list_changed",
                                             "notifications/resources/updated"]
    assert all(m["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == "listen-1"
               for m in tagged)

    peer.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
               "params": {"requestId": "listen-1"}})
    final = peer.next()
    assert final["id"] == "listen-1" and final["result"]["resultType"] == "complete"
    peer.modern("tools/call", {"name": "add_tool", "arguments": {"name": "fresh2"}})
    assert peer.seen == []


def test_verbs_server_scope_errors_and_unknown_tool(peer_factory):
    peer = peer_factory(VERBS)
    ok = peer.modern("tools/call", {"name": "conjugate",
                                    "arguments": {"verb": "go", "subject": "she"}})
    assert ok["result"]["content"][0]["text"] == "she goes"
    past = peer.modern("tools/call", {"name": "lookup_irregular_verb",
                                      "arguments": {"verb": "write"}})["result"]
    assert past["structuredContent"]["participle"] == "written"
    out_of_scope = peer.modern("tools/call", {"name": "lookup_spanish",
                                              "arguments": {"verb": "zorble"}})["result"]
    assert out_of_scope["isError"] is True and "zorble" in out_of_scope["content"][0]["text"]
    unknown = peer.modern("tools/call", {"name": "fly", "arguments": {}})["error"]
    assert unknown["code"] == -32602 and "fly" in unknown["message"]


# -- bad input ---------------------------------------------------------------------------


def test_bad_input_gets_specific_errors_and_the_server_keeps_serving(peer_factory):
    peer = peer_factory(WORKBENCH, "--max-message-size", "2048")
    cases = [
        (b"{not json\n", -32700),
        (b"\xff\xfe\n", -32700),
        (b"42\n", -32600),
        (b'[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]\n', -32600),
        (b'{"jsonrpc":"1.0","id":1,"method":"tools/list"}\n', -32600),
        (b'{"jsonrpc":"2.0","id":true,"method":"tools/list"}\n', -32600),
        (b'{"jsonrpc":"2.0","id":1,"method":"x","result":{}}\n', -32600),
        (b'{"jsonrpc":"2.0","id":1,"method":"tools/list","params":[1]}\n', -32600),
        (b'{"jsonrpc":"2.0","method":"' + b"x" * 5000 + b'"}\n', -32600),
    ]
    for raw, code in cases:
        peer.write(raw)
        reply = peer.next()
        assert reply["error"]["code"] == code, (raw[:40], reply)
        assert reply["error"]["message"]
    # A cancellation whose requestId cannot be an id, a response nobody asked for, and
    # unknown notifications: ignored, never answered.
    peer.write(b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":[1]}}\n')
    peer.write(b'{"jsonrpc":"2.0","id":99,"result":{}}\n')
    peer.write(b'{"jsonrpc":"2.0","method":"notifications/whatever"}\n')
    unknown = peer.modern("nope/nothing")
    assert unknown["error"]["code"] == -32601
    assert peer.seen == []
    crashed = peer.modern("tools/call", {"name": "crash", "arguments": {}})["result"]
    assert crashed["isError"] and "boom" in crashed["content"][0]["text"]
    assert "Traceback" not in json.dumps(crashed)
    assert peer.modern("tools/call", {"name": "echo", "arguments": {"text": "alive"}})[
        "result"]["content"][0]["text"] == "alive"


def test_stdout_carries_only_protocol_messages(peer_factory):
    peer = peer_factory(WORKBENCH)
    result = peer.modern("tools/call", {"name": "noisy", "arguments": {"text": "hi"}})
    assert result["result"]["content"][0]["text"] == "HI"
    assert peer.close() == 0
    assert all(json.loads(line) for line in peer.raw_lines)
    assert "must not corrupt" in peer.stderr and "nor this raw write" in peer.stderr
    assert "an import-time print" in peer.stderr  # printed before the server even ran


def test_content_length_framing(peer_factory):
    peer = peer_factory(NOTES, "--framing", "content-length")
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "server/discover",
                       "params": {"_meta": modern_meta()}}).encode()
    peer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    assert peer.close() == 0
    out = b"".join(peer.raw_lines)
    header, _, payload = out.partition(b"\r\n\r\n")
    assert header == b"Content-Length: %d" % len(payload)
    assert json.loads(payload)["result"]["supportedVersions"][0] == MODERN


def test_exits_cleanly_on_eof_and_survives_a_closed_stdout():
    peer = Peer(NOTES)
    assert peer.close() == 0
    # A client that stops reading: the server's writes fail with EPIPE.
    proc = subprocess.Popen([sys.executable, "-m", "mcpkit", "serve", NOTES],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, cwd=ROOT)
    proc.stdout.close()
    request = {"jsonrpc": "2.0", "id": 1, "method": "server/discover",
               "params": {"_meta": modern_meta()}}
    _, err = proc.communicate((json.dumps(request) + "\n").encode(), timeout=10)
    assert proc.returncode == 0, err
    assert b"Traceback" not in err and b"went away" in err


def test_mcpkit_serve_reports_a_bad_target():
    peer = Peer("no_such_module:server")
    assert peer.close() == 2
    assert "cannot import" in peer.stderr


def test_batches_are_answered_as_one_array_in_2025_03_26_only(peer_factory):
    peer = peer_factory(NOTES, revision="2025-03-26")
    peer.initialize()
    peer.write(json.dumps([
        {"jsonrpc": "2.0", "id": "a", "method": "tools/list"},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": "b", "method": "tools/call",
         "params": {"name": "notes_list", "arguments": {}}},
        {"jsonrpc": "2.0", "id": "c"},
    ]).encode() + b"\n")
    batch = peer.next()
    assert isinstance(batch, list)
    assert sorted(str(r.get("id")) for r in batch) == ["a", "b", "c"]
    assert next(r for r in batch if r["id"] == "c")["error"]["code"] == -32600
    peer.write(b"[]\n")
    assert peer.next()["error"]["code"] == -32600

    later = peer_factory(NOTES, revision="2025-06-18")
    later.initialize()
    later.write(b'[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]\n')
    assert later.next()["error"]["code"] == -32600


def test_many_requests_in_one_chunk_all_answered_whole_with_threaded_tools_between():
    """The reader writes the answers of one chunk together; tools that take a Context answer
    (and report progress) from threads of their own meanwhile. Every line that comes out is
    whole JSON, and every request gets exactly one answer."""
    server = subprocess.Popen([sys.executable, "-m", "mcpkit", "serve", WORKBENCH],
                              stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        calls = []
        for i in range(1, 301):
            if i % 10 == 0:  # on a thread of its own, with four progress notifications
                params = {"name": "report", "arguments": {"steps": 3},
                          "_meta": {**modern_meta(), "progressToken": f"p{i}"}}
            else:
                params = {"name": "echo", "arguments": {"text": "x" * (i * 37 % 900)},
                          "_meta": modern_meta()}
            calls.append({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": params})
        data = b"".join(json.dumps(c).encode() + b"\n" for c in calls)

        def write() -> None:  # a thread: the answers fill the other pipe meanwhile
            server.stdin.write(data)
            server.stdin.flush()

        writer = threading.Thread(target=write, daemon=True)
        writer.start()
        lines = _lines_within(server.stdout, 30.0)
        answered: dict[int, int] = {}
        progress = 0
        while len(answered) < 300:
            line = next(lines)
            assert line.endswith(b"\n"), line[-100:]
            message = json.loads(line)
            if message.get("method") == "notifications/progress":
                progress += 1
                continue
            answered[message["id"]] = answered.get(message["id"], 0) + 1
            assert "result" in message, message
        assert sorted(answered) == list(range(1, 301))
        assert progress == 30 * 4  # steps 0..3
        writer.join(5)
        server.stdin.close()
        assert server.wait(10) == 0
    finally:
        if server.poll() is None:
            server.kill()
            server.wait(5)
        server.stdout.close()


def _lines_within(stream, seconds: float):
    """The lines of ``stream`` as they come; fails the test if they stop for ``seconds``."""
    import os
    import select

    fd, buffered = stream.fileno(), b""
    while True:
        while b"\n" in buffered:
            line, buffered = buffered.split(b"\n", 1)
            yield line + b"\n"
        ready, _, _ = select.select([fd], [], [], seconds)
        assert ready, f"no output for {seconds} s"
        chunk = os.read(fd, 65536)
        assert chunk, "the server closed its stdout"
        buffered += chunk
