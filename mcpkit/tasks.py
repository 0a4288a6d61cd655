"""Tasks (the ``io.modelcontextprotocol/tasks`` extension): a call that answers later.

A tool that may run long can be registered with ``task_support="optional"`` or
``"required"``. When the client declares the extension (in its capabilities, or in one
request's ``_meta``), ``tools/call`` for such a tool does not wait for the tool: it
answers at once with a *task* (``resultType: "task"`` and a ``taskId``), and the tool runs
on. The client then polls ``tasks/get`` until the task is terminal, when that response
carries the tool's result (or, for a protocol-level failure, the error). ``tasks/update``
answers the questions a running task asks (its ``inputRequests``), and ``tasks/cancel``
stops it.

The life of a task is a small state machine::

    working <-> input_required      (a question is pending / every question is answered)
       |             |
       +------+------+
              v
    completed | failed | cancelled   (terminal: nothing changes any more)

``completed`` holds the tool's result, an ``isError`` one included (the tool ran and
reported a problem); ``failed`` is for protocol errors (the call itself broke).

The same store serves the extension's earlier form, 2025-11-25's experimental tasks, which
a legacy client asks for with ``params.task`` on ``tools/call``: there a task belongs to
the session that made it (``owner``), ``tasks/result`` waits for the result, ``tasks/list``
lists the session's tasks, and a tool result with ``isError`` makes the task ``failed``.

This module holds the state and nothing else: no I/O, no threads of its own. The
:class:`TaskStore` is shared by the threads that run tasks and the ones that serve
``tasks/*`` requests, so every change happens under its lock, and a task thread waiting for
an answer waits on the store's condition. It is bounded: a task lives ``ttl_ms`` after it
was created, and at most ``max_tasks`` are kept (the oldest finished one makes room).

Who may see a task: in 2026-07-28 a request says nothing about who sends it (mcpkit knows
no identity behind a bearer token), so a task is found by its id alone, and the id is 128
random bits; a 2025-11-25 task belongs to its session, and other sessions cannot see it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

EXTENSION = "io.modelcontextprotocol/tasks"
#: The ``_meta`` key that ties a message to its task (2025-11-25).
RELATED_TASK = "io.modelcontextprotocol/related-task"

WORKING = "working"
INPUT_REQUIRED = "input_required"
COMPLETED = "completed"
FAILED = "failed"
CANCELLED = "cancelled"
TERMINAL = frozenset({COMPLETED, FAILED, CANCELLED})

#: Which statuses may follow which: the state machine above.
TRANSITIONS = {
    WORKING: frozenset({INPUT_REQUIRED, COMPLETED, FAILED, CANCELLED}),
    INPUT_REQUIRED: frozenset({WORKING, COMPLETED, FAILED, CANCELLED}),
    COMPLETED: frozenset(),
    FAILED: frozenset(),
    CANCELLED: frozenset(),
}

#: A tool's ``execution.taskSupport``: never a task, a task if the client can take one,
#: only ever a task.
TASK_SUPPORT = ("forbidden", "optional", "required")

DEFAULT_TTL_MS = 10 * 60 * 1000
DEFAULT_POLL_INTERVAL_MS = 500
DEFAULT_MAX_TASKS = 1000
#: How long a task waits for an answer to its questions before it fails.
DEFAULT_INPUT_TIMEOUT_S = 10 * 60.0


class UnknownTask(KeyError):
    """No such task: never created, expired, or evicted."""


class TaskCancelled(Exception):
    """Raised in a task's thread when it waits for input and the task gets cancelled."""


class TooManyTasks(Exception):
    """Every one of the ``max_tasks`` slots holds a task that is still running."""


def iso(epoch_s: float) -> str:
    """An ISO 8601 UTC timestamp with milliseconds, as the wire carries them."""
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(epoch_s))
    return f"{stamp}.{int(epoch_s * 1000) % 1000:03d}Z"


def client_declares(capabilities: dict[str, Any]) -> bool:
    """Whether the client capabilities declare the tasks extension."""
    extensions = capabilities.get("extensions")
    return isinstance(extensions, dict) and isinstance(extensions.get(EXTENSION), dict)


class Task:
    """One task's state. Changed only by its :class:`TaskStore`, under the store's lock."""

    # (A plain class: a server must not pay for loading dataclasses at start-up.)
    __slots__ = ("id", "created_at", "updated_at", "ttl_ms", "poll_interval_ms", "status",
                 "status_message", "result", "error", "pending", "answers", "cancelled",
                 "owner")

    def __init__(self, task_id: str, created_at: float, ttl_ms: int,
                 poll_interval_ms: int, owner: Any = None) -> None:
        self.id = task_id
        self.owner = owner  # 2025-11-25: the session (connection) the task belongs to
        self.created_at = self.updated_at = created_at
        self.ttl_ms = ttl_ms
        self.poll_interval_ms = poll_interval_ms
        self.status = WORKING
        self.status_message: str | None = None
        self.result: dict[str, Any] | None = None  # completed
        self.error: dict[str, Any] | None = None  # failed
        # Questions the task waits on (key -> {"method", "params"}), answers not yet taken.
        self.pending: dict[str, dict[str, Any]] = {}
        self.answers: dict[str, Any] = {}
        self.cancelled = threading.Event()

    def __repr__(self) -> str:
        return f"Task({self.id!r}, {self.status})"

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL

    def info(self) -> dict[str, Any]:
        """The task's fields as ``CreateTaskResult`` and ``tasks/get`` carry them."""
        out: dict[str, Any] = {
            "taskId": self.id,
            "status": self.status,
            "createdAt": iso(self.created_at),
            "lastUpdatedAt": iso(self.updated_at),
            "ttlMs": self.ttl_ms,
            "pollIntervalMs": self.poll_interval_ms,
        }
        if self.status_message:
            out["statusMessage"] = self.status_message
        return out

    def legacy_info(self) -> dict[str, Any]:
        """The task as 2025-11-25's ``Task`` has it (``ttl``, ``pollInterval``)."""
        out: dict[str, Any] = {
            "taskId": self.id,
            "status": self.status,
            "createdAt": iso(self.created_at),
            "lastUpdatedAt": iso(self.updated_at),
            "ttl": self.ttl_ms,
            "pollInterval": self.poll_interval_ms,
        }
        if self.status_message:
            out["statusMessage"] = self.status_message
        return out

    def detailed(self) -> dict[str, Any]:
        """``tasks/get``'s answer: the info, plus what the status has to show."""
        out = self.info()
        if self.status == COMPLETED:
            out["result"] = self.result
        elif self.status == FAILED:
            out["error"] = self.error
        elif self.status == INPUT_REQUIRED:
            out["inputRequests"] = dict(self.pending)
        return out


class TaskStore:
    """The tasks of one server, by id. Thread-safe; see the module docstring.

    ``on_status`` hears every change of status (for ``notifications/tasks/status``); it
    is called with the store's lock released. ``clock`` is injectable for tests.
    """

    def __init__(
        self,
        *,
        ttl_ms: int = DEFAULT_TTL_MS,
        poll_interval_ms: int = DEFAULT_POLL_INTERVAL_MS,
        max_tasks: int = DEFAULT_MAX_TASKS,
        clock: Callable[[], float] = time.time,
        on_status: Callable[[Task], None] | None = None,
    ) -> None:
        self.ttl_ms = ttl_ms
        self.poll_interval_ms = poll_interval_ms
        self.max_tasks = max_tasks
        self.clock = clock
        self.on_status = on_status
        self._tasks: dict[str, Task] = {}  # insertion order: oldest first
        self._changed = threading.Condition()

    def __len__(self) -> int:
        return len(self._tasks)

    # -- creating and finding ---------------------------------------------------------

    def create(self, owner: Any = None, ttl_ms: int | None = None) -> Task:
        """A new ``working`` task, stored before anyone can hear of its id. ``ttl_ms``: what
        the client asked for, at most the store's."""
        now = self.clock()
        with self._changed:
            self._purge(now)
            if len(self._tasks) >= self.max_tasks:
                done = next((t for t in self._tasks.values() if t.terminal), None)
                if done is None:
                    raise TooManyTasks(f"{self.max_tasks} tasks are running: try again later")
                del self._tasks[done.id]
            import secrets  # on first use: a server without tasks never loads it

            ttl = self.ttl_ms if ttl_ms is None else max(1, min(ttl_ms, self.ttl_ms))
            task = Task(secrets.token_urlsafe(16), now, ttl, self.poll_interval_ms, owner)
            self._tasks[task.id] = task
        return task

    def get(self, task_id: Any) -> Task:
        """The live task with this id, or :class:`UnknownTask`."""
        with self._changed:
            task = self._tasks.get(task_id) if isinstance(task_id, str) else None
            if task is None or self._expired(task, self.clock()):
                raise UnknownTask(task_id)
            return task

    def owned_by(self, owner: Any) -> list[Task]:
        """The live tasks of one owner, oldest first."""
        with self._changed:
            now = self.clock()
            return [t for t in self._tasks.values()
                    if t.owner is owner and not self._expired(t, now)]

    def _expired(self, task: Task, now: float) -> bool:
        return now >= task.created_at + task.ttl_ms / 1000

    def _purge(self, now: float) -> None:
        for task_id in [t.id for t in self._tasks.values() if self._expired(t, now)]:
            task = self._tasks.pop(task_id)
            task.cancelled.set()  # an expired task still running has no one to answer to

    # -- the state machine -------------------------------------------------------------

    def _move(self, task: Task, status: str) -> bool:
        """Change status under the lock; False (nothing changes) from a terminal status."""
        if status not in TRANSITIONS[task.status]:
            if task.terminal:
                return False
            raise ValueError(f"a task cannot go from {task.status} to {status}")
        task.status = status
        task.updated_at = self.clock()
        self._changed.notify_all()
        return True

    def _announce(self, task: Task, moved: bool) -> None:
        if moved and self.on_status is not None:
            self.on_status(task)

    def complete(self, task: Task, result: dict[str, Any], status: str = COMPLETED,
                 message: str | None = None) -> None:
        """The tool returned (a cancelled task keeps its status: the result is dropped).
        2025-11-25 makes a tool's ``isError`` result ``failed``: pass ``status=FAILED``."""
        with self._changed:
            if not task.terminal:
                task.result = result
                task.status_message = message
            moved = self._move(task, status)
        self._announce(task, moved)

    def fail(self, task: Task, error: dict[str, Any]) -> None:
        """The call broke with a protocol error (``{code, message, data?}``)."""
        with self._changed:
            if not task.terminal:
                task.error = error
            moved = self._move(task, FAILED)
        self._announce(task, moved)

    def cancel(self, task: Task) -> None:
        """Cancel a task; a terminal one stays as it is (cancelling is idempotent)."""
        with self._changed:
            moved = self._move(task, CANCELLED)
            if moved:
                task.pending.clear()
                task.cancelled.set()
        self._announce(task, moved)

    def wait_done(self, task: Task, timeout: float) -> bool:
        """Wait until the task is terminal (2025-11-25's tasks/result); whether it is."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while not task.terminal:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._changed.wait(left)
            return True

    def set_waiting(self, task: Task, waiting: bool) -> None:
        """2025-11-25: the task asks its client directly (``input_required`` meanwhile)."""
        with self._changed:
            status = INPUT_REQUIRED if waiting else WORKING
            moved = task.status != status and not task.terminal and self._move(task, status)
        self._announce(task, moved)

    # -- questions and answers ---------------------------------------------------------

    def ask(self, task: Task, requests: dict[str, dict[str, Any]],
            timeout: float = DEFAULT_INPUT_TIMEOUT_S) -> dict[str, Any]:
        """From the task's thread: wait until every question is answered; the answers.

        The task is ``input_required`` while any is pending. Raises :class:`TaskCancelled`
        if the task is cancelled meanwhile, :class:`TimeoutError` after ``timeout``.
        """
        deadline = time.monotonic() + timeout
        with self._changed:
            if task.terminal:
                raise TaskCancelled(task.id)
            task.pending.update({k: v for k, v in requests.items() if k not in task.answers})
            moved = bool(task.pending) and task.status != INPUT_REQUIRED \
                and self._move(task, INPUT_REQUIRED)
        self._announce(task, moved)
        with self._changed:
            while not task.terminal and any(key not in task.answers for key in requests):
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"task {task.id}: no answer to "
                                       f"{', '.join(sorted(task.pending))} in {timeout:g} s")
                self._changed.wait(left)
            if task.terminal:
                raise TaskCancelled(task.id)
            return {key: task.answers.pop(key) for key in requests}

    def answer(self, task: Task, responses: dict[str, Any]) -> None:
        """``tasks/update``: take the answers to pending questions (other keys are
        ignored); the task works again once none is pending."""
        with self._changed:
            for key, value in responses.items():
                if key in task.pending:
                    del task.pending[key]
                    task.answers[key] = value
            moved = not task.pending and task.status == INPUT_REQUIRED \
                and self._move(task, WORKING)
            self._changed.notify_all()
        self._announce(task, moved)
