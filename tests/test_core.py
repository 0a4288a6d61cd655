"""JSON-RPC validation, dispatch rules, schemas from type hints, and the spec's own examples."""

from __future__ import annotations

import contextvars
import dataclasses
import gc
import json
import logging
import queue
import threading
import weakref
from typing import Annotated, Literal, TypedDict

import pytest
from conftest import SPEC, modern_meta, validate, wait_until

from mcpkit import connection as connection_mod
from mcpkit import framing, jsonrpc
from mcpkit.context import Context
from mcpkit.context_use import may_ask_client
from mcpkit.dispatch import Dispatcher
from mcpkit.schema import SchemaError, function_schema, return_schema, type_schema
from mcpkit.server import Server

# -- jsonrpc -----------------------------------------------------------------------------


@pytest.mark.parametrize("message, kind", [
    ({"jsonrpc": "2.0", "id": 1, "method": "m"}, "request"),
    ({"jsonrpc": "2.0", "id": "a", "method": "m", "params": {}}, "request"),
    ({"jsonrpc": "2.0", "method": "m"}, "notification"),
    ({"jsonrpc": "2.0", "id": 1, "result": {}}, "result"),
    ({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "x"}}, "error"),
])
def test_classify_accepts_each_kind(message, kind):
    assert jsonrpc.classify(message) == kind


@pytest.mark.parametrize("message, fragment", [
    ([], "batches"),
    ("hi", "JSON object"),
    ({"id": 1, "method": "m"}, '"jsonrpc" must be "2.0"'),
    ({"jsonrpc": "2.0", "id": 1.5, "method": "m"}, "string or an integer"),
    ({"jsonrpc": "2.0", "id": False, "method": "m"}, "string or an integer"),
    ({"jsonrpc": "2.0", "id": 1, "method": ""}, "non-empty string"),
    ({"jsonrpc": "2.0", "id": 1, "method": "m", "params": [1]}, "named params"),
    ({"jsonrpc": "2.0", "id": 1}, "exactly one of"),
    ({"jsonrpc": "2.0", "id": 1, "result": {}, "error": {}}, "exactly one of"),
    ({"jsonrpc": "2.0", "result": {}}, '"id"'),
    ({"jsonrpc": "2.0", "id": 1, "error": {"code": "x", "message": "m"}}, "integer"),
    ({"jsonrpc": "2.0", "id": 1, "error": {"code": 1}}, "error.message"),
])
def test_classify_names_what_is_wrong(message, fragment):
    with pytest.raises(jsonrpc.InvalidRequest) as caught:
        jsonrpc.classify(message)
    assert caught.value.code == jsonrpc.INVALID_REQUEST
    assert fragment in caught.value.message


def test_error_codes_are_the_specs():
    assert (jsonrpc.PARSE_ERROR, jsonrpc.INVALID_REQUEST, jsonrpc.METHOD_NOT_FOUND,
            jsonrpc.INVALID_PARAMS, jsonrpc.INTERNAL_ERROR) == (-32700, -32600, -32601,
                                                                 -32602, -32603)
    assert (jsonrpc.RESOURCE_NOT_FOUND, jsonrpc.HEADER_MISMATCH,
            jsonrpc.MISSING_REQUIRED_CLIENT_CAPABILITY,
            jsonrpc.UNSUPPORTED_PROTOCOL_VERSION) == (-32002, -32020, -32021, -32022)


# -- dispatch ----------------------------------------------------------------------------


def test_dispatcher_rules(caplog):
    responses = []
    d = Dispatcher(on_response=responses.append)
    calls = []
    d.add_request("add", lambda p, ctx: {"sum": p["a"] + p["b"]})
    d.add_request("boom", lambda p, ctx: 1 / 0)

    @d.request("strict")
    def strict(params, ctx):
        raise jsonrpc.InvalidParams("b is missing")

    @d.notification("note")
    def note(params, ctx):
        calls.append(params)
        raise ValueError("notification handlers may fail too")

    assert d.dispatch({"jsonrpc": "2.0", "id": 1, "method": "add",
                       "params": {"a": 1, "b": 2}})["result"] == {"sum": 3}
    assert d.dispatch({"jsonrpc": "2.0", "id": 2, "method": "nope"})["error"]["code"] == -32601
    assert d.dispatch({"jsonrpc": "2.0", "id": 3, "method": "strict"})["error"] == {
        "code": -32602, "message": "b is missing"}
    with caplog.at_level(logging.ERROR):
        crashed = d.dispatch({"jsonrpc": "2.0", "id": 4, "method": "boom"})
    assert crashed["error"]["code"] == -32603
    assert "ZeroDivision" not in json.dumps(crashed)  # no internals to the peer ...
    assert "ZeroDivisionError" in caplog.text  # ... but the log has them
    assert d.dispatch({"jsonrpc": "2.0", "method": "note", "params": {"x": 1}}) is None
    assert d.dispatch({"jsonrpc": "2.0", "method": "unknown"}) is None
    assert calls == [{"x": 1}]
    assert d.dispatch({"jsonrpc": "2.0", "id": 9, "result": {}}) is None
    assert responses == [{"jsonrpc": "2.0", "id": 9, "result": {}}]
    assert d.dispatch({"id": 5})["error"]["code"] == -32600
    assert d.dispatch({"id": 5})["id"] == 5


# -- schemas from type hints ------------------------------------------------------------


class Point(TypedDict):
    x: int
    y: int


@dataclasses.dataclass
class Filter:
    tag: str
    limit: int = 10


def test_schema_from_hints_and_docstring():
    def search(query: str, tags: list[str], kind: Literal["a", "b"] = "a",
               limit: int | None = None, where: Point | None = None, f: Filter | None = None,
               ratio: Annotated[float, "between 0 and 1"] = 0.5, exact: bool = False) -> dict:
        """Search things.

        Args:
            query: What to look for.
            tags: Only these tags.
        """

    schema, description = function_schema(search)
    assert description == "Search things."
    props = schema["properties"]
    assert schema["required"] == ["query", "tags"]
    assert props["query"] == {"type": "string", "description": "What to look for."}
    assert props["tags"]["items"] == {"type": "string"}
    assert props["kind"] == {"enum": ["a", "b"], "type": "string", "default": "a"}
    assert props["limit"] == {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": None}
    assert props["where"]["anyOf"][0]["required"] == ["x", "y"]
    assert props["f"]["anyOf"][0]["properties"]["limit"] == {"type": "integer", "default": 10}
    assert props["ratio"]["description"] == "between 0 and 1"
    assert props["exact"] == {"type": "boolean", "default": False}


def test_output_schema_wraps_non_objects_and_unknown_hints_fail_clearly():
    def count() -> int: ...
    def point() -> Point: ...

    assert return_schema(count) == {"type": "object", "properties": {"result": {
        "type": "integer"}}, "required": ["result"]}
    assert return_schema(point)["type"] == "object"
    with pytest.raises(SchemaError, match="give the schema explicitly"):
        type_schema(complex)


def test_structured_output_and_runtime_registration():
    server = Server("s")

    @server.tool(structured=True)
    def total(values: list[int]) -> int:
        return sum(values)

    out = []
    conn = server.connect(out.append)
    conn.receive({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "t", "version": "0"}}})
    conn.receive({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                  "params": {"name": "total", "arguments": {"values": [1, 2]}}})
    assert out[-1]["result"]["structuredContent"] == {"result": 3}
    server.remove_tool("total")
    assert out[-1] == {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
    conn.receive({"jsonrpc": "2.0", "id": 3, "method": "tools/list"})
    assert out[-1]["error"]["code"] == -32601  # no tools left: the feature is gone
    conn.close()


def test_calls_that_may_wait_reuse_threads_run_side_by_side_and_end_with_the_connection(
        monkeypatch):
    """A tool that takes a Context runs on a call thread, not the reader's: one that has
    ended serves the next call (starting one costs as much as a small request), in a fresh
    context and holding nothing of the last call; calls that wait do not hold up the next
    one, and no thread outlives the connection or its idle time."""
    server = Server("s")
    release = threading.Event()
    ran_on: dict[int, threading.Thread] = {}  # request id -> the thread that ran it
    contexts: list[weakref.ref] = []
    leftover = contextvars.ContextVar("leftover", default="unset")
    seen: list[str] = []

    @server.tool
    def where(ctx: Context, wait: bool = False) -> str:
        ran_on[ctx.request_id] = threading.current_thread()
        contexts.append(weakref.ref(ctx))
        seen.append(leftover.get())
        leftover.set(f"set by call {ctx.request_id}")
        if wait and not release.wait(10):
            raise RuntimeError("never released")
        return "ok"

    before = set(threading.enumerate())
    answers: queue.Queue = queue.Queue()
    conn = server.connect(answers.put)
    ids = iter(range(1, 100))

    def call(wait: bool = False) -> int:
        request_id = next(ids)
        conn.receive({"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": {
            "name": "where", "arguments": {"wait": wait}, "_meta": modern_meta()}})
        return request_id

    def answered() -> int:
        message = answers.get(timeout=10)
        assert message["result"]["content"][0]["text"] == "ok"
        return message["id"]

    for _ in range(3):
        assert call() == answered()
        # (A call thread is busy until it has sent the answer and is idle again.)
        assert wait_until(lambda: conn.idle)
    assert ran_on[1] is ran_on[2] is ran_on[3], "a new thread per call"
    assert ran_on[1] is not threading.current_thread()  # not the reader's
    assert seen == ["unset"] * 3, "a context variable of one call showed up in the next"
    gc.collect()
    assert [ref() for ref in contexts] == [None] * 3, "an idle thread keeps its last call"

    waiting = [call(wait=True), call(wait=True)]
    quick = call()
    assert answered() == quick  # answered while the two others wait
    release.set()
    assert sorted(answered() for _ in waiting) == waiting
    assert wait_until(lambda: conn.idle)
    conn.close()
    assert wait_until(lambda: set(threading.enumerate()) <= before, 10), \
        "call threads outlived the connection"

    monkeypatch.setattr(connection_mod, "CALL_THREAD_IDLE_S", 0.05)
    conn = server.connect(answers.put)
    assert call() == answered()
    assert wait_until(lambda: set(threading.enumerate()) <= before, 10), \
        "an idle call thread did not end on its own"
    assert conn.idle
    assert call() == answered()  # a new thread for the next call, then
    conn.close()
    assert wait_until(lambda: set(threading.enumerate()) <= before, 10)


# -- the specification's example messages -----------------------------------------------

EXAMPLES = sorted((SPEC / "2026-07-28" / "examples").glob("*/*.json"))


def test_a_stateless_connection_tracks_no_request_even_one_that_may_wait() -> None:
    """HTTP shares one Connection among 2026-07-28 requests whose handler takes no Context.
    Should such a request meet a handler that takes one (its tool registered again in
    between), it is served all the same, but tracked nowhere: two clients' requests with one
    id are both answered, and no id is left in flight for a cancellation to hit."""
    server = Server("s")
    inside: list[dict] = []
    release = threading.Event()

    @server.tool
    def waits(ctx: Context) -> str:
        inside.append(dict(conn.in_flight))
        release.wait(10)
        return "ok"

    answers: queue.Queue = queue.Queue()
    conn = server.connect(lambda message: None)
    conn.stateless = True
    request = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "waits", "arguments": {}, "_meta": modern_meta()}}
    callers = [threading.Thread(target=conn.receive_request, args=(request, answers.put),
                                kwargs={"may_block": True}) for _ in range(2)]
    for caller in callers:
        caller.start()
    assert wait_until(lambda: len(inside) == 2)  # both running at once, under one id
    release.set()
    for caller in callers:
        caller.join(10)
    texts = [answers.get(timeout=5)["result"]["content"][0]["text"] for _ in callers]
    assert texts == ["ok", "ok"] and inside == [{}, {}] and conn.in_flight == {}
    conn.close()


def test_a_call_handed_to_a_thread_just_as_its_idle_wait_ends_still_runs() -> None:
    """The race of an idle call thread's wait timing out just as run() hands it a call,
    made to happen every time: the thread runs that call, then keeps serving (it must take
    its wake-up lock back, or its next wait returns at once and it ends with its slot still
    listed as idle, where the next call would be handed to nobody)."""
    threads = connection_mod._CallThreads()
    ran: list[object] = []
    threads.run(ran.append, 1)
    assert wait_until(lambda: threads._idle)
    slot = threads._idle[0]
    lock = slot.ready

    class WaitEndsAsACallArrives:
        raced = False

        def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
            if timeout != -1 and not self.raced:  # the idle wait, the first time
                self.raced = True
                threads.run(ran.append, "handed as the wait ended")
                return False  # timed out
            return lock.acquire(blocking, timeout)

        def release(self) -> None:
            lock.release()

    threads.run(ran.append, 2)  # the thread is in its wait on the real lock: let it loop
    assert wait_until(lambda: len(ran) == 2 and threads._idle)
    slot.ready = WaitEndsAsACallArrives()
    threads.run(ran.append, 3)  # after this call, it waits on the racing lock
    assert wait_until(lambda: len(ran) == 4 and threads._idle)
    threads.run(ran.append, "next")
    assert wait_until(lambda: len(ran) == 5)
    assert ran == [1, 2, 3, "handed as the wait ended", "next"]
    threads.close(5)
    assert not threads._threads


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_spec_examples_round_trip_and_validate(path):
    original = json.loads(path.read_text())
    validate("2026-07-28", path.parent.name, original)
    for encode, decoder in ((framing.encode_ndjson, framing.NdjsonDecoder()),
                            (framing.encode_content_length, framing.ContentLengthDecoder())):
        wire = encode(original)
        assert decoder.feed(wire[:7]) == []
        assert decoder.feed(wire[7:]) == [original]
    if "jsonrpc" in original:
        assert jsonrpc.classify(original) in ("request", "notification", "result", "error")


def test_there_are_spec_examples():
    assert len(EXAMPLES) >= 80


# -- which handlers may wait on the client (mcpkit.context_use) ----------------------------


def _reports(text: str, ctx: Context) -> str:
    ctx.log("info", text)
    ctx.progress(1, total=2, message="half")
    return f"{ctx.request_id} {ctx.client_supports('roots')}"


def _elicits(text: str, ctx: Context) -> object:
    return ctx.elicit(text, {"type": "object"})


def _passes_it_on(text: str, ctx: Context) -> object:
    return _elicits(text, ctx)


def _aliases(text: str, ctx: Context) -> object:
    c = ctx
    return c.list_roots()


def _waits_for_cancellation(text: str, ctx: Context) -> bool:
    return ctx.cancelled.wait(1)


def _through_a_bound_method(text: str, ctx: Context) -> object:
    return ctx.progress.__self__.sample(text)


def _through_locals(text: str, ctx: Context) -> object:
    return locals()["ctx"].ask({})


def _captures(text: str, ctx: Context) -> object:
    def later() -> object:
        return ctx.elicit(text, {})
    return later()


async def _a_coroutine(text: str, ctx: Context) -> None:
    ctx.progress(1)


def _wrapped(fn):
    import functools

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)
    return wrapper


@pytest.mark.parametrize("fn, asks", [
    (_reports, False),
    (_elicits, True),
    (_passes_it_on, True),
    (_aliases, True),
    (_waits_for_cancellation, True),
    (_through_a_bound_method, True),
    (_through_locals, True),
    (_captures, True),
    (_a_coroutine, True),
    (_wrapped(_reports), True),  # the wrapper's code is what runs: it passes ctx on
    (lambda text, ctx: ctx.progress(1), False),
    (lambda text, ctx: ctx, True),  # returned: anything may be done with it later
])
def test_only_a_handler_that_only_reports_through_its_context_cannot_ask_the_client(fn, asks):
    assert may_ask_client(fn, "ctx") is asks


def test_a_context_param_the_function_does_not_name_counts_as_asking():
    assert may_ask_client(_reports, "context") is True
    assert may_ask_client(print, "ctx") is True  # not a Python function: nothing to read
