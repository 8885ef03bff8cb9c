"""strict_schema: a tool's JSON Schema in the strict subset, as pi 1.6's makeStrictJsonSchema makes it."""

from __future__ import annotations

import pytest

from tau.ai.strict_schema import UnsupportedStrictSchema, can_be_strict, strict_schema


def test_optional_properties_become_required_and_nullable_and_objects_close() -> None:
    schema = {
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "mode": {"type": "string", "enum": ["a", "b"]},
            "maybe": {"type": ["string", "null"]},
            "options": {
                "type": "object",
                "properties": {"deep": {"type": "boolean"}},
            },
            "tags": {"type": "array", "items": {"type": "object", "properties": {"t": {"type": "string"}}}},
        },
        "required": ["path"],
    }
    before = repr(schema)
    strict = strict_schema(schema)
    assert repr(schema) == before  # the argument is left as it was
    assert strict == {
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "mode": {"anyOf": [{"type": "string", "enum": ["a", "b"]}, {"type": "null"}]},
            "maybe": {"type": ["string", "null"]},  # already takes null
            "options": {
                "anyOf": [
                    {
                        "type": "object",
                        "properties": {"deep": {"anyOf": [{"type": "boolean"}, {"type": "null"}]}},
                        "required": ["deep"],
                        "additionalProperties": False,
                    },
                    {"type": "null"},
                ]
            },
            "tags": {
                "anyOf": [
                    {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "properties": {"t": {"anyOf": [{"type": "string"}, {"type": "null"}]}},
                            "required": ["t"],
                            "additionalProperties": False,
                        },
                    },
                    {"type": "null"},
                ]
            },
        },
        "required": ["path", "mode", "maybe", "options", "tags"],
        "additionalProperties": False,
    }


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "properties": {"a": {"$ref": "#/$defs/a"}}},
        {"type": "object", "properties": {"a": {"oneOf": [{"type": "string"}]}}},
        {"type": "object", "properties": {"a": {}}},  # no type
        {"type": "object", "properties": {"a": {"anyOf": [{"type": "object"}]}}},  # object union
        {"type": "object", "properties": {"a": {"type": "array", "items": [{"type": "string"}]}}},
        {"type": "object", "additionalProperties": True},
        {"type": "object", "properties": {}, "required": ["missing"]},
        {"type": "string"},  # the root is no object
    ],
)
def test_a_schema_the_subset_cannot_say_is_refused(schema: dict[str, object]) -> None:
    with pytest.raises(UnsupportedStrictSchema):
        strict_schema(schema)
    assert not can_be_strict(schema)


def test_a_providers_own_refusals_are_asked() -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer", "minimum": 1}}, "required": ["n"]}
    assert can_be_strict(schema)
    assert not can_be_strict(schema, lambda key, _value: key == "minimum")
