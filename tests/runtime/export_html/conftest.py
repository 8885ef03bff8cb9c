"""Fixtures for the HTML export tests."""

from __future__ import annotations

from pathlib import Path

import pytest
from export_session import BuiltSession, build_session


@pytest.fixture
def built(tmp_path: Path) -> BuiltSession:
    return build_session(tmp_path)
