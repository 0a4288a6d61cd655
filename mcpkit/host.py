"""A host: many MCP servers at once, behind one merged namespace, kept running.

    with Host("mcp.json") as host:          # {"mcpServers": {"notes": {"command": ...}}}
        host.tools()                        # every server's tools, names made unique
        host.call_tool("notes_search", {"query": "mcp"})

This is what Claude Desktop, VS Code or Cursor do with their ``mcpServers`` settings.
An entry with a ``command`` is started as a child process (stdio); one with a ``url`` is
reached over streamable HTTP (``"url": "http://127.0.0.1:8000/mcp"``, plus optional
``"headers"``, and ``"token"`` or ``"tokenEnv"`` for a bearer token).

Theory of operation
-------------------
A host runs one :class:`~mcpkit.client.Client` per configured server. An HTTP server is
not ours to restart: "restarting" one means a new session once it answers again.

- ``_servers`` maps name -> :class:`_Managed` (config, current client, state, counters),
  in config order. Records change only under ``_cond`` (a Condition on the host lock):
  a call to a server that is restarting waits on it until the server is back.
- ``_view`` is the merged namespace: tools, prompts, resources and templates (copies
  carrying their *exposed* names) and routing tables from exposed name to
  ``(server, original name)``. It is rebuilt from scratch whenever a server comes up, a
  list changes or a server fails for good, and swapped in whole: readers take the
  current view and never see half a rebuild. Config order decides every tie, so the
  result does not depend on which server happened to start first.
- Supervision: a session that dies unasked calls back from its reader thread; the host
  hands over to a supervisor thread for that server, which reaps the dead client, waits
  the backoff delay (cut short by :meth:`Host.close`) and starts a new one. Consecutive
  failures grow the delay: ``base * factor ** (n - 1)``, capped, with jitter so that
  servers that died together do not come back in lock step. A session that stayed up
  ``stable_after`` seconds resets the count. At ``alert_after`` consecutive failures the
  host emits a ``failing`` event.
"""

from __future__ import annotations

import json
import logging
import os
import random
import re
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from . import apps, toolformats
from .client import Client, ConnectionClosed, ServerError, SessionError

__all__ = [
    "CONNECTORS",
    "NAMING_POLICIES",
    "Backoff",
    "ConfigError",
    "Host",
    "HostError",
    "HostEvent",
    "NameCollision",
    "ServerConfig",
    "ServerStatus",
    "ServerUnavailable",
    "UnknownName",
    "Watch",
    "load_config",
    "merge_namespace",
]

log = logging.getLogger("mcpkit.host")

NAMING_POLICIES = ("prefix", "prefix-on-collision", "first-wins", "reject")
RESTART_POLICIES = ("restart", "surface")
STATES = ("starting", "ready", "restarting", "failed", "stopped")


# -- errors --------------------------------------------------------------------------------


class HostError(Exception):
    """Something about the set of servers, rather than one request, went wrong."""


class ConfigError(HostError, ValueError):
    """The server configuration is not usable; the message names the server and the key."""


class NameCollision(HostError):
    """Two servers offer the same name and the naming policy is ``reject``."""

    def __init__(self, kind: str, name: str, first: str, second: str) -> None:
        super().__init__(f"{kind} name {name!r} is offered by both server {first!r} and server "
                         f"{second!r}; rename one, or choose another naming policy "
                         "(prefix, prefix-on-collision, first-wins)")
        self.kind = kind
        self.name = name
        self.servers = (first, second)


class UnknownName(HostError, LookupError):
    """No server offers this tool, prompt or resource."""


class ServerUnavailable(HostError):
    """The server that offers the name is failed, stopped, or not back in time."""


# -- configuration -------------------------------------------------------------------------


@dataclass
class ServerConfig:
    """One entry of ``mcpServers``: a ``command`` (stdio), a ``url`` (streamable HTTP,
    with optional ``headers``), or a ``server`` (a Server object in this process, reached in
    memory; the entry may be the object itself). ``framing``, ``version``, ``restart``,
    ``timeout``, and for HTTP ``token`` / ``tokenEnv`` (a bearer token, or the environment
    variable holding one), are mcpkit's own optional keys; other unknown keys are ignored,
    as hosts do."""

    name: str
    command: str | None = None
    args: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    token: str | None = None
    token_env: str | None = None
    transport: str = "stdio"
    framing: str = "ndjson"
    version: str | None = None
    restart: str | None = None
    timeout: float | None = None
    disabled: bool = False
    server: Any = None  # a Server object in this process (transport "memory")

    @classmethod
    def from_entry(cls, name: str, entry: Any) -> ServerConfig:
        def fail(why: str) -> ConfigError:
            return ConfigError(f"server {name!r}: {why}")

        if not isinstance(name, str) or not name:
            raise ConfigError(f"server names must be non-empty strings, got {name!r}")
        if hasattr(entry, "connect") and not isinstance(entry, dict):
            entry = {"server": entry}  # a Server object itself: reached in memory
        if isinstance(entry, dict) and entry.get("server") is not None:
            if not hasattr(entry["server"], "connect"):
                raise fail('"server" must be a Server object (mcpkit.Server)')
            rest = cls.from_entry(name, {**{k: v for k, v in entry.items() if k != "server"},
                                         "command": "-"})
            rest.command, rest.transport, rest.server = None, "memory", entry["server"]
            return rest
        if not isinstance(entry, dict):
            raise fail("the entry must be an object with a \"command\" (or a \"url\")")
        kind = entry.get("type")
        url = entry.get("url")
        if url is not None or kind in ("http", "sse", "streamable-http", "streamableHttp"):
            if not isinstance(url, str):
                raise fail('an HTTP server needs a "url" string')
            transport = "http"
        elif kind in (None, "stdio"):
            transport = "stdio"
        else:
            raise fail(f'unknown "type" {kind!r} (stdio or http)')
        command = entry.get("command")
        if transport == "stdio" and (not isinstance(command, str) or not command):
            raise fail('"command" must be a non-empty string (the program to run)')
        args = entry.get("args", [])
        if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
            raise fail('"args" must be a list of strings')
        env = entry.get("env", {})
        if not isinstance(env, dict):
            raise fail('"env" must be an object of strings')
        env = {str(k): v if isinstance(v, str) else json.dumps(v) for k, v in env.items()}
        cwd = entry.get("cwd")
        if cwd is not None and not isinstance(cwd, str):
            raise fail('"cwd" must be a string')
        restart = entry.get("restart")
        if restart is not None and restart not in RESTART_POLICIES:
            raise fail(f'"restart" must be one of {", ".join(RESTART_POLICIES)}')
        framing = entry.get("framing", "ndjson")
        if framing not in ("ndjson", "content-length"):
            raise fail('"framing" must be "ndjson" or "content-length"')
        timeout = entry.get("timeout")
        if timeout is not None and not isinstance(timeout, int | float):
            raise fail('"timeout" must be a number of seconds')
        headers = entry.get("headers", {})
        if not isinstance(headers, dict) or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in headers.items()):
            raise fail('"headers" must be an object of strings')
        token, token_env = entry.get("token"), entry.get("tokenEnv")
        if token is not None and not isinstance(token, str):
            raise fail('"token" must be a string')
        if token_env is not None and (not isinstance(token_env, str) or not token_env):
            raise fail('"tokenEnv" must name an environment variable')
        return cls(name=name, command=command, args=list(args), env=env, cwd=cwd, url=url,
                   headers=dict(headers), token=token, token_env=token_env,
                   transport=transport, framing=framing, version=entry.get("version"),
                   restart=restart, timeout=timeout, disabled=entry.get("disabled") is True)


def load_config(source: str | os.PathLike[str] | Mapping[str, Any]) -> list[ServerConfig]:
    """Server configs from a JSON file or a dict, in the common ``mcpServers`` shape
    (VS Code's ``servers`` key is accepted too)."""
    if isinstance(source, Mapping):
        data: Any = source
    else:
        try:
            with open(source, encoding="utf-8") as f:
                data = json.load(f)
        except OSError as exc:
            raise ConfigError(f"cannot read the server config {os.fspath(source)!r}: {exc}") \
                from exc
        except ValueError as exc:
            raise ConfigError(f"{os.fspath(source)!r} is not valid JSON: {exc}") from exc
    if not isinstance(data, Mapping):
        raise ConfigError("the config must be a JSON object")
    servers = data.get("mcpServers", data.get("servers"))
    if not isinstance(servers, Mapping):
        raise ConfigError('the config needs an "mcpServers" object: '
                          '{"mcpServers": {"name": {"command": ..., "args": [...]}}}')
    return [ServerConfig.from_entry(name, entry) for name, entry in servers.items()]


def _stdio_connector(config: ServerConfig, options: dict[str, Any]) -> Client:
    options = dict(options)
    if config.timeout is not None:
        options["timeout"] = config.timeout
    assert config.command is not None
    return Client(config.command, config.args, env=config.env, cwd=config.cwd,
                  name=config.name, framing=config.framing, version=config.version, **options)


def _http_connector(config: ServerConfig, options: dict[str, Any]) -> Client:
    options = dict(options)
    if config.timeout is not None:
        options["timeout"] = config.timeout
    token = config.token
    if token is None and config.token_env is not None:
        token = os.environ.get(config.token_env)
        if not token:
            raise ConfigError(f"server {config.name!r}: \"tokenEnv\" names "
                              f"{config.token_env}, which is not set")
    assert config.url is not None
    return Client(url=config.url, headers=config.headers, token=token, name=config.name,
                  version=config.version, **options)


def _memory_connector(config: ServerConfig, options: dict[str, Any]) -> Client:
    options = dict(options)
    if config.timeout is not None:
        options["timeout"] = config.timeout
    return Client(server=config.server, name=config.name, framing=config.framing,
                  version=config.version, **options)


#: How to reach a server, by transport: ``connector(config, client_options)`` returns an
#: unconnected session with the :class:`~mcpkit.client.Client` interface. Register another
#: here to reach servers some other way.
CONNECTORS: dict[str, Callable[[ServerConfig, dict[str, Any]], Any]] = {
    "stdio": _stdio_connector,
    "http": _http_connector,
    "memory": _memory_connector,
}


# -- merging namespaces --------------------------------------------------------------------


def merge_namespace(
    sources: Sequence[tuple[str, Sequence[Mapping[str, Any]]]],
    key: str = "name",
    policy: str = "prefix-on-collision",
    separator: str = "__",
    kind: str = "tool",
) -> tuple[list[dict[str, Any]], dict[str, tuple[str, str]], list[str]]:
    """Merge per-server lists into one namespace.

    ``sources`` is ``[(server, items)]`` in priority order; ``key`` names the field that
    must be unique. Returns the merged items (copies, ``key`` set to the exposed name), the
    routes ``exposed -> (server, original)`` and warnings about hidden items. Policies:
    ``prefix`` (always ``server<sep>name``), ``prefix-on-collision`` (only names that more
    than one server offers), ``first-wins`` (earlier servers hide later ones), ``reject``
    (raise :class:`NameCollision`).
    """
    if policy not in NAMING_POLICIES:
        raise ValueError(f"unknown naming policy {policy!r}; one of {', '.join(NAMING_POLICIES)}")
    holders: dict[str, set[str]] = {}
    for server, items in sources:
        for item in items:
            holders.setdefault(item[key], set()).add(server)
    merged: list[dict[str, Any]] = []
    routes: dict[str, tuple[str, str]] = {}
    warnings: list[str] = []
    for server, items in sources:
        for item in items:
            original = item[key]
            shared = len(holders[original]) > 1
            if policy == "prefix" or (policy == "prefix-on-collision" and shared):
                exposed = f"{server}{separator}{original}"
            else:
                exposed = original
            if exposed in routes:
                first = routes[exposed][0]
                if policy == "reject" and first != server:
                    raise NameCollision(kind, original, first, server)
                warnings.append(f"{kind} {exposed!r} of server {server!r} is hidden by the one "
                                f"of server {first!r} (first wins)")
                continue
            routes[exposed] = (server, original)
            merged.append({**item, key: exposed})
    return merged, routes, warnings


def _template_regex(template: str) -> re.Pattern[str]:
    """A regex for the URIs an RFC 6570 template can produce (expressions as wildcards)."""
    out = []
    for i, part in enumerate(re.split(r"(\{[^}]*\})", template)):
        if i % 2 == 0:
            out.append(re.escape(part))
        elif part[1:2] in ("+", "#"):
            out.append(".+")
        elif part[1:2] in ("?", "&"):
            out.append(r"(?:[?&].*)?")
        else:
            out.append("[^/?#\\x00-\\x1f\\x7f-\\x9f]+")  # one segment, no control chars
    return re.compile("\\A" + "".join(out) + "\\Z")  # not "$": it also matches before a final "\n"


@dataclass(frozen=True)
class _View:
    tools: list[dict[str, Any]] = field(default_factory=list)
    prompts: list[dict[str, Any]] = field(default_factory=list)
    resources: list[dict[str, Any]] = field(default_factory=list)
    templates: list[dict[str, Any]] = field(default_factory=list)
    tool_routes: dict[str, tuple[str, str]] = field(default_factory=dict)
    prompt_routes: dict[str, tuple[str, str]] = field(default_factory=dict)
    resource_routes: dict[str, tuple[str, str]] = field(default_factory=dict)
    # (regex of the exposed template, server, prefix to strip before asking the server)
    template_routes: list[tuple[re.Pattern[str], str, str]] = field(default_factory=list)
    names: toolformats.ToolNames = field(default_factory=lambda: toolformats.ToolNames(()))
    # exposed names of the tools only an MCP Apps view may call: never a model's
    app_only: frozenset[str] = frozenset()


# -- supervision ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Backoff:
    """Delays between restart attempts: ``base * factor ** (failures - 1)``, at most
    ``cap`` seconds, randomised by +-``jitter`` (a fraction)."""

    base: float = 0.5
    factor: float = 2.0
    cap: float = 30.0
    jitter: float = 0.2

    def delay(self, failures: int, rng: random.Random | None = None) -> float:
        try:
            delay = min(self.cap, self.base * self.factor ** max(failures - 1, 0))
        except OverflowError:  # a server down for hours: the power outgrew a float
            delay = self.cap
        if self.jitter:
            delay *= 1 + (rng or random).uniform(-self.jitter, self.jitter)
        return max(0.0, min(delay, self.cap))


@dataclass(frozen=True)
class HostEvent:
    """Something the user should know about a server: ``ready``, ``exited``,
    ``restarting``, ``failing`` (consecutive failures), ``failed``, ``stopped``,
    ``list_changed``, ``collision``."""

    kind: str
    server: str
    message: str
    error: BaseException | None = None


@dataclass(frozen=True)
class ServerStatus:
    name: str
    state: str
    era: str | None
    protocol_version: str | None
    tools: int
    pid: int | None
    restarts: int
    failures: int
    last_error: str | None


class _Managed:
    """The host's record of one server (changed only under the host's condition)."""

    def __init__(self, config: ServerConfig) -> None:
        self.config = config
        self.client: Any = None
        self.state = "stopped"
        self.lists: dict[str, list[dict[str, Any]]] = {}
        self.failures = 0  # consecutive
        self.restarts = 0
        self.ready_at = 0.0
        self.last_error: str | None = None
        self.supervisor: threading.Thread | None = None
        self.supervising = False
        self.launch_lock = threading.Lock()
        self.connecting: Any = None  # a client whose connect() is under way


class Watch:
    """A resource subscription made through the host (see :meth:`Host.subscribe`)."""

    def __init__(self, host: Host, server: str, original: str, uri: str,
                 callback: Callable[[str, dict[str, Any]], None]) -> None:
        self.host = host
        self.server = server
        self.original = original
        self.uri = uri
        self.callback = callback
        self._subscription: Any = None

    def _attach(self, client: Any) -> None:
        self._subscription = client.subscribe(self.original, self._deliver)

    def _deliver(self, uri: str, params: dict[str, Any]) -> None:
        self.callback(self.uri, params)  # the exposed URI, as the user subscribed to it

    def close(self) -> None:
        with self.host._cond:
            if self in self.host._watches:
                self.host._watches.remove(self)
        if self._subscription is not None:
            self._subscription.close()
            self._subscription = None


# The host's lists: (its name for the list, the client's, the capability that offers it).
_HOST_LISTS = (("tools", "tools", "tools"), ("prompts", "prompts", "prompts"),
               ("resources", "resources", "resources"),
               ("templates", "resourceTemplates", "resources"))
# A list_changed kind -> the lists it changes.
_CHANGED_LISTS = {"tools": _HOST_LISTS[:1], "prompts": _HOST_LISTS[1:2],
                  "resources": _HOST_LISTS[2:]}

_EVENT_LEVELS = {"ready": logging.INFO, "exited": logging.WARNING, "restarting": logging.INFO,
                 "failing": logging.ERROR, "failed": logging.ERROR, "stopped": logging.INFO,
                 "list_changed": logging.DEBUG, "collision": logging.WARNING}


# -- the host ------------------------------------------------------------------------------


class Host:
    """Many servers, one namespace. See the module docstring.

    ``naming``: one of :data:`NAMING_POLICIES`. ``restart``: ``"restart"`` (silently, with
    backoff) or ``"surface"`` (mark the server failed, emit an event, wait for
    :meth:`restart`); a server's config may override it. ``client_options`` go to every
    :class:`~mcpkit.client.Client` (timeouts, callbacks for sampling, elicitation, roots).
    ``on_event(HostEvent)`` is called from whichever thread noticed; keep it quick.
    """

    def __init__(
        self,
        config: str | os.PathLike[str] | Mapping[str, Any] | Sequence[ServerConfig],
        *,
        naming: str = "prefix-on-collision",
        separator: str = "__",
        restart: str = "restart",
        backoff: Backoff = Backoff(),
        alert_after: int = 3,
        stable_after: float = 10.0,
        ready_timeout: float = 30.0,
        on_event: Callable[[HostEvent], None] | None = None,
        client_options: Mapping[str, Any] | None = None,
    ) -> None:
        if naming not in NAMING_POLICIES:
            raise ValueError(f"unknown naming policy {naming!r}; one of "
                             f"{', '.join(NAMING_POLICIES)}")
        if restart not in RESTART_POLICIES:
            raise ValueError(f"restart must be one of {', '.join(RESTART_POLICIES)}")
        if isinstance(config, Sequence) and not isinstance(config, str):
            configs = list(config)
        else:
            configs = load_config(config)
        for c in configs:
            if not c.disabled and c.transport not in CONNECTORS:
                raise ConfigError(
                    f"server {c.name!r}: mcpkit has no {c.transport} client transport; "
                    f"register one in mcpkit.host.CONNECTORS[{c.transport!r}]")
        self.naming = naming
        self.separator = separator
        self.restart_policy = restart
        self.backoff = backoff
        self.alert_after = alert_after
        self.stable_after = stable_after
        self.ready_timeout = ready_timeout
        self.on_event = on_event
        self.client_options = dict(client_options or {})
        self._servers = {c.name: _Managed(c) for c in configs if not c.disabled}
        self._cond = threading.Condition()
        self._view = _View()
        self._stop = threading.Event()
        self._closing = False
        self._started = False
        self._checked = False  # the start's strict merge has run (naming="reject")
        self._warned: set[str] = set()
        self._start_threads: list[threading.Thread] = []
        self._watches: list[Watch] = []

    # -- lifecycle -----------------------------------------------------------------------

    def start(self, timeout: float | None = None) -> Host:
        """Start every server at once; return when each is ready or has failed its first
        attempt (at most ``timeout`` seconds). Failed servers keep being retried in the
        background under the ``restart`` policy. With ``naming="reject"`` a collision
        closes the host and raises :class:`NameCollision`."""
        if self._started:
            raise RuntimeError("the host was already started")
        self._started = True
        threads = [threading.Thread(target=self._first_start, args=(m,), daemon=True,
                                    name=f"mcpkit-start-{m.config.name}")
                   for m in self._servers.values()]
        self._start_threads = threads
        for t in threads:
            t.start()
        deadline = time.monotonic() + (timeout if timeout is not None else self.ready_timeout)
        for t in threads:
            t.join(max(0.0, deadline - time.monotonic()))
        try:
            with self._cond:
                warnings = self._rebuild(strict=True)
                self._checked = True
        except NameCollision:
            self.close()
            raise
        self._warn(warnings)
        return self

    def __enter__(self) -> Host:
        return self if self._started else self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop every server (stdin EOF, SIGTERM, SIGKILL; HTTP: end the sessions) and
        every thread. Idempotent."""
        with self._cond:
            if self._closing:
                return
            self._closing = True
            self._cond.notify_all()
        self._stop.set()
        with self._cond:
            clients = [c for m in self._servers.values() for c in (m.client, m.connecting)
                       if c is not None]
        closers = [threading.Thread(target=c.close, daemon=True, name="mcpkit-close")
                   for c in clients]
        for t in closers:
            t.start()
        for t in closers:
            t.join(10.0)
        me = threading.current_thread()
        for t in self._start_threads:
            if t is not me:
                t.join(5.0)
        for m in self._servers.values():
            if m.supervisor is not None and m.supervisor is not me:
                m.supervisor.join(5.0)
        with self._cond:
            for m in self._servers.values():
                m.state = "stopped"
            self._view = _View()
            self._cond.notify_all()
        for name in self._servers:
            self._emit("stopped", name, "stopped by the host")

    # -- starting and supervising ----------------------------------------------------------

    def _policy(self, m: _Managed) -> str:
        return m.config.restart or self.restart_policy

    def _first_start(self, m: _Managed) -> None:
        if not self._launch(m, "starting"):
            self._after_failure(m)

    def _launch(self, m: _Managed, state: str) -> bool:
        """One attempt to bring ``m`` up; True on success (failures are counted here)."""
        with m.launch_lock:  # a manual restart and the supervisor must not overlap
            with self._cond:
                if self._closing:
                    return False
                if m.state == "ready" and m.client is not None and m.client.alive:
                    return True
                m.state = state
            options = dict(self.client_options)
            user_closed = options.get("on_closed")
            user_changed = options.get("on_list_changed")

            def on_closed(client: Any, error: ConnectionClosed) -> None:
                self._on_closed(m, client, error)
                if user_closed is not None:
                    user_closed(client, error)

            def on_list_changed(kind: str) -> None:
                self._on_list_changed(m, kind)
                if user_changed is not None:
                    user_changed(kind)

            options["on_closed"] = on_closed
            options["on_list_changed"] = on_list_changed
            client = None
            try:
                client = CONNECTORS[m.config.transport](m.config, options)
                with self._cond:
                    m.connecting = client  # so that close() can stop a slow start
                    if self._closing:
                        raise ServerUnavailable("the host is closing")
                client.connect()
                lists = self._fetch_lists(client)
            except Exception as exc:
                if client is not None:
                    client.close()
                with self._cond:
                    m.connecting = None
                if not self._closing:
                    self._count_failure(m, f"could not start: {exc}", exc)
                return False
            with self._cond:
                m.connecting = None
                usable = not self._closing and client.alive
                if usable:
                    if state == "restarting":
                        m.restarts += 1
                    m.client = client
                    m.lists = lists
                    m.state = "ready"
                    m.ready_at = time.monotonic()
                    m.supervising = False  # a death from now on needs a new supervisor
                    warnings = self._rebuild()
                    self._cond.notify_all()
            if not usable:
                client.close()
                if not self._closing:
                    self._count_failure(m, str(client.closed_error or "exited while starting"))
                return False
        self._warn(warnings)
        self._resubscribe(m, client)
        self._emit("ready", m.config.name,
                   f"ready ({client.era} {client.protocol_version}, "
                   f"{len(lists.get('tools', []))} tools)")
        return True

    def _count_failure(self, m: _Managed, message: str,
                       error: BaseException | None = None) -> None:
        with self._cond:
            m.failures += 1
            m.last_error = message
            failures = m.failures
        self._emit("exited", m.config.name, message, error)
        if failures == self.alert_after:
            self._emit("failing", m.config.name,
                       f"{failures} consecutive failures; last: {message}", error)

    def _fetch_lists(self, client: Any) -> dict[str, list[dict[str, Any]]]:
        caps = client.server_capabilities
        lists: dict[str, list[dict[str, Any]]] = {}
        for kind, _, feature in _HOST_LISTS:
            lists[kind] = self._fetch_one(client, kind) if feature in caps else []
        return lists

    def _fetch_one(self, client: Any, kind: str) -> list[dict[str, Any]]:
        fetch = {"tools": client.list_tools, "prompts": client.list_prompts,
                 "resources": client.list_resources,
                 "templates": client.list_resource_templates}[kind]
        try:
            return fetch()
        except ServerError as exc:
            log.info("%s: %s unavailable: %s", client.name, kind, exc)
            return []

    def _on_closed(self, m: _Managed, client: Any, error: ConnectionClosed) -> None:
        """A session died unasked (called on its reader thread: hand over, return)."""
        with self._cond:
            if self._closing or m.client is not client:
                return
            if time.monotonic() - m.ready_at >= self.stable_after:
                m.failures = 0  # it had been fine for a while: a new streak starts
            m.state = "restarting" if self._policy(m) == "restart" else "failed"
            # A failed server's tools leave the view in the same step as its state changes:
            # whoever sees "failed" must not still be offered its tools.
            warnings = self._rebuild() if m.state == "failed" else []
            self._cond.notify_all()
        self._warn(warnings)
        self._count_failure(m, str(error), error)
        self._after_failure(m)

    def _after_failure(self, m: _Managed) -> None:
        """Start the supervisor for ``m``, unless one is already at work."""
        with self._cond:
            if self._closing or m.supervising:
                return
            m.supervising = True
            m.supervisor = threading.Thread(target=self._supervise, args=(m,), daemon=True,
                                            name=f"mcpkit-supervise-{m.config.name}")
            m.supervisor.start()

    def _supervise(self, m: _Managed) -> None:
        dead = m.client
        if dead is not None and not dead.alive:
            dead.close()  # reap the old process and stop its threads
        while not self._stop.is_set():
            if self._policy(m) == "surface":
                with self._cond:
                    m.state = "failed"
                    m.supervising = False
                    warnings = self._rebuild()
                    self._cond.notify_all()
                self._warn(warnings)
                self._emit("failed", m.config.name,
                           f"failed ({m.last_error}); call host.restart({m.config.name!r})")
                return
            delay = self.backoff.delay(m.failures)
            with self._cond:
                m.state = "restarting"
            self._emit("restarting", m.config.name,
                       f"restarting in {delay:.2f} s (failure {m.failures})")
            if self._stop.wait(delay) or self._launch(m, "restarting"):
                return

    def restart(self, name: str, timeout: float | None = None) -> ServerStatus:
        """Restart a server now (a failed one too), resetting its failure count."""
        m = self._managed(name)
        old = m.client
        with self._cond:
            m.client = None
            m.failures = 0
        if old is not None:
            old.close()
        if not self._launch(m, "restarting"):
            self._after_failure(m)
        else:
            self.wait_ready([name], timeout)
        return self.status()[name]

    def wait_ready(self, names: Sequence[str] | None = None,
                   timeout: float | None = None) -> bool:
        """Wait until the named servers (default: all) are ready; False on timeout."""
        wanted = [self._managed(n) for n in (names or list(self._servers))]
        deadline = time.monotonic() + (timeout if timeout is not None else self.ready_timeout)
        with self._cond:
            while not all(m.state == "ready" for m in wanted):
                remaining = deadline - time.monotonic()
                if remaining <= 0 or self._closing:
                    return False
                self._cond.wait(remaining)
        return True

    def _on_list_changed(self, m: _Managed, kind: str) -> None:
        """A list of ``m``'s changed and its client has re-fetched it (this runs on the
        client's dispatcher, after the re-fetch). The host asks the server nothing: it
        takes the client's copy, so a storm of changes costs the server only the client's
        coalesced re-fetches (one in flight, one pending), not one more per change."""
        client = m.client
        if client is None or self._closing:
            return
        lists = dict(m.lists)
        try:
            for host_kind, client_kind, feature in _CHANGED_LISTS.get(kind, ()):
                if feature not in client.server_capabilities:
                    continue
                latest = client.cached_list(client_kind)
                if latest is None:  # never fetched (the start-up fetch failed): ask now
                    latest = self._fetch_one(client, host_kind)
                lists[host_kind] = latest
        except (SessionError, ServerError) as exc:
            log.info("%s: could not refresh lists: %s", m.config.name, exc)
            return
        with self._cond:
            if m.client is not client:
                return
            m.lists = lists
            warnings = self._rebuild()
        self._warn(warnings)
        self._emit("list_changed", m.config.name, f"{kind} changed")

    # -- the merged view -------------------------------------------------------------------

    def _rebuild(self, strict: bool = False) -> list[str]:
        """Recompute the merged view (caller holds ``_cond``). With ``naming="reject"`` a
        collision raises when ``strict``; at run time the later server's item is hidden
        and a ``collision`` event says so."""
        live = [m for m in self._servers.values() if m.state in ("ready", "restarting")
                and m.lists]
        policy = self.naming
        if policy == "reject" and not strict:
            policy = "first-wins"
        warnings: list[str] = []

        def merge(kind: str, key: str, label: str, policy: str = policy):
            sources = [(m.config.name, m.lists.get(kind, [])) for m in live]
            items, routes, found = merge_namespace(sources, key, policy, self.separator, label)
            if self.naming == "reject" and not strict:
                if not self._checked:
                    found = []  # still starting: the strict merge at the end raises instead
                else:  # at run time there is nobody to raise to: say what happens instead
                    found = [w.replace("(first wins)", "(naming='reject' cannot refuse a "
                                       "server that is already running: the first one's "
                                       "stays)") for w in found]
            warnings.extend(found)
            return items, routes

        tools, tool_routes = merge("tools", "name", "tool")
        prompts, prompt_routes = merge("prompts", "name", "prompt")
        # URIs are never rewritten (a prefix would make them invalid: "_" cannot be in a
        # scheme): a resource is routed to the server that listed it, the first one on a
        # collision, unless the caller names the server (read_resource(..., server=)).
        uri_policy = "reject" if policy == "reject" else "first-wins"
        resources, resource_routes = merge("resources", "uri", "resource", uri_policy)
        templates, template_names = merge("templates", "uriTemplate", "resource template",
                                          uri_policy)
        template_routes = []
        for exposed, (server, original) in template_names.items():
            prefix = exposed[: len(exposed) - len(original)]
            template_routes.append((_template_regex(exposed), server, prefix))
        self._view = _View(tools, prompts, resources, templates, tool_routes, prompt_routes,
                           resource_routes, template_routes,
                           toolformats.ToolNames(t["name"] for t in tools),
                           frozenset(t["name"] for t in tools if not apps.model_visible(t)))
        return warnings

    def _warn(self, warnings: list[str]) -> None:
        """Emit ``collision`` events for warnings not emitted before (call without the lock)."""
        for warning in warnings:
            if warning not in self._warned:
                self._warned.add(warning)
                self._emit("collision", "", warning)

    def tools(self) -> list[dict[str, Any]]:
        """The merged tool list (exposed names) a model may be offered: without the tools
        only an MCP Apps view may call (``visibility: ["app"]``)."""
        view = self._view
        return [t for t in view.tools if t["name"] not in view.app_only]

    def prompts(self) -> list[dict[str, Any]]:
        return list(self._view.prompts)

    def resources(self) -> list[dict[str, Any]]:
        return list(self._view.resources)

    def resource_templates(self) -> list[dict[str, Any]]:
        return list(self._view.templates)

    def route(self, tool: str) -> tuple[str, str]:
        """``(server, original name)`` for an exposed tool name."""
        try:
            return self._view.tool_routes[tool]
        except KeyError:
            raise UnknownName(f"no server offers a tool named {tool!r}") from None

    # -- using the servers -------------------------------------------------------------------

    def _managed(self, name: str) -> _Managed:
        try:
            return self._servers[name]
        except KeyError:
            raise UnknownName(f"no server named {name!r}") from None

    def client(self, server: str, timeout: float | None = None) -> Client:
        """The live session of ``server``, waiting (bounded) if it is starting or
        restarting; :class:`ServerUnavailable` if it is failed or stopped."""
        m = self._managed(server)
        deadline = time.monotonic() + (timeout if timeout is not None else self.ready_timeout)
        with self._cond:
            while True:
                if m.state == "ready" and m.client is not None and m.client.alive:
                    return m.client
                if self._closing or m.state in ("failed", "stopped"):
                    raise ServerUnavailable(f"server {server!r} is {m.state}"
                                            + (f": {m.last_error}" if m.last_error else ""))
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise ServerUnavailable(f"server {server!r} is still {m.state}")
                self._cond.wait(min(remaining, 0.5))

    def call_tool(self, name: str, arguments: dict[str, Any] | None = None, *,
                  timeout: float | None = None,
                  on_progress: Callable[[dict[str, Any]], None] | None = None) -> dict[str, Any]:
        """Call a tool by its exposed name, on the server that offers it (not one only an
        MCP Apps view may call: :meth:`call_tool_from_app` is the view's way)."""
        server, original = self._model_route(name)
        session = self.client(server, timeout)
        options: dict[str, Any] = {"on_progress": on_progress}
        if timeout is not None:
            options["timeout"] = timeout
        return session.call_tool(original, arguments, **options)

    def _model_route(self, name: str) -> tuple[str, str]:
        server, original = self.route(name)
        if name in self._view.app_only:
            raise HostError(f"tool {name!r} is for {server!r}'s app view only (MCP Apps "
                            'visibility ["app"]): a model may not call it')
        return server, original

    def server_tools(self, server: str) -> list[dict[str, Any]]:
        """The tools ``server`` lists, under their own names (app-only ones included)."""
        m = self._managed(server)
        with self._cond:
            return list(m.lists.get("tools", []))

    def call_tool_from_app(self, server: str, name: str,
                           arguments: dict[str, Any] | None = None, *,
                           timeout: float | None = None) -> dict[str, Any]:
        """A ``tools/call`` from the MCP Apps view of ``server``'s tool: by the tool's own
        name, on that server only (a view never reaches another server's tools), and only
        if the tool's visibility includes ``"app"``."""
        listed = next((t for t in self.server_tools(server) if t.get("name") == name), None)
        if listed is None:
            raise UnknownName(f"server {server!r} offers no tool named {name!r}")
        if not apps.app_visible(listed):
            raise HostError(f"tool {name!r} of {server!r} is not for app views (MCP Apps "
                            'visibility without "app"): the view may not call it')
        options: dict[str, Any] = {} if timeout is None else {"timeout": timeout}
        return self.client(server, timeout).call_tool(name, arguments, **options)

    def call_tool_as_task(self, name: str, arguments: dict[str, Any] | None = None, *,
                          ttl_ms: int | None = None, timeout: float | None = None) -> Any:
        """Call a tool by its exposed name as a task, on the server that offers it: a
        :class:`~mcpkit.task_client.ToolTask` (see :meth:`Client.call_tool_as_task`)."""
        server, original = self._model_route(name)
        return self.client(server, timeout).call_tool_as_task(original, arguments,
                                                              ttl_ms=ttl_ms)

    def get_prompt(self, name: str, arguments: dict[str, str] | None = None, *,
                   timeout: float | None = None) -> dict[str, Any]:
        try:
            server, original = self._view.prompt_routes[name]
        except KeyError:
            raise UnknownName(f"no server offers a prompt named {name!r}") from None
        session = self.client(server, timeout)
        if timeout is not None:
            return session.get_prompt(original, arguments, timeout=timeout)
        return session.get_prompt(original, arguments)

    def resource_route(self, uri: str) -> tuple[str, str]:
        """``(server, original URI)`` for an exposed URI (listed, or matching a template)."""
        view = self._view
        route = view.resource_routes.get(uri)
        if route is not None:
            return route
        for regex, server, prefix in view.template_routes:
            if regex.match(uri):
                return server, uri[len(prefix):]
        raise UnknownName(f"no server offers a resource {uri!r}")

    def read_resource(self, uri: str, *, timeout: float | None = None,
                      server: str | None = None) -> dict[str, Any]:
        """Read a resource by its URI; ``server`` picks one when several offer it."""
        if server is not None:
            self._managed(server)  # an unknown name raises
            original = uri
        else:
            server, original = self.resource_route(uri)
        session = self.client(server, timeout)
        if timeout is not None:
            return session.read_resource(original, timeout=timeout)
        return session.read_resource(original)

    def subscribe(self, uri: str, callback: Callable[[str, dict[str, Any]], None],
                  timeout: float | None = None, *, server: str | None = None) -> Watch:
        """Call ``callback(uri, params)`` when the resource changes, until the returned
        :class:`Watch` is closed. The subscription is made again whenever the server is
        restarted (a new process knows nothing of the old one's subscriptions). ``server``
        picks one when several offer the URI."""
        if server is not None:
            self._managed(server)
            original = uri
        else:
            server, original = self.resource_route(uri)
        watch = Watch(self, server, original, uri, callback)
        watch._attach(self.client(server, timeout))
        with self._cond:
            self._watches.append(watch)
        return watch

    def _resubscribe(self, m: _Managed, client: Any) -> None:
        with self._cond:
            watches = [w for w in self._watches if w.server == m.config.name]
        for watch in watches:
            try:
                watch._attach(client)
            except (ServerError, SessionError) as exc:
                log.warning("%s: could not subscribe again to %s: %s", m.config.name,
                            watch.uri, exc)

    # -- status ------------------------------------------------------------------------------

    def status(self) -> dict[str, ServerStatus]:
        with self._cond:
            out = {}
            for name, m in self._servers.items():
                client = m.client
                out[name] = ServerStatus(
                    name=name, state=m.state,
                    era=client.era if client is not None else None,
                    protocol_version=client.protocol_version if client is not None else None,
                    tools=len(m.lists.get("tools", [])),
                    pid=client.pid if client is not None and client.alive else None,
                    restarts=m.restarts, failures=m.failures, last_error=m.last_error)
            return out

    def status_table(self) -> str:
        """The status as an aligned text table (for a notebook or a terminal)."""
        rows = [("server", "state", "era", "version", "tools", "pid", "restarts")]
        for s in self.status().values():
            rows.append((s.name, s.state, s.era or "-", s.protocol_version or "-", str(s.tools),
                         str(s.pid or "-"), str(s.restarts)))
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
        return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip()
                         for r in rows)

    def _emit(self, kind: str, server: str, message: str,
              error: BaseException | None = None) -> None:
        log.log(_EVENT_LEVELS.get(kind, logging.INFO), "%s%s", f"{server}: " if server else "",
                message)
        if self.on_event is not None:
            try:
                self.on_event(HostEvent(kind, server, message, error))
            except Exception:
                log.exception("on_event callback failed")

    # -- model tool formats ----------------------------------------------------------------

    def anthropic_tools(self) -> list[dict[str, Any]]:
        """The merged tools as the Anthropic Messages API's ``tools`` parameter."""
        view = self._view
        return toolformats.anthropic_tools(view.tools, view.names)

    def openai_tools(self) -> list[dict[str, Any]]:
        """The merged tools as OpenAI-style function tools."""
        view = self._view
        return toolformats.openai_tools(view.tools, view.names)

    def run_tool_call(self, call: toolformats.ToolCall,
                      timeout: float | None = None) -> tuple[dict[str, Any] | None, str | None]:
        """Run a model's tool call: ``(result, None)``, or ``(None, error text for the
        model)``. Errors a model can act on are returned, not raised."""
        if call.error is not None:
            return None, call.error
        names = self._view.names
        if call.name not in names:
            return None, f"unknown tool {call.name!r}"
        try:
            return self.call_tool(names.mcp(call.name), call.arguments, timeout=timeout), None
        except (ServerError, SessionError, HostError) as exc:
            return None, str(exc)

    def handle_anthropic_tool_use(self, block: Mapping[str, Any],
                                  timeout: float | None = None) -> dict[str, Any]:
        """A ``tool_use`` block in, the matching ``tool_result`` block out."""
        call = toolformats.anthropic_tool_calls([block])[0]
        result, error = self.run_tool_call(call, timeout)
        return toolformats.anthropic_tool_result(call.id, result, error)

    def handle_openai_tool_calls(self, message: Mapping[str, Any],
                                 timeout: float | None = None) -> list[dict[str, Any]]:
        """An assistant message with ``tool_calls`` in, the ``tool`` messages out."""
        out = []
        for call in toolformats.openai_tool_calls(message):
            result, error = self.run_tool_call(call, timeout)
            out.append(toolformats.openai_tool_message(call.id, result, error))
        return out

    def __repr__(self) -> str:
        states = ", ".join(f"{n}={m.state}" for n, m in self._servers.items())
        return f"<Host {states}>"

    def _repr_html_(self) -> str:
        """A notebook's view: one row per server (no pids: a saved notebook stays stable)."""
        def cell(text: object, tag: str = "td") -> str:
            escaped = str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            return f"<{tag} style='text-align:left'>{escaped}</{tag}>"

        head = "".join(cell(h, "th") for h in ("server", "state", "era", "version", "tools",
                                                "restarts"))
        rows = "".join(
            "<tr>" + "".join(cell(v) for v in (s.name, s.state, s.era or "-",
                                                s.protocol_version or "-", s.tools, s.restarts))
            + "</tr>" for s in self.status().values())
        return f"<table><caption>Host ({self.naming})</caption><tr>{head}</tr>{rows}</table>"
