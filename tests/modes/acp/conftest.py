"""The ACP tests' fixture: the real tau against the fake LLM server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from tau_command import TauCommand, tau_command


@pytest.fixture
def tau(tmp_path: Path) -> Iterator[TauCommand]:
    yield from tau_command(tmp_path)
