"""Tasks (mcpkit.tasks, the io.modelcontextprotocol/tasks extension).

The store and its state machine on their own (an injected clock for TTLs), then the
extension end to end: a real uvicorn on 127.0.0.1, raw HTTP with httpx, 2026-07-28.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from conftest import validate, wait_until

from mcpkit import Context, JsonRpcError, Server, tasks
from mcpkit.jsonrpc import INTERNAL_ERROR
from mcpkit.transports.http import HttpServerThread
from mcpkit.transports.http_headers import NAME_FIELDS

# -- the store and its state machine ---------------------------------------------------


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def test_a_new_task_is_working_and_found_by_its_id() -> None:
    store = tasks.TaskStore()
    task = store.create()
    assert task.status == tasks.WORKING
    assert store.get(task.id) is task
    info = task.info()
    assert info["taskId"] == task.id and info["status"] == "working"
    assert info["createdAt"].endswith("Z") and info["ttlMs"] == tasks.DEFAULT_TTL_MS
    assert isinstance(info["pollIntervalMs"], int)
    with pytest.raises(tasks.UnknownTask):
        store.get("no-such-task")
    with pytest.raises(tasks.UnknownTask):
        store.get(["not", "a", "string"])


def test_terminal_statuses_never_change() -> None:
    heard: list[str] = []
    store = tasks.TaskStore(on_status=lambda t: heard.append(t.status))
    done = store.create()
    store.complete(done, {"content": []})
    store.cancel(done)  # idempotent: a finished task stays as it is
    store.fail(done, {"code": -1, "message": "late"})
    assert done.status == "completed" and done.error is None
    cancelled = store.create()
    store.cancel(cancelled)
    store.complete(cancelled, {"content": [{"type": "text", "text": "too late"}]})
    assert cancelled.status == "cancelled" and cancelled.result is None
    assert cancelled.cancelled.is_set()
    assert heard == ["completed", "cancelled"]  # one announcement per real change
    for status in tasks.TERMINAL:
        assert tasks.TRANSITIONS[status] == frozenset()


def test_detailed_shows_what_the_status_has() -> None:
    store = tasks.TaskStore()
    done, failed = store.create(), store.create()
    store.complete(done, {"content": [{"type": "text", "text": "ok"}]})
    store.fail(failed, {"code": INTERNAL_ERROR, "message": "broke"})
    assert done.detailed()["result"]["content"][0]["text"] == "ok"
    assert "error" not in done.detailed()
    assert failed.detailed()["error"]["code"] == INTERNAL_ERROR
    assert "result" not in failed.detailed()


def test_questions_park_the_task_until_every_one_is_answered() -> None:
    store = tasks.TaskStore()
    task = store.create()
    got: dict[str, Any] = {}
    questions = {"a": {"method": "elicitation/create", "params": {}},
                 "b": {"method": "elicitation/create", "params": {}}}
    asker = threading.Thread(target=lambda: got.update(store.ask(task, questions, timeout=5)))
    asker.start()
    assert wait_until(lambda: task.status == tasks.INPUT_REQUIRED)
    assert set(task.detailed()["inputRequests"]) == {"a", "b"}
    store.answer(task, {"a": {"action": "accept"}, "stranger": {}})  # unknown keys: ignored
    assert task.status == tasks.INPUT_REQUIRED
    assert set(task.detailed()["inputRequests"]) == {"b"}
    store.answer(task, {"b": {"action": "decline"}})
    asker.join(5)
    assert got == {"a": {"action": "accept"}, "b": {"action": "decline"}}
    assert task.status == tasks.WORKING and not task.pending


def test_cancelling_a_waiting_task_wakes_it() -> None:
    store = tasks.TaskStore()
    task = store.create()
    raised: list[BaseException] = []

    def ask() -> None:
        try:
            store.ask(task, {"q": {"method": "roots/list", "params": {}}}, timeout=5)
        except BaseException as exc:
            raised.append(exc)

    asker = threading.Thread(target=ask)
    asker.start()
    assert wait_until(lambda: task.status == tasks.INPUT_REQUIRED)
    store.cancel(task)
    asker.join(5)
    assert isinstance(raised[0], tasks.TaskCancelled)
    assert task.detailed().get("inputRequests") is None
    with pytest.raises(tasks.TaskCancelled):
        store.ask(task, {"again": {"method": "roots/list", "params": {}}})


def test_an_unanswered_question_times_out() -> None:
    store = tasks.TaskStore()
    with pytest.raises(TimeoutError):
        store.ask(store.create(), {"q": {"method": "roots/list", "params": {}}}, timeout=0.05)


def test_tasks_expire_after_their_ttl() -> None:
    clock = Clock()
    store = tasks.TaskStore(ttl_ms=1000, clock=clock)
    task = store.create()
    clock.now += 0.999
    assert store.get(task.id) is task  # not a moment early
    clock.now += 0.001
    with pytest.raises(tasks.UnknownTask):
        store.get(task.id)
    store.create()  # creating purges the expired ones, and stops them if they still run
    assert len(store) == 1 and task.cancelled.is_set()


def test_the_store_is_bounded() -> None:
    store = tasks.TaskStore(max_tasks=2)
    first, second = store.create(), store.create()
    with pytest.raises(tasks.TooManyTasks):
        store.create()  # both still run: nothing may be dropped
    store.complete(second, {"content": []})
    third = store.create()  # the oldest finished one makes room
    assert len(store) == 2
    with pytest.raises(tasks.UnknownTask):
        store.get(second.id)
    assert store.get(first.id) is first and store.get(third.id) is third


def test_client_declares_needs_an_object_under_extensions() -> None:
    assert tasks.client_declares({"extensions": {tasks.EXTENSION: {}}})
    assert not tasks.client_declares({})
    assert not tasks.client_declares({"extensions": {tasks.EXTENSION: True}})
    assert not tasks.client_declares({"extensions": []})


def test_task_support_is_checked_when_registering() -> None:
    server = Server("t")
    with pytest.raises(ValueError):
        server.tool(lambda: "x", name="bad", task_support="sometimes")


# -- the extension over HTTP (2026-07-28) -----------------------------------------------

MODERN = "2026-07-28"
WITH_TASKS = {"elicitation": {}, "extensions": {tasks.EXTENSION: {}}}

app = Server("tasks-lab", "1.0.0")
release = threading.Event()


@app.tool
def plain(text: str) -> str:
    """Never a task."""
    return text


@app.tool(task_support="optional")
def wait_for_release(ctx: Context) -> str:
    """Runs until the test releases it, or it is cancelled."""
    ctx.log("info", "not sent: a task's request has been answered")
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        if release.wait(0.01):
            return "released"
        if ctx.cancelled.is_set():
            return "cancelled"
    return "timed out"


@app.tool(task_support="required")
def ask_first(ctx: Context) -> str:
    """A task that asks the user something."""
    answer = ctx.elicit("Go?", {"type": "object", "properties": {"go": {"type": "boolean"}}})
    return f"go={answer.get('content', {}).get('go')}"


@app.tool(task_support="optional")
def broken() -> str:
    """A protocol error: the task fails."""
    raise JsonRpcError(INTERNAL_ERROR, "broken below the tool")


@app.tool(task_support="optional")
def tool_error() -> str:
    """A tool error: the task completes, with isError."""
    raise ValueError("bad input")


@app.tool(task_support="optional", defer_task=True)
def deferred(ctx: Context, quick: bool = False) -> str:
    """Answers synchronously when quick; otherwise asks, then becomes a task."""
    if quick:
        return "answered without a task"
    name = ctx.elicit("Name?", {"type": "object", "properties": {"n": {"type": "string"}}},
                      key="who")
    ctx.start_task()
    return f"task for {name['content']['n']}"


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with HttpServerThread(app) as http:
        yield http.url


def rpc(url: str, method: str, params: dict | None = None, caps: dict | None = None) -> dict:
    """One modern request, its headers as a conforming client sends them; the response."""
    params = {**(params or {}), "_meta": {"io.modelcontextprotocol/protocolVersion": MODERN,
                                          "io.modelcontextprotocol/clientCapabilities":
                                              WITH_TASKS if caps is None else caps}}
    headers = {"content-type": "application/json", "accept": "application/json, "
               "text/event-stream", "mcp-protocol-version": MODERN, "mcp-method": method}
    name_key = NAME_FIELDS.get(method)
    if name_key:
        headers["mcp-name"] = params[name_key]
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    response = httpx.post(url, content=json.dumps(body), headers=headers, timeout=10)
    return response.json()


def call(url: str, name: str, arguments: dict | None = None, **kw: Any) -> dict:
    return rpc(url, "tools/call", {"name": name, "arguments": arguments or {}}, **kw)


def poll(url: str, task_id: str, until: tuple[str, ...] = tuple(tasks.TERMINAL)) -> dict:
    found: dict = {}

    def reached() -> bool:
        found.update(rpc(url, "tasks/get", {"taskId": task_id})["result"])
        return found["status"] in until

    assert wait_until(reached, timeout=5)
    return found


def test_a_plain_call_pays_nothing_for_tasks(url: str) -> None:
    before = len(app.tasks)
    result = call(url, "plain", {"text": "hi"})["result"]
    assert result["resultType"] == "complete" and result["content"][0]["text"] == "hi"
    assert len(app.tasks) == before


def test_discover_and_tools_list_advertise_tasks(url: str) -> None:
    caps = rpc(url, "server/discover")["result"]["capabilities"]
    assert caps["extensions"] == {tasks.EXTENSION: {}} and "tasks" not in caps
    tools = {t["name"]: t for t in rpc(url, "tools/list")["result"]["tools"]}
    assert "execution" not in tools["plain"]
    assert tools["ask_first"]["execution"] == {"taskSupport": "required"}


def test_a_task_runs_on_after_its_answer(url: str) -> None:
    release.clear()
    created = call(url, "wait_for_release")["result"]
    assert created["resultType"] == "task" and created["status"] == "working"
    assert "content" not in created and "result" not in created
    working = rpc(url, "tasks/get", {"taskId": created["taskId"]})["result"]
    assert working["status"] == "working" and working["resultType"] == "complete"
    release.set()
    done = poll(url, created["taskId"])
    assert done["status"] == "completed"
    assert done["result"]["content"][0]["text"] == "released"
    assert rpc(url, "tasks/cancel", {"taskId": created["taskId"]})["result"]["resultType"] \
        == "complete"  # cancelling a finished task: the same empty ack
    assert poll(url, created["taskId"])["status"] == "completed"


def test_cancel_stops_a_running_task(url: str) -> None:
    release.clear()
    task_id = call(url, "wait_for_release")["result"]["taskId"]
    ack = rpc(url, "tasks/cancel", {"taskId": task_id})["result"]
    assert set(ack) <= {"resultType", "_meta"}
    assert poll(url, task_id)["status"] == "cancelled"


def test_questions_and_answers_through_tasks_update(url: str) -> None:
    task_id = call(url, "ask_first")["result"]["taskId"]
    parked = poll(url, task_id, until=("input_required",))
    (key, question), = parked["inputRequests"].items()
    assert question["method"] == "elicitation/create"
    ack = rpc(url, "tasks/update", {"taskId": task_id, "inputResponses": {
        key: {"action": "accept", "content": {"go": True}}}})["result"]
    assert set(ack) <= {"resultType", "_meta"}
    assert poll(url, task_id)["result"]["content"][0]["text"] == "go=True"


def test_protocol_errors_fail_and_tool_errors_complete(url: str) -> None:
    failed = poll(url, call(url, "broken")["result"]["taskId"])
    assert failed["status"] == "failed" and failed["error"]["code"] == INTERNAL_ERROR
    assert "result" not in failed
    completed = poll(url, call(url, "tool_error")["result"]["taskId"])
    assert completed["status"] == "completed" and completed["result"]["isError"] is True


def test_without_the_extension(url: str) -> None:
    assert call(url, "broken", caps={})["error"]["code"] == INTERNAL_ERROR  # just a call
    refused = call(url, "ask_first", caps={})["error"]
    assert refused["code"] == -32021
    assert refused["data"]["requiredCapabilities"]["extensions"] == {tasks.EXTENSION: {}}
    assert rpc(url, "tasks/get", {"taskId": "x"}, caps={})["error"]["code"] == -32021
    assert rpc(url, "tasks/get", {"taskId": "x"})["error"]["code"] == -32602  # unknown id
    assert rpc(url, "tasks/result", {"taskId": "x"})["error"]["code"] == -32601  # gone in v2
    assert rpc(url, "tasks/list")["error"]["code"] == -32601


def test_a_deferred_task_asks_first_or_answers_at_once(url: str) -> None:
    quick = call(url, "deferred", {"quick": True})["result"]
    assert quick["resultType"] == "complete" and "taskId" not in quick
    round1 = call(url, "deferred")["result"]
    assert round1["resultType"] == "input_required" and "taskId" not in round1
    round2 = rpc(url, "tools/call", {
        "name": "deferred", "arguments": {}, "requestState": round1["requestState"],
        "inputResponses": {"who": {"action": "accept", "content": {"n": "Ada"}}}})["result"]
    assert round2["resultType"] == "task" and "requestState" not in round2
    assert round2["ttlMs"] > 0  # a task's ttlMs, not a cache hint zeroed for a round trip
    assert poll(url, round2["taskId"])["result"]["content"][0]["text"] == "task for Ada"


def test_listen_streams_hear_task_status(url: str) -> None:
    release.clear()
    task_id = call(url, "wait_for_release")["result"]["taskId"]
    body = {"jsonrpc": "2.0", "id": 9, "method": "subscriptions/listen", "params": {
        "notifications": {"taskIds": [task_id, "unknown"]},
        "_meta": {"io.modelcontextprotocol/protocolVersion": MODERN,
                  "io.modelcontextprotocol/clientCapabilities": WITH_TASKS}}}
    headers = {"content-type": "application/json", "accept": "application/json, "
               "text/event-stream", "mcp-protocol-version": MODERN,
               "mcp-method": "subscriptions/listen"}
    heard: list[dict] = []
    with httpx.stream("POST", url, content=json.dumps(body), headers=headers,
                      timeout=10) as stream:
        for line in stream.iter_lines():
            if not line.startswith("data:") or not line[5:].strip():
                continue
            message = json.loads(line[5:])
            heard.append(message)
            if message["method"] == "notifications/subscriptions/acknowledged":
                assert message["params"]["notifications"] == {"taskIds": [task_id]}
                release.set()
            elif message["params"].get("status") in tasks.TERMINAL:
                break
    status = heard[-1]
    assert status["method"] == "notifications/tasks" and status["params"]["taskId"] == task_id
    assert status["params"]["status"] == "completed"
    assert status["params"]["result"]["content"][0]["text"] == "released"


# -- 2025-11-25's experimental tasks, in a legacy session --------------------------------

LEGACY = "2025-11-25"


class Session:
    """A 2025-11-25 session over raw HTTP."""

    def __init__(self, url: str, caps: dict | None = None) -> None:
        self.url = url
        self.ids = iter(range(1, 1000))
        r = httpx.post(url, json={"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": LEGACY, "capabilities": caps or {},
            "clientInfo": {"name": "t", "version": "1"}}},
            headers={"accept": "application/json, text/event-stream"}, timeout=5)
        self.capabilities = r.json()["result"]["capabilities"]
        self.headers = {"accept": "application/json, text/event-stream",
                        "mcp-session-id": r.headers["mcp-session-id"],
                        "mcp-protocol-version": LEGACY}
        self.post({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def post(self, body: dict) -> httpx.Response:
        return httpx.post(self.url, json=body, headers=self.headers, timeout=10)

    def rpc(self, method: str, params: dict | None = None) -> dict:
        r = self.post({"jsonrpc": "2.0", "id": next(self.ids), "method": method,
                       "params": params or {}})
        return r.json()

    def as_task(self, name: str, arguments: dict | None = None) -> str:
        created = self.rpc("tools/call", {"name": name, "arguments": arguments or {},
                                          "task": {"ttl": 60_000}})["result"]
        validate(LEGACY, "CreateTaskResult", created)
        assert created["task"]["status"] == "working" and created["task"]["ttl"] == 60_000
        return created["task"]["taskId"]


def test_legacy_capabilities_and_tool_execution(url: str) -> None:
    session = Session(url)
    assert session.capabilities["tasks"] == {"list": {}, "cancel": {},
                                             "requests": {"tools": {"call": {}}}}
    tools = {t["name"]: t for t in session.rpc("tools/list")["result"]["tools"]}
    assert tools["ask_first"]["execution"] == {"taskSupport": "required"}
    assert session.rpc("tools/call", {"name": "ask_first"})["error"]["code"] == -32601
    assert session.rpc("tools/call", {"name": "plain", "arguments": {"text": "x"},
                                      "task": {}})["error"]["code"] == -32601
    assert session.rpc("tasks/update", {"taskId": "x", "inputResponses": {}})["error"][
        "code"] == -32601  # the extension's, not 2025-11-25's


def test_legacy_task_result_waits_and_is_the_calls_answer(url: str) -> None:
    session = Session(url)
    release.clear()
    task_id = session.as_task("wait_for_release")
    got = session.rpc("tasks/get", {"taskId": task_id})["result"]
    validate(LEGACY, "GetTaskResult", got)
    assert [t["taskId"] for t in session.rpc("tasks/list")["result"]["tasks"]] == [task_id]
    assert Session(url).rpc("tasks/get", {"taskId": task_id})["error"]["code"] == -32602
    threading.Timer(0.2, release.set).start()
    result = session.rpc("tasks/result", {"taskId": task_id})["result"]  # waits
    assert result["content"][0]["text"] == "released"
    assert result["_meta"][tasks.RELATED_TASK] == {"taskId": task_id}
    assert session.rpc("tasks/get", {"taskId": task_id})["result"]["status"] == "completed"
    assert session.rpc("tasks/cancel", {"taskId": task_id})["error"]["code"] == -32602


def test_legacy_failures(url: str) -> None:
    session = Session(url)
    tool_error = session.as_task("tool_error")
    result = session.rpc("tasks/result", {"taskId": tool_error})["result"]
    assert result["isError"] is True  # the answer the call would have had...
    failed = session.rpc("tasks/get", {"taskId": tool_error})["result"]
    assert failed["status"] == "failed" and failed["statusMessage"]  # ...and a failed task
    broken = session.as_task("broken")
    assert session.rpc("tasks/result", {"taskId": broken})["error"]["code"] == INTERNAL_ERROR
    release.clear()
    running = session.as_task("wait_for_release")
    cancelled = session.rpc("tasks/cancel", {"taskId": running})["result"]
    validate(LEGACY, "CancelTaskResult", cancelled)
    assert cancelled["status"] == "cancelled"
    assert session.rpc("tasks/result", {"taskId": running})["error"]["code"] == -32602


def test_legacy_task_asks_on_the_session_stream(url: str) -> None:
    session = Session(url, caps={"elicitation": {}})
    seen: list[dict] = []

    def listen() -> None:
        with httpx.stream("GET", url, headers=session.headers, timeout=10) as stream:
            for line in stream.iter_lines():
                if not line.startswith("data:") or not line[5:].strip():
                    continue
                message = json.loads(line[5:])
                seen.append(message)
                if message.get("method") == "elicitation/create":
                    session.post({"jsonrpc": "2.0", "id": message["id"], "result": {
                        "action": "accept", "content": {"go": True}}})
                if message.get("params", {}).get("status") == "completed":
                    return

    reader = threading.Thread(target=listen, daemon=True)
    reader.start()
    task_id = session.as_task("ask_first")
    assert session.rpc("tasks/result", {"taskId": task_id})["result"]["content"][0][
        "text"] == "go=True"
    reader.join(5)
    asked = next(m for m in seen if m.get("method") == "elicitation/create")
    assert asked["params"]["_meta"][tasks.RELATED_TASK] == {"taskId": task_id}
    statuses = [m["params"]["status"] for m in seen
                if m.get("method") == "notifications/tasks/status"]
    assert statuses == ["input_required", "working", "completed"]


# -- the client's side: Client / AsyncClient.call_tool_as_task ------------------------------


def _client(front: str, transport: str, url: str, version: str | None, **options: Any) -> Any:
    from fronts import make_client

    options = {"timeout": 20, **options}
    if transport == "memory":
        return make_client(front, server=app, version=version, **options)
    return make_client(front, url=url, version=version, **options)


def _done(client: Any, value: Any) -> Any:
    """A task handle's method, called through either front (the async one is awaited)."""
    import inspect

    return client._run(value) if inspect.isawaitable(value) else value


@pytest.mark.parametrize("version", [None, "2025-11-25"], ids=["modern", "2025-11-25"])
@pytest.mark.parametrize("transport", ["http", "memory"])
@pytest.mark.parametrize("front", ["blocking", "async"])
def test_a_client_calls_tools_as_tasks_and_follows_them(url, front, transport, version) -> None:
    """Both fronts, both forms of the extension: a task that runs on, one that asks the user
    (inputRequests and tasks/update, or 2025-11-25's direct question), a protocol failure, a
    tool error, a cancellation, and a tool that answered without becoming a task."""
    from mcpkit.client import RequestCancelled, ServerError

    asked: list[str] = []

    def user(params: dict) -> dict:
        asked.append(params["message"])
        return {"action": "accept", "content": {"go": True}}

    with _client(front, transport, url, version, elicitation=user) as c:
        release.clear()
        task = c.call_tool_as_task("wait_for_release")
        assert task.id and task.status == "working"
        assert _done(c, task.refresh())["status"] == "working"
        release.set()
        assert _done(c, task.result(timeout=10))["content"][0]["text"] == "released"

        asking = c.call_tool_as_task("ask_first")
        assert _done(c, asking.result(timeout=10))["content"][0]["text"] == "go=True"
        assert asked == ["Go?"]

        with pytest.raises(ServerError, match="broken below the tool"):
            _done(c, c.call_tool_as_task("broken").result(timeout=10))
        failed = _done(c, c.call_tool_as_task("tool_error").result(timeout=10))
        assert failed["isError"] and "bad input" in failed["content"][0]["text"]

        release.clear()
        running = c.call_tool_as_task("wait_for_release")
        _done(c, running.cancel())
        with pytest.raises(RequestCancelled):
            _done(c, running.result(timeout=10))
        release.set()

        if version is None:  # the server decides: no task for a tool that forbids it
            plain = c.call_tool_as_task("plain", {"text": "now"})
            assert plain.id is None and _done(c, plain.result())["content"][0]["text"] == "now"
        else:
            with pytest.raises(ServerError, match="does not run as a task"):
                c.call_tool_as_task("plain", {"text": "now"})


def test_the_host_routes_a_task_and_old_revisions_are_refused_clearly() -> None:
    from mcpkit import Client, Host
    from mcpkit.client import ProtocolError

    release.set()
    with Host({"mcpServers": {"lab": app}}) as host:
        task = host.call_tool_as_task("wait_for_release")
        assert task.result(timeout=10)["content"][0]["text"] == "released"
    with Client(server=app, version="2025-06-18", timeout=20) as old:
        with pytest.raises(ProtocolError, match="tasks need revision 2025-11-25 or later"):
            old.call_tool_as_task("wait_for_release")
