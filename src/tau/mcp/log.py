"""``<agent dir>/mcp.log``: the logging notifications of MCP servers, one line each, as pi writes
them (``<time> [<server>] <level> <logger>: <message>``); the file moves to ``mcp.log.1`` once it
grows past 5 MB."""

from __future__ import annotations

import datetime
import json
import os
from pathlib import Path
from typing import Any

__all__ = ["LOG_FILE", "append_server_log"]

LOG_FILE = "mcp.log"
_MAX_BYTES = 5 * 1024 * 1024


def append_server_log(agent_dir: str, server: str, level: str, logger: str | None, data: Any) -> None:
    """Append one record; a log that cannot be written is skipped (it must never fail a call)."""
    path = Path(agent_dir) / LOG_FILE
    message = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
    stamp = datetime.datetime.now(datetime.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    line = f"{stamp} [{server}] {level} {logger or '-'}: {message}".replace("\n", " ") + "\n"
    try:
        if path.exists() and path.stat().st_size > _MAX_BYTES:
            os.replace(path, path.with_name(LOG_FILE + ".1"))
        with open(path, "a", encoding="utf-8") as f:
            f.write(line)
    except OSError:
        pass
