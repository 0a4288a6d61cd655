"""Content blocks: what tools return and prompts contain, and how Python values become them.

A tool may return a string (one text block), a content block dict, a list of blocks, a
:class:`ToolResult` for full control, or, for tools with an ``outputSchema``, any
JSON-serialisable value (it becomes ``structuredContent`` plus a text copy for clients
that only read text).
"""

from __future__ import annotations

import base64
import json
from typing import Any

CONTENT_TYPES = ("text", "image", "audio", "resource", "resource_link")


def _b64(data: bytes | str) -> str:
    return data if isinstance(data, str) else base64.b64encode(data).decode("ascii")


def text(value: str, annotations: dict[str, Any] | None = None) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "text", "text": value}
    if annotations:
        block["annotations"] = annotations
    return block


def image(data: bytes | str, mime_type: str = "image/png") -> dict[str, Any]:
    """An image block; ``data`` is raw bytes or already base64 text."""
    return {"type": "image", "data": _b64(data), "mimeType": mime_type}


def audio(data: bytes | str, mime_type: str = "audio/wav") -> dict[str, Any]:
    return {"type": "audio", "data": _b64(data), "mimeType": mime_type}


def embedded_resource(
    uri: str, text: str | None = None, blob: bytes | None = None, mime_type: str | None = None
) -> dict[str, Any]:
    """A resource's contents carried inside a result (give ``text`` or ``blob``)."""
    contents: dict[str, Any] = {"uri": uri}
    if mime_type:
        contents["mimeType"] = mime_type
    if blob is not None:
        contents["blob"] = _b64(blob)
    else:
        contents["text"] = text if text is not None else ""
    return {"type": "resource", "resource": contents}


def resource_link(
    uri: str, name: str, description: str | None = None, mime_type: str | None = None
) -> dict[str, Any]:
    """A pointer to a resource the client may read later (revision 2025-06-18 onwards)."""
    block: dict[str, Any] = {"type": "resource_link", "uri": uri, "name": name}
    if description:
        block["description"] = description
    if mime_type:
        block["mimeType"] = mime_type
    return block


class ToolResult:
    """A tool's answer with every field under the tool's control."""

    # A plain class rather than a dataclass: importing dataclasses would cost every server
    # process about 1.5 ms of start-up.
    __slots__ = ("content", "structured", "is_error")

    def __init__(self, content: list[dict[str, Any]] | None = None, structured: Any = None,
                 is_error: bool = False) -> None:
        self.content = [] if content is None else content
        self.structured = structured
        self.is_error = is_error

    def __eq__(self, other: object) -> bool:
        if type(other) is not ToolResult:
            return NotImplemented
        return (self.content, self.structured, self.is_error) == (
            other.content, other.structured, other.is_error)

    __hash__ = None  # type: ignore[assignment]  # mutable, like the dataclass it was

    def __repr__(self) -> str:
        return (f"ToolResult(content={self.content!r}, structured={self.structured!r}, "
                f"is_error={self.is_error!r})")

    def to_dict(self) -> dict[str, Any]:
        result: dict[str, Any] = {"content": self.content}
        if self.structured is not None:
            result["structuredContent"] = self.structured
        if self.is_error:
            result["isError"] = True
        return result


def error_result(message: str) -> ToolResult:
    """A tool result that reports a failure to the model (``isError``), not to the protocol."""
    return ToolResult([text(message)], is_error=True)


def is_content_block(value: Any) -> bool:
    return isinstance(value, dict) and value.get("type") in CONTENT_TYPES


def to_content(value: Any) -> list[dict[str, Any]]:
    """Turn what a tool returned into a list of content blocks."""
    if value is None:
        return []
    if isinstance(value, str):
        return [text(value)]
    if is_content_block(value):
        return [value]
    if isinstance(value, list | tuple) and value and all(is_content_block(v) for v in value):
        return list(value)
    return [text(json.dumps(value, ensure_ascii=False, default=str))]
