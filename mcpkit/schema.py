"""JSON Schema from Python type hints, so a tool's ``inputSchema`` is written once: as code.

``def notes_search(query: str, limit: int = 10)`` becomes an object schema with a required
string ``query`` and an optional integer ``limit`` defaulting to 10. Descriptions come from
the docstring: the first paragraph describes the tool, and an ``Args:`` section (Google
style) describes each parameter.

Supported: str, int, float, bool, None, Optional / ``X | None``, Literal (-> enum),
list[...] / tuple[...], dict[str, ...], TypedDict, dataclasses, Any, and unions.
"""

from __future__ import annotations

import inspect
import re
import types
import typing
from collections.abc import Callable
from typing import Any, Literal, Union, get_args, get_origin

_PRIMITIVES: dict[Any, dict[str, Any]] = {
    str: {"type": "string"},
    int: {"type": "integer"},
    float: {"type": "number"},
    bool: {"type": "boolean"},
    type(None): {"type": "null"},
    bytes: {"type": "string", "contentEncoding": "base64"},
}


class SchemaError(TypeError):
    """A type hint that has no sensible JSON Schema."""


def type_schema(hint: Any) -> dict[str, Any]:
    """The JSON Schema of one type hint."""
    if hint is Any or hint is inspect.Parameter.empty:
        return {}
    if hint in _PRIMITIVES:
        return dict(_PRIMITIVES[hint])
    origin = get_origin(hint)
    args = get_args(hint)
    if origin is typing.Annotated:
        schema = type_schema(args[0])
        for extra in args[1:]:
            if isinstance(extra, str):
                schema["description"] = extra
            elif isinstance(extra, dict):
                schema.update(extra)
        return schema
    if origin is Literal:
        values = list(args)
        schema: dict[str, Any] = {"enum": values}
        kinds = {type(v) for v in values}
        if len(kinds) == 1 and kinds.pop() in _PRIMITIVES:
            schema["type"] = _PRIMITIVES[type(values[0])]["type"]
        return schema
    if origin in (Union, types.UnionType):
        members = [a for a in args if a is not type(None)]
        nullable = len(members) != len(args)
        if len(members) == 1:
            schema = type_schema(members[0])
            if nullable:
                return {"anyOf": [schema, {"type": "null"}]}
            return schema
        options = [type_schema(m) for m in members]
        if nullable:
            options.append({"type": "null"})
        return {"anyOf": options}
    if origin in (list, set, frozenset) or hint in (list, set, frozenset):
        schema = {"type": "array"}
        if args:
            schema["items"] = type_schema(args[0])
        if origin in (set, frozenset):
            schema["uniqueItems"] = True
        return schema
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return {"type": "array", "items": type_schema(args[0])}
        return {
            "type": "array",
            "prefixItems": [type_schema(a) for a in args],
            "minItems": len(args),
            "maxItems": len(args),
        }
    if origin is dict or hint is dict:
        schema = {"type": "object"}
        if len(args) == 2 and args[1] is not Any:
            schema["additionalProperties"] = type_schema(args[1])
        return schema
    if typing.is_typeddict(hint):
        hints = typing.get_type_hints(hint, include_extras=True)
        required = sorted(hint.__required_keys__)
        return _object(
            {name: type_schema(h) for name, h in hints.items()}, required, hint.__doc__
        )
    if isinstance(hint, type) and hasattr(hint, "__dataclass_fields__"):
        import dataclasses  # only here: a server without dataclass hints never pays for it

        hints = typing.get_type_hints(hint, include_extras=True)
        properties: dict[str, Any] = {}
        required = []
        for field in dataclasses.fields(hint):
            prop = type_schema(hints[field.name])
            if field.default is not dataclasses.MISSING:
                prop["default"] = field.default
            elif field.default_factory is dataclasses.MISSING:
                required.append(field.name)
            properties[field.name] = prop
        return _object(properties, required, None)
    raise SchemaError(f"no JSON Schema for type hint {hint!r}; give the schema explicitly")


def _object(properties: dict[str, Any], required: list[str], doc: str | None) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    return schema


def parse_docstring(doc: str | None) -> tuple[str, dict[str, str]]:
    """Split a docstring into (description, {param: description}) from an ``Args:`` block."""
    if not doc:
        return "", {}
    text = inspect.cleandoc(doc)
    match = re.search(r"^(Args|Arguments|Parameters):\s*$", text, re.MULTILINE)
    if not match:
        return text.strip(), {}
    description = text[: match.start()].strip()
    params: dict[str, str] = {}
    current = None
    indent = 0
    for line in text[match.end():].splitlines():
        if not line.strip():
            continue
        if not line.startswith((" ", "\t")):  # a new section (Returns:, Raises:) ends Args
            break
        entry = re.match(r"\s+(\w+)(\s*\([^)]*\))?:\s*(.*)", line)
        if entry and (current is None or len(line) - len(line.lstrip()) <= indent):
            current, indent = entry.group(1), len(line) - len(line.lstrip())
            params[current] = entry.group(3).strip()
        elif current is not None:
            params[current] = (params[current] + " " + line.strip()).strip()
    return description, params


def function_schema(
    fn: Callable[..., Any], skip: tuple[str, ...] = ()
) -> tuple[dict[str, Any], str]:
    """The ``inputSchema`` of a function's parameters and its description.

    Parameters named in ``skip`` (the tool context) are left out of the schema.
    """
    signature = inspect.signature(fn)
    hints = typing.get_type_hints(fn, include_extras=True)
    description, param_docs = parse_docstring(fn.__doc__)
    properties: dict[str, Any] = {}
    required: list[str] = []
    for name, param in signature.parameters.items():
        if name in skip or param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        prop = type_schema(hints.get(name, Any))
        if name in param_docs and "description" not in prop:
            prop["description"] = param_docs[name]
        if param.default is inspect.Parameter.empty:
            required.append(name)
        elif param.default is not None or "default" not in prop:
            if _json_literal(param.default):
                prop["default"] = param.default
        properties[name] = prop
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    return schema, description


def _json_literal(value: Any) -> bool:
    return value is None or isinstance(value, str | int | float | bool)


def return_schema(fn: Callable[..., Any]) -> dict[str, Any] | None:
    """The ``outputSchema`` for a function's return annotation, or None if it has none.

    MCP requires an object at the top level; other types are wrapped as ``{"result": ...}``
    (see :func:`wraps_result`).
    """
    hint = typing.get_type_hints(fn, include_extras=True).get("return")
    if hint is None:
        return None
    schema = type_schema(hint)
    if schema.get("type") == "object":
        return schema
    return {"type": "object", "properties": {"result": schema}, "required": ["result"]}


def wraps_result(output_schema: dict[str, Any]) -> bool:
    props = output_schema.get("properties", {})
    return output_schema.get("required") == ["result"] and list(props) == ["result"]
