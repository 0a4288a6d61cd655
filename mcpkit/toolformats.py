"""MCP tools in the tool-use formats of model APIs, and back. No network, no SDKs.

A host shows a model its tools, the model asks for a call, the host runs it over MCP and
hands the result back. Model APIs agree on that loop but not on the shapes:

- **Anthropic Messages API**: ``tools=[{"name", "description", "input_schema"}]``. The
  model's reply contains content blocks ``{"type": "tool_use", "id", "name", "input"}``;
  the answer is a user message with ``{"type": "tool_result", "tool_use_id", "content":
  [blocks], "is_error"}`` blocks.
- **OpenAI-style function tools** (Chat Completions, and the many APIs that copy it):
  ``tools=[{"type": "function", "function": {"name", "description", "parameters"}}]``.
  The reply's ``message.tool_calls`` hold ``{"id", "type": "function", "function":
  {"name", "arguments"}}``, where ``arguments`` is a JSON *string* the model wrote (it
  may not parse). The answer is one ``{"role": "tool", "tool_call_id", "content"}``
  message per call; the content is text.

MCP tool names may be up to 128 characters and contain ``.`` and ``/``; these APIs
accept ``^[a-zA-Z0-9_-]{1,64}$``. :class:`ToolNames` maps between the two, reversibly.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from . import apps

__all__ = [
    "ToolCall",
    "ToolNames",
    "anthropic_tool_calls",
    "anthropic_tool_result",
    "anthropic_tools",
    "api_name",
    "openai_tool_calls",
    "openai_tool_message",
    "openai_tools",
    "result_to_text",
]

MAX_NAME = 64
_NAME_OK = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_NAME_BAD_CHARS = re.compile(r"[^a-zA-Z0-9_-]")
_EMPTY_SCHEMA = {"type": "object", "properties": {}}


@dataclass
class ToolCall:
    """A model's request to call a tool. ``error`` is set when it cannot be run as asked
    (e.g. the arguments were not valid JSON); the error goes back to the model."""

    id: str
    name: str
    arguments: dict[str, Any]
    error: str | None = None


def api_name(name: str) -> str:
    """A name model APIs accept for the MCP tool name ``name`` (itself, if it already is)."""
    if _NAME_OK.fullmatch(name):  # not match: "$" also matches before a final "\n"
        return name
    cleaned = _NAME_BAD_CHARS.sub("_", name) or "tool"
    if len(cleaned) > MAX_NAME:
        # Keep it unique: the start of the name and a short digest of all of it.
        digest = hashlib.sha1(name.encode()).hexdigest()[:8]
        cleaned = f"{cleaned[:MAX_NAME - 9]}_{digest}"
    return cleaned


class ToolNames:
    """A two-way map between MCP tool names and model-API tool names."""

    def __init__(self, names: Iterable[str]) -> None:
        self._to_api: dict[str, str] = {}
        self._to_mcp: dict[str, str] = {}
        for name in names:
            candidate = api_name(name)
            n = 2
            while candidate in self._to_mcp:  # two names cleaned to the same thing
                suffix = f"_{n}"
                candidate = api_name(name)[: MAX_NAME - len(suffix)] + suffix
                n += 1
            self._to_api[name] = candidate
            self._to_mcp[candidate] = name

    def api(self, name: str) -> str:
        return self._to_api[name]

    def mcp(self, api_name: str) -> str:
        """The MCP name for a name the model used; KeyError if there is none."""
        return self._to_mcp[api_name]

    def __contains__(self, api_name: object) -> bool:
        return api_name in self._to_mcp


def _schema(tool: Mapping[str, Any]) -> dict[str, Any]:
    schema = tool.get("inputSchema")
    if not isinstance(schema, dict) or schema.get("type") != "object":
        return dict(_EMPTY_SCHEMA)  # both APIs insist on an object schema
    return schema


def _description(tool: Mapping[str, Any]) -> str:
    return tool.get("description") or tool.get("title") or ""


def callable_tools(tools: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The tools a model may be offered: not those that must run as a task
    (``execution.taskSupport: "required"``, 2025-11-25), which a model's plain call cannot
    run, nor those only an app's view may call (MCP Apps ``visibility: ["app"]``)."""
    return [t for t in tools
            if (t.get("execution") or {}).get("taskSupport") != "required"
            and apps.model_visible(t)]


def anthropic_tools(tools: Iterable[Mapping[str, Any]],
                    names: ToolNames | None = None) -> list[dict[str, Any]]:
    """MCP tool definitions as the Anthropic Messages API's ``tools`` parameter (only the
    ones a model can call: :func:`callable_tools`)."""
    tools = callable_tools(tools)
    names = names or ToolNames(t["name"] for t in tools)
    return [{"name": names.api(t["name"]), "description": _description(t),
             "input_schema": _schema(t)} for t in tools]


def openai_tools(tools: Iterable[Mapping[str, Any]],
                 names: ToolNames | None = None) -> list[dict[str, Any]]:
    """MCP tool definitions as OpenAI-style function tools (only :func:`callable_tools`)."""
    tools = callable_tools(tools)
    names = names or ToolNames(t["name"] for t in tools)
    return [{"type": "function", "function": {"name": names.api(t["name"]),
                                              "description": _description(t),
                                              "parameters": _schema(t)}} for t in tools]


# -- the model's calls -----------------------------------------------------------------


def anthropic_tool_calls(content: Iterable[Mapping[str, Any]]) -> list[ToolCall]:
    """The ``tool_use`` blocks of an Anthropic response's ``content``."""
    calls = []
    for block in content:
        if block.get("type") != "tool_use":
            continue
        arguments = block.get("input")
        if isinstance(arguments, dict):
            calls.append(ToolCall(str(block.get("id", "")), str(block.get("name", "")),
                                  arguments))
        else:
            calls.append(ToolCall(str(block.get("id", "")), str(block.get("name", "")), {},
                                  "the tool input must be a JSON object"))
    return calls


def openai_tool_calls(message: Mapping[str, Any]) -> list[ToolCall]:
    """The ``tool_calls`` of an OpenAI-style assistant message, arguments parsed."""
    calls = []
    for call in message.get("tool_calls") or ():
        function = call.get("function") or {}
        call_id, name = str(call.get("id", "")), str(function.get("name", ""))
        raw = function.get("arguments") or "{}"
        try:
            arguments = json.loads(raw) if isinstance(raw, str) else raw
        except ValueError as exc:
            calls.append(ToolCall(call_id, name, {},
                                  f"the arguments are not valid JSON ({exc}); send a JSON object"))
            continue
        if not isinstance(arguments, dict):
            calls.append(ToolCall(call_id, name, {}, "the arguments must be a JSON object"))
            continue
        calls.append(ToolCall(call_id, name, arguments))
    return calls


# -- results back to the model ---------------------------------------------------------


def _block_text(block: Mapping[str, Any]) -> str:
    """A text rendering of a content block that is not text (for text-only answers)."""
    kind = block.get("type")
    if kind == "text":
        return str(block.get("text", ""))
    if kind in ("image", "audio"):
        return f"[{kind} ({block.get('mimeType', 'unknown type')}) not shown]"
    if kind == "resource":
        resource = block.get("resource") or {}
        if "text" in resource:
            return f"[resource {resource.get('uri', '')}]\n{resource['text']}"
        return f"[binary resource {resource.get('uri', '')} ({resource.get('mimeType', '')})]"
    if kind == "resource_link":
        return f"[resource link: {block.get('name', '')} <{block.get('uri', '')}>]"
    return json.dumps(block, ensure_ascii=False)


def _content(result: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    blocks = [b for b in result.get("content") or () if isinstance(b, dict)]
    if not blocks and "structuredContent" in result:
        text = json.dumps(result["structuredContent"], ensure_ascii=False)
        blocks = [{"type": "text", "text": text}]
    return blocks


def result_to_text(result: Mapping[str, Any]) -> str:
    """A tool result as plain text (images and audio replaced by a placeholder)."""
    return "\n".join(_block_text(b) for b in _content(result))


def anthropic_tool_result(call_id: str, result: Mapping[str, Any] | None = None,
                          error: str | None = None) -> dict[str, Any]:
    """A ``tool_result`` block for an MCP result, or for an ``error`` message."""
    if error is not None or result is None:
        return {"type": "tool_result", "tool_use_id": call_id,
                "content": [{"type": "text", "text": error or "no result"}], "is_error": True}
    blocks: list[dict[str, Any]] = []
    for block in _content(result):
        if block.get("type") == "image":
            blocks.append({"type": "image", "source": {
                "type": "base64", "media_type": block.get("mimeType", "image/png"),
                "data": block.get("data", "")}})
        else:
            blocks.append({"type": "text", "text": _block_text(block)})
    out: dict[str, Any] = {"type": "tool_result", "tool_use_id": call_id, "content": blocks}
    if result.get("isError") is True:
        out["is_error"] = True
    return out


def openai_tool_message(call_id: str, result: Mapping[str, Any] | None = None,
                        error: str | None = None) -> dict[str, Any]:
    """A ``{"role": "tool"}`` message for an MCP result, or for an ``error`` message."""
    if error is not None or result is None:
        text = f"Error: {error or 'no result'}"
    else:
        text = result_to_text(result)
        if result.get("isError") is True:
            text = f"Error: {text}"  # the format has no error flag: say it in words
    return {"role": "tool", "tool_call_id": call_id, "content": text}
