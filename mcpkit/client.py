"""An MCP client session with a blocking API: one connection to one server.

    with Client("python", ["-m", "mcpkit", "serve", "mcpkit.examples.notes:server"]) as notes:
        notes.list_tools()
        result = notes.call_tool("notes_search", {"query": "mcp"})

    with Client(url="http://127.0.0.1:8000/mcp") as notes:    # streamable HTTP
        notes.list_tools()

The API blocks the calling thread and uses no event loop of the caller's, so it works the
same in a script and in a Jupyter kernel (which already runs one). For asyncio programs,
:class:`mcpkit.aclient.AsyncClient` has the same methods, awaitable.

Theory of operation
-------------------
Every decision is made by :class:`mcpkit.session.ClientSession` (read it first): this
module only moves bytes and waits. It drives the session's *procedures* with
:meth:`Client._drive`, sending each :class:`~mcpkit.session.Call` and blocking on its
:class:`PendingRequest`, and runs the *jobs* that incoming messages produce.

Threads. Next to the caller's, a session runs:

- the **reader**, which owns the server's stdout and feeds it to the session. A response
  settles its request right there, inside :meth:`ClientSession.feed`: the pending
  request's lock is released, and the caller blocked on it wakes. No queue, no thread
  hop. The other jobs go on a queue, so the reader is back to reading at once;
- the **dispatcher**, which runs those jobs (user callbacks, list re-fetches) in order. A
  slow callback delays later callbacks, never a response. A legacy server's request
  (sampling, elicitation, roots) is answered on a short-lived thread of its own instead,
  because it may wait for a human;
- the stderr **drain**, owned by :class:`~mcpkit.transports.process.ServerProcess`.

Over HTTP there is no reader and no drain: the transport's I/O thread hands each message
to :meth:`Client._receive`, which does the reader's job (and a failed exchange to
:meth:`Client._on_http_failure`). Cancelling is closing the request's stream (2026-07-28),
or ``notifications/cancelled`` (legacy); the end of the session is the server becoming
unreachable or ending the legacy session, rather than end of stream.

Hostile servers: nothing the server does may make a wait outlast its timeout. Every
write has a deadline (see :mod:`mcpkit.transports.process`): a request's own timeout or
``write_timeout``, and a short one for cancellations, which are sent after a timeout has
already expired. A write that cannot start raises :class:`WriteTimeout` and the session
goes on; one cut short leaves half a message in the pipe, so the session is closed
(:class:`ConnectionClosed` saying why, ``on_closed`` called once).
"""

from __future__ import annotations

import concurrent.futures
import logging
import os
import queue
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from .framing import DEFAULT_MAX_MESSAGE_SIZE
from .session import (
    DEFAULT_MAX_ROUNDS,
    DEFAULT_PROBE_TIMEOUT,
    DEFAULT_TIMEOUT,
    USE_DEFAULT,
    Answer,
    Call,
    Cancel,
    ClientSession,
    ConnectionClosed,
    HttpError,
    NotOffered,
    ProtocolError,
    RequestCancelled,
    RequestTimeout,
    ResponseTooLarge,
    Run,
    Send,
    ServerError,
    SessionError,
    Subscription,
    WriteTimeout,
    _peek_envelope,  # noqa: F401  (tests reach it here)
    is_error,
    outcome,
    result_text,
)
from .task_client import Sleep, ToolTask
from .task_client import start as _start_task
from .transports.process import ServerProcess, StdinTimeout

if TYPE_CHECKING:
    from .oauth import OAuth
    from .transports.http_client import HttpFailure, HttpTransport

__all__ = [
    "Client",
    "ConnectionClosed",
    "HttpError",
    "NotOffered",
    "PendingRequest",
    "ProtocolError",
    "RequestCancelled",
    "RequestTimeout",
    "ResponseTooLarge",
    "ServerError",
    "SessionError",
    "Subscription",
    "WriteTimeout",
    "connect",
    "is_error",
    "result_text",
]

log = logging.getLogger("mcpkit.client")

# How long a message may wait to be written to a stdio server that does not read its
# stdin (a request's own, shorter, timeout bounds its write too).
DEFAULT_WRITE_TIMEOUT = 10.0
# A cancellation is sent after a timeout has already expired: it gets a short budget of
# its own, so that a server that stopped reading cannot stretch the caller's wait.
CANCEL_WRITE_TIMEOUT = 1.0

Callback = Callable[[dict[str, Any]], Any]
_USE_DEFAULT = USE_DEFAULT


# -- one request in flight ---------------------------------------------------------------


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


#: How long a caller whose timeout lost the race to its answer waits for the hand-over
#: (which follows the request's own callbacks, in wire order).
HANDOVER_WAIT_S = 5.0

class PendingRequest:
    """A request sent and not yet settled. :meth:`result` waits for it."""

    __slots__ = ("id", "method", "on_progress", "notify_cancel", "after_callbacks", "_client",
                 "_lock", "_response", "_error", "_settled", "_send_wait")

    def __init__(self, client: Client, call: Call) -> None:
        self.id, self.method, _, self.on_progress, _, _, self.notify_cancel = call
        self._client = client
        # Settle after the callbacks queued ahead of the answer (wire order), unless the
        # request comes from the dispatcher itself (a re-fetch), which would wait for itself.
        self.after_callbacks = threading.current_thread() is not client._dispatcher
        # A lock used as a one-shot signal: created held, released when settled. It is
        # the cheapest thing CPython can block on, and a timed acquire can be interrupted
        # by Ctrl-C.
        self._lock = threading.Lock()
        self._lock.acquire()
        self._response: dict[str, Any] | None = None
        self._error: BaseException | None = None
        self._settled = False
        self._send_wait = 0.0  # seconds the write waited for the server to read

    def _resolve(self, response: dict[str, Any] | None = None,
                 error: BaseException | None = None) -> None:
        """Called once, by whoever popped this request from the pending table."""
        self._response = response
        self._error = error
        self._lock.release()

    def done(self) -> bool:
        return self._settled or not self._lock.locked()

    def result(self, timeout: float | None = _USE_DEFAULT) -> dict[str, Any]:
        """Wait for the result (the session's default timeout unless given; None waits
        for ever). Raises :class:`ServerError`, :class:`RequestTimeout`,
        :class:`ConnectionClosed` or :class:`RequestCancelled`."""
        if timeout is _USE_DEFAULT:
            timeout = self._client.timeout
        return self._outcome(timeout, timeout)

    def _outcome(self, wait: float | None, timeout: float | None) -> dict[str, Any]:
        """Wait ``wait`` seconds at most (what is left of ``timeout``, the budget an error
        names), then return the result or raise."""
        if not self._settled:
            self._wait(wait, timeout)
            self._settled = True
        if self._error is not None:
            raise self._error
        response = self._response
        assert response is not None
        result = response.get("result")
        if type(result) is dict:  # the common case, without a call
            return result
        return outcome(response, self.method)  # raises the error

    def _wait(self, wait: float | None, timeout: float | None) -> None:
        try:
            got = self._lock.acquire(True, -1 if wait is None else max(wait, 0))
        except BaseException:  # Ctrl-C / kernel interrupt while waiting
            if self._client._cancel(self, "interrupted"):
                self._error = RequestCancelled(f"{self.method} was interrupted")
            raise
        if got:
            return
        if self._client._cancel(self, f"timed out after {timeout:g} s"):
            self._error = RequestTimeout(self.method, timeout or 0, self.id)
        elif not self._lock.acquire(True, HANDOVER_WAIT_S):
            # The response won the race with the timeout, and is handed over after the
            # request's own notifications (a job behind its callbacks): one of them is
            # still running, so the caller does not wait for it any longer.
            self._error = RequestTimeout(self.method, timeout or 0, self.id)

    def cancel(self, reason: str = "cancelled by the client") -> bool:
        """Cancel from any thread: the server is told, the waiter gets RequestCancelled.
        False if the request had already settled."""
        if not self._client._cancel(self, reason):
            return False
        self._resolve(error=RequestCancelled(f"{self.method}: {reason}"))
        return True

    def __repr__(self) -> str:
        return f"<PendingRequest {self.id} {self.method} {'done' if self.done() else 'waiting'}>"


# -- what both fronts share --------------------------------------------------------------


def _from_session(name: str, doc: str) -> property:
    return property(lambda self: getattr(self._session, name), doc=doc)


class Front:
    """What :class:`Client` and :class:`~mcpkit.aclient.AsyncClient` share: their
    arguments (see :class:`Client`), the session they make of them, its state."""

    def __init__(
        self,
        command: str | Sequence[str] | None = None,
        args: Sequence[str] = (),
        *,
        url: str | None = None,
        server: Any = None,
        headers: Mapping[str, str] | None = None,
        token: str | None = None,
        token_env: str | None = None,
        auth: OAuth | None = None,
        connect_timeout: float = 10.0,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        inherit_env: bool = True,
        name: str | None = None,
        framing: str = "ndjson",
        version: str | None = None,
        timeout: float | None = DEFAULT_TIMEOUT,
        probe_timeout: float = DEFAULT_PROBE_TIMEOUT,
        write_timeout: float = DEFAULT_WRITE_TIMEOUT,
        sampling: Callback | None = None,
        elicitation: Callback | None = None,
        capabilities: Mapping[str, Any] | None = None,
        roots: Sequence[dict[str, Any]] | Callable[[], Any] | None = None,
        log_level: str | None = None,
        listen: bool = True,
        max_rounds: int = DEFAULT_MAX_ROUNDS,
        client_info: dict[str, Any] | None = None,
        on_notification: Callable[[str, dict[str, Any]], Any] | None = None,
        on_log: Callable[[dict[str, Any]], Any] | None = None,
        on_list_changed: Callable[[str], Any] | None = None,
        on_closed: Callable[[Any, ConnectionClosed], Any] | None = None,
        on_stderr: Callable[[str], None] | None = None,
        stderr_lines: int = 200,
        shutdown_timeouts: tuple[float, float, float] = (2.0, 2.0, 2.0),
        max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
    ) -> None:
        if url is None and isinstance(command, str) and command.startswith(
                ("http://", "https://")):
            url, command = command, None
        if sum(x is not None for x in (command, url, server)) != 1:
            raise ValueError("give one of: a command (a stdio server), a url (HTTP), or "
                             "server= (a Server object in this process)")
        if command is not None and not isinstance(command, str):
            command, *more = command
            args = [*more, *args]
        if token_env is not None and token is None:
            token = os.environ.get(token_env)
            if not token:
                raise ValueError(f"the environment variable {token_env} (the bearer token for "
                                 f"{url}) is not set")
        self.command = command
        self.args = list(args)
        self.url = url
        self.server = server  # in memory: mcpkit.transports.memory
        self.name = name or (_guess_name(command, self.args) if command is not None
                             else getattr(server, "name", "server") if server is not None
                             else _name_from_url(url or ""))
        self.timeout = timeout
        self.write_timeout = write_timeout
        self.on_closed = on_closed
        self.shutdown_timeouts = shutdown_timeouts
        self._session = ClientSession(
            name=self.name, transport="stdio" if url is None else "http", url=url,
            framing=framing, max_message_size=max_message_size, version=version,
            timeout=timeout, probe_timeout=probe_timeout, client_info=client_info,
            sampling=sampling, elicitation=elicitation, capabilities=capabilities,
            roots=roots, log_level=log_level,
            listen=listen, max_rounds=max_rounds, on_notification=on_notification,
            on_log=on_log, on_list_changed=on_list_changed, clock=time.monotonic)
        # What the wire needs, kept for the subclass that makes it.
        self._wire = dict(headers=headers, token=token, auth=auth, connect_timeout=connect_timeout,
                          env=env, cwd=cwd, inherit_env=inherit_env, on_stderr=on_stderr,
                          stderr_lines=stderr_lines, max_message_size=max_message_size)
        self._started = False
        self._closing = False
        self._setup_wire(**self._wire)

    def _setup_wire(self, **wire: Any) -> None:
        raise NotImplementedError  # each front makes its own

    era = _from_session("era", "'modern' or 'legacy', once connected")
    protocol_version = _from_session("protocol_version", "the revision agreed on")
    server_info = _from_session("server_info", "the server's name, version, ...")
    server_capabilities = _from_session("server_capabilities", "what the server offers")
    declared_capabilities = _from_session("extra_capabilities",
                                          "what the application declared (capabilities=)")
    instructions = _from_session("instructions", "the server's advice for the model")
    junk_lines = _from_session("junk_lines", "stdout lines that were not JSON-RPC")
    log_level = _from_session("log_level", "the server log level asked for")
    requested_version = _from_session("requested_version", "the version forced, if any")
    probe_timeout = _from_session("probe_timeout", "how long the era probe waits")
    sampling = _from_session("sampling", "the sampling callback")
    elicitation = _from_session("elicitation", "the elicitation callback")
    roots = _from_session("roots", "the roots, or the function returning them")

    @property
    def closed_error(self) -> ConnectionClosed | None:
        """Why the session is dead (None while it is alive)."""
        return self._session.dead

    @property
    def alive(self) -> bool:
        return self._started and self._session.dead is None and not self._closing

    def cached_tools(self) -> list[dict[str, Any]] | None:
        """The tools as last fetched, without asking the server (None if never fetched)."""
        return self._session.cached_list("tools")

    def cached_list(self, kind: str) -> list[dict[str, Any]] | None:
        """A list as last fetched, without asking the server, even if a change was
        announced since (None if never fetched). ``kind``: "tools", "prompts",
        "resources" or "resourceTemplates"."""
        return self._session.cached_list(kind)

    def _check_usable(self) -> None:
        if not self._started:
            raise RuntimeError("call connect() first (or use the client as a context manager)")
        if self._session.dead is not None:
            raise self._session.dead
        if self._closing:
            raise ConnectionClosed(self.name, getattr(self, "returncode", None), (),
                                   "the session was closed", url=self.url)

    def __repr__(self) -> str:
        state = "alive" if self.alive else ("dead" if self._session.dead else "not connected")
        where = self.url if self.url is not None else f"pid={getattr(self, 'pid', None)}"
        return (f"<{type(self).__name__} {self.name} {self.era or '?'} "
                f"{self.protocol_version or ''} {where} {state}>")

    def _repr_html_(self) -> str:
        """A notebook's view: who the server is, the era, what it offers (no pid or timing,
        so a saved notebook stays the same from run to run)."""
        info = self.server_info or {}
        state = "alive" if self.alive else ("dead" if self._session.dead else "not connected")
        tools = self.cached_tools()
        rows = [("server", f"{info.get('name', self.name)} {info.get('version', '')}"),
                ("era", f"{self.era or '?'} {self.protocol_version or ''}"),
                ("state", state),
                ("capabilities", ", ".join(sorted(self.server_capabilities or {})) or "-"),
                ("tools", ", ".join(t["name"] for t in tools) if tools else "(not listed yet)")]
        body = "".join(f"<tr><th style='text-align:left'>{_escape(k)}</th>"
                       f"<td style='text-align:left'>{_escape(v)}</td></tr>" for k, v in rows)
        return f"<table><caption>{_escape(type(self).__name__)}</caption>{body}</table>"


# -- the blocking front ------------------------------------------------------------------


class Client(Front):
    """A session with one MCP server: a child process over stdio, or a URL over HTTP.

    ``command`` and ``args`` start the server (``command`` may also be a list holding
    both). ``url`` instead reaches a streamable HTTP endpoint (a ``command`` that is an
    ``http(s)://`` URL means the same); ``headers`` go with every request, and ``token``
    (or the environment variable named by ``token_env``) is sent as
    ``Authorization: Bearer``. ``version`` forces a revision ("2025-06-18", or
    "legacy"/"modern" for the latest of an era); by default the era is probed.
    ``sampling``, ``elicitation`` and ``roots`` answer the server's questions (they also
    decide the capabilities the client declares): ``sampling(params) ->
    CreateMessageResult``, ``elicitation(params) -> ElicitResult``, ``roots`` a list of
    roots or a function returning one.

    Every wait is bounded. ``timeout`` is a request's default (None: wait for ever for
    the answer); ``write_timeout`` bounds each write to a stdio server that stopped
    reading its stdin (a request's shorter timeout bounds its write too), raising
    :class:`WriteTimeout`. A message larger than ``max_message_size`` is refused; if it
    answers a request, that request fails with :class:`ResponseTooLarge`.

    Callbacks run on the dispatcher thread: ``on_notification(method, params)`` for every
    notification, ``on_log(params)`` for log messages (default: the ``mcpkit.client``
    logger), ``on_list_changed(kind)`` after a changed list was re-fetched (once per
    re-fetch: a burst of ``list_changed`` notifications is coalesced).
    ``on_closed(client, error)`` runs once when the server goes away unasked, or when a
    write cut short ruined the stream (on the reader thread for stdio, where it must not
    block; on a thread of its own for HTTP and for a ruined stream).
    """

    def _setup_wire(self, **wire: Any) -> None:
        # The wire: a child process, or (imported only then: httpx) an HTTP transport.
        self._process: ServerProcess | None = None
        self._http: HttpTransport | None = None
        if self.url is not None:
            from .transports.http_client import HttpTransport

            self._http = HttpTransport(
                self.url, on_message=self._receive, on_failure=self._on_http_failure,
                headers=wire["headers"], token=wire["token"], auth=wire["auth"], name=self.name,
                connect_timeout=wire["connect_timeout"],
                max_message_size=wire["max_message_size"])
            self._session.http_tools = self._http
        elif self.server is not None:
            from .transports.memory import InMemoryProcess

            self._process = InMemoryProcess(  # type: ignore[assignment]
                self.server, self.name, self._session.framing, wire["max_message_size"])
        else:
            assert self.command is not None
            self._process = ServerProcess(
                self.command, self.args, env=wire["env"], cwd=wire["cwd"],
                inherit_env=wire["inherit_env"], name=self.name,
                stderr_lines=wire["stderr_lines"], on_stderr=wire["on_stderr"])
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._reader: threading.Thread | None = None
        self._dispatcher: threading.Thread | None = None
        self._helpers: set[threading.Thread] = set()  # legacy server-request threads
        self._reader_done = threading.Event()
        self._dead_lock = threading.Lock()
        self._close_lock = threading.Lock()
        self._closed = False

    # -- lifecycle ---------------------------------------------------------------------

    def connect(self) -> Client:
        """Start the server and agree on an era. On failure everything is cleaned up."""
        if self._started:
            raise RuntimeError("this client was already connected; make a new one")
        self._started = True
        try:
            if self._http is not None:
                self._http.start()
            else:
                assert self._process is not None
                self._process.start()
        except BaseException:
            self._closed = self._closing = True
            raise
        if self._process is not None:
            self._reader = threading.Thread(target=self._read_loop, daemon=True,
                                            name=f"mcpkit-reader-{self.name}")
            self._reader.start()
        self._dispatcher = threading.Thread(target=self._dispatch_loop, daemon=True,
                                            name=f"mcpkit-callbacks-{self.name}")
        self._dispatcher.start()
        try:
            self._drive(self._session.handshake())
        except BaseException:
            self.close()
            raise
        return self

    def __enter__(self) -> Client:
        return self if self._started else self.connect()

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    @property
    def returncode(self) -> int | None:
        return self._process.returncode if self._process is not None else None

    def stderr_tail(self, lines: int | None = None) -> list[str]:
        """The last lines the server wrote to stderr (none over HTTP)."""
        return self._process.stderr_tail(lines) if self._process is not None else []

    def close(self) -> None:
        """End the session: stop the server (stdin EOF, SIGTERM, SIGKILL), reap it, stop
        the threads; over HTTP, close every stream and end a legacy session (DELETE).
        Requests still waiting fail with ConnectionClosed. Idempotent."""
        with self._close_lock:
            if self._closed:
                return
            self._closed = True
        self._closing = True
        if not self._started:
            return
        me = threading.current_thread()
        if self._http is not None:
            self._http.close()  # ends listen streams too: over HTTP that is how they end
            self._fail_all(ConnectionClosed(self.name, None, (), "the session was closed",
                                            url=self.url))
        else:
            assert self._process is not None
            if self._session.dead is None:
                for request_id in self._session.open_listens():  # end listens politely
                    self._send_cancel(request_id, "the client is closing")
            self._process.shutdown(*self.shutdown_timeouts)
            reader = self._reader
            if reader is not None and reader is not me:
                reader.join(2.0)
                if reader.is_alive():  # stdout held open by a leftover grandchild
                    self._process.kill()
                    reader.join(1.0)
            self._queue.put(None)
        if self._dispatcher is not None and self._dispatcher is not me:
            self._dispatcher.join(2.0)
        for helper in list(self._helpers):
            if helper is not me:
                helper.join(0.5)
        if self._process is not None and (self._reader is None or not self._reader.is_alive()):
            self._process.close()

    # -- driving the session's procedures ----------------------------------------------

    def _drive(self, steps: Any) -> Any:
        """Run a procedure of the session to its end: do each step it yields, hand back
        what came of it (a result, or an exception thrown into it)."""
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
                        value = self._round(step)
                    elif kind is Run:
                        value = step.function(*step.args)
                    elif kind is Send:
                        self._send(step.message, step.timeout)
                    elif kind is Cancel:
                        self._send_cancel(step.request_id, step.reason)
                    elif kind is Sleep:
                        time.sleep(step.seconds)
                    else:
                        raise TypeError(f"not a step: {step!r}")
                except Exception as exc:  # the procedure decides what it means
                    error = exc
        finally:
            steps.close()

    def _round(self, call: Call) -> dict[str, Any]:
        """One request: its write and its wait share one ``timeout``."""
        pending = self._start(call)
        timeout = call.timeout
        if timeout is None:
            return pending._outcome(None, None)
        return pending._outcome(timeout - pending._send_wait, timeout)

    def _start(self, call: Call) -> PendingRequest:
        """Send a request; its timeout (None: ``write_timeout``) bounds the write."""
        pending = PendingRequest(self, call)
        session = self._session
        if self._http is None:
            data = session.encode(call)
            request_id = pending.id
            if session.tracing is None:
                session.pending[request_id] = pending  # session.track, inlined: the hot path
                if session.dead is not None and session.withdraw(request_id) is not None:
                    raise session.dead.for_method(pending.method)
            else:
                session.track(pending)
            timeout = call.timeout  # the write's budget: _write_budget, inlined
            budget = self.write_timeout if timeout is None else min(timeout, self.write_timeout)
            try:
                pending._send_wait = self._write(data, pending.method, request_id, budget)
            except BaseException:
                session.withdraw(request_id)
                raise
            return pending
        message = session.message(call)
        session.track(pending)
        try:
            self._http.send(message)  # the HTTP headers are read off the message
        except (OSError, RuntimeError):
            session.withdraw(call.id)
            raise self._closed_error(call.method) from None
        except BaseException:  # the message cannot be encoded: nothing was sent
            session.withdraw(call.id)
            raise
        return pending

    def _write_budget(self, timeout: float | None) -> float:
        """How long a write may take: ``write_timeout``, or less if the caller has less."""
        return self.write_timeout if timeout is None else min(timeout, self.write_timeout)

    def _write(self, data: bytes, what: str, request_id: Any, timeout: float) -> float:
        """Write one message to the server's stdin within ``timeout`` seconds, or raise
        :class:`WriteTimeout` (or :class:`ConnectionClosed` if stdin is gone). Returns
        the seconds it waited."""
        assert self._process is not None
        try:
            return self._process.write(data, timeout)
        except StdinTimeout as exc:
            error = WriteTimeout(what, request_id, exc)
            if exc.torn:
                self._break(f"the server stopped reading its stdin, and a message ({what}) "
                            "was cut short: the stream is unusable")
            raise error from None
        except OSError:  # the child is gone: the reader will see end of stream and why
            raise self._closed_error(what) from None
        except BaseException:  # Ctrl-C in the middle of a long write
            if self._process.stdin_gone is not None:
                self._break(f"a message ({what}) was cut short when the write was "
                            "interrupted: the stream is unusable")
            raise

    def _send(self, message: dict[str, Any], timeout: float | None = None) -> None:
        """Send a notification or a response; over HTTP, wait until the server takes it."""
        what = message.get("method") or "a response"
        if self._http is None:
            self._write(self._session.encode_message(message), what, None,
                        self._write_budget(timeout))
            return
        from .transports.http_client import HttpFailure

        if timeout is None:
            timeout = self.timeout if self.timeout is not None else DEFAULT_TIMEOUT
        try:
            self._http.post(message, timeout)
        except HttpFailure as exc:
            if exc.fatal:
                self._on_http_failure(None, exc)
                raise self._closed_error(what) from None
            raise HttpError(exc.message, exc.status, what, self.url) from None
        except TimeoutError as exc:
            raise HttpError(f"{what}: {exc}", None, what, self.url) from None
        except (RuntimeError, concurrent.futures.CancelledError):  # closed meanwhile
            raise self._closed_error(what) from None

    def _closed_error(self, method: str) -> ConnectionClosed:
        if self._session.dead is None and self._http is None:
            # Writing failed, so the server is going or gone: give the reader a moment to
            # see end of stream and collect the exit status and the last stderr lines.
            self._reader_done.wait(1.0)
        if self._session.dead is not None:
            return self._session.dead.for_method(method)
        if self._http is not None:
            return ConnectionClosed(self.name, None, (), "the session was closed", method,
                                    self.url)
        return ConnectionClosed(self.name, self.returncode, self.stderr_tail(),
                                "the server's stdin is closed", method)

    def _cancel(self, pending: PendingRequest, reason: str) -> bool:
        """Take ``pending`` out of the table and tell the server; False if already settled."""
        if self._session.withdraw(pending.id) is None:
            return False
        if pending.notify_cancel:
            self._send_cancel(pending.id, reason)
        elif self._http is not None:
            self._http.cancel(pending.id)  # stop reading an answer nobody waits for
        return True

    def _send_cancel(self, request_id: int, reason: str) -> None:
        message = self._session.cancel_message(request_id, reason)
        if message is not None:
            try:
                self._send(message, CANCEL_WRITE_TIMEOUT if self._http is None else 5.0)
            except (SessionError, OSError) as exc:
                # The server is gone (nothing left to cancel), or not reading (it will not
                # see the request either; a cut-short write has closed the session).
                log.info("%s: could not cancel request %s: %s", self.name, request_id, exc)
        if self._http is not None:
            self._http.cancel(request_id)  # 2026-07-28: closing the stream is the cancel

    def _break(self, reason: str) -> None:
        """The session can no longer send (stdio): fail it as if the server had gone, and
        tell ``on_closed`` (from a thread of its own: the writer must not wait on it)."""
        error = ConnectionClosed(self.name, self.returncode, self.stderr_tail(), reason)
        if self._fail_all(error) and not self._closing:
            log.warning("%s", error)
            self._on_closed_elsewhere(error)

    # -- the public requests -----------------------------------------------------------

    def start_request(self, method: str, params: dict[str, Any] | None = None, *,
                      on_progress: Callable[[dict[str, Any]], None] | None = None
                      ) -> PendingRequest:
        """Send one request and return at once; ``.result()`` waits, ``.cancel()`` cancels.

        One round only: an ``input_required`` result is returned as is (see :meth:`request`).
        """
        self._check_usable()
        return self._start(self._session.call(method, params, on_progress, timeout=None))

    def request(self, method: str, params: dict[str, Any] | None = None, *,
                timeout: float | None = _USE_DEFAULT,
                on_progress: Callable[[dict[str, Any]], None] | None = None) -> dict[str, Any]:
        """Send a request and return its result, or raise a :class:`ServerError` (the
        server's error), :class:`RequestTimeout`, :class:`ConnectionClosed`.

        A modern ``input_required`` result is fulfilled through the callbacks and the
        request sent again (new id, ``inputResponses``, ``requestState`` echoed as
        received), at most ``max_rounds`` times. ``timeout`` applies to each round.
        """
        self._check_usable()
        return self._request(self._session.call(method, params, on_progress, timeout=timeout))

    def _request(self, call: Call) -> dict[str, Any]:
        # The first round is sent here, not by a procedure: most results are complete,
        # and driving a procedure costs a few microseconds a call (see the bench). It is
        # _round, inlined.
        pending = self._start(call)
        timeout = call.timeout
        result = pending._outcome(None if timeout is None else timeout - pending._send_wait,
                                  timeout)
        kind = result.get("resultType")
        if kind is None or kind == "complete":
            return result
        return self._drive(self._session.rounds(call, result))

    def notify(self, method: str, params: dict[str, Any] | None = None, *,
               timeout: float | None = None) -> None:
        """Send a notification; ``timeout`` (default ``write_timeout``; over HTTP, the
        session's ``timeout``) bounds the wait for the server to take it."""
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self._send(message, timeout)

    def list_tools(self, refresh: bool = False) -> list[dict[str, Any]]:
        """Every tool (all pages). Cached while the server can announce changes."""
        return self._drive(self._session.list("tools", refresh))

    def list_prompts(self, refresh: bool = False) -> list[dict[str, Any]]:
        return self._drive(self._session.list("prompts", refresh))

    def list_resources(self, refresh: bool = False) -> list[dict[str, Any]]:
        return self._drive(self._session.list("resources", refresh))

    def list_resource_templates(self, refresh: bool = False) -> list[dict[str, Any]]:
        return self._drive(self._session.list("resourceTemplates", refresh))

    def call_tool_as_task(self, name: str, arguments: dict[str, Any] | None = None, *,
                          ttl_ms: int | None = None) -> ToolTask:
        """Call a tool as a task (2026-07-28's extension, or 2025-11-25's ``params.task``):
        the server answers at once and runs the tool on. ``task.result(timeout)`` waits for
        its result, ``task.refresh()`` asks its status, ``task.cancel()`` stops it."""
        self._check_usable()
        return ToolTask(self, self._drive(_start_task(self._session, name, arguments, ttl_ms)))

    def call_tool(self, name: str, arguments: dict[str, Any] | None = None, *,
                  timeout: float | None = _USE_DEFAULT,
                  on_progress: Callable[[dict[str, Any]], None] | None = None
                  ) -> dict[str, Any]:
        """Call a tool; the result dict. A failing tool is a result: test :func:`is_error`.

        Over HTTP (2026-07-28) arguments marked ``x-mcp-header`` in the tool's schema also
        travel as ``Mcp-Param-*`` headers (see :meth:`ClientSession.call_tool`).
        """
        self._check_usable()
        if self._http is None:  # the header rules are HTTP's: a plain request
            return self._request(self._session.call(
                "tools/call", {"name": name, "arguments": arguments or {}}, on_progress,
                timeout=timeout))
        return self._drive(self._session.call_tool(name, arguments, on_progress, timeout))

    def read_resource(self, uri: str, *, timeout: float | None = _USE_DEFAULT) -> dict[str, Any]:
        """A resource's ``contents``. Not found is a ServerError (-32602, legacy -32002)."""
        return self.request("resources/read", {"uri": uri}, timeout=timeout)

    def get_prompt(self, name: str, arguments: dict[str, str] | None = None, *,
                   timeout: float | None = _USE_DEFAULT) -> dict[str, Any]:
        return self.request("prompts/get", _prompt_params(name, arguments), timeout=timeout)

    def complete(self, ref: dict[str, Any], argument: str, value: str,
                 context: dict[str, str] | None = None) -> dict[str, Any]:
        """Completions for a prompt argument or template variable: the ``completion``
        object (``values``, ``total``, ``hasMore``). ``ref`` is e.g.
        ``{"type": "ref/prompt", "name": "review_note"}``."""
        params = _complete_params(ref, argument, value, context)
        return self.request("completion/complete", params).get("completion", {})

    def set_log_level(self, level: str | None) -> None:
        """Ask for the server's log messages at ``level`` and above (None: stop, modern).

        Legacy: ``logging/setLevel``. Modern: the level goes in every request's ``_meta``.
        """
        self._drive(self._session.set_log_level(level))

    def notify_roots_changed(self) -> None:
        """Tell a legacy server the roots changed (modern servers ask again each time)."""
        if self.era == "legacy":
            self.notify("notifications/roots/list_changed")

    def ping(self, timeout: float | None = _USE_DEFAULT) -> None:
        """Check the server answers (legacy ``ping``; modern ``server/discover``)."""
        self.request("ping" if self.era == "legacy" else "server/discover", timeout=timeout)

    def subscribe(self, uris: str | Sequence[str],
                  callback: Callable[[str, dict[str, Any]], None] | None = None, *,
                  timeout: float | None = _USE_DEFAULT) -> Subscription:
        """Get ``notifications/resources/updated`` for ``uris`` until the subscription is
        closed. ``callback(uri, params)`` runs on the dispatcher thread."""
        self._check_usable()
        uri_list = [uris] if isinstance(uris, str) else list(uris)
        return self._drive(self._session.subscribe(self, uri_list, callback, timeout))

    def _end_subscription(self, sub: Subscription) -> None:
        self._drive(self._session.end_subscription(sub, self.alive))

    # -- what comes in -----------------------------------------------------------------

    def _read_loop(self) -> None:
        assert self._process is not None
        read = self._process.read
        feed = self._session.feed
        try:
            while True:
                data = read()
                if not data:
                    break
                jobs = feed(data)  # responses are handed over in there
                if jobs:
                    self._schedule(jobs)
            self._schedule(self._session.end_of_input())
        except Exception:
            log.exception("%s: the reader failed; closing the session", self.name)
        finally:
            self._on_end_of_stream()
            if self._closed:  # close() ran on this thread (from on_closed): finish it
                self._process.close()

    def _receive(self, message: Any) -> None:
        """One message off an HTTP answer (on the transport's I/O thread)."""
        jobs = self._session.receive(message)
        if jobs:
            self._schedule(jobs)

    def _schedule(self, jobs: list[Any]) -> None:
        for job in jobs:
            if type(job) is Answer:
                helper = threading.Thread(target=self._answer, args=(job.steps,), daemon=True,
                                          name=f"mcpkit-answer-{self.name}")
                self._helpers.add(helper)
                helper.start()
            else:
                self._queue.put(job)

    def _answer(self, steps: Any) -> None:
        try:
            self._drive(steps)
        finally:
            self._helpers.discard(threading.current_thread())

    def _dispatch_loop(self) -> None:
        get = self._queue.get
        while True:
            job = get()
            if job is None:
                return
            try:
                if type(job) is Run:
                    job.function(*job.args)
                else:
                    self._drive(job)
            except Exception:
                log.exception("%s: a notification callback failed", self.name)

    def _on_end_of_stream(self) -> None:
        # Collect what explains the end: the exit status and the last stderr lines.
        assert self._process is not None
        returncode = self._process.wait(0.5)
        self._process.wait_stderr(0.3)
        reason = "the session was closed" if self._closing else "the server closed the connection"
        error = ConnectionClosed(self.name, returncode, self.stderr_tail(), reason)
        first = self._fail_all(error)  # not if a cut-short write closed the session before
        self._reader_done.set()
        if first and not self._closing:
            log.warning("%s", error)
            self._call_on_closed(error)

    def _on_http_failure(self, request_id: Any, failure: HttpFailure) -> None:
        """An exchange gave no answer: fail its request; a fatal one ends the session."""
        if not failure.fatal:
            self._session.http_failure(request_id, failure)
            return
        error = ConnectionClosed(self.name, None, (), failure.message, url=self.url)
        if self._fail_all(error) and not self._closing:
            log.warning("%s", error)
            self._on_closed_elsewhere(error)  # the callback may block, or close this client

    def _fail_all(self, error: ConnectionClosed) -> bool:
        """Fail everything waiting, once; then let the dispatcher run what is queued, and end."""
        with self._dead_lock:
            first = self._session.fail_all(error)
        if first:
            self._queue.put(None)
        return first

    def _call_on_closed(self, error: ConnectionClosed) -> None:
        if self.on_closed is not None:
            try:
                self.on_closed(self, error)
            except Exception:
                log.exception("%s: on_closed callback failed", self.name)

    def _on_closed_elsewhere(self, error: ConnectionClosed) -> None:
        if self.on_closed is None:
            return

        def run() -> None:
            try:
                self._call_on_closed(error)
            finally:
                self._helpers.discard(threading.current_thread())

        helper = threading.Thread(target=run, daemon=True, name=f"mcpkit-closed-{self.name}")
        self._helpers.add(helper)
        helper.start()


def connect(command: str | Sequence[str] | None = None, args: Sequence[str] = (),
            **options: Any) -> Client:
    """Start a server and connect to it: ``Client(command, args, **options).connect()``
    (``connect(url="http://...")`` or ``connect("http://...")`` for an HTTP server)."""
    return Client(command, args, **options).connect()


def _prompt_params(name: str, arguments: dict[str, str] | None) -> dict[str, Any]:
    params: dict[str, Any] = {"name": name}
    if arguments:
        params["arguments"] = arguments
    return params


def _complete_params(ref: dict[str, Any], argument: str, value: str,
                     context: dict[str, str] | None) -> dict[str, Any]:
    params: dict[str, Any] = {"ref": ref, "argument": {"name": argument, "value": value}}
    if context:
        params["context"] = {"arguments": context}
    return params


def _guess_name(command: str, args: Sequence[str]) -> str:
    """A short name for logs and errors: what the command runs, not how.

    ``mcpkit serve pkg.notes:server`` -> ``notes``; ``node .../server-everything/dist/index.js``
    -> ``server-everything`` (an entry file's generic name says nothing: its package does);
    ``npx -y @scope/server-memory`` -> ``server-memory``; ``python -m pkg.mod`` -> ``mod``.
    """
    words = list(args)
    if "serve" in words and words.index("serve") + 1 < len(words):
        target = words[words.index("serve") + 1].partition(":")[0]
        return os.path.splitext(os.path.basename(target))[0] if target.endswith(".py") \
            else target.rsplit(".", 1)[-1]
    for i, arg in enumerate(words):
        if arg.endswith((".py", ".js", ".mjs", ".cjs", ".ts")):
            return _meaningful_stem(arg)
        if arg == "-m" and i + 1 < len(words):
            parts = words[i + 1].split(".")
            return parts[-2] if len(parts) > 1 and parts[-1] in _GENERIC_STEMS else parts[-1]
    plain = [a for a in words if not a.startswith("-")]
    if plain and os.path.basename(command) in ("npx", "uvx", "pipx", "bunx", "pnpm", "yarn"):
        return plain[-1].rsplit("/", 1)[-1].split("@")[0] or plain[-1]
    return os.path.basename(command)


_GENERIC_STEMS = {"index", "main", "cli", "server", "__main__", "app", "run"}
_BUILD_DIRS = {"dist", "build", "lib", "src", "bin", "out"}


def _meaningful_stem(path: str) -> str:
    parts = [p for p in path.replace("\\", "/").split("/") if p]
    stem = os.path.splitext(parts[-1])[0]
    if stem not in _GENERIC_STEMS:
        return stem
    for folder in reversed(parts[:-1]):  # up past dist/, build/...: the package's folder
        if folder not in _BUILD_DIRS:
            return folder
    return stem


def _name_from_url(url: str) -> str:
    """``http://127.0.0.1:8000/mcp`` -> ``127.0.0.1:8000``."""
    try:
        return urlsplit(url).netloc or url
    except ValueError:
        return url

