"""``--tools '*'`` and the names of providers, run side by side with the real pi 1.6 (issue #32)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pexpect
import pytest
from pi16 import pi16_command
from tau_command import MODEL, TauCommand

from tau.accounts.provider_names import PROVIDER_NAMES, api_key_name, provider_name
from tau.testing.fake_llm import RecordedRequest, Turn


def _pi(tau: TauCommand, pi_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    pi_dir.mkdir(exist_ok=True)
    if not (pi_dir / "models.json").exists():
        (pi_dir / "models.json").write_text((tau.agent_dir / "models.json").read_text())
    env = tau.env | {"PI_OFFLINE": "1", "PI_CODING_AGENT_DIR": str(pi_dir), "HOME": str(pi_dir)}
    return subprocess.run(
        [*pi16_command(), *args], cwd=tau.work, env=env, input="", capture_output=True, text=True, timeout=60
    )


def _names(request: RecordedRequest) -> list[str]:
    return sorted(tool["function"]["name"] for tool in request.body.get("tools", []))


def _tools_both(tau: TauCommand, pi_dir: Path, *args: str) -> tuple[list[str], list[str]]:
    """The tools of the first request tau sent, then pi's, for the same flags (pi's ``powershell``
    left out: tau has none, on purpose, as it runs on Linux and macOS only)."""
    sent = []
    for side in ("tau", "pi"):
        tau.server.add(Turn(text="ok"))
        start = len(tau.server.requests)
        flags = [*MODEL, *args, "-p", "hi"]
        done = tau.run(*flags) if side == "tau" else _pi(tau, pi_dir, *flags)
        assert done.returncode == 0, (side, done.stderr)
        sent.append([name for name in _names(tau.server.requests[start]) if name != "powershell"])
    return sent[0], sent[1]


@pytest.mark.parametrize(
    "flags",
    [
        ["--tools", "*"],
        ["--tools", "*", "--exclude-tools", "bash,code*"],
        ["--tools", "*o*"],
        ["--tools", "read,tool_*"],
        ["--tools", "+codemode,-write"],
        ["--no-builtin-tools", "--tools", "*"],
    ],
)
def test_tool_patterns_select_codemode_and_tool_search_as_pi_16s(
    tau: TauCommand, tmp_path: Path, flags: list[str]
) -> None:
    ours, pis = _tools_both(tau, tmp_path / "pi", *flags)
    assert ours == pis
    if "*" in flags and "--exclude-tools" not in flags:
        assert "codemode" in ours and "tool_search" in ours


def test_default_tools_star_setting_selects_what_pi_16s_does(tau: TauCommand, tmp_path: Path) -> None:
    """``defaultTools`` takes names, not patterns: ``["*"]`` names no tool, so none is sent."""
    setting = json.dumps({"defaultTools": ["*"]})
    (tau.agent_dir / "settings.json").write_text(setting)
    (tmp_path / "pi").mkdir()
    (tmp_path / "pi" / "settings.json").write_text(setting)
    ours, pis = _tools_both(tau, tmp_path / "pi")
    assert ours == pis
    assert ours == []


def test_a_minus_pattern_is_refused_as_by_pi_16(tau: TauCommand, tmp_path: Path) -> None:
    ours = tau.run(*MODEL, "--tools", "-*", "-p", "hi")
    pis = _pi(tau, tmp_path / "pi", *MODEL, "--tools", "-*", "-p", "hi")
    assert ours.returncode == pis.returncode == 1
    assert "not patterns: -*" in ours.stderr and "not patterns: -*" in pis.stderr
    assert tau.server.requests == []


# -- provider names -------------------------------------------------------------------------------


def test_provider_names_are_pi_16s_catalogue() -> None:
    """Every provider of pi 1.6's catalogue (pi-ai's provider modules, read by node) has pi's name."""
    node = pi16_command()[0]
    package = Path(node).parents[2] / "@earendil-works" / "pi-ai"
    script = Path(__file__).parents[1] / "helpers" / "pi16_provider_names.mjs"
    ran = subprocess.run([node, str(script), str(package)], capture_output=True, text=True, timeout=60)
    assert ran.returncode == 0, ran.stderr
    catalogue = json.loads(ran.stdout)
    assert len(catalogue) > 40
    assert {provider: provider_name(provider) for provider in catalogue} == catalogue
    assert dict(PROVIDER_NAMES) == catalogue


_STORED = {
    "openai": {"type": "api_key", "key": "sk-test"},
    "zai": {"type": "api_key", "key": "zai-test"},
    "anthropic": {"type": "oauth", "refresh": "r", "access": "a", "expires": 4102444800000},
}


@pytest.mark.parametrize("provider", ["openai", "zai", "anthropic", "amazon-bedrock", "openai-codex"])
def test_auth_logout_names_the_provider_as_pi_16(tau: TauCommand, tmp_path: Path, provider: str) -> None:
    """``auth logout`` of a stored API key, a stored login, and nothing stored: the same line as pi's."""
    pi_dir = tmp_path / "pi"
    pi_dir.mkdir()
    for auth in (tau.agent_dir / "auth.json", pi_dir / "auth.json"):
        auth.write_text(json.dumps(_STORED))
        auth.chmod(0o600)
    ours = tau.run("auth", "logout", provider)
    pis = _pi(tau, pi_dir, "auth", "logout", provider)
    assert ours.returncode == pis.returncode == 0, (ours.stderr, pis.stderr)
    assert ours.stdout.strip() == pis.stdout.strip()
    assert provider_name(provider) in ours.stdout


def _login_on_a_terminal(
    command: list[str], env: dict[str, str], cwd: Path, provider: str
) -> tuple[str, str]:
    """``auth login <provider> --api-key`` on a terminal (pi asks only there): the prompt, then the
    line after the key is typed."""
    child = pexpect.spawn(
        command[0],
        [*command[1:], "auth", "login", provider, "--api-key"],
        env=env,
        cwd=str(cwd),
        encoding="utf-8",
        timeout=30,
        use_poll=True,
    )
    child.expect(r"Enter [^\r\n]*: ")
    prompt = str(child.after)
    child.sendline("key-typed")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0, child.before
    return prompt, str(child.before).strip()


@pytest.mark.parametrize("provider", ["zai", "google", "huggingface"])
def test_auth_login_asks_for_the_key_by_pi_16s_name(tau: TauCommand, tmp_path: Path, provider: str) -> None:
    pi_dir = tmp_path / "pi"
    pi_dir.mkdir()
    pi_env = tau.env | {"PI_OFFLINE": "1", "PI_CODING_AGENT_DIR": str(pi_dir), "HOME": str(pi_dir)}
    ours = _login_on_a_terminal([sys.executable, "-m", "tau"], tau.env, tau.work, provider)
    pis = _login_on_a_terminal(pi16_command(), pi_env, tau.work, provider)
    assert ours[0] == pis[0] == f"Enter {api_key_name(provider)}: "
    saved = f"Saved API key for {provider_name(provider)}. Credentials saved to "
    assert ours[1].startswith(saved) and pis[1].startswith(saved), (ours, pis)
    for auth in (tau.agent_dir / "auth.json", pi_dir / "auth.json"):
        assert json.loads(auth.read_text())[provider] == {"type": "api_key", "key": "key-typed"}
