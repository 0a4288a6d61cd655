"""The sans-IO client session, with plain values: no process, no socket, no thread.

Each test plays the front: it takes the steps a procedure yields and hands back what a
server would have answered, or feeds the session bytes and looks at what settled.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from mcpkit import versions
from mcpkit.session import (
    Answer,
    Call,
    Cancel,
    ClientSession,
    ConnectionClosed,
    ProtocolError,
    RequestTimeout,
    ResponseTooLarge,
    Run,
    Send,
    ServerError,
    outcome,
)

MODERN = versions.LATEST_VERSION
LEGACY = versions.LATEST_LEGACY_VERSION
DISCOVERED = {"supportedVersions": [MODERN],
              "capabilities": {"tools": {"listChanged": True}, "prompts": {}},
              "_meta": {versions.META_SERVER_INFO: {"name": "plain", "version": "1"}}}


class Waiter:
    """What a front puts in the pending table: here it only records how it settled."""

    def __init__(self, call: Call) -> None:
        self.id, self.method = call.id, call.method
        self.on_progress, self.notify_cancel = call.on_progress, call.notify_cancel
        self.response: dict[str, Any] | None = None
        self.error: BaseException | None = None

    def _resolve(self, response: dict[str, Any] | None = None,
                 error: BaseException | None = None) -> None:
        self.response, self.error = response, error


def drive(steps: Any, server: Any) -> tuple[Any, list[Any]]:
    """Run a procedure; ``server(step)`` answers each Call/Run (or raises). Returns the
    procedure's value and every step it took."""
    taken: list[Any] = []
    value: Any = None
    error: Exception | None = None
    while True:
        try:
            step = steps.send(value) if error is None else steps.throw(error)
        except StopIteration as done:
            return done.value, taken
        taken.append(step)
        value = error = None
        try:
            value = server(step)
        except Exception as exc:
            error = exc


def modern_session(**options: Any) -> ClientSession:
    session = ClientSession(name="plain", listen=False, **options)
    drive(session.handshake(), lambda step: DISCOVERED)
    return session


def test_the_probe_finds_a_modern_server_and_every_request_then_carries_meta():
    session = ClientSession(name="plain", listen=False)
    _, steps = drive(session.handshake(), lambda step: DISCOVERED)
    assert [s.method for s in steps] == ["server/discover"]
    assert steps[0].stamp is False and steps[0].notify_cancel is False
    assert (session.era, session.protocol_version) == ("modern", MODERN)
    assert session.server_info["name"] == "plain"
    request = json.loads(session.encode(session.call("tools/list", {"cursor": "x"})))
    assert request["params"]["cursor"] == "x"
    assert request["params"]["_meta"][versions.META_PROTOCOL_VERSION] == MODERN
    assert request == session.message(session.call("tools/list", {"cursor": "x"})) | {
        "id": request["id"]}


def test_silence_means_legacy_initialize_then_initialized():
    session = ClientSession(name="old")

    def server(step: Any) -> Any:
        if isinstance(step, Call) and step.method == "server/discover":
            raise RequestTimeout(step.method, step.timeout or 0, step.id)
        if isinstance(step, Call):
            return {"protocolVersion": LEGACY, "capabilities": {}, "serverInfo": {"name": "o"}}
        return None

    _, steps = drive(session.handshake(), server)
    assert [getattr(s, "method", None) or s.message["method"] for s in steps] == [
        "server/discover", "initialize", "notifications/initialized"]
    assert isinstance(steps[-1], Send)
    assert (session.era, session.protocol_version) == ("legacy", LEGACY)
    assert "_meta" not in json.loads(session.encode(session.call("ping")))["params"]


def test_unsupported_version_is_retried_with_a_mutual_one_or_falls_back_to_legacy():
    session = ClientSession(name="picky", listen=False)
    answers = iter([ServerError(-32022, "no", {"supported": [MODERN]}), DISCOVERED])

    def retry(step: Any) -> Any:
        answer = next(answers)
        if isinstance(answer, Exception):
            raise answer
        return answer

    _, steps = drive(session.handshake(), retry)
    assert [s.method for s in steps] == ["server/discover", "server/discover"]
    assert session.era == "modern"

    old = ClientSession(name="old-only")

    def legacy_only(step: Any) -> Any:
        if isinstance(step, Call) and step.method == "server/discover":
            raise ServerError(-32022, "no", {"supported": [LEGACY]})
        return {"protocolVersion": LEGACY, "capabilities": {}} if isinstance(step, Call) else None

    drive(old.handshake(), legacy_only)
    assert old.era == "legacy"


def test_input_required_rounds_answer_through_the_callbacks_and_echo_the_state():
    def elicit(params: dict[str, Any]) -> dict[str, Any]:
        return {"action": "accept", "content": {"name": params["message"]}}

    session = modern_session(elicitation=elicit)
    asked = {"resultType": "input_required", "requestState": "s1",
             "inputRequests": {"q": {"method": "elicitation/create",
                                     "params": {"message": "Ada"}}}}
    sent: list[Call] = []

    def server(step: Any) -> Any:
        if isinstance(step, Run):
            return step.function(*step.args)
        sent.append(step)
        return asked if len(sent) == 1 else {"content": [], "resultType": "complete"}

    result, _ = drive(session.call_tool("interview", {"x": 1}), server)
    assert result["resultType"] == "complete"
    first, second = sent
    assert second.id != first.id
    assert second.params["requestState"] == "s1"
    assert second.params["inputResponses"] == {"q": {"action": "accept",
                                                      "content": {"name": "Ada"}}}
    assert second.params["arguments"] == {"x": 1}

    endless = modern_session(elicitation=elicit, max_rounds=2)
    with pytest.raises(ProtocolError, match="after 2 rounds"):
        drive(endless.request("tools/call", {}),
              lambda step: step.function(*step.args) if isinstance(step, Run) else asked)


def test_a_response_settles_its_waiter_and_only_a_json_rpc_2_answer_does():
    session = modern_session()
    good, bad = Waiter(session.call("ping")), Waiter(session.call("ping"))
    session.track(good)
    session.track(bad)
    jobs = session.feed(b'{"jsonrpc":"2.0","id":%d,"result":{"ok":true}}\n'
                        b'{"jsonrpc":"1.0","id":%d,"result":{}}\n' % (good.id, bad.id))
    assert jobs == [] and not session.pending
    assert outcome(good.response or {}, "ping") == {"ok": True}
    assert isinstance(bad.error, ProtocolError) and "JSON-RPC 2.0" in str(bad.error)


def test_an_oversized_answer_fails_its_request_by_id_or_by_elimination():
    session = ClientSession(name="big", max_message_size=1000)
    first, second = Waiter(session.call("a")), Waiter(session.call("b"))
    session.track(first)
    session.track(second)
    session.feed(b'{"jsonrpc":"2.0","id":%d,"result":{"text":"%s"}}\n'
                 % (second.id, b"x" * 2000))
    assert isinstance(second.error, ResponseTooLarge) and first.error is None
    session.feed(b'{"jsonrpc":"2.0","result":{"text":"' + b"y" * 2000 + b'"}}\n')
    assert isinstance(first.error, ResponseTooLarge) and "only request" in str(first.error)


def test_cancellation_follows_the_transport_and_era_rules():
    stdio = modern_session()
    assert stdio.cancel_message(5, "bored")["params"] == {"requestId": 5, "reason": "bored"}
    assert stdio.cancel_message(5, "probe", notify=False) is None
    http = modern_session(transport="http")
    assert http.cancel_message(5, "bored") is None  # closing the stream is the cancel
    legacy_http = ClientSession(transport="http", version="legacy")
    drive(legacy_http.handshake(),
          lambda step: {"protocolVersion": LEGACY, "capabilities": {}}
          if isinstance(step, Call) else None)
    assert legacy_http.cancel_message(5, "bored")["method"] == "notifications/cancelled"


def test_lists_are_paged_cached_and_a_change_storm_costs_one_queued_refetch():
    session = modern_session()
    session._change_channel["tools"] = True  # as if a listen stream was acknowledged
    pages = {None: {"tools": [{"name": "a"}], "nextCursor": "2"},
             "2": {"tools": [{"name": "b"}]}}
    fetches = []

    def server(step: Any) -> Any:
        fetches.append(step.params.get("cursor"))
        return pages[step.params.get("cursor")]

    tools, _ = drive(session.list("tools"), server)
    assert [t["name"] for t in tools] == ["a", "b"] and fetches == [None, "2"]
    assert drive(session.list("tools"), server)[0] == tools and len(fetches) == 2  # cached
    change = b'{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}\n'
    jobs = session.feed(change * 50)
    assert len(jobs) == 1  # coalesced: one re-fetch queued, however many notifications
    assert session.cached_list("tools") == tools  # the last list stays readable
    drive(jobs[0], server)
    assert len(fetches) == 4
    assert len(session.feed(change)) == 1  # the job took its mark off: the next one queues


def test_without_a_change_channel_a_cache_lasts_its_ttl_by_the_given_clock():
    now = [100.0]
    session = modern_session(clock=lambda: now[0])
    calls = []

    def server(step: Any) -> Any:
        calls.append(step)
        return {"prompts": [], "ttlMs": 5000}

    drive(session.list("prompts"), server)
    drive(session.list("prompts"), server)
    assert len(calls) == 1
    now[0] += 6
    drive(session.list("prompts"), server)
    assert len(calls) == 2


def test_notifications_become_jobs_in_order():
    seen: list[Any] = []
    session = modern_session(on_notification=lambda m, p: seen.append(m))
    waiter = Waiter(session.call("tools/call", on_progress=seen.append))
    session.track(waiter)
    jobs = session.receive({"jsonrpc": "2.0", "method": "notifications/progress",
                            "params": {"progressToken": waiter.id, "progress": 1}})
    assert [type(j) for j in jobs] == [Run, Run]
    for job in jobs:
        job.function(*job.args)
    assert seen == [{"progressToken": waiter.id, "progress": 1}, "notifications/progress"]


def test_a_legacy_server_request_is_answered_from_the_callback_alone():
    session = ClientSession(name="asks", sampling=lambda p: {"role": "assistant"})
    [job] = session.receive({"jsonrpc": "2.0", "id": "s1", "method": "sampling/createMessage",
                             "params": {"messages": []}})
    assert isinstance(job, Answer)
    _, steps = drive(job.steps, lambda step: step.function(*step.args)
                     if isinstance(step, Run) else None)
    assert steps[-1].message == {"jsonrpc": "2.0", "id": "s1", "result": {"role": "assistant"}}
    [unknown] = session.receive({"jsonrpc": "2.0", "id": 9, "method": "roots/list"})
    _, steps = drive(unknown.steps, lambda step: None)
    assert steps[-1].message["error"]["code"] == -32601


def test_a_listen_is_settled_by_its_acknowledgment_and_cancelled_on_close():
    session = ClientSession(name="news")
    capabilities = {"supportedVersions": [MODERN],
                    "capabilities": {"tools": {"listChanged": True}}}
    steps = session.handshake()
    assert next(steps).method == "server/discover"
    listen = steps.send(capabilities)
    assert listen.method == "subscriptions/listen"
    waiter = Waiter(listen)
    session.track(waiter)
    session.receive({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
                     "params": {"_meta": {versions.META_SUBSCRIPTION_ID: listen.id},
                                "notifications": {"toolsListChanged": True}}})
    assert waiter.response is not None and not session.pending
    with pytest.raises(StopIteration):
        steps.send(outcome(waiter.response, listen.method))
    assert session._change_channel["tools"] is True
    assert session.open_listens() == [listen.id]
    sub = session.change_listen
    assert sub is not None
    _, ended = drive(session.end_subscription(sub), lambda step: None)
    assert ended == [Cancel(listen.id, "unsubscribed")]


def test_a_dead_session_fails_everything_waiting_and_every_new_request():
    session = modern_session()
    waiter = Waiter(session.call("tools/call"))
    session.track(waiter)
    assert session.fail_all(ConnectionClosed("plain", 3))
    assert not session.fail_all(ConnectionClosed("plain", 4))  # once
    assert isinstance(waiter.error, ConnectionClosed) and waiter.error.method == "tools/call"
    with pytest.raises(ConnectionClosed, match="exit code 3"):
        session.track(Waiter(session.call("ping")))


def test_each_revisions_server_capabilities_are_those_of_its_schema() -> None:
    """The table the client gates requests by is the spec's own, revision by revision."""
    import json

    from conftest import SPEC

    from mcpkit import versions

    for revision in (*versions.LEGACY_VERSIONS, *versions.MODERN_VERSIONS):
        schema = json.loads((SPEC / revision / "schema.json").read_text())
        definitions = schema.get("definitions") or schema["$defs"]
        assert versions.SERVER_CAPABILITIES[revision] == \
            set(definitions["ServerCapabilities"]["properties"]), revision
