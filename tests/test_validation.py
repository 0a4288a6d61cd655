"""The compiled validator agrees with the reference `jsonschema` on the schemas tools use."""

from __future__ import annotations

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpkit.validation import check_schema, compile_schema

SCHEMAS = [
    {"type": "object", "properties": {"query": {"type": "string"},
                                      "limit": {"type": "integer", "minimum": 1}},
     "required": ["query"]},
    {"type": "object", "properties": {"kind": {"enum": ["a", "b"], "type": "string"},
                                      "tags": {"type": "array", "items": {"type": "string"},
                                               "uniqueItems": True, "maxItems": 3}},
     "additionalProperties": False},
    {"type": "object", "properties": {"x": {"anyOf": [{"type": "number"}, {"type": "null"}]},
                                      "flag": {"const": True}}},
    {"type": "object", "additionalProperties": {"type": "integer"}},
    {"type": "array", "prefixItems": [{"type": "string"}, {"type": "boolean"}], "minItems": 2},
    {"type": ["string", "null"], "minLength": 2, "maxLength": 4},
]

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.floats(-5, 5, allow_nan=False)
    | st.sampled_from(["", "a", "b", "abc", "query", "abcdef"]),
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.sampled_from(["query", "limit", "kind", "tags", "x", "flag", "z"]),
                      children, max_size=4),
    max_leaves=8,
)


@pytest.mark.parametrize("schema", SCHEMAS)
@settings(max_examples=300, deadline=None)
@given(value=json_values)
def test_compiled_validator_agrees_with_jsonschema(schema, value):
    reference = jsonschema.Draft202012Validator(schema).is_valid(value)
    problems = compile_schema(schema)(value)
    assert (not problems) == reference, (value, problems)
    assert all(isinstance(p, str) and p for p in problems)


def test_messages_name_the_field():
    check = compile_schema(SCHEMAS[0])
    assert check({}) == ["'query' is a required property"]
    assert check({"query": "x", "limit": 0}) == ["limit: 0 is less than the minimum 1"]
    assert check({"query": 3}) == ["query: 3 is not of type string"]


def test_other_keywords_fall_back_to_jsonschema():
    schema = {"type": "object", "properties": {"code": {"type": "string", "pattern": "^[A-Z]+$"}}}
    check = compile_schema(schema)
    assert check({"code": "ABC"}) == []
    assert "does not match" in check({"code": "abc"})[0]
    with pytest.raises(ValueError, match="invalid JSON Schema"):
        check_schema({"type": "object", "properties": {"a": {"pattern": 3}}})
    with pytest.raises(ValueError, match="JSON object"):
        check_schema([])
