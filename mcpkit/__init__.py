"""mcpkit: a small, readable, real Model Context Protocol implementation.

Layers, bottom up: :mod:`mcpkit.framing` (bytes <-> messages), :mod:`mcpkit.jsonrpc`
(message kinds and errors), :mod:`mcpkit.dispatch` (method -> handler),
:mod:`mcpkit.versions` (revisions and eras), :mod:`mcpkit.server`, and transports.
"""

from .content import ToolResult
from .jsonrpc import JsonRpcError
from .server import Context, Server

__all__ = ["Context", "JsonRpcError", "Server", "ToolResult"]
__version__ = "0.1.0"
