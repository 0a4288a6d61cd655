"""The headers of MCP's streamable HTTP, how values travel in them, and (2026-07-28) how
a server checks that the headers repeat what the body says.

The names and value encoding are shared by the server (:mod:`mcpkit.transports.http`) and
the client transport (:mod:`mcpkit.transports.http_client`), so neither imports the other.
Why the modern era mirrors body fields in headers: a load balancer or gateway can route and
filter on ``Mcp-Method`` and ``Mcp-Name`` without parsing JSON, so the server must refuse a
request whose headers say something else than its body (-32020).
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from .. import versions

if TYPE_CHECKING:
    from .http_security import RequestHeaders

H_VERSION = "mcp-protocol-version"
H_SESSION = "mcp-session-id"
H_METHOD = "mcp-method"
H_NAME = "mcp-name"
H_PARAM_PREFIX = "mcp-param-"

#: The body field that the ``Mcp-Name`` header repeats, by method (2026-07-28).
NAME_FIELDS = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri",
               "tasks/get": "taskId", "tasks/update": "taskId", "tasks/cancel": "taskId"}

_BASE64_FORM = re.compile(r"=\?base64\?([^?]*)\?=")  # the sentinel is lowercase on purpose


def encode_header_value(value: str | int | bool) -> str:
    """A value as it travels in ``Mcp-Name`` or ``Mcp-Param-*`` (2026-07-28).

    Integers are decimal, booleans ``true``/``false``; text that is not plain printable
    ASCII, has leading or trailing blanks, or itself looks encoded goes as
    ``=?base64?...?=`` (Base64 of its UTF-8 bytes). ValueError for text UTF-8 cannot carry.
    """
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    plain = (value.isascii() and value.isprintable() and value == value.strip(" \t")
             and not _BASE64_FORM.fullmatch(value))
    if plain:
        return value
    try:
        data = value.encode()
    except UnicodeEncodeError:  # JSON can escape a lone surrogate; UTF-8 has no form for it
        raise ValueError(f"{value!r} holds a lone surrogate, which a header (Mcp-Name, "
                         "Mcp-Param-*) cannot carry") from None
    return "=?base64?" + base64.b64encode(data).decode("ascii") + "?="


def decode_header_value(raw: str) -> str:
    """The text a header value stands for. Raises ValueError for a broken Base64 form."""
    match = _BASE64_FORM.fullmatch(raw) if raw.startswith("=?") else None
    if match is None:
        return raw  # without both markers the value is literal, even if it looks like Base64
    try:
        return base64.b64decode(match.group(1), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        raise ValueError(f"{raw!r} is not valid =?base64?...?= (bad padding, "
                         "characters outside Base64, or not UTF-8)") from None


# -- the modern era's mirror check --------------------------------------------------------

_HeaderParam = tuple[tuple[str, ...], str, Any]  # (argument path, header name, JSON type)


def _header_params(schema: Any, path: tuple[str, ...] = ()) -> Iterator[_HeaderParam]:
    """The ``x-mcp-header`` annotations of an input schema: (argument path, name, type).

    Only properties reached through ``properties`` alone count (the spec's rule), so the
    walk never enters ``items``, ``anyOf``, ``$ref`` and the like.
    """
    properties = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(properties, dict):
        return
    for prop, sub in properties.items():
        if not isinstance(sub, dict):
            continue
        name = sub.get("x-mcp-header")
        if isinstance(name, str) and name:
            yield path + (prop,), name, sub.get("type")
        yield from _header_params(sub, path + (prop,))


def _argument_at(arguments: Any, path: tuple[str, ...]) -> Any:
    for key in path:
        if not isinstance(arguments, dict):
            return None
        arguments = arguments.get(key)
    return arguments


def _param_matches(header_text: str, value: Any, schema_type: Any) -> bool:
    if isinstance(value, bool):
        return header_text == ("true" if value else "false")
    if isinstance(value, int) and schema_type != "string":
        try:
            return int(header_text) == value  # integers compare as numbers: "007" is 7
        except ValueError:
            return False
    return isinstance(value, str) and header_text == value


class HeaderMirror:
    """Why a modern request's standard headers disagree with its body (a -32020), or None.

    ``tools`` is the server's live table of tools (name -> an object with ``input_schema``):
    a tool's ``x-mcp-header`` arguments must travel as ``Mcp-Param-*`` headers too.
    """

    def __init__(self, tools: dict[str, Any]) -> None:
        self._tools = tools
        self._cache: dict[int, tuple[dict[str, Any], list[_HeaderParam]]] = {}

    def problem(self, headers: RequestHeaders, message: dict[str, Any]) -> str | None:
        """Why the standard headers disagree with the body (a -32020), or None."""
        method = message["method"]
        params = message.get("params") or {}
        for name in (H_VERSION, H_METHOD, H_NAME):
            value = headers.get(name)
            if value is not None and not (value.isascii() and value.isprintable()):
                return f"the {name} header has characters that are not printable ASCII"
        version = headers.get(H_VERSION)
        body_version = params["_meta"][versions.META_PROTOCOL_VERSION]
        if version is None:
            return "the MCP-Protocol-Version header is required"
        if version != body_version:
            return (f"MCP-Protocol-Version header {version!r} does not match "
                    f'params._meta["{versions.META_PROTOCOL_VERSION}"] {body_version!r}')
        header_method = headers.get(H_METHOD)
        if header_method is None:
            return "the Mcp-Method header is required"
        if header_method != method:
            return f"Mcp-Method header {header_method!r} does not match method {method!r}"
        name_key = NAME_FIELDS.get(method)
        if name_key is not None and isinstance(params.get(name_key), str):
            raw = headers.get(H_NAME)
            if raw is None:
                return f"the Mcp-Name header is required for {method}"
            try:
                name = decode_header_value(raw)
            except ValueError as exc:
                return f"Mcp-Name: {exc}"
            if name != params[name_key]:
                return f"Mcp-Name header {name!r} does not match params.{name_key}"
        if method == "tools/call":
            return self._param_problem(headers, params)
        return None

    def _header_params_of(self, schema: dict[str, Any]) -> list[_HeaderParam]:
        """A tool's ``x-mcp-header`` params, walked once per schema (by identity: a tool
        registered again gets a new schema object, and so a new walk)."""
        cached = self._cache.get(id(schema))
        if cached is None or cached[0] is not schema:
            cached = self._cache[id(schema)] = (schema, list(_header_params(schema)))
        return cached[1]

    def _param_problem(self, headers: RequestHeaders, params: dict[str, Any]) -> str | None:
        name = params.get("name")
        tool = self._tools.get(name) if isinstance(name, str) else None
        if tool is None:
            return None  # the server answers an unknown tool itself
        arguments = params.get("arguments")
        for path, name, schema_type in self._header_params_of(tool.input_schema):
            header = f"Mcp-Param-{name}"
            raw = headers.get(H_PARAM_PREFIX + name.lower())
            value = _argument_at(arguments, path)
            if value is None:
                if raw is not None:
                    return f"{header} was sent but arguments.{'.'.join(path)} has no value"
                continue
            if raw is None:
                return f"the {header} header is required: arguments.{'.'.join(path)} is set"
            try:
                text = decode_header_value(raw)
            except ValueError as exc:
                return f"{header}: {exc}"
            if not _param_matches(text, value, schema_type):
                return f"{header} header does not match arguments.{'.'.join(path)}"
        return None
