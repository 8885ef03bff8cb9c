"""``/llama`` in the terminal UI against a fake llama.cpp router on 127.0.0.1: the router's models
with their status, loading an unloaded one (asking about the loaded ones first) and unloading a
loaded one, the provider's models following (pi's docs/llama-cpp.md)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from fake_hugging_face import FakeHuggingFace
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


def _hub() -> FakeHuggingFace:
    return FakeHuggingFace(
        {
            "ggml-org/gemma-3-1b-it-GGUF": {
                "downloads": 1_234_567,
                "files": {
                    "gemma-3-1b-it-Q8_0.gguf": 1_100_000_000,
                    "gemma-3-1b-it-Q4_K_M.gguf": 800_000_000,
                    "mmproj-gemma-3-1b-it-F16.gguf": 400_000_000,
                    "README.md": 2_000,
                },
            },
            "unsloth/gemma-3-27b-it-GGUF": {
                "downloads": 900,
                "gated": "auto",
                "files": {
                    "UD-Q2_K_XL/gemma-3-27b-it-UD-Q2_K_XL-00001-of-00002.gguf": 6_000_000_000,
                    "UD-Q2_K_XL/gemma-3-27b-it-UD-Q2_K_XL-00002-of-00002.gguf": 5_000_000_000,
                },
            },
        }
    )


def test_download_model_searches_hugging_face_and_the_router_downloads_it(
    tau: TauCommand, start_tui: Start, tmp_path: Path
) -> None:
    """pi's "Download model…": the hub's GGUF repositories by downloads (with the token of
    $HF_HOME/token), the quantizations (Q4_K_M first, recommended), then POST /models to the router
    with a progress view, and the model in the router's list."""
    (tmp_path / "hf").mkdir()
    (tmp_path / "hf" / "token").write_text("hf_from_file\n")
    with FakeLlamaRouter({"qwen-small": "loaded"}) as router, _hub() as hub:
        tau.env.pop("HF_TOKEN", None)
        tau.env.pop("HF_TOKEN_PATH", None)
        tau.env.update(LLAMA_BASE_URL=router.url, HF_ENDPOINT=hub.url, HF_HOME=str(tmp_path / "hf"))
        terminal = start_tui(cols=160)

        terminal.type("/llama")
        terminal.send(ENTER)
        terminal.wait_for("Download model…", where="display")
        terminal.type("Download")
        terminal.send(ENTER)
        terminal.wait_for("Model name or owner/repository[:quant]", where="display")
        terminal.type("gemma")
        terminal.send(ENTER)
        terminal.wait_for("ggml-org/gemma-3-1b-it-GGUF  1.2M downloads", where="display")
        terminal.wait_for("unsloth/gemma-3-27b-it-GGUF  900 downloads", where="display")
        terminal.type("ggml")
        terminal.send(ENTER)
        terminal.wait_for("Select quantization of ggml-org/gemma-3-1b-it-GGUF", where="display")
        terminal.wait_for("Q4_K_M · 762.9 MiB · recommended", where="display")
        terminal.wait_for("Q8_0 · 1.02 GiB", where="display")
        terminal.send(ENTER)  # Q4_K_M comes first
        terminal.wait_for("Downloaded ggml-org/gemma-3-1b-it-GGUF:Q4_K_M")
        terminal.wait_for("ggml-org/gemma-3-1b-it-GGUF:Q4_K_M  (unloaded)", where="display")

        posts = [(path, body) for method, path, body in router.calls if method == "POST"]
        assert posts == [("/models", {"model": "ggml-org/gemma-3-1b-it-GGUF:Q4_K_M"})]
        assert ("GET", "/models", None) in router.calls  # polled while it downloads, then ?reload=1
        search, details = hub.requests
        assert search == (
            "/api/models?search=gemma&filter=gguf&sort=downloads&direction=-1&limit=20",
            "Bearer hf_from_file",
        )
        assert details == ("/api/models/ggml-org/gemma-3-1b-it-GGUF?blobs=true", "Bearer hf_from_file")


def test_an_exact_gated_repository_warns_and_escape_stops_the_download(
    tau: TauCommand, start_tui: Start
) -> None:
    model = "unsloth/gemma-3-27b-it-GGUF:UD-Q2_K_XL"
    with FakeLlamaRouter({}, slow=frozenset({model})) as router, _hub() as hub:
        tau.env.update(LLAMA_BASE_URL=router.url, HF_ENDPOINT=hub.url, HF_TOKEN="hf_env")
        terminal = start_tui(cols=200)

        terminal.type("/llama")
        terminal.send(ENTER)
        terminal.wait_for("Download model…", where="display")
        terminal.type("Download")
        terminal.send(ENTER)
        terminal.wait_for("Model name or owner/repository[:quant]", where="display")
        terminal.type(model)  # exact: no search
        terminal.send(ENTER)
        terminal.wait_for("Hugging Face access required: unsloth/gemma-3-27b-it-GGUF", where="display")
        terminal.send(ENTER)  # Continue
        terminal.wait_for("Downloading model: 1.00 MiB / 4.00 MiB (25%)", where="display")
        terminal.send(ESCAPE)
        terminal.wait_for("Stop download?", where="display")
        terminal.send(ENTER)  # Yes
        terminal.wait_for(f"Stopped downloading {model}")

        posts = [(path, body) for method, path, body in router.calls if method == "POST"]
        assert posts == [("/models", {"model": model}), ("/models/unload", {"model": model})]
        assert model not in router.status
        assert hub.requests == [("/api/models/unsloth/gemma-3-27b-it-GGUF?blobs=true", "Bearer hf_env")]


def test_a_model_that_fails_to_load_is_one_line_and_the_unloaded_models_come_back(
    tau: TauCommand, start_tui: Start
) -> None:
    with FakeLlamaRouter(
        {"qwen-small": "loaded", "broken": "unloaded"}, failing=frozenset({"broken"})
    ) as router:
        tau.env.update(LLAMA_BASE_URL=router.url)
        terminal = start_tui(cols=140)

        terminal.type("/llama")
        terminal.send(ENTER)
        terminal.wait_for("broken  (unloaded)", where="display")
        terminal.type("broken")
        terminal.send(ENTER)
        terminal.wait_for("1 model is loaded", where="display")
        terminal.type("Unload all")
        terminal.send(ENTER)
        terminal.wait_for("Model exited with code 1")
        terminal.wait_for("Restoring previously loaded models")
        terminal.wait_for("qwen-small  (loaded)", where="display")
        assert router.status == {"qwen-small": "loaded", "broken": "unloaded"}
        posts = [(path, body) for method, path, body in router.calls if method == "POST"]
        assert posts == [
            ("/models/unload", {"model": "qwen-small"}),
            ("/models/load", {"model": "broken"}),
            ("/models/load", {"model": "qwen-small"}),
        ]
