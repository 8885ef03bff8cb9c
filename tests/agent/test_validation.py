"""Tool argument validation and coercion (tau.ai.validation; spec 20 §5.2, cases 7-10)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tau.ai import Tool
from tau.ai.validation import ToolArgumentsError, coerce_to_schema, validate_tool_arguments


def _tool(properties: dict[str, Any], required: list[str] | None = None, **extra: Any) -> Tool:
    schema: dict[str, Any] = {"type": "object", "properties": properties, **extra}
    if required:
        schema["required"] = required
    return Tool(name="probe", description="", parameters=schema)


def _one(schema: dict[str, Any], value: Any) -> Any:
    """Validate ``{"v": value}`` against ``{"v": schema}`` and return the coerced value."""
    return validate_tool_arguments(_tool({"v": schema}), {"v": value})["v"]


def test_numeric_strings_become_integers() -> None:
    assert _one({"type": "integer"}, "3") == 3
    assert _one({"type": "integer"}, "3.0") == 3


def test_a_non_numeric_string_for_an_integer_is_reported() -> None:
    with pytest.raises(ToolArgumentsError) as caught:
        _one({"type": "integer"}, "abc")
    assert caught.value.failures == [("v", "'abc' is not of type 'integer'")]


def test_the_scalar_rules_of_each_target_type() -> None:
    assert _one({"type": "boolean"}, "false") is False
    assert _one({"type": "boolean"}, "true") is True
    assert _one({"type": "boolean"}, 1) is True
    assert _one({"type": "boolean"}, None) is False
    assert _one({"type": "string"}, 12) == "12"
    assert _one({"type": "string"}, 1.5) == "1.5"
    assert _one({"type": "string"}, True) == "true"
    assert _one({"type": "string"}, None) == ""
    assert _one({"type": "number"}, None) == 0
    assert _one({"type": "number"}, "2.5") == 2.5
    assert _one({"type": "number"}, False) == 0
    assert _one({"type": "null"}, "") is None
    assert _one({"type": "null"}, 0) is None


def test_any_of_keeps_the_first_member_that_validates() -> None:
    schema = {"anyOf": [{"type": "string"}, {"type": "number"}]}
    assert _one(schema, "5") == "5"
    assert _one({"anyOf": [{"type": "number"}, {"type": "string"}]}, "5") == 5


def test_a_type_list_prefers_a_type_the_value_already_has() -> None:
    assert _one({"type": ["string", "null"]}, None) is None
    assert _one({"type": ["integer", "boolean"]}, "true") is True


def test_coercion_follows_nested_objects_arrays_and_refs() -> None:
    tool = _tool(
        {
            "items": {"type": "array", "items": {"$ref": "#/$defs/entry"}},
            "extra": {"type": "object", "additionalProperties": {"type": "integer"}},
        },
        **{"$defs": {"entry": {"type": "object", "properties": {"n": {"type": "integer"}}}}},
    )
    args = {"items": [{"n": "1"}, {"n": "2"}], "extra": {"a": "7"}}
    assert validate_tool_arguments(tool, args) == {"items": [{"n": 1}, {"n": 2}], "extra": {"a": 7}}


def test_all_of_members_coerce_in_turn() -> None:
    assert _one({"allOf": [{"type": "integer"}, {"minimum": 1}]}, "4") == 4


def test_a_missing_required_property_is_named_in_the_path() -> None:
    with pytest.raises(ToolArgumentsError) as caught:
        validate_tool_arguments(_tool({"path": {"type": "string"}}, ["path"]), {"paht": "x"})
    error = caught.value
    assert error.failures == [("path", "required property is missing")]
    text = str(error)
    assert text.splitlines()[0] == 'Invalid arguments for tool "probe":'
    assert "  - path: required property is missing" in text
    assert text.endswith(json.dumps({"paht": "x"}, indent=2))


def test_nested_failures_use_dotted_paths_and_the_root_is_named() -> None:
    tool = _tool({"opts": {"type": "object", "properties": {"depth": {"type": "integer", "minimum": 0}}}})
    with pytest.raises(ToolArgumentsError) as caught:
        validate_tool_arguments(tool, {"opts": {"depth": -1}})
    assert caught.value.failures[0][0] == "opts.depth"
    closed = Tool(name="t", description="", parameters={"type": "object", "additionalProperties": False})
    with pytest.raises(ToolArgumentsError) as caught:
        validate_tool_arguments(closed, {"x": 1})
    assert caught.value.failures[0][0] == "root"


def test_the_report_quotes_the_arguments_as_received_not_as_coerced() -> None:
    tool = _tool({"n": {"type": "integer"}, "s": {"type": "string", "maxLength": 1}})
    with pytest.raises(ToolArgumentsError) as caught:
        validate_tool_arguments(tool, {"n": "5", "s": "long"})
    assert '"n": "5"' in str(caught.value)


def test_validation_never_changes_the_caller_s_arguments() -> None:
    args = {"v": {"inner": "3"}}
    tool = _tool({"v": {"type": "object", "properties": {"inner": {"type": "integer"}}}})
    assert validate_tool_arguments(tool, args) == {"v": {"inner": 3}}
    assert args == {"v": {"inner": "3"}}


def test_equal_schemas_share_one_compiled_validator() -> None:
    from tau.ai import validation

    first = _tool({"a": {"type": "integer"}})
    second = _tool({"a": {"type": "integer"}})
    validate_tool_arguments(first, {"a": 1})
    validate_tool_arguments(second, {"a": 1})
    assert validation._validator_for(first.parameters) is validation._validator_for(second.parameters)


# -- properties ----------------------------------------------------------------------------------

json_scalars = (
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text()
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=12,
)
scalar_types = st.sampled_from(["string", "number", "integer", "boolean", "null"])


@given(st.integers())
def test_any_integer_written_as_a_string_comes_back_as_that_integer(n: int) -> None:
    assert _one({"type": "integer"}, str(n)) == n


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_any_finite_float_written_as_a_string_comes_back_as_that_number(x: float) -> None:
    assert _one({"type": "number"}, repr(x)) == x


@given(st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.booleans() | st.none())
def test_numbers_booleans_and_null_always_satisfy_a_string_schema(value: Any) -> None:
    result = _one({"type": "string"}, value)
    assert isinstance(result, str)
    if isinstance(value, bool):
        assert result == ("true" if value else "false")


@given(st.text())
def test_strings_become_booleans_only_when_spelled_true_or_false(text: str) -> None:
    result = coerce_to_schema(text, {"type": "boolean"})
    if text in ("true", "false"):
        assert result is (text == "true")
    else:
        assert result == text


@given(json_values, scalar_types)
def test_coercion_is_idempotent(value: Any, type_name: str) -> None:
    schema = {"type": type_name}
    once = coerce_to_schema(value, schema)
    assert coerce_to_schema(once, schema) == once


@given(json_values, scalar_types)
def test_a_value_of_the_right_type_is_left_alone(value: Any, type_name: str) -> None:
    from tau.ai.validation import _is_type

    if _is_type(value, type_name):
        assert coerce_to_schema(value, {"type": type_name}) == value


@given(st.dictionaries(st.sampled_from(["a", "b", "c"]), json_values, max_size=3))
def test_validate_returns_a_copy_and_leaves_its_input_unchanged(args: dict[str, Any]) -> None:
    snapshot = json.dumps(args, sort_keys=True)
    tool = _tool({"a": {"type": "integer"}, "b": {"type": "string"}, "c": {"type": "boolean"}})
    try:
        result = validate_tool_arguments(tool, args)
    except ToolArgumentsError as error:
        assert error.arguments is args
    else:
        assert result is not args
    assert json.dumps(args, sort_keys=True) == snapshot
