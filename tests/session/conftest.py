"""Shared fixtures for the session tests: deterministic ids and clock, pi-format fixture files, messages."""

from __future__ import annotations

import itertools
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tau.ai.types import AssistantMessage, TextContent, ToolCall, ToolResultMessage, Usage, UserMessage
from tau.session import IdSource

FIXTURES = Path(__file__).parent / "fixtures"
START_MS = 1_767_225_600_000  # 2026-01-01T00:00:00.000Z


def deterministic_ids() -> IdSource:
    """Entry ids 00000001, 00000002, …; session ids counted too; the clock ticks 1 ms per reading."""
    uuids = itertools.count(1)
    sessions = itertools.count(1)
    ticks = itertools.count(START_MS)
    return IdSource(
        clock=lambda: next(ticks),
        random_uuid=lambda: f"{next(uuids):08x}-0000-4000-8000-000000000000",
        session_uuid=lambda: f"00000000-0000-7000-8000-{next(sessions):012x}",
    )


@pytest.fixture
def ids() -> IdSource:
    return deterministic_ids()


@pytest.fixture
def fixture_copy(tmp_path: Path) -> Callable[[str], Path]:
    """Copy a fixture file into a fresh folder (the tests may migrate or append to it)."""

    def copy(name: str) -> Path:
        folder = tmp_path / "fixtures"
        folder.mkdir(exist_ok=True)
        return Path(shutil.copy(FIXTURES / name, folder / name))

    return copy


def read_objects(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


class Messages:
    """Builders for the messages the tests append."""

    @staticmethod
    def user(text: str, timestamp: int = START_MS) -> UserMessage:
        return UserMessage([TextContent(text)], timestamp=timestamp)

    @staticmethod
    def assistant(
        text: str, provider: str = "anthropic", model: str = "claude-sonnet-4-5", timestamp: int = START_MS
    ) -> AssistantMessage:
        return AssistantMessage(
            [TextContent(text)],
            api="anthropic-messages",
            provider=provider,
            model=model,
            usage=Usage(input=10, output=5, total_tokens=15),
            timestamp=timestamp,
        )

    @staticmethod
    def tool_call(call_id: str, name: str, arguments: dict[str, Any]) -> AssistantMessage:
        return AssistantMessage(
            [ToolCall(call_id, name, arguments)],
            api="anthropic-messages",
            provider="anthropic",
            model="claude-sonnet-4-5",
            stop_reason="toolUse",
            timestamp=START_MS,
        )

    @staticmethod
    def tool_result(call_id: str, name: str, text: str) -> ToolResultMessage:
        return ToolResultMessage(call_id, name, [TextContent(text)], timestamp=START_MS)


@pytest.fixture
def msg() -> type[Messages]:
    return Messages


@pytest.fixture
def read_jsonl() -> Callable[[Path], list[dict[str, Any]]]:
    return read_objects
