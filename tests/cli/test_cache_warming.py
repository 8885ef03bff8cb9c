"""Prompt-cache warming (``cacheWarming``, issue #31), through the real ``tau --mode rpc`` against the
fake server: between prompts tau re-sends the last request with a one-token output limit before the
model's cache lifetime ends, records a ``usage`` entry of kind ``cache_warm``, and stops when the
setting says so or the refresh does not pay."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from tau_command import MODEL, TauCommand, tau_command

from tau.ai.types import Model, ModelCost
from tau.modes.rpc_client import RpcClient
from tau.runtime.cache_warmer import evaluate, warm_delay_s
from tau.testing.fake_llm import RecordedRequest, ScriptedToolCall, Turn, text_turn


@pytest.fixture
def tau(tmp_path: Path) -> Iterator[TauCommand]:
    yield from tau_command(tmp_path)


def configure(tau: TauCommand, *, input_price: float, setting: str | None = None) -> None:
    """A model whose cache lives 11 s (refreshed after 1 s) at ``input_price`` $ per million tokens."""
    models = json.loads((tau.agent_dir / "models.json").read_text())
    models["providers"]["local"]["models"][0].update(
        promptCache={"short": 11}, cost={"input": input_price, "output": 0, "cacheRead": 0, "cacheWrite": 0}
    )
    (tau.agent_dir / "models.json").write_text(json.dumps(models))
    if setting is not None:
        (tau.agent_dir / "settings.json").write_text(json.dumps({"cacheWarming": setting}))


async def prompt_then_wait(tau: TauCommand, seconds: float, until: Callable[[], bool] | None = None) -> None:
    """Prompt, then keep tau running for ``seconds`` or until ``until()`` (by default: a second
    request arrived)."""
    done = until or (lambda: len(tau.server.requests) >= 2)
    command = [sys.executable, "-m", "tau", "--mode", "rpc", *MODEL]
    async with RpcClient(command, cwd=str(tau.work), env=tau.env) as rpc:
        await rpc.call("prompt", message="hello")
        await rpc.wait_for("agent_settled", timeout=30)
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline and not done():
            await asyncio.sleep(0.05)


def usage_entries(tau: TauCommand) -> list[dict[str, Any]]:
    [session] = tau.session_files()
    lines = [json.loads(line) for line in session.read_text().splitlines()]
    return [line for line in lines if line["type"] == "usage"]


def warm_recorded(tau: TauCommand) -> bool:
    """The refresh's usage entry is in the session file (written once its answer has arrived)."""
    return len(tau.session_files()) == 1 and usage_entries(tau) != []


async def test_an_idle_session_re_sends_its_last_request_with_one_output_token(tau: TauCommand) -> None:
    configure(tau, input_price=100_000)  # 10 prompt tokens: a miss costs $1, a refresh saves $0.15
    tau.server.add(text_turn("Hi."), text_turn("."))
    await prompt_then_wait(tau, 5, until=lambda: warm_recorded(tau))
    first, refresh = (r.body for r in tau.server.requests)
    assert refresh["messages"] == first["messages"] and refresh["tools"] == first["tools"]
    assert refresh["max_completion_tokens"] == 1
    [entry] = usage_entries(tau)
    assert (entry["kind"], entry["provider"], entry["model"]) == ("cache_warm", "local", "fake-model")


@pytest.mark.parametrize(("price", "setting"), [(100_000, "off"), (100_000, "streaming"), (1_000, None)])
async def test_no_refresh_when_off_only_while_streaming_or_not_worth_it(
    tau: TauCommand, price: float, setting: str | None
) -> None:
    configure(tau, input_price=price, setting=setting)
    tau.server.add(text_turn("Hi."), text_turn("."))
    await prompt_then_wait(tau, 2.5)
    assert len(tau.server.requests) == 1
    assert usage_entries(tau) == []


def test_the_refresh_comes_at_ninety_percent_of_the_lifetime_at_least_ten_seconds_early() -> None:
    assert warm_delay_s(300) == 270 and warm_delay_s(60) == 50 and warm_delay_s(10) is None


def test_a_refresh_is_worth_it_when_the_expected_saving_reaches_five_cents() -> None:
    model = Model(
        id="m", api="anthropic-messages", provider="p", base_url="", cost=ModelCost(3, 15, 0.3, 3.75)
    )
    idle, streaming = evaluate(model, 100_000, "idle"), evaluate(model, 100_000, "streaming")
    assert round(streaming.miss_cost, 4) == 0.345 and streaming.warm  # $0.375 write - $0.03 read
    assert not idle.warm and round(idle.expected_savings, 4) == round(0.15 * 0.345 - 0.030015, 4)


def test_session_shows_the_setting_and_what_warming_does_now() -> None:
    from tau.modes.interactive.commands import cache_warming_line
    from tau.runtime.cache_warmer import WarmingDecision, WarmingStatus

    decision = WarmingDecision("idle", 0.001, 1.0, 0.15, 0.149, True)
    scheduled = WarmingStatus("scheduled", next_warm_at=1000.0 + 125, decision=decision)
    assert cache_warming_line("idle", scheduled, now=1000.0) == (
        "Cache warming: idle, scheduled, next refresh in 2m 5s (expected savings $0.149, 15% chance of a next request)"
    )
    stopped = WarmingStatus("inactive", "expected savings below $0.05")
    assert (
        cache_warming_line("idle", stopped) == "Cache warming: idle, inactive (expected savings below $0.05)"
    )


def test_a_bad_prompt_cache_lifetime_in_models_json_is_one_clear_error(tau: TauCommand) -> None:
    models = json.loads((tau.agent_dir / "models.json").read_text())
    models["providers"]["local"]["models"][0]["promptCache"] = {"short": -5}
    (tau.agent_dir / "models.json").write_text(json.dumps(models))
    done = tau.run(*MODEL, "-p", "hi")
    assert '"promptCache.short" must be a positive number of seconds, found -5' in done.stderr
    assert "Traceback" not in done.stderr


def test_a_long_tool_run_is_bridged_by_a_refresh_of_the_request_that_asked_for_it(tau: TauCommand) -> None:
    configure(tau, input_price=100_000, setting="streaming")

    def answer(request: RecordedRequest) -> Turn:
        return text_turn("." if request.body.get("max_completion_tokens") == 1 else "Done.")

    tau.server.add(Turn(tool_calls=[ScriptedToolCall("bash", {"command": "sleep 2.5"})]), *[answer] * 6)
    done = tau.run(*MODEL, "-p", "wait")
    assert done.returncode == 0, done.stderr
    first, *refreshes, second = (r.body for r in tau.server.requests)
    assert refreshes and all(r["messages"] == first["messages"] for r in refreshes)  # about one a second
    assert all(r["max_completion_tokens"] == 1 for r in refreshes)
    assert second["messages"][: len(first["messages"])] == first["messages"]
    assert [e["kind"] for e in usage_entries(tau)] == ["cache_warm"] * len(refreshes)


@pytest.mark.parametrize(("price", "action", "refreshed"), [(1_000, "warm", True), (100_000, "stop", False)])
async def test_an_extension_has_the_last_word_on_each_refresh(
    tau: TauCommand, price: float, action: str, refreshed: bool
) -> None:
    configure(tau, input_price=price)
    extension = tau.work.parent / "decide.py"
    extension.write_text(
        "seen = []\n"
        "def setup(tau):\n"
        "    @tau.on('cache_warming_decision')\n"
        "    def decide(event, ctx):\n"
        f"        return {{'action': {action!r}}}\n"
    )
    tau.server.add(text_turn("Hi."), text_turn("."))
    command = [sys.executable, "-m", "tau", "--mode", "rpc", *MODEL, "-e", str(extension)]
    async with RpcClient(command, cwd=str(tau.work), env=tau.env) as rpc:
        await rpc.call("prompt", message="hello")
        await rpc.wait_for("agent_settled", timeout=30)
        deadline = time.monotonic() + (5 if refreshed else 2.5)
        while time.monotonic() < deadline and len(tau.server.requests) < 2:
            await asyncio.sleep(0.05)
    assert (len(tau.server.requests) == 2) is refreshed
    assert [e["kind"] for e in usage_entries(tau)] == (["cache_warm"] if refreshed else [])
