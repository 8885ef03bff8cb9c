"""OAuth for a remote MCP server: ``tau mcp login`` against a fake authorization server on 127.0.0.1
(protected resource metadata, dynamic client registration, PKCE), then a session that refreshes the
stored access token once it has expired, before calling the server's tool."""

from __future__ import annotations

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

import pytest
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

    port, log_path = int(sys.argv[1]), sys.argv[2]
    base = f"http://127.0.0.1:{port}"
    server = MCPServer("secure")

    @server.tool()
    def add(a: int, b: int) -> int:
        \"\"\"Add two numbers.\"\"\"
        return a + b

    clients, codes, valid = {"fixed-client": {}}, {}, set()  # fixed-client: registered by hand

    def log(entry):
        with open(log_path, "a") as f:
            f.write(json.dumps(entry) + "\\n")

    def issue(expires_in):
        access = "at-" + secrets.token_hex(4)
        valid.add(access)
        return {"access_token": access, "token_type": "Bearer", "expires_in": expires_in,
                "refresh_token": "rt-" + secrets.token_hex(4)}

    async def resource_metadata(request):
        return JSONResponse({"resource": f"{base}/mcp", "authorization_servers": [base]})

    async def server_metadata(request):
        return JSONResponse({
            "issuer": base, "authorization_endpoint": f"{base}/authorize", "token_endpoint": f"{base}/token",
            "registration_endpoint": f"{base}/register", "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code", "refresh_token"],
            "code_challenge_methods_supported": ["S256"], "token_endpoint_auth_methods_supported": ["none"],
        })

    async def register(request):
        body = await request.json()
        client_id = "client-" + secrets.token_hex(4)
        clients[client_id] = body
        log({"registered": client_id, "name": body.get("client_name")})
        return JSONResponse({**body, "client_id": client_id, "client_id_issued_at": 1}, status_code=201)

    async def authorize(request):
        q = request.query_params
        assert q["client_id"] in clients and q["code_challenge_method"] == "S256"
        code = secrets.token_hex(8)
        codes[code] = (q["code_challenge"], q["redirect_uri"])
        return RedirectResponse(q["redirect_uri"] + "?" + urlencode({"code": code, "state": q["state"]}))

    async def token(request):
        form = await request.form()
        log({"grant": form["grant_type"], "client": form.get("client_id")})
        if form["grant_type"] == "authorization_code":
            challenge, redirect = codes.pop(form["code"])
            digest = hashlib.sha256(form["code_verifier"].encode()).digest()
            if base64.urlsafe_b64encode(digest).decode().rstrip("=") != challenge or form["redirect_uri"] != redirect:
                return JSONResponse({"error": "invalid_grant"}, status_code=400)
            return JSONResponse(issue(3600))
        if form["grant_type"] == "refresh_token":
            return JSONResponse(issue(3600))
        return JSONResponse({"error": "unsupported_grant_type"}, status_code=400)

    routes = {
        "/.well-known/oauth-protected-resource/mcp": resource_metadata,
        "/.well-known/oauth-protected-resource": resource_metadata,
        "/.well-known/oauth-authorization-server": server_metadata,
        "/register": register, "/authorize": authorize, "/token": token,
    }
    mcp_app = server.streamable_http_app()

    async def app(scope, receive, send):
        if scope["type"] == "http":
            handler = routes.get(scope["path"])
            if handler is not None:
                return await (await handler(Request(scope, receive)))(scope, receive, send)
            header = dict(scope["headers"]).get(b"authorization", b"").decode()
            if header.removeprefix("Bearer ") not in valid:
                challenge = f'Bearer resource_metadata="{base}/.well-known/oauth-protected-resource/mcp"'
                return await Response(status_code=401, headers={"WWW-Authenticate": challenge})(scope, receive, send)
        await mcp_app(scope, receive, send)

    uvicorn.run(app, host="127.0.0.1", port=port, log_level="error")
    """
)

VISIT = "import sys, urllib.request\nurllib.request.urlopen(sys.argv[1]).read()\n"


@pytest.fixture
def secure_server(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    script, log = tmp_path / "secure.py", tmp_path / "oauth-log.jsonl"
    script.write_text(SERVER, encoding="utf-8")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    process = subprocess.Popen(
        [sys.executable, str(script), str(port), str(log)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
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


def test_mcp_login_registers_signs_in_with_pkce_and_a_session_refreshes_the_expired_token(
    tau: TauCommand, secure_server: tuple[str, Path], tmp_path: Path
) -> None:
    url, log = secure_server
    fixed = {"url": url, "oauth": {"clientId": "fixed-client"}}
    servers = {"secure": {"url": url, "exposure": "direct"}, "fixed": fixed}
    (tau.agent_dir / "mcp.json").write_text(json.dumps({"mcpServers": servers}))
    visit = tmp_path / "visit.py"
    visit.write_text(VISIT)
    tau.env["BROWSER"] = f"{sys.executable} {visit} %s"  # the "browser" approves at once
    tau.server.add(Turn(tool_calls=[ScriptedToolCall("mcp__secure__add", {"a": 1, "b": 2})]), Turn(text="3."))

    before = tau.run("mcp", "list")
    login = tau.run("mcp", "login", "secure", "--timeout", "30")
    store = tau.agent_dir / "mcp-auth.json"
    signed_in = json.loads(store.read_text())[f"mcp__secure|{url}"]
    stored = json.loads(store.read_text())
    stored[f"mcp__secure|{url}"]["tokensExpireAt"] = int(time.time() * 1000) - 1000  # the hour has passed
    store.write_text(json.dumps(stored))
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
    assert stat.S_IMODE(os.stat(store).st_mode) == 0o600
    assert signed_in["clientInformation"]["client_id"].startswith("client-")
    assert signed_in["tokens"]["access_token"].startswith("at-")
    assert done.returncode == 0, done.stderr
    assert [m["content"] for m in tau.server.requests[-1].body["messages"] if m["role"] == "tool"] == ["3"]
    grants = [json.loads(line) for line in log.read_text().splitlines()]
    client = signed_in["clientInformation"]["client_id"]
    assert grants == [
        {"registered": client, "name": "tau"},
        {"grant": "authorization_code", "client": client},
        {"grant": "refresh_token", "client": client},
        {"grant": "authorization_code", "client": "fixed-client"},  # a configured client is not registered
    ]
    assert fixed_login.returncode == 0, fixed_login.stderr
    assert "Signed in to fixed (connected)" in fixed_login.stderr
    refreshed = json.loads(store.read_text())[f"mcp__secure|{url}"]["tokens"]
    assert refreshed["access_token"] != signed_in["tokens"]["access_token"]

    not_local = tau.run("mcp", "logout", "secure", "-l")
    logout = tau.run("mcp", "logout", "secure")
    assert not_local.returncode == 1 and "not defined in this project's mcp.json" in not_local.stderr
    assert logout.returncode == 0 and logout.stdout.strip() == "Signed out of secure"
    assert f"mcp__secure|{url}" not in json.loads(store.read_text())


def test_login_with_cimd_registration_is_one_line_saying_tau_registers_instead(tau: TauCommand) -> None:
    entry = {"url": "http://127.0.0.1:9/mcp", "oauth": {"clientRegistration": "cimd"}}
    (tau.agent_dir / "mcp.json").write_text(json.dumps({"mcpServers": {"docs": entry}}))
    result = tau.run("mcp", "login", "docs")
    assert result.returncode == 1
    [line] = result.stderr.strip().splitlines()
    assert line.startswith("tau: MCP server 'docs': oauth.clientRegistration \"cimd\"") and '"dcr"' in line
    assert not (tau.agent_dir / "mcp-auth.json").exists()
