"""LineWindow: the read tool's window of a file fed in chunks equals the window cut from the whole text."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tau.tools.line_window import LineWindow, SelectedLines
from tau.tools.truncate import truncate_head, utf8_len


def _windowed(data: bytes, start: int, end: int | None, chunk: int) -> SelectedLines:
    window = LineWindow(start, end)
    for i in range(0, len(data), chunk):
        window.feed(data[i : i + chunk])
    return window.finish()


def _assert_matches_whole_text(data: bytes, start: int, end: int | None, chunk: int) -> None:
    lines = data.decode("utf-8", "replace").split("\n")
    expected = truncate_head("\n".join(lines[start:end]))
    got = _windowed(data, start, end, chunk)
    assert got.total_lines == len(lines)
    assert got.cut == expected
    if expected.first_line_exceeds_limit:
        assert got.first_line_bytes == utf8_len(lines[start])


texts = st.lists(st.sampled_from(["a", "é", "\n", "\n\n", "xyz", "\u20ac", "\udc80"]), max_size=60).map(
    "".join
)


@settings(max_examples=300)
@given(
    text=texts,
    raw=st.binary(max_size=8),
    start=st.integers(0, 12),
    length=st.none() | st.integers(0, 12),
    chunk=st.integers(1, 9),
)
def test_any_text_in_any_chunks_gives_the_whole_text_window(
    text: str, raw: bytes, start: int, length: int | None, chunk: int
) -> None:
    data = text.encode("utf-8", "surrogatepass") + raw
    _assert_matches_whole_text(data, start, None if length is None else start + length, chunk)


def test_a_window_past_the_line_cap_is_cut_as_the_whole_would_be() -> None:
    data = "".join(f"line {n}\n" for n in range(5000)).encode()
    for start, end in [(0, None), (10, None), (100, 4000), (4990, None)]:
        _assert_matches_whole_text(data, start, end, 4096)


def test_a_window_past_the_byte_cap_is_cut_as_the_whole_would_be() -> None:
    data = ("é" * 30_000 + "\n").encode() * 10
    _assert_matches_whole_text(data, 0, None, 1000)
    _assert_matches_whole_text(data, 3, 6, 65536)


def test_a_first_line_over_the_byte_cap_is_measured_not_kept() -> None:
    data = b"x" * 3_000_000 + b"\nshort\n"
    got = _windowed(data, 0, None, 65536)
    assert got.cut.first_line_exceeds_limit and got.first_line_bytes == 3_000_000
    assert got.total_lines == 3
    _assert_matches_whole_text(data, 0, None, 65536)
