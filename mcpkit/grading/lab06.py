"""Checks for lab 06 (a host): merging namespaces, routing, the restart policy, a supervisor.

Parts 1 to 3 are pure functions and small classes, held to :mod:`mcpkit.host` itself on
generated inputs: :func:`~mcpkit.host.merge_namespace` for the merge and the namespace that
is merged again after each change, :class:`~mcpkit.host.Backoff` for the delays (with a
scripted random source, so that the jitter is reproducible and nothing sleeps). Part 4 starts
real server processes (:mod:`mcpkit.grading.lab06_server`), kills them with SIGKILL and
watches the learner's supervisor bring them back, with an injected sleep (no real waiting)
and an injected clock. After each case it looks for anything left behind: a thread still
running, or a child process (zombies count).
"""

from __future__ import annotations

import contextlib
import copy
import os
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from .. import host
from .core import (
    CaseResult,
    Gen,
    Seen,
    Step,
    _,
    _equal,
    case,
    child_processes,
    differential,
    drop_each,
    record_returns,
    run_checks,
    seen,
)
from .lab05 import bounded

#: The host is what this lab asks the learner to write.
OFF_LIMITS: dict[str, set[str]] = {
    "mcpkit": {"Host"},
    "mcpkit.host": {"Host", "Backoff", "merge_namespace", "NameCollision", "UnknownName",
                    "NAMING_POLICIES", "HostEvent", "ServerConfig", "load_config",
                    "CONNECTORS", "ServerStatus", "ServerUnavailable", "Watch", "HostError",
                    "ConfigError", "RESTART_POLICIES", "_View", "_Managed"},
}

SERVER_SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "lab06_server.py")
POLICIES = ("prefix", "prefix-on-collision", "first-wins", "reject")
#: How long a supervisor may take to bring a killed server back (it sleeps for no time): a
#: deadline polled, so a correct supervisor costs what it takes; a loaded machine is slow.
RESTART_WAIT = 6.0
#: How long close() may take (a correct one takes milliseconds: closing stdin ends the test
#: server at once), and then the threads and processes it ended, to be gone.
CLOSE_GRACE = 3.0
GONE_GRACE = 2.0


def server_command(log: str | None = None, refuse: bool = False) -> list[str]:
    """The command that starts lab 06's test server (``log``: a file it appends its pid to;
    ``refuse``: it stays up but answers every request with an error, so ping fails)."""
    return [sys.executable, "-I", SERVER_SCRIPT, *(["--refuse"] if refuse else []),
            *([log] if log else [])]


def failing_command(log: str) -> list[str]:
    """A server that logs its start, then exits at once without answering."""
    code = ("import os, sys\nwith open(sys.argv[1], 'a') as f: f.write(f'{os.getpid()}\\n')\n"
            "raise SystemExit(3)")
    return [sys.executable, "-I", "-c", code, log]


# --------------------------------------------------------------------------- the references

_TAG = "\x00lab06-source"


class UnknownTool(LookupError):
    """The reference's error for an unknown exposed name (the lab's setup defines the same)."""

    def __init__(self, message: str, name: str) -> None:
        super().__init__(message)
        self.name = name


def reference_merge(servers: dict[str, list[dict[str, Any]]], policy: str = "prefix-on-collision",
                    separator: str = "__") -> tuple[list[dict], dict[str, tuple[str, str]], list]:
    """mcpkit's merge, shaped as the lab asks: (tools, routes, hidden)."""
    tagged = [(server, [{**tool, _TAG: (server, i)} for i, tool in enumerate(tools)])
              for server, tools in servers.items()]
    merged, routes, _warnings = host.merge_namespace(tagged, "name", policy, separator, "tool")
    kept = {tool[_TAG] for tool in merged}
    hidden = [(server, tool["name"]) for server, tools in tagged for tool in tools
              if tool[_TAG] not in kept]
    return [{k: v for k, v in t.items() if k != _TAG} for t in merged], routes, hidden


class ReferenceNamespace:
    """Servers' tool lists, merged again from scratch (in config order) after each change."""

    def __init__(self, servers: list[str], policy: str = "prefix-on-collision",
                 separator: str = "__") -> None:
        self.order = list(servers)
        self.policy = policy
        self.separator = separator
        self.lists: dict[str, list[dict[str, Any]]] = {}
        self._tools: list[dict[str, Any]] = []
        self._routes: dict[str, tuple[str, str]] = {}

    def _merge(self, lists: dict[str, list[dict[str, Any]]]) -> None:
        ordered = {s: lists[s] for s in self.order if s in lists}
        self._tools, self._routes, _hidden = reference_merge(ordered, self.policy,
                                                             self.separator)

    def update(self, server: str, tools: list[dict[str, Any]]) -> None:
        lists = {**self.lists, server: [dict(t) for t in tools]}
        self._merge(lists)  # a collision under "reject" raises here, before anything changed
        self.lists = lists

    def remove(self, server: str) -> None:
        self.lists.pop(server, None)
        self._merge(self.lists)

    def tools(self) -> list[dict[str, Any]]:
        return [dict(t) for t in self._tools]

    def route(self, name: str) -> tuple[str, str]:
        try:
            return self._routes[name]
        except (KeyError, TypeError):
            raise UnknownTool(f"no server offers a tool named {name!r}", name) from None


class ReferenceBackoff:
    """mcpkit's Backoff, plus the streak of consecutive failures and the notice."""

    def __init__(self, rng: Any, base: float = 0.5, factor: float = 2.0, cap: float = 30.0,
                 jitter: float = 0.2, notice_after: int = 3) -> None:
        self.policy = host.Backoff(base=base, factor=factor, cap=cap, jitter=jitter)
        self.rng = rng
        self.notice_after = notice_after
        self.failures = 0

    def delay(self, failures: int) -> float:
        return self.policy.delay(failures, self.rng)

    def failure(self) -> tuple[float, bool]:
        self.failures += 1
        return self.delay(self.failures), self.failures == self.notice_after

    def success(self) -> None:
        self.failures = 0


class ScriptedRandom:
    """A random source that plays back fixed values: the jitter becomes reproducible."""

    def __init__(self, values: list[float]) -> None:
        self.values = list(values)
        self.drawn = 0

    def random(self) -> float:
        value = self.values[self.drawn % len(self.values)]
        self.drawn += 1
        return value

    def uniform(self, a: float, b: float) -> float:
        return a + (b - a) * self.random()


# --------------------------------------------------------------------------- how results look


def _error_view(exc: BaseException) -> dict[str, Any]:
    """An error as compared: its class, its ``name`` and ``servers``, and whether the
    message names them (its wording is free)."""
    view: dict[str, Any] = {_("raised", "lanzó"): type(exc).__name__}
    text = str(exc)
    name = getattr(exc, "name", None)
    if type(exc).__name__ in ("NameCollision", "UnknownTool"):
        view["name"] = seen(name)
        mentioned = [name]
        servers = getattr(exc, "servers", None)
        if servers is not None:
            servers = seen(servers)
            view["servers"] = list(servers) if isinstance(servers, list | tuple) else servers
            if isinstance(servers, list):
                mentioned += servers
        view[_("the message names them", "el mensaje los nombra")] = all(
            isinstance(m, str) and m in text for m in mentioned)
    return view


def _outcome(fn: Callable[..., Any], *args: Any) -> Any:
    try:
        return seen(fn(*args))
    except NotImplementedError:
        raise
    except Exception as exc:
        return _error_view(exc)


def _done(fn: Callable[..., Any], *args: Any) -> Any:
    """A call made for its effect: None, or the error it raised (what it returns is free)."""
    try:
        fn(*args)
    except NotImplementedError:
        raise
    except Exception as exc:
        return _error_view(exc)
    return None


def _show_servers(servers: dict[str, list[dict[str, Any]]]) -> str:
    return "{" + ", ".join(f"{s!r}: {[t.get('name') for t in tools]}"
                           for s, tools in servers.items()) + "}"


def _merged(impl: Callable[..., Any], servers: dict, policy: str, separator: str = "__"
            ) -> list[Any]:
    """merge() on a copy of ``servers``: its result, whether the input was left alone, and
    whether every tool it returned is a new dict (none is one of the server's own)."""
    given = copy.deepcopy(servers)
    own = [tool for tools in given.values() for tool in tools]
    returned: list[Any] = []

    def call(*args: Any) -> Any:
        returned.append(impl(*args))
        return returned[0]

    got = _outcome(call, given, policy, separator)
    if isinstance(got, list) and len(got) == 3 and isinstance(got[1], dict):
        got = [got[0], {k: list(v) if isinstance(v, list | tuple) else v
                        for k, v in got[1].items()}, got[2]]
    got = _any_collision(got, servers, policy)
    return [got, seen(given) == seen(servers), _fresh(returned, own)]


def _fresh(returned: list[Any], own: list[Any]) -> bool:
    """Whether no tool merge() returned is one of the server's own dicts."""
    try:
        tools = returned[0][0] if returned else []
    except Exception:  # not a (tools, routes, hidden): the result says so already
        return True
    if not isinstance(tools, list | tuple):  # idem; and nothing of the learner's is iterated
        return True
    return not any(tool is mine for tool in tools for mine in own)


def _collisions(servers: dict) -> tuple[set[tuple[str, tuple[str, str]]], Any]:
    """Under "reject": every real collision (a name and two different servers offering it,
    in config order), and the first one met server by server, tool by tool."""
    holders: dict[Any, list[str]] = {}
    first = None
    for server, tools in servers.items():
        for tool in tools:
            name = tool.get("name")
            owners = holders.setdefault(name, [])
            if owners and server not in owners and first is None:
                first = (name, (owners[0], server))
            if server not in owners:
                owners.append(server)
    real = {(name, (a, b)) for name, owners in holders.items()
            for i, a in enumerate(owners) for b in owners[i + 1:]}
    return real, first


def _any_collision(got: Any, servers: dict, policy: str) -> Any:
    """When several names collide under "reject", NameCollision may name any of them: a real
    collision is shown as the first one met, the one mcpkit reports (its message must still
    name the tool and both servers it gave)."""
    if policy != "reject" or not isinstance(got, dict) or got.get(_("raised", "lanzó")) != (
            "NameCollision"):
        return got
    pair = got.get("servers")
    if not isinstance(pair, list) or len(pair) != 2:
        return got
    real, first = _collisions(servers)
    try:
        if first is None or (got.get("name"), (pair[0], pair[1])) not in real:
            return got
    except TypeError:  # unhashable name or servers: not a collision of these servers
        return got
    return {**got, "name": first[0], "servers": list(first[1])}


def _tools(*names: str, **extra: Any) -> list[dict[str, Any]]:
    return [{"name": n, "description": f"{n} ({extra.get('of', 'a server')})"} for n in names]


# --------------------------------------------------------------------------- part 1


def check_merge(merge: Callable[..., Any]) -> None:
    """Part 1: merge() under every policy, against merge_namespace on generated servers."""
    two = {"files": _tools("search", "read", of="files"),
           "web": _tools("search", "fetch", of="web")}

    def merged(name: str, servers: dict, policy: str, separator: str = "__",
               hint: str | None = None) -> CaseResult:
        # the whole result is compared (the fresh dicts have a case of their own); the hint
        # is read from its first part that differs
        expected = _merged(reference_merge, servers, policy, separator)[:2]
        return case(name, lambda: _merged(merge, servers, policy, separator)[:2], expected,
                    hint=_merge_case_hint(servers, policy, separator, expected, hint))

    def unknown(*calls: tuple[dict, str]) -> Callable[[], Any]:
        return lambda: [_merged(merge, servers, policy)[0] for servers, policy in calls]

    value_error = {_("raised", "lanzó"): "ValueError"}
    results = [
        case(_("the servers' own lists are left alone", "las listas de los servidores no se tocan"),
             lambda: _merged(merge, two, "prefix")[1], True,
             hint=_(*_COPY_IN_PLACE)),
        case(_("the tools returned are new dicts, renamed or not: changing them leaves the "
               "servers' alone",
               "las herramientas devueltas son dicts nuevos, renombradas o no: cambiarlas no "
               "toca las de los servidores"),
             lambda: _copies_apart(merge), [True, True, True],
             hint=_(*_FRESH)),
        merged(_("no collision: names stay as they are", "sin colisión: los nombres no cambian"),
               {"files": _tools("read"), "web": _tools("fetch")}, "prefix-on-collision",
               hint=_("with prefix-on-collision only names that two servers offer get a prefix",
                      "con prefix-on-collision solo llevan prefijo los nombres que ofrecen dos "
                      "servidores")),
        merged(_("prefix-on-collision: both `search` tools get their server's prefix",
                 "prefix-on-collision: las dos `search` llevan el prefijo de su servidor"),
               two, "prefix-on-collision",
               hint=_("rename every holder of a shared name (files__search and web__search), "
                      "not only the second one: then no name depends on which server came "
                      "first",
                      "renombra a todos los que comparten el nombre (files__search y "
                      "web__search), no solo al segundo: así ningún nombre depende de qué "
                      "servidor llegó primero")),
        merged(_("prefix: every tool gets its server's prefix",
                 "prefix: todas las herramientas llevan el prefijo de su servidor"),
               two, "prefix", "/",
               hint=_("server + separator + name, for every tool, colliding or not",
                      "server + separator + name, para cada herramienta, colisione o no")),
        merged(_("prefix: a name that already starts with a server's prefix gets one more "
                 "(`a` + `a__x` is `a__a__x`)",
                 "prefix: un nombre que ya empieza por el prefijo de un servidor recibe uno "
                 "más (`a` + `a__x` da `a__a__x`)"),
               {"a": _tools("a__x", "b__x"), "b": _tools("x")}, "prefix",
               hint=_("always server + separator + name, even when the name already starts "
                      "with a prefix: the name is the server's, whatever it looks like",
                      "siempre server + separator + name, aunque el nombre ya empiece por un "
                      "prefijo: el nombre es del servidor, parezca lo que parezca")),
        merged(_("first-wins: the later `search` is hidden, and listed as hidden",
                 "first-wins: la `search` posterior queda oculta, y aparece como oculta"),
               two, "first-wins",
               hint=_("the first server in order keeps the name; the later tool is left out of "
                      "the tools and routes and goes into hidden as (server, name)",
                      "el primer servidor en orden se queda el nombre; la herramienta "
                      "posterior queda fuera de las herramientas y las rutas y va a hidden "
                      "como (servidor, nombre)")),
        merged(_("first-wins: every tool left out is in hidden, a repeated one each time",
                 "first-wins: cada herramienta que queda fuera está en hidden, una repetida "
                 "cada vez"),
               {"files": _tools("read"), "web": _tools("read", "fetch", "read")}, "first-wins",
               hint=_("hidden gets one (server, original name) per tool left out, in order: a "
                      "server that lists a taken name twice appears there twice",
                      "hidden recibe un (servidor, nombre original) por cada herramienta que "
                      "queda fuera, en orden: un servidor que enumera dos veces un nombre "
                      "ocupado aparece dos veces")),
        merged(_("config order, not alphabetical: `web` comes first, and keeps `search`",
                 "el orden de la configuración, no el alfabético: `web` va primero y se "
                 "queda `search`"),
               {"web": _tools("search", "fetch", of="web"),
                "files": _tools("search", "read", of="files")}, "first-wins",
               hint=_("walk the servers in the dict's own order (config order), not sorted",
                      "recorre los servidores en el orden del propio dict (el de la "
                      "configuración), sin ordenarlos")),
        merged(_("reject: NameCollision naming the tool and both servers",
                 "reject: NameCollision con la herramienta y los dos servidores"),
               two, "reject",
               hint=_("raise NameCollision(message, name, (first, second)); the message must "
                      "name the tool and both servers, so that the user knows what to rename",
                      "lanza NameCollision(message, name, (first, second)); el mensaje debe "
                      "nombrar la herramienta y los dos servidores, para que el usuario sepa "
                      "qué renombrar")),
        merged(_("reject: three servers offer `search`: the error names two of them",
                 "reject: tres servidores ofrecen `search`: el error nombra a dos de ellos"),
               {"files": _tools("search"), "web": _tools("search"), "git": _tools("search")},
               "reject",
               hint=_("NameCollision's servers are a pair, (first, second): the server that "
                      "has the name and the one that wants it too",
                      "los servidores de NameCollision son un par, (first, second): el servidor "
                      "que tiene el nombre y el que también lo quiere")),
        merged(_("reject: a name twice in one server is not a collision between servers",
                 "reject: un nombre repetido en un servidor no es una colisión entre "
                 "servidores"),
               {"files": _tools("read", "read")}, "reject",
               hint=_("only two different servers collide; a server's own duplicate is hidden "
                      "(its first one wins), under every policy",
                      "solo hay colisión entre dos servidores distintos; el duplicado de un "
                      "mismo servidor queda oculto (gana el primero), con cualquier política")),
        merged(_("prefix-on-collision: a name twice in one server is not shared",
                 "prefix-on-collision: un nombre repetido en un servidor no es compartido"),
               {"files": _tools("read", "read"), "web": _tools("fetch")},
               "prefix-on-collision",
               hint=_("a name is shared when two or more different servers offer it; count "
                      "servers, not tools (the duplicate is hidden, the first keeps the plain "
                      "name)",
                      "un nombre es compartido cuando lo ofrecen dos o más servidores "
                      "distintos; cuenta servidores, no herramientas (el duplicado queda "
                      "oculto, el primero conserva el nombre sin prefijo)")),
        merged(_("a prefixed name can collide too (`a` + `b__c`, `a__b` + `c`)",
                 "un nombre con prefijo también puede provocar una colisión (`a` + `b__c`, "
                 "`a__b` + `c`)"),
               {"a": _tools("b__c"), "a__b": _tools("c")}, "prefix",
               hint=_("check the exposed name, after the prefix, against the names already "
                      "taken",
                      "compara el nombre expuesto, ya con el prefijo, con los nombres ya "
                      "ocupados")),
        case(_("an unknown policy is a ValueError", "una política desconocida es un ValueError"),
             lambda: _merged(merge, two, "last-wins")[0], value_error),
        case(_("an unknown policy is a ValueError even with nothing to merge",
               "una política desconocida es un ValueError aunque no haya nada que fusionar"),
             unknown(({}, "bogus"), ({"files": [], "web": []}, "bogus")),
             [value_error, value_error],
             hint=_("check the policy first, before looking at any tool: merge({}, 'bogus') "
                    "raises ValueError too",
                    "comprueba primero la política, antes de mirar ninguna herramienta: "
                    "merge({}, 'bogus') también lanza ValueError")),
        case(_("policy names are exact: 'PREFIX' and 'first_wins' are unknown",
               "los nombres de política son exactos: 'PREFIX' y 'first_wins' son "
               "desconocidos"),
             unknown((two, "PREFIX"), (two, "first_wins")), [value_error, value_error],
             hint=_("compare the policy as given with the four names, without changing its "
                    "case or its dashes",
                    "compara la política tal como llega con los cuatro nombres, sin cambiar "
                    "mayúsculas ni guiones")),
        differential(
            _("behaves like mcpkit's merge_namespace on generated servers (every policy, "
              "separators inside names, duplicates, empty servers)",
              "se comporta como merge_namespace de mcpkit con servidores generados (todas las "
              "políticas, separadores dentro de los nombres, duplicados, servidores vacíos)"),
            key="lab06/merge", generate=_gen_merge, trial=_merge_trial,
            reference=reference_merge, learner=merge, show=_show_merge, cases=150,
            shrink=_shrink_merge, hint=_merge_hint),
    ]
    run_checks(results)


_COPY_IN_PLACE = ("copy each tool ({**tool, 'name': exposed}) instead of renaming it in "
                  "place: the server's list is the server's",
                  "copia cada herramienta ({**tool, 'name': exposed}) en lugar de "
                  "renombrarla en su sitio: la lista del servidor es del servidor")
_FRESH = ("return a copy of every tool, also of those that keep their plain name "
          "({**tool, 'name': exposed} each time): a tool returned as it is is the server's "
          "own dict, and whoever changes the merged list changes the server's",
          "devuelve una copia de cada herramienta, también de las que conservan su nombre "
          "simple ({**tool, 'name': exposed} cada vez): una herramienta devuelta tal cual es "
          "el propio dict del servidor, y quien cambie la lista fusionada cambia la del "
          "servidor")


def _copies_apart(merge: Callable[..., Any]) -> list[Any]:
    """merge() under prefix-on-collision (two renamed and two plain names): whether no tool
    it returned is a server's dict, and whether changing each one it returned leaves the
    servers' lists as they were (the renamed ones, the ones with a plain name; a naming
    mistake is other cases' business)."""
    servers = {"files": _tools("search", "read", of="files"),
               "web": _tools("search", "fetch", of="web")}
    given = copy.deepcopy(servers)
    own = [tool for tools in given.values() for tool in tools]
    tools = merge(given, "prefix-on-collision", "__")[0]
    fresh = _fresh([[tools]], own)
    plain = {tool["name"] for tools in servers.values() for tool in tools}
    alone = {True: True, False: True}  # renamed, plain: the servers' lists still as given
    for tool in list(tools) if isinstance(tools, list | tuple) else ():
        if isinstance(tool, dict):
            tool["description"] = "changed by the caller"
            kept = tool.get("name") in plain
            alone[not kept] = alone[not kept] and seen(given) == seen(servers)
    return [fresh, alone[True], alone[False]]


def _differs(got: Any, expected: Any) -> bool:
    return not _equal(got, expected)


def _merge_case_hint(servers: dict, policy: str, separator: str, expected: list[Any],
                     own: str | None) -> Callable[[Any], str | None]:
    """A named part 1 case's hint, read from what differs: its parts in order (the exposed
    names, the routes, hidden, the copied fields, the input), the case's own
    hint only when the names differ in a way no sharper hint explains."""

    def hint(got: Any) -> str | None:
        if not isinstance(got, list) or len(got) != len(expected):
            return own
        found = _merge_fault(servers, policy, separator, expected[0], got[0])
        if found is not None:
            return found or own
        if _differs(got[1], expected[1]):
            return _(*_COPY_IN_PLACE)
        return own

    return hint


def _merge_fault(servers: dict, policy: str, separator: str, expected: Any, got: Any
                 ) -> str | None:
    """What differs first between two merge() results: a hint, "" when they differ in a way
    only the case's own hint explains, None when the results are equal."""
    if not _differs(got, expected):
        return None
    shaped = (isinstance(got, list) and len(got) == 3 and isinstance(got[0], list)
              and isinstance(got[1], dict) and isinstance(got[2], list))
    if not shaped or not isinstance(expected, list):
        return ""  # an error on either side: the case is about that error
    want, have = [_name_of(t) for t in expected[0]], [_name_of(t) for t in got[0]]
    if _differs(have, want):
        return _naming_fault(servers, policy, separator, want, have)
    if _differs(got[1], expected[1]):
        return _("the exposed names are right; the routes are not: each maps its exposed "
                 "name to (server, original name), the name the server itself knows",
                 "los nombres expuestos están bien; las rutas no: cada una lleva su nombre "
                 "expuesto a (servidor, nombre original), el nombre que conoce el propio "
                 "servidor")
    if _differs(got[2], expected[2]):
        return _("the tools and routes are right; hidden is not: the (server, original name) "
                 "of each tool left out, in the order they were met",
                 "las herramientas y las rutas están bien; hidden no: el (servidor, nombre "
                 "original) de cada herramienta que queda fuera, en el orden en que aparecen")
    return _("the names are right, but not the rest of each tool: return a copy of the "
             "server's tool with every field it has (description, inputSchema...), only "
             "\"name\" changed, nothing added",
             "los nombres están bien, pero no el resto de cada herramienta: devuelve una copia "
             "de la herramienta del servidor con todos sus campos (description, "
             "inputSchema...), cambiando solo \"name\" y sin añadir nada")


def _name_of(tool: Any) -> Any:
    return tool.get("name") if isinstance(tool, dict) else tool


def _naming_fault(servers: dict, policy: str, separator: str, want: list[Any],
                  have: list[Any]) -> str:
    """Why the exposed names differ, when the evidence says: a name listed twice, the right
    names in another order, a name prefixed that no other server offers, a prefix left off a
    name that already looks prefixed, another separator; "" otherwise."""
    if len({repr(n) for n in have}) < len(have):
        return _("an exposed name appears twice in tools: a later tool whose exposed name is "
                 "already taken is hidden (left out of tools and routes, listed in hidden); "
                 "the first one keeps the name",
                 "un nombre expuesto aparece dos veces en las herramientas: una herramienta "
                 "posterior cuyo nombre expuesto ya está ocupado queda oculta (fuera de las "
                 "herramientas y las rutas, en hidden); la primera se queda el nombre")
    if sorted(map(repr, have)) == sorted(map(repr, want)):
        return _("the right names in another order: server by server in the order of "
                 "servers (config order: the dict's own order, not sorted), each server's "
                 "tools in their own order",
                 "los nombres correctos en otro orden: servidor a servidor en el orden de "
                 "servers (el de la configuración: el del propio dict, sin ordenar), y las "
                 "herramientas de cada servidor en su orden")
    offered: dict[Any, set[str]] = {}
    for server, tools in servers.items():
        for tool in tools:
            offered.setdefault(tool.get("name"), set()).add(server)
    for server, tools in servers.items():
        for tool in tools:
            name = tool.get("name")
            if not isinstance(name, str):
                continue
            prefixed = server + separator + name
            if (policy == "prefix-on-collision" and len(offered[name]) == 1
                    and name in want and name not in have and prefixed in have):
                return _("{name!r} is offered by {server!r} alone: it keeps its plain name; "
                         "only a name that two or more servers offer gets a prefix, not every "
                         "tool of a server that shares one",
                         "{name!r} solo lo ofrece {server!r}: conserva su nombre simple; solo "
                         "lleva prefijo un nombre que ofrecen dos o más servidores, no todas "
                         "las herramientas de un servidor que comparte uno").format(
                             name=name, server=server)
            if prefixed in want and prefixed not in have:
                if name.startswith(server + separator) and name in have:
                    return _("the prefix is added even when the name already starts with "
                             "it: {server!r}'s tool {name!r} is exposed as {prefixed!r}",
                             "el prefijo se añade aunque el nombre ya empiece por él: la "
                             "herramienta {name!r} de {server!r} se expone como "
                             "{prefixed!r}").format(server=server, name=name,
                                                    prefixed=prefixed)
                joined = [n for n in have if isinstance(n, str) and n != prefixed
                          and n.startswith(server) and n.endswith(name)
                          and len(n) > len(server) + len(name)]
                if joined:
                    return _("join the server and the name with the separator given "
                             "({separator!r}): {prefixed!r}, not {other!r}",
                             "une el servidor y el nombre con el separador que recibes "
                             "({separator!r}): {prefixed!r}, no {other!r}").format(
                                 separator=separator, prefixed=prefixed, other=joined[0])
    return ""


_SERVER_NAMES = ("files", "web", "git", "a", "a__b", "db", "a/b", "b")
#: Past the first six (the namespace checks draw those): names that already start with a
#: server's prefix, which gets added all the same.
_TOOL_NAMES = ("search", "read", "fetch", "list", "b__c", "c", "b/c", "query", "x" * 120,
               "a__x", "files__read", "b__x")


def _gen_servers(rng: Gen) -> dict[str, list[dict[str, Any]]]:
    servers: dict[str, list[dict[str, Any]]] = {}
    for name in rng.sample(_SERVER_NAMES, rng.randint(1, 4)):
        tools = []
        for tool in rng.sample(_TOOL_NAMES, rng.randint(0, 4)):
            entry: dict[str, Any] = {"name": tool, "description": rng.text()}
            if rng.random() < 0.3:
                entry["inputSchema"] = {"type": "object", "properties": {}}
            tools.append(entry)
        if tools and rng.random() < 0.1:
            tools.append(dict(tools[0]))  # a duplicate within one server
        servers[name] = tools
    return servers


def _gen_merge(rng: Gen) -> tuple[dict, str, str]:
    return _gen_servers(rng), rng.choice(POLICIES), rng.choice(["__", "__", "/", "."])


def _merge_trial(impl: Callable[..., Any], x: tuple[dict, str, str]) -> list[Step]:
    servers, policy, separator = x
    result, untouched, fresh = _merged(impl, servers, policy, separator)
    label = f"merge({_show_servers(servers)}, {policy!r}, {separator!r})"
    return [Step(label, result),
            Step(_("the input afterwards is unchanged", "la entrada sigue igual después"),
                 untouched),
            Step(_(*_FRESH_LABELS), fresh)]


_FRESH_LABELS = ("no tool returned is one of the server's own dicts",
                 "ninguna herramienta devuelta es uno de los dicts del propio servidor")


def _show_merge(x: tuple[dict, str, str]) -> str:
    servers, policy, separator = x
    return f"merge({_show_servers(servers)}, {policy!r}, {separator!r})"


def _shrink_merge(x: tuple[dict, str, str]) -> Iterator[tuple[dict, str, str]]:
    servers, policy, separator = x
    names = list(servers)
    for fewer in drop_each(names):
        if fewer:
            yield {n: servers[n] for n in fewer}, policy, separator
    for n in names:
        for tools in drop_each(servers[n]):
            yield {**servers, n: tools}, policy, separator
    if separator != "__":
        yield servers, policy, "__"


def _merge_hint(x: Any, expected: Step | None, got: Step | None) -> str | None:
    if expected is None or got is None:
        return None
    if "unchanged" in expected.label or "sigue igual" in expected.label:
        return _("copy each tool instead of changing the server's dict",
                 "copia cada herramienta en lugar de cambiar el dict del servidor")
    if expected.label in _FRESH_LABELS:
        return _(*_FRESH)
    servers, policy, separator = x
    return _merge_fault(servers, policy, separator, expected.seen, got.seen) or None


# --------------------------------------------------------------------------- part 2


def check_namespace(make: Callable[..., Any]) -> None:
    """Part 2: a namespace merged again on every change, and routing by exposed name."""

    def run(cls: Any, ops: list[tuple]) -> list[Any]:
        return [step.seen for step in _namespace_trial(cls, ops)]

    def both(ops: list[tuple]) -> tuple[Callable[[], Any], Any, list[tuple]]:
        return (lambda: run(make, ops)), run(ReferenceNamespace, ops), ops

    learner_merge = _learner_merge(make)

    def case(name: str, thunk: Callable[[], Any], expected: Any, ops: list[tuple],
             hint: str | Callable[[Any], str | None] | None = None) -> CaseResult:
        # the namespace merges with the learner's merge(): when that merge itself gives
        # another result on the very lists this case merges, say so, not the case's hint
        return _case(name, thunk, expected,
                     hint=lambda got: _merge_blame(learner_merge, ops) or (
                         hint(got) if callable(hint) else hint))

    files = ("update", "files", ["search", "read"])
    web = ("update", "web", ["search", "fetch"])
    results = [
        case(_("route an exposed name to (server, original name)",
               "enrutar un nombre expuesto a (servidor, nombre original)"),
             *both([("new", ["files", "web"], "prefix-on-collision"), files, web,
                    ("route", "web__search"), ("route", "read")]),
             hint=_("keep the routes merge() made: exposed name -> (server, original)",
                    "guarda las rutas que hizo merge(): nombre expuesto -> (servidor, "
                    "original)")),
        case(_("an unknown name raises UnknownTool", "un nombre desconocido lanza UnknownTool"),
             *both([("new", ["files", "web"], "prefix-on-collision"), files, web,
                    ("route", "search"), ("route", "nope")]),
             hint=_("raise UnknownTool(message, name), naming the tool: after a rename, the "
                    "old plain name is gone",
                    "lanza UnknownTool(message, name), nombrando la herramienta: tras un "
                    "cambio de nombre, el nombre simple antiguo ya no existe")),
        case(_("list_changed: a new tool on one server renames the other's",
               "list_changed: una herramienta nueva en un servidor renombra la del otro"),
             *both([("new", ["files", "web"], "prefix-on-collision"), files,
                    ("update", "web", ["fetch"]), ("route", "search"),
                    ("update", "web", ["fetch", "search"]), ("tools",), ("route", "search"),
                    ("route", "files__search")]),
             hint=_("merge everything again after each update, not only the server that "
                    "changed: a collision changes the other server's names too",
                    "vuelve a fusionar todo tras cada actualización, no solo el servidor que "
                    "cambió: una colisión también cambia los nombres del otro servidor")),
        case(_("config order decides, not the order servers came up",
               "decide el orden de la configuración, no el orden en que arrancaron"),
             *both([("new", ["files", "web"], "first-wins"), web, files, ("tools",),
                    ("route", "search")]),
             hint=_("merge the servers in the order given to Namespace(servers), whatever "
                    "order update() was called in",
                    "fusiona los servidores en el orden dado a Namespace(servers), sea cual "
                    "sea el orden de las llamadas a update()")),
        case(_("an update from a server not in the config is ignored",
               "una actualización de un servidor que no está en la configuración se ignora"),
             *both([("new", ["files", "web"], "prefix-on-collision"), files,
                    ("update", "stray", ["search", "extra"]), ("tools",), ("route", "search"),
                    ("route", "extra")]),
             hint=lambda got: _(*_STRAY_RAISES) if isinstance(got, list) and len(got) > 1 and (
                 got[1] is not None) else _(*_STRAY)),
        case(_("remove(): a removed server takes its names with it",
               "remove(): un servidor retirado se lleva sus nombres"),
             *both([("new", ["files", "web"], "prefix-on-collision"), files, web,
                    ("remove", "files"), ("tools",), ("route", "search"),
                    ("route", "files__read")])),
        case(_("a removed server that sends its list again is merged again",
               "un servidor retirado que vuelve a enviar su lista se fusiona de nuevo"),
             *both([("new", ["files", "web"], "prefix-on-collision"), files, web,
                    ("remove", "files"), files, ("tools",), ("route", "files__search")]),
             hint=_("remove() takes the server's list out; a later update() of that server "
                    "puts a list back, merged like any other (the server came back)",
                    "remove() quita la lista del servidor; un update() posterior de ese "
                    "servidor vuelve a poner una lista, que se fusiona como cualquier otra (el "
                    "servidor volvió)")),
        case(_("the separator given to Namespace is the one its names use",
               "el separador que recibe Namespace es el que usan sus nombres"),
             *both([("new", ["files", "web"], "prefix", "/"), files, web, ("tools",),
                    ("route", "files/search"), ("route", "files__search")]),
             hint=_("keep the separator given to Namespace(servers, policy, separator) and "
                    "pass it on to merge() with the policy",
                    "guarda el separador que recibe Namespace(servers, policy, separator) y "
                    "pásaselo a merge() junto con la política")),
        case(_("reject: a colliding update raises and changes nothing",
               "reject: una actualización que provoca una colisión lanza NameCollision y no "
               "cambia nada"),
             *both([("new", ["files", "web"], "reject"), files, web, ("tools",),
                    ("route", "search"), ("update", "files", ["read"]), ("tools",)]),
             hint=_("merge into new tables first; keep them only if the merge did not raise",
                    "fusiona primero en tablas nuevas; quédatelas solo si la fusión no lanzó "
                    "ninguna excepción")),
        differential(
            _("behaves like a namespace merged by mcpkit on generated updates and removals",
              "se comporta como un espacio de nombres fusionado por mcpkit con "
              "actualizaciones y retiradas generadas"),
            key="lab06/namespace", generate=_gen_namespace, trial=_namespace_trial,
            reference=ReferenceNamespace, learner=make, show=_show_ops, cases=60,
            shrink=_shrink_ops, hint=lambda x, e, g: _merge_blame(learner_merge, x)),
    ]
    run_checks(results)


_case = case
_STRAY = ("merge only the servers given to Namespace(servers), in that order: a server "
          "outside the config adds no tools",
          "fusiona solo los servidores dados a Namespace(servers), en ese orden: un servidor "
          "fuera de la configuración no añade herramientas")
_STRAY_RAISES = ("ignore it: update() of a server outside the config returns without "
                 "raising and without merging anything",
                 "ignórala: update() de un servidor fuera de la configuración retorna sin "
                 "lanzar ninguna excepción y sin fusionar nada")


class _RecordingNamespace(ReferenceNamespace):
    """The reference namespace, keeping every merge() it makes: (servers, policy, sep)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.merges: list[tuple[dict, str, str]] = []

    def _merge(self, lists: dict[str, list[dict[str, Any]]]) -> None:
        ordered = {s: lists[s] for s in self.order if s in lists}
        self.merges.append((copy.deepcopy(ordered), self.policy, self.separator))
        super()._merge(lists)


def _learner_merge(cls: Any) -> Callable[..., Any] | None:
    """The ``merge`` the learner's Namespace would call: the one its methods' module (the
    notebook) defines, if any."""
    for member in vars(cls).values() if isinstance(cls, type) else ():
        found = getattr(member, "__globals__", {}).get("merge")
        if callable(found):
            return found
    return None


def _merge_blame(merge: Callable[..., Any] | None, ops: list[tuple]) -> str | None:
    """A hint for part 2 when the learner's merge() (part 1) disagrees with mcpkit's on one of
    the merges these operations make: the namespace is not at fault, its merge is."""
    if merge is None:
        return None
    try:
        return _blame(merge, ops)
    except Exception:  # no evidence: the case's own hint
        return None


def _blame(merge: Callable[..., Any], ops: list[tuple]) -> str | None:
    recorder: list[_RecordingNamespace] = []

    def make(*args: Any) -> _RecordingNamespace:
        recorder.append(_RecordingNamespace(*args))
        return recorder[0]

    _namespace_trial(make, ops)
    for servers, policy, separator in recorder[0].merges if recorder else ():
        if not servers:
            continue
        want = _merged(reference_merge, servers, policy, separator)[:2]
        try:
            got = bounded(lambda s=servers, p=policy, sep=separator: _merged(merge, s, p, sep)[:2],
                          2.0)
        except NotImplementedError:  # part 1 not written: nothing to blame yet
            return None
        if not _equal(got, want):
            call = f"merge({_show_servers(servers)}, {policy!r}, {separator!r})"
            return _("your merge() from part 1 gives another result than mcpkit's for {call}, "
                     "a merge this namespace makes: the difference comes from merge(), not "
                     "from the Namespace; fix part 1 first (its checks show where)",
                     "tu merge() de la parte 1 da un resultado distinto del de mcpkit para {call}, "
                     "una fusión que hace este espacio de nombres: la diferencia viene de "
                     "merge(), no del Namespace; corrige primero la parte 1 (sus "
                     "comprobaciones muestran dónde)").format(call=call)
    return None


def _namespace_trial(cls: Any, ops: list[tuple]) -> list[Step]:
    steps: list[Step] = []
    ns: Any = None
    # the lists the namespace holds, as mcpkit's would: under "reject" a colliding update
    # may name any real collision of the lists it merges (shown as the first one met)
    config: list[str] = []
    policy, lists = "", {}
    for op in ops:
        label = _show_ops([op])
        if op[0] == "new":
            config, policy = list(op[1]), (op[2] if len(op) > 2 else "prefix-on-collision")
            try:
                ns = cls(list(op[1]), *op[2:])
            except NotImplementedError:
                raise
            except Exception as exc:
                return [Step(label, _error_view(exc))]
            continue
        if op[0] == "update":
            tools = [{"name": n, "description": f"{op[1]}: {n}"} for n in op[2]]
            after = {**lists, op[1]: tools}
            merged = {s: after[s] for s in config if s in after}
            got = _any_collision(_done(ns.update, op[1], tools), merged, policy)
            steps.append(Step(label, got))
            if not _collisions(merged)[0] or policy != "reject":
                lists = after
        elif op[0] == "remove":
            lists.pop(op[1], None)
            steps.append(Step(label, _done(ns.remove, op[1])))
        elif op[0] == "tools":
            steps.append(Step(label, _outcome(_names, ns)))
        else:
            steps.append(Step(label, _outcome(ns.route, op[1])))
    return steps


def _names(ns: Any) -> list[Any]:
    return [t.get("name") if isinstance(t, dict) else t for t in ns.tools()]


def _show_ops(ops: list[tuple]) -> str:
    parts = []
    for op in ops:
        if op[0] == "new":
            parts.append(f"ns = Namespace({', '.join(repr(a) for a in [list(op[1]), *op[2:]])})")
        elif op[0] == "update":
            parts.append(f"ns.update({op[1]!r}, {list(op[2])!r})")
        elif op[0] == "remove":
            parts.append(f"ns.remove({op[1]!r})")
        elif op[0] == "tools":
            parts.append("[t['name'] for t in ns.tools()]")
        else:
            parts.append(f"ns.route({op[1]!r})")
    return "; ".join(parts)


def _gen_namespace(rng: Gen) -> list[tuple]:
    servers = rng.sample(_SERVER_NAMES[:4], rng.randint(1, 3))
    separator = rng.choice(["__", "__", "__", "/"])
    ops: list[tuple] = [("new", servers, rng.choice(POLICIES),
                         *([separator] if separator != "__" else []))]
    known: set[str] = set()
    for _i in range(rng.randint(2, 8)):
        roll = rng.random()
        if roll < 0.45:
            names = rng.sample(_TOOL_NAMES[:6], rng.randint(0, 3))
            ops.append(("update", rng.choice(servers), names))
            known.update(names)
            known.update(f"{s}{separator}{n}" for s in servers for n in names)
        elif roll < 0.55:
            ops.append(("remove", rng.choice(servers)))
        elif roll < 0.7:
            ops.append(("tools",))
        else:
            ops.append(("route", rng.choice(sorted(known) or ["search"]) if rng.random() < 0.85
                        else rng.choice(["nope", "", "__search"])))
    return ops


def _shrink_ops(ops: list[tuple]) -> Iterator[list[tuple]]:
    for smaller in drop_each(ops[1:]):
        if smaller:
            yield [ops[0], *smaller]


# --------------------------------------------------------------------------- part 3


def check_backoff(make: Callable[..., Any]) -> None:
    """Part 3: delays that double up to a cap with jitter, and a notice after three."""

    def run(cls: Any, x: tuple) -> list[Any]:
        return [step.seen for step in _backoff_trial(cls, x)]

    def both(x: tuple) -> tuple[Callable[[], Any], Any, tuple]:
        return (lambda: run(make, x)), run(ReferenceBackoff, x), x

    def case(name: str, thunk: Callable[[], Any], expected: Any, x: tuple | None = None, *,
             hint: str, about: str = "delays") -> CaseResult:
        # the hint is read from what differs (numbers drawn, delays alone), else the case's
        return _case(name, thunk, expected, hint=_backoff_hint(x, expected, hint, about))

    calm = [0.5]  # uniform(-j, j) gives 0: no jitter at all
    results = [
        case(_("the delays double from base up to the cap",
               "las esperas se duplican desde base hasta el tope"),
             *both((calm, {}, [("delay", n) for n in range(1, 10)])),
             hint=_("base * factor ** (failures - 1), then at most cap: 0.5, 1, 2, 4, 8, 16, "
                    "30, 30...",
                    "base * factor ** (failures - 1), y como mucho cap: 0.5, 1, 2, 4, 8, 16, "
                    "30, 30...")),
        case(_("jitter: at most 20% either way, drawn with rng.uniform",
               "la variación aleatoria (jitter): como mucho un 20 % en cada sentido, con "
               "rng.uniform"),
             *both(([0.0, 0.999, 0.25], {}, [("delay", 3), ("delay", 3), ("delay", 3)])),
             hint=_("multiply by 1 + rng.uniform(-jitter, jitter): rng.random() == 0 gives "
                    "-20%, close to 1 gives +20%",
                    "multiplica por 1 + rng.uniform(-jitter, jitter): rng.random() == 0 da "
                    "-20 %, cerca de 1 da +20 %")),
        case(_("jitter at the cap: still random below it, never above",
               "la variación en el tope: sigue siendo aleatoria por debajo, nunca por encima"),
             *both(([0.0, 0.999], {}, [("delay", 9), ("delay", 9)])),
             hint=_("cap first, then jitter, then cap again: 30 s can become 24 s, never 36 s; "
                    "servers that failed together must not all come back at the same moment",
                    "primero el tope, luego la variación y otra vez el tope: 30 s puede "
                    "quedarse en 24 s, nunca en 36 s; los servidores que fallaron juntos no "
                    "deben volver todos en el mismo instante")),
        case(_("jitter=0: the exact delays, and nothing drawn from rng",
               "jitter=0: las esperas exactas, y nada sacado de rng"),
             *both(([0.9], {"jitter": 0.0}, [("delay", 1), ("delay", 4), ("failure",),
                                             ("failure",)])),
             hint=_("with jitter 0 there is nothing to randomise: call rng.uniform only when "
                    "jitter is not 0 (each draw moves the random source that other servers' "
                    "delays share)",
                    "con jitter 0 no hay nada que variar: llama a rng.uniform solo si "
                    "jitter no es 0 (cada número sacado hace avanzar la fuente aleatoria que "
                    "comparten las esperas de los demás servidores)")),
        case(_("a server failing for hours: failure 2000 still waits 30 s",
               "un servidor que falla durante horas: el fallo 2000 sigue esperando 30 s"),
             *both((calm, {}, [("delay", 1100), ("delay", 2000)])),
             hint=_("2 ** 1999 does not fit in a float (OverflowError): stop growing the "
                    "delay once it reaches the cap",
                    "2 ** 1999 no cabe en un float (OverflowError): deja de hacer crecer la "
                    "espera cuando llega al tope")),
        case(_("a slow factor (1.01) reaches the cap too, after enough failures",
               "un factor lento (1.01) también llega al tope, tras suficientes fallos"),
             *both((calm, {"factor": 1.01}, [("delay", 60), ("delay", 500), ("delay", 2000)])),
             hint=_("base * factor ** (failures - 1) for every failures, however large: "
                    "0.5 * 1.01 ** 499 is past the 30 s cap; catch the OverflowError instead "
                    "of bounding the exponent",
                    "base * factor ** (failures - 1) para cualquier failures, por grande que "
                    "sea: 0.5 * 1.01 ** 499 ya pasa del tope de 30 s; captura el OverflowError "
                    "en lugar de acotar el exponente")),
        case(_("failure(): the notice comes once, at the third failure in a row",
               "failure(): el aviso llega una vez, en el tercer fallo consecutivo"),
             *both((calm, {}, [("failure",)] * 7)),
             hint=_("notice is true when the count reaches notice_after, and only then "
                    "(failures == notice_after: not again at 6, 9...): a user told on every "
                    "later failure stops reading",
                    "notice es verdadero cuando la cuenta llega a notice_after, y solo "
                    "entonces (failures == notice_after: no otra vez en 6, 9...): un usuario "
                    "avisado en cada fallo posterior deja de leer"), about="notice"),
        case(_("success() starts a new streak", "success() empieza una racha nueva"),
             *both((calm, {}, [("failure",), ("failure",), ("success",), ("failure",),
                               ("failure",), ("failure",)])),
             hint=_("success() sets the count back to 0: the next failure waits base again, "
                    "and a third failure in a row notices again",
                    "success() devuelve la cuenta a 0: el siguiente fallo vuelve a esperar "
                    "base, y un tercer fallo consecutivo vuelve a avisar"), about="notice"),
        case(_("the parameters are used (base, factor, cap, jitter, notice_after)",
               "se usan los parámetros (base, factor, cap, jitter, notice_after)"),
             *both(([0.1, 0.9], {"base": 1.0, "factor": 3.0, "cap": 10.0, "jitter": 0.5,
                                 "notice_after": 2}, [("failure",)] * 4)),
             hint=_("nothing hard-coded: Backoff(rng, base=1, factor=3, cap=10, jitter=0.5, "
                    "notice_after=2)",
                    "nada fijo en el código: Backoff(rng, base=1, factor=3, cap=10, "
                    "jitter=0.5, notice_after=2)")),
        case(_("two policies side by side", "dos políticas a la par"),
             lambda: _two_backoffs(make), _two_backoffs(ReferenceBackoff),
             hint=_("keep the count in self, not in the class body",
                    "guarda la cuenta en self, no en el cuerpo de la clase"), about="notice"),
        differential(
            _("behaves like mcpkit's Backoff on generated failures and successes",
              "se comporta como el Backoff de mcpkit con fallos y éxitos generados"),
            key="lab06/backoff", generate=_gen_backoff, trial=_backoff_trial,
            reference=ReferenceBackoff, learner=make, show=_show_backoff, cases=150,
            shrink=_shrink_backoff, hint=_backoff_step_hint),
    ]
    run_checks(results)


_OWN_RNG = ("no number was drawn from the rng given to Backoff(rng, ...): draw the jitter "
             "with self.rng.uniform(-jitter, jitter), not with the random module (the host "
             "decides the random source; the checks give a scripted one)",
             "no se sacó ningún número del rng que recibe Backoff(rng, ...): saca la variación "
             "con self.rng.uniform(-jitter, jitter), no con el módulo random (el host decide "
             "la fuente aleatoria; las comprobaciones dan una guionizada)")
_ONLY_DELAYS = ("the counts and notices are right; only the delays differ: base * factor ** "
                "(failures - 1), at most cap, times 1 + rng.uniform(-jitter, jitter), then at "
                "most cap again (the cases on delays above say which step)",
                "las cuentas y los avisos están bien; solo difieren las esperas: base * "
                "factor ** (failures - 1), como mucho cap, por 1 + rng.uniform(-jitter, "
                "jitter), y otra vez como mucho cap (los casos de las esperas de arriba dicen "
                "qué paso)")


def _backoff_step_hint(x: Any, expected: Step | None, got: Step | None) -> str | None:
    """The generated cases' hint: only when no number at all came from the given rng."""
    if expected is not None and got is not None and expected.label in (
            "numbers drawn from rng", "números sacados de rng") and got.seen == 0:
        return _(*_OWN_RNG)
    return None


def _no_delays(steps: Any) -> Any:
    """A part 3 result with every delay blanked: what is left are the counts and notices."""
    if not isinstance(steps, list):
        return steps
    out: list[Any] = []
    for step in steps:
        if isinstance(step, float):
            out.append("delay")
        elif isinstance(step, list) and len(step) == 2 and isinstance(step[0], float):
            out.append(["delay", step[1]])
        elif isinstance(step, list) and step and isinstance(step[0], list) and len(step[0]) == 2:
            out.append([["delay", step[0][1]], *step[1:]])
        else:
            out.append(step)
    return out


def _backoff_hint(x: tuple | None, expected: Any, own: str, about: str
                  ) -> Callable[[Any], str | None]:
    """A named part 3 case's hint: numbers drawn from another source than the rng; delays
    alone wrong in a case about counts and notices (a delay fault, named if recognised);
    otherwise the case's own."""

    def hint(got: Any) -> str | None:
        if not isinstance(got, list) or not isinstance(expected, list):
            return own
        if x is not None and got and expected[-1] and got[-1] == 0:
            return _(*_OWN_RNG)
        steps, want = (got[:-1], expected[:-1]) if x is not None else (got, expected)
        if len(steps) == len(want) and _equal(_no_delays(steps), _no_delays(want)):
            return (_delay_fault(x, want, steps) if x is not None else None) or (
                own if about == "delays" else _(*_ONLY_DELAYS))
        return own

    return hint


def _delay_fault(x: tuple, want: list[Any], got: list[Any]) -> str | None:
    """The usual delay mistake that gives exactly the delays ``got`` shows, if one does."""
    values, params, ops = x
    base, factor = params.get("base", 0.5), params.get("factor", 2.0)
    cap, jitter = params.get("cap", 30.0), params.get("jitter", 0.2)

    def grown(n: int) -> float:
        try:
            return base * factor ** (n - 1)
        except OverflowError:
            return float("inf")

    faults = {
        "exponent": _("the first failure waits base: base * factor ** (failures - 1), not "
                      "** failures",
                      "el primer fallo espera base: base * factor ** (failures - 1), no "
                      "** failures"),
        "no cap after": _("after the jitter, cap again: a delay near the cap times 1.2 is "
                          "above it (min(delay, cap) at the end)",
                          "tras la variación, aplica otra vez el tope: una espera cerca del "
                          "tope por 1.2 lo supera (min(delay, cap) al final)"),
        "added": _("the jitter multiplies: delay * (1 + rng.uniform(-jitter, jitter)), not "
                   "delay + rng.uniform(...)",
                   "la variación multiplica: delay * (1 + rng.uniform(-jitter, jitter)), no "
                   "delay + rng.uniform(...)"),
        "no cap before": _("cap first, then jitter, then cap again: at the cap the delay "
                           "still varies below it",
                           "primero el tope, luego la variación y otra vez el tope: en el "
                           "tope la espera sigue variando por debajo"),
    }
    matches: set[str] | None = None
    drawn, failures = 0, 0
    for op, have, should in zip(ops, got, want, strict=False):
        if op[0] == "success":
            failures = 0
            continue
        if op[0] == "failure":
            failures += 1
        n = op[1] if op[0] == "delay" else failures
        mine = have if op[0] == "delay" else (have[0][0] if isinstance(have, list) else None)
        u = 0.0
        if jitter:
            u = -jitter + 2 * jitter * values[drawn % len(values)]
            drawn += 1
        if not _equal(have, should):
            capped = min(cap, grown(n))
            candidates = {
                "exponent": min(min(cap, grown(n + 1)) * (1 + u), cap),
                "no cap after": capped * (1 + u),
                "added": max(0.0, min(capped + u, cap)),
                "no cap before": min(grown(n) * (1 + u), cap),
            }
            fits = {k for k, v in candidates.items()
                    if isinstance(mine, float | int) and round(v, 9) == mine}
            matches = fits if matches is None else matches & fits
    for name in faults:
        if matches and name in matches:
            return faults[name]
    return None


def _rounded(value: Any) -> Any:
    if isinstance(value, float):
        return round(value, 9)
    if isinstance(value, list):
        return [_rounded(v) for v in value]
    return value


def _backoff_trial(cls: Any, x: tuple) -> list[Step]:
    values, params, ops = x
    rng = ScriptedRandom(values)
    try:
        policy = cls(rng, **params)
    except NotImplementedError:
        raise
    except Exception as exc:
        return [Step("Backoff(...)", _error_view(exc))]
    steps = []
    for op in ops:
        if op[0] == "delay":
            got = _outcome(policy.delay, op[1])
            steps.append(Step(f"delay({op[1]})", _rounded(got)))
            continue
        got = _done(policy.success) if op[0] == "success" else _outcome(policy.failure)
        failures = _outcome(getattr, policy, "failures")
        steps.append(Step(f"{op[0]}()", [_rounded(got), failures]))
    steps.append(Step(_("numbers drawn from rng", "números sacados de rng"), rng.drawn))
    return steps


def _two_backoffs(cls: Any) -> Any:
    a, b = cls(ScriptedRandom([0.5])), cls(ScriptedRandom([0.5]))
    return _rounded(seen([a.failure(), a.failure(), b.failure(), a.failures, b.failures]))


def _show_backoff(x: tuple) -> str:
    values, params, ops = x
    args = "".join(f", {k}={v!r}" for k, v in params.items())
    calls = "; ".join(f"delay({op[1]})" if op[0] == "delay" else f"{op[0]}()" for op in ops)
    return f"b = Backoff(rng{args}) (rng.random() -> {values}); {calls}"


def _gen_backoff(rng: Gen) -> tuple:
    values = [rng.choice([0.0, 0.5, 0.999, round(rng.random(), 3)])
              for _i in range(rng.randint(1, 4))]
    params: dict[str, Any] = {}
    if rng.random() < 0.4:
        params["base"] = rng.choice([0.1, 0.25, 1.0, 2.0])
    if rng.random() < 0.3:
        params["factor"] = rng.choice([1.5, 3.0, 1.0])
    if rng.random() < 0.3:
        params["cap"] = rng.choice([5.0, 60.0, 1.0])
    if rng.random() < 0.3:
        params["jitter"] = rng.choice([0.0, 0.1, 0.5])
    if rng.random() < 0.3:
        params["notice_after"] = rng.choice([1, 2, 5])
    ops: list[tuple] = []
    for _i in range(rng.randint(1, 10)):
        roll = rng.random()
        if roll < 0.55:
            ops.append(("failure",))
        elif roll < 0.7:
            ops.append(("success",))
        else:
            ops.append(("delay", rng.choice([1, 2, 3, 5, 8, 12, rng.randint(1, 40), 1500])))
    return values, params, ops


def _shrink_backoff(x: tuple) -> Iterator[tuple]:
    values, params, ops = x
    for smaller in drop_each(ops):
        if smaller:
            yield values, params, smaller
    for key in params:
        yield values, {k: v for k, v in params.items() if k != key}, ops


# --------------------------------------------------------------------------- part 4


class RecordingBackoff:
    """The checks' restart policy for part 4: mcpkit's, recording what the supervisor asks."""

    def __init__(self) -> None:
        self._policy = ReferenceBackoff(ScriptedRandom([0.1, 0.7, 0.4, 0.9, 0.0]))
        self.calls: list[str] = []
        self.delays: list[float] = []
        self.notice_after = self._policy.notice_after

    @property
    def failures(self) -> int:
        return self._policy.failures

    def delay(self, failures: int) -> float:
        return self._policy.delay(failures)

    def failure(self) -> tuple[float, bool]:
        delay, notice = self._policy.failure()
        self.calls.append("failure")
        self.delays.append(delay)
        return delay, notice

    def success(self) -> None:
        self.calls.append("success")
        self._policy.success()


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Rig:
    """One supervisor under test: a log of the servers it started, the injected sleep,
    clock and notify, and what was left once it closed."""

    def __init__(self, make: Callable[..., Any], command: str = "good",
                 block_after: int | None = None, own_sleep: bool = False) -> None:
        self.folder = tempfile.TemporaryDirectory()
        self.log = os.path.join(self.folder.name, "starts.log")
        self.backoff = RecordingBackoff()
        self.clock = FakeClock()
        self.sleeps: list[float] = []
        self.notices: list[tuple[int, bool]] = []
        self.pids_asleep: list[Any] = []  # the supervisor's pid at each sleep (a dead server's)
        self.released = threading.Event()
        self.block_after = block_after
        self.threads = set(threading.enumerate())
        self.kids = child_processes()
        self.name = "notes"
        self.command = {"good": server_command(self.log), "failing": failing_command(self.log),
                        "refusing": server_command(self.log, refuse=True),
                        "missing": [os.path.join(self.folder.name, "no-such-server")]}[command]
        self.supervisor: Any = None
        if own_sleep:  # the supervisor's own sleep, and a backoff of 30 s delays
            self.backoff._policy = ReferenceBackoff(ScriptedRandom([0.5]), base=30.0)
            options: dict[str, Any] = {}
        else:
            options = {"sleep": self.sleep}
        self.spawned: list[Any] = []  # every process the notebook's spawn() gave it
        self._unwrap = record_returns(make, "spawn", self.spawned)
        try:
            made = bounded(lambda: make(self.name, list(self.command), self.backoff,
                                        notify=self.notify, clock=self.clock,
                                        stable_after=10.0, **options), CLOSE_GRACE, plain=False)
            if isinstance(made, Seen):
                raise _SetupFailed(made)
        except BaseException:  # it raised, or is not written yet: what it started goes now
            self.cleanup()
            raise
        self.supervisor = made

    def sleep(self, seconds: float) -> None:
        self.pids_asleep.append(self.pid())
        self.sleeps.append(seconds)
        if self.block_after is not None and len(self.sleeps) >= self.block_after:
            self.released.wait(RESTART_WAIT)
        else:
            time.sleep(0.002)

    def notify(self, message: Any) -> None:
        count = self.backoff.failures
        self.notices.append((count, isinstance(message, str) and self.name in message
                             and str(count) in message))

    def started(self) -> list[int]:
        try:
            with open(self.log, encoding="utf-8") as f:
                return [int(line) for line in f if line.strip()]
        except (OSError, ValueError):
            return []

    def pid(self) -> Any:
        return seen(getattr(self.supervisor, "pid", None))

    def wait_for_new_pid(self, old: Any) -> Any:
        """The supervisor's pid once it is a server that really started and is not ``old``."""
        deadline = time.monotonic() + RESTART_WAIT
        while time.monotonic() < deadline:
            pid = self.pid()
            if isinstance(pid, int) and pid != old and pid in self.started():
                return pid
            time.sleep(0.005)
        return None

    def kill(self, pid: Any) -> bool:
        """SIGKILL a server this rig saw start (never any other process)."""
        if not isinstance(pid, int) or pid not in self.started() or pid not in child_processes():
            return False
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
        return True

    def wait_for_failures(self, count: int) -> bool:
        deadline = time.monotonic() + RESTART_WAIT
        while time.monotonic() < deadline:
            if len(self.backoff.calls) >= count and len(self.sleeps) >= count:
                return True
            time.sleep(0.005)
        return False

    def close(self) -> dict[str, Any]:
        """Close the supervisor: what close() did, the threads alive when it returned, the
        threads and children left once it had. A thread blocked in the injected sleep is
        released only a moment after close() began: a close() that does not join returns
        while it still sleeps."""
        threading.Timer(0.3, self.released.set).start()
        starts, failures = len(self.started()), self.backoff.calls.count("failure")
        closed = bounded(self.supervisor.close, CLOSE_GRACE + 0.3)
        self.released.set()
        alive = len({t for t in threading.enumerate() if t not in self.threads
                     and t.is_alive() and not isinstance(t, threading.Timer)})
        deadline = time.monotonic() + GONE_GRACE
        threads: set[threading.Thread] = set()
        kids: set[int] = set()
        while time.monotonic() < deadline:
            threads = {t for t in threading.enumerate() if t not in self.threads
                       and t.is_alive()}
            kids = child_processes() - self.kids
            threads = {t for t in threads if not isinstance(t, threading.Timer)}
            if not threads and not kids:
                break
            time.sleep(0.01)
        # Its own processes only (this rig holds them, so no collector closes their pipes
        # first, and no other case's garbage counts): stop(process) closes both.
        unclosed = sum(not pipe.closed for pipe in self._pipes())
        return {_("close() returned", "close() retornó"): closed,
                _("threads alive when close() returned", "hilos vivos al retornar close()"):
                    alive,
                _("threads left", "hilos que quedan"): len(threads),
                _("child processes left", "procesos hijo que quedan"): len(kids),
                _("failures counted once close() began",
                  "fallos contados después de llamar a close()"):
                    self.backoff.calls.count("failure") - failures,
                _("servers started once close() began",
                  "servidores arrancados después de llamar a close()"):
                    len(self.started()) - starts,
                _("pipes never closed (left to the garbage collector)",
                  "tuberías que nunca se cerraron (se dejaron en manos del recolector de basura)"):
                    unclosed}

    def _pipes(self) -> list[Any]:
        """The stdin and stdout of every process the supervisor's spawn() started."""
        return [pipe for process in self.spawned for pipe in (process.stdin, process.stdout)
                if pipe is not None]

    def cleanup(self) -> None:
        self.released.set()
        self._unwrap()
        for pipe in self._pipes():  # what the supervisor left open, closed by the rig
            with contextlib.suppress(OSError, ValueError):
                pipe.close()
        for pid in child_processes() - self.kids:
            if pid in self.started():
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
                with contextlib.suppress(OSError):
                    os.waitpid(pid, 0)
        self.folder.cleanup()


class _SetupFailed(Exception):
    def __init__(self, what: Any) -> None:
        super().__init__(repr(what))
        self.what = what


def rigged(make: Callable[..., Any], body: Callable[[Rig], dict[str, Any]],
           command: str = "good", block_after: int | None = None,
           own_sleep: bool = False) -> Callable[[], Any]:
    """A thunk for case(): a rig, ``body(rig)``, then close() and what it left behind."""

    def thunk() -> Any:
        rig = None
        try:
            try:
                rig = Rig(make, command, block_after, own_sleep)
            except _SetupFailed as exc:
                return {_("Supervisor(...) raised",
                           "Supervisor(...) lanzó una excepción"): exc.what}
            value = body(rig)
            return {**value, **rig.close()}
        finally:
            if rig is not None:
                rig.cleanup()

    return thunk


def _start(rig: Rig) -> Any:
    return bounded(rig.supervisor.start, RESTART_WAIT)


def _L(en: str, es: str) -> str:  # noqa: N802  (a label in the report)
    return _(en, es)


def _kill_and_return(rig: Rig, kills: int, tick_before: set[int] = frozenset(),
                     tick: float = 100.0) -> dict[str, Any]:
    started = _start(rig)
    first = rig.wait_for_new_pid(None)
    restarted = []
    pid = first
    for n in range(kills):
        if n in tick_before:
            rig.clock.now += tick  # the server stayed up that long (stable_after is 10)
        killed = rig.kill(pid)
        new = rig.wait_for_new_pid(pid) if killed else None
        restarted.append(killed and new is not None)
        pid = new
    return {_L("start() returned", "start() devolvió"): seen(started),
            _L("a server came up", "un servidor arrancó"): first is not None,
            _L("restarted after each kill", "reiniciado tras cada muerte"): restarted,
            _L("backoff calls", "llamadas al retroceso"): list(rig.backoff.calls),
            _L("slept the backoff's delays", "durmió las esperas del retroceso"):
                rig.sleeps == rig.backoff.delays,
            _L("self.pid while waiting to restart", "self.pid mientras espera el reinicio"):
                list(rig.pids_asleep),
            _L("notices (failures, message names server and count)",
               "avisos (fallos, el mensaje nombra servidor y número)"): list(rig.notices)}


def _labels(values: list[Any], *names: tuple[str, str]) -> dict[str, Any]:
    return {_L(en, es): v for (en, es), v in zip(names, values, strict=True)}


_OK_END = (("close() returned", "close() retornó"),
           ("threads alive when close() returned", "hilos vivos al retornar close()"),
           ("threads left", "hilos que quedan"),
           ("child processes left", "procesos hijo que quedan"),
           ("failures counted once close() began",
            "fallos contados después de llamar a close()"),
           ("servers started once close() began",
            "servidores arrancados después de llamar a close()"),
           ("pipes never closed (left to the garbage collector)",
            "tuberías que nunca se cerraron (se dejaron en manos del recolector de basura)"))
_KILLS = (("start() returned", "start() devolvió"), ("a server came up", "un servidor arrancó"),
          ("restarted after each kill", "reiniciado tras cada muerte"),
          ("backoff calls", "llamadas al retroceso"),
          ("slept the backoff's delays", "durmió las esperas del retroceso"),
          ("self.pid while waiting to restart", "self.pid mientras espera el reinicio"),
          ("notices (failures, message names server and count)",
           "avisos (fallos, el mensaje nombra servidor y número)"))
_NEVER = (("start() returned", "start() devolvió"),
          ("each start was tried", "se intentó cada arranque"),
          ("backoff calls", "llamadas al retroceso"),
          ("slept the backoff's delays", "durmió las esperas del retroceso"),
          ("notices (failures, message names server and count)",
           "avisos (fallos, el mensaje nombra servidor y número)"))


_RESTARTED_IN_CLOSE = (
        "the watching thread took close() stopping the server for a death: close() sets the "
        "closed flag first, before it stops the server, and the thread checks that flag when "
        "process.wait() returns and after each sleep, before it counts a failure or starts "
        "the command",
        "el hilo que vigila creyó que el servidor había muerto cuando close() lo detuvo: "
        "close() activa primero la marca de cierre, antes de detener el servidor, y el hilo "
        "la comprueba cuando retorna process.wait() y tras cada espera, antes de contar un "
        "fallo o de arrancar el comando")
_END_HINTS = {
    "failures counted once close() began": _RESTARTED_IN_CLOSE,
    "servers started once close() began": _RESTARTED_IN_CLOSE,
    "child processes left": (
        "close() left a server process behind: stop(process) the server that is up (it "
        "closes its input, waits and reaps it); until it ends, the watching thread stays "
        "blocked in process.wait() and close() cannot join it",
        "close() dejó atrás un proceso del servidor: detén con stop(process) el servidor que "
        "está en marcha (cierra su entrada, espera y lo recoge); hasta que termine, el hilo "
        "que vigila sigue bloqueado en process.wait() y close() no puede esperarlo (join)"),
    "pipes never closed (left to the garbage collector)": (
        "when process.wait() returns, the server is dead but its pipes are still open in "
        "your process: stop(process) closes them (a kill or a forgotten Popen leaves them to "
        "the garbage collector: a file descriptor lost at every restart)",
        "cuando retorna process.wait(), el servidor está muerto pero sus tuberías siguen "
        "abiertas en tu proceso: stop(process) las cierra (matarlo u olvidar el Popen las "
        "deja en manos del recolector de basura: un descriptor de archivo perdido en cada "
        "reinicio)"),
    "threads alive when close() returned": (
        "close() returned while the watching thread was still running: once the flag is set "
        "and the server stopped, join the thread (self.thread.join()) before returning",
        "close() retornó con el hilo que vigila todavía en marcha: una vez activada la marca "
        "y detenido el servidor, espera al hilo (self.thread.join()) antes de retornar"),
    "threads left": (
        "the watching thread never ended: it must check the closed flag after each "
        "process.wait() and each sleep, and close() must wake it (stop the server, set the "
        "Event) and join it",
        "el hilo que vigila no terminó nunca: debe comprobar la marca de cierre tras cada "
        "process.wait() y cada espera, y close() debe despertarlo (detener el servidor, "
        "activar el Event) y esperarlo (join)"),
}

#: When only what close() left behind differs, the cause the evidence shows, most telling
#: first (a server restarted during close() is also a thread alive and a process left).
_END_ORDER = ("failures counted once close() began", "servers started once close() began",
              "child processes left",
              "pipes never closed (left to the garbage collector)", "threads left",
              "threads alive when close() returned")


def _rig_hint(expected: dict[str, Any], own: str, own_end: tuple[str, ...] = ()
              ) -> Callable[[Any], str | None]:
    """The hint of a supervisor case, by what differs: the case's own hint when the case's
    own fields differ (or the end fields it is about, ``own_end``); when only what close()
    left behind differs, a hint about close() or the watching thread; when the supervisor
    calls backoff.success() more often than it should, a hint about stable_after."""
    end = {_L(en, es): en for en, es in _OK_END}

    def hint(got: Any) -> str | None:
        if not isinstance(got, dict):
            return own
        differs = [k for k in expected if not _equal(got.get(k, _ABSENT), expected[k])]
        calls = _L("backoff calls", "llamadas al retroceso")
        if calls in differs and isinstance(got[calls], list) and (
                got[calls].count("success") > expected[calls].count("success")):
            return _("call backoff.success() only when the server that died had been up "
                     "stable_after seconds or more (self.clock() at its death minus "
                     "self.clock() when it started); a server that dies at once is one "
                     "failure, with no success() before it",
                     "llama a backoff.success() solo si el servidor que murió llevaba en "
                     "marcha stable_after segundos o más (self.clock() al morir menos "
                     "self.clock() al arrancar); un servidor que muere en el acto es un fallo, "
                     "sin ningún success() antes")
        if not differs or any(k not in end or end[k] in own_end for k in differs):
            return own
        for name in _END_ORDER:
            key = next(k for k, en in end.items() if en == name)
            if key in differs:
                return _(*_END_HINTS[name])
        return own

    return hint


_ABSENT = object()


def _rig_case(name: str, thunk: Callable[[], Any], expected: dict[str, Any], hint: str,
              own_end: tuple[str, ...] = ()) -> CaseResult:
    return case(name, thunk, expected, hint=_rig_hint(expected, hint, own_end))


def check_supervisor(make: Callable[..., Any]) -> None:
    """Part 4: a supervisor that brings a killed server back, with the backoff's delays."""
    # close() returned None; no thread, no child process left, no failure counted and no
    # server started once close() began, no pipe left for the garbage collector to close
    ok_end = [None, 0, 0, 0, 0, 0, 0]

    def kills(*values: Any) -> dict[str, Any]:
        return _labels([*values, *ok_end], *_KILLS, *_OK_END)

    def never(*values: Any, missing: bool = False) -> dict[str, Any]:
        names = [n for n in _NEVER if not (missing and n[0] == "each start was tried")]
        return _labels([*values, *ok_end], *names, *_OK_END)

    results = [
        _rig_case(_("a killed server is started again, after the backoff's delay",
               "un servidor al que matan se arranca de nuevo, tras la espera del retroceso"),
             rigged(make, lambda rig: _kill_and_return(rig, 1)),
             kills(True, True, [True], ["failure"], True, [None], []),
             hint=_("a thread waits for the process to exit (process.wait()), counts the "
                    "failure with backoff.failure(), sleeps the delay it returned with "
                    "self.sleep, and starts the command again; while it waits, self.pid is "
                    "None (no server is up)",
                    "un hilo espera a que termine el proceso (process.wait()), cuenta el "
                    "fallo con backoff.failure(), duerme la espera que devolvió con "
                    "self.sleep y vuelve a arrancar el comando; mientras espera, self.pid es "
                    "None (no hay servidor en marcha)")),
        _rig_case(_("killed three times in a row: growing delays and one notice, at the third",
               "lo matan tres veces consecutivas: esperas que crecen y un aviso, en la tercera"),
             rigged(make, lambda rig: _kill_and_return(rig, 3)),
             kills(True, True, [True, True, True], ["failure"] * 3, True, [None] * 3,
                   [(3, True)]),
             hint=_("call notify(message) when failure() says so; the message names the "
                    "server and the number of failures",
                    "llama a notify(message) cuando failure() lo diga; el mensaje nombra el "
                    "servidor y el número de fallos")),
        _rig_case(_("a server that stayed up stable_after seconds starts a new streak",
               "un servidor que aguantó en marcha stable_after segundos empieza una "
               "racha nueva"),
             rigged(make, lambda rig: _kill_and_return(rig, 3, {2})),
             kills(True, True, [True, True, True], ["failure", "failure", "success", "failure"],
                   True, [None] * 3, []),
             hint=_("when the server dies, compare self.clock() with the time it started: "
                    "after stable_after seconds or more, call backoff.success() before "
                    "counting the failure; a successful start alone proves nothing (it may "
                    "crash again at once)",
                    "cuando el servidor muere, compara self.clock() con la hora a la que "
                    "arrancó: si pasaron stable_after segundos o más, llama a "
                    "backoff.success() antes de contar el fallo; un arranque correcto por sí "
                    "solo no prueba nada (puede volver a caerse en el acto)")),
        _rig_case(_("stable, then killed at once, again and again: the streak counts from the "
               "last restart", "estable y luego lo matan en el acto una y otra vez: la racha "
               "se cuenta desde el último reinicio"),
             rigged(make, lambda rig: _kill_and_return(rig, 3, {0})),
             kills(True, True, [True, True, True], ["success", "failure", "failure", "failure"],
                   True, [None] * 3, [(3, True)]),
             hint=_("compare self.clock() with the time *this* server started (at each "
                    "restart), not with the time of start()",
                    "compara self.clock() con la hora a la que arrancó *este* servidor (en "
                    "cada reinicio), no con la hora de start()")),
        _rig_case(_("failures, a stable run, then failures again: the notice names the new "
               "streak's count",
               "fallos, una racha estable y otra vez fallos: el aviso da la cuenta de la "
               "racha nueva"),
             rigged(make, lambda rig: _kill_and_return(rig, 4, {1})),
             kills(True, True, [True] * 4,
                   ["failure", "success", "failure", "failure", "failure"], True,
                   [None] * 4, [(3, True)]),
             hint=_("put backoff.failures in the message: it is the streak, which success() "
                    "set back to 0; a count of your own goes on from the failures before",
                    "pon backoff.failures en el mensaje: es la racha, que success() devolvió a "
                    "0; una cuenta propia sigue sumando los fallos de antes")),
        _rig_case(_("close() while a killed server waits to restart: nothing starts again",
               "close() mientras un servidor al que mataron espera su reinicio: no vuelve a "
               "arrancar nada"),
             rigged(make, _killed_then_closed, block_after=1),
             _labels([True, True, True, *ok_end], *_KILLED_CLOSED, *_OK_END),
             hint=_("close() may come while the thread sleeps: when it wakes, check that "
                    "close() was not called before starting the command again",
                    "close() puede llegar mientras el hilo duerme: cuando despierte, y antes "
                    "de volver a arrancar el comando, comprueba que no se llamó a close()"),
             own_end=("servers started once close() began", "child processes left")),
        _rig_case(_("up exactly stable_after seconds is stable",
               "un servidor en marcha exactamente stable_after segundos cuenta como "
               "estable"),
             rigged(make, lambda rig: _kill_and_return(rig, 2, {1}, tick=10.0)),
             kills(True, True, [True, True], ["failure", "success", "failure"], True,
                   [None] * 2, []),
             hint=_("stable_after seconds *or more*: compare with >=, not >",
                    "stable_after segundos *o más*: compara con >=, no con >")),
        _rig_case(_("a server that cannot start: a delay after each failed start, one notice",
               "un servidor que no puede arrancar: una espera tras cada arranque fallido, y "
               "un aviso"),
             rigged(make, _never_starts, "failing", block_after=5),
             never(False, True, ["failure"] * 5, True, [(3, True)]),
             hint=_("start() returns False when the first attempt fails; the thread keeps "
                    "trying, one backoff.failure() and one sleep per failed start; close() "
                    "joins that thread, even while it sleeps",
                    "start() devuelve False cuando falla el primer intento; el hilo sigue "
                    "intentándolo, un backoff.failure() y una espera por cada arranque "
                    "fallido; close() espera (join) a ese hilo, aunque esté durmiendo")),
        _rig_case(_("a server that answers ping with an error is stopped",
               "un servidor que responde a ping con un error se detiene"),
             rigged(make, _never_starts, "refusing", block_after=3),
             never(False, True, ["failure"] * 3, True, [(3, True)]),
             hint=_("a process that started but does not answer is a failed start: stop() it "
                    "(or it runs on, a process nobody watches)",
                    "un proceso que arrancó pero no responde es un arranque fallido: "
                    "detenlo con stop() (o sigue en marcha, un proceso que nadie vigila)"),
             own_end=("child processes left",
                      "pipes never closed (left to the garbage collector)")),
        _rig_case(_("a program that does not exist is a failed start, not a crash",
               "un programa que no existe es un arranque fallido, no una caída"),
             rigged(make, _missing, "missing", block_after=3),
             never(False, ["failure"] * 3, True, [(3, True)], missing=True),
             hint=_("spawn() raises OSError (FileNotFoundError) for a missing program: count "
                    "it as a failed start, so the thread goes on",
                    "spawn() lanza OSError (FileNotFoundError) si falta el programa: cuéntalo "
                    "como un arranque fallido, para que el hilo siga")),
        _rig_case(_("without a sleep given, close() cuts a 30 s wait short",
               "si no se pasa un sleep, close() corta una espera de 30 s"),
             # a missing program: a thread left sleeping starts no process when it wakes
             rigged(make, _waits_long, "missing", own_sleep=True),
             _labels([False, True, *ok_end], ("start() returned", "start() devolvió"),
                     ("backoff calls", "llamadas al retroceso"), *_OK_END),
             hint=_("the default sleep must be one close() can interrupt: wait on a "
                    "threading.Event that close() sets (time.sleep cannot be cut short)",
                    "el sleep por defecto debe ser uno que close() pueda interrumpir: espera "
                    "en un threading.Event que close() activa (time.sleep no se puede cortar)"),
             own_end=("close() returned", "threads alive when close() returned",
                      "threads left")),
    ]
    run_checks(results)


_KILLED_CLOSED = (("start() returned", "start() devolvió"),
                  ("a server came up", "un servidor arrancó"),
                  ("killed, and waiting to restart", "muerto y esperando el reinicio"))


def _killed_then_closed(rig: Rig) -> dict[str, Any]:
    """Kill the server, and leave the supervisor in its first backoff sleep: the rig's
    close() releases that sleep while close() runs, with a command that would start."""
    started = _start(rig)
    first = rig.wait_for_new_pid(None)
    killed = rig.kill(first)
    waiting = killed and rig.wait_for_failures(1)
    return _labels([seen(started), first is not None, waiting], *_KILLED_CLOSED)


def _never_starts(rig: Rig) -> dict[str, Any]:
    started = _start(rig)
    rig.wait_for_failures(rig.block_after or 1)
    n = rig.block_after or 1
    tried = len(rig.started()) >= n
    return _labels([seen(started), tried, list(rig.backoff.calls[:n]),
                    rig.sleeps[:n] == rig.backoff.delays[:n], list(rig.notices)], *_NEVER)


def _missing(rig: Rig) -> dict[str, Any]:
    values = _never_starts(rig)
    values.pop(_L("each start was tried", "se intentó cada arranque"))
    return values


def _waits_long(rig: Rig) -> dict[str, Any]:
    started = _start(rig)
    deadline = time.monotonic() + RESTART_WAIT
    while not rig.backoff.calls and time.monotonic() < deadline:
        time.sleep(0.005)
    time.sleep(0.05)  # now in its 30 s wait
    return {_L("start() returned", "start() devolvió"): seen(started),
            _L("backoff calls", "llamadas al retroceso"): bool(rig.backoff.calls)}
