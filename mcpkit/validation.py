"""Argument validation, compiled once per tool.

Tool schemas derived from type hints use a small part of JSON Schema (types, properties,
required, enum, items, anyOf, ...). For that part a check is a few closures built at
registration, with no per-call work beyond the checks themselves, and no import of the
full `jsonschema` package on the server's start-up path. A schema using anything else
(``$ref``, ``if``/``then``, ``pattern``, formats ...) is handed to `jsonschema`, imported
only then.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

Check = Callable[[Any, str], list[str]]

# Keywords that only describe; they never make a value invalid.
_ANNOTATIONS = frozenset({
    "title", "description", "default", "examples", "$schema", "$comment", "deprecated",
    "readOnly", "writeOnly", "contentEncoding", "contentMediaType", "$id", "x-mcp-header",
})
_SUPPORTED = _ANNOTATIONS | {
    "type", "properties", "required", "additionalProperties", "items", "prefixItems",
    "enum", "const", "anyOf", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
    "minLength", "maxLength", "minItems", "maxItems", "uniqueItems",
}

_TYPE_TESTS: dict[str, Callable[[Any], bool]] = {
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "integer": lambda v: (isinstance(v, int) and not isinstance(v, bool))
    or (isinstance(v, float) and math.isfinite(v) and v.is_integer()),
}


class UnsupportedSchema(Exception):
    pass


def compile_schema(schema: dict[str, Any]) -> Callable[[Any], list[str]]:
    """A function that returns the problems of a value (empty list: valid)."""
    try:
        check = _compile(schema)
    except UnsupportedSchema:
        return _jsonschema_check(schema)
    return lambda value: check(value, "")


def _jsonschema_check(schema: dict[str, Any]) -> Callable[[Any], list[str]]:
    import jsonschema  # the full validator, for schemas beyond the compiled subset

    validator = jsonschema.validators.validator_for(
        schema, default=jsonschema.Draft202012Validator)(schema)

    def check(value: Any) -> list[str]:
        errors = sorted(validator.iter_errors(value), key=lambda e: list(e.absolute_path))
        return [_where("/".join(map(str, e.absolute_path))) + e.message for e in errors]

    return check


def check_schema(schema: Any) -> None:
    """Raise ValueError if ``schema`` is not a usable JSON Schema object."""
    if not isinstance(schema, dict):
        raise ValueError(f"a schema must be a JSON object, got {type(schema).__name__}")
    try:
        _compile(schema)
    except UnsupportedSchema:
        import jsonschema

        cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
        try:
            cls.check_schema(schema)
        except jsonschema.SchemaError as exc:
            raise ValueError(f"invalid JSON Schema: {exc.message}") from None


def _where(path: str) -> str:
    return f"{path}: " if path else ""


def _compile(schema: Any) -> Check:
    if schema is True or schema == {}:
        return lambda value, path: []
    if schema is False:
        return lambda value, path: [f"{_where(path)}no value is allowed here"]
    if not isinstance(schema, dict) or not set(schema) <= _SUPPORTED:
        raise UnsupportedSchema(schema)
    checks: list[Check] = []

    if "type" in schema:
        names = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        try:
            tests = [_TYPE_TESTS[n] for n in names]
        except (KeyError, TypeError):
            raise UnsupportedSchema(schema) from None
        wanted = " or ".join(names)
        if len(tests) == 1:
            test = tests[0]  # the usual case: no per-value choice between one test and many
        else:
            def test(value: Any) -> bool:
                return any(one(value) for one in tests)

        def check_type(value: Any, path: str) -> list[str]:
            if test(value):
                return []
            return [f"{_where(path)}{value!r} is not of type {wanted}"]

        checks.append(check_type)
    if "enum" in schema:
        options = schema["enum"]
        checks.append(lambda v, p: [] if any(_same(v, o) for o in options)
                      else [f"{_where(p)}{v!r} is not one of {options!r}"])
    if "const" in schema:
        const = schema["const"]
        checks.append(lambda v, p: [] if _same(v, const) else [f"{_where(p)}must be {const!r}"])
    if "anyOf" in schema:
        options = [_compile(s) for s in schema["anyOf"]]
        checks.append(lambda v, p: [] if any(not o(v, p) for o in options)
                      else [f"{_where(p)}{v!r} matches none of the allowed forms"])
    checks += _bounds(schema)
    if {"properties", "required", "additionalProperties"} & set(schema):
        checks.append(_object_check(schema))
    if {"items", "prefixItems", "minItems", "maxItems", "uniqueItems"} & set(schema):
        checks.append(_array_check(schema))

    if len(checks) == 1:
        return checks[0]

    def check_all(value: Any, path: str) -> list[str]:
        for check in checks:
            problems = check(value, path)
            if problems:  # report the first failing rule: later ones would only echo it
                return problems
        return []

    return check_all


def _same(a: Any, b: Any) -> bool:
    # JSON equality: true is not 1.
    return a == b and isinstance(a, bool) == isinstance(b, bool)


def _bounds(schema: dict[str, Any]) -> list[Check]:
    checks: list[Check] = []
    number = lambda v: isinstance(v, int | float) and not isinstance(v, bool)  # noqa: E731
    for key, fails, text in (
        ("minimum", lambda v, n: v < n, "less than the minimum"),
        ("maximum", lambda v, n: v > n, "greater than the maximum"),
        ("exclusiveMinimum", lambda v, n: v <= n, "not greater than"),
        ("exclusiveMaximum", lambda v, n: v >= n, "not less than"),
    ):
        if key in schema:
            limit = schema[key]
            checks.append(lambda v, p, limit=limit, fails=fails, text=text:
                          [f"{_where(p)}{v!r} is {text} {limit}"]
                          if number(v) and fails(v, limit) else [])
    for key, fails, text in (("minLength", lambda v, n: len(v) < n, "shorter than"),
                             ("maxLength", lambda v, n: len(v) > n, "longer than")):
        if key in schema:
            limit = schema[key]
            checks.append(lambda v, p, limit=limit, fails=fails, text=text:
                          [f"{_where(p)}{v!r} is {text} {limit} characters"]
                          if isinstance(v, str) and fails(v, limit) else [])
    return checks


def _object_check(schema: dict[str, Any]) -> Check:
    properties = {name: _compile(s) for name, s in schema.get("properties", {}).items()}
    required = list(schema.get("required", ()))
    extra = schema.get("additionalProperties", True)
    extra_check = None if extra is True else _compile(extra)

    def check(value: Any, path: str) -> list[str]:
        if not isinstance(value, dict):
            return []
        # A plain loop rather than a comprehension: on Python 3.11 a comprehension is a
        # function call of its own, paid on every call of every tool.
        problems = []
        for name in required:
            if name not in value:
                problems.append(f"{_where(path)}{name!r} is a required property")
        for name, item in value.items():
            sub = f"{path}/{name}" if path else name
            if name in properties:
                problems += properties[name](item, sub)
            elif extra_check is not None:
                if extra is False:
                    problems.append(f"{_where(path)}unexpected property {name!r}")
                else:
                    problems += extra_check(item, sub)
        return problems

    return check


def _array_check(schema: dict[str, Any]) -> Check:
    items = _compile(schema["items"]) if "items" in schema else None
    prefix = [_compile(s) for s in schema.get("prefixItems", ())]
    min_items = schema.get("minItems", 0)
    max_items = schema.get("maxItems")
    unique = schema.get("uniqueItems", False)

    def check(value: Any, path: str) -> list[str]:
        if not isinstance(value, list):
            return []
        problems = []
        if len(value) < min_items:
            problems.append(f"{_where(path)}needs at least {min_items} items")
        if max_items is not None and len(value) > max_items:
            problems.append(f"{_where(path)}has more than {max_items} items")
        for i, item in enumerate(value):
            sub = f"{path}/{i}" if path else str(i)
            if i < len(prefix):
                problems += prefix[i](item, sub)
            elif items is not None:
                problems += items(item, sub)
        if unique and len({repr(v) for v in value}) != len(value):
            problems.append(f"{_where(path)}items must be unique")
        return problems

    return check
