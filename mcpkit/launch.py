"""Launching a server named on a command line: load it, then serve it over HTTP.

The top layer of the server side, beside :mod:`mcpkit.cli` (which parses the arguments):
it imports everything below it and nothing imports it, except uvicorn worker processes,
which build their app with :func:`app_from_env`.

A *target* names a :class:`~mcpkit.server.Server`: ``package.module:attribute``, or
``path/to/file.py[:attribute]``; without an attribute, the module's ``server``, or its one
Server object.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import logging
import os
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .framing import DEFAULT_MAX_MESSAGE_SIZE
from .server import Server

if TYPE_CHECKING:
    from .transports.http import McpHttpApp
    from .transports.http_auth import ResourceServer

log = logging.getLogger("mcpkit.launch")

_ENV_TARGET = "MCPKIT_HTTP_TARGET"
_ENV_OPTIONS = "MCPKIT_HTTP_OPTIONS"


class TargetError(Exception):
    """A target that does not name a loadable Server, with the reason."""


def load_target(target: str) -> Any:
    """Load ``module:attribute`` or ``path/to/file.py[:attribute]`` (attribute: ``server``)."""
    spec, _, attribute = target.partition(":")
    if spec.endswith(".py") or os.sep in spec:
        path = Path(spec)
        if not path.is_file():
            raise TargetError(f"no such file: {path}")
        module_spec = importlib.util.spec_from_file_location(path.stem, path)
        if module_spec is None or module_spec.loader is None:
            raise TargetError(f"cannot load {path} as Python")
        module = importlib.util.module_from_spec(module_spec)
        sys.path.insert(0, str(path.resolve().parent))
        module_spec.loader.exec_module(module)
    else:
        try:
            module = importlib.import_module(spec)
        except ImportError as exc:
            raise TargetError(f"cannot import {spec!r}: {exc}") from exc
    if attribute:
        try:
            return getattr(module, attribute)
        except AttributeError:
            raise TargetError(f"{spec} has no attribute {attribute!r}") from None
    if isinstance(getattr(module, "server", None), Server):
        return module.server
    found = [v for v in vars(module).values() if isinstance(v, Server)]
    if len(found) == 1:
        return found[0]
    raise TargetError(f"{spec}: name the server object, e.g. {spec}:server "
                      f"({len(found)} Server objects found)")


def run_http(
    server: Server | None,
    host: str = "127.0.0.1",
    port: int = 8000,
    *,
    target: str | None = None,
    workers: int = 1,
    token: str | None = None,
    allowed_hosts: Iterable[str] | None = None,
    allowed_origins: Iterable[str] | None = None,
    max_body_size: int = DEFAULT_MAX_MESSAGE_SIZE,
    log_level: str = "info",
    auth: ResourceServer | Mapping[str, Any] | None = None,
) -> None:
    """Serve over HTTP until interrupted (``mcpkit serve TARGET --http``).

    ``workers > 1`` starts that many uvicorn processes on one socket. Each imports
    ``target`` (``module:attribute`` or ``path.py:attribute``) itself, so ``target`` is
    needed then, and every worker must seal ``requestState`` with the same secret: set
    ``MCPKIT_STATE_SECRET`` (one is drawn here and passed down when it is unset). Modern
    (2026-07-28) requests are stateless and any worker answers any of them; a legacy
    session lives in the worker that created it, so legacy clients need one worker or a
    balancer that routes by ``Mcp-Session-Id``.

    Bound to another address than loopback (``host="0.0.0.0"``), the server still answers
    only requests whose ``Host`` is this machine's loopback name or the bound address: list
    the names clients use in ``allowed_hosts``, and set a ``token``, or ``auth`` to take
    tokens from an authorization server: a
    :class:`~mcpkit.transports.http_auth.ResourceServer`, or (also with workers) the plain
    data of :meth:`~mcpkit.transports.http_auth.ResourceServer.from_config`.
    """
    import uvicorn

    from .transports import http  # only when HTTP is used: `mcpkit serve` stays light

    token = token if token is not None else os.environ.get("MCPKIT_HTTP_TOKEN") or None
    options = {
        "token": token,
        "allowed_hosts": http.with_bind_host(host, allowed_hosts),
        "allowed_origins": list(allowed_origins) if allowed_origins else None,
        "max_body_size": max_body_size,
    }
    if auth is not None:
        options["auth"] = dict(auth) if isinstance(auth, Mapping) else auth
    if host not in http.LOOPBACK_NAMES:
        log.warning("serving on %s: reachable from other machines%s", host,
                    "" if token or auth else
                    " without a token (pass token=... or MCPKIT_HTTP_TOKEN)")
    # uvicorn's access log is info: above that level it would only be formatted to be
    # dropped, on every request (about 5 us of the ~100 a request costs).
    level = logging.getLevelName(log_level.upper())
    quiet = isinstance(level, int) and level > logging.INFO
    common = {"host": host, "port": port, "log_level": log_level.lower(),
              "timeout_graceful_shutdown": 3, "http": http.PROTOCOL, "access_log": not quiet}
    if workers <= 1:
        if server is None:
            server = load_target(target or "")
        try:
            http.uvicorn_server(http.McpHttpApp(server, **_with_auth(options)), lifespan="on",
                                **common).run()
        except KeyboardInterrupt:
            pass  # uvicorn re-raises Ctrl+C once it has shut down cleanly
        return
    if not target:
        raise ValueError("several workers each import the server: pass target='module:attr'")
    if auth is not None and not isinstance(auth, Mapping):
        raise ValueError("several workers each build their app: pass auth as plain data "
                         "(see ResourceServer.from_config), not a ResourceServer")
    if not os.environ.get("MCPKIT_STATE_SECRET"):
        import secrets  # here: it loads OpenSSL, which a stdio server never needs

        os.environ["MCPKIT_STATE_SECRET"] = secrets.token_urlsafe(32)
    os.environ[_ENV_TARGET] = target
    os.environ[_ENV_OPTIONS] = json.dumps(options)
    uvicorn.run("mcpkit.launch:app_from_env", factory=True, workers=workers, lifespan="on",
                **common)


def app_from_env() -> McpHttpApp:
    """The app a uvicorn worker builds (``run_http`` with ``workers > 1`` sets the env)."""
    from .transports import http

    options = json.loads(os.environ.get(_ENV_OPTIONS) or "{}")
    return http.McpHttpApp(load_target(os.environ[_ENV_TARGET]), **_with_auth(options))


def _with_auth(options: dict[str, Any]) -> dict[str, Any]:
    """The app's options with ``auth`` given as plain data made a ResourceServer."""
    if not isinstance(options.get("auth"), Mapping):
        return options
    from .transports.http_auth import ResourceServer

    return {**options, "auth": ResourceServer.from_config(options["auth"])}
