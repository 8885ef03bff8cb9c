"""The SDK examples in ``examples/sdk/`` run against the fake LLM server, with a temporary agent dir."""

from __future__ import annotations

import importlib.util
import json
import os
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from tau.testing.fake_llm import FakeLLMServer, text_turn, tool_turn

SDK_EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "sdk"


def load_example(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"sdk_example_{name}", SDK_EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as fake:
        yield fake


@pytest.fixture
def agent_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, server: FakeLLMServer) -> Path:
    """An agent dir whose only model is ``local/fake-model`` on the fake server (and the default)."""
    directory = tmp_path / "agent"
    directory.mkdir()
    models = {
        "providers": {
            "local": {
                "baseUrl": server.url("/v1"),
                "api": "openai-completions",
                "apiKey": "local-key",
                "models": [{"id": "fake-model", "contextWindow": 100000, "maxTokens": 4096}],
            }
        }
    }
    (directory / "models.json").write_text(json.dumps(models))
    (directory / "settings.json").write_text(
        json.dumps({"defaultProvider": "local", "defaultModel": "fake-model"})
    )
    for name in list(os.environ):
        if name.endswith("_API_KEY") or name == "TAU_SESSION_DIR":
            monkeypatch.delenv(name)
    monkeypatch.setenv("TAU_AGENT_DIR", str(directory))
    return directory


@pytest.fixture
def project(tmp_path: Path) -> str:
    work = tmp_path / "work"
    work.mkdir()
    return str(work)


def test_every_example_is_documented_and_has_main() -> None:
    names = sorted(p.stem for p in SDK_EXAMPLES.glob("*.py"))
    assert names == ["custom_model", "custom_tools", "in_memory_session", "minimal", "subscribe_events"]
    for name in names:
        module = load_example(name)
        assert module.__doc__ and callable(module.main)


async def test_minimal_prints_the_answer(
    server: FakeLLMServer, agent_dir: Path, project: str, capsys: pytest.CaptureFixture[str]
) -> None:
    server.add(text_turn("Hello from the fake model."))
    answer = await load_example("minimal").main("hi", cwd=project)
    assert answer == "Hello from the fake model."
    assert capsys.readouterr().out == "Hello from the fake model.\n"
    assert server.last_request.body["model"] == "fake-model"
    assert len(list((agent_dir / "sessions").rglob("*.jsonl"))) == 1


async def test_custom_tools_runs_the_tool_and_the_model_sees_its_result(
    server: FakeLLMServer, agent_dir: Path, project: str, capsys: pytest.CaptureFixture[str]
) -> None:
    server.add(tool_turn("word_count", {"text": "the quick brown fox"}), text_turn("Four words."))
    answer = await load_example("custom_tools").main("count", cwd=project)
    assert answer == "Four words."
    assert capsys.readouterr().out == "[tool] word_count\nFour words.\n"
    body = server.last_request.body
    assert sorted(t["function"]["name"] for t in body["tools"]) == ["read", "word_count"]
    assert body["messages"][-1]["role"] == "tool" and "4" in json.dumps(body["messages"][-1]["content"])


async def test_custom_model_talks_to_the_given_server(
    server: FakeLLMServer,
    tmp_path: Path,
    project: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    empty_agent_dir = tmp_path / "empty-agent"
    empty_agent_dir.mkdir()
    monkeypatch.setenv("TAU_AGENT_DIR", str(empty_agent_dir))
    server.add(text_turn("Served locally."))
    answer = await load_example("custom_model").main(
        server.url("/v1"), "my-model", api_key="secret", prompt="hi", cwd=project
    )
    assert answer == "Served locally."
    assert capsys.readouterr().out == "local/my-model: Served locally.\n"
    request = server.last_request
    assert request.body["model"] == "my-model"
    assert request.headers.get("Authorization", request.headers.get("authorization")) == "Bearer secret"


async def test_in_memory_session_remembers_and_writes_nothing(
    server: FakeLLMServer, agent_dir: Path, project: str, capsys: pytest.CaptureFixture[str]
) -> None:
    server.add(text_turn("OK"), text_turn("Teal."))
    answers = await load_example("in_memory_session").main(cwd=project)
    assert answers == ["OK", "Teal."]
    assert "session file: None; messages: 4" in capsys.readouterr().out
    contents = json.dumps(server.last_request.body["messages"])
    assert "favourite colour is teal" in contents
    assert not (agent_dir / "sessions").exists() or not list((agent_dir / "sessions").rglob("*.jsonl"))


async def test_subscribe_events_prints_event_types_and_deltas(
    server: FakeLLMServer, agent_dir: Path, project: str, capsys: pytest.CaptureFixture[str]
) -> None:
    server.add(text_turn("Green tests pass / quietly in the night", chunk_size=5))
    await load_example("subscribe_events").main("haiku", cwd=project)
    out = capsys.readouterr().out
    assert "Green tests pass / quietly in the night\n[message_end]" in out
    lines = out.splitlines()
    assert lines[0] == "[agent_start]" and lines[-2:] == ["[agent_end]", "[agent_settled]"]
    assert "[turn_start]" in lines and "[message_start]" in lines
