"""The plain-schema checker of tau.ai.validation agrees with jsonschema, which it spares importing."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator  # type: ignore[import-untyped]

from tau.ai import Tool
from tau.ai.validation import ToolArgumentsError, _is_plain, _plain_valid, validate_tool_arguments

whole_scalars = st.none() | st.booleans() | st.integers(-5, 5) | st.text(max_size=4)
scalars = whole_scalars | st.floats(-5, 5)


def _json(leaves: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.recursive(
        leaves,
        lambda inner: (
            st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from("abc"), inner, max_size=3)
        ),
    )


json_values = _json(scalars)
type_names = st.sampled_from(["null", "boolean", "integer", "number", "string", "array", "object"])


def _leaf(draw: Any, floats: bool) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": draw(type_names | st.lists(type_names, min_size=1, max_size=2))}
    for keyword, values in (
        ("minimum", st.integers(-3, 3)),
        ("exclusiveMaximum", st.floats(-3, 3)),
        ("minLength", st.integers(0, 3)),
        ("maxItems", st.integers(0, 2)),
        ("enum", st.lists(scalars if floats else whole_scalars, max_size=3)),
        ("description", st.text(max_size=3)),
    ):
        if draw(st.booleans()):
            schema[keyword] = draw(values)
    return schema


@st.composite
def plain_schemas(draw: Any, depth: int = 2, floats: bool = True) -> dict[str, Any]:
    schema = _leaf(draw, floats)
    if depth and draw(st.booleans()):
        schema["type"] = "object"
        names = draw(st.lists(st.sampled_from("abc"), unique=True, max_size=3))
        schema["properties"] = {name: draw(plain_schemas(depth - 1, floats)) for name in names}
        schema["required"] = draw(st.lists(st.sampled_from("abcd"), unique=True, max_size=2))
        schema["additionalProperties"] = draw(st.booleans() | plain_schemas(0, floats))
    elif depth and draw(st.booleans()):
        schema["type"] = "array"
        schema["items"] = draw(plain_schemas(depth - 1, floats))
    return schema


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])
@given(plain_schemas(), json_values)
def test_the_plain_checker_says_valid_only_where_jsonschema_does(schema: dict[str, Any], value: Any) -> None:
    assert _is_plain(schema)
    if _plain_valid(value, schema):
        assert Draft202012Validator(schema).is_valid(value)


@settings(max_examples=100, suppress_health_check=[HealthCheck.too_slow])
@given(plain_schemas(floats=False), _json(whole_scalars))
def test_without_floats_in_enums_or_values_the_plain_checker_agrees_with_jsonschema(
    schema: dict[str, Any], value: Any
) -> None:
    # (With floats, an enum's 1.0 matching 1 is left to jsonschema: "not sure", never a wrong "valid".)
    assert _plain_valid(value, schema) == Draft202012Validator(schema).is_valid(value)


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "properties": {"a": {"anyOf": [{"type": "string"}]}}},
        {"type": "object", "patternProperties": {"^a": {"type": "string"}}},
        {"$schema": "http://json-schema.org/draft-04/schema#", "type": "object"},
        {"type": "object", "properties": {"a": {"$ref": "#/$defs/x"}}, "$defs": {"x": {"type": "string"}}},
        {"type": "object", "properties": {"a": {"type": "decimal"}}},
        {"type": "object", "properties": {"a": True}},
    ],
)
def test_schemas_with_other_keywords_are_left_to_jsonschema(schema: dict[str, Any]) -> None:
    assert not _is_plain(schema)


def test_failing_arguments_of_a_plain_schema_are_reported_as_jsonschema_words_them() -> None:
    tool = Tool(
        name="probe", description="", parameters={"type": "object", "properties": {"n": {"type": "integer"}}}
    )
    with pytest.raises(ToolArgumentsError) as caught:
        validate_tool_arguments(tool, {"n": "abc"})
    assert caught.value.failures == [("n", "'abc' is not of type 'integer'")]


def test_the_built_in_tools_arguments_are_validated_without_importing_jsonschema() -> None:
    probe = (
        "import sys\n"
        "from tau.ai.validation import validate_tool_arguments\n"
        "from tau.tools import create_all_tools\n"
        "tools = {t.name: t for t in create_all_tools('.')}\n"
        "assert validate_tool_arguments(tools['bash'], {'command': 'ls', 'timeout': '5'}) == {'command': 'ls', 'timeout': 5}\n"
        "validate_tool_arguments(tools['read'], {'path': 'a', 'offset': 2})\n"
        "validate_tool_arguments(tools['edit'], {'path': 'a', 'edits': [{'oldText': 'x', 'newText': 'y'}]})\n"
        "print('jsonschema' in sys.modules)\n"
    )
    run = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert run.stdout.strip() == "False"
