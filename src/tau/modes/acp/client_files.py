"""read, write and edit through the editor (``fs/read_text_file`` / ``fs/write_text_file``).

When the client offers them, these tools see its unsaved buffers and their changes land in the
editor, which shows them; without them they touch the disk as tau's own tools do. The write tool
is the session's either way: it reads what it overwrites, so that the finished call's diff has the
old text (an overwrite would show as a new file otherwise).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable

import msgspec
from msgspec import Struct, field

from tau.agent.tool import AgentTool, AgentToolResult, ToolUpdate
from tau.ai.abort import AbortSignal
from tau.ai.types import JsonObject
from tau.modes.acp.jsonrpc import Connection
from tau.tools.edit import create_edit_tool
from tau.tools.images import ImageLimits, sniff_image_mime_type
from tau.tools.operations import LocalFileOperations
from tau.tools.paths import resolve_to_cwd
from tau.tools.read import create_read_tool
from tau.tools.write import create_write_tool

__all__ = ["OLD_TEXT_LIMIT", "ClientFileOperations", "client_file_tools"]

# A file overwritten that is bigger than this on disk gets no old text in its diff (not read).
OLD_TEXT_LIMIT = 1024 * 1024


class ClientFileOperations(Struct, dict=True):
    """The read/write/edit operations of one ACP session over the client's file system."""

    conn: Connection
    session_id: str
    can_read: bool
    can_write: bool
    local: LocalFileOperations = field(default_factory=LocalFileOperations)

    async def read_file(self, path: str) -> bytes:
        if not self.can_read or await asyncio.to_thread(
            _image_on_disk, path
        ):  # the editor serves text: an image is the disk's
            return await self.local.read_file(path)
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
            await self.local.write_file(path, text)
            return
        try:
            params = {"sessionId": self.session_id, "path": path, "content": text}
            await self.conn.request("fs/write_text_file", params)
        except Exception as exc:
            raise OSError(5, str(exc) or "the editor could not write it", path) from exc

    async def access(self, path: str) -> None:
        # The editor answers for its buffers; whether the file exists shows when it is read.
        if not self.can_read:
            await self.local.access(path)

    async def mkdir(self, path: str) -> None:
        if not self.can_write:
            await self.local.mkdir(path)

    async def old_text(self, path: str) -> str | None:
        """What a write to ``path`` replaces: ``None`` for a new file (or one not read)."""
        if not self.can_read:
            try:
                if os.path.getsize(path) > OLD_TEXT_LIMIT:
                    return None
            except OSError:
                return None
        try:
            return (await self.read_file(path)).decode("utf-8")
        except (OSError, UnicodeDecodeError):
            return None


def _image_on_disk(path: str) -> bool:
    try:
        with open(path, "rb") as file:
            return sniff_image_mime_type(file.read(16)) is not None
    except OSError:
        return False


def client_file_tools(
    cwd: str,
    ops: ClientFileOperations,
    old_texts: dict[str, str | None],
    auto_resize_images: Callable[[], bool] | None = None,
    image_limits: Callable[[], ImageLimits] | None = None,
) -> list[AgentTool]:
    """The built-in tools this session has its own of: write always (each call's old text goes in
    ``old_texts`` by call id), read and edit when the client serves the files. ``auto_resize_images``
    (asked per read) is the ``images.autoResize`` setting and ``image_limits`` the current model's
    image limits, as for tau's own read tool."""
    tools: list[AgentTool] = []
    if ops.can_read:
        tools.append(
            create_read_tool(
                cwd, ops, auto_resize_images=auto_resize_images or True, image_limits=image_limits
            )
        )
    tools.append(_keeping_old_text(create_write_tool(cwd, ops), cwd, ops, old_texts))
    if ops.can_read and ops.can_write:
        tools.append(create_edit_tool(cwd, ops))
    return tools


def _keeping_old_text(
    tool: AgentTool, cwd: str, ops: ClientFileOperations, old_texts: dict[str, str | None]
) -> AgentTool:
    run = tool.execute

    async def execute(
        tool_call_id: str, args: JsonObject, signal: AbortSignal | None, on_update: ToolUpdate | None
    ) -> AgentToolResult:
        path = args.get("path")
        if isinstance(path, str) and path:
            old_texts[tool_call_id] = await ops.old_text(resolve_to_cwd(path, cwd))
        return await run(tool_call_id, args, signal, on_update)

    return msgspec.structs.replace(tool, execute=execute)
