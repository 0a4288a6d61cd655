"""The headers of MCP's streamable HTTP, and how values travel in them.

Shared by the server (:mod:`mcpkit.transports.http`) and the client transport
(:mod:`mcpkit.transports.http_client`), so neither imports the other.
"""

from __future__ import annotations

import base64
import binascii
import re

H_VERSION = "mcp-protocol-version"
H_SESSION = "mcp-session-id"
H_METHOD = "mcp-method"
H_NAME = "mcp-name"
H_PARAM_PREFIX = "mcp-param-"

#: The body field that the ``Mcp-Name`` header repeats, by method (2026-07-28).
NAME_FIELDS = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}

_BASE64_FORM = re.compile(r"=\?base64\?([^?]*)\?=")  # the sentinel is lowercase on purpose


def encode_header_value(value: str | int | bool) -> str:
    """A value as it travels in ``Mcp-Name`` or ``Mcp-Param-*`` (2026-07-28).

    Integers are decimal, booleans ``true``/``false``; text that is not plain printable
    ASCII, has leading or trailing blanks, or itself looks encoded goes as
    ``=?base64?...?=`` (Base64 of its UTF-8 bytes).
    """
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    plain = (value.isascii() and value.isprintable() and value == value.strip(" \t")
             and not _BASE64_FORM.fullmatch(value))
    if plain:
        return value
    return "=?base64?" + base64.b64encode(value.encode()).decode("ascii") + "?="


def decode_header_value(raw: str) -> str:
    """The text a header value stands for. Raises ValueError for a broken Base64 form."""
    match = _BASE64_FORM.fullmatch(raw)
    if match is None:
        return raw  # without both markers the value is literal, even if it looks like Base64
    try:
        return base64.b64decode(match.group(1), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        raise ValueError(f"{raw!r} is not valid =?base64?...?= (bad padding, "
                         "characters outside Base64, or not UTF-8)") from None
