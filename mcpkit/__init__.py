"""mcpkit: a small, readable, real Model Context Protocol implementation.

Each module is one concern, and a layer of the course. Layers, bottom up: a module imports
only modules of the rows above its own, or earlier in its own row (``tests/test_layers.py``
checks it, imports under ``TYPE_CHECKING`` and inside functions included, so there are no
cycles of any kind). Read a lesson's layer without anything above it.

.. layers (bottom up)

============  ==========================================================================
protocol      logs versions deprecations tracing jsonrpc framing dispatch params
definitions   schema validation content mrtr tasks
server core   context context_use registry connection
byte pumps    transports.stdio transports.process transports.memory
server        server apps
HTTP          transports.http_security transports.http_headers transports.http_protocol
              transports.sse_store transports.http_auth transports.http
              oauth_metadata oauth_exchange oauth_dpop oauth transports.http_client
client side   session task_client client aclient toolformats host agent app_bridge
package       mcpkit
entry points  launch wiretap shell cli __main__
course        display grading* widgets app_widget course* examples*
============  ==========================================================================

- *protocol*: bytes <-> messages (:mod:`~mcpkit.framing`), JSON-RPC kinds and errors
  (:mod:`~mcpkit.jsonrpc`), method -> handler (:mod:`~mcpkit.dispatch`), revisions and eras
  (:mod:`~mcpkit.versions`), the shape of every request's params (:mod:`~mcpkit.params`),
  loggers made on first use (:mod:`~mcpkit.logs`);
- *definitions*: tool schemas from type hints, their validators, content blocks, multi
  round-trip requests, tasks (:mod:`~mcpkit.tasks`: a call that answers later);
- *server core*: a request's :class:`~mcpkit.context.Context`, the
  :class:`~mcpkit.registry.Registry` of what a server offers and its handlers, one
  transport :class:`~mcpkit.connection.Connection`;
- *byte pumps*: stdio loops that know framing and nothing of servers or clients;
- :class:`~mcpkit.server.Server`: a registry that makes connections and runs over stdio;
  MCP Apps' serving side and the host's rules for views (:mod:`~mcpkit.apps`);
- *HTTP*: the streamable HTTP server (ASGI) and its client transport, with OAuth on both
  sides: tokens from an authorization server checked (:mod:`~mcpkit.transports.http_auth`)
  and got (:mod:`~mcpkit.oauth`; DPoP proofs in :mod:`~mcpkit.oauth_dpop`);
- *client side*: one session's logic without I/O (:mod:`~mcpkit.session`), driven by a
  blocking front (:class:`~mcpkit.client.Client`) or an asyncio one
  (:class:`~mcpkit.aclient.AsyncClient`); model tool formats; many sessions
  (:class:`~mcpkit.host.Host`); the host's side of an MCP Apps view
  (:mod:`~mcpkit.app_bridge`);
- *entry points*: loading a server by name, the commands for people (``mcpkit list``,
  ``call``, ``trace``, ...), and the ``mcpkit`` command line.
"""

from .content import ToolResult
from .jsonrpc import JsonRpcError
from .server import Context, Server
from .versions import PACKAGE_VERSION

__all__ = ["AsyncClient", "Client", "Context", "Host", "JsonRpcError", "Server", "ToolResult"]
__version__ = PACKAGE_VERSION


def __getattr__(name: str):
    # The client side loads on first use: a server process does not need it.
    if name == "Client":
        from .client import Client

        return Client
    if name == "AsyncClient":
        from .aclient import AsyncClient

        return AsyncClient
    if name == "Host":
        from .host import Host

        return Host
    raise AttributeError(f"module 'mcpkit' has no attribute {name!r}")
