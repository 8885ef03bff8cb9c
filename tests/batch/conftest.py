"""Fixtures for the ``tau batch`` tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from batch_run import BatchRun, batch_run


@pytest.fixture
def batch(tmp_path: Path) -> Iterator[BatchRun]:
    yield from batch_run(tmp_path)
