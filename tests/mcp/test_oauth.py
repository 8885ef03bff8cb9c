"""pi's Client ID Metadata Document choice and the ``mcp-auth.json`` entry rules (no server needed)."""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path

from tau.mcp.config import validate_server
from tau.mcp.oauth import client_document
from tau.mcp.oauth_store import storage_for

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
