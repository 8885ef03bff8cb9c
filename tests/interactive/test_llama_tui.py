"""``/llama`` in the terminal UI against a fake llama.cpp router on 127.0.0.1: the router's models
as pi 1.6 lists them (loaded first, a loaded one's context), loading an unloaded one (asking about
the loaded ones first) with the progress the router's event stream reports, unloading a loaded one,
the provider's models following (pi's docs/llama-cpp.md)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

from fake_hugging_face import FakeHuggingFace
from fake_llama_router import FakeLlamaRouter
from tau_command import TauCommand
from terminal import ENTER, ESCAPE, Terminal

from tau.testing.fake_llm import Turn

Start = Callable[..., Terminal]
LOADED_8K = "loaded · 8k context"  # the fake router starts its models with --ctx-size 8192
DOWN = "\x1b[B"
DOWNLOAD = f"{'Download model…':<36}Hugging Face owner/repository[:quant]"


def _row(name: str, description: str = "") -> str:
    """A row of the list as pi's: the name in a column of at least 36, then what pi says of it."""
    return f"{name:<36}{description}" if description else name


def _open_llama(terminal: Terminal, shows: str | Callable[[], bool]) -> None:
    terminal.type("/llama")
    terminal.send(ENTER)
    terminal.wait_for(shows, where="display")


def _lines(terminal: Terminal, *lines: str) -> Callable[[], bool]:
    """Whether ``lines`` are on screen one under the other (a dialog's title of several lines)."""

    def check() -> bool:
        shown = [line.strip() for line in terminal.display().splitlines()]
        return any(shown[i : i + len(lines)] == list(lines) for i in range(len(shown)))

    return check


def _choose(terminal: Terminal, typed: str, then: str | Callable[[], bool]) -> None:
    """Filter the dialog's list by ``typed``, take the first row, and wait for ``then`` on screen."""
    terminal.type(typed)
    terminal.send(ENTER)
    terminal.wait_for(then, where="display")


def _load_unloading_the_others(terminal: Terminal, model: str, then: str) -> None:
    _choose(terminal, model, "1 model is loaded")
    terminal.type("Unload all")
    terminal.send(ENTER)
    terminal.wait_for(then)


def _in_order(terminal: Terminal, *rows: str) -> Callable[[], bool]:
    def check() -> bool:
        lines = terminal.display().splitlines()
        # a row is a whole line after its two-cell marker ("› " on the chosen one)
        found = [next((i for i, line in enumerate(lines) if line[2:] == row), -1) for row in rows]
        return -1 not in found and found == sorted(found)

    return check


def test_slash_llama_loads_and_unloads_router_models(tau: TauCommand, start_tui: Start) -> None:
    with FakeLlamaRouter({"gemma-tiny": "unloaded", "qwen-small": "loaded"}, api_key="sekrit") as router:
        tau.env.update(LLAMA_BASE_URL=router.url + "/v1/", LLAMA_API_KEY="sekrit")
        terminal = start_tui(cols=140)

        _open_llama(terminal, _lines(terminal, "llama.cpp models", router.url))
        # pi's rows: the loaded model first with its context, then the rest by name, then download
        terminal.wait_for(_in_order(terminal, _row("qwen-small", LOADED_8K), "gemma-tiny", DOWNLOAD))
        _load_unloading_the_others(terminal, "gemma", "Loaded gemma-tiny")
        assert router.status == {"qwen-small": "unloaded", "gemma-tiny": "loaded"}
        # the list again, as the router has it now
        terminal.wait_for(_in_order(terminal, _row("gemma-tiny", LOADED_8K), "qwen-small", DOWNLOAD))
        _choose(terminal, "gemma", "Unload model?")
        terminal.send(ENTER)  # Yes
        terminal.wait_for("Unloaded gemma-tiny")
        assert router.status["gemma-tiny"] == "unloaded"
        posts = [(path, body) for method, path, body in router.calls if method == "POST"]
        assert posts == [
            ("/models/unload", {"model": "qwen-small"}),
            ("/models/load", {"model": "gemma-tiny"}),
            ("/models/unload", {"model": "gemma-tiny"}),
        ]


def test_slash_llama_names_a_router_that_does_not_answer(tau: TauCommand, start_tui: Start) -> None:
    with FakeLlamaRouter({}) as router:
        url = router.url
    tau.env["LLAMA_BASE_URL"] = url  # nothing listens there any more
    terminal = start_tui(cols=200)
    _open_llama(
        terminal,
        _lines(
            terminal,
            "llama.cpp unavailable",
            url,
            "",
            f"Could not reach llama.cpp server at {url}: connect ECONNREFUSED 127.0.0.1:{url.rsplit(':', 1)[1]}",
        ),
    )
    terminal.wait_for(_in_order(terminal, "Retry", "Close"))
    terminal.send(ENTER)  # Retry: still nobody there, the same question
    time.sleep(0.5)
    terminal.wait_for(_lines(terminal, "llama.cpp unavailable", url), where="display")
    terminal.send(ESCAPE)
    terminal.wait_for(lambda: "llama.cpp unavailable" not in terminal.display())


def test_settings_switch_the_llama_builtin_off(tau: TauCommand, start_tui: Start) -> None:
    (tau.agent_dir / "settings.json").write_text(json.dumps({"extensions": ["-builtin:llama.cpp"]}))
    terminal = start_tui(cols=200)
    tau.server.add(Turn(text="no such command here"))
    terminal.type("/llama")
    terminal.send(ENTER)
    terminal.wait_for("no such command here")  # not a command: the text went to the model


def test_without_a_router_slash_llama_says_how_then_login_stores_one_and_reload_reaches_it(
    tau: TauCommand, start_tui: Start
) -> None:
    tau.env.pop("LLAMA_BASE_URL", None)
    with FakeLlamaRouter({"qwen-small": "unloaded"}, api_key="sekrit") as router:
        terminal = start_tui(cols=160)
        terminal.type("/llama")
        terminal.send(ENTER)
        terminal.wait_for("Configure llama.cpp with /login llama.cpp")
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
        _open_llama(terminal, _in_order(terminal, "qwen-small", DOWNLOAD))


def test_escape_stops_a_model_load_and_restores_the_unloaded_models(
    tau: TauCommand, start_tui: Start
) -> None:
    """As pi's /llama: the load's stage from the router's event stream, with its bar; Escape asks
    "Stop loading?"; No goes on waiting, Yes tells the router to unload the model and loads again
    the model unloaded for it."""
    with FakeLlamaRouter(
        {"qwen-small": "loaded", "big-model": "unloaded"}, slow=frozenset({"big-model"})
    ) as router:
        tau.env.update(LLAMA_BASE_URL=router.url)
        terminal = start_tui(cols=140)

        _open_llama(terminal, "big-model")
        _load_unloading_the_others(terminal, "big", "Loading model")
        terminal.wait_for("Loading tensors", where="display")  # the second of three stages, half done
        terminal.wait_for(f"{'█' * 20}{'─' * 20} 50%", where="display")
        terminal.wait_for("esc stop", where="display")
        terminal.send(ESCAPE)
        terminal.wait_for("Stop loading?", where="display")
        terminal.send(ESCAPE)  # No: the load goes on
        terminal.wait_for("esc stop", where="display")
        assert router.status["big-model"] == "loading"
        terminal.send(ESCAPE)
        terminal.wait_for("Stop loading?", where="display")
        terminal.send(ENTER)  # Yes
        terminal.wait_for(_in_order(terminal, _row("qwen-small", LOADED_8K), "big-model"))  # the list again
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
    with a progress view, and the model in the router's list, ordered as pi's (the loaded one first,
    the rest by name, a sleeping one "loaded" too, with its n_ctx). This router has no event stream
    (an older llama.cpp): the catalogue alone says how far it is and when it is done."""
    (tmp_path / "hf").mkdir()
    (tmp_path / "hf" / "token").write_text("hf_from_file\n")
    catalog = {"qwen-small": "loaded", "Sleepy": "sleeping", "busy": "loading"}
    with (
        FakeLlamaRouter(catalog, events=False, contexts={"Sleepy": 32768}) as router,
        _hub() as hub,
    ):
        tau.env.pop("HF_TOKEN", None)
        tau.env.pop("HF_TOKEN_PATH", None)
        tau.env.update(LLAMA_BASE_URL=router.url, HF_ENDPOINT=hub.url, HF_HOME=str(tmp_path / "hf"))
        terminal = start_tui(cols=160)

        _open_llama(terminal, DOWNLOAD)
        _choose(terminal, "Download", "Type at least 2 characters")
        terminal.type("g")
        terminal.wait_for("> g", where="display")
        assert "Type at least 2 characters" in terminal.display() and hub.requests == []
        terminal.type("emma")  # searched as typed, as pi's: once the typing pauses
        terminal.wait_for("→ ggml-org/gemma-3-1b-it-GGUF  1.2M downloads", where="display")
        terminal.wait_for("  unsloth/gemma-3-27b-it-GGUF  900 downloads", where="display")
        terminal.send(DOWN)
        terminal.wait_for("→ unsloth/gemma-3-27b-it-GGUF  900 downloads", where="display")
        terminal.type("1b")  # narrows the answer at once while the hub is asked again
        terminal.wait_for(lambda: "unsloth/" not in terminal.display(), where="display")
        terminal.send("\x7f\x7f")  # Backspace twice: "gemma" again, its answer kept
        terminal.wait_for("unsloth/gemma-3-27b-it-GGUF  900 downloads", where="display")
        terminal.send(ENTER)  # the first row
        terminal.wait_for(
            _lines(terminal, "Select quantization", "ggml-org/gemma-3-1b-it-GGUF"), where="display"
        )
        terminal.wait_for("Q4_K_M · 762.9 MiB · recommended", where="display")
        terminal.wait_for("Q8_0 · 1.02 GiB", where="display")
        terminal.send(ENTER)  # Q4_K_M comes first
        terminal.wait_for("Downloaded ggml-org/gemma-3-1b-it-GGUF:Q4_K_M")
        terminal.wait_for(
            _in_order(
                terminal,
                _row("qwen-small", LOADED_8K),
                _row("busy", "loading"),
                "ggml-org/gemma-3-1b-it-GGUF:Q4_K_M",
                _row("Sleepy", "loaded · 33k context"),
                DOWNLOAD,
            )
        )

        posts = [(path, body) for method, path, body in router.calls if method == "POST"]
        assert posts == [("/models", {"model": "ggml-org/gemma-3-1b-it-GGUF:Q4_K_M"})]
        assert ("GET", "/models", None) in router.calls  # polled while it downloads, then ?reload=1
        assert ("GET", "/models/sse", None) in router.calls  # asked, and told 404
        search, *_, details = hub.requests  # "gemma", maybe "gemma1b" (not again "gemma")
        assert [path for path, _ in hub.requests].count(search[0]) == 1
        assert search == (
            "/api/models?search=gemma&filter=gguf&sort=downloads&direction=-1&limit=20",
            "Bearer hf_from_file",
        )
        assert details == ("/api/models/ggml-org/gemma-3-1b-it-GGUF?blobs=true", "Bearer hf_from_file")


def test_an_exact_gated_repository_warns_and_escape_stops_the_download(
    tau: TauCommand, start_tui: Start
) -> None:
    """The download's bytes as the router's event stream reports them (its catalogue has none
    here), with pi's bar; Escape stops it."""
    model = "unsloth/gemma-3-27b-it-GGUF:UD-Q2_K_XL"
    with FakeLlamaRouter({}, slow=frozenset({model}), polled_progress=False) as router, _hub() as hub:
        tau.env.update(LLAMA_BASE_URL=router.url, HF_ENDPOINT=hub.url, HF_TOKEN="hf_env")
        terminal = start_tui(cols=200)

        _open_llama(terminal, DOWNLOAD)
        _choose(terminal, "Download", "Model name or owner/repository[:quant]")
        # exact: no search
        _choose(
            terminal,
            model,
            _lines(
                terminal,
                "Hugging Face access required",
                "unsloth/gemma-3-27b-it-GGUF",
                "",
                "Accept the access terms at:",
                f"{hub.url}/unsloth/gemma-3-27b-it-GGUF",
                "",
                "The llama.cpp server needs HF_TOKEN with access.",
            ),
        )
        terminal.send(ENTER)  # Continue
        terminal.wait_for("1.00 MiB / 4.00 MiB", where="display")
        terminal.wait_for(f"{'█' * 10}{'─' * 30} 25%", where="display")
        terminal.send(ESCAPE)
        terminal.wait_for("Stop download?", where="display")
        terminal.send(ENTER)  # Yes
        terminal.wait_for(_in_order(terminal, DOWNLOAD))  # the list again, and no word about it, as pi

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

        _open_llama(terminal, "broken")
        _load_unloading_the_others(terminal, "broken", "Model exited with code 1")
        terminal.wait_for("Restoring previously loaded models")
        terminal.wait_for(_in_order(terminal, _row("qwen-small", LOADED_8K), "broken"))
        assert router.status == {"qwen-small": "loaded", "broken": "unloaded"}
        posts = [(path, body) for method, path, body in router.calls if method == "POST"]
        assert posts == [
            ("/models/unload", {"model": "qwen-small"}),
            ("/models/load", {"model": "broken"}),
            ("/models/load", {"model": "qwen-small"}),
        ]
