"""Calling a tool as a task, from the client's side (the server's side is mcpkit.tasks).

A task is a call that answers later: the server answers ``tools/call`` at once with a task
id, runs the tool on, and the client follows it. Both forms of the extension are spoken:

- 2026-07-28 (``io.modelcontextprotocol/tasks``): the client declares the extension (here:
  in the ``_meta`` of each request that needs it, so no ``capabilities=`` is required); the
  answer is ``resultType: "task"``; ``tasks/get`` gives the status and, once terminal, the
  result or the error; a task that asks something is ``input_required`` with its
  ``inputRequests``, answered through the client's callbacks with ``tasks/update``.
- 2025-11-25 (experimental): the client asks with ``params.task``; the answer is
  ``{"task": ...}``; ``tasks/get`` gives the status and ``tasks/result`` the result; the
  task's questions come as ordinary server-to-client requests, which the callbacks answer.

Everything here is a *procedure* of :class:`~mcpkit.session.ClientSession` (no I/O: the
fronts drive them), plus the handles the two fronts return: :class:`ToolTask` and
:class:`AsyncToolTask`. A task's status changes also arrive as notifications
(``notifications/tasks`` on a listen stream, ``notifications/tasks/status`` in 2025-11-25),
which reach ``on_notification``.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from . import versions
from .session import (
    Procedure,
    ProtocolError,
    RequestCancelled,
    RequestTimeout,
    ServerError,
)
from .tasks import EXTENSION, TERMINAL

#: The shortest wait between two polls, whatever the server suggests.
MIN_POLL_S = 0.05


class Sleep(NamedTuple):
    """A step: wait this long (a front sleeps or awaits)."""

    seconds: float


def start(session: Any, name: str, arguments: dict[str, Any] | None,
          ttl_ms: int | None = None) -> Procedure:
    """``tools/call`` asking for a task: the task's fields (``taskId``, ``status``,
    ``pollIntervalMs``...). A tool that answered at once (it need not become a task) gives
    ``{"taskId": None, "status": "completed", "result": ...}``."""
    params: dict[str, Any] = {"name": name, "arguments": arguments or {}}
    modern = session.era == "modern"
    if modern:
        params["_meta"] = _declaring(session)
    else:
        if not versions.at_least(session.protocol_version or "", "2025-11-25"):
            raise ProtocolError(f"tasks need revision 2025-11-25 or later; the server "
                                f"{session.name!r} speaks {session.protocol_version}")
        params["task"] = {"ttl": ttl_ms} if ttl_ms is not None else {}
    call = session.call("tools/call", params)
    result = yield call
    if modern:
        kind = result.get("resultType")
        if kind == "task":
            return _fields(result)
        result = yield from session.rounds(call, result)  # answered without a task
        return {"taskId": None, "status": "completed", "result": result}
    task = result.get("task")
    if not isinstance(task, dict):  # a server that ran it as a plain call
        return {"taskId": None, "status": "completed", "result": result}
    return _fields(task)


def get(session: Any, task_id: str) -> Procedure:
    """``tasks/get``: the task's fields now (with ``result``, ``error`` or
    ``inputRequests`` when the modern form says them)."""
    params: dict[str, Any] = {"taskId": task_id}
    if session.era == "modern":
        params["_meta"] = _declaring(session)
    return _fields((yield session.call("tasks/get", params)))


def cancel(session: Any, task_id: str) -> Procedure:
    """``tasks/cancel``."""
    params: dict[str, Any] = {"taskId": task_id}
    if session.era == "modern":
        params["_meta"] = _declaring(session)
    yield session.call("tasks/cancel", params)


def outcome(session: Any, task_id: str, timeout: float | None) -> Procedure:
    """Follow a task to its end and return the tool's result: polling ``tasks/get`` at the
    interval the server suggests, answering what it asks (modern form), within ``timeout``
    seconds (None: no limit). A failed task raises :class:`ServerError`, a cancelled one
    :class:`RequestCancelled`, one still running at the deadline :class:`RequestTimeout`."""
    deadline = None if timeout is None else session.clock() + timeout
    while True:
        fields = yield from get(session, task_id)
        status = fields.get("status")
        if status in TERMINAL:
            return (yield from _final(session, task_id, fields))
        if status == "input_required" and isinstance(fields.get("inputRequests"), dict):
            answers = {}
            for key, item in fields["inputRequests"].items():
                if not isinstance(item, dict):
                    raise ProtocolError(f"task {task_id}: inputRequests[{key!r}] is not an "
                                        "object")
                answers[key] = yield from session._answer(item.get("method"),
                                                          item.get("params") or {})
            yield session.call("tasks/update", {"taskId": task_id, "inputResponses": answers,
                                                "_meta": _declaring(session)})
            continue
        wait = max((fields.get("pollIntervalMs") or 0) / 1000, MIN_POLL_S)
        if deadline is not None:
            left = deadline - session.clock()
            if left <= 0:
                raise RequestTimeout(f"task {task_id}", timeout or 0, task_id)
            wait = min(wait, left)
        yield Sleep(wait)


def _final(session: Any, task_id: str, fields: dict[str, Any]) -> Procedure:
    status = fields["status"]
    if status == "cancelled":
        raise RequestCancelled(f"task {task_id} was cancelled")
    if session.era == "legacy":  # 2025-11-25: the result is fetched (failed has one too)
        return (yield session.call("tasks/result", {"taskId": task_id}))
    if status == "completed" and isinstance(fields.get("result"), dict):
        return fields["result"]
    error = fields.get("error") if isinstance(fields.get("error"), dict) else {}
    raise ServerError(error.get("code", -32603), error.get("message", f"task {task_id} "
                      "failed"), error.get("data"), "tools/call")


def _declaring(session: Any) -> dict[str, Any]:
    """A request's ``_meta`` that declares the extension beside the client's capabilities."""
    caps = session._capabilities("modern")
    extensions = {**(caps.get("extensions") or {}), EXTENSION: {}}
    return {versions.META_CLIENT_CAPABILITIES: {**caps, "extensions": extensions}}


def _fields(task: dict[str, Any]) -> dict[str, Any]:
    """The modern names for both forms (2025-11-25 says ``ttl`` and ``pollInterval``)."""
    fields = {k: v for k, v in task.items() if k not in ("resultType", "_meta")}
    if "ttl" in fields and "ttlMs" not in fields:
        fields["ttlMs"] = fields.pop("ttl")
    if "pollInterval" in fields and "pollIntervalMs" not in fields:
        fields["pollIntervalMs"] = fields.pop("pollInterval")
    return fields


class ToolTask:
    """A tool call running as a task (from :meth:`Client.call_tool_as_task`)."""

    def __init__(self, client: Any, fields: dict[str, Any]) -> None:
        self._client = client
        self.fields = fields

    @property
    def id(self) -> str | None:
        """The task's id (None: the tool answered at once, :meth:`result` has it)."""
        return self.fields.get("taskId")

    @property
    def status(self) -> str:
        """The status last seen (:meth:`refresh` asks the server)."""
        return self.fields.get("status", "working")

    def refresh(self) -> dict[str, Any]:
        """``tasks/get``: the task's fields now."""
        if self.id is not None:
            self.fields = self._client._drive(get(self._client._session, self.id))
        return self.fields

    def result(self, timeout: float | None = None) -> dict[str, Any]:
        """Wait for the tool's result (see :func:`outcome`)."""
        if self.id is None:
            return self.fields["result"]
        return self._client._drive(outcome(self._client._session, self.id, timeout))

    def cancel(self) -> None:
        if self.id is not None:
            self._client._drive(cancel(self._client._session, self.id))

    def __repr__(self) -> str:
        return f"<ToolTask {self.id} {self.status}>"


class AsyncToolTask(ToolTask):
    """The same, from :meth:`AsyncClient.call_tool_as_task`: the methods are awaited."""

    async def refresh(self) -> dict[str, Any]:  # type: ignore[override]
        if self.id is not None:
            self.fields = await self._client._drive(get(self._client._session, self.id))
        return self.fields

    async def result(self, timeout: float | None = None) -> dict[str, Any]:  # type: ignore[override]
        if self.id is None:
            return self.fields["result"]
        return await self._client._drive(outcome(self._client._session, self.id, timeout))

    async def cancel(self) -> None:  # type: ignore[override]
        if self.id is not None:
            await self._client._drive(cancel(self._client._session, self.id))

    def __repr__(self) -> str:
        return f"<AsyncToolTask {self.id} {self.status}>"
