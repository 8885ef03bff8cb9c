"""tau.ai.transport.sse: the bytes-level event-stream reader gives httpx-sse's events for any input in any pieces."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator

import httpx
from httpx_sse import EventSource
from hypothesis import given, settings
from hypothesis import strategies as st

from tau.ai.transport.sse import EventStreamParser, ServerSentEvent

PROPERTY = settings(max_examples=500, derandomize=True, deadline=None)


class _Chunks(httpx.SyncByteStream):
    def __init__(self, chunks: list[bytes]) -> None:
        self._chunks = chunks

    def __iter__(self) -> Iterator[bytes]:
        return iter(self._chunks)


def reference_events(chunks: list[bytes]) -> list[tuple[str, str, str, int | None]]:
    """What httpx-sse's public ``EventSource`` yields for a body arriving in ``chunks``."""
    response = httpx.Response(200, headers={"content-type": "text/event-stream"}, stream=_Chunks(chunks))
    return [(e.event, e.data, e.id, e.retry) for e in EventSource(response).iter_sse()]


def parsed_events(chunks: list[bytes]) -> list[tuple[str, str, str, int | None]]:
    parser = EventStreamParser()
    events = [event for chunk in chunks for event in parser.feed(chunk)] + parser.close()
    return [(e.event, e.data, e.id, e.retry) for e in events]


def cut(body: bytes, points: list[int]) -> list[bytes]:
    marks = sorted({min(p, len(body)) for p in points})
    edges = [0, *marks, len(body)]
    return [body[a:b] for a, b in itertools.pairwise(edges)]


# Lines that exercise every rule: each field with and without the space, comments, unknown fields,
# odd values (NUL, non-integers, non-ASCII, invalid UTF-8), and bare field names.
_names = st.sampled_from(
    [b"data", b"event", b"id", b"retry", b"", b"dat", b"Data", b"x", b"data ", b"\xef\xbb\xbfdata"]
)
_values = st.one_of(
    st.sampled_from(
        [b"", b" ", b"  x", b"12", b" 7", b"-3", b"1_0", b"abc", b"\x00", b"a\x00b", b'{"a":1}', b"[DONE]"]
    ),
    st.text(max_size=12).map(lambda s: s.encode("utf-8", "surrogatepass")),
    st.binary(max_size=6),
)
_line = st.one_of(
    st.tuples(_names, st.sampled_from([b":", b": ", b"::", b""]), _values).map(lambda t: b"".join(t)),
    st.builds(lambda v: b":" + v, _values),  # a comment
    st.just(b""),  # a blank line
)
_ending = st.sampled_from([b"\n", b"\r", b"\r\n", b"\n\n", b"\r\n\r\n", b"\r\r"])
_body = st.lists(st.tuples(_line, _ending).map(lambda t: t[0] + t[1]), max_size=24).map(b"".join)
_points = st.lists(st.integers(min_value=0, max_value=400), max_size=12)


@PROPERTY
@given(_body, st.booleans(), _points)
def test_events_match_httpx_sse_for_any_stream_cut_into_any_pieces(
    body: bytes, drop_end: bool, points: list[int]
) -> None:
    if drop_end and body:
        body = body[:-1]  # the body may also end mid-line, or between the CR and LF of a CRLF
    chunks = cut(body, points)
    assert parsed_events(chunks) == reference_events(chunks)


@PROPERTY
@given(st.binary(max_size=200), _points)
def test_events_match_httpx_sse_for_arbitrary_bytes(body: bytes, points: list[int]) -> None:
    chunks = cut(body, points)
    assert parsed_events(chunks) == reference_events(chunks)


@PROPERTY
@given(_body, _points)
def test_the_pieces_a_stream_arrives_in_do_not_change_its_events(body: bytes, points: list[int]) -> None:
    assert parsed_events(cut(body, points)) == parsed_events([body])


def test_one_line_events_are_read_whole() -> None:
    events = parsed_events([b'data: {"a":1}\n\ndata:[DONE]\n\n'])
    assert events == [("message", '{"a":1}', "", None), ("message", "[DONE]", "", None)]


def test_crlf_cr_and_lf_all_end_lines() -> None:
    body = b"event: a\r\ndata: 1\r\n\r\nevent: b\rdata: 2\r\rdata: 3\n\n"
    assert parsed_events([body]) == [("a", "1", "", None), ("b", "2", "", None), ("message", "3", "", None)]


def test_a_crlf_split_between_two_pieces_is_one_line_end() -> None:
    assert parsed_events([b"data: 1\r", b"\n\r", b"\ndata: 2\r\n\r\n"]) == [
        ("message", "1", "", None),
        ("message", "2", "", None),
    ]


def test_comments_are_skipped_and_data_lines_are_joined() -> None:
    body = b": keep-alive\n\ndata: first\n: a comment inside\ndata:second\ndata\n\n"
    assert parsed_events([body]) == [("message", "first\nsecond\n", "", None)]


def test_an_id_holds_for_later_events_and_retry_is_read() -> None:
    body = b"id: 7\ndata: a\n\ndata: b\n\nretry: 1500\ndata: c\n\nid: bad\x00id\ndata: d\n\n"
    assert parsed_events([body]) == [
        ("message", "a", "7", None),
        ("message", "b", "7", None),
        ("message", "c", "7", 1500),
        ("message", "d", "7", None),
    ]


def test_an_event_left_open_when_the_body_ends_is_dropped() -> None:
    assert parsed_events([b"data: done\n\ndata: cut short\n"]) == [("message", "done", "", None)]
    assert parsed_events([b"data: no blank line"]) == []


def test_a_line_that_arrives_byte_by_byte_is_read_once_complete() -> None:
    body = 'data: {"text":"héllo ☃"}\n\n'.encode()
    assert parsed_events([body[i : i + 1] for i in range(len(body))]) == [
        ("message", '{"text":"héllo ☃"}', "", None)
    ]


def test_invalid_utf8_becomes_replacement_characters() -> None:
    assert parsed_events([b"event: \xff\ndata: a\xe2\x82\n\n"]) == [("\ufffd", "a\ufffd", "", None)]


def test_json_object_gives_what_json_loads_gives() -> None:
    for text in [
        '{"a": [1, 2.5, -0.0, 1e400, NaN], "b": {"c": null}}',
        ' {"x": "\\ud83d\\ude00"} ',
        '{"a":1,"a":2}',
    ]:
        event = ServerSentEvent(data=text.encode())
        assert repr(event.json_object()) == repr(json.loads(text))


def test_json_object_is_none_for_anything_but_one_object() -> None:
    for raw in [
        b"[DONE]",
        b"",
        b"[1]",
        b'"s"',
        b"{bad",
        b'{"a":1} trailing',
        b'{"a":"\\ud800"}',
        b'{"a":"\xff"}',
    ]:
        assert ServerSentEvent(data=raw).json_object() is None, raw
