"""An MCP client session for asyncio programs: the same session, awaited.

    async with AsyncClient("python", ["-m", "mcpkit", "serve", "mcpkit.examples.notes:server"]) \\
            as notes:
        tools = await notes.list_tools()
        result = await notes.call_tool("notes_search", {"query": "mcp"})

Theory of operation
-------------------
Everything the session decides is in :class:`mcpkit.session.ClientSession`; this front
drives it on the caller's event loop, as :class:`mcpkit.client.Client` does with threads.
It starts no thread: over stdio the server is an asyncio subprocess, over HTTP the
transport's tasks run on this same loop.

Tasks. Next to the caller's:

- the **reader** feeds the server's stdout to the session; a response settles its
  request's future there and then;
- the **dispatcher** runs the other jobs in order (callbacks, list re-fetches); a legacy
  server's own request (sampling, elicitation, roots) gets a task of its own, since it
  may wait for a human;
- the **stderr drain** keeps the last lines the server wrote there.

Callbacks may be coroutine functions or plain ones; a plain one runs on the loop, so it
must be quick. A request's timeout covers its write and its wait. A cancelled caller (its
task cancelled, ``asyncio.timeout``) cancels the request at the server too.

Unlike the threaded front, a write that cannot finish in ``write_timeout`` ends the
session (:class:`ConnectionClosed`): asyncio has already taken the whole message into its
buffer and cannot take it back, so nothing later could be sent cleanly.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import os
import signal
from collections import deque
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from .client import CANCEL_WRITE_TIMEOUT, USE_DEFAULT, Front, _complete_params, _prompt_params
from .session import (
    Answer,
    Call,
    Cancel,
    ConnectionClosed,
    HttpError,
    RequestTimeout,
    Run,
    Send,
    SessionError,
    Subscription,
    outcome,
)
from .task_client import AsyncToolTask, Sleep
from .task_client import start as _start_task
from .transports.process import READ_SIZE, child_env, spawn_error

if TYPE_CHECKING:
    from .transports.http_client import HttpFailure, HttpTransport

__all__ = ["AsyncClient"]

log = logging.getLogger("mcpkit.client")


class _Waiter:
    """A request in the pending table: a future the caller awaits."""

    __slots__ = ("id", "method", "on_progress", "notify_cancel", "future", "after_callbacks")

    def __init__(self, call: Call, loop: asyncio.AbstractEventLoop,
                 after_callbacks: bool = True) -> None:
        self.id = call.id
        # Settle after the callbacks queued ahead of the answer (wire order), unless the
        # request comes from the callback task itself, which would then wait for itself.
        self.after_callbacks = after_callbacks
        self.method = call.method
        self.on_progress = call.on_progress
        self.notify_cancel = call.notify_cancel
        self.future: asyncio.Future[dict[str, Any]] = loop.create_future()

    def _resolve(self, response: dict[str, Any] | None = None,
                 error: BaseException | None = None) -> None:
        if self.future.done():  # its caller gave up (cancelled)
            return
        if error is not None:
            self.future.set_exception(error)
        else:
            self.future.set_result(response)  # type: ignore[arg-type]


class AsyncClient(Front):
    """A session with one MCP server, for asyncio: the arguments of
    :class:`~mcpkit.client.Client`, the same methods, awaited.

    Use it as ``async with AsyncClient(...) as client:``, or ``await client.connect()``
    and ``await client.close()``. ``on_closed(client, error)`` may be a coroutine too.
    """

    def _setup_wire(self, **wire: Any) -> None:
        self._options = wire
        self._loop: asyncio.AbstractEventLoop | None = None
        self._proc: asyncio.subprocess.Process | None = None
        self._http: HttpTransport | None = None
        if self.url is not None:
            from .transports.http_client import HttpTransport

            self._http = HttpTransport(
                self.url, on_message=self._receive, on_failure=self._on_http_failure,
                headers=wire["headers"], token=wire["token"], auth=wire["auth"], name=self.name,
                connect_timeout=wire["connect_timeout"],
                max_message_size=wire["max_message_size"])
            self._session.http_tools = self._http
        self._tail: deque[str] = deque(maxlen=wire["stderr_lines"])
        self._queue: asyncio.Queue[Any] = asyncio.Queue()
        self._tasks: set[asyncio.Task[Any]] = set()  # reader, drain, dispatcher, answers
        self._callbacks: asyncio.Task[Any] | None = None  # the dispatcher task
        self._reader: asyncio.Task[Any] | None = None
        self._drain: asyncio.Task[Any] | None = None
        self._closed = False

    # -- lifecycle ---------------------------------------------------------------------

    async def connect(self) -> AsyncClient:
        """Start the server and agree on an era. On failure everything is cleaned up."""
        if self._started:
            raise RuntimeError("this client was already connected; make a new one")
        self._started = True
        self._loop = asyncio.get_running_loop()
        try:
            if self._http is not None:
                self._http.start(loop=self._loop)
            else:
                await self._spawn()
            self._callbacks = self._spawn_task(self._dispatch_loop(), "callbacks")
            await self._drive(self._session.handshake())
        except BaseException:
            await self.close()
            raise
        return self

    async def __aenter__(self) -> AsyncClient:
        return self if self._started else await self.connect()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def _spawn(self) -> None:
        options = self._options
        if self.server is not None:
            from .transports.memory import AsyncInMemoryProcess

            self._proc = AsyncInMemoryProcess(  # type: ignore[assignment]
                self.server, self.name, self._session.framing,
                options["max_message_size"]).start()
            self._reader = self._spawn_task(self._read_loop(), "reader")
            self._drain = self._spawn_task(self._drain_stderr(), "stderr")
            return
        assert self.command is not None
        try:
            self._proc = await asyncio.create_subprocess_exec(
                self.command, *self.args, stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
                env=child_env(options["env"] or {}, options["inherit_env"]),
                cwd=options["cwd"], start_new_session=True)  # see transports.process
        except OSError as exc:
            raise spawn_error(self.name, self.command, options["cwd"], exc) from exc
        self._reader = self._spawn_task(self._read_loop(), "reader")
        self._drain = self._spawn_task(self._drain_stderr(), "stderr")

    def _spawn_task(self, coroutine: Any, role: str) -> asyncio.Task[Any]:
        task = asyncio.get_running_loop().create_task(coroutine,
                                                      name=f"mcpkit-{role}-{self.name}")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    @property
    def returncode(self) -> int | None:
        return self._proc.returncode if self._proc is not None else None

    def stderr_tail(self, lines: int | None = None) -> list[str]:
        """The last lines the server wrote to stderr (none over HTTP)."""
        tail = list(self._tail)
        return tail[-lines:] if lines else tail

    async def close(self) -> None:
        """End the session: stop the server (stdin EOF, SIGTERM, SIGKILL) and reap it, or
        close the HTTP streams; end every task. Waiting requests fail. Idempotent."""
        if self._closed:
            return
        self._closed = self._closing = True
        if not self._started:
            return
        if self._http is not None:
            await self._http.aclose()
            self._fail_all(ConnectionClosed(self.name, None, (), "the session was closed",
                                            url=self.url))
        elif self._proc is not None:
            if self._session.dead is None:
                for request_id in self._session.open_listens():  # end listens politely
                    await self._send_cancel(request_id, "the client is closing")
            await self._stop_process()
        self._queue.put_nowait(None)
        me = asyncio.current_task()
        tasks = [t for t in self._tasks if t is not me]
        if tasks:
            _, late = await asyncio.wait(tasks, timeout=2.0)
            for task in late:  # a callback that never returns, or stdout held open
                task.cancel()
            await asyncio.gather(*late, return_exceptions=True)
        if self._proc is not None:
            transport = getattr(self._proc, "_transport", None)  # the pipes, closed now
            if transport is not None:
                transport.close()

    async def _stop_process(self) -> None:
        """The spec's shutdown: close stdin, wait; SIGTERM, wait; SIGKILL, wait."""
        proc = self._proc
        assert proc is not None
        grace, term, kill = self.shutdown_timeouts
        if proc.stdin is not None and not proc.stdin.is_closing():
            proc.stdin.close()
        for wait, sig in ((grace, signal.SIGTERM), (term, signal.SIGKILL), (kill, None)):
            try:
                await asyncio.wait_for(proc.wait(), wait)
                return
            except TimeoutError:
                if sig is None:
                    log.warning("%s: the server did not exit after SIGKILL", self.name)
                    return
                if proc.pid is None:  # in memory: a thread cannot be signalled
                    continue
                try:
                    os.killpg(proc.pid, sig)  # its own group: wrappers' children too
                except ProcessLookupError:
                    pass

    # -- driving the session's procedures ----------------------------------------------

    async def _drive(self, steps: Any) -> Any:
        """Run a procedure of the session to its end (as :meth:`Client._drive`)."""
        value: Any = None
        error: Exception | None = None
        try:
            while True:
                try:
                    step = steps.send(value) if error is None else steps.throw(error)
                except StopIteration as done:
                    return done.value
                value = error = None
                try:
                    kind = type(step)
                    if kind is Call:
                        value = await self._round(step)
                    elif kind is Run:
                        value = await _run(step)
                    elif kind is Send:
                        await self._send(step.message, step.timeout)
                    elif kind is Cancel:
                        await self._send_cancel(step.request_id, step.reason)
                    elif kind is Sleep:
                        await asyncio.sleep(step.seconds)
                    else:
                        raise TypeError(f"not a step: {step!r}")
                except Exception as exc:  # the procedure decides what it means
                    error = exc
        finally:
            steps.close()

    async def _round(self, call: Call) -> dict[str, Any]:
        """One request: send it, await its answer within its timeout, or cancel it."""
        assert self._loop is not None
        session = self._session
        waiter = _Waiter(call, self._loop,
                         after_callbacks=asyncio.current_task() is not self._callbacks)
        session.track(waiter)
        start = self._loop.time()
        try:
            if self._http is not None:
                try:
                    self._http.send(session.message(call))
                except RuntimeError:  # the transport is closed
                    raise ConnectionClosed(self.name, None, (), "the session was closed",
                                           call.method, self.url) from None
            else:
                await self._write(session.encode(call), call.method, call.timeout)
        except BaseException:
            session.withdraw(call.id)
            raise
        timeout = call.timeout
        try:
            if timeout is None:
                response = await asyncio.shield(waiter.future)
            else:
                left = max(timeout - (self._loop.time() - start), 0)
                response = await asyncio.wait_for(asyncio.shield(waiter.future), left)
        except TimeoutError:
            if not await self._cancel(waiter, f"timed out after {timeout:g} s"):
                return outcome(waiter.future.result(), call.method)  # the answer won
            raise RequestTimeout(call.method, timeout or 0, call.id) from None
        except asyncio.CancelledError:
            # The caller gave up: tell the server, without making the caller wait for it.
            if session.withdraw(call.id) is not None:
                if waiter.notify_cancel:
                    self._spawn_task(self._send_cancel(call.id, "cancelled by the caller"),
                                     "cancel")
                elif self._http is not None:
                    self._http.cancel(call.id)
            raise
        return outcome(response, call.method)

    async def _cancel(self, waiter: _Waiter, reason: str) -> bool:
        """Take a request out of the table and tell the server; False if already settled."""
        if self._session.withdraw(waiter.id) is None:
            return False
        if waiter.notify_cancel:
            await self._send_cancel(waiter.id, reason)
        elif self._http is not None:
            self._http.cancel(waiter.id)
        return True

    async def _send_cancel(self, request_id: int, reason: str) -> None:
        message = self._session.cancel_message(request_id, reason)
        if message is not None:
            try:
                await self._send(message, CANCEL_WRITE_TIMEOUT if self._http is None else 5.0)
            except (SessionError, OSError) as exc:
                log.info("%s: could not cancel request %s: %s", self.name, request_id, exc)
        if self._http is not None:
            self._http.cancel(request_id)  # 2026-07-28: closing the stream is the cancel

    async def _write(self, data: bytes, what: str, timeout: float | None) -> None:
        proc = self._proc
        assert proc is not None and proc.stdin is not None
        if self._session.dead is not None:
            raise self._session.dead.for_method(what)
        budget = self.write_timeout if timeout is None else min(timeout, self.write_timeout)
        try:
            proc.stdin.write(data)
            await asyncio.wait_for(proc.stdin.drain(), budget)
        except TimeoutError:
            reason = (f"the server stopped reading its stdin ({what} not taken in "
                      f"{budget:g} s): the session is closed")
            error = ConnectionClosed(self.name, self.returncode, self.stderr_tail(), reason)
            if self._fail_all(error):
                self._spawn_task(self._notify_closed(error), "closed")
            raise error.for_method(what) from None
        except (OSError, RuntimeError):  # the pipe is gone: the reader will say why
            if self._reader is not None:
                await asyncio.wait([self._reader], timeout=1.0)
            dead = self._session.dead or ConnectionClosed(
                self.name, self.returncode, self.stderr_tail(), "the server's stdin is closed")
            raise dead.for_method(what) from None

    async def _send(self, message: dict[str, Any], timeout: float | None = None) -> None:
        """Send a notification or a response; over HTTP, until the server takes it."""
        what = message.get("method") or "a response"
        if self._http is None:
            await self._write(self._session.encode_message(message), what, timeout)
            return
        from .transports.http_client import HttpFailure

        try:
            await self._http.apost(message, timeout or self.timeout or 60.0)
        except HttpFailure as exc:
            if exc.fatal:
                self._on_http_failure(None, exc)
            raise HttpError(exc.message, exc.status, what, self.url) from None
        except TimeoutError as exc:
            raise HttpError(f"{what}: {exc}", None, what, self.url) from None

    # -- the public requests -----------------------------------------------------------

    async def request(self, method: str, params: dict[str, Any] | None = None, *,
                      timeout: float | None = USE_DEFAULT,
                      on_progress: Callable[[dict[str, Any]], Any] | None = None
                      ) -> dict[str, Any]:
        """Send a request and return its result (``input_required`` rounds included);
        raises as :meth:`Client.request` does."""
        self._check_usable()
        return await self._drive(self._session.request(method, params, on_progress, timeout))

    async def notify(self, method: str, params: dict[str, Any] | None = None, *,
                     timeout: float | None = None) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        await self._send(message, timeout)

    async def list_tools(self, refresh: bool = False) -> list[dict[str, Any]]:
        return await self._drive(self._session.list("tools", refresh))

    async def list_prompts(self, refresh: bool = False) -> list[dict[str, Any]]:
        return await self._drive(self._session.list("prompts", refresh))

    async def list_resources(self, refresh: bool = False) -> list[dict[str, Any]]:
        return await self._drive(self._session.list("resources", refresh))

    async def list_resource_templates(self, refresh: bool = False) -> list[dict[str, Any]]:
        return await self._drive(self._session.list("resourceTemplates", refresh))

    async def call_tool_as_task(self, name: str, arguments: dict[str, Any] | None = None, *,
                                ttl_ms: int | None = None) -> AsyncToolTask:
        """Call a tool as a task (see :meth:`Client.call_tool_as_task`); the handle's
        ``result``, ``refresh`` and ``cancel`` are awaited."""
        self._check_usable()
        fields = await self._drive(_start_task(self._session, name, arguments, ttl_ms))
        return AsyncToolTask(self, fields)

    async def call_tool(self, name: str, arguments: dict[str, Any] | None = None, *,
                        timeout: float | None = USE_DEFAULT,
                        on_progress: Callable[[dict[str, Any]], Any] | None = None
                        ) -> dict[str, Any]:
        """Call a tool; the result dict. A failing tool is a result: test ``is_error``."""
        self._check_usable()
        return await self._drive(self._session.call_tool(name, arguments, on_progress,
                                                         timeout))

    async def read_resource(self, uri: str, *,
                            timeout: float | None = USE_DEFAULT) -> dict[str, Any]:
        return await self.request("resources/read", {"uri": uri}, timeout=timeout)

    async def get_prompt(self, name: str, arguments: dict[str, str] | None = None, *,
                         timeout: float | None = USE_DEFAULT) -> dict[str, Any]:
        return await self.request("prompts/get", _prompt_params(name, arguments),
                                  timeout=timeout)

    async def complete(self, ref: dict[str, Any], argument: str, value: str,
                       context: dict[str, str] | None = None) -> dict[str, Any]:
        params = _complete_params(ref, argument, value, context)
        return (await self.request("completion/complete", params)).get("completion", {})

    async def set_log_level(self, level: str | None) -> None:
        await self._drive(self._session.set_log_level(level))

    async def notify_roots_changed(self) -> None:
        if self.era == "legacy":
            await self.notify("notifications/roots/list_changed")

    async def ping(self, timeout: float | None = USE_DEFAULT) -> None:
        await self.request("ping" if self.era == "legacy" else "server/discover",
                           timeout=timeout)

    async def subscribe(self, uris: str | Sequence[str],
                        callback: Callable[[str, dict[str, Any]], Any] | None = None, *,
                        timeout: float | None = USE_DEFAULT) -> Subscription:
        """Resource updates for ``uris`` until ``await sub.close()``."""
        self._check_usable()
        uri_list = [uris] if isinstance(uris, str) else list(uris)
        return await self._drive(self._session.subscribe(self, uri_list, callback, timeout))

    async def _end_subscription(self, sub: Subscription) -> None:
        await self._drive(self._session.end_subscription(sub, self.alive))

    # -- what comes in -----------------------------------------------------------------

    async def _read_loop(self) -> None:
        assert self._proc is not None and self._proc.stdout is not None
        read = self._proc.stdout.read
        feed = self._session.feed
        try:
            while data := await read(READ_SIZE):
                jobs = feed(data)  # responses are handed over in there
                if jobs:
                    self._schedule(jobs)
            self._schedule(self._session.end_of_input())
        except Exception:
            log.exception("%s: the reader failed; closing the session", self.name)
        finally:
            await self._on_end_of_stream()

    async def _drain_stderr(self) -> None:
        assert self._proc is not None and self._proc.stderr is not None
        on_stderr = self._options["on_stderr"]
        while True:
            try:
                raw = await self._proc.stderr.readuntil(b"\n")
            except asyncio.IncompleteReadError as end:
                raw = end.partial
            except asyncio.LimitOverrunError as long:  # a "line" with no end in sight
                raw = await self._proc.stderr.read(long.consumed)
            if not raw:
                return
            line = raw[:2000].decode("utf-8", "replace").rstrip("\r\n")
            self._tail.append(line)
            if on_stderr is not None:
                try:
                    on_stderr(line)
                except Exception:
                    log.exception("on_stderr callback failed")

    async def _on_end_of_stream(self) -> None:
        assert self._proc is not None
        try:  # what explains the end: the exit status and the last stderr lines
            await asyncio.wait_for(self._proc.wait(), 0.5)
            if self._drain is not None:
                await asyncio.wait([self._drain], timeout=0.3)
        except TimeoutError:
            pass
        reason = "the session was closed" if self._closing else "the server closed the connection"
        error = ConnectionClosed(self.name, self.returncode, self.stderr_tail(), reason)
        if self._fail_all(error) and not self._closing:
            log.warning("%s", error)
            await self._notify_closed(error)

    def _receive(self, message: Any) -> None:
        """One message off an HTTP answer (on this loop)."""
        jobs = self._session.receive(message)
        if jobs:
            self._schedule(jobs)

    def _on_http_failure(self, request_id: Any, failure: HttpFailure) -> None:
        if not failure.fatal:
            self._session.http_failure(request_id, failure)
            return
        error = ConnectionClosed(self.name, None, (), failure.message, url=self.url)
        if self._fail_all(error) and not self._closing:
            log.warning("%s", error)
            self._spawn_task(self._notify_closed(error), "closed")

    def _fail_all(self, error: ConnectionClosed) -> bool:
        first = self._session.fail_all(error)
        if first:
            self._queue.put_nowait(None)
        return first

    async def _notify_closed(self, error: ConnectionClosed) -> None:
        if self.on_closed is not None:
            try:
                await _run(Run(self.on_closed, (self, error)))
            except Exception:
                log.exception("%s: on_closed callback failed", self.name)

    def _schedule(self, jobs: list[Any]) -> None:
        for job in jobs:
            if type(job) is Answer:
                self._spawn_task(self._drive(job.steps), "answer")
            else:
                self._queue.put_nowait(job)

    async def _dispatch_loop(self) -> None:
        while (job := await self._queue.get()) is not None:
            try:
                if type(job) is Run:
                    await _run(job)
                else:
                    await self._drive(job)
            except Exception:
                log.exception("%s: a notification callback failed", self.name)


async def _run(step: Run) -> Any:
    """Call a callback; await what it returns if that is awaitable (a coroutine function)."""
    value = step.function(*step.args)
    if inspect.isawaitable(value):
        value = await value
    return value
