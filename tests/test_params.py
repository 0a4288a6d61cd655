"""The params table (mcpkit.params) against the spec's schemas, revision by revision."""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import pytest
from conftest import SPEC

from mcpkit import params
from mcpkit.jsonrpc import InvalidParams

REVISIONS = sorted(p.name for p in SPEC.iterdir() if p.is_dir())
# How the table's kinds map to the schema's "type" (an id or token is a union: anyOf).
KIND_TYPES = {"a string": "string", "a boolean": "boolean", "an object": "object",
              "a string or a number": None}


@cache
def _defs(revision: str) -> dict[str, Any]:
    schema = json.loads((SPEC / revision / "schema.json").read_text())
    return schema.get("$defs") or schema["definitions"]


def _resolve(defs: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        node = defs[node["$ref"].split("/")[-1]]
    return node


def _client_requests(revision: str) -> dict[str, dict[str, Any]]:
    """method -> the schema of its params, for every request a client may send."""
    defs = _defs(revision)
    union = defs["ClientRequest"]
    out = {}
    for ref in union.get("anyOf") or union.get("oneOf"):
        request = _resolve(defs, ref)
        method = request["properties"]["method"]["const"]
        schema = request["properties"].get("params")
        out[method] = _resolve(defs, schema) if schema else {}
    return out


@pytest.mark.parametrize("revision", REVISIONS)
def test_the_table_has_every_field_of_every_request_with_its_type(revision: str) -> None:
    defs = _defs(revision)
    served = {m: p for m, p in _client_requests(revision).items() if not m.startswith("tasks/")}
    assert set(served) <= set(params.METHOD_PARAMS), "a request the table does not know"
    for method, schema in served.items():
        table = params.METHOD_PARAMS[method]
        properties = {k: v for k, v in (schema.get("properties") or {}).items() if k != "_meta"}
        assert set(properties) <= set(table), f"{revision} {method}: fields missing"
        for name, field in table.items():
            if name not in properties:
                continue  # another revision's field: ignored here, as unknown fields are
            prop = _resolve(defs, properties[name])
            expected = KIND_TYPES.get(field.kind.words, "object")
            if expected is not None and "type" in prop:
                assert prop["type"] == expected, f"{revision} {method}.{name}"
            if field.required:
                assert name in schema.get("required", []), f"{revision} {method}.{name}"


@pytest.mark.parametrize("revision", [r for r in REVISIONS if "RequestMetaObject" in _defs(r)])
def test_meta_keys_have_the_schema_types(revision: str) -> None:
    defs = _defs(revision)
    meta = defs["RequestMetaObject"]["properties"]
    fields = params._META.kind.fields
    assert fields is not None
    for key, field in fields.items():
        if key in meta:
            prop = _resolve(defs, meta[key])
            expected = KIND_TYPES[field.kind.words]
            if expected and "type" in prop:
                assert prop["type"] == expected, key


@pytest.mark.parametrize(("method", "value", "field", "words"), [
    ("tools/call", {"name": ["a"]}, "params.name", "must be a string, got an array"),
    ("tools/call", {}, "params.name", "is required"),
    ("tools/call", {"name": "x", "arguments": "a=1"}, "params.arguments", "got a string"),
    ("prompts/get", {"name": "x", "arguments": {"a": 1}}, "params.arguments.a",
     "must be a string"),
    ("completion/complete", {"ref": {"type": "ref/prompt"}, "argument": {"name": "a"}},
     "params.argument.value", "is required"),
    ("subscriptions/listen", {"notifications": {"resourceSubscriptions": ["a", 2]}},
     "params.notifications.resourceSubscriptions[1]", "must be a string"),
    ("tools/list", {"cursor": True}, "params.cursor", "got a boolean"),
    ("logging/setLevel", {"level": None}, "params.level", "is required"),
])
def test_check_names_the_field(method: str, value: dict, field: str, words: str) -> None:
    with pytest.raises(InvalidParams) as caught:
        params.check(method, value)
    assert caught.value.data == {"field": field}
    assert field in caught.value.message and words in caught.value.message


def test_meta_is_checked_with_readable_key_paths() -> None:
    with pytest.raises(InvalidParams) as caught:
        params.check_meta("ping", {"_meta": {"io.modelcontextprotocol/logLevel": 3}})
    assert 'params._meta["io.modelcontextprotocol/logLevel"] must be a string' in \
        caught.value.message
    params.check_meta("ping", {"_meta": {"progressToken": 1.5, "other/key": [1]}})
    params.check("tools/call", {"name": "x", "arguments": None, "unknown": {"x": 1}})
