"""Project trust over the real `tau` process: a folder's own extensions, settings, skills and prompt
templates load only when the folder is trusted; its AGENTS.md always reaches the model."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from tau_command import MODEL, TauCommand

from tau.modes.rpc_client import RpcClient
from tau.testing.fake_llm import Turn

MARKER_EXTENSION = """\
from pathlib import Path


def setup(tau):
    Path(__file__).resolve().parents[2].joinpath("marker.txt").write_text("ran")
"""


def project_extension(tau: TauCommand) -> Path:
    """A project extension that leaves ``marker.txt`` in the folder when it runs; the marker's path."""
    folder = tau.work / ".tau" / "extensions"
    folder.mkdir(parents=True)
    (folder / "mark.py").write_text(MARKER_EXTENSION)
    return tau.work / "marker.txt"


def save_trust(tau: TauCommand, data: object) -> None:
    (tau.agent_dir / "trust.json").write_text(json.dumps(data))


def system_prompt(tau: TauCommand) -> str:
    [first, *_] = tau.server.last_request.body["messages"]
    assert first["role"] == "system"
    return str(first["content"])


def test_print_mode_does_not_run_an_untrusted_folders_extension(tau: TauCommand) -> None:
    marker = project_extension(tau)
    tau.server.add(Turn(text="hello"))
    result = tau.run(*MODEL, "-p", "hi")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "hello\n"
    assert not marker.exists()
    assert not (tau.agent_dir / "trust.json").exists()  # nothing is decided for the user


def test_approve_runs_the_extension_for_this_run_only(tau: TauCommand) -> None:
    marker = project_extension(tau)
    tau.server.add(Turn(text="hello"))
    assert tau.run(*MODEL, "-a", "-p", "hi").returncode == 0
    assert marker.read_text() == "ran"
    assert not (tau.agent_dir / "trust.json").exists()


def test_the_long_approve_flag_trusts_too(tau: TauCommand) -> None:
    marker = project_extension(tau)
    tau.server.add(Turn(text="hello"))
    assert tau.run(*MODEL, "--approve", "-p", "hi").returncode == 0
    assert marker.exists()


def test_a_saved_trust_decision_runs_the_extension(tau: TauCommand) -> None:
    marker = project_extension(tau)
    save_trust(tau, {str(tau.work.resolve()): True})
    tau.server.add(Turn(text="hello"))
    assert tau.run(*MODEL, "-p", "hi").returncode == 0
    assert marker.exists()


def test_a_trusted_parent_folder_covers_the_folders_below_it(tau: TauCommand) -> None:
    marker = project_extension(tau)
    save_trust(tau, {str(tau.work.parent.resolve()): True})
    tau.server.add(Turn(text="hello"))
    assert tau.run(*MODEL, "-p", "hi").returncode == 0
    assert marker.exists()


def test_the_closest_saved_decision_wins(tau: TauCommand) -> None:
    marker = project_extension(tau)
    save_trust(tau, {str(tau.work.parent.resolve()): True, str(tau.work.resolve()): False})
    tau.server.add(Turn(text="hello"))
    assert tau.run(*MODEL, "-p", "hi").returncode == 0
    assert not marker.exists()


def test_no_approve_wins_over_a_saved_trust(tau: TauCommand) -> None:
    marker = project_extension(tau)
    save_trust(tau, {str(tau.work.resolve()): True})
    tau.server.add(Turn(text="hello"))
    assert tau.run(*MODEL, "-na", "-p", "hi").returncode == 0
    assert not marker.exists()
    tau.server.add(Turn(text="hello"))
    assert tau.run(*MODEL, "--no-approve", "-p", "hi").returncode == 0
    assert not marker.exists()


def test_default_project_trust_always_trusts_an_undecided_folder(tau: TauCommand) -> None:
    marker = project_extension(tau)
    (tau.agent_dir / "settings.json").write_text(json.dumps({"defaultProjectTrust": "always"}))
    tau.server.add(Turn(text="hello"))
    assert tau.run(*MODEL, "-p", "hi").returncode == 0
    assert marker.exists()


def test_default_project_trust_never_gives_way_to_a_saved_decision(tau: TauCommand) -> None:
    marker = project_extension(tau)
    (tau.agent_dir / "settings.json").write_text(json.dumps({"defaultProjectTrust": "never"}))
    tau.server.add(Turn(text="hello"), Turn(text="hello"))
    assert tau.run(*MODEL, "-p", "hi").returncode == 0
    assert not marker.exists()
    save_trust(tau, {str(tau.work.resolve()): True})
    assert tau.run(*MODEL, "-p", "hi").returncode == 0
    assert marker.exists()


def test_a_project_cannot_set_default_project_trust_for_itself(tau: TauCommand) -> None:
    marker = project_extension(tau)
    (tau.work / ".tau" / "settings.json").write_text(json.dumps({"defaultProjectTrust": "always"}))
    tau.server.add(Turn(text="hello"))
    assert tau.run(*MODEL, "-p", "hi").returncode == 0
    assert not marker.exists()


@pytest.mark.parametrize("content", ["{not json", "[true]", '{"/somewhere": "yes"}'])
def test_a_damaged_trust_file_trusts_nothing_and_is_reported_and_kept(tau: TauCommand, content: str) -> None:
    marker = project_extension(tau)
    trust_file = tau.agent_dir / "trust.json"
    trust_file.write_text(content)
    tau.server.add(Turn(text="hello"))
    result = tau.run(*MODEL, "-p", "hi")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "hello\n"
    assert not marker.exists()
    [warning] = result.stderr.splitlines()
    assert warning.startswith(f"tau: warning: {trust_file}")
    assert "saved trust decisions are ignored" in warning
    assert trust_file.read_text() == content


def test_json_mode_does_not_run_an_untrusted_folders_extension(tau: TauCommand) -> None:
    marker = project_extension(tau)
    tau.server.add(Turn(text="hello"), Turn(text="hello"))
    result = tau.run(*MODEL, "--mode", "json", "-p", "hi")
    assert result.returncode == 0, result.stderr
    assert not marker.exists()
    assert all(json.loads(line) for line in result.stdout.splitlines())
    assert tau.run(*MODEL, "--mode", "json", "-a", "-p", "hi").returncode == 0
    assert marker.exists()


def rpc_command(*extra: str) -> list[str]:
    return [sys.executable, "-m", "tau", "--mode", "rpc", "--no-session", *MODEL, *extra]


async def test_rpc_mode_does_not_run_an_untrusted_folders_extension(tau: TauCommand) -> None:
    marker = project_extension(tau)
    async with RpcClient(rpc_command(), cwd=str(tau.work), env=tau.env) as rpc:
        state = await rpc.call("get_state")
    assert state["model"]["id"] == "fake-model"
    assert not marker.exists()


async def test_rpc_mode_runs_the_extension_of_a_folder_trusted_in_trust_json(tau: TauCommand) -> None:
    marker = project_extension(tau)
    save_trust(tau, {str(tau.work.resolve()): True})
    async with RpcClient(rpc_command(), cwd=str(tau.work), env=tau.env) as rpc:
        await rpc.call("get_state")
    assert marker.exists()


async def test_rpc_mode_runs_the_extension_with_approve(tau: TauCommand) -> None:
    marker = project_extension(tau)
    async with RpcClient(rpc_command("-a"), cwd=str(tau.work), env=tau.env) as rpc:
        await rpc.call("get_state")
    assert marker.exists()


def test_agents_md_reaches_the_model_when_the_folder_is_not_trusted(tau: TauCommand) -> None:
    project_extension(tau)
    (tau.work / "AGENTS.md").write_text("Always answer in haiku.")
    (tau.work / ".tau" / "APPEND_SYSTEM.md").write_text("Project secret instruction.")
    tau.server.add(Turn(text="hello"))
    assert tau.run(*MODEL, "-p", "hi").returncode == 0
    prompt = system_prompt(tau)
    assert "Always answer in haiku." in prompt
    assert "Project secret instruction." not in prompt


def test_untrusted_project_settings_skills_and_prompts_are_not_loaded(tau: TauCommand) -> None:
    config = tau.work / ".tau"
    (config / "skills" / "deploy").mkdir(parents=True)
    (config / "skills" / "deploy" / "SKILL.md").write_text(
        "---\nname: deploy\ndescription: Ship it\n---\nSteps"
    )
    (config / "prompts").mkdir()
    (config / "prompts" / "review.md").write_text("Review the project carefully")
    (config / "settings.json").write_text(json.dumps({"defaultModel": "missing-model"}))
    tau.server.add(Turn(text="one"), Turn(text="two"))
    result = tau.run(*MODEL, "-p", "/review")
    assert result.returncode == 0, result.stderr
    assert tau.server.last_request.body["messages"][-1]["content"][0]["text"] == "/review"
    assert "deploy" not in system_prompt(tau)
    assert tau.run(*MODEL, "-a", "-p", "/review").returncode == 0
    assert (
        tau.server.last_request.body["messages"][-1]["content"][0]["text"] == "Review the project carefully"
    )
    assert "deploy" in system_prompt(tau)


def test_a_folder_with_nothing_to_trust_asks_nothing_and_writes_nothing(tau: TauCommand) -> None:
    (tau.work / ".tau").mkdir()  # a bare .tau folder protects nothing
    (tau.work / "AGENTS.md").write_text("Be brief.")
    tau.server.add(Turn(text="hello"))
    result = tau.run(*MODEL, "-p", "hi")
    assert result.returncode == 0
    assert result.stderr == ""
    assert "Be brief." in system_prompt(tau)
    assert not (tau.agent_dir / "trust.json").exists()


def test_help_lists_the_trust_flags_and_not_an_untrusted_extensions_flags(tau: TauCommand) -> None:
    folder = tau.work / ".tau" / "extensions"
    folder.mkdir(parents=True)
    (folder / "plan.py").write_text(
        'def setup(tau):\n    tau.register_flag("plan", description="Plan first", type="boolean")\n'
    )
    untrusted = tau.run("--help")
    assert "-a, --approve" in untrusted.stdout and "-na, --no-approve" in untrusted.stdout
    assert "--plan" not in untrusted.stdout
    assert "--plan" in tau.run("-a", "--help").stdout
