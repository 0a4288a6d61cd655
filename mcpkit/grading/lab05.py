"""Checks for lab 05 (a client): the request/response core of a session, over real pipes.

Every case starts a real server process (:mod:`mcpkit.grading.lab05_server`, a JSON-RPC peer
that answers well or badly on request: out of order, with notifications in between, for ids
nobody used, never, or by dying) and hands the learner's ``Session`` its two pipes. The
reference is :class:`ReferenceSession` below, the same design as :mod:`mcpkit.client` cut to
the lab's size: an id counter, a pending table of futures, one reader thread.

After each case the session is closed and the process is killed: a thread of the learner's
still running, or a server still alive, once ``close()`` returned is a failed check, because
in a notebook it would outlive the cell.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from typing import Any

from .core import (
    CaseResult,
    Gen,
    Seen,
    Step,
    _,
    differential,
    drop_each,
    run_checks,
    seen,
)
from .core import (
    case as _case,
)

#: The session machinery of mcpkit is what this lab asks the learner to write.
OFF_LIMITS: dict[str, set[str]] = {
    "mcpkit.client": {"Client", "PendingRequest", "connect", "Front"},
    "mcpkit.aclient": {"AsyncClient"},
    "mcpkit.session": {"ClientSession"},
    "mcpkit.host": {"Host"},
}

SERVER_SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "lab05_server.py")
#: A request's timeout in the checks, unless the case is about timeouts.
CALL_TIMEOUT = 3.0  # room for a loaded machine; a wrong answer that hangs pays it per call
SHORT_TIMEOUT = 0.2
#: How long close() and the threads it ends may take.
CLOSE_GRACE = 1.0
#: A close() that returns sooner than this after closing stdin, with its reader still running,
#: did not join it (a join with any timeout of its own waits at least that long).
_JOIN_GRACE = 0.05


def pending_left(session: Any) -> int:
    """Futures (or events) still held in the session's dicts: requests nobody waits for any
    more must not stay in the pending table."""
    from concurrent.futures import Future as _Future

    count = 0
    for value in list(vars(session).values()) if hasattr(session, "__dict__") else []:
        if isinstance(value, dict):
            count += sum(isinstance(v, _Future | threading.Event) for v in list(value.values()))
    return count


def server_command() -> list[str]:
    """The command that starts lab 05's test server (the lab's setup cell uses it too)."""
    return [sys.executable, "-I", SERVER_SCRIPT]


#: How long a server process may take to start before the checks time its requests anyway.
READY_TIMEOUT = 30.0


def start_server() -> subprocess.Popen:
    """The test server, started and reading its input: an interpreter that starts on a loaded
    machine can take seconds, and that must not count against the first request's timeout
    (honest work timed out there once, under CI load). The server says it is ready on stderr,
    only when the grader asks (MCPKIT_LAB05_READY), so the lesson's and the lab's own runs of
    it are unchanged."""
    process = subprocess.Popen(server_command(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE,
                               env={**os.environ, "MCPKIT_LAB05_READY": "1"})
    if os.name == "posix":  # select() on a pipe; elsewhere the timeouts' own room must do
        import select

        readable, _, _ = select.select([process.stderr], [], [], READY_TIMEOUT)
        if readable:
            process.stderr.readline()  # type: ignore[union-attr]
    return process


# --------------------------------------------------------------------------- the reference


class RequestError(Exception):
    """The server answered with an error (the lab's setup cell defines the same class)."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.data = data


class SessionClosed(Exception):
    """The server's output ended: this request will never be answered."""


class ReferenceSession:
    """The lab's session, as mcpkit's client does it: ids, pending futures, a reader thread."""

    def __init__(self, stdin: Any, stdout: Any) -> None:
        self._stdin = stdin
        self._stdout = stdout
        self._ids = itertools.count(1)
        self._pending: dict[int, Future] = {}
        self._notes: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._closed = False
        self._reader = threading.Thread(target=self._read_loop, daemon=True)
        self._reader.start()

    def _write(self, message: dict[str, Any]) -> None:
        data = json.dumps(message, separators=(",", ":")).encode() + b"\n"
        with self._lock:
            self._stdin.write(data)
            self._stdin.flush()

    def request(self, method: str, params: dict[str, Any] | None = None,
                timeout: float = 5.0) -> Any:
        request_id = next(self._ids)
        future: Future = Future()
        with self._lock:
            if self._closed:
                raise SessionClosed("the session has ended")
            self._pending[request_id] = future
        message = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        try:
            self._write(message)
        except (OSError, ValueError):
            self._pending.pop(request_id, None)
            raise SessionClosed("the server's input is closed") from None
        try:
            return future.result(timeout)
        except TimeoutError:
            if self._pending.pop(request_id, None) is None and future.done():
                return future.result()  # settled just as the wait ended
            try:
                self._write({"jsonrpc": "2.0", "method": "notifications/cancelled",
                             "params": {"requestId": request_id, "reason": "timeout"}})
            except (OSError, ValueError):
                pass
            raise

    def notifications(self) -> list[dict[str, Any]]:
        with self._lock:
            notes, self._notes = self._notes, []
        return notes

    def _read_loop(self) -> None:
        for line in self._stdout:
            try:
                message = json.loads(line)
            except ValueError:
                continue
            if not isinstance(message, dict):
                continue
            if "method" in message and "id" not in message:
                with self._lock:
                    self._notes.append(message)
                continue
            future = self._pending.pop(message.get("id"), None) if _hashable(message) else None
            if future is None:
                continue  # an unknown id, or a request already given up on
            if "error" in message:
                error = message["error"]
                future.set_exception(RequestError(error.get("code"), error.get("message"),
                                                  error.get("data")))
            else:
                future.set_result(message.get("result"))
        with self._lock:
            self._closed = True
            pending, self._pending = self._pending, {}
        for future in pending.values():
            future.set_exception(SessionClosed("the server's output ended"))

    def close(self) -> None:
        try:
            self._stdin.close()
        except OSError:
            pass
        self._reader.join(CLOSE_GRACE)


def _hashable(message: dict[str, Any]) -> bool:
    return type(message.get("id")) in (int, str)


# --------------------------------------------------------------------------- running a session


class Blocked(Exception):
    """A call into the learner's session did not return in time (stuck on a lock or a read)."""


def bounded(thunk: Callable[[], Any], seconds: float, plain: bool = True) -> Any:
    """Call ``thunk`` on a thread of its own and wait at most ``seconds``: what it returned
    (through seen(), unless ``plain`` is false), or a Seen of what it raised, or of Blocked.

    The learner's code never runs on the checker's own thread: a call stuck where no signal
    reaches it (a lock inside a buffered pipe, say) cannot freeze the graded cell. The stuck
    thread ends when the case kills the server and its pipes reach end of file.
    """
    box: list[tuple[bool, Any]] = []

    def work() -> None:
        try:
            box.append((True, thunk()))
        except BaseException as exc:  # handed to the checker's thread, as data
            box.append((False, exc))

    worker = threading.Thread(target=work, daemon=True)
    worker.start()
    worker.join(seconds)
    if not box:
        return Seen.of(Blocked(), raised=True)
    ok, value = box[0]
    if not ok:
        if isinstance(value, NotImplementedError):
            raise value
        return _error_seen(value)
    return seen(value) if plain else value


_LAB_ERRORS = ("RequestError", "SessionClosed", "TimeoutError")


def _error_seen(exc: BaseException) -> Seen:
    """What a call raised, as the checks compare it: core's Seen (the class name, ``code`` and
    ``data``), plus a RequestError's ``message``, which the lab asks for too
    (``RequestError(code, message, data)``), where other labs leave error text free."""
    what = Seen.of(exc, raised=True)
    # An exception of the learner's own that subclasses one the lab names is that one, as
    # `except SessionClosed:` would see it.
    try:
        named = next((k.__name__ for k in type(exc).__mro__ if k.__name__ in _LAB_ERRORS),
                     what.type)
    except Exception:  # a class that hides its ancestry: compared by its own name
        named = what.type
    if named != what.type:
        what = Seen(named, what.attrs, True, what.message)
    if what.type != "RequestError":
        return what
    try:
        message = seen(getattr(exc, "message", None))
        hash(message)
    except Exception:  # a learner's attribute that is no plain value: compared by its repr
        message = repr(getattr(exc, "message", None))[:200]
    return Seen(what.type, (*what.attrs, ("message", message)), True, what.message)


class _Tally:
    """Requests the checks have made since the last Run started (an instance, not a module
    global: the class grader holds every mcpkit module to what it was when imported)."""

    calls = 0


_tally = _Tally()


class _WatchedInput:
    """The server's stdin as a session sees it, for the case about the pending table: at each
    request written, whether the session's dicts had already held as many futures as requests
    were written (each request's own among them, however the table is keyed: by the id, by
    ``json.dumps(id)``...); and for the case about flushing: the bytes written since the last
    flush(), which the server has not seen. Everything else goes to the real pipe."""

    def __init__(self, pipe: Any) -> None:
        self._pipe = pipe
        self._buffer = bytearray()
        self.unflushed = bytearray()
        self.closed_at: float | None = None  # when the session first closed it
        self.session: Any = None
        self.futures: list[Future] = []  # every future seen in the session's dicts (kept:
        self._seen: set[int] = set()       # their ids stay theirs)
        self.written: list[tuple[Any, bool]] = []  # (request id, its future already there?)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._pipe, name)

    def _dicts(self) -> dict[str, dict]:
        try:
            return {k: dict(v) for k, v in list(vars(self.session).items())
                    if isinstance(v, dict)}
        except (RuntimeError, TypeError):
            return {}

    def flush(self) -> Any:
        self.unflushed.clear()
        return self._pipe.flush()

    def close(self) -> Any:
        if self.closed_at is None:
            self.closed_at = time.monotonic()
        return self._pipe.close()

    def write(self, data: Any) -> Any:
        with contextlib.suppress(TypeError):
            self.unflushed += data
        if self.session is not None and isinstance(data, bytes | bytearray):
            self._buffer += data
            for table in self._dicts().values():
                for value in table.values():
                    if isinstance(value, Future) and id(value) not in self._seen:
                        self._seen.add(id(value))
                        self.futures.append(value)
            while (end := self._buffer.find(b"\n")) >= 0:
                line = bytes(self._buffer[:end])
                del self._buffer[: end + 1]
                try:
                    message = json.loads(line)
                except ValueError:
                    continue
                if isinstance(message, dict) and "method" in message and "id" in message \
                        and type(message["id"]) in (int, str):
                    registered = len(self.futures) > len(self.written)
                    self.written.append((message["id"], registered))
        return self._pipe.write(data)

    def early(self) -> list[Any]:
        """Requests written before their future was in the pending table (once a future was
        ever seen there: a table of other objects is not judged)."""
        if not self.futures:
            return []
        return [i for i, registered in self.written if not registered]


class Run:
    """One server process and one session on its pipes; cleans both up, and says what was left."""

    def __init__(self, make: Callable[..., Any], watched: bool = False) -> None:
        _tally.calls = 0
        self.summary: dict[str, Any] | None = None
        self.before = set(threading.enumerate())
        self.process = start_server()
        self.session: Any = None
        self.watch = _WatchedInput(self.process.stdin) if watched else None
        stdin = self.watch if self.watch is not None else self.process.stdin
        made = bounded(lambda: make(stdin, self.process.stdout), CALL_TIMEOUT, plain=False)
        if isinstance(made, Seen):
            self.end()
            raise Blocked(_("Session(stdin, stdout) did not return",
                            "Session(stdin, stdout) no retornó")
                          ) if made.type == "Blocked" else _Raised(made)
        self.session = made
        if self.watch is not None:
            self.watch.session = made

    def close_joined(self) -> Any:
        """Close the session and say whether close() waited for the session's threads: None
        if it did (or waited long enough, after closing stdin, to have tried), else how many
        were still running the moment it returned. A wait before stdin was closed does not
        count: the reader cannot end then. Then the same cleanup as left_over()."""
        here: list[Any] = []

        def closing() -> Any:
            started = time.monotonic()
            self.session.close()
            ended = time.monotonic()
            running = [t for t in threading.enumerate() if t not in self.before
                       and t is not threading.current_thread() and t.is_alive()]
            closed_at = self.watch.closed_at if self.watch is not None else None
            waited = ended - (started if closed_at is None else max(started, closed_at))
            here.append(None if not running or waited >= _JOIN_GRACE else len(running))

        closed = bounded(closing, CLOSE_GRACE + 1.0)
        return closed, (here[0] if here else None), *self._after_close()

    def left_over(self) -> tuple[Any, int, bool]:
        """Close the session: (what close() did, threads of its still alive, whether the
        server exited)."""
        closed = bounded(self.session.close, CLOSE_GRACE + 1.0)
        return closed, *self._after_close()

    def _after_close(self) -> tuple[int, bool]:
        deadline = time.monotonic() + CLOSE_GRACE
        alive: list[threading.Thread] = []
        while time.monotonic() < deadline:
            alive = [t for t in threading.enumerate()
                     if t not in self.before and t.is_alive()]
            if not alive:
                break
            time.sleep(0.01)
        try:
            self.process.wait(max(0.0, deadline - time.monotonic()))
            exited = True
        except subprocess.TimeoutExpired:
            exited = False
        return len(alive), exited

    def end(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        if self.summary is None:
            try:
                self.summary = json.loads(self.process.stderr.read() or b"null")
            except (OSError, ValueError):
                pass
        for pipe in (self.process.stdin, self.process.stdout, self.process.stderr):
            try:
                pipe.close()
            except (OSError, ValueError):
                pass


def scenario(make: Callable[..., Any], body: Callable[[Any], Any]) -> Callable[[], Any]:
    """A thunk for case(): start a server and a session, run ``body(session)``, clean up."""
    return _scenario_of_run(make, lambda run: body(run.session))


def _scenario_of_run(make: Callable[..., Any],
                     body: Callable[[Run], Any]) -> Callable[[], Any]:
    """:func:`scenario`, with ``body`` handed the whole :class:`Run`."""

    def thunk() -> Any:
        run = None
        try:
            run = Run(make)
            value = body(run)
            calls = _tally.calls
            bounded(run.session.close, CLOSE_GRACE + 1.0)
            with contextlib.suppress(subprocess.TimeoutExpired):
                run.process.wait(CLOSE_GRACE)
            run.end()
            return _verified(value, calls, run.summary)
        finally:
            if run is not None:
                run.end()

    return thunk


def _requests_in(summary: dict[str, Any]) -> int:
    return sum(n for method, n in summary.get("received", {}).items()
               if not method.startswith("notifications/"))


def _verified(value: Any, calls: int, summary: Any) -> Any:
    """``value``, unless the server says the requests never reached it."""
    if not isinstance(summary, dict):
        return value  # it did not exit on its own: the close() cases report that
    received = _requests_in(summary)
    if (summary.get("how") == "eof" and received != calls) or received == 0:
        return _("(the server received {r} of the {c} requests: send each one through "
                 "stdin)", "(el servidor recibió {r} de las {c} solicitudes: envía cada una "
                 "por stdin)").format(r=received, c=calls)
    return value


def in_threads(session: Any, calls: list[tuple[str, Any, float]]
               ) -> tuple[list[threading.Thread], list[Any]]:
    """Start each call on a thread of its own (in this order), collect what each saw."""
    outcomes: list[Any] = [None] * len(calls)

    def work(i: int, method: str, params: Any, timeout: float) -> None:
        try:
            outcomes[i] = seen(session.request(method, params, timeout=timeout))
        except Exception as exc:
            outcomes[i] = _error_seen(exc)

    _tally.calls += len(calls)
    threads = [threading.Thread(target=work, args=(i, *call), daemon=True)
               for i, call in enumerate(calls)]
    for t in threads:
        t.start()
        time.sleep(0.02)  # let each request reach the pipe in order
    return threads, outcomes


def held_calls(session: Any, count: int) -> list[Any]:
    """``count`` requests the server holds, then a release that answers them newest first."""
    threads, outcomes = in_threads(session, [("hold", {"n": i}, CALL_TIMEOUT)
                                             for i in range(count)])
    released = _call(session, "release", {"count": count})
    for t in threads:
        t.join(CALL_TIMEOUT + 1)
    return [*outcomes, released]


def _call(session: Any, method: str, params: Any = None, timeout: float = CALL_TIMEOUT) -> Any:
    _tally.calls += 1
    return bounded(lambda: session.request(method, params, timeout=timeout), timeout + 1.5)


def _notes(session: Any) -> Any:
    return bounded(session.notifications, 1.0)


class _Raised(Exception):
    """Carries what the learner's constructor raised (as the checks show it) out of Run()."""

    def __init__(self, what: Seen) -> None:
        super().__init__(repr(what))
        self.what = what


def _methods(notes: Any) -> Any:
    if not isinstance(notes, list):
        return notes
    return [(n.get("method"), (n.get("params") or {}).get("data")) if isinstance(n, dict) else n
            for n in notes]


# --------------------------------------------------------------------------- hints


def _found(got: Any, test: Callable[[Seen], bool]) -> bool:
    """Whether an error matching ``test`` is anywhere in what a case got."""
    if isinstance(got, Seen):
        return test(got)
    if isinstance(got, dict):
        return any(_found(v, test) for v in got.values())
    if isinstance(got, list | tuple):
        return any(_found(v, test) for v in got)
    return False


def _is_refusal(error: Seen) -> bool:
    return error.type == "RequestError" and dict(error.attrs).get("code") == -32600


def _is_timeout(error: Seen) -> bool:
    return error.type == "TimeoutError"


def case(name: str, thunk: Callable[[], Any], expected: Any, *,
         hint: str | Callable[[Any], str | None] | None = None, lost: bool = False
         ) -> CaseResult:
    """core.case, with the hint the evidence shows first: one cause (an id used twice, an
    answer that found no future) fails many cases, and each case's own hint would point
    elsewhere. ``lost``: a case whose server answers at once, where a TimeoutError means the
    answer was lost."""

    def evidence(got: Any) -> str | None:
        if _found(got, _is_refusal) and not _found(expected, _is_refusal):
            return _("the server refused a request with error -32600 (its message says why: "
                     "an id it had already seen, or one that is not an integer or a string): "
                     "give every request a new id, from one counter per session "
                     "(itertools.count(1))",
                     "el servidor rechazó una solicitud con el error -32600 (su mensaje dice "
                     "por qué: un id que ya había visto, o uno que no es un entero ni una "
                     "cadena): da a cada solicitud un id nuevo, de un contador por sesión "
                     "(itertools.count(1))")
        if lost and _found(got, _is_timeout) and not _found(expected, _is_timeout):
            return _("request() timed out, though the server answers this at once: its answer "
                     "found no future waiting. Put the future in the pending table before "
                     "writing, and keep the reader thread reading (no exception may end it)",
                     "a request() se le agotó el tiempo de espera, aunque el servidor responde "
                     "a esto en el acto: su respuesta no encontró ningún future esperando. "
                     "Pon el future en la tabla de pendientes antes de escribir y mantén el hilo "
                     "lector leyendo (ninguna excepción debe terminarlo)")
        if callable(hint):
            return hint(got)
        return hint

    return _case(name, thunk, expected, hint=evidence)


# --------------------------------------------------------------------------- part 1


def check_requests(make_session: Callable[..., Any]) -> None:
    """Part 1: requests and results, notifications, errors, stray and out-of-order answers."""
    s = make_session
    results = [
        case(_("Session() starts one reader thread, in __init__",
               "Session() arranca un hilo lector, en __init__"),
             _threads_started(s), [1, {"echo": {}}],
             hint=_threads_hint),
        case(_("one request, its result", "una solicitud, su resultado"),
             scenario(s, lambda x: _call(x, "echo", {"text": "hola"})),
             {"echo": {"text": "hola"}},
             lost=True,
             hint=_("request() returns the response's result: message['result']",
                    "request() devuelve el resultado de la respuesta: message['result']")),
        case(_("five requests in a row: a new id each time",
               "cinco solicitudes seguidas: un id nuevo cada vez"),
             scenario(s, lambda x: [_call(x, "echo", {"n": n}) for n in range(5)]),
             [{"echo": {"n": n}} for n in range(5)],
             hint=_("the test server refuses an id it has seen (error -32600): count them "
                    "with itertools.count()",
                    "el servidor de prueba rechaza un id que ya vio (error -32600): cuéntalos "
                    "con itertools.count()")),
        case(_("a request without params", "una solicitud sin params"),
             scenario(s, lambda x: _call(x, "echo")),
             {"echo": {}},
             lost=True,
             hint=_("leave \"params\" out of the message when it is None",
                    "deja \"params\" fuera del mensaje cuando es None")),
        case(_("lines that are not messages (not JSON, blank, a scalar, an array) are skipped",
               "las líneas que no son mensajes (no JSON, en blanco, un escalar, un array) se "
               "saltan"),
             scenario(s, lambda x: [_call(x, "junk"), _call(x, "echo", {"still": "reading"})]),
             [{"after": "junk"}, {"echo": {"still": "reading"}}],
             hint=_("wrap json.loads in try/except ValueError and skip a value that is not an "
                    "object (a dict): the reader thread must outlive any line",
                    "envuelve json.loads en try/except ValueError y salta un valor que no sea "
                    "un objeto (un dict): el hilo lector debe sobrevivir a cualquier línea")),
        case(_("a request from the server (a method and an id) and an object with neither "
               "are no notifications", "una solicitud del servidor (con method e id) y un "
               "objeto sin ninguno de los dos no son notificaciones"),
             scenario(s, lambda x: [_call(x, "junk"), _methods(_notes(x))]),
             [{"after": "junk"}, []],
             hint=_("only a message with a \"method\" and no \"id\" is a notification: a "
                    "request from the server has an id, and {\"jsonrpc\": \"2.0\"} has no "
                    "method",
                    "solo un mensaje con \"method\" y sin \"id\" es una notificación: una "
                    "solicitud del servidor lleva id, y {\"jsonrpc\": \"2.0\"} no lleva "
                    "method")),
        case(_("a request without params leaves \"params\" out of the message",
               "una solicitud sin params deja \"params\" fuera del mensaje"),
             scenario(s, lambda x: _call(x, "shape")), {"params": "absent"},
             lost=True,
             hint=_("no \"params\" key at all when params is None: not null, not {}",
                    "ninguna clave \"params\" cuando params es None: ni null, ni {}")),
        case(_("params other than None are sent as given: {} and an array too",
               "unos params que no son None se envían tal cual: también {} y un array"),
             scenario(s, lambda x: [_call(x, "shape", {}), _call(x, "shape", [1, "a"]),
                                    _call(x, "shape", {"k": [None, False]})]),
             [{"params": {}}, {"params": [1, "a"]}, {"params": {"k": [None, False]}}],
             lost=True,
             hint=_("only None leaves \"params\" out: send any other params exactly as "
                    "given (test `params is not None`, not `params`; no wrapping, no copy "
                    "that changes it)",
                    "solo None deja fuera \"params\": envía cualquier otro params tal cual "
                    "(comprueba `params is not None`, no `params`; sin envolverlo ni hacer una "
                    "copia que lo cambie)")),
        case(_("an error's data reaches RequestError.data",
               "el data de un error llega a RequestError.data"),
             scenario(s, lambda x: _call(x, "error", {"code": -32000, "message": "busy",
                                                      "data": {"retry_after": 3}})),
             _error_seen(RequestError(-32000, "busy", {"retry_after": 3})),
             lost=True,
             hint=_("RequestError(error['code'], error['message'], error.get('data'))",
                    "RequestError(error['code'], error['message'], error.get('data'))")),
        case(_("responses with id true, 1.0 or \"1\" do not answer request 1",
               "las respuestas con id true, 1.0 o \"1\" no responden a la solicitud 1"),
             scenario(s, _typed_strays), [{"held": {"n": 0}}, {"ok": True}, {"released": 1}],
             hint=_("True == 1 and 1.0 == 1 in Python, so pending.pop(message['id']) finds "
                    "request 1 for them: only an int id (type(id) is int) can be one of yours",
                    "True == 1 y 1.0 == 1 en Python, así que pending.pop(message['id']) "
                    "encuentra la solicitud 1 con esos ids: solo un id int (type(id) is int) "
                    "puede ser tuyo")),
        case(_("an error response raises RequestError with its code and message",
               "una respuesta de error lanza RequestError con su código y su mensaje"),
             scenario(s, lambda x: _call(x, "error", {"code": -32601, "message": "nope"})),
             _error("RequestError", -32601, "nope"),
             lost=True,
             hint=_error_hint),
        case(_("two notifications before the response: kept, in order",
               "dos notificaciones antes de la respuesta: se guardan, en orden"),
             scenario(s, lambda x: [_call(x, "notify", {"count": 2}),
                                    _methods(_notes(x)),
                                    _methods(_notes(x))]),
             [{"sent": 2}, [("notifications/message", "1 of 2"),
                            ("notifications/message", "2 of 2")], []],
             lost=True,
             hint=_("a message with a method and no id is a notification: queue it; "
                    "notifications() hands over what is queued and empties the queue",
                    "un mensaje con method y sin id es una notificación: encólala; "
                    "notifications() entrega lo encolado y vacía la cola")),
        case(_("a notification while no request is waiting",
               "una notificación cuando ninguna solicitud espera"),
             scenario(s, lambda x: [_call(x, "notify_later"), _call(x, "notify_later"),
                                    _pause(0.4), _methods(_notes(x))]),
             [{}, {}, None, [("notifications/message", "later")] * 2],
             hint=_later_hint),
        case(_("a response for an id nobody used is ignored",
               "una respuesta para un id que nadie usó se ignora"),
             scenario(s, lambda x: [_call(x, "stray", {"ids": ["no-such-request", [1], {"id": 1},
                                                          None, 2.5]}),
                                    _call(x, "echo", {"after": 1})]),
             [{"ok": True}, {"echo": {"after": 1}}],
             hint=_("pop the id from the pending table; if nothing was waiting, drop the "
                    "message and keep reading. The reader thread must not die, even of an id "
                    "that is a list or an object (no dict key can be): only an int id can be "
                    "one of yours",
                    "saca el id de la tabla de pendientes; si nadie esperaba, descarta el "
                    "mensaje y sigue leyendo. El hilo lector no debe morir, tampoco por un id "
                    "que sea una lista o un objeto (no pueden ser claves de un dict): solo un "
                    "id int puede ser tuyo")),
        case(_("three requests answered newest first: each caller gets its own",
               "tres solicitudes respondidas empezando por la más reciente: cada hilo que "
               "llama recibe la suya"),
             scenario(s, lambda x: held_calls(x, 3)),
             [{"held": {"n": 0}}, {"held": {"n": 1}}, {"held": {"n": 2}}, {"released": 3}],
             hint=_("match a response to its request by id (the pending table), never by "
                    "order; request() may be called from several threads at once",
                    "empareja cada respuesta con su solicitud por id (la tabla de "
                    "pendientes), nunca por orden; request() puede llamarse desde varios "
                    "hilos a la vez")),
        case(_("each request's future is in the pending table before its message is written",
               "el future de cada solicitud está en la tabla de pendientes antes de escribir "
               "su mensaje"),
             _registered_first(s),
             {_("request ids written before they were in the pending table",
                "ids de solicitudes escritas antes de estar en la tabla de pendientes"): [],
              "results": [{"held": {"n": 0}}, {"held": {"n": 1}}, {"held": {"n": 2}},
                          {"released": 3}, {"echo": {}}]},
             hint=_("put the future in the pending table first, then write: the answer may "
                    "arrive before write() returns, and the reader would find nobody",
                    "pon el future en la tabla de pendientes primero y luego escribe: la "
                    "respuesta puede llegar antes de que write() retorne, y el lector no "
                    "encontraría a nadie")),
        case(_("two sessions side by side", "dos sesiones a la par"),
             _two_sessions(s), [{"sent": 1}, {"echo": {"who": "b"}}, [],
                                [("notifications/message", "1 of 1")],
                                {"echo": {"who": "b", "n": 2}}, {"held": {"n": 0}},
                                {"released": 1}],
             hint=_("keep the pending table and the notifications in self, not in the class "
                    "body: two sessions may have a request with the same id waiting at once",
                    "guarda la tabla de pendientes y las notificaciones en self, no en el "
                    "cuerpo de la clase: dos sesiones pueden tener esperando a la vez una "
                    "solicitud con el mismo id")),
        session_differential(s, "lab05/requests", _requests_ops,
                             _("generated sessions: results, errors, notifications",
                               "sesiones generadas: resultados, errores, notificaciones")),
    ]
    run_checks(results)


def _registered_first(make: Callable[..., Any]) -> Callable[[], Any]:
    """Three requests held at once, then more: each written only once its future was in the
    pending table (otherwise a quick answer finds nobody, now and then)."""

    def thunk() -> Any:
        run = None
        try:
            run = Run(make, watched=True)
            value = [*held_calls(run.session, 3), _call(run.session, "echo")]
            calls = _tally.calls
            early = run.watch.early() if run.watch else []
            bounded(run.session.close, CLOSE_GRACE + 1.0)
            with contextlib.suppress(subprocess.TimeoutExpired):
                run.process.wait(CLOSE_GRACE)
            run.end()
            key = _("request ids written before they were in the pending table",
                    "ids de solicitudes escritas antes de estar en la tabla de pendientes")
            return _verified({key: early, "results": value}, calls, run.summary)
        finally:
            if run is not None:
                run.end()

    return thunk


def _threads_started(make: Callable[..., Any]) -> Callable[[], Any]:
    """The threads a new session is running before any request (the reader must already be
    reading: a server may speak first), then one request."""

    def body(run: Run) -> list[Any]:
        started = [t for t in threading.enumerate() if t not in run.before and t.is_alive()]
        return [len(started), _call(run.session, "echo")]

    return _scenario_of_run(make, body)


def _threads_hint(got: Any) -> str | None:
    count = got[0] if isinstance(got, list) and got else None
    if count == 0:
        return _("no thread was running once Session() returned: start the reader thread in "
                 "__init__ (threading.Thread(target=self._read_loop, daemon=True).start()), "
                 "not at the first request",
                 "ningún hilo estaba en marcha cuando Session() retornó: arranca el hilo lector "
                 "en __init__ (threading.Thread(target=self._read_loop, daemon=True).start()), "
                 "no en la primera solicitud")
    if isinstance(count, int) and count > 1:
        return _("{n} threads were running once Session() returned: one reader thread per "
                 "session, and nothing else (requests run on their callers' threads)",
                 "{n} hilos estaban en marcha cuando Session() retornó: un hilo lector por "
                 "sesión y nada más (las solicitudes corren en los hilos de quien llama)"
                 ).format(n=count)
    return None


def _typed_strays(x: Any) -> Any:
    """Request 1 is held; strays with ids true, 1.0 and "1" arrive; then it is released."""
    threads, outcomes = in_threads(x, [("hold", {"n": 0}, CALL_TIMEOUT)])
    stray = _call(x, "stray", {"ids": [True, 1.0, "1"]})
    released = _call(x, "release", {"count": 1})
    for t in threads:
        t.join(CALL_TIMEOUT + 1)
    return [*outcomes, stray, released]


def _later_hint(got: Any) -> str:
    notes = got[-1] if isinstance(got, list) and got else None
    if isinstance(notes, list) and len(notes) == 1 and isinstance(notes[0], list | tuple) \
            and list(notes[0]) == ["notifications/message", "later"]:
        return _("two equal notifications came, and only one was kept: append every "
                 "notification, even one equal to another (no de-duplication)",
                 "llegaron dos notificaciones iguales y solo se guardó una: añade cada "
                 "notificación, aunque sea igual a otra (sin quitar duplicados)")
    return _("only a reader thread that reads all the time sees it: reading stdout inside "
             "request() leaves it in the pipe",
             "solo un hilo lector que lee todo el tiempo la ve: leer stdout dentro de "
             "request() la deja en la tubería")


def _pause(seconds: float) -> None:
    time.sleep(seconds)


def _error(name: str, code: int, message: str) -> Any:
    return Seen(name, (("code", code), ("data", None), ("message", message)), raised=True)


def _error_hint(got: Any) -> str:
    if isinstance(got, Seen) and got.type == "RequestError" \
            and dict(got.attrs).get("code") == -32601:
        return _("RequestError.message is the error's own message (error['message']), "
                 "as the server sent it: nothing added, nothing left out",
                 "RequestError.message es el propio mensaje del error (error['message']), "
                 "tal como lo envió el servidor: sin añadir ni quitar nada")
    return _("raise RequestError(error['code'], error['message'], error.get('data')) in the "
             "caller's thread", "lanza RequestError(error['code'], error['message'], "
             "error.get('data')) en el hilo de quien llama")


def _two_sessions(make: Callable[..., Any]) -> Callable[[], Any]:
    def thunk() -> Any:
        runs: list[Run] = []
        try:
            runs.append(Run(make))
            runs.append(Run(make))
            a, b = runs[0].session, runs[1].session
            value = [_call(a, "notify", {"count": 1}), _call(b, "echo", {"who": "b"}),
                     _methods(_notes(b)), _methods(_notes(a))]
            # Request 2 of each session waiting at the same time: a's is held until b's is
            # answered, then released.
            threads, outcomes = in_threads(a, [("hold", {"n": 0}, CALL_TIMEOUT)])
            deadline = time.monotonic() + 2.0  # a's request 2 waiting before b's is made
            while bounded(lambda: pending_left(a), 1.0) == 0 and time.monotonic() < deadline:
                time.sleep(0.01)
            time.sleep(0.05)
            value.append(_call(b, "echo", {"who": "b", "n": 2}))
            value.append(_call(a, "release", {"count": 1}))
            for t in threads:
                t.join(CALL_TIMEOUT + 1)
            value.insert(-1, outcomes[0])
            for run in runs:
                bounded(run.session.close, CLOSE_GRACE + 1.0)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    run.process.wait(CLOSE_GRACE)
                run.end()
            # Each server received exactly the requests made on its session.
            return _verified(_verified(value, 3, runs[0].summary), 2, runs[1].summary)
        finally:
            for run in runs:
                try:
                    run.session.close()
                except Exception:
                    pass
                run.end()

    return thunk


# --------------------------------------------------------------------------- part 2


def check_timeouts(make_session: Callable[..., Any]) -> None:
    """Part 2: a request nobody answers times out, says so to the server, and is forgotten."""
    s = make_session

    def timed(x: Any) -> Any:
        started = time.monotonic()
        outcome = _call(x, "silent", timeout=SHORT_TIMEOUT)
        # Well under the text's default of 5 s (a timeout ignored), with room for a slow machine.
        return [outcome, time.monotonic() - started < SHORT_TIMEOUT + 2.5]

    results = [
        case(_("nobody answers: TimeoutError after the timeout",
               "nadie responde: TimeoutError cuando se agota el tiempo de espera"),
             scenario(s, timed), [_raised("TimeoutError"), True],
             hint=_("wait on the future with its timeout (future.result(timeout)); "
                    "concurrent.futures' TimeoutError is the built-in one",
                    "espera el future con su tiempo de espera (future.result(timeout)); el "
                    "TimeoutError de concurrent.futures es el TimeoutError integrado de Python")),
        case(_("the timeout sends notifications/cancelled with the request's id",
               "al agotarse el tiempo de espera, se envía notifications/cancelled con el id "
               "de la solicitud"),
             scenario(s, lambda x: [_call(x, "silent", timeout=SHORT_TIMEOUT),
                                    _call(x, "cancelled")]),
             [_raised("TimeoutError"), {"cancelled": ["silent"], "reasons": ["timeout"]}],
             hint=_cancel_hint),
        case(_("the cancellation is flushed: the server has it before request() raises",
               "la cancelación se envía con flush: el servidor la tiene antes de que request() "
               "lance"),
             _flushed_cancel(s), [_raised("TimeoutError"), ""],
             hint=lambda got: _(
                 "write the notification with _write, which flushes: bytes left in the "
                 "pipe's buffer reach the server only with the next request, or never",
                 "escribe la notificación con _write, que hace flush: los bytes que se quedan "
                 "en el búfer de la tubería solo llegan al servidor con la siguiente "
                 "solicitud, o nunca") if isinstance(got, list) and len(got) == 2 and got[1]
             else None),
        case(_("a late answer to a request given up on is dropped",
               "una respuesta tardía a una solicitud abandonada se descarta"),
             scenario(s, lambda x: [_call(x, "late", {"delay": 0.3}, timeout=0.1), _pause(0.35),
                                    _call(x, "echo", {"next": True}),
                                    _notes(x)]),
             [_raised("TimeoutError"), None, {"echo": {"next": True}}, []],
             hint=_("on a timeout, remove the id from the pending table: its answer, when it "
                    "comes, belongs to nobody",
                    "al agotarse el tiempo de espera, quita el id de la tabla de pendientes: "
                    "su respuesta, cuando llegue, no es de nadie")),
        case(_("timed-out requests leave nothing in the pending table",
               "las solicitudes cuyo tiempo de espera se agotó no dejan nada en la tabla de "
               "pendientes"),
             scenario(s, lambda x: [_call(x, "echo", {"first": True}),
                                    _call(x, "silent", timeout=SHORT_TIMEOUT),
                                    _call(x, "silent", timeout=SHORT_TIMEOUT),
                                    _call(x, "echo"), bounded(lambda: pending_left(x), 1.0)]),
             [{"echo": {"first": True}}, _raised("TimeoutError"), _raised("TimeoutError"),
              {"echo": {}}, 0],
             hint=_("on a timeout, pop the id from the pending table: an entry nobody waits "
                    "for is a leak, one per timeout",
                    "al agotarse el tiempo de espera, saca el id de la tabla de pendientes: una "
                    "entrada que nadie espera es una fuga, una por cada vez que se agota el "
                    "tiempo de espera")),
        case(_("a timeout leaves the session usable",
               "agotar el tiempo de espera deja la sesión utilizable"),
             scenario(s, lambda x: [_call(x, "silent", timeout=SHORT_TIMEOUT),
                                    _call(x, "silent", timeout=SHORT_TIMEOUT),
                                    _call(x, "echo", {"still": "here"}), _call(x, "cancelled")]),
             [_raised("TimeoutError"), _raised("TimeoutError"), {"echo": {"still": "here"}},
              {"cancelled": ["silent", "silent"], "reasons": ["timeout", "timeout"]}],
             hint=_cancel_hint),
        session_differential(s, "lab05/timeouts", _timeout_ops,
                             _("generated sessions with timeouts",
                               "sesiones generadas en las que se agotan tiempos de espera"),
                             cases=6),
    ]
    run_checks(results)


def _flushed_cancel(make: Callable[..., Any]) -> Callable[[], Any]:
    """A request times out; what the session wrote and had not flushed when request() raised
    (the server cannot have it)."""

    def thunk() -> Any:
        run = None
        try:
            run = Run(make, watched=True)
            outcome = _call(run.session, "silent", timeout=SHORT_TIMEOUT)
            left = bytes(run.watch.unflushed).decode("utf-8", "replace") if run.watch else ""
            calls = _tally.calls
            bounded(run.session.close, CLOSE_GRACE + 1.0)
            with contextlib.suppress(subprocess.TimeoutExpired):
                run.process.wait(CLOSE_GRACE)
            run.end()
            return _verified([outcome, left], calls, run.summary)
        finally:
            if run is not None:
                run.end()

    return thunk


def _cancel_hint(got: Any) -> str:
    told = got[-1] if isinstance(got, list) and got else None
    if isinstance(told, dict) and told.get("cancelled") and \
            set(told.get("cancelled") or []) <= {"silent"} and \
            told.get("reasons") != ["timeout"] * len(told.get("cancelled") or []):
        return _("the server was told which request, but not why: the notification's params "
                 "are {\"requestId\": id, \"reason\": \"timeout\"}, as the lab gives them",
                 "el servidor supo cuál era la solicitud, pero no por qué: los params de la "
                 "notificación son {\"requestId\": id, \"reason\": \"timeout\"}, como los da "
                 "el laboratorio")
    return _("before raising, write {\"jsonrpc\": \"2.0\", \"method\": "
             "\"notifications/cancelled\", \"params\": {\"requestId\": id, \"reason\": "
             "\"timeout\"}} (a notification: no id of its own), flushed",
             "antes de lanzar, escribe {\"jsonrpc\": \"2.0\", \"method\": "
             "\"notifications/cancelled\", \"params\": {\"requestId\": id, \"reason\": "
             "\"timeout\"}} (una notificación: sin id propio), con flush")


def _raised(name: str) -> Any:
    from .core import Seen

    return Seen(name, (), raised=True)


# --------------------------------------------------------------------------- part 3


def check_end_of_stream(make_session: Callable[..., Any]) -> None:
    """Part 3: the server dies, every pending request fails at once; close() leaves nothing."""
    s = make_session

    def dies_with_pending(x: Any) -> Any:
        # Timeouts of 8 s, the end within 6: waiting them out cannot pass, a slow machine can.
        threads, outcomes = in_threads(x, [("hold", {"n": i}, 8.0) for i in range(3)])
        started = time.monotonic()
        died = _call(x, "die", timeout=8.0)
        for t in threads:
            t.join(9.0)
        return [died, *outcomes, time.monotonic() - started < 6.0]

    def after_end(x: Any) -> Any:
        first = _call(x, "die")
        started = time.monotonic()
        second = _call(x, "echo", timeout=8.0)
        return [first, second, time.monotonic() - started < 5.0]

    def after_hangup(x: Any) -> Any:
        first = _call(x, "hangup", timeout=8.0)
        started = time.monotonic()
        second = _call(x, "echo", timeout=8.0)
        return [first, second, time.monotonic() - started < 5.0]

    closed = _raised("SessionClosed")
    results = [
        case(_("the server dies mid-call: SessionClosed", "el servidor muere a mitad de la "
               "llamada: SessionClosed"),
             scenario(s, lambda x: _call(x, "die")), closed,
             hint=_("when the reader's loop ends (EOF), fail every future in the pending "
                    "table with SessionClosed",
                    "cuando termina el bucle del lector (EOF), haz fallar cada future de la "
                    "tabla de pendientes con SessionClosed")),
        case(_("every pending request fails at once, not by timeout",
               "todas las solicitudes pendientes fallan a la vez, sin esperar a que se agote "
               "su tiempo de espera"),
             scenario(s, dies_with_pending), [closed, closed, closed, closed, True],
             hint=_("EOF settles all the futures waiting, right away",
                    "el EOF resuelve todos los futures que esperan, en el acto")),
        case(_("after the end, a request fails at once with SessionClosed",
               "tras el final, una solicitud falla en el acto con SessionClosed"),
             scenario(s, after_end), [closed, closed, True],
             hint=_("remember that the session ended; a request on a dead session raises "
                    "SessionClosed without waiting (writing may also raise BrokenPipeError: "
                    "turn it into SessionClosed)",
                    "recuerda que la sesión terminó; una solicitud en una sesión muerta lanza "
                    "SessionClosed sin esperar (escribir también puede lanzar "
                    "BrokenPipeError: conviértelo en SessionClosed)")),
        case(_("the server closed its output but still reads: a request fails at once with "
               "SessionClosed", "el servidor cerró su salida pero sigue leyendo: una solicitud "
               "falla en el acto con SessionClosed"),
             scenario(s, after_hangup), [closed, closed, True],
             hint=_("remember that the session ended (set a flag when the reader's loop "
                    "ends): writing may well succeed, but no answer will ever come",
                    "recuerda que la sesión terminó (pon una marca cuando acabe el bucle del "
                    "lector): escribir puede funcionar, pero nunca llegará una respuesta")),
        case(_("close(): no thread of the session left, the server exits",
               "close(): no queda ningún hilo de la sesión y el servidor termina"),
             _leftovers(s, lambda x: _call(x, "echo")), [{"echo": {}}, None, 0, True],
             hint=_("close() closes the server's stdin (it exits on EOF), then joins the "
                    "reader thread, which ends when stdout ends",
                    "close() cierra la stdin del servidor (termina con el EOF) y luego espera "
                    "(join) al hilo lector, que acaba cuando acaba stdout")),
        case(_("close() waits for the reader thread (join) before it returns",
               "close() espera al hilo lector (join) antes de retornar"),
             _joined(s), [{"echo": {}}, None, None, 0, True],
             hint=_("close() returned while the reader thread was still running: join it "
                    "(self.reader.join(timeout)) after closing stdin",
                    "close() retornó con el hilo lector aún en marcha: haz join "
                    "(self.reader.join(timeout)) tras cerrar stdin")),
        case(_("close() returns even if the server never ends its output (join with a timeout)",
               "close() retorna aunque el servidor no cierre nunca su salida (join con un tiempo "
               "de espera)"),
             _lingering(s), [{"lingering": 60.0}, None],
             hint=lambda got: _(
                 "the server kept its output open after its input ended: join the reader "
                 "thread with a timeout (self.reader.join(2)), not with join() alone",
                 "el servidor mantuvo abierta su salida tras el final de su entrada: haz "
                 "join del hilo lector con un tiempo de espera (self.reader.join(2)), no con "
                 "join() a secas") if isinstance(got, list) and len(got) == 2
             and isinstance(got[1], Seen) and got[1].type == "Blocked" else None),
        case(_("close() after the server died", "close() después de que muriera el servidor"),
             _leftovers(s, lambda x: _call(x, "die")), [closed, None, 0, True],
             hint=_("closing an input whose reader is gone may raise BrokenPipeError: close() "
                    "must not fail because the server already went away",
                    "cerrar una entrada cuyo lector ya no está puede lanzar BrokenPipeError: "
                    "close() no debe fallar porque el servidor ya se fue")),
        session_differential(s, "lab05/end", _end_ops,
                             _("generated sessions that end", "sesiones generadas que terminan"),
                             check_join=True),
    ]
    run_checks(results)


def _joined(make: Callable[..., Any]) -> Callable[[], Any]:
    def thunk() -> Any:
        run = None
        try:
            run = Run(make, watched=True)
            value = _call(run.session, "echo")
            calls = _tally.calls
            closed, running, threads, exited = run.close_joined()
            run.end()
            return _verified([value, closed, running, threads, exited], calls, run.summary)
        finally:
            if run is not None:
                run.end()

    return thunk


#: How long close() may take with a server that does not go: the lab's "a few seconds".
LINGER_CLOSE = 8.0


def _lingering(make: Callable[..., Any]) -> Callable[[], Any]:
    """A server that stays a minute after its input ends: close() must give up waiting (its
    join has a timeout), within LINGER_CLOSE. The server is killed afterwards, which ends a
    reader left behind."""

    def thunk() -> Any:
        run = None
        try:
            run = Run(make)
            value = _call(run.session, "linger", {"seconds": 60})
            closed = bounded(run.session.close, LINGER_CLOSE)
            return [value, closed]
        finally:
            if run is not None:
                run.end()

    return thunk


def _leftovers(make: Callable[..., Any], body: Callable[[Any], Any]) -> Callable[[], Any]:
    def thunk() -> Any:
        run = None
        try:
            run = Run(make)
            value = body(run.session)
            calls = _tally.calls
            closed, threads, exited = run.left_over()
            run.end()
            return _verified([value, closed, threads, exited], calls, run.summary)
        finally:
            if run is not None:
                run.end()

    return thunk


# --------------------------------------------------------------------------- differential

# An input is a list of operations, run in order on one session with one server:
#   ("call", method, params)  ("notes",)  ("held", n)  ("timeout", method, params)
#   ("die",)  (always last)


def _params(rng: Gen) -> Any:
    return rng.choice([None, {}, rng.json_object(), {"text": rng.text()}])


def _requests_ops(rng: Gen, quirks: bool = True) -> list[tuple]:
    """Part 1's operations; ``quirks`` adds what only part 1 is about (error responses, junk
    lines, strays with ids of other types, requests without params): parts 2 and 3 leave them
    out, so that one bug of part 1 does not cost them too (nor cost them only when the
    seed, or the time a loaded machine leaves the generated cases, happens to draw it)."""
    ops: list[tuple] = []
    for _i in range(rng.randint(1, 6)):
        roll = rng.random()
        if roll < 0.3 or (not quirks and 0.45 <= roll < 0.55):
            ops.append(("call", "echo", _params(rng)))
        elif roll < 0.45:
            ops.append(("call", "notify", {"count": rng.randint(0, 3)}))
        elif roll < 0.55:
            error: dict[str, Any] = {"code": rng.choice([-32601, -32602, -32000, 7]),
                                     "message": rng.text()}
            if rng.random() < 0.5:
                error["data"] = rng.choice([rng.json_value(), {"retry_after": 3}, [1, "a"],
                                            "why", 0, False])
            ops.append(("call", "error", error))
        elif roll < 0.6 or not quirks:
            ops.append(("call", "stray", rng.choice([None, {"ids": [True]}, {"ids": [1.0, "1"]},
                                                     {"ids": [rng.json_id(), None]}])
                        if quirks else None))
        elif roll < 0.65:
            ops.append(("call", rng.choice(["junk", "shape"]),
                        rng.choice([None, None, {}, [rng.scalar()], rng.json_object()])))
        elif roll < 0.8:
            ops.append(("held", rng.randint(1, 3)))
        else:
            ops.append(("notes",))
    return ops


def _timeout_ops(rng: Gen) -> list[tuple]:
    ops = _requests_ops(rng, quirks=False)[:3]
    for _i in range(rng.randint(1, 2)):
        at = rng.randint(0, len(ops))
        ops.insert(at, ("timeout", rng.choice(["silent", "late"]), None))
    ops.append(("call", "cancelled", None))
    return ops


def _end_ops(rng: Gen) -> list[tuple]:
    ops = _requests_ops(rng, quirks=False)[:3]
    if rng.random() < 0.5:
        ops.append(("pending-die", rng.randint(1, 3)))
    else:
        ops.append(("die",))
    ops.append(("call", "echo", _params(rng)))
    return ops


def _show_ops(ops: list[tuple]) -> str:
    parts = []
    for op in ops:
        if op[0] == "call":
            parts.append(f"request({op[1]!r}" + (f", {op[2]!r})" if op[2] is not None else ")"))
        elif op[0] == "notes":
            parts.append("notifications()")
        elif op[0] == "held":
            parts.append(f"{op[1]} x request('hold') + request('release')")
        elif op[0] == "timeout":
            parts.append(f"request({op[1]!r}, timeout={SHORT_TIMEOUT})")
        elif op[0] == "pending-die":
            parts.append(f"{op[1]} x request('hold') + request('die')")
        else:
            parts.append("request('die')")
    return "; ".join(parts)


def _trial(make: Callable[..., Any], ops: list[tuple], check_join: bool = False) -> list[Step]:
    steps: list[Step] = []
    run = None
    try:
        try:
            run = Run(make, watched=check_join)
        except _Raised as exc:
            return [Step("Session(stdin, stdout)", exc.what)]
        except Blocked as exc:
            return [Step("Session(stdin, stdout)", Seen.of(exc, raised=True))]
        x = run.session
        for op in ops:
            label = _show_ops([op])
            if op[0] == "call":
                steps.append(Step(label, _call(x, op[1], op[2])))
            elif op[0] == "notes":
                steps.append(Step(label, _notes(x)))
            elif op[0] == "held":
                steps.append(Step(label, held_calls(x, op[1])))
            elif op[0] == "timeout":
                delay = {"delay": 0.3} if op[1] == "late" else None
                steps.append(Step(label, _call(x, op[1], delay, timeout=SHORT_TIMEOUT)))
            elif op[0] == "pending-die":
                threads, outcomes = in_threads(x, [("hold", {"n": i}, 2.0)
                                                   for i in range(op[1])])
                died = _call(x, "die", timeout=2.0)
                for t in threads:
                    t.join(2.5)
                steps.append(Step(label, [*outcomes, died]))
            else:
                steps.append(Step(label, _call(x, "die")))
        steps.append(Step(_("futures left in the session's pending table",
                            "futures que quedan en la tabla de pendientes de la sesión"),
                          bounded(lambda: pending_left(x), 1.0)))
        if check_join:
            closed, running, threads, exited = run.close_joined()
        else:
            closed, threads, exited = run.left_over()
        steps.append(Step("close()", closed))
        if check_join:
            steps.append(Step(_("threads still running the moment close() returned",
                                "hilos aún en marcha justo cuando close() retornó"), running))
        steps.append(Step(_("threads left after close()", "hilos que quedan tras close()"),
                          threads))
        steps.append(Step(_("the server exited after close()",
                            "el servidor terminó tras close()"), exited))
        run.end()
        steps.append(Step(_("what the server received (messages by method)",
                            "lo que recibió el servidor (mensajes por método)"),
                          (run.summary or {}).get("received")))
        return steps
    finally:
        if run is not None:
            run.end()


def _shrink_ops(ops: list[tuple]) -> Iterator[list[tuple]]:
    for smaller in drop_each(ops):
        if smaller:
            yield smaller


def _hint(ops: list[tuple], expected: Step | None, got: Step | None) -> str | None:
    if expected is None or got is None:
        return None
    if "pending" in expected.label or "pendientes" in expected.label:
        return _("a request given up on (timeout) or answered must leave the pending table: "
                 "pop its id",
                 "una solicitud abandonada (se agotó su tiempo de espera) o respondida debe "
                 "salir de la tabla de pendientes: saca su id")
    if "threads" in expected.label or "hilos" in expected.label:
        return _("close() must end the reader thread (close stdin, then join it)",
                 "close() debe terminar el hilo lector (cierra stdin y luego haz join)")
    if any(op[0] == "call" and op[1] == "junk" for op in ops):
        return _("skip a line that is not JSON, or not a JSON object: the reader thread "
                 "must not die", "salta una línea que no es JSON, o que no es un objeto "
                 "JSON: el hilo lector no debe morir")
    if expected.label.startswith("request('shape'"):
        return _("leave \"params\" out of the message when it is None (not null, not {})",
                 "deja \"params\" fuera del mensaje cuando es None (ni null, ni {})")
    if expected.label.startswith("request('stray'"):
        return _("only a response whose id is an int you sent settles a request: True == 1 "
                 "and 1.0 == 1 in Python", "solo una respuesta cuyo id es un int que enviaste "
                 "resuelve una solicitud: True == 1 y 1.0 == 1 en Python")
    if expected.label.startswith("request('error'"):
        return _("RequestError(code, message, data): the error's own code, message and data, "
                 "as the server sent them",
                 "RequestError(code, message, data): el code, el message y el data del propio "
                 "error, tal como los envió el servidor")
    if "notifications()" in expected.label:
        return _("notifications() returns the queued notifications in arrival order, whole "
                 "messages, and empties the queue",
                 "notifications() devuelve las notificaciones encoladas en orden de llegada, "
                 "mensajes completos, y vacía la cola")
    return None


def session_differential(make: Callable[..., Any], key: str,
                         generate: Callable[[Gen], list[tuple]], name: str,
                         cases: int = 8, check_join: bool = False) -> CaseResult:
    def trial(impl: Callable[..., Any], ops: list[tuple]) -> list[Step]:
        return _trial(impl, ops, check_join)

    return differential(
        name, key=key, generate=generate, trial=trial, reference=ReferenceSession,
        learner=make, show=_show_ops, cases=cases, shrink=_shrink_ops, hint=_hint)
