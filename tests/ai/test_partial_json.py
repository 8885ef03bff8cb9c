"""Tests for tau.ai.partial_json: streaming tool-argument parsing."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from tau.ai.partial_json import parse_streaming_json, repair_json

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(), children, max_size=4),
    max_leaves=12,
)
json_objects = st.dictionaries(st.text(), json_values, max_size=5)


def test_empty_whitespace_and_none_give_an_empty_object() -> None:
    assert parse_streaming_json("") == {}
    assert parse_streaming_json("  \n\t") == {}
    assert parse_streaming_json(None) == {}


def test_a_complete_object_parses_exactly() -> None:
    assert parse_streaming_json('{"path": "a.py", "limit": 3}') == {"path": "a.py", "limit": 3}


def test_an_unterminated_string_value_is_kept_truncated() -> None:
    assert parse_streaming_json('{"path": "src/ma') == {"path": "src/ma"}


def test_an_incomplete_key_is_dropped() -> None:
    assert parse_streaming_json('{"pa') == {}


def test_an_open_array_is_closed() -> None:
    assert parse_streaming_json('{"a": [1, 2') == {"a": [1, 2]}


def test_nested_open_objects_are_closed() -> None:
    assert parse_streaming_json('{"a": {"b": "c') == {"a": {"b": "c"}}


def test_a_raw_newline_inside_a_string_is_repaired() -> None:
    assert parse_streaming_json('{"text": "line1\nline2"}') == {"text": "line1\nline2"}


def test_an_invalid_escape_keeps_its_backslash() -> None:
    assert parse_streaming_json('{"pattern": "a\\qb"}') == {"pattern": "a\\qb"}


def test_a_raw_control_character_in_an_incomplete_string_is_repaired() -> None:
    assert parse_streaming_json('{"text": "x\ny') == {"text": "x\ny"}


def test_garbage_gives_an_empty_object() -> None:
    assert parse_streaming_json("not json") == {}


def test_a_top_level_array_gives_an_empty_object() -> None:
    assert parse_streaming_json("[1, 2, 3]") == {}


def test_a_top_level_null_gives_an_empty_object() -> None:
    assert parse_streaming_json("null") == {}


def test_nan_is_not_accepted_as_a_number() -> None:
    assert parse_streaming_json('{"a": NaN}') == {}


def test_a_lone_surrogate_does_not_raise() -> None:
    assert isinstance(parse_streaming_json('{"a": "\ud800'), dict)


def test_repair_escapes_raw_control_characters_inside_strings() -> None:
    assert repair_json('{"a": "x\ny\tz\x01"}') == '{"a": "x\\ny\\tz\\u0001"}'


def test_repair_doubles_a_backslash_before_an_invalid_escape() -> None:
    assert repair_json('{"a": "\\q"}') == '{"a": "\\\\q"}'


def test_repair_keeps_valid_escapes_and_unicode_escapes() -> None:
    text = '{"a": "\\n\\"\\\\\\/\\u00e9"}'
    assert repair_json(text) == text


def test_repair_treats_a_short_unicode_escape_as_a_literal_backslash() -> None:
    assert repair_json('{"a": "\\u12"}') == '{"a": "\\\\u12"}'


def test_repair_leaves_whitespace_between_tokens_alone() -> None:
    text = '{\n  "a": 1,\n  "b": "x"\n}'
    assert repair_json(text) == text


@given(json_objects)
def test_any_serialised_object_parses_back_to_itself(value: dict[str, Any]) -> None:
    assert parse_streaming_json(json.dumps(value)) == value


@given(json_objects)
def test_the_repair_of_valid_json_is_the_same_json(value: dict[str, Any]) -> None:
    text = json.dumps(value, ensure_ascii=False)
    assert repair_json(text) == text


@given(json_objects, st.data())
def test_every_prefix_of_a_serialised_object_parses_to_an_object_with_known_keys(
    value: dict[str, Any], data: st.DataObject
) -> None:
    text = json.dumps(value)
    cut = data.draw(st.integers(min_value=0, max_value=len(text)))
    assert set(parse_streaming_json(text[:cut])) <= set(value)


@given(st.text())
def test_arbitrary_text_never_raises(text: str) -> None:
    assert isinstance(parse_streaming_json(text), dict)


def test_repair_finds_a_stray_backslash_after_an_escaped_one() -> None:
    assert json.loads(repair_json('{"a": "x\\\\\\q", "b": "\\\\n"}')) == {"a": "x\\\\q", "b": "\\n"}


def test_repair_leaves_a_string_of_valid_escapes_as_it_is() -> None:
    text = '{"content": "line\\nline\\t\\"quoted\\" \\u00e9 \\\\"}'
    assert repair_json(text) is text
