"""MCP (Model Context Protocol) servers built into tau, in pi 1.x's formats.

Servers are configured in ``mcp.json`` (``<agent dir>/mcp.json``; a trusted project's
``.tau/mcp.json``, or ``.pi/mcp.json`` when that is missing) under ``mcpServers``. Their tools reach
the model as ``mcp__<server>__<tool>``. ``tau.config.mcp_servers`` reads the files without the SDK; the
connections (``tau.mcp.connection``) need the official ``mcp`` SDK, the ``tau-agent[mcp]`` extra,
imported only once a configured server starts. ``tau.mcp.extension`` is the built-in extension that
puts it all into a session.
"""
