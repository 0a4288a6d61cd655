"""The shape of every request's ``params``: one table, checked before any handler runs.

A peer can put any JSON value in any field: a ``name`` that is a list, a ``_meta`` that is a
string, a ``cursor`` that is a number. Handlers are written for the shapes the spec gives, so
the connection checks those shapes once, here, and answers a mismatch with -32602 naming the
field (``tools/call: params.name must be a string, got an array``) instead of letting a
``TypeError`` escape from deep inside a handler.

The table is the union of the revisions' schemas (2024-11-05 .. 2026-07-28): no field changed
type between revisions, and fields a revision does not have are ignored by it, as unknown
fields always are. ``tests/test_params.py`` checks the table against every revision's schema,
so a new field or a changed type shows up there. Only what handlers read is constrained
further than the schema (for example the values of ``prompts/get`` arguments are strings).
"""

from __future__ import annotations

from typing import Any

from .jsonrpc import InvalidParams
from .versions import (
    META_CLIENT_CAPABILITIES,
    META_CLIENT_INFO,
    META_LOG_LEVEL,
    META_PROTOCOL_VERSION,
)

__all__ = ["METHOD_PARAMS", "check", "check_meta", "json_type"]


def json_type(value: Any) -> str:
    """The JSON name of a decoded value's type, with an article: for error messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


class Kind:
    """A JSON type a field must have, and the words for it in an error message.

    ``types`` are exact Python types: values come from the JSON decoder, which makes only
    dict, list, str, int, float, bool and None, and ``type(v) in types`` keeps ``True`` out of
    the numbers without a second test. That matters: this runs on every request.
    """

    def __init__(self, words: str, types: frozenset[type],
                 fields: dict[str, Field] | None = None, items: Kind | None = None) -> None:
        self.words = words
        self.types = types
        self.fields = fields  # for an object: the fields it may have
        self.required = tuple(n for n, f in (fields or {}).items() if f.required)
        self.items = items  # for an array, or an object used as a map: the type of each value


class Field:
    def __init__(self, kind: Kind, required: bool = False) -> None:
        self.kind = kind
        self.required = required


STRING = Kind("a string", frozenset({str}))
BOOLEAN = Kind("a boolean", frozenset({bool}))
OBJECT = Kind("an object", frozenset({dict}))
TOKEN = Kind("a string or a number", frozenset({str, int, float}))


def obj(**fields: Field) -> Kind:
    return Kind("an object", OBJECT.types, fields=fields)


def map_of(kind: Kind) -> Kind:
    return Kind(f"an object of {kind.words.split(' ', 1)[1]}s", OBJECT.types, items=kind)


def array_of(kind: Kind) -> Kind:
    return Kind(f"an array of {kind.words.split(' ', 1)[1]}s", frozenset({list}), items=kind)


def req(kind: Kind) -> Field:
    return Field(kind, required=True)


def opt(kind: Kind) -> Field:
    return Field(kind)


# Every request's params may carry _meta. Besides the progress token, the modern era puts
# the request's version, client and capabilities there (RequestMetaObject).
_META = opt(obj(**{
    "progressToken": opt(TOKEN),
    META_PROTOCOL_VERSION: opt(STRING),
    META_CLIENT_INFO: opt(OBJECT),
    META_CLIENT_CAPABILITIES: opt(OBJECT),
    META_LOG_LEVEL: opt(STRING),
}))
_PAGED = {"cursor": opt(STRING)}
# Multi round-trip requests (2026-07-28): the answers and the sealed state of earlier rounds.
_ROUND_TRIP = {"inputResponses": opt(OBJECT), "requestState": opt(STRING)}
_URI = {"uri": req(STRING)}

#: The params of each request a server receives (``_meta`` aside): field -> type, required
#: or not.
METHOD_PARAMS: dict[str, dict[str, Field]] = {
    "initialize": {"protocolVersion": req(STRING), "capabilities": opt(OBJECT),
                   "clientInfo": opt(OBJECT)},
    "ping": {},
    "server/discover": {},
    "tools/list": _PAGED,
    "tools/call": {"name": req(STRING), "arguments": opt(OBJECT), "task": opt(OBJECT),
                   **_ROUND_TRIP},
    "resources/list": _PAGED,
    "resources/templates/list": _PAGED,
    "resources/read": {**_URI, **_ROUND_TRIP},
    "resources/subscribe": _URI,
    "resources/unsubscribe": _URI,
    "prompts/list": _PAGED,
    "prompts/get": {"name": req(STRING), "arguments": opt(map_of(STRING)), **_ROUND_TRIP},
    "completion/complete": {
        "ref": req(obj(type=req(STRING), name=opt(STRING), uri=opt(STRING))),
        "argument": req(obj(name=req(STRING), value=req(STRING))),
        "context": opt(obj(arguments=opt(map_of(STRING)))),
    },
    "logging/setLevel": {"level": req(STRING)},
    "subscriptions/listen": {"notifications": req(obj(
        toolsListChanged=opt(BOOLEAN), promptsListChanged=opt(BOOLEAN),
        resourcesListChanged=opt(BOOLEAN), resourceSubscriptions=opt(array_of(STRING)),
        taskIds=opt(array_of(STRING))))},
    # Tasks: the extension (2026-07-28) and 2025-11-25's experimental form.
    "tasks/get": {"taskId": req(STRING)},
    "tasks/update": {"taskId": req(STRING), "inputResponses": req(OBJECT)},
    "tasks/cancel": {"taskId": req(STRING)},
    "tasks/result": {"taskId": req(STRING)},  # 2025-11-25
    "tasks/list": _PAGED,  # 2025-11-25
}


# Each method's params as one object kind (required names worked out once).
_SHAPES = {method: obj(**fields) for method, fields in METHOD_PARAMS.items()}


# _meta's known keys and their types, flat: checked on every request, so in one loop.
_META_TYPES = {name: field.kind.types for name, field in (_META.kind.fields or {}).items()}


def check_meta(method: str, params: dict[str, Any]) -> None:
    """Check ``params._meta``, which every request may carry: it decides the request's era,
    so it is checked first, before the method is known to exist in that era."""
    meta = params.get("_meta")
    if meta is None:
        return
    if type(meta) is dict:
        types = _META_TYPES
        for key, value in meta.items():
            expected = types.get(key)
            if expected is not None and value is not None and type(value) not in expected:
                break  # wrong: let the general path name it
        else:
            return
    _check_value(method, _META.kind, meta, "params._meta")


def check(method: str, params: dict[str, Any]) -> None:
    """Raise :class:`InvalidParams` naming the first field of ``params`` with a wrong type.

    ``null`` counts as absent for an optional field, as the handlers read it. ``_meta`` is
    :func:`check_meta`'s; methods not in the table have nothing more to check.
    """
    shape = _SHAPES.get(method)
    if shape is not None:
        _check_fields(method, shape, params, "params")


def _check_fields(method: str, kind: Kind, value: dict[str, Any], path: str) -> None:
    for name in kind.required:
        if value.get(name) is None:
            where = _join(path, name)
            raise InvalidParams(f"{method}: {where} is required "
                                f"({kind.fields[name].kind.words})",  # type: ignore[index]
                                {"field": where})
    fields = kind.fields
    assert fields is not None
    for name, item in value.items():
        field = fields.get(name)
        if field is None or item is None or name == "_meta":
            continue
        sub = field.kind
        # The common case inline (a flat field of the right type): no call per field.
        if type(item) not in sub.types or sub.fields is not None or sub.items is not None:
            _check_value(method, sub, item, _join(path, name))


def _check_value(method: str, kind: Kind, value: Any, path: str) -> None:
    if type(value) not in kind.types:
        raise InvalidParams(f"{method}: {path} must be {kind.words}, got {json_type(value)}",
                            {"field": path})
    if kind.fields is not None:
        _check_fields(method, kind, value, path)
    elif kind.items is not None:
        entries = value.items() if isinstance(value, dict) else enumerate(value)
        for key, item in entries:
            if type(item) not in kind.items.types:
                where = _join(path, key) if isinstance(value, dict) else f"{path}[{key}]"
                raise InvalidParams(
                    f"{method}: {where} must be {kind.items.words}, got {json_type(item)}",
                    {"field": where})


def _join(path: str, key: str) -> str:
    # params._meta["io.modelcontextprotocol/logLevel"] reads better than a dotted URL.
    return f"{path}.{key}" if key.isidentifier() else f'{path}["{key}"]'
