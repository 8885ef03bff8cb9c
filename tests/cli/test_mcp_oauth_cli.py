"""OAuth for a remote MCP server: ``tau mcp login`` against a fake authorization server on 127.0.0.1
(protected resource metadata, dynamic client registration, PKCE), then a session that refreshes the
stored access token once it has expired, before calling the server's tool."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import socket
import stat
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pi16 import pi16_command
from tau_command import MODEL, TauCommand

from tau.testing.fake_llm import ScriptedToolCall, Turn

SERVER = textwrap.dedent(
    """
    import base64, hashlib, json, secrets, sys
    from urllib.parse import urlencode

    import uvicorn
    from mcp.server.mcpserver import MCPServer
    from starlette.requests import Request
    from starlette.responses import JSONResponse, RedirectResponse, Response

    port, log_path, sends_iss = int(sys.argv[1]), sys.argv[2], sys.argv[3] == "iss"
    base = f"http://127.0.0.1:{port}"
    issuer = f"{base}/as"  # the authorization server has a path: its token endpoint is not <origin>/token
    server = MCPServer("secure")

    @server.tool()
    def add(a: int, b: int) -> int:
        \"\"\"Add two numbers.\"\"\"
        return a + b

    clients, codes, valid, refresh = {"fixed-client": {}}, {}, set(), {}  # fixed-client: registered by hand

    def log(entry):
        with open(log_path, "a") as f:
            f.write(json.dumps(entry) + "\\n")

    def known(client_id):
        # pi's Client ID Metadata Documents are taken by URL (this server cannot fetch them).
        return client_id in clients or (client_id.startswith("https://pi.dev/oauth/") and client_id.endswith("/client.json"))

    def issue(client_id):
        access, renew = "at-" + secrets.token_hex(4), "rt-" + secrets.token_hex(4)
        valid.add(access)
        refresh[renew] = client_id
        return {"access_token": access, "token_type": "Bearer", "expires_in": 3600, "refresh_token": renew}

    async def resource_metadata(request):
        return JSONResponse({"resource": f"{base}/mcp", "authorization_servers": [issuer]})

    async def server_metadata(request):
        return JSONResponse({
            "issuer": issuer, "authorization_endpoint": f"{issuer}/authorize", "token_endpoint": f"{issuer}/token",
            "registration_endpoint": f"{issuer}/register", "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code", "refresh_token"],
            "code_challenge_methods_supported": ["S256"], "token_endpoint_auth_methods_supported": ["none"],
            "client_id_metadata_document_supported": True,
            "authorization_response_iss_parameter_supported": sends_iss,
        })

    async def register(request):
        body = await request.json()
        client_id = "client-" + secrets.token_hex(4)
        clients[client_id] = body
        log({"registered": client_id, "name": body.get("client_name")})
        return JSONResponse({**body, "client_id": client_id, "client_id_issued_at": 1}, status_code=201)

    async def authorize(request):
        q = request.query_params
        assert known(q["client_id"]) and q["code_challenge_method"] == "S256"
        log({"authorize": q["client_id"], "redirect": q["redirect_uri"]})
        code = secrets.token_hex(8)
        codes[code] = (q["code_challenge"], q["redirect_uri"], q["client_id"])
        answer = {"code": code, "state": q["state"], **({"iss": issuer} if sends_iss else {})}
        return RedirectResponse(q["redirect_uri"] + "?" + urlencode(answer))

    async def token(request):
        form = await request.form()
        entry = {"grant": form["grant_type"], "client": form.get("client_id")}
        if form["grant_type"] == "authorization_code":
            challenge, redirect, client = codes.pop(form["code"])
            digest = hashlib.sha256(form["code_verifier"].encode()).digest()
            if (base64.urlsafe_b64encode(digest).decode().rstrip("=") != challenge
                    or form["redirect_uri"] != redirect or form["client_id"] != client):
                log({**entry, "error": "invalid_grant"})
                return JSONResponse({"error": "invalid_grant"}, status_code=400)
            log(entry)
            return JSONResponse(issue(client))
        if form["grant_type"] == "refresh_token":
            # Refresh tokens rotate, and only the client they were issued to may spend one.
            if refresh.pop(form["refresh_token"], None) != form.get("client_id"):
                log({**entry, "error": "invalid_grant"})
                return JSONResponse({"error": "invalid_grant"}, status_code=400)
            log(entry)
            return JSONResponse(issue(form["client_id"]))
        return JSONResponse({"error": "unsupported_grant_type"}, status_code=400)

    routes = {
        "/.well-known/oauth-protected-resource/mcp": resource_metadata,
        "/.well-known/oauth-authorization-server/as": server_metadata,
        "/as/register": register, "/as/authorize": authorize, "/as/token": token,
    }
    mcp_app = server.streamable_http_app()

    async def app(scope, receive, send):
        if scope["type"] == "http":
            handler = routes.get(scope["path"])
            if handler is not None:
                return await (await handler(Request(scope, receive)))(scope, receive, send)
            if scope["path"].startswith("/.well-known/"):
                return await Response(status_code=404)(scope, receive, send)
            header = dict(scope["headers"]).get(b"authorization", b"").decode()
            if header.removeprefix("Bearer ") not in valid:
                challenge = f'Bearer resource_metadata="{base}/.well-known/oauth-protected-resource/mcp"'
                return await Response(status_code=401, headers={"WWW-Authenticate": challenge})(scope, receive, send)
        await mcp_app(scope, receive, send)

    uvicorn.run(app, host="127.0.0.1", port=port, log_level="error")
    """
)

VISIT = "import sys, urllib.request\nurllib.request.urlopen(sys.argv[1]).read()\n"


def _serve(folder: Path, *, iss: bool) -> Iterator[tuple[str, Path]]:
    script, log = folder / "secure.py", folder / "oauth-log.jsonl"
    script.write_text(SERVER, encoding="utf-8")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    process = subprocess.Popen(
        [sys.executable, str(script), str(port), str(log), "iss" if iss else "no-iss"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp", log
    finally:
        process.terminate()
        process.wait(10)


@pytest.fixture
def secure_server(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """The server and its authorization server, which sends ``iss`` in its answers (RFC 9207)."""
    yield from _serve(tmp_path, iss=True)


@pytest.fixture
def server_without_iss(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    yield from _serve(tmp_path, iss=False)


@pytest.fixture
def browser(tau: TauCommand, tmp_path: Path) -> None:
    visit = tmp_path / "visit.py"
    visit.write_text(VISIT)
    tau.env["BROWSER"] = f"{sys.executable} {visit} %s"  # the "browser" approves at once


def _log(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def _store(tau: TauCommand) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((tau.agent_dir / "mcp-auth.json").read_text())
    return data


def _expire(tau: TauCommand, key: str) -> None:
    stored = _store(tau)
    stored[key]["tokensExpireAt"] = int(time.time() * 1000) - 1000  # the hour has passed
    (tau.agent_dir / "mcp-auth.json").write_text(json.dumps(stored))


def _tool_results(tau: TauCommand) -> list[Any]:
    return [m["content"] for m in tau.server.requests[-1].body["messages"] if m["role"] == "tool"]


@pytest.mark.usefixtures("browser")
def test_mcp_login_registers_signs_in_with_pkce_and_a_session_refreshes_the_expired_token(
    tau: TauCommand, secure_server: tuple[str, Path]
) -> None:
    url, log = secure_server
    fixed = {"url": url, "oauth": {"clientId": "fixed-client"}}
    servers = {"secure": {"url": url, "exposure": "direct"}, "fixed": fixed}
    (tau.agent_dir / "mcp.json").write_text(json.dumps({"mcpServers": servers}))
    tau.server.add(Turn(tool_calls=[ScriptedToolCall("mcp__secure__add", {"a": 1, "b": 2})]), Turn(text="3."))
    key = f"mcp__secure|{url}"

    before = tau.run("mcp", "list")
    login = tau.run("mcp", "login", "secure", "--timeout", "30")
    signed_in = _store(tau)[key]
    _expire(tau, key)
    done = tau.run("-p", *MODEL, "add 1 and 2")
    fixed_login = tau.run("-p", *MODEL, "/mcp login fixed")  # the same sign-in, from a session

    assert (
        before.returncode == 1
        and "secure: needs sign-in" in before.stdout
        and "fixed: needs sign-in" in before.stdout
    )
    assert "sign in with: tau mcp login secure" in before.stdout
    assert login.returncode == 0, login.stderr
    assert login.stdout.strip().endswith("Signed in to secure")
    assert stat.S_IMODE(os.stat(tau.agent_dir / "mcp-auth.json").st_mode) == 0o600
    # pi's entry: its URL, the registered client, the tokens, and where the authorization server is.
    issuer = url.removesuffix("/mcp") + "/as"
    assert signed_in["serverUrl"] == url
    assert signed_in["clientInformation"]["client_id"].startswith("client-")
    assert signed_in["tokens"]["access_token"].startswith("at-")
    assert signed_in["discovery"]["authorizationServerUrl"] == issuer
    assert signed_in["discovery"]["authorizationServerMetadata"]["token_endpoint"] == f"{issuer}/token"
    assert done.returncode == 0, done.stderr
    assert _tool_results(tau) == ["3"]
    assert fixed_login.returncode == 0, fixed_login.stderr
    assert "Signed in to fixed (connected)" in fixed_login.stderr, fixed_login.stderr
    client = signed_in["clientInformation"]["client_id"]
    redirect = signed_in["clientInformation"]["redirect_uris"][0]
    # The server takes pi's document, but "auto" registers tau (as pi does under another name).
    assert [{k: v for k, v in e.items() if k != "redirect"} for e in _log(log)] == [
        {"registered": client, "name": "tau"},
        {"authorize": client},
        {"grant": "authorization_code", "client": client},
        {"grant": "refresh_token", "client": client},  # at the stored token endpoint, under /as
        {"authorize": "fixed-client"},  # a configured client is not registered
        {"grant": "authorization_code", "client": "fixed-client"},
    ]
    assert _log(log)[1]["redirect"] == redirect
    assert fixed_login.returncode == 0, fixed_login.stderr
    assert "Signed in to fixed (connected)" in fixed_login.stderr
    refreshed = _store(tau)[key]["tokens"]
    assert refreshed["access_token"] != signed_in["tokens"]["access_token"]

    not_local = tau.run("mcp", "logout", "secure", "-l")
    logout = tau.run("mcp", "logout", "secure")
    assert not_local.returncode == 1 and "not defined in this project's mcp.json" in not_local.stderr
    assert logout.returncode == 0 and logout.stdout.strip() == "Signed out of secure"
    assert key not in _store(tau)


@pytest.mark.usefixtures("browser")
def test_signing_in_again_keeps_the_registered_client_by_listening_on_its_port(
    tau: TauCommand, secure_server: tuple[str, Path]
) -> None:
    url, log = secure_server
    (tau.agent_dir / "mcp.json").write_text(json.dumps({"mcpServers": {"secure": {"url": url}}}))
    key = f"mcp__secure|{url}"

    first = tau.run("mcp", "login", "secure", "--timeout", "30")
    stored = _store(tau)
    del stored[key]["tokens"]  # signed out elsewhere, say: the browser step again
    (tau.agent_dir / "mcp-auth.json").write_text(json.dumps(stored))
    second = tau.run("mcp", "login", "secure", "--timeout", "30")

    assert first.returncode == second.returncode == 0, first.stderr + second.stderr
    registered, *rest = _log(log)
    client = registered["registered"]
    redirect = _store(tau)[key]["clientInformation"]["redirect_uris"][0]
    assert rest == [
        {"authorize": client, "redirect": redirect},
        {"grant": "authorization_code", "client": client},
        {"authorize": client, "redirect": redirect},
        {"grant": "authorization_code", "client": client},
    ]


def test_a_refused_refresh_needs_sign_in_drops_the_tokens_and_registers_nothing(
    tau: TauCommand, secure_server: tuple[str, Path]
) -> None:
    url, log = secure_server
    (tau.agent_dir / "mcp.json").write_text(
        json.dumps({"mcpServers": {"secure": {"url": url, "exposure": "direct"}}})
    )
    key = f"mcp__secure|{url}"
    client = {"client_id": "fixed-client", "redirect_uris": ["http://127.0.0.1:1/callback"]}
    stale = {"access_token": "at-stale", "token_type": "Bearer", "refresh_token": "rt-spent"}
    # Written by an older tau: no discovery, so the session finds the authorization server first.
    entry = {"tokens": stale, "tokensExpireAt": 1000, "clientInformation": client}
    (tau.agent_dir / "mcp-auth.json").write_text(json.dumps({key: entry}))
    tau.server.add(Turn(text="No tools then."))

    done = tau.run("-p", *MODEL, "add 1 and 2")

    assert done.returncode == 0, done.stderr
    assert "MCP server 'secure' needs sign-in (run: tau mcp login secure)" in done.stderr
    assert _log(log) == [{"grant": "refresh_token", "client": "fixed-client", "error": "invalid_grant"}]
    kept = _store(tau)[key]
    assert "tokens" not in kept and kept["clientInformation"] == client and kept["serverUrl"] == url
    assert kept["discovery"]["authorizationServerUrl"] == url.removesuffix("/mcp") + "/as"


def _callback_id(url: str) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(url.encode()).digest()[:9]).decode()


@pytest.mark.usefixtures("browser")
def test_cimd_signs_in_with_pis_document_for_the_server_and_a_session_refreshes_with_it(
    tau: TauCommand, server_without_iss: tuple[str, Path]
) -> None:
    url, log = server_without_iss
    entry = {"url": url, "exposure": "direct", "oauth": {"clientRegistration": "cimd"}}
    (tau.agent_dir / "mcp.json").write_text(json.dumps({"mcpServers": {"docs": entry}}))
    tau.server.add(Turn(tool_calls=[ScriptedToolCall("mcp__docs__add", {"a": 1, "b": 2})]), Turn(text="3."))
    key = f"mcp__docs|{url}"

    login = tau.run("mcp", "login", "docs", "--timeout", "30")
    signed_in = _store(tau)[key]
    _expire(tau, key)
    done = tau.run("-p", *MODEL, "add 1 and 2")

    assert login.returncode == 0, login.stderr
    # Without iss in its answers, the document and the redirect path are this server's own.
    document = f"https://pi.dev/oauth/{_callback_id(url)}/client.json"
    [authorized, *grants] = _log(log)
    assert authorized["authorize"] == document
    assert authorized["redirect"].startswith("http://127.0.0.1:")
    assert authorized["redirect"].endswith(f"/callback/{_callback_id(url)}")
    assert grants == [
        {"grant": "authorization_code", "client": document},
        {"grant": "refresh_token", "client": document},
    ]
    # As pi keeps them: the document's tokens without a client.
    assert "clientInformation" not in signed_in and signed_in["tokens"]["access_token"].startswith("at-")
    assert done.returncode == 0, done.stderr
    assert _tool_results(tau) == ["3"]


@pytest.mark.parametrize(
    ("oauth", "message"),
    [
        (
            {"clientRegistration": "cimd", "clientName": "Claude Code"},
            "cannot be combined with oauth.clientId",
        ),
        ({"clientRegistration": "always"}, 'must be "auto", "dcr" or "cimd"'),
    ],
)
def test_a_client_registration_pi_refuses_is_one_line(
    tau: TauCommand, oauth: dict[str, str], message: str
) -> None:
    entry = {"url": "http://127.0.0.1:9/mcp", "oauth": oauth}
    (tau.agent_dir / "mcp.json").write_text(json.dumps({"mcpServers": {"docs": entry}}))
    result = tau.run("mcp", "login", "docs")
    assert result.returncode == 1
    [line] = result.stderr.strip().splitlines()
    assert line.startswith("tau: MCP server 'docs': oauth.clientRegistration") and message in line
    assert not (tau.agent_dir / "mcp-auth.json").exists()


@pytest.mark.usefixtures("browser")
@pytest.mark.parametrize(("iss", "registration"), [(True, "auto"), (False, "cimd")])
def test_pi_refreshes_the_sign_in_tau_stored_and_tau_uses_what_pi_refreshed(
    tau: TauCommand, tmp_path: Path, iss: bool, registration: str
) -> None:
    url, log = next(server := _serve(tmp_path, iss=iss))
    entry = {"url": url, "exposure": "direct", "oauth": {"clientRegistration": registration}}
    (tau.agent_dir / "mcp.json").write_text(json.dumps({"mcpServers": {"secure": entry}}))
    tau.server.add(Turn(tool_calls=[ScriptedToolCall("mcp__secure__add", {"a": 1, "b": 2})]), Turn(text="3."))
    pi_dir = tmp_path / "pi-agent"
    pi_env = tau.env | {"PI_OFFLINE": "1", "PI_CODING_AGENT_DIR": str(pi_dir), "HOME": str(pi_dir)}
    try:
        login = tau.run("mcp", "login", "secure", "--timeout", "30")
        _expire(tau, f"mcp__secure|{url}")
        pi_dir.mkdir()
        for name in ("mcp.json", "mcp-auth.json"):
            (pi_dir / name).write_bytes((tau.agent_dir / name).read_bytes())
        pi = subprocess.run(
            [*pi16_command(), "mcp", "list"],
            cwd=tau.work,
            env=pi_env,
            input="",
            capture_output=True,
            text=True,
            timeout=60,
        )
        (tau.agent_dir / "mcp-auth.json").write_bytes((pi_dir / "mcp-auth.json").read_bytes())
        done = tau.run("-p", *MODEL, "add 1 and 2")
    finally:
        server.close()

    assert login.returncode == 0, login.stderr
    assert pi.returncode == 0 and pi.stdout.startswith("secure: connected"), pi.stdout + pi.stderr
    grants = [e for e in _log(log) if "grant" in e]
    client = grants[0]["client"]
    assert client.startswith("client-" if registration == "auto" else "https://pi.dev/oauth/")
    # pi refreshed tau's tokens with their client; tau then used pi's tokens as they were.
    assert grants == [
        {"grant": "authorization_code", "client": client},
        {"grant": "refresh_token", "client": client},
    ]
    assert done.returncode == 0, done.stderr
    assert _tool_results(tau) == ["3"]
