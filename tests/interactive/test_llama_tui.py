"""``/llama`` in the terminal UI against a fake llama.cpp router on 127.0.0.1: the router's models
with their status, loading an unloaded one (asking about the loaded ones first) and unloading a
loaded one, the provider's models following (pi's docs/llama-cpp.md)."""

from __future__ import annotations

import json
from collections.abc import Callable

from fake_llama_router import FakeLlamaRouter
from tau_command import TauCommand
from terminal import ENTER, ESCAPE, Terminal

from tau.testing.fake_llm import Turn

Start = Callable[..., Terminal]


def test_slash_llama_loads_and_unloads_router_models(tau: TauCommand, start_tui: Start) -> None:
    with FakeLlamaRouter({"qwen-small": "loaded", "gemma-tiny": "unloaded"}, api_key="sekrit") as router:
        tau.env.update(LLAMA_BASE_URL=router.url + "/v1/", LLAMA_API_KEY="sekrit")
        terminal = start_tui(cols=140)

        terminal.type("/llama")
        terminal.send(ENTER)
        terminal.wait_for(f"llama.cpp models at {router.url}", where="display")
        terminal.wait_for("qwen-small  (loaded)", where="display")
        terminal.wait_for("gemma-tiny  (unloaded)", where="display")
        terminal.type("gemma")
        terminal.send(ENTER)
        terminal.wait_for("1 model is loaded", where="display")
        terminal.type("Unload all")
        terminal.send(ENTER)
        terminal.wait_for("Loaded gemma-tiny; choose it with /model")
        assert router.status == {"qwen-small": "unloaded", "gemma-tiny": "loaded"}
        terminal.wait_for("gemma-tiny  (loaded)", where="display")  # the list again, as the router has it now
        terminal.type("gemma")
        terminal.send(ENTER)
        terminal.wait_for("Unload model?", where="display")
        terminal.send(ENTER)  # Yes
        terminal.wait_for("Unloaded gemma-tiny")
        assert router.status["gemma-tiny"] == "unloaded"
        posts = [(path, body) for method, path, body in router.calls if method == "POST"]
        assert posts == [
            ("/models/unload", {"model": "qwen-small"}),
            ("/models/load", {"model": "gemma-tiny"}),
            ("/models/unload", {"model": "gemma-tiny"}),
        ]


def test_slash_llama_without_a_router_says_how_to_configure_it(tau: TauCommand, start_tui: Start) -> None:
    tau.env.pop("LLAMA_BASE_URL", None)
    terminal = start_tui(cols=200)
    terminal.type("/llama")
    terminal.send(ENTER)
    terminal.wait_for("Configure llama.cpp: set LLAMA_BASE_URL")


def test_slash_llama_names_a_router_that_does_not_answer(tau: TauCommand, start_tui: Start) -> None:
    with FakeLlamaRouter({}) as router:
        url = router.url
    tau.env["LLAMA_BASE_URL"] = url  # nothing listens there any more
    terminal = start_tui(cols=200)
    terminal.type("/llama")
    terminal.send(ENTER)
    terminal.wait_for(f"llama.cpp: Could not reach llama.cpp server at {url}", where="display")


def test_settings_switch_the_llama_builtin_off(tau: TauCommand, start_tui: Start) -> None:
    (tau.agent_dir / "settings.json").write_text(json.dumps({"extensions": ["-builtin:llama.cpp"]}))
    terminal = start_tui(cols=200)
    tau.server.add(Turn(text="no such command here"))
    terminal.type("/llama")
    terminal.send(ENTER)
    terminal.wait_for("no such command here")  # not a command: the text went to the model


def test_login_llama_cpp_stores_the_router_then_reload_and_slash_llama_reach_it(
    tau: TauCommand, start_tui: Start
) -> None:
    tau.env.pop("LLAMA_BASE_URL", None)
    with FakeLlamaRouter({"qwen-small": "unloaded"}, api_key="sekrit") as router:
        terminal = start_tui(cols=160)
        terminal.type("/login llama.cpp")
        terminal.send(ENTER)
        terminal.wait_for("llama.cpp server URL", where="display")
        terminal.type(router.url + "/v1")
        terminal.send(ENTER)
        terminal.wait_for("API key (optional)", where="display")
        terminal.type("sekrit")
        terminal.send(ENTER)
        terminal.wait_for(f"Saved the llama.cpp router {router.url}")
        stored = json.loads((tau.agent_dir / "auth.json").read_text())["llama.cpp"]
        assert stored == {"type": "api_key", "env": {"LLAMA_BASE_URL": router.url}, "key": "sekrit"}
        terminal.type("/reload")
        terminal.send(ENTER)
        terminal.type("/llama")
        terminal.send(ENTER)
        terminal.wait_for("qwen-small  (unloaded)", where="display")


def test_escape_stops_a_model_load_and_restores_the_unloaded_models(
    tau: TauCommand, start_tui: Start
) -> None:
    """As pi's /llama: Escape during a load asks "Stop loading?"; No goes on waiting, Yes tells the
    router to unload the model and loads again the model unloaded for it."""
    with FakeLlamaRouter(
        {"qwen-small": "loaded", "big-model": "unloaded"}, slow=frozenset({"big-model"})
    ) as router:
        tau.env.update(LLAMA_BASE_URL=router.url)
        terminal = start_tui(cols=140)

        terminal.type("/llama")
        terminal.send(ENTER)
        terminal.wait_for("big-model  (unloaded)", where="display")
        terminal.type("big")
        terminal.send(ENTER)
        terminal.wait_for("1 model is loaded", where="display")
        terminal.type("Unload all")
        terminal.send(ENTER)
        terminal.wait_for("Loading model", where="display")
        terminal.wait_for("esc stop", where="display")
        terminal.send(ESCAPE)
        terminal.wait_for("Stop loading?", where="display")
        terminal.send(ESCAPE)  # No: the load goes on
        terminal.wait_for("esc stop", where="display")
        assert router.status["big-model"] == "loading"
        terminal.send(ESCAPE)
        terminal.wait_for("Stop loading?", where="display")
        terminal.send(ENTER)  # Yes
        terminal.wait_for("Stopped loading big-model")
        terminal.wait_for("qwen-small  (loaded)", where="display")  # the list again, as the router has it now
        assert router.status == {"qwen-small": "loaded", "big-model": "unloaded"}
        posts = [(path, body) for method, path, body in router.calls if method == "POST"]
        assert posts == [
            ("/models/unload", {"model": "qwen-small"}),
            ("/models/load", {"model": "big-model"}),
            ("/models/unload", {"model": "big-model"}),
            ("/models/load", {"model": "qwen-small"}),
        ]
