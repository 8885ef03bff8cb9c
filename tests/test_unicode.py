"""tau._unicode: text holding surrogates made safe to keep, send and show, as JavaScript would."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from tau._unicode import ascii_json, dumps, escape_lone_surrogates, join_split_pair, well_formed
from tau.ai.types import TextContent, ThinkingContent

# characters() never draws a surrogate: they are drawn as integers, and a pair as its two halves.
ANY_TEXT = st.lists(
    st.integers(0xD800, 0xDFFF).map(chr)
    | st.just("\ud83d\ude00")
    | st.characters(codec=None, exclude_categories=()),
    max_size=30,
).map("".join)


def joined(text: str) -> str:
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")


def test_the_halves_of_a_pair_meeting_at_a_boundary_become_the_character() -> None:
    assert join_split_pair("ab\ud83d", "\ude00c") == ("ab😀", "c")


def test_halves_that_do_not_meet_are_left_alone() -> None:
    assert join_split_pair("ab", "\ude00") is None
    assert join_split_pair("a\ud83d", "x") is None
    assert join_split_pair("", "\ude00") is None


def test_well_formed_joins_pairs_and_replaces_lone_halves() -> None:
    assert well_formed("a\ud83d\ude00 \ud83d \udcff") == "a😀 \ufffd \ufffd"


def test_dumps_escapes_a_lone_half_as_json_stringify_does() -> None:
    assert dumps({"t": "é\ud83d"}) == '{"t":"é\\ud83d"}'


@given(ANY_TEXT)
def test_any_text_dumped_reads_back_as_the_string_javascript_sees(text: str) -> None:
    line = dumps({"k" + text: [text]})
    line.encode("utf-8")
    assert json.loads(line) == {joined("k" + text): [joined(text)]}
    assert json.loads(ascii_json(line)) == json.loads(line)
    assert ascii_json(line).isascii()


@given(ANY_TEXT)
def test_escaping_leaves_json_text_without_surrogates_unchanged(text: str) -> None:
    clean = well_formed(text)
    assert escape_lone_surrogates(json.dumps(clean, ensure_ascii=False)) == json.dumps(
        clean, ensure_ascii=False
    )


@given(ANY_TEXT)
def test_well_formed_text_always_encodes_and_keeps_what_was_valid(text: str) -> None:
    shown = well_formed(text)
    shown.encode("utf-8")
    if joined(text).encode("utf-8", "surrogatepass").decode("utf-8", "replace") == joined(text):
        assert shown == joined(text)


@given(ANY_TEXT, st.lists(st.integers(1, 5), max_size=10))
def test_a_streamed_block_holds_what_its_deltas_make_in_javascript(text: str, sizes: list[int]) -> None:
    pieces, rest = [], text
    for size in sizes:
        pieces.append(rest[:size])
        rest = rest[size:]
    pieces.append(rest)
    block, thinking = TextContent(), ThinkingContent()
    for index, piece in enumerate(pieces):
        block.append(piece)
        thinking.append(piece)
        if index % 2:
            assert block.text == joined("".join(pieces[: index + 1]))  # reading between deltas
    assert block.text == thinking.thinking == joined(text)
