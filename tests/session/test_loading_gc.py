"""Opening a session pauses the cyclic garbage collector and always switches it back on."""

from __future__ import annotations

import gc
import io
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tau.session import SessionManager
from tau.session.errors import SessionFileError


def _write_session(path: Path, messages: int, text: str = "hello") -> None:
    lines = [
        {"type": "session", "version": 3, "id": "s1", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/w"}
    ]
    parent = None
    for n in range(messages):
        entry_id = f"{n:08x}"
        message = {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": n}
        lines.append({"type": "message", "id": entry_id, "parentId": parent,
                      "timestamp": "2026-01-01T00:00:00.000Z", "message": message})  # fmt: skip
        parent = entry_id
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))


@pytest.fixture
def collector_on() -> Iterator[None]:
    gc.enable()
    yield
    gc.unfreeze()
    gc.enable()


def test_the_collector_is_on_again_after_a_session_is_opened_and_projected(
    tmp_path: Path, collector_on: None
) -> None:
    path = tmp_path / "s.jsonl"
    _write_session(path, 50)
    manager = SessionManager.open(str(path))
    assert len(manager.build_session_context().messages) == 50
    assert gc.isenabled()


def test_the_collector_is_on_again_when_opening_fails(tmp_path: Path, collector_on: None) -> None:
    with pytest.raises(SessionFileError):
        SessionManager.open(str(tmp_path))  # a folder, not a file
    assert gc.isenabled()


def test_a_collector_that_was_off_stays_off(tmp_path: Path, collector_on: None) -> None:
    path = tmp_path / "s.jsonl"
    _write_session(path, 5)
    gc.disable()
    SessionManager.open(str(path)).build_session_context()
    assert not gc.isenabled()


def test_a_big_session_is_frozen_out_of_later_collections_and_a_small_one_is_not(
    tmp_path: Path, collector_on: None
) -> None:
    small = tmp_path / "small.jsonl"
    _write_session(small, 5)
    big = tmp_path / "big.jsonl"
    _write_session(big, 1700, text="x" * 10_000)  # about 17 MB
    frozen = gc.get_freeze_count()
    SessionManager.open(str(small))
    assert gc.get_freeze_count() == frozen
    manager = SessionManager.open(str(big))
    assert gc.get_freeze_count() > frozen
    assert len(manager.get_entries()) == 1700 and gc.isenabled()


def test_a_paused_block_that_leaves_very_many_objects_has_them_frozen_and_a_small_one_not(
    collector_on: None,
) -> None:
    from tau.ai.transport.gc_pause import BIG_BLOCK_OBJECTS, collector_paused

    gc.collect()
    before = gc.get_freeze_count()
    with collector_paused():
        small = [[] for _ in range(1000)]
    assert gc.get_freeze_count() == before and gc.isenabled()
    with collector_paused():
        big = [[] for _ in range(BIG_BLOCK_OBJECTS + 1000)]
    assert gc.get_freeze_count() >= before + len(big) and gc.isenabled()
    assert small and big


def test_a_run_in_a_process_that_goes_on_leaves_nothing_frozen_and_the_collector_on(
    tmp_path: Path, collector_on: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Start-up freezes what it built when print mode takes over; a run inside a longer-lived
    process (a test, an embedder) unfreezes it afterwards, so the run's garbage is collected."""
    from tau.cli.main import run
    from tau.testing.fake_llm import FakeLLMServer, Turn

    agent = tmp_path / "agent"
    agent.mkdir()
    with FakeLLMServer() as server:
        provider = {"baseUrl": server.url("/v1"), "api": "openai-completions", "apiKey": "x"}
        models = {"providers": {"local": {**provider, "models": [{"id": "m"}]}}}
        (agent / "models.json").write_text(json.dumps(models))
        monkeypatch.setenv("TAU_AGENT_DIR", str(agent))
        monkeypatch.chdir(tmp_path)
        monkeypatch.setattr("sys.stdin", io.StringIO(""))
        gc.collect()
        assert gc.get_freeze_count() == 0
        server.add(Turn(text="ok"))
        assert run(["--model", "local/m", "--no-session", "-p", "hi"]) == 0
        assert gc.get_freeze_count() == 0 and gc.isenabled()
