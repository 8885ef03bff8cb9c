"""How a server's state reads in ``tau mcp list`` and ``/mcp`` (pi's layout), and as JSON."""

from __future__ import annotations

from typing import Any

from tau.config.mcp_servers import tool_exposure
from tau.mcp.connection import ServerConnection

__all__ = ["describe_server", "server_report"]


def server_report(connection: ServerConnection) -> dict[str, Any]:
    """The ``--json`` entry of one server (pi's keys)."""
    config = connection.config
    state = connection.state if config.enabled else "disabled"
    report: dict[str, Any] = {
        "name": config.name,
        "scope": config.scope,
        "source": config.source,
        "enabled": config.enabled,
        "exposure": config.exposure,
        "transport": config.describe_transport(),
        "state": "disconnected" if state == "idle" else state,
        "tools": [str(t.get("name")) for t in connection.tools] if config.enabled else [],
    }
    if config.override:
        report["override"] = config.override
    differing = {
        tool: exposure
        for tool in report["tools"]
        if (exposure := tool_exposure(config, tool)) != config.exposure
    }
    if differing:
        report["toolExposure"] = differing
    if connection.has_resources:
        report["resources"] = True
    if state != "connected" and connection.error:
        report["error"] = connection.error
    if state == "connected" and connection.skipped_tools:
        report["skippedTools"] = list(connection.skipped_tools)
    return report


def describe_server(connection: ServerConnection) -> list[str]:
    """The lines of one server: state, transport, tools, error."""
    report = server_report(connection)
    tools: list[str] = report["tools"]
    if report["state"] == "connected":
        state = f"connected, {len(tools)} tool{'s' if len(tools) != 1 else ''}"
    elif report["state"] == "needs-auth":
        state = "needs sign-in"
    else:
        state = report["state"]
    lines = [
        f"{report['name']}: {state} ({report['exposure']}, {report['scope']})",
        f"  {report['transport']}",
    ]
    if "override" in report:
        lines.append(f"  project override: {report['override']}")
    if report["state"] == "needs-auth":
        lines.append(f"  sign in with: tau mcp login {report['name']}")
    if tools:
        marked = [
            f"{t} [{report['toolExposure'][t]}]" if t in report.get("toolExposure", {}) else t for t in tools
        ]
        lines.append(f"  tools: {', '.join(marked)}")
    if report.get("resources"):
        lines.append("  offers resources")
    lines += [f"  {line}" for line in report.get("skippedTools", [])]
    if "error" in report:
        lines += [f"  {line}" for line in str(report["error"]).splitlines()]
    return lines
