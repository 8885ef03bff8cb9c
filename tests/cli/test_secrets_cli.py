"""Keys through the real `tau`: trimmed wherever they are read, refused (naming the source, never the
key) when they hold a control character, and never written to stderr, the session file, the JSON
output or an HTML export, whatever error text the server or the HTTP stack produces."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from tau_command import MODEL, TauCommand

from tau.testing.fake_llm import Fault, Turn

SECRET = "sk-live-0123456789abcdef"


def configure(tau: TauCommand, *, retry: dict[str, Any] | None = None, **provider: Any) -> None:
    """Rewrite the `local` provider of models.json with ``provider``'s keys; millisecond retries."""
    models_path = tau.agent_dir / "models.json"
    models = json.loads(models_path.read_text())
    models["providers"]["local"].update(provider)
    models_path.write_text(json.dumps(models))
    settings = {"retry": {"baseDelayMs": 2, **(retry or {})}}
    (tau.agent_dir / "settings.json").write_text(json.dumps(settings))


def store_key(tau: TauCommand, key: str) -> None:
    auth = tau.agent_dir / "auth.json"
    auth.write_text(json.dumps({"local": {"type": "api_key", "key": key}}))
    auth.chmod(0o600)


def session_text(tau: TauCommand) -> str:
    return "".join(path.read_text() for path in tau.session_files())


def assistant_errors(tau: TauCommand) -> list[str]:
    errors = []
    for path in tau.session_files():
        for line in path.read_text().splitlines():
            message = json.loads(line).get("message") or {}
            if message.get("role") == "assistant" and message.get("stopReason") == "error":
                errors.append(message["errorMessage"])
    return errors


def test_a_key_ending_in_a_carriage_return_in_the_environment_is_trimmed(tau: TauCommand) -> None:
    configure(tau, apiKey="$LOCAL_KEY")
    tau.env["LOCAL_KEY"] = SECRET + "\r"
    tau.server.add(Turn(text="hello"))
    result = tau.run(*MODEL, "-p", "hi")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "hello\n"
    assert tau.server.last_request.headers["authorization"] == f"Bearer {SECRET}"


def test_a_key_ending_in_a_line_break_in_auth_json_is_trimmed(tau: TauCommand) -> None:
    store_key(tau, SECRET + "\r\n")
    tau.server.add(Turn(text="hello"))
    result = tau.run(*MODEL, "-p", "hi")
    assert result.returncode == 0, result.stderr
    assert tau.server.last_request.headers["authorization"] == f"Bearer {SECRET}"


def test_a_literal_key_with_surrounding_spaces_in_models_json_is_trimmed(tau: TauCommand) -> None:
    configure(tau, apiKey=f"  {SECRET}\t")
    tau.server.add(Turn(text="hello"))
    result = tau.run(*MODEL, "-p", "hi")
    assert result.returncode == 0, result.stderr
    assert tau.server.last_request.headers["authorization"] == f"Bearer {SECRET}"


def test_a_key_printed_by_a_command_with_a_crlf_ending_is_trimmed(tau: TauCommand) -> None:
    configure(tau, apiKey=f"!printf '{SECRET}\\r\\n'")
    tau.server.add(Turn(text="hello"))
    result = tau.run(*MODEL, "-p", "hi")
    assert result.returncode == 0, result.stderr
    assert tau.server.last_request.headers["authorization"] == f"Bearer {SECRET}"


def test_a_blank_key_in_auth_json_is_reported_as_resolving_to_nothing(tau: TauCommand) -> None:
    store_key(tau, " \r\n")
    result = tau.run(*MODEL, "-p", "hi")
    assert result.returncode == 1
    assert result.stderr == 'auth.json key of provider "local" resolved to nothing\n'
    assert tau.server.requests == []


def test_a_key_with_a_line_break_inside_is_refused_naming_its_source_not_the_key(tau: TauCommand) -> None:
    broken = SECRET[:10] + "\n" + SECRET[10:]
    store_key(tau, broken)
    result = tau.run(*MODEL, "-p", "hi")
    assert result.returncode == 1
    assert (
        'The API key of provider "local" from auth.json ("local") contains a control character'
        in result.stderr
    )
    assert SECRET[:10] not in result.stderr and SECRET[10:] not in result.stderr
    assert SECRET[10:] not in session_text(tau)
    assert tau.server.requests == []


def test_a_header_http_cannot_carry_fails_once_without_retries(tau: TauCommand) -> None:
    configure(tau, headers={"X-Team": "platform\nops"})
    started = time.monotonic()
    result = tau.run(*MODEL, "-p", "hi")
    assert result.returncode == 1
    assert result.stderr.startswith('Invalid request header "X-Team": its value contains a line break')
    assert tau.server.requests == []
    assert len(assistant_errors(tau)) == 1
    assert time.monotonic() - started < 10


def test_a_server_error_quoting_the_key_reaches_no_output_and_no_file(tau: TauCommand) -> None:
    configure(tau, apiKey="$LOCAL_KEY")
    tau.env["LOCAL_KEY"] = SECRET
    echo = {"error": {"message": f"Incorrect API key provided: {SECRET}. Key {SECRET!r} is revoked."}}
    tau.server.add(
        Turn(fault=Fault("status", status=401, body=echo)), Turn(fault=Fault("status", status=401, body=echo))
    )

    printed = tau.run(*MODEL, "-p", "hi")
    assert printed.returncode == 1
    assert printed.stderr == "401 Incorrect API key provided: [redacted]. Key '[redacted]' is revoked.\n"

    streamed = tau.run(*MODEL, "--mode", "json", "-p", "hi")
    assert "Incorrect API key provided: [redacted]" in streamed.stdout
    assert SECRET not in streamed.stdout + streamed.stderr

    assert len(tau.session_files()) == 2 and SECRET not in session_text(tau)
    exported = tau.run("--export", str(tau.session_files()[0]), "page.html")
    assert exported.returncode == 0, exported.stderr
    page = (tau.work / "page.html").read_text()
    assert "Incorrect API key provided" in page and SECRET not in page


def test_a_server_error_quoting_the_key_is_redacted_in_rpc_output(tau: TauCommand) -> None:
    configure(tau, apiKey="$LOCAL_KEY")
    tau.env["LOCAL_KEY"] = SECRET
    echo = {"error": {"message": f"Incorrect API key provided: {SECRET}"}}
    tau.server.add(Turn(fault=Fault("status", status=401, body=echo)))
    result = tau.run(*MODEL, "--mode", "rpc", stdin=json.dumps({"type": "prompt", "message": "hi"}) + "\n")
    assert "Incorrect API key provided: [redacted]" in result.stdout
    assert SECRET not in result.stdout + result.stderr


def test_a_key_given_with_api_key_is_redacted_from_errors(tau: TauCommand) -> None:
    echo = {"error": {"message": f"key {SECRET} has no access to this model"}}
    tau.server.add(Turn(fault=Fault("status", status=403, body=echo)))
    result = tau.run(*MODEL, "--api-key", SECRET, "-p", "hi")
    assert result.returncode == 1
    assert result.stderr == "403 key [redacted] has no access to this model\n"


def test_the_agent_dir_is_created_for_its_owner_only(tau: TauCommand, tmp_path: Path) -> None:
    agent_dir = tmp_path / "fresh" / "agent"
    tau.env["TAU_AGENT_DIR"] = str(agent_dir)
    result = tau.run("--list-models")
    assert result.returncode == 0, result.stderr
    assert agent_dir.stat().st_mode & 0o777 == 0o700
    assert (tmp_path / "fresh").stat().st_mode & 0o777 == 0o700


def test_an_auth_json_others_can_read_is_tightened_with_a_warning(tau: TauCommand) -> None:
    store_key(tau, SECRET)
    auth = tau.agent_dir / "auth.json"
    auth.chmod(0o644)
    tau.server.add(Turn(text="hello"))
    result = tau.run(*MODEL, "-p", "hi")
    assert result.returncode == 0, result.stderr
    assert auth.stat().st_mode & 0o777 == 0o600
    assert (
        result.stderr
        == f"tau: warning: {auth}: other users could read this file (mode 644); changed it to 600\n"
    )


def test_an_rpc_error_response_never_quotes_a_key(tau: TauCommand) -> None:
    not_a_session = tau.work / f"{SECRET}.jsonl"  # refused, and the refusal names the file
    not_a_session.write_text("not a session\n")
    command = {"id": "s", "type": "switch_session", "sessionPath": str(not_a_session)}
    result = tau.run(*MODEL, "--api-key", SECRET, "--mode", "rpc", stdin=json.dumps(command) + "\n")
    [response] = [json.loads(line) for line in result.stdout.splitlines() if '"response"' in line]
    assert response["success"] is False and "[redacted].jsonl" in response["error"]
    assert SECRET not in result.stdout + result.stderr
