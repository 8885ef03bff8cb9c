"""Amazon Bedrock through the real ``tau`` process: signed requests, the tool loop, a hand-off from
Anthropic, retried throttling, one-line errors, and no botocore for other providers."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from tau_command import MODEL, TauCommand, tau_command

from tau.testing.fake_llm import Fault, ScriptedToolCall, Turn
from tau.testing.fake_llm.bedrock import EXPIRED_SESSION_TOKEN, FAKE_ACCESS_KEY_ID, FAKE_SECRET_ACCESS_KEY

BEDROCK = ["--provider", "amazon-bedrock", "--model", "us.anthropic.claude-sonnet-4-5-20250929-v1:0"]
ANTHROPIC = ["--provider", "anthropic", "--model", "claude-sonnet-4-5"]


@pytest.fixture
def tau(tmp_path: Path) -> Iterator[TauCommand]:
    """``tau`` with Bedrock and Anthropic routed to the fake server and AWS keys for it."""
    for command in tau_command(tmp_path):
        models = json.loads((command.agent_dir / "models.json").read_text())
        models["providers"]["amazon-bedrock"] = {"baseUrl": command.server.url()}
        models["providers"]["anthropic"] = {"baseUrl": command.server.url()}
        (command.agent_dir / "models.json").write_text(json.dumps(models))
        (command.agent_dir / "settings.json").write_text(json.dumps({"retry": {"baseDelayMs": 1}}))
        env = {k: v for k, v in command.env.items() if not k.startswith("AWS_")}
        env.update(
            AWS_ACCESS_KEY_ID=FAKE_ACCESS_KEY_ID,
            AWS_SECRET_ACCESS_KEY=FAKE_SECRET_ACCESS_KEY,
            AWS_CONFIG_FILE=str(tmp_path / "aws-config"),
            AWS_SHARED_CREDENTIALS_FILE=str(tmp_path / "aws-credentials"),
            AWS_EC2_METADATA_DISABLED="true",
            ANTHROPIC_API_KEY="sk-ant-fake",
        )
        command.env = env
        yield command


def _bedrock_requests(tau: TauCommand) -> list[dict[str, object]]:
    return [r.body for r in tau.server.requests if r.api == "bedrock-converse-stream"]


def test_a_session_started_on_anthropic_continues_on_bedrock_through_a_tool_loop(tau: TauCommand) -> None:
    (tau.work / "notes.txt").write_text("the answer is 42\n")
    tau.server.add(
        Turn(tool_calls=[ScriptedToolCall("read", {"path": "notes.txt"}, id="toolu_01AbC")]),
        Turn(text="The notes say 42."),
        Turn(tool_calls=[ScriptedToolCall("read", {"path": "notes.txt"}, id="tooluse_b1")]),
        Turn(text="Still 42."),
    )
    first = tau.run("-p", *ANTHROPIC, "what do the notes say?")
    assert first.returncode == 0, first.stderr
    second = tau.run("-c", "-p", *BEDROCK, "check again")
    assert second.returncode == 0, second.stderr
    assert second.stdout.strip() == "Still 42."

    handed_off, after_tool = _bedrock_requests(tau)
    turns = handed_off["messages"]  # type: ignore[index]
    assert [t["role"] for t in turns] == ["user", "assistant", "user", "assistant", "user"]
    assert turns[1]["content"][0]["toolUse"] == {
        "toolUseId": "toolu_01AbC",
        "name": "read",
        "input": {"path": "notes.txt"},
    }
    result = turns[2]["content"][0]["toolResult"]
    assert result["toolUseId"] == "toolu_01AbC" and "the answer is 42" in result["content"][0]["text"]
    last = after_tool["messages"][-1]["content"][0]["toolResult"]  # type: ignore[index]
    assert last["toolUseId"] == "tooluse_b1" and last["status"] == "success"
    bedrock_auth = [
        r.headers["authorization"] for r in tau.server.requests if r.api == "bedrock-converse-stream"
    ]
    assert all(a.startswith(f"AWS4-HMAC-SHA256 Credential={FAKE_ACCESS_KEY_ID}/") for a in bedrock_auth)


def test_throttling_is_retried_over_http_and_mid_stream(tau: TauCommand) -> None:
    tau.server.add(
        Turn(fault=Fault("status", status=429, headers={"retry-after": "0"})),
        Turn(text="partial", stop_reason="throttlingException"),
        Turn(text="Recovered."),
    )
    run = tau.run("-p", *BEDROCK, "hi")
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "Recovered."
    assert len(_bedrock_requests(tau)) == 3


def _run_with(tau: TauCommand, env_extra: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tau", *args],
        cwd=tau.work,
        env={**tau.env, **env_extra},
        input="",
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def _one_line_failure(run: subprocess.CompletedProcess[str]) -> str:
    assert run.returncode != 0
    assert "Traceback" not in run.stderr
    lines = [line for line in run.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, run.stderr
    return lines[0]


def test_credential_region_and_install_problems_are_one_line_each(tau: TauCommand, tmp_path: Path) -> None:
    expired = _run_with(tau, {"AWS_SESSION_TOKEN": EXPIRED_SESSION_TOKEN}, "-p", *BEDROCK, "hi")
    assert (
        "403 Expired AWS credentials: The security token included in the request is expired."
        in _one_line_failure(expired)
    )

    (tmp_path / "aws-config").write_text("[profile no-region]\n")
    no_region = _run_with(tau, {"AWS_PROFILE": "no-region"}, "-p", *BEDROCK, "hi")
    assert "No AWS region for Amazon Bedrock: set AWS_REGION" in _one_line_failure(no_region)

    no_profile = _run_with(tau, {"AWS_PROFILE": "nope", "AWS_ACCESS_KEY_ID": ""}, "-p", *BEDROCK, "hi")
    assert "AWS profile 'nope' not found: check AWS_PROFILE and ~/.aws/config" in _one_line_failure(
        no_profile
    )

    shadow = tmp_path / "shadow" / "botocore"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("raise ImportError(\"No module named 'botocore'\")\n")
    no_extra = _run_with(tau, {"PYTHONPATH": str(shadow.parent)}, "-p", *BEDROCK, "hi")
    assert "Amazon Bedrock needs botocore: pip install 'tau-agent[bedrock]'" in _one_line_failure(no_extra)
    assert len(_bedrock_requests(tau)) == 1  # only the expired one reached the server


# Notes every watched module the process imports, at the moment it is imported (tau may end with
# os._exit, so nothing may wait for the end of the process).
_IMPORT_WATCH = """
import os, sys
WATCHED = ("botocore", "boto3", "tau.ai.providers.bedrock", "tau.ai.providers.openai_completions")
class Watch:
    def find_spec(self, name, path=None, target=None):
        if name in WATCHED or name.split(".")[0] in ("botocore", "boto3"):
            with open(os.environ["IMPORT_LOG"], "a") as log:
                log.write(name + "\\n")
        return None
sys.meta_path.insert(0, Watch())
"""


def test_print_mode_on_an_openai_compatible_server_imports_no_aws_module(
    tau: TauCommand, tmp_path: Path
) -> None:
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(_IMPORT_WATCH)
    log = tmp_path / "imports.log"
    tau.server.add(Turn(text="hello"))
    run = _run_with(tau, {"PYTHONPATH": str(hook), "IMPORT_LOG": str(log)}, "-p", *MODEL, "hi")
    assert run.returncode == 0 and run.stdout.strip() == "hello", run.stderr
    imported = set(log.read_text().split())
    assert imported == {"tau.ai.providers.openai_completions"}  # the watch works, and saw nothing of AWS
