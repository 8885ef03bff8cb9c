"""The llama.cpp router as the ``llama.cpp`` provider of a real ``tau`` process (pi's
docs/llama-cpp.md): its loaded models are the provider's, served through the router's ``/v1``."""

from __future__ import annotations

import json
import sys

from fake_llama_router import FakeLlamaRouter
from tau_command import TauCommand

from tau.modes.rpc_client import RpcClient


def test_loaded_router_models_answer_through_the_router(tau: TauCommand) -> None:
    with FakeLlamaRouter({"qwen-small": "loaded", "gemma-tiny": "unloaded"}, api_key="sekrit") as router:
        tau.env.update(LLAMA_BASE_URL=router.url, LLAMA_API_KEY="sekrit")
        done = tau.run("-p", "--provider", "llama.cpp", "--model", "qwen-small", "hi")
        listed = tau.run("--list-models", "llama.cpp")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Hello from qwen-small\n"
    [body] = router.chat_bodies
    assert body["model"] == "qwen-small" and body["max_tokens"] > 0 and "store" not in body
    assert "qwen-small" in listed.stdout and "gemma-tiny" not in listed.stdout  # only loaded models


def test_a_login_credential_names_the_router(tau: TauCommand) -> None:
    with FakeLlamaRouter({"qwen-small": "sleeping"}) as router:
        tau.env.pop("LLAMA_BASE_URL", None)
        # as pi's /login llama.cpp stores a router without a key: no "key" at all
        auth = {"llama.cpp": {"type": "api_key", "env": {"LLAMA_BASE_URL": router.url}}}
        (tau.agent_dir / "auth.json").write_text(json.dumps(auth))
        (tau.agent_dir / "auth.json").chmod(0o600)
        done = tau.run("-p", "--provider", "llama.cpp", "--model", "qwen-small", "hi")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Hello from qwen-small\n"


async def test_slash_llama_without_the_terminal_ui_says_so_over_rpc(tau: TauCommand) -> None:
    with FakeLlamaRouter({"qwen-small": "loaded"}) as router:
        tau.env["LLAMA_BASE_URL"] = router.url
        command = [
            sys.executable,
            "-m",
            "tau",
            "--mode",
            "rpc",
            "--provider",
            "llama.cpp",
            "--model",
            "qwen-small",
        ]
        async with RpcClient(command, cwd=str(tau.work), env=tau.env) as rpc:
            await rpc.call("prompt", message="/llama")
            await rpc.wait_for("extension_ui_request", timeout=30)
    [notice] = [e for e in rpc.lines if e.get("type") == "extension_ui_request"]
    assert (notice["method"], notice["message"]) == ("notify", "/llama is available in interactive mode")
    assert not [c for c in router.calls if c[1].startswith("/models/")]


def test_an_autoloading_router_lists_its_unloaded_presets_and_loads_one_on_its_first_request(
    tau: TauCommand,
) -> None:
    """As pi 1.6: an unloaded preset is a model (chat and classifier) when the router's ``/props``
    says it autoloads; a request to it goes to the router, which loads it."""
    catalog = {"qwen-small": "loaded", "preset-a": "unloaded", "downloaded-b": "unloaded"}
    with FakeLlamaRouter(catalog, presets=frozenset({"preset-a"}), autoload=True) as router:
        tau.env["LLAMA_BASE_URL"] = router.url
        listed = tau.run("--list-models", "llama.cpp")
        done = tau.run("-p", "--provider", "llama.cpp", "--model", "preset-a", "hi")
        after = router.status["preset-a"]
    assert "preset-a" in listed.stdout and "qwen-small" in listed.stdout
    assert "downloaded-b" not in listed.stdout  # not a preset: the router would not load it by itself
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Hello from preset-a\n" and after == "loaded"


def test_a_router_that_does_not_autoload_lists_only_what_is_loaded_and_is_asked_only_when_it_matters(
    tau: TauCommand,
) -> None:
    with FakeLlamaRouter(
        {"qwen-small": "loaded", "preset-a": "unloaded"}, presets=frozenset({"preset-a"})
    ) as router:
        tau.env["LLAMA_BASE_URL"] = router.url
        listed = tau.run("--list-models", "llama.cpp")
        asked = [call for call in router.calls if call[1] == "/props"]
    with FakeLlamaRouter({"qwen-small": "loaded", "other": "unloaded"}, autoload=True) as plain:
        tau.env["LLAMA_BASE_URL"] = plain.url
        listed_plain = tau.run("--list-models", "llama.cpp")
        asked_plain = [call for call in plain.calls if call[1] == "/props"]
    assert "qwen-small" in listed.stdout and "preset-a" not in listed.stdout and len(asked) == 1
    assert "other" not in listed_plain.stdout and asked_plain == []  # no preset: /props is not asked
