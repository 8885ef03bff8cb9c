"""A session file path that names a FIFO or device is refused, never renamed over."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from tau.session.errors import SessionWriteError
from tau.session.jsonl import rewrite_file


def test_rewrite_refuses_a_fifo_and_leaves_it_in_place(tmp_path: Path) -> None:
    fifo = tmp_path / "session.jsonl"
    os.mkfifo(fifo)
    with pytest.raises(SessionWriteError, match="not a regular file"):
        rewrite_file(str(fifo), [b"{}\n"])
    assert stat.S_ISFIFO(fifo.stat().st_mode)
    assert [p.name for p in tmp_path.iterdir()] == ["session.jsonl"]
