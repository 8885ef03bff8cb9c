"""auth.json: pi's schema, 0600 files, merge-on-write under a lock, and the key priority order."""

from __future__ import annotations

import json
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tau.accounts.auth_storage import AuthStatus, AuthStorage, clear_config_value_cache, resolve_config_value
from tau.ai.catalogue import get_providers
from tau.ai.env_keys import env_var_names
from tau.config.config_errors import ConfigError


@pytest.fixture(autouse=True)
def isolated_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """No provider credentials from the machine running the tests; a fresh command cache."""
    for provider in get_providers():
        for name in env_var_names(provider):
            monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    clear_config_value_cache()
    yield
    clear_config_value_cache()


@pytest.fixture
def auth_file(tmp_path: Path) -> Path:
    return tmp_path / "agent" / "auth.json"


def mode_of(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_first_write_creates_file_0600_in_dir_0700_and_keeps_0600_after_updates(auth_file: Path) -> None:
    storage = AuthStorage(auth_file)
    assert not auth_file.exists()

    storage.set_api_key("anthropic", "sk-ant-1")

    assert mode_of(auth_file) == 0o600
    assert mode_of(auth_file.parent) == 0o700
    auth_file.chmod(0o644)
    storage.set_api_key("openai", "sk-2")
    assert mode_of(auth_file) == 0o600


def test_credentials_are_stored_in_pis_schema(auth_file: Path) -> None:
    storage = AuthStorage(auth_file)

    storage.set_api_key("anthropic", "sk-ant-1")
    storage.set(
        "github-copilot", {"type": "oauth", "access": "a", "refresh": "r", "expires": 1, "enterpriseUrl": "x"}
    )

    assert json.loads(auth_file.read_text()) == {
        "anthropic": {"type": "api_key", "key": "sk-ant-1"},
        "github-copilot": {
            "type": "oauth",
            "access": "a",
            "refresh": "r",
            "expires": 1,
            "enterpriseUrl": "x",
        },
    }
    assert storage.list() == ["anthropic", "github-copilot"]
    assert storage.get("anthropic") == {"type": "api_key", "key": "sk-ant-1"}
    assert storage.has("github-copilot")


def test_remove_deletes_only_that_provider(auth_file: Path) -> None:
    storage = AuthStorage(auth_file)
    storage.set_api_key("a", "1")
    storage.set_api_key("b", "2")

    storage.remove("a")
    storage.remove("never-stored")

    assert json.loads(auth_file.read_text()) == {"b": {"type": "api_key", "key": "2"}}
    assert storage.get("a") is None


def test_writes_merge_into_what_another_process_stored_meanwhile(auth_file: Path) -> None:
    first = AuthStorage(auth_file)
    second = AuthStorage(auth_file)

    second.set_api_key("openai", "from-second")
    first.set_api_key("anthropic", "from-first")

    assert set(json.loads(auth_file.read_text())) == {"openai", "anthropic"}
    assert first.get("openai") == {"type": "api_key", "key": "from-second"}


def test_an_unreadable_file_is_reported_and_never_overwritten(auth_file: Path) -> None:
    auth_file.parent.mkdir(parents=True)
    auth_file.write_text('{"anthropic": {"type": "api_key", "key": ')

    storage = AuthStorage(auth_file)

    assert storage.load_error is not None
    assert str(storage.load_error).startswith(f"{auth_file}:1:")
    with pytest.raises(ConfigError, match="not saved"):
        storage.set_api_key("openai", "x")
    assert auth_file.read_text() == '{"anthropic": {"type": "api_key", "key": '
    assert len(storage.drain_errors()) == 1


def test_a_credential_needs_a_type(auth_file: Path) -> None:
    with pytest.raises(ValueError, match="type"):
        AuthStorage(auth_file).set("x", {"key": "k"})


def test_key_priority_is_runtime_then_auth_json_then_environment_then_fallback(
    auth_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    storage = AuthStorage(auth_file)
    assert storage.get_api_key("openai") is None

    assert storage.get_api_key("openai", fallback="from-models-json") == "from-models-json"
    monkeypatch.setenv("OPENAI_API_KEY", "from-env")
    assert storage.get_api_key("openai", fallback="from-models-json") == "from-env"
    storage.set_api_key("openai", "from-auth-json")
    assert storage.get_api_key("openai", fallback="from-models-json") == "from-auth-json"
    storage.set_runtime_api_key("openai", "from-cli")
    assert storage.get_api_key("openai", fallback="from-models-json") == "from-cli"

    storage.remove_runtime_api_key("openai")
    assert storage.get_api_key("openai") == "from-auth-json"
    assert "from-cli" not in auth_file.read_text()


def test_stored_keys_and_fallbacks_resolve_commands_and_variable_names(
    auth_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MY_SECRET_VAR", "secret-from-var")
    storage = AuthStorage(auth_file)
    storage.set_api_key("a", "!echo k")
    storage.set_api_key("b", "$MY_SECRET_VAR")
    storage.set_api_key("c", "literal-key")

    assert storage.get_api_key("a") == "k"
    assert storage.get_api_key("b") == "secret-from-var"
    assert storage.get_api_key("c") == "literal-key"
    assert storage.get_api_key("d", fallback="!printf '  spaced  \\n'") == "spaced"


def test_failing_or_silent_commands_resolve_to_nothing() -> None:
    assert resolve_config_value("!exit 3") is None
    assert resolve_config_value("!true") is None
    assert resolve_config_value("!echo out; echo err >&2") == "out"


def test_successful_command_output_is_cached_for_the_process(tmp_path: Path) -> None:
    counter = tmp_path / "runs"
    command = f"!echo run >> {counter}; echo key"

    assert resolve_config_value(command) == "key"
    assert resolve_config_value(command) == "key"

    assert counter.read_text().count("run") == 1


def test_oauth_access_token_is_used_until_it_expires(auth_file: Path) -> None:
    storage = AuthStorage(auth_file)
    now_ms = int(time.time() * 1000)
    storage.set(
        "anthropic", {"type": "oauth", "access": "sk-ant-oat-1", "refresh": "r", "expires": now_ms + 600_000}
    )
    # groq: a login tau cannot refresh itself (those it can are tested in tests/cli/test_oauth_cli.py).
    storage.set("groq", {"type": "oauth", "access": "old", "refresh": "r", "expires": now_ms - 1})

    assert storage.get_api_key("anthropic") == "sk-ant-oat-1"
    assert storage.get_api_key("groq") is None
    assert storage.has_auth("groq")
    assert storage.get_auth_status("groq") == AuthStatus(True, "oauth", "expired")


def test_auth_status_names_the_source_without_the_secret(
    auth_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-secret")
    storage = AuthStorage(auth_file)
    storage.set_api_key("openai", "sk-also-secret")
    storage.set_runtime_api_key("groq", "gsk")

    assert storage.get_auth_status("anthropic") == AuthStatus(True, "env", "ANTHROPIC_API_KEY")
    assert storage.get_auth_status("openai") == AuthStatus(True, "api_key")
    assert storage.get_auth_status("groq") == AuthStatus(True, "runtime")
    assert storage.get_auth_status("ollama", fallback="!cat key") == AuthStatus(True, "fallback")
    assert storage.get_auth_status("mistral") == AuthStatus(False)


def test_has_auth_runs_no_command(auth_file: Path, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    storage = AuthStorage(auth_file)
    storage.set_api_key("a", f"!touch {marker}; echo k")

    assert storage.has_auth("a")
    assert storage.has_auth("b", fallback=f"!touch {marker}; echo k")
    assert not marker.exists()


def test_in_memory_storage_writes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TAU_AGENT_DIR", str(tmp_path / "agent"))

    storage = AuthStorage.in_memory({"x": {"type": "api_key", "key": "1"}})
    storage.set_api_key("y", "2")

    assert storage.list() == ["x", "y"]
    assert storage.get_api_key("y") == "2"
    assert not (tmp_path / "agent").exists()


def test_create_uses_the_agent_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TAU_AGENT_DIR", str(tmp_path / "agent"))

    assert AuthStorage.create().path == tmp_path / "agent" / "auth.json"
    assert AuthStorage.create(tmp_path / "other").path == tmp_path / "other" / "auth.json"


def test_entries_that_are_not_objects_are_ignored(auth_file: Path) -> None:
    auth_file.parent.mkdir(parents=True)
    auth_file.write_text('{"a": "just a string", "b": {"type": "api_key", "key": "k"}}')

    storage = AuthStorage(auth_file)

    assert storage.list() == ["b"]
    assert storage.get_api_key("a") is None


def test_an_expired_token_of_a_login_tau_cannot_refresh_gives_way_to_an_environment_key(
    auth_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GROQ_API_KEY", "gsk-env-key")
    storage = AuthStorage(auth_file)
    storage.set("groq", {"type": "oauth", "access": "old", "refresh": "r", "expires": 0})

    assert storage.get_api_key("groq") == "gsk-env-key"
    assert storage.get_auth_status("groq") == AuthStatus(True, "env", "GROQ_API_KEY")


def test_a_reader_never_sees_a_half_written_file_while_another_process_writes(auth_file: Path) -> None:
    # Large credentials, so that a write made in place would be seen half done by a reader.
    writer = (
        "import sys\nfrom pathlib import Path\nfrom tau.accounts.auth_storage import AuthStorage\n"
        "storage = AuthStorage(Path(sys.argv[1]))\n"
        "for i in range(40):\n    storage.set('big', {'type': 'api_key', 'key': str(i % 10) * 400_000})\n"
    )
    AuthStorage(auth_file).set_api_key("kept", "sk-kept")
    process = subprocess.Popen([sys.executable, "-c", writer, str(auth_file)])
    reads = 0
    while process.poll() is None:
        data = json.loads(auth_file.read_text())
        key = data.get("big", {}).get("key", "0")
        assert data["kept"] == {"type": "api_key", "key": "sk-kept"}
        assert key == key[0] * len(key)
        reads += 1
    assert process.returncode == 0
    assert reads > 0
