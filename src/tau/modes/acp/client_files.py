"""read, write and edit through the editor (``fs/read_text_file`` / ``fs/write_text_file``).

When the client offers them, these tools see its unsaved buffers and their changes land in the
editor, which shows them; without them tau's own tools touch the disk as elsewhere.
"""

from __future__ import annotations

import os

from tau._dataclass import dataclass
from tau.agent.tool import AgentTool
from tau.modes.acp.jsonrpc import Connection
from tau.tools.edit import create_edit_tool
from tau.tools.read import create_read_tool
from tau.tools.write import create_write_tool

__all__ = ["ClientFileOperations", "client_file_tools"]


@dataclass
class ClientFileOperations:
    """The read/write/edit operations of one ACP session over the client's file system."""

    conn: Connection
    session_id: str
    can_read: bool
    can_write: bool

    async def read_file(self, path: str) -> bytes:
        if not self.can_read:
            with open(path, "rb") as file:
                return file.read()
        try:
            response = await self.conn.request(
                "fs/read_text_file", {"sessionId": self.session_id, "path": path}
            )
        except Exception as exc:  # the client's JSON-RPC error, e.g. no such file
            raise FileNotFoundError(2, str(exc) or "the editor could not read it", path) from exc
        content = response.get("content") if isinstance(response, dict) else None
        if not isinstance(content, str):
            raise OSError(5, "the editor sent no file content", path)
        return content.encode("utf-8")

    async def write_file(self, path: str, text: str) -> None:
        if not self.can_write:
            with open(path, "w", encoding="utf-8", newline="") as file:
                file.write(text)
            return
        try:
            params = {"sessionId": self.session_id, "path": path, "content": text}
            await self.conn.request("fs/write_text_file", params)
        except Exception as exc:
            raise OSError(5, str(exc) or "the editor could not write it", path) from exc

    async def access(self, path: str) -> None:
        # The editor answers for its buffers; whether the file exists shows when it is read.
        if not self.can_read and not os.path.isfile(path):
            raise FileNotFoundError(2, "No such file or directory", path)

    async def mkdir(self, path: str) -> None:
        if not self.can_write:
            os.makedirs(path, exist_ok=True)


def client_file_tools(cwd: str, ops: ClientFileOperations) -> list[AgentTool]:
    """The tools the client's file system replaces (they override the built-ins of the same name)."""
    tools: list[AgentTool] = []
    if ops.can_read:
        tools.append(create_read_tool(cwd, ops))
    if ops.can_write:
        tools.append(create_write_tool(cwd, ops))
    if ops.can_read and ops.can_write:
        tools.append(create_edit_tool(cwd, ops))
    return tools
