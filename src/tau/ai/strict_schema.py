"""A tool's JSON Schema in the strict subset constrained sampling takes (``strict: true`` tools).

A provider that samples a tool's arguments against its schema (Anthropic's strict tools, where the
model's compat has ``supportsStrictTools``) accepts only a subset of JSON Schema, and wants every
object closed and every property listed as required. ``strict_schema`` rewrites a schema into that
form as pi 1.6 does: each optional property becomes required but nullable (``anyOf`` with
``{"type": "null"}``), each object gets ``additionalProperties: false``. A schema the subset cannot
say raises ``UnsupportedStrictSchema``; a tool that only asks for constrained sampling is then sent
as before, without ``strict``.
"""

from __future__ import annotations

import copy
from collections.abc import Callable

from tau.ai.types import JsonObject

# Keywords no strict subset accepts (references, combinators other than anyOf, conditionals, ...).
_UNSUPPORTED_KEYS = (
    "$ref",
    "$defs",
    "definitions",
    "allOf",
    "oneOf",
    "patternProperties",
    "dependentSchemas",
    "dependencies",
    "unevaluatedProperties",
    "propertyNames",
    "contains",
    "prefixItems",
    "not",
    "if",
    "then",
    "else",
)

KeywordCheck = Callable[[str, object], bool]
"""A provider's own refusals: ``(key, value)`` of a schema node that its strict mode rejects."""


class UnsupportedStrictSchema(ValueError):
    """The schema has something the strict subset cannot express (the message says what)."""


def strict_schema(schema: JsonObject, unsupported: KeywordCheck | None = None) -> JsonObject:
    """A strict copy of ``schema`` (the argument is left as it is); ``UnsupportedStrictSchema``
    when it cannot be made strict, or when ``unsupported`` refuses one of its keywords."""
    out = copy.deepcopy(schema)
    if not isinstance(out, dict):
        raise UnsupportedStrictSchema("root schema must have type object")
    _make_strict(out, unsupported)
    if out.get("type") != "object":
        raise UnsupportedStrictSchema("root schema must have type object")
    return out


def can_be_strict(schema: JsonObject, unsupported: KeywordCheck | None = None) -> bool:
    try:
        strict_schema(schema, unsupported)
    except UnsupportedStrictSchema:
        return False
    return True


def _types(node: JsonObject) -> list[object]:
    kind = node.get("type")
    return [kind] if isinstance(kind, str) else list(kind) if isinstance(kind, list) else []


def _structured(node: object) -> bool:
    if not isinstance(node, dict):
        return False
    types = _types(node)
    return "object" in types or "array" in types or "properties" in node or "items" in node


def _allows_null(node: object) -> bool:
    if not isinstance(node, dict):
        return False
    if "null" in _types(node):
        return True
    if "const" in node and node["const"] is None:
        return True
    enum = node.get("enum")
    if isinstance(enum, list) and None in enum:
        return True
    variants = node.get("anyOf")
    return isinstance(variants, list) and any(_allows_null(v) for v in variants)


def _make_strict(node: object, unsupported: KeywordCheck | None) -> None:
    if not isinstance(node, dict):
        raise UnsupportedStrictSchema("boolean schemas are unsupported")
    for key in _UNSUPPORTED_KEYS:
        if key in node:
            raise UnsupportedStrictSchema(f"{key} schemas are unsupported")
    if unsupported is not None:
        for key, value in node.items():
            if unsupported(key, value):
                raise UnsupportedStrictSchema(f"{key}: {value!r} is unsupported")
    # A node needs a type; an enum counts as one, a bare const does not.
    if "type" not in node and "anyOf" not in node and "enum" not in node:
        raise UnsupportedStrictSchema("schemas without a type are unsupported")
    if "anyOf" in node:
        variants = node["anyOf"]
        if not isinstance(variants, list) or not variants:
            raise UnsupportedStrictSchema("anyOf must contain at least one schema")
        for variant in variants:
            if _structured(variant):
                raise UnsupportedStrictSchema("object and array unions are unsupported")
            _make_strict(variant, unsupported)
    if "items" in node:
        if isinstance(node["items"], list):
            raise UnsupportedStrictSchema("tuple schemas are unsupported")
        _make_strict(node["items"], unsupported)
    is_object = node.get("type") == "object"
    if "properties" in node and not is_object:
        raise UnsupportedStrictSchema("properties require type object")
    if not is_object:
        return
    if "additionalProperties" in node and node["additionalProperties"] is not False:
        raise UnsupportedStrictSchema("schema-valued or true additionalProperties is unsupported")
    properties = node.get("properties", {})
    if not isinstance(properties, dict):
        raise UnsupportedStrictSchema("object properties must be a schema map")
    required = node.get("required")
    if "required" in node and (
        not isinstance(required, list) or not all(isinstance(k, str) for k in required)
    ):
        raise UnsupportedStrictSchema("object required must be a string array")
    wanted = set(required or [])
    if not wanted <= set(properties):
        raise UnsupportedStrictSchema("required contains an unknown property")
    for key, value in properties.items():
        _make_strict(value, unsupported)
        if key not in wanted and not _allows_null(value):
            properties[key] = {"anyOf": [value, {"type": "null"}]}
    node["required"] = list(properties)
    node["additionalProperties"] = False
