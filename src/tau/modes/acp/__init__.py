"""ACP mode (``tau --mode acp``): tau as an Agent Client Protocol server for editors.

JSON-RPC 2.0 over stdin/stdout, spoken by tau itself in plain dicts (``jsonrpc``; the
``agent-client-protocol`` SDK is only the tests' client); this package is imported only in this
mode. Each ACP session is a tau session file (the ACP session id is the file's session id), so
``tau -c`` in a terminal continues a session an editor started.
"""

from tau.modes.acp.server import SessionOpener, run_acp_mode

__all__ = ["SessionOpener", "run_acp_mode"]
