"""Tests for tau.tools.output_accumulator: counters, bounded tail, spill file, snapshots."""

from __future__ import annotations

from pathlib import Path

from tau.tools.output_accumulator import OutputAccumulator
from tau.tools.output_spill import SpillDirectory


def test_small_output_stays_in_memory_and_is_not_spilled(spill: SpillDirectory) -> None:
    acc = OutputAccumulator(spill)
    acc.feed(b"hello\nworld\n")
    acc.finish()
    snap = acc.snapshot()
    assert snap.text == "hello\nworld\n"
    assert not snap.truncation.truncated and snap.full_output_path is None
    assert acc.spill_path is None and spill.path is None


def test_counters_count_lines_bytes_and_the_last_line(spill: SpillDirectory) -> None:
    acc = OutputAccumulator(spill)
    for piece in (b"ab\n", "c\u00e9".encode(), b"d"):
        acc.feed(piece)
    acc.finish()
    assert (acc.raw_bytes, acc.text_bytes, acc.lines, acc.last_line_bytes) == (7, 7, 2, 4)


def test_a_character_split_between_chunks_decodes_once(spill: SpillDirectory) -> None:
    acc = OutputAccumulator(spill)
    encoded = "\u20ac".encode()
    acc.feed(encoded[:1])
    acc.feed(encoded[1:])
    acc.finish()
    assert acc.snapshot().text == "\u20ac"


def test_output_over_the_budget_is_spilled_completely_including_what_came_before(
    spill: SpillDirectory,
) -> None:
    acc = OutputAccumulator(spill, max_lines=10, max_bytes=100)
    chunks = [f"line {i}\n".encode() for i in range(50)]
    for chunk in chunks:
        acc.feed(chunk)
    acc.finish()
    snap = acc.snapshot()
    assert snap.full_output_path is not None
    assert Path(snap.full_output_path).read_bytes() == b"".join(chunks)
    assert snap.text.split("\n")[0] == "line 40" and snap.text.endswith("line 49")  # as pi 1.6 counts
    assert snap.truncation.total_lines == 50 and snap.truncation.output_lines == 10


def test_memory_holds_only_a_bounded_tail_however_much_is_fed(spill: SpillDirectory) -> None:
    acc = OutputAccumulator(spill, max_bytes=1000)
    for i in range(20_000):
        acc.feed(f"{i:08d}\n".encode() * 10)
        assert acc._tail_chars <= 8 * 1000 + 90  # two tail caps plus one chunk
    acc.finish()
    snap = acc.snapshot()
    assert snap.text.endswith("00019999")
    assert snap.truncation.total_lines == 200_000
    assert snap.truncation.output_bytes <= 1000
    assert Path(snap.full_output_path or "").stat().st_size == 20_000 * 90


def test_a_dropped_partial_first_line_is_not_shown(spill: SpillDirectory) -> None:
    acc = OutputAccumulator(spill, max_lines=1000, max_bytes=10)
    acc.feed(b"x" * 100 + b"\nend\n")
    acc.finish()
    snap = acc.snapshot()
    assert snap.text == "end\n"
    assert snap.truncation.truncated and snap.truncation.truncated_by == "bytes"


def test_a_huge_single_chunk_is_cut_to_the_tail_cap(spill: SpillDirectory) -> None:
    acc = OutputAccumulator(spill, max_bytes=100)
    acc.feed(b"y" * 1_000_000)
    assert acc._tail_chars <= 400
    acc.finish()
    snap = acc.snapshot()
    assert snap.truncation.last_line_partial and snap.text == "y" * 100
