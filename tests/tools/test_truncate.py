"""Tests for tau.tools.truncate: the 2000-line / 50 KB budget."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tau.tools.truncate import (
    DEFAULT_MAX_BYTES,
    LINE_TRUNCATED_MARKER,
    format_size,
    truncate_head,
    truncate_line,
    truncate_tail,
)


def test_text_within_both_limits_is_returned_unchanged() -> None:
    result = truncate_head("a\nb\nc")
    assert result.content == "a\nb\nc"
    assert not result.truncated
    assert result.truncated_by is None
    assert (result.total_lines, result.output_lines, result.total_bytes) == (3, 3, 5)


def test_head_keeps_2000_of_2500_short_lines_and_says_it_cut_by_lines() -> None:
    text = "\n".join(f"line {i}" for i in range(1, 2501))
    result = truncate_head(text)
    assert result.truncated and result.truncated_by == "lines"
    assert result.output_lines == 2000 and result.total_lines == 2500
    assert result.content.split("\n")[-1] == "line 2000"


def test_head_cuts_60kb_in_100_lines_by_bytes_at_a_line_boundary() -> None:
    lines = [f"{i:03d}" + "x" * 611 for i in range(100)]  # 615 bytes per line incl. newline
    result = truncate_head("\n".join(lines))
    assert result.truncated_by == "bytes"
    assert result.output_bytes <= DEFAULT_MAX_BYTES
    assert result.content.split("\n") == lines[: result.output_lines]
    assert result.output_lines == 83


def test_head_with_a_first_line_over_the_byte_limit_returns_nothing() -> None:
    result = truncate_head("x" * 60_000 + "\nshort")
    assert result.content == ""
    assert result.first_line_exceeds_limit
    assert result.truncated_by == "bytes"


def test_tail_of_a_single_60kb_line_keeps_its_last_51200_bytes_at_a_character_boundary() -> None:
    line = "é" * 30_000  # 60 000 bytes of two-byte characters
    result = truncate_tail(line)
    assert result.last_line_partial and result.truncated_by == "bytes"
    assert result.output_bytes == len(result.content.encode()) <= DEFAULT_MAX_BYTES
    assert result.content == "é" * (DEFAULT_MAX_BYTES // 2)


def test_tail_keeps_the_last_2000_lines_of_seq_3000_output() -> None:
    text = "".join(f"{i}\n" for i in range(1, 3001))
    result = truncate_tail(text)
    assert result.total_lines == 3000  # a final newline ends the last line (pi 1.6 counts so)
    assert result.output_lines == 2000
    assert result.content.split("\n")[0] == "1001" and result.content.endswith("\n3000")


def test_format_size_uses_bytes_then_kilobytes_then_megabytes() -> None:
    assert format_size(512) == "512B"
    assert format_size(51200) == "50.0KB"
    assert format_size(1572864) == "1.5MB"


def test_truncate_line_cuts_at_500_characters_and_marks_the_cut() -> None:
    assert truncate_line("short") == ("short", False)
    text, cut = truncate_line("y" * 600)
    assert cut and text == "y" * 500 + LINE_TRUNCATED_MARKER


def test_truncation_json_uses_pis_keys_without_the_content() -> None:
    data = truncate_head("a\n" * 3000).to_json()
    assert data["truncatedBy"] == "lines" and data["outputLines"] == 2000
    assert "content" not in data


_texts = st.lists(st.text(alphabet=st.characters(blacklist_characters="\n"), max_size=40), max_size=60).map(
    "\n".join
)
_limits = st.tuples(st.integers(min_value=1, max_value=30), st.integers(min_value=1, max_value=400))


@settings(max_examples=300)
@given(_texts, _limits)
def test_head_output_fits_both_limits_and_is_a_prefix_of_whole_lines(
    text: str, limits: tuple[int, int]
) -> None:
    max_lines, max_bytes = limits
    result = truncate_head(text, max_lines, max_bytes)
    lines = text.split("\n")
    if result.truncated:
        assert result.output_bytes == len(result.content.encode("utf-8", "surrogatepass"))
        assert result.output_lines <= max_lines
        assert result.output_bytes <= max_bytes
        kept = result.content.split("\n") if result.output_lines else []
        assert kept == lines[: result.output_lines]
    else:
        assert result.content == text


@settings(max_examples=300)
@given(_texts, _limits)
def test_tail_output_fits_both_limits_and_is_a_suffix_of_whole_lines(
    text: str, limits: tuple[int, int]
) -> None:
    max_lines, max_bytes = limits
    result = truncate_tail(text, max_lines, max_bytes)
    body = text[:-1] if text.endswith("\n") else text  # a final newline ends the last line
    lines = body.split("\n")
    assert result.content == text or body.endswith(result.content)
    assert result.output_bytes == len(result.content.encode("utf-8", "surrogatepass")) or not result.truncated
    if not result.truncated:
        assert result.content == text
    elif result.last_line_partial:
        assert result.output_bytes <= max_bytes
        assert lines[-1].endswith(result.content)
    else:
        assert result.output_lines <= max_lines
        assert result.output_bytes <= max_bytes
        kept = result.content.split("\n") if result.output_lines else []
        assert kept == lines[len(lines) - result.output_lines :]
