"""Twenty writers of one shared file at once, as real processes: every entry is found afterwards.

Each file tau shares between processes (settings.json at both levels, mcp.json, auth.json,
mcp-auth.json, trust.json, models-store.json, a package's folder) is changed by its real command
where one exists (``tau install``, ``tau mcp add``, ``tau auth login``) and otherwise by a Python
process calling the public function that changes it. A writer that read the file before another
one wrote it, and wrote it back whole, would lose that entry.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from fault_campaign import Campaign, Outcome

WRITERS = 20


def at_once(
    campaign: Campaign, commands: list[list[str]], *, stdin: str = "", cwd: Path | None = None
) -> None:
    """Start every command before waiting for any; each must end cleanly with exit 0."""
    running = [
        subprocess.Popen(
            command,
            cwd=cwd or campaign.work,
            env=campaign.tau.env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for command in commands
    ]
    for process in running:
        try:
            stdout, stderr = process.communicate(stdin, timeout=120)
        except subprocess.TimeoutExpired:
            process.kill()
            stdout, stderr = process.communicate()
            campaign.check(Outcome(None, stdout, stderr, hung=True))
        outcome = campaign.check(Outcome(process.returncode, stdout, stderr))
        assert outcome.code == 0, outcome


def tau(*args: str) -> list[str]:
    return [sys.executable, "-m", "tau", *args]


def python(code: str, *args: str) -> list[str]:
    return [sys.executable, "-c", code, *args]


def read(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def leftovers(folder: Path) -> list[str]:
    """Lock directories and temporary files a writer left behind."""
    return sorted(
        p.name for p in folder.iterdir() if p.name.endswith((".lock", ".tmp")) or p.name.startswith(".")
    )


@pytest.mark.parametrize("local", [False, True], ids=["user", "project"])
def test_twenty_tau_install_at_once_record_every_package(campaign: Campaign, local: bool) -> None:
    for i in range(WRITERS):
        (campaign.work / f"pkg{i}").mkdir()
    scope = ["-l", "--approve"] if local else []
    at_once(campaign, [tau("install", f"./pkg{i}", *scope) for i in range(WRITERS)])
    folder = campaign.work / ".tau" if local else campaign.agent_dir
    settings = read(folder / "settings.json")
    assert sorted(settings["packages"]) == sorted(
        os.path.relpath(campaign.work / f"pkg{i}", folder) for i in range(WRITERS)
    )
    if not local:
        assert settings["retry"] == {"enabled": False, "provider": {"maxRetries": 0}}  # what was there stays
    assert leftovers(folder) == []


def test_twenty_tau_remove_at_once_remove_every_package_and_keep_the_others(campaign: Campaign) -> None:
    kept = campaign.work / "kept"
    kept.mkdir()
    for i in range(WRITERS):
        (campaign.work / f"pkg{i}").mkdir()
    settings_file = campaign.agent_dir / "settings.json"
    entries = [f"../work/pkg{i}" for i in range(WRITERS)]
    settings_file.write_text(json.dumps({"packages": [*entries, "../work/kept"]}))
    at_once(campaign, [tau("remove", f"./pkg{i}") for i in range(WRITERS)])
    assert read(settings_file)["packages"] == ["../work/kept"]


@pytest.mark.parametrize("local", [False, True], ids=["user", "project"])
def test_twenty_tau_mcp_add_at_once_keep_every_server(campaign: Campaign, local: bool) -> None:
    scope = ["-l"] if local else []
    at_once(campaign, [tau("mcp", "add", f"server{i}", *scope, "--", "echo", str(i)) for i in range(WRITERS)])
    path = campaign.work / ".tau" / "mcp.json" if local else campaign.agent_dir / "mcp.json"
    servers = read(path)["mcpServers"]
    assert servers == {f"server{i}": {"command": "echo", "args": [str(i)]} for i in range(WRITERS)}
    assert leftovers(path.parent) == []


def api_key_providers(agent_dir: Path) -> list[str]:
    """Twenty built-in providers whose ``tau auth login --api-key`` only saves the key."""
    from tau.accounts.auth_storage import AuthStorage
    from tau.accounts.model_registry import ModelRegistry
    from tau.accounts.provider_settings import SETTINGS
    from tau.config.paths import models_path

    registry = ModelRegistry(AuthStorage.create(agent_dir), models_path(agent_dir))
    # Providers whose login asks for more than the key (Cloudflare's account and gateway) are left out.
    special = {"local", "google-vertex", *registry.account_listed_providers(), *SETTINGS}
    providers = sorted(set(registry.get_providers()) - special)[:WRITERS]
    assert len(providers) == WRITERS
    return providers


def test_twenty_tau_auth_login_at_once_keep_every_key(campaign: Campaign) -> None:
    providers = api_key_providers(campaign.agent_dir)
    commands = [tau("auth", "login", provider, "--api-key") for provider in providers]
    at_once(campaign, commands, stdin="secret-key\n")
    stored = read(campaign.agent_dir / "auth.json")
    assert stored == {provider: {"type": "api_key", "key": "secret-key"} for provider in providers}
    assert (campaign.agent_dir / "auth.json").stat().st_mode & 0o777 == 0o600


TRUST_WRITER = """
import sys
from tau.config.project_trust import ProjectTrust, TrustUpdate
assert ProjectTrust(sys.argv[1]).save([TrustUpdate(sys.argv[2], True)])
"""


def test_twenty_trust_decisions_saved_at_once_are_all_kept(campaign: Campaign) -> None:
    folders = [campaign.work / f"project{i}" for i in range(WRITERS)]
    for folder in folders:
        folder.mkdir()
    at_once(campaign, [python(TRUST_WRITER, str(campaign.agent_dir), str(folder)) for folder in folders])
    saved = read(campaign.agent_dir / "trust.json")
    assert saved == {os.path.realpath(folder): True for folder in folders}


MODELS_STORE_WRITER = """
import sys
from pathlib import Path
from tau.accounts.models_store import store_models
store_models(sys.argv[2], [{"id": "m-" + sys.argv[2]}], Path(sys.argv[1]))
"""


def test_twenty_model_lists_stored_at_once_are_all_kept(campaign: Campaign) -> None:
    path = campaign.agent_dir / "models-store.json"
    at_once(campaign, [python(MODELS_STORE_WRITER, str(path), f"provider{i}") for i in range(WRITERS)])
    stored = read(path)
    assert {name: entry["models"] for name, entry in stored.items()} == {
        f"provider{i}": [{"id": f"m-provider{i}"}] for i in range(WRITERS)
    }


MCP_AUTH_WRITER = """
import sys
from pathlib import Path
from tau.mcp.oauth_store import FileTokenStorage
name = sys.argv[2]
storage = FileTokenStorage(Path(sys.argv[1]), "mcp__" + name + "|https://example.test/", "https://example.test/")
storage.save_tokens({"access_token": "token-" + name, "token_type": "Bearer"})
"""


def test_twenty_mcp_sign_ins_saved_at_once_are_all_kept(campaign: Campaign) -> None:
    path = campaign.agent_dir / "mcp-auth.json"
    at_once(campaign, [python(MCP_AUTH_WRITER, str(path), f"server{i}") for i in range(WRITERS)])
    stored = read(path)
    assert {key: entry["tokens"]["access_token"] for key, entry in stored.items()} == {
        f"mcp__server{i}|https://example.test/": f"token-server{i}" for i in range(WRITERS)
    }
    assert path.stat().st_mode & 0o777 == 0o600


SETTINGS_WRITER = """
import sys
from tau.config.settings import SettingsManager
settings = SettingsManager.create(sys.argv[1], sys.argv[2])  # read now, saved after the others started
settings.set_nested("stale", sys.argv[3], True)
settings.update(lambda current: current.setdefault("enabledModels", []).append(sys.argv[3]))
assert not settings.drain_errors()
"""


def test_twenty_settings_objects_saving_at_once_keep_each_others_keys(campaign: Campaign) -> None:
    at_once(
        campaign,
        [
            python(SETTINGS_WRITER, str(campaign.work), str(campaign.agent_dir), f"k{i}")
            for i in range(WRITERS)
        ],
    )
    settings = read(campaign.agent_dir / "settings.json")
    names = {f"k{i}" for i in range(WRITERS)}
    assert settings["stale"] == dict.fromkeys(names, True)
    assert sorted(settings["enabledModels"]) == sorted(names)


def test_twenty_installs_of_one_package_at_once_leave_one_whole_copy(
    campaign: Campaign, tmp_path: Path
) -> None:
    repo = tmp_path / "repo"
    (repo / "skills").mkdir(parents=True)
    (repo / "skills" / "hello.md").write_text("---\nname: hello\ndescription: says hello\n---\nhello\n")
    git = ["git", "-c", "user.email=t@example.test", "-c", "user.name=t"]
    for command in (["init", "-q"], ["add", "."], ["commit", "-qm", "first"]):
        subprocess.run([*git, *command], cwd=repo, check=True)
    source = f"git:file://{repo}"
    at_once(campaign, [tau("install", source) for _ in range(WRITERS)])
    assert read(campaign.agent_dir / "settings.json")["packages"] == [source]
    [installed] = [p for p in (campaign.agent_dir / "git").rglob("hello.md")]
    folder = installed.parent.parent
    assert (folder / ".git").is_dir()
    assert leftovers(folder.parent) == []
