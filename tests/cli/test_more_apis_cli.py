"""Azure, Codex and Mistral through the real `tau` process: a tool loop after a hand-off from another API.

Each test answers a first prompt with the local OpenAI-compatible model (which reads a file), then
continues the session with the provider under test, configured as a user would (environment
variables, ``models.json`` base URLs, an ``auth.json`` login): its first request carries the other
API's tool call and result, its model calls a tool itself and the loop finishes with its answer.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from codex_token import codex_access_token
from hand_off import add_providers, hand_off
from tau_command import MODEL, TauCommand

from tau.testing.fake_llm import Fault, Turn


def test_azure_runs_a_tool_loop_after_ahand_off(tau: TauCommand) -> None:
    tau.env.update(
        AZURE_OPENAI_API_KEY="azure-key",
        AZURE_OPENAI_BASE_URL=tau.server.url("/openai/v1"),
        AZURE_OPENAI_DEPLOYMENT_NAME_MAP="gpt-4.1=team-gpt41",
    )
    requests = hand_off(tau, "--provider", "azure", "--model", "gpt-4.1", api="azure-openai-responses")
    for request in requests:
        assert request.headers["api-key"] == "azure-key"
        assert request.query == "api-version=v1"
        assert request.body["model"] == "team-gpt41"
    calls = [item for item in requests[0].body["input"] if item.get("type") == "function_call"]
    assert [call["call_id"] for call in calls] == ["call_local_1"]


def test_azure_names_a_missing_deployment_in_one_line(tau: TauCommand) -> None:
    tau.env.update(AZURE_OPENAI_API_KEY="azure-key", AZURE_OPENAI_BASE_URL=tau.server.url("/openai/v1"))
    tau.server.add(Turn(fault=Fault("status", status=404)))
    result = tau.run("--provider", "azure", "--model", "gpt-4.1", "-p", "hi")
    assert result.returncode != 0
    assert "Traceback" not in result.stderr
    assert "Azure OpenAI deployment 'gpt-4.1' does not exist" in result.stderr
    assert "AZURE_OPENAI_DEPLOYMENT_NAME_MAP=gpt-4.1=<deployment>" in result.stderr


def test_codex_runs_a_tool_loop_with_a_stored_login_over_pis_websocket(tau: TauCommand) -> None:
    tau.server.codex_websocket = True
    token = codex_access_token("acct-cli")
    login = {"type": "oauth", "access": token, "refresh": "r", "expires": int(time.time() * 1000) + 3_600_000}
    (tau.agent_dir / "auth.json").write_text(json.dumps({"openai-codex": {**login, "accountId": "acct-cli"}}))
    (tau.agent_dir / "auth.json").chmod(0o600)
    add_providers(tau, {"openai-codex": {"baseUrl": tau.server.url("/backend-api")}})
    requests = hand_off(
        tau, "--provider", "openai-codex", "--model", "gpt-6.2-sol", api="openai-codex-responses"
    )
    for request in requests:
        assert request.headers["authorization"] == f"Bearer {token}"
        assert request.headers["chatgpt-account-id"] == "acct-cli"
        assert request.body["store"] is False
        assert request.headers["session-id"] == request.body["prompt_cache_key"]
    # The tool loop's second call goes on the same socket, continuing the first response.
    assert [request.method for request in requests] == ["WEBSOCKET", "WEBSOCKET"]
    assert requests[0].client_port == requests[1].client_port
    assert requests[1].body["previous_response_id"].startswith("resp_")
    assert "alpha-content" not in json.dumps(requests[1].body)  # only what came after that response


def test_codex_over_http_sends_pis_zstd_body_and_plain_json_without_zstandard(
    tau: TauCommand, tmp_path: Path
) -> None:
    import zstandard

    token = codex_access_token("acct-cli")
    login = {"type": "oauth", "access": token, "refresh": "r", "expires": int(time.time() * 1000) + 3_600_000}
    (tau.agent_dir / "auth.json").write_text(json.dumps({"openai-codex": {**login, "accountId": "acct-cli"}}))
    (tau.agent_dir / "auth.json").chmod(0o600)
    add_providers(tau, {"openai-codex": {"baseUrl": tau.server.url("/backend-api")}})
    codex = ("--provider", "openai-codex", "--model", "gpt-6.2-sol", "-p", "hi")
    tau.server.add(Turn(text="packed"))  # the fake refuses the WebSocket: pi's transport falls back to HTTP
    result = tau.run(*codex)
    assert (result.returncode, result.stdout) == (0, "packed\n"), result.stderr
    request = tau.server.last_request
    assert request.headers["content-encoding"] == "zstd"
    assert (
        json.loads(zstandard.ZstdDecompressor().decompressobj().decompress(request.raw_body)) == request.body
    )
    # (a configuration_update item with the thinking level may follow: compat.supportsMidConvoEffort)
    users = [item for item in request.body["input"] if item.get("role") == "user"]
    assert users[-1]["content"][0]["text"] == "hi"

    blocked = tmp_path / "no-zstandard"  # an installation without the zstd extra
    (blocked / "zstandard").mkdir(parents=True)
    (blocked / "zstandard" / "__init__.py").write_text("raise ImportError('not installed')\n")
    tau.env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(blocked), tau.env.get("PYTHONPATH")]))
    tau.server.add(Turn(text="plain"))
    result = tau.run(*codex)
    assert (result.returncode, result.stdout) == (0, "plain\n"), result.stderr
    request = tau.server.last_request
    assert "content-encoding" not in request.headers
    assert json.loads(request.raw_body) == request.body


def test_mistral_runs_a_tool_loop_with_foreign_ids_mapped(tau: TauCommand) -> None:
    tau.env["MISTRAL_API_KEY"] = "mistral-key"
    add_providers(tau, {"mistral": {"baseUrl": tau.server.url("/mistral")}})
    requests = hand_off(
        tau, "--provider", "mistral", "--model", "devstral-medium-latest", api="mistral-conversations"
    )
    assert requests[0].headers["authorization"] == "Bearer mistral-key"
    sent_ids = {
        call["id"] for message in requests[1].body["messages"] for call in message.get("tool_calls") or []
    }
    assert len(sent_ids) == 2
    assert all(len(call_id) == 9 and call_id.isalnum() for call_id in sent_ids)  # the fake refuses others


# Runs tau's entry point in this interpreter and reports which of the named modules it loaded.
_PROBE = """
import json, sys
from tau.cli.main import run
code = run(sys.argv[2:])
sys.stdout.flush()
sys.stderr.write(json.dumps([code, sorted(m for m in json.loads(sys.argv[1]) if m in sys.modules)]))
"""


def test_an_openai_compatible_run_imports_none_of_the_new_providers(tau: TauCommand) -> None:
    tau.server.add(Turn(text="ok"))
    new = [
        f"tau.ai.providers.{name}"
        for name in ("azure_openai_responses", "openai_codex_responses", "mistral_conversations")
    ]
    watched = ["tau.ai.providers.openai_completions", *new]
    run = subprocess.run(
        [sys.executable, "-c", _PROBE, json.dumps(watched), *MODEL, "-p", "hi"],
        cwd=tau.work,
        env=tau.env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert json.loads(run.stderr.splitlines()[-1]) == [0, ["tau.ai.providers.openai_completions"]]


@pytest.mark.parametrize(("transport", "continued"), [("websocket-cached", True), ("websocket", False)])
def test_codex_transport_setting_websocket_cached_continues_on_the_socket_as_pi_does(
    tau: TauCommand, transport: str, continued: bool
) -> None:
    tau.server.codex_websocket = True
    (tau.agent_dir / "settings.json").write_text(json.dumps({"transport": transport}))
    token = codex_access_token("acct-cli")
    login = {"type": "oauth", "access": token, "refresh": "r", "expires": int(time.time() * 1000) + 3_600_000}
    (tau.agent_dir / "auth.json").write_text(json.dumps({"openai-codex": {**login, "accountId": "acct-cli"}}))
    (tau.agent_dir / "auth.json").chmod(0o600)
    add_providers(tau, {"openai-codex": {"baseUrl": tau.server.url("/backend-api")}})
    requests = hand_off(
        tau, "--provider", "openai-codex", "--model", "gpt-6.2-sol", api="openai-codex-responses"
    )
    assert [request.method for request in requests] == ["WEBSOCKET", "WEBSOCKET"]
    # "websocket-cached" sends only what came after the last response; "websocket" the whole input.
    assert ("previous_response_id" in requests[1].body) is continued
    assert ("alpha-content" in json.dumps(requests[1].body)) is not continued
