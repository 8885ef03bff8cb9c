"""``tau mcp``: add, remove and check MCP servers, and sign in to them, without a session.

Works like pi's ``pi mcp`` so that an agent can run it through ``bash``. ``add``/``remove`` edit
``<agent dir>/mcp.json``, or ``.tau/mcp.json`` of the current folder with ``-l``; ``list`` connects
to every enabled server and exits with 1 when an entry is invalid or a server is not connected. A
project's file is read only when the folder is trusted.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

from tau.errors import TauError

__all__ = ["run_mcp_command"]

HELP = """\
Usage:
  tau mcp add <server> [options] -- <command> [args...]
  tau mcp add <server> [options] --url <url>
  tau mcp remove <server> [-l]
  tau mcp list [--json]
  tau mcp login <server> [-l] [--timeout <seconds>]
  tau mcp logout <server> [-l]

Configure and check MCP servers without starting a session. Reads <agent dir>/mcp.json and, in
trusted projects, .tau/mcp.json (or pi's .pi/mcp.json).

Options for add, remove, login and logout:
  -l, --local             Use .tau/mcp.json in the current folder instead of the global file
                          (login, logout: the server must be defined there)
Options for add:
  --url <url>             Streamable HTTP server URL (instead of a command)
  --env <KEY=VALUE>       Environment variable for a stdio server (repeatable)
  --cwd <dir>             Working directory for a stdio server
  --header <KEY=VALUE>    HTTP header (repeatable)
  --bearer-token-env-var <NAME>
                          Send "Authorization: Bearer ${NAME}"
  --oauth-client-id <id>, --oauth-client-secret <secret>, --oauth-callback-port <port>,
  --oauth-client-name <name>
                          OAuth client settings for servers without dynamic registration
  --exposure <mode>       codemode (default), deferred, direct, or hidden
  --description <text>    What the server offers
  --timeout <seconds>     Per-request timeout (default 60)
Other options:
  --json                  Print the list as JSON
"""

_REPEATABLE = {"--env": "env", "--header": "header"}
_VALUES = {
    "--url": "url",
    "--cwd": "cwd",
    "--bearer-token-env-var": "bearer",
    "--oauth-client-id": "clientId",
    "--oauth-client-secret": "clientSecret",
    "--oauth-callback-port": "callbackPort",
    "--oauth-client-name": "clientName",
    "--oauth-client-registration": "clientRegistration",
    "--exposure": "exposure",
    "--description": "description",
    "--timeout": "timeout",
}


class _McpUsageError(TauError):
    pass


def run_mcp_command(argv: list[str]) -> int:
    """Run ``tau mcp <argv>``; returns the exit code. Problems are one line on stderr."""
    if not argv or argv[0] in ("-h", "--help", "help"):
        print(HELP, end="")
        return 0 if argv else 1
    command, rest = argv[0], argv[1:]
    try:
        if command == "add":
            return _add(rest)
        if command == "remove":
            return _remove(rest)
        if command == "list":
            return _list(rest)
        if command in ("login", "logout"):
            return _login(rest, logout=command == "logout")
        raise _McpUsageError(f"unknown mcp command {command!r} (see: tau mcp --help)")
    except _McpUsageError as exc:
        print(f"tau: {exc}", file=sys.stderr)
        return 1
    except (OSError, ValueError) as exc:
        print(f"tau: {exc}", file=sys.stderr)
        return 1


def _agent_dir() -> str:
    from tau.config.paths import agent_dir

    return str(agent_dir())


def _parse(argv: list[str]) -> tuple[list[str], dict[str, Any], list[str]]:
    """Positional words, options, and what follows ``--``."""
    words: list[str] = []
    options: dict[str, Any] = {}
    tail: list[str] = []
    index = 0
    while index < len(argv):
        arg = argv[index]
        if arg == "--":
            tail = argv[index + 1 :]
            break
        if arg in ("-l", "--local"):
            options["local"] = True
        elif arg == "--json":
            options["json"] = True
        elif arg in _VALUES or arg in _REPEATABLE:
            if index + 1 >= len(argv):
                raise _McpUsageError(f"{arg} needs a value")
            value = argv[index + 1]
            index += 1
            if arg in _REPEATABLE:
                options.setdefault(_REPEATABLE[arg], []).append(value)
            else:
                options[_VALUES[arg]] = value
        elif arg.startswith("-"):
            raise _McpUsageError(f"unknown option {arg} (see: tau mcp --help)")
        else:
            words.append(arg)
        index += 1
    return words, options, tail


def _pairs(values: list[str], what: str) -> dict[str, str]:
    pairs: dict[str, str] = {}
    for value in values:
        key, sep, rest = value.partition("=")
        if not sep or not key:
            raise _McpUsageError(f"{what} takes KEY=VALUE, not {value!r}")
        pairs[key] = rest
    return pairs


def _config_path(local: bool) -> Path:
    from tau.config.mcp_servers import global_config_path

    return Path(os.getcwd()) / ".tau" / "mcp.json" if local else global_config_path(_agent_dir())


def _add(argv: list[str]) -> int:
    from tau.config.mcp_servers import validate_server

    words, options, tail = _parse(argv)
    if len(words) != 1:
        raise _McpUsageError("usage: tau mcp add <server> [options] -- <command> [args...]  (or --url <url>)")
    name = words[0]
    entry: dict[str, Any] = {}
    if "url" in options:
        if tail:
            raise _McpUsageError("give either --url or a command after --, not both")
        entry["url"] = options["url"]
        headers = _pairs(options.get("header", []), "--header")
        if "bearer" in options:
            headers["Authorization"] = f"Bearer ${{{options['bearer']}}}"
        if headers:
            entry["headers"] = headers
        oauth: dict[str, Any] = {
            k: options[k]
            for k in ("clientId", "clientSecret", "clientName", "clientRegistration")
            if k in options
        }
        if "callbackPort" in options:
            oauth["callbackPort"] = _number(options["callbackPort"], "--oauth-callback-port", integer=True)
        if oauth:
            entry["oauth"] = oauth
    else:
        if not tail:
            raise _McpUsageError("give the server's command after --, or --url <url>")
        entry["command"], entry["args"] = tail[0], tail[1:]
        if not entry["args"]:
            del entry["args"]
        env = _pairs(options.get("env", []), "--env")
        if env:
            entry["env"] = env
        if "cwd" in options:
            entry["cwd"] = options["cwd"]
    for key in ("exposure", "description"):
        if key in options:
            entry[key] = options[key]
    if "timeout" in options:
        entry["timeout"] = _number(options["timeout"], "--timeout")
    checked = validate_server(name, entry)
    if isinstance(checked, str):
        raise _McpUsageError(checked)
    from tau.config.mcp_servers import add_server

    path = _config_path(bool(options.get("local")))
    replaced = add_server(path, name, entry)
    print(f"{'Replaced' if replaced else 'Added'} MCP server {name!r} in {path}; check it with: tau mcp list")
    return 0


def _number(value: str, flag: str, *, integer: bool = False) -> float | int:
    try:
        number = int(value) if integer else float(value)
    except ValueError:
        raise _McpUsageError(f"{flag} takes a number, not {value!r}") from None
    return number


def _remove(argv: list[str]) -> int:
    from tau.config.mcp_servers import remove_server

    words, options, _ = _parse(argv)
    if len(words) != 1:
        raise _McpUsageError("usage: tau mcp remove <server> [-l]")
    path = _config_path(bool(options.get("local")))
    if not remove_server(path, words[0]):
        raise _McpUsageError(f"no MCP server {words[0]!r} in {path}")
    print(f"Removed MCP server {words[0]!r} from {path}")
    return 0


def _trusted(cwd: str, agent_dir: str) -> bool:
    from tau.config.project_trust import ProjectTrust
    from tau.config.settings import SettingsManager

    default = SettingsManager.create(cwd, agent_dir, project=False).default_project_trust
    return ProjectTrust(agent_dir, default=default).is_trusted(cwd)


def _load(cwd: str, agent_dir: str) -> tuple[Any, str | None]:
    from tau.config.mcp_servers import load_mcp_config, project_config_path

    trusted = _trusted(cwd, agent_dir)
    note = None
    if not trusted and project_config_path(cwd).exists():
        note = (
            f"{project_config_path(cwd)} is not read: this folder is not trusted (start tau here to trust it)"
        )
    return load_mcp_config(cwd, agent_dir, include_project=trusted), note


def _list(argv: list[str]) -> int:
    words, options, _ = _parse(argv)
    if words:
        raise _McpUsageError("usage: tau mcp list [--json]")
    from tau.mcp.connection import MISSING_SDK_MESSAGE

    cwd, agent_dir = os.getcwd(), _agent_dir()
    config, note = _load(cwd, agent_dir)
    if any(s.enabled for s in config.servers.values()):
        try:
            import mcp  # noqa: F401
        except ImportError:
            raise _McpUsageError(MISSING_SDK_MESSAGE) from None
    connections = asyncio.run(_connect_all(config, cwd, agent_dir))
    from tau.mcp.listing import describe_server, server_report

    failed = bool(config.errors) or any(c.config.enabled and c.state != "connected" for c in connections)
    if options.get("json"):
        body: dict[str, Any] = {"servers": [server_report(c) for c in connections], "errors": config.errors}
        if note:
            body["note"] = note
        print(json.dumps(body, indent=2))
        return 1 if failed else 0
    if not connections and not config.errors:
        print(
            f"No MCP servers configured. Add them with: tau mcp add (or edit {Path(agent_dir) / 'mcp.json'})"
        )
    for connection in connections:
        print("\n".join(describe_server(connection)))
    for error in config.errors:
        print(f"config error: {error}")
    if note:
        print(note)
    return 1 if failed else 0


async def _connect_all(config: Any, cwd: str, agent_dir: str) -> list[Any]:
    from tau.mcp.connection import McpCallError, ServerConnection
    from tau.mcp.oauth import oauth_factory

    def provider_token(provider: str) -> str | None:
        from tau.accounts.model_registry import ModelRegistry

        return ModelRegistry.create(Path(agent_dir)).get_api_key_for_provider(provider)

    factory = oauth_factory(agent_dir, provider_token)
    connections = [ServerConnection(s, cwd, auth_factory=factory) for s in config.servers.values()]

    async def check(connection: ServerConnection) -> None:
        if not connection.config.enabled:
            return
        try:
            await connection.connected(connection.config.timeout_s)
        except McpCallError as exc:
            if connection.state == "connecting":  # still starting when its time ran out
                connection.state, connection.error = "failed", str(exc)
        reached, error = connection.state, connection.error
        await connection.close()
        connection.state, connection.error = reached, error  # what the check found, not "closed"

    await asyncio.gather(*(check(c) for c in connections))
    return connections


def _login(argv: list[str], *, logout: bool) -> int:
    from tau.mcp.oauth_signin import sign_in
    from tau.mcp.oauth_store import storage_for

    words, options, _ = _parse(argv)
    if len(words) != 1:
        raise _McpUsageError(f"usage: tau mcp {'logout' if logout else 'login'} <server>")
    cwd, agent_dir = os.getcwd(), _agent_dir()
    config, _ = _load(cwd, agent_dir)
    server = config.servers.get(words[0])
    if server is None or server.transport != "http":
        raise _McpUsageError(f"no HTTP MCP server named {words[0]!r} in mcp.json")
    if options.get("local") and server.scope != "project":
        raise _McpUsageError(f"MCP server {words[0]!r} is not defined in this project's mcp.json (-l)")
    if logout:
        storage = storage_for(agent_dir, server)
        print(f"Signed out of {server.name}" if storage.forget() else f"No stored sign-in for {server.name}")
        return 0
    timeout = float(_number(options.get("timeout", "300"), "--timeout"))

    def show(url: str) -> None:
        print(f"Open this page to sign in to {server.name}:\n{url}", flush=True)
        import webbrowser

        webbrowser.open(url)

    asyncio.run(sign_in(agent_dir, server, open_url=show, timeout=timeout))
    print(f"Signed in to {server.name}")
    return 0
