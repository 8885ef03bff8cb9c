"""Reading and editing ``mcp.json`` (pi 1.x's shape, which other MCP clients share).

``{"mcpServers": {"<name>": {...}}}``: a ``command`` (with ``args``, ``env``, ``cwd``) is a stdio
server, a ``url`` (with ``headers``, ``oauth``, or ``auth: {"provider"}`` to send a model provider's
login) a Streamable HTTP one. Both take ``timeout`` (seconds
per request, default 60), ``enabled``, ``exposure``, ``toolExposure`` and ``description``. The global
file is ``<agent dir>/mcp.json``; a trusted project adds ``.tau/mcp.json`` (or, when that is missing,
pi's ``.pi/mcp.json``), whose entries replace global ones of the same name. A project entry with no
``command``, ``url`` or ``type`` only overrides ``enabled``/``exposure``/``toolExposure`` of the global
server. A bad entry is reported and skipped; the others still load. Nothing here needs the SDK.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Literal, TypeAlias

from msgspec import Struct, field
from msgspec.structs import replace

from tau.config.config_values import interpolate, missing_variables

__all__ = [
    "DEFAULT_EXPOSURE",
    "EXPOSURES",
    "MCP_FILE",
    "Exposure",
    "McpConfig",
    "ServerConfig",
    "add_server",
    "edit_servers",
    "expand_value",
    "global_config_path",
    "has_mcp_config",
    "load_mcp_config",
    "project_config_path",
    "remove_server",
    "set_server_fields",
    "tool_exposure",
    "validate_server",
]

MCP_FILE = "mcp.json"
Exposure: TypeAlias = Literal["codemode", "deferred", "direct", "hidden"]
EXPOSURES: tuple[Exposure, ...] = ("codemode", "deferred", "direct", "hidden")
DEFAULT_EXPOSURE: Exposure = "codemode"
"""pi's default: tools called from ``codemode`` scripts. (Without the ``quickjs`` package they are reached like deferred ones, through
``tool_search``; the value is kept as written so the file means the same in pi."""
_ALIASES = {"codemode-deferred": "codemode"}
_OVERRIDE_KEYS = ("enabled", "exposure", "toolExposure")
_NAME = re.compile(r"^[A-Za-z0-9_-]+$")
DEFAULT_TIMEOUT_S = 60.0


class ServerConfig(Struct, frozen=True):
    """One validated ``mcpServers`` entry and where it came from."""

    name: str
    transport: Literal["stdio", "http"]
    command: str = ""
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str = ""
    headers: Mapping[str, str] = field(default_factory=dict)
    oauth: Mapping[str, Any] = field(default_factory=dict)
    auth_provider: str | None = None
    """``"auth": {"provider": "<id>"}``: the requests carry that model provider's login (pi's Radius entry)."""
    timeout_s: float = DEFAULT_TIMEOUT_S
    enabled: bool = True
    exposure: Exposure = DEFAULT_EXPOSURE
    tool_exposure: Mapping[str, Exposure] = field(default_factory=dict)
    description: str = ""
    source: str = ""
    scope: Literal["global", "project"] = "global"
    override: str | None = None
    """The project file that overrides this global server's enabled state or exposure."""
    literal: bool = False
    """``env`` and ``headers`` values are taken as they are, not expanded (an editor's, over ACP)."""
    extension: str = ""
    """The path of the extension that registered the server (``tau.register_mcp_server``), else empty."""

    def value(self, raw: str) -> str:
        """An ``env`` or ``headers`` value as the server gets it."""
        return raw if self.literal else expand_value(raw)

    def describe_transport(self) -> str:
        """The URL, or the command line (for listings)."""
        return self.url if self.transport == "http" else " ".join([self.command, *self.args])


class McpConfig(Struct):
    servers: dict[str, ServerConfig] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    project_path: str | None = None
    """The project file that was read (``None``: the folder is not trusted, or has none)."""
    auto_enable_codemode: bool = True
    """pi's top-level ``autoEnableCodemode``: activate ``codemode`` for ``codemode`` servers (the
    project file's value wins)."""


def global_config_path(agent_dir: str | os.PathLike[str]) -> Path:
    return Path(agent_dir) / MCP_FILE


def project_config_path(cwd: str | os.PathLike[str]) -> Path:
    """``.tau/mcp.json``, or pi's ``.pi/mcp.json`` when only that one exists."""
    own = Path(cwd) / ".tau" / MCP_FILE
    pi = Path(cwd) / ".pi" / MCP_FILE
    return pi if not own.exists() and pi.exists() else own


def has_mcp_config(cwd: str, agent_dir: str, *, include_project: bool) -> bool:
    """Whether an ``mcp.json`` exists that a session would read (two ``stat`` calls, no parsing)."""
    if os.path.exists(os.path.join(agent_dir, MCP_FILE)):
        return True
    return include_project and project_config_path(cwd).exists()


def load_mcp_config(cwd: str, agent_dir: str, *, include_project: bool = True) -> McpConfig:
    """The global servers, overlaid by the project's when ``include_project`` (a trusted folder)."""
    config = McpConfig()
    _read_file(global_config_path(agent_dir), "global", config)
    if include_project:
        path = project_config_path(cwd)
        if path.exists():
            config.project_path = str(path)
            _read_file(path, "project", config)
    return config


def _read_file(path: Path, scope: Literal["global", "project"], config: McpConfig) -> None:
    data = _read_json(path, config.errors)
    if data is None:
        return
    auto = data.get("autoEnableCodemode")
    if isinstance(auto, bool):
        config.auto_enable_codemode = auto
    elif auto is not None:
        config.errors.append(f"{path}: autoEnableCodemode must be a boolean")
    servers = data.get("mcpServers", {})
    if not isinstance(servers, dict):
        config.errors.append(f'{path}: expected an object with an "mcpServers" object')
        return
    for name, raw in servers.items():
        if scope == "project" and isinstance(raw, dict) and _is_override(raw):
            base = config.servers.get(name)
            extra = [key for key in raw if key not in _OVERRIDE_KEYS]
            if base is None:
                config.errors.append(
                    f'{path}: server "{name}" needs "command" or "url", or a global server to override'
                )
            elif extra:
                config.errors.append(
                    f'{path}: server "{name}": an override can only set {", ".join(_OVERRIDE_KEYS)}'
                )
            else:
                problem, fields = _common_fields(raw, base)
                if problem is not None:
                    config.errors.append(f'{path}: server "{name}": {problem}')
                else:
                    config.servers[name] = replace(base, override=str(path), **fields)
            continue
        server = validate_server(name, raw, source=str(path), scope=scope)
        if isinstance(server, str):
            config.errors.append(f"{path}: {server}")
            continue
        clash = next((o for o in config.servers if o != name and _namespace(o) == _namespace(name)), None)
        if clash is not None:
            config.errors.append(f'{path}: server "{name}" conflicts with "{clash}"')
            continue
        config.servers[name] = server


def _read_json(path: Path, errors: list[str]) -> dict[str, Any] | None:
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        return None
    except OSError as exc:
        errors.append(f"{path}: {exc.strerror or exc}")
        return None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        errors.append(f"{path}: invalid JSON ({exc.msg} at line {exc.lineno})")
        return None
    if not isinstance(data, dict):
        errors.append(f'{path}: expected an object with an "mcpServers" object')
        return None
    return data


def _is_override(raw: Mapping[str, Any]) -> bool:
    return not any(key in raw for key in ("command", "url", "type"))


def _namespace(name: str) -> str:
    return name.replace("-", "_")


def _string_map(value: Any, what: str) -> tuple[str | None, dict[str, str]]:
    if value is None:
        return None, {}
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        return f"{what} must map names to strings", {}
    return None, dict(value)


def _common_fields(
    raw: Mapping[str, Any], base: ServerConfig | None = None
) -> tuple[str | None, dict[str, Any]]:
    """``enabled``, ``exposure`` and ``toolExposure`` of ``raw`` (aliases resolved), checked."""
    fields: dict[str, Any] = {}
    if "enabled" in raw:
        if not isinstance(raw["enabled"], bool):
            return "enabled must be true or false", {}
        fields["enabled"] = raw["enabled"]
    choices = ", ".join(f'"{e}"' for e in EXPOSURES)
    if "exposure" in raw:
        exposure = (
            _ALIASES.get(raw["exposure"], raw["exposure"]) if isinstance(raw["exposure"], str) else None
        )
        if exposure not in EXPOSURES:
            return f"exposure must be one of {choices}", {}
        fields["exposure"] = exposure
    if "toolExposure" in raw:
        mapping = raw["toolExposure"]
        if not isinstance(mapping, dict):
            return "toolExposure must map tool names to exposures", {}
        resolved: dict[str, Exposure] = {}
        for tool, value in mapping.items():
            value = _ALIASES.get(value, value) if isinstance(value, str) else value
            if value not in EXPOSURES:
                return f'toolExposure "{tool}" must be one of {choices}', {}
            resolved[tool] = value
        fields["tool_exposure"] = resolved
    return None, fields


def validate_server(
    name: str, raw: Any, *, source: str = "", scope: Literal["global", "project"] = "global"
) -> ServerConfig | str:
    """The entry as a ``ServerConfig``, or what is wrong with it (one line)."""
    if not _NAME.match(name):
        return f'server "{name}": names may contain only letters, digits, "_" and "-"'
    if not isinstance(raw, dict):
        return f'server "{name}": expected an object'
    problem = _validate_fields(name, raw)
    if isinstance(problem, str):
        return f'server "{name}": {problem}'
    return replace(problem, source=source, scope=scope)


def _validate_fields(name: str, raw: Mapping[str, Any]) -> ServerConfig | str:
    kind = raw.get("type")
    if kind == "sse":
        return "the SSE transport is not supported; use the server's Streamable HTTP endpoint (often /mcp)"
    if kind is not None and kind not in ("stdio", "http", "streamable-http"):
        return 'type must be "stdio", "http" or "streamable-http"'
    problem, common = _common_fields(raw)
    if problem is not None:
        return problem
    timeout = raw.get("timeout", DEFAULT_TIMEOUT_S)
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0:
        return "timeout must be a positive number of seconds"
    description = raw.get("description", "")
    if not isinstance(description, str):
        return "description must be a string"
    common.update(timeout_s=float(timeout), description=description)
    is_http = kind in ("http", "streamable-http") or (kind is None and "url" in raw)
    if is_http:
        url = raw.get("url")
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            return "url must be an http:// or https:// URL"
        problem, headers = _string_map(raw.get("headers"), "headers")
        if problem is not None:
            return problem
        oauth = raw.get("oauth", {})
        if not isinstance(oauth, dict):
            return "oauth must be an object"
        auth = raw.get("auth")
        provider = auth.get("provider") if isinstance(auth, dict) else None
        if auth is not None and (not isinstance(provider, str) or not provider):
            return 'auth must be {"provider": "<model provider>"}'
        return ServerConfig(
            name, "http", url=url, headers=headers, oauth=oauth, auth_provider=provider, **common
        )
    command = raw.get("command")
    if not isinstance(command, str) or not command.strip():
        return 'needs "command" (a stdio server) or "url" (an HTTP server)'
    args = raw.get("args", [])
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        return "args must be a list of strings"
    problem, env = _string_map(raw.get("env"), "env")
    if problem is not None:
        return problem
    cwd = raw.get("cwd")
    if cwd is not None and not isinstance(cwd, str):
        return "cwd must be a string"
    return ServerConfig(name, "stdio", command=command, args=tuple(args), env=env, cwd=cwd, **common)


def tool_exposure(server: ServerConfig, tool: str) -> Exposure:
    """A tool's exposure: its exact ``toolExposure`` entry, else the first matching ``*`` pattern,
    else the server's."""
    overrides = server.tool_exposure
    if tool in overrides:
        return overrides[tool]
    for pattern, exposure in overrides.items():
        if "*" in pattern and re.fullmatch(".*".join(map(re.escape, pattern.split("*"))), tool):
            return exposure
    return server.exposure


def expand_value(value: str, environ: Mapping[str, str] | None = None) -> str:
    """An ``env``/``headers`` value with ``$NAME``/``${NAME}`` filled in from the environment
    (``config_values``, as pi 1.6; ``ValueError`` naming an unset one); a value starting with ``!``
    is a shell command whose output (trimmed) is the value."""
    env = os.environ if environ is None else environ
    if value.startswith("!"):
        from tau import _process_groups as process_groups

        done = process_groups.run(value[1:], shell=True, capture_output=True, text=True, timeout=30)
        if done.returncode != 0:
            raise ValueError(f"command {value[1:]!r} failed with exit code {done.returncode}")
        output: str = done.stdout.strip()
        return output
    expanded = interpolate(value, env)
    if expanded is None:
        missing = missing_variables(value, env)
        raise ValueError(
            f"environment variable{'s' if len(missing) > 1 else ''} not set: {', '.join(missing)}"
        )
    return expanded


# -- editing -----------------------------------------------------------------------------------


def edit_servers(path: Path, change: Callable[[dict[str, Any]], bool]) -> bool:
    """Apply ``change`` to the file's ``mcpServers`` object as the file holds it now, under the
    file's lock (``<file>.lock``, the lock format of the other shared files), and replace the file
    atomically when it says something changed; other content is kept, and so are servers another
    process added meanwhile. Raises ``ValueError`` for a file that cannot be used, ``OSError``
    when it cannot be written (or stays locked)."""
    from tau._shared_file import update_json_file

    def read(target: Path) -> dict[str, Any]:
        errors: list[str] = []
        data = _read_json(target, errors)
        if errors:
            raise ValueError(errors[0])
        return data or {}

    def apply(data: dict[str, Any]) -> bool:
        servers = data.get("mcpServers", {})
        if not isinstance(servers, dict):
            raise ValueError(f'{path}: expected an object with an "mcpServers" object')
        if not change(servers):
            return False
        data["mcpServers"] = servers
        return True

    # A new file is for its owner only (its headers and env may hold keys); an existing one keeps its bits.
    mode = None if path.exists() else 0o600
    return update_json_file(path, apply, read=read, follow_links=False, mode=mode)


def add_server(path: Path, name: str, entry: dict[str, Any]) -> bool:
    """Add or replace ``name`` in the file (created when missing); ``True`` when one was replaced."""
    replaced = False

    def change(servers: dict[str, Any]) -> bool:
        nonlocal replaced
        replaced = name in servers
        servers[name] = entry
        return True

    edit_servers(path, change)
    return replaced


def remove_server(path: Path, name: str) -> bool:
    """Remove ``name`` from the file; ``False`` when it was not there."""
    if not path.exists():
        return False
    return edit_servers(path, lambda servers: servers.pop(name, None) is not None)


def set_server_fields(
    path: Path, name: str, fields: Mapping[str, Any], *, create_override: bool = False
) -> None:
    """Set ``enabled``/``exposure`` of ``name`` in the file that defines (or overrides) it.
    ``create_override`` adds a project override for a global server."""

    def change(servers: dict[str, Any]) -> bool:
        entry = servers.get(name)
        if entry is None and create_override:
            entry = servers[name] = {}
        if not isinstance(entry, dict):
            raise ValueError(f'{path} does not define MCP server "{name}"')
        for key, value in fields.items():
            # A full entry drops a default; an override must keep it, since it replaces the global value.
            if not _is_override(entry) and (key, value) in (
                ("enabled", True),
                ("exposure", DEFAULT_EXPOSURE),
            ):
                entry.pop(key, None)
            else:
                entry[key] = value
        return True

    edit_servers(path, change)
