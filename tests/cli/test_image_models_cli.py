"""Image models in the real tau process (issue #32), as pi 1.6: a codemode script lists OpenRouter's
image models, generates an image against the fake server (OpenRouter's answer) and shows it with
``image()``, so the model's next request carries it; an extension tool does the same through
``ctx.model_registry.generate_images()``. ``/model``'s list (``--list-models``) has no image model."""

from __future__ import annotations

import base64
import json
import re
import textwrap
from pathlib import Path

import pytest
from tau_command import MODEL, TauCommand

from tau.testing.fake_llm import RecordedRequest, ScriptedImage, ScriptedToolCall, Turn

pytest.importorskip("quickjs", reason="the codemode extra is part of the dev install")

PAINTER = "google/gemini-2.5-flash-image"
FOX = "iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAEUlEQVR42mP4z8DAwMDAwAAADfwB/w0jvIUAAAAASUVORK5CYII="

SCRIPT = f"""// @options: {{"timeout_ms": 60000}}
const listed = await models.getAvailableOfType("image", "openrouter");
const painter = await models.getModelOfType("image", "openrouter", "{PAINTER}");
const result = await models.generateImages(painter, {{
  input: [{{ type: "text", text: "A red fox in the snow, watercolor" }}],
}});
if (result.stopReason !== "stop") return result.errorMessage;
for (const block of result.output) {{
  if (block.type === "image") image(block);
  else text(block.text);
}}
text(JSON.stringify({{
  count: listed.length,
  type: painter.type,
  output: painter.output,
  headers: "headers" in painter,
  usage: result.usage.totalTokens,
  chat: (await models.getModelsOfType("chat", "openrouter")).some((m) => m.id === "{PAINTER}"),
}}));
"""

PAINT_EXTENSION = textwrap.dedent(
    f"""
    from tau.extensions import ToolDefinition

    def setup(tau):
        async def paint(call_id, params, signal, on_update, ctx):
            result = await ctx.model_registry.generate_images(
                {{"provider": "openrouter", "id": "{PAINTER}"}},
                {{"input": [{{"type": "text", "text": params["prompt"]}}]}},
                signal,
            )
            if result.stop_reason != "stop":
                raise RuntimeError(result.error_message)
            return {{"content": [block.to_json() for block in result.output]}}

        tau.register_tool(ToolDefinition(
            name="paint",
            description="Paint a picture",
            parameters={{"type": "object", "properties": {{"prompt": {{"type": "string"}}}}, "required": ["prompt"]}},
            execute=paint,
        ))
    """
).lstrip()


def with_openrouter(tau: TauCommand, *, key: str | None = "or-key") -> None:
    """OpenRouter moved to the fake server by models.json, as a proxy would; the local model sees images."""
    path = tau.agent_dir / "models.json"
    models = json.loads(path.read_text())
    models["providers"]["local"]["models"][0]["input"] = ["text", "image"]
    models["providers"]["openrouter"] = {
        "baseUrl": tau.server.url("/api/v1"),
        "headers": {"X-Proxy": "painters-team"},
    }
    path.write_text(json.dumps(models))
    if key is not None:
        tau.env["OPENROUTER_API_KEY"] = key


def script_output(request: RecordedRequest) -> str:
    """What the last codemode script output, as the model's next request carries it."""
    tool = [m for m in request.body["messages"] if m["role"] == "tool"][-1]
    return str(tool["content"]).split("Output:\n", 1)[1]


def codemode(code: str) -> Turn:
    return Turn(tool_calls=[ScriptedToolCall("codemode", {"code": code})])


def test_a_codemode_script_generates_an_image_and_shows_it(tau: TauCommand) -> None:
    with_openrouter(tau)
    tau.server.add(
        codemode(SCRIPT),
        Turn(text="Here is your fox.", images=[ScriptedImage(FOX)]),
        Turn(text="Done."),
    )

    done = tau.run("-p", "--mode", "json", *MODEL, "--tools", "+codemode", "paint a fox")

    assert done.returncode == 0, done.stderr
    _chat, painted, last = tau.server.requests
    assert painted.path == "/api/v1/chat/completions"
    assert painted.headers["authorization"] == "Bearer or-key"
    assert painted.headers["x-proxy"] == "painters-team"
    assert painted.body == {
        "model": PAINTER,
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "A red fox in the snow, watercolor"}]}
        ],
        "stream": False,
        "modalities": ["image", "text"],
    }
    tool, attached = last.body["messages"][3:]
    head, _, rest = tool["content"].partition("==> text 2/2 <==\n")
    assert head.endswith("Output:\n\n==> text 1/2 <==\nHere is your fox.\n")
    facts_line, saved_line = rest.split("\n")
    # As pi's image(), the image is saved to a temporary file, named before it.
    saved = re.fullmatch(r"\[Image saved to (/\S+/tau-codemode-\w+\.png) \(image/png, 74B\)\]", saved_line)
    assert saved is not None, saved_line
    assert Path(saved.group(1)).read_bytes() == base64.b64decode(FOX)
    assert attached["content"][1] == {
        "type": "image_url",
        "image_url": {"url": f"data:image/png;base64,{FOX}"},
    }
    facts = json.loads(facts_line)
    assert facts == {
        "count": 74,
        "type": "image",
        "output": ["image", "text"],
        "headers": False,
        "usage": 15,
        "chat": False,
    }
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    end = next(e for e in events if e.get("type") == "tool_execution_end" and e["toolName"] == "codemode")
    calls = end["result"]["details"]["calls"]
    assert [(c["name"], c["args"], c["status"]) for c in calls] == [
        ("models.generateImages", f"openrouter/{PAINTER}", "ok")
    ]
    assert calls[0]["id"].endswith("/models.generateImages/1")
    assert calls[0]["cost"] == pytest.approx(10 * 0.3e-6 + 5 * 2.5e-6)
    # The generation's usage is the codemode result's, in pi's place, and counts in the session's cost.
    (session,) = tau.session_files()
    lines = [json.loads(line) for line in session.read_text().splitlines()]
    (result,) = [e["message"] for e in lines if e.get("message", {}).get("role") == "toolResult"]
    assert list(result)[:6] == ["role", "toolCallId", "toolName", "content", "details", "usage"]
    assert result["usage"]["totalTokens"] == 15
    assert result["usage"]["cost"]["total"] == pytest.approx(calls[0]["cost"])
    assert end["result"]["usage"] == result["usage"]


def test_without_a_key_the_result_says_why_and_nothing_is_sent(tau: TauCommand) -> None:
    with_openrouter(tau, key=None)
    script = (
        f'const r = await models.generateImages({{ provider: "openrouter", id: "{PAINTER}" }}, '
        '{ input: [{ type: "text", text: "fox" }] });\n'
        "const available = await models.getAvailableOfType('image');\n"
        "return [r.stopReason, r.errorMessage, r.output.length, available.length];"
    )
    tau.server.add(codemode(script), Turn(text="Done."))

    done = tau.run("-p", *MODEL, "--tools", "+codemode", "paint")

    assert done.returncode == 0, done.stderr
    assert len(tau.server.requests) == 2  # no image request
    result = json.loads(script_output(tau.server.requests[-1]))
    assert result[0] == "error" and result[2:] == [0, 0]
    assert result[1].startswith('No API key for provider "openrouter": set OPENROUTER_API_KEY')


def test_images_not_shown_get_a_note_and_a_wrong_model_a_clear_error(tau: TauCommand) -> None:
    with_openrouter(tau)
    script = (
        f'const painter = {{ provider: "openrouter", id: "{PAINTER}" }};\n'
        "await models.generateImages(painter, { input: [{ type: 'text', text: 'fox' }] });\n"
        "try { await models.generateImages({ provider: 'local', id: 'fake-model' }, { input: [] }); }\n"
        "catch (e) { text(e.message); }\n"
        "try { await models.generateImages(painter, { prompt: 'fox' }); } catch (e) { text(e.message); }"
    )
    tau.server.add(codemode(script), Turn(text="no words"), Turn(text="Done."))

    done = tau.run("-p", *MODEL, "--tools", "+codemode", "paint")

    assert done.returncode == 0, done.stderr
    output = script_output(tau.server.requests[-1])
    assert '"local/fake-model" is a chat model, not an image model.' in output
    assert (
        "models.generateImages() context.input must be a non-empty array of blocks, got undefined." in output
    )
    assert output.endswith(
        "Note: models.generateImages() returned 1 image that the script did not show. "
        "Show each image block of result.output with image(block)."
    )


def test_an_extension_generates_images_through_the_model_registry(tau: TauCommand) -> None:
    with_openrouter(tau)
    extension = tau.work / "paint.py"
    extension.write_text(PAINT_EXTENSION, encoding="utf-8")
    tau.server.add(
        Turn(tool_calls=[ScriptedToolCall("paint", {"prompt": "a fox"})]),
        Turn(images=[ScriptedImage(FOX, "image/png")]),
        Turn(text="Done."),
    )

    done = tau.run("-p", *MODEL, "-e", str(extension), "--tools", "paint", "paint a fox")

    assert done.returncode == 0, done.stderr
    painted = tau.server.requests[1]
    assert painted.body["messages"][0]["content"] == [{"type": "text", "text": "a fox"}]
    assert f"data:image/png;base64,{FOX}" in json.dumps(tau.server.requests[-1].body["messages"])


def test_image_models_are_not_in_the_model_list(tau: TauCommand) -> None:
    with_openrouter(tau)
    done = tau.run("--list-models", "gemini-2.5-flash")
    assert done.returncode == 0, done.stderr
    assert "google/gemini-2.5-flash" in done.stdout
    assert PAINTER not in done.stdout


def test_a_generation_matches_pi_16(tau: TauCommand, tmp_path: Path) -> None:
    import subprocess

    from pi16 import pi16_command

    with_openrouter(tau)
    script = (
        f'const painter = await models.getModelOfType("image", "openrouter", "{PAINTER}");\n'
        'const result = await models.generateImages(painter, { input: [{ type: "text", text: "fox" }] });\n'
        "for (const block of result.output) if (block.type === 'image') image(block);\n"
        "const listed = await models.getAvailableOfType('image');\n"
        "const chat = await models.getModelOfType('chat', 'openrouter', 'openai/gpt-4o');\n"
        "return [result.stopReason, result.output.map((b) => b.type), listed.length, Object.keys(painter).sort(),\n"
        "  Object.keys(chat).sort(), chat.maxTokens];"
    )
    for _ in range(2):  # one script for pi, one for tau
        tau.server.add(codemode(script), Turn(text="A fox.", images=[ScriptedImage(FOX)]), Turn(text="Done."))
    pi_dir = tmp_path / "pi"
    pi_dir.mkdir()
    (pi_dir / "models.json").write_text((tau.agent_dir / "models.json").read_text())
    env = tau.env | {"PI_OFFLINE": "1", "PI_CODING_AGENT_DIR": str(pi_dir), "HOME": str(pi_dir)}
    pi = subprocess.run(
        [*pi16_command(), *MODEL, "--mode", "json", "-p", "--tools", "+codemode", "go"],
        cwd=tau.work,
        env=env,
        input="",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert pi.returncode == 0, pi.stderr
    ours = tau.run("-p", "--mode", "json", *MODEL, "--tools", "+codemode", "go")
    assert ours.returncode == 0, ours.stderr
    pi_requests, tau_requests = tau.server.requests[:3], tau.server.requests[3:]
    pi_painted, tau_painted = pi_requests[1], tau_requests[1]
    assert tau_painted.path == pi_painted.path == "/api/v1/chat/completions"
    assert tau_painted.body == pi_painted.body
    for header in ("authorization", "x-proxy", "content-type"):
        assert tau_painted.headers[header] == pi_painted.headers[header], header
    pi_next, tau_next = (r.body["messages"] for r in (pi_requests[2], tau_requests[2]))
    assert tau_next[-1] == pi_next[-1]  # the image the script showed, attached for the model
    # The returned value (pi writes it as compact JSON, tau indented) is the same.
    # Both name the temporary file image() saved the image to: pi before the value, tau after it.
    pi_saved, pi_json = pi_next[-2]["content"].split("Output:\n\n", 1)[1].split("\n", 1)
    tau_json, tau_saved = tau_next[-2]["content"].split("Output:\n", 1)[1].rsplit("\n", 1)
    saved = r"\[Image saved to /\S+/(pi|tau)-codemode-\w+\.png \(image/png, 74B\)\]"
    assert re.fullmatch(saved, pi_saved) and re.fullmatch(saved, tau_saved), (pi_saved, tau_saved)
    pi_value, tau_value = json.loads(pi_json), json.loads(tau_json)
    assert (
        tau_value
        == pi_value
        == [
            "stop",
            ["text", "image"],
            74,
            ["api", "baseUrl", "cost", "id", "input", "inputLimits", "name", "output", "provider", "type"],
            # A chat model's whole entry too (it was a few fields), never its headers.
            [
                "api",
                "baseUrl",
                "compat",
                "contextWindow",
                "cost",
                "id",
                "input",
                "inputLimits",
                "maxTokens",
                "name",
                "provider",
                "reasoning",
                "type",
            ],
            16384,
        ]
    )
    ends = []
    for out in (pi.stdout, ours.stdout):
        events = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
        end = next(e for e in events if e.get("type") == "tool_execution_end" and e["toolName"] == "codemode")
        calls = [
            {k: v for k, v in c.items() if k not in ("id", "durationMs")}
            for c in end["result"]["details"]["calls"]
        ]
        ends.append((calls, end["result"]["usage"]))
    assert ends[1] == ends[0]
