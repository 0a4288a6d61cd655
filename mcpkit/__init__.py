"""mcpkit: a small, readable, real Model Context Protocol implementation.

Layers, bottom up: :mod:`mcpkit.framing` (bytes <-> messages), :mod:`mcpkit.jsonrpc`
(message kinds and errors), :mod:`mcpkit.dispatch` (method -> handler),
:mod:`mcpkit.versions` (revisions and eras), :mod:`mcpkit.server`, and transports.
"""

from .content import ToolResult
from .jsonrpc import JsonRpcError
from .server import Context, Server

__all__ = ["Client", "Context", "Host", "JsonRpcError", "Server", "ToolResult"]
__version__ = "0.1.0"


def __getattr__(name: str):
    # The client side loads on first use: a server process does not need it.
    if name == "Client":
        from .client import Client

        return Client
    if name == "Host":
        from .host import Host

        return Host
    raise AttributeError(f"module 'mcpkit' has no attribute {name!r}")
