"""pi's Client ID Metadata Document choice, the ``mcp-auth.json`` entry rules and pi's locks around
it (no server needed)."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import os
import threading
import time
from pathlib import Path

from tau.config.mcp_servers import validate_server
from tau.mcp.oauth import client_document
from tau.mcp.oauth_store import FileTokenStorage, storage_for

PUBLIC = {"client_id_metadata_document_supported": True, "token_endpoint_auth_methods_supported": ["none"]}


def test_pis_shared_document_is_used_when_the_server_names_itself_in_answers() -> None:
    metadata = {**PUBLIC, "authorization_response_iss_parameter_supported": True}
    assert client_document("https://mcp.example.com/mcp", metadata) == (
        "https://pi.dev/oauth/client.json",
        "/callback",
    )


def test_without_iss_the_document_and_redirect_path_are_the_servers_own() -> None:
    digest = hashlib.sha256(b"https://mcp.example.com/mcp").digest()[:9]
    callback_id = base64.urlsafe_b64encode(digest).decode()
    assert len(callback_id) == 12
    assert client_document("https://MCP.example.com/mcp", PUBLIC) == (
        f"https://pi.dev/oauth/{callback_id}/client.json",
        f"/callback/{callback_id}",
    )


def test_no_document_when_the_server_does_not_take_documents_for_public_clients() -> None:
    assert (
        client_document("https://a.example/mcp", {**PUBLIC, "client_id_metadata_document_supported": False})
        is None
    )
    assert (
        client_document("https://a.example/mcp", {**PUBLIC, "token_endpoint_auth_methods_supported": []})
        is None
    )
    assert client_document("https://a.example/mcp", {"client_id_metadata_document_supported": True}) is None


def test_an_entry_for_another_url_is_ignored_and_replaced_and_pis_other_fields_are_kept(
    tmp_path: Path,
) -> None:
    server = validate_server("docs", {"url": "https://Docs.example"})
    assert not isinstance(server, str)
    key = "mcp__docs|https://docs.example/"
    other = {"serverUrl": "https://elsewhere.example/", "tokens": {"access_token": "theirs"}}
    (tmp_path / "mcp-auth.json").write_text(json.dumps({key: other, "keep": {"x": 1}}))
    storage = storage_for(str(tmp_path), server)

    assert storage.entry() == {}
    storage.update({"codeVerifier": "v"})
    storage.save_tokens({"access_token": "mine", "token_type": "Bearer"})

    data = json.loads((tmp_path / "mcp-auth.json").read_text())
    assert data["keep"] == {"x": 1}
    assert data[key] == {
        "serverUrl": "https://docs.example/",
        "codeVerifier": "v",
        "tokens": {"access_token": "mine", "token_type": "Bearer"},
    }


def _docs_storage(agent: Path) -> FileTokenStorage:
    server = validate_server("docs", {"url": "https://docs.example"})
    assert not isinstance(server, str)
    return storage_for(str(agent), server)


def _release_later(lock: Path) -> None:
    threading.Timer(0.3, lock.rmdir).start()


def test_a_refresh_waits_for_the_refresh_lock_pi_holds_and_leaves_no_lock(tmp_path: Path) -> None:
    storage = _docs_storage(tmp_path)
    digest = hashlib.sha256(b"mcp__docs|https://docs.example/").hexdigest()[:16]
    lock = tmp_path / f"mcp-auth-refresh-{digest}.lock"
    lock.mkdir()  # as pi's proper-lockfile makes it

    async def refresh() -> float:
        started = time.monotonic()
        async with storage.refresh_lock():
            assert lock.is_dir()
            return time.monotonic() - started

    _release_later(lock)
    waited = asyncio.run(refresh())

    assert waited > 0.2
    assert os.listdir(tmp_path) == []


def test_a_change_to_mcp_auth_json_waits_for_pis_lock_of_the_file(tmp_path: Path) -> None:
    storage = _docs_storage(tmp_path)
    lock = tmp_path / "mcp-auth.json.lock"
    lock.mkdir()

    _release_later(lock)
    started = time.monotonic()
    storage.update({"codeVerifier": "v"})

    assert time.monotonic() - started > 0.2
    assert os.listdir(tmp_path) == ["mcp-auth.json"]
