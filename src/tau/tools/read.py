"""The ``read`` tool: a text file (a window of it, with a note naming the next offset) or an image.

Beyond pi: a binary file or a directory is refused with an error that says so and what to use
instead, rather than returned as replacement characters.
"""

from __future__ import annotations

import asyncio
import base64
import os
from collections.abc import Callable

from msgspec import Struct, structs

from tau.agent.tool import AgentTool, AgentToolResult, ToolUpdate
from tau.ai.abort import AbortSignal
from tau.ai.types import ImageContent, JsonObject, JsonSchemaSampling, TextContent
from tau.tools.errors import ToolAborted, ToolError, describe_os_error, raise_if_aborted
from tau.tools.images import (
    DEFAULT_IMAGE_LIMITS,
    ImageLimits,
    ImageResizer,
    image_size,
    sniff_image_mime_type,
)
from tau.tools.line_window import LineWindow, SelectedLines
from tau.tools.operations import LocalFileOperations, ReadOperations, open_regular
from tau.tools.paths import resolve_read_path
from tau.tools.truncate import DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, format_size

_BINARY_SAMPLE = 8192
_BINARY_REPLACEMENT_RATIO = 0.1
_CHUNK_BYTES = 1024 * 1024
# Far beyond what any provider takes (the resizer brings what it can under the request's cap).
MAX_IMAGE_FILE_BYTES = 64 * 1024 * 1024

READ_PARAMETERS: JsonObject = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": "Path to the file to read (relative or absolute)"},
        "offset": {"type": "number", "description": "Line number to start reading from (1-indexed)"},
        "limit": {"type": "number", "description": "Maximum number of lines to read"},
    },
    "required": ["path"],
}

READ_DESCRIPTION = (
    "Read the contents of a file. Supports text files and images (jpg, png, gif, webp); images are "
    f"sent as attachments. Text output is truncated to {DEFAULT_MAX_LINES} lines or "
    f"{DEFAULT_MAX_BYTES // 1024}KB (whichever is hit first). Use offset/limit for large files; when "
    "the output says more lines remain, continue with the offset it gives until you have what you need."
)


def _looks_binary(data: bytes) -> bool:
    sample = data[:_BINARY_SAMPLE]
    if b"\0" in sample:
        return True
    if sample.isascii():
        return False
    decoded = sample.decode("utf-8", "replace")
    return decoded.count("\ufffd") > _BINARY_REPLACEMENT_RATIO * len(decoded)


def _text_result(
    selected: SelectedLines, path: str, offset: int | None, limit: int | None
) -> AgentToolResult:
    total = selected.total_lines
    start = max(0, offset - 1) if offset else 0
    if start >= total:
        raise ToolError(f"Offset {offset} is beyond end of file ({total} lines total)")
    end = min(start + max(limit, 0), total) if limit is not None else total
    cut = selected.cut
    details: JsonObject | None = None

    if cut.first_line_exceeds_limit:
        line_no = start + 1
        size = format_size(selected.first_line_bytes)
        output = (
            f"[Line {line_no} is {size}, over the {format_size(DEFAULT_MAX_BYTES)} limit. "
            f"Use bash: sed -n '{line_no}p' {path} | head -c {DEFAULT_MAX_BYTES}]"
        )
        details = {"truncation": cut.to_json()}
    elif cut.truncated:
        last = start + cut.output_lines
        limit_note = f" ({format_size(DEFAULT_MAX_BYTES)} limit)" if cut.truncated_by == "bytes" else ""
        output = (
            f"{cut.content}\n\n[Showing lines {start + 1}-{last} of {total}{limit_note}. "
            f"Use offset={last + 1} to continue.]"
        )
        details = {"truncation": cut.to_json()}
    elif limit is not None and end < total:
        output = f"{cut.content}\n\n[{total - end} more lines in file. Use offset={end + 1} to continue.]"
    else:
        output = cut.content
    return AgentToolResult(content=[TextContent(output)], details=details)


class _FileContent(Struct, frozen=True):
    """A file as the read tool needs it: an image's bytes, a binary file's size, or a text window."""

    size: int
    image: tuple[bytes, str] | None = None
    binary: bool = False
    text: SelectedLines | None = None


def _classify(head: bytes) -> tuple[str | None, bool]:
    mime_type = sniff_image_mime_type(head[:16])
    return mime_type, mime_type is None and _looks_binary(head)


def _content_of(data: bytes, start: int, end: int | None) -> _FileContent:
    """The whole file in memory (operations that only read whole files)."""
    mime_type, binary = _classify(data[:_BINARY_SAMPLE])
    if mime_type is not None:
        return _FileContent(len(data), image=(data, mime_type))
    if binary:
        return _FileContent(len(data), binary=True)
    window = LineWindow(start, end)
    window.feed(data)
    return _FileContent(len(data), text=window.finish())


def _read_local(path: str, start: int, end: int | None, signal: AbortSignal | None) -> _FileContent:
    """Read a local file once, keeping no more of a text file than the window can show."""
    with open(open_regular(path, os.O_RDONLY), "rb") as file:
        size = os.fstat(file.fileno()).st_size
        head = file.read(_BINARY_SAMPLE)
        mime_type, binary = _classify(head)
        if mime_type is not None:
            if size > MAX_IMAGE_FILE_BYTES:
                raise ToolError(
                    f"Cannot read {path}: the image is {format_size(size)}, over the "
                    f"{format_size(MAX_IMAGE_FILE_BYTES)} the read tool takes"
                )
            return _FileContent(size, image=(head + file.read(), mime_type))
        if binary:
            return _FileContent(size, binary=True)
        window = LineWindow(start, end)
        window.feed(head)
        while chunk := file.read(_CHUNK_BYTES):
            if signal is not None and signal.aborted:
                raise ToolAborted()
            window.feed(chunk)
        return _FileContent(size, text=window.finish())


def _with_read_output(result: AgentToolResult) -> AgentToolResult:
    """``result`` with pi's ``structuredContent`` for a read: the text, or for an image an image
    block with the text as its ``note``."""
    text = next((block.text for block in result.content if isinstance(block, TextContent)), "")
    image = next((block for block in result.content if isinstance(block, ImageContent)), None)
    value: object = (
        text
        if image is None
        else {"type": "image", "data": image.data, "mimeType": image.mime_type, "note": text}
    )
    return structs.replace(result, structured_content=value)


def create_read_tool(
    cwd: str,
    operations: ReadOperations | None = None,
    *,
    auto_resize_images: bool | Callable[[], bool] = True,
    image_resizer: ImageResizer | None = None,
    model_accepts_images: Callable[[], bool] | None = None,
    image_limits: Callable[[], ImageLimits] | None = None,
) -> AgentTool:
    """The read tool for ``cwd``.

    ``image_resizer`` (Pillow's, from the ``tau[images]`` extra, when ``None``) downscales images
    over the limits (``image_limits``, asked per call: the current model's
    ``inputLimits.images.resize``; 2000×2000 px and 4.5 MB of base64 when ``None``) when
    ``auto_resize_images`` is on; ``model_accepts_images`` (asked per call) adds a note when the
    current model cannot see images.
    """
    ops: ReadOperations = operations or LocalFileOperations()

    def omitted(mime_type: str, data: bytes, notes: tuple[str, ...], max_bytes: int) -> AgentToolResult:
        return AgentToolResult(
            content=[
                TextContent(
                    "\n".join(
                        [
                            f"Read image file [{mime_type}]",
                            f"[Image omitted: it could not be brought under {format_size(max_bytes)} "
                            f"of base64 (file is {format_size(len(data))}).]",
                            *notes,
                        ]
                    )
                )
            ]
        )

    def image_result(data: bytes, mime_type: str) -> AgentToolResult:
        from tau.tools.image_resize import fit_image  # only when an image is read

        auto = auto_resize_images() if callable(auto_resize_images) else auto_resize_images
        limits = image_limits() if image_limits is not None else DEFAULT_IMAGE_LIMITS
        fitted = fit_image(data, mime_type, auto_resize=auto, resizer=image_resizer, limits=limits)
        if fitted.data is None:
            return omitted(mime_type, data, fitted.notes, limits.max_bytes)
        size = image_size(fitted.data, fitted.mime_type)
        dimensions = f" ({size[0]}x{size[1]})" if size is not None and not fitted.notes else ""
        lines = [f"Read image file [{fitted.mime_type}]{dimensions}", *fitted.notes]
        data, mime_type = fitted.data, fitted.mime_type
        if model_accepts_images is not None and not model_accepts_images():
            lines.append(
                "[The current model does not accept images; the image will be left out of the request.]"
            )
        image = ImageContent(data=base64.b64encode(data).decode("ascii"), mime_type=mime_type)
        return AgentToolResult(content=[TextContent("\n".join(lines)), image])

    async def execute(
        tool_call_id: str, args: JsonObject, signal: AbortSignal | None, on_update: ToolUpdate | None
    ) -> AgentToolResult:
        raise_if_aborted(signal)
        path = str(args["path"])
        offset = int(args["offset"]) if args.get("offset") is not None else None
        limit = int(args["limit"]) if args.get("limit") is not None else None
        absolute = resolve_read_path(path, cwd)
        start = max(0, offset - 1) if offset else 0
        end = start + max(limit, 0) if limit is not None else None
        try:
            await ops.access(absolute)
            if type(ops).read_file is LocalFileOperations.read_file:  # local files: read in a window
                content = await asyncio.to_thread(_read_local, absolute, start, end, signal)
            else:
                content = _content_of(await ops.read_file(absolute), start, end)
        except FileNotFoundError as error:
            raise ToolError(f"File not found: {absolute} (ENOENT)") from error
        except IsADirectoryError as error:
            raise ToolError(
                f"Cannot read {absolute}: it is a directory (EISDIR); use ls to list it"
            ) from error
        except OSError as error:
            raise ToolError(f"Cannot read {absolute}: {describe_os_error(error, absolute)}") from error
        raise_if_aborted(signal)

        if content.image is not None:
            return _with_read_output(await asyncio.to_thread(image_result, *content.image))
        if content.binary or content.text is None:
            raise ToolError(
                f"Cannot read {absolute}: it looks like a binary file ({format_size(content.size)}), not "
                "text or a supported image. Inspect it with bash (file, xxd, strings) instead."
            )
        return _with_read_output(_text_result(content.text, path, offset, limit))

    return AgentTool(
        name="read",
        label="read",
        description=READ_DESCRIPTION,
        parameters=READ_PARAMETERS,
        execute=execute,
        prompt_snippet="Read file contents",
        constrained_sampling=JsonSchemaSampling("prefer"),
        prompt_guidelines=["Use read to examine files instead of cat or sed."],
    )
