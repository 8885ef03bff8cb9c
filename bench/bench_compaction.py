"""Compaction without the model call: finding the cut and projecting the context of a long session,
and preparing a compaction request for a large one.

Reported: median wall milliseconds of
- branch walk + ``find_cut_point`` + ``build_session_context`` + the usage-anchored estimate on a
  10 000-entry session (what every automatic check and every compaction starts with);
- ``prepare_compaction`` plus the summariser's prompt text (``convert_to_llm`` and
  ``serialize_conversation`` of what is summarised) for a 2.4 MB session file.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from _common import Figure, median
from bench_session import write_session
from tau.compaction import (
    CompactionSettings,
    estimate_context_tokens,
    find_cut_point,
    prepare_compaction,
    serialize_conversation,
)
from tau.context.convert import convert_to_llm
from tau.session import SessionManager

LONG_ENTRIES = 10_000
LARGE_MB = 2.4


def _time_ms(action: Callable[[], object], repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        action()
        samples.append((time.perf_counter() - started) * 1000)
    return median(samples)


def _large_session(path: Path) -> float:
    """Write a session of about ``LARGE_MB`` megabytes; its size in MB."""
    write_session(path, 2180, output_chars=1650, seed=7)
    return path.stat().st_size / 1_000_000


def run(repeat: int) -> list[Figure]:
    settings = CompactionSettings()
    with tempfile.TemporaryDirectory() as folder:
        long_file = Path(folder) / "long.jsonl"
        write_session(long_file, LONG_ENTRIES, output_chars=120, seed=3)
        long_session = SessionManager.open(str(long_file))
        assert len(long_session.get_entries()) == LONG_ENTRIES

        def cut_and_project() -> None:
            path = long_session.get_branch()
            find_cut_point(path, 0, len(path), settings.keep_recent_tokens)
            estimate_context_tokens(long_session.build_session_context().messages)

        cut_and_project()
        cut_ms = _time_ms(cut_and_project, max(repeat, 10))

        large_file = Path(folder) / "large.jsonl"
        size_mb = _large_session(large_file)
        large_branch = SessionManager.open(str(large_file)).get_branch()

        def prepare() -> None:
            preparation = prepare_compaction(large_branch, settings)
            assert preparation is not None and preparation.messages_to_summarize
            serialize_conversation(convert_to_llm(preparation.messages_to_summarize))
            serialize_conversation(convert_to_llm(preparation.turn_prefix_messages))

        prepare()
        prepare_ms = _time_ms(prepare, max(repeat, 10))
    return [
        Figure(f"compaction: cut point + context, {LONG_ENTRIES} entries", cut_ms, "ms", "<= 50 ms"),
        Figure(
            f"compaction: prepare a {size_mb:.1f} MB session (no model call)", prepare_ms, "ms", "<= 100 ms"
        ),
    ]
