"""An MCP server: a :class:`~mcpkit.registry.Registry` that makes connections and runs.

Everything a server offers and every protocol handler lives in :mod:`mcpkit.registry`;
this top layer of the server side only adds what needs the layers below it: a transport
calls :meth:`Server.connect` and feeds the :class:`~mcpkit.connection.Connection` it gets,
and :meth:`Server.run` serves this process's stdin and stdout.
"""

from __future__ import annotations

from .connection import Connection
from .context import Context, Send
from .registry import DEFAULT_PAGE_SIZE, Prompt, Registry, Resource, Tool
from .transports.stdio import serve_stdio

__all__ = ["DEFAULT_PAGE_SIZE", "Context", "Prompt", "Resource", "Server", "Tool"]


class Server(Registry):
    """An MCP server. Register tools, resources and prompts with the decorators."""

    def connect(self, send: Send) -> Connection:
        """A new transport connection; ``send`` writes one message to the peer."""
        connection = Connection(self, send)
        with self._lock:
            self._listeners.add(connection)
        return connection

    # -- convenience ---------------------------------------------------------------------

    def run(self, framing: str = "ndjson") -> None:
        """Serve over this process's stdin/stdout until EOF."""
        serve_stdio(self, framing=framing)


