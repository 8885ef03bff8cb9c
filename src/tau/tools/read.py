"""The ``read`` tool: a text file (a window of it, with a note naming the next offset) or an image.

Beyond pi: a binary file or a directory is refused with an error that says so and what to use
instead, rather than returned as replacement characters.
"""

from __future__ import annotations

import base64
from collections.abc import Callable

from tau.agent.tool import AgentTool, AgentToolResult, ToolUpdate
from tau.ai.abort import AbortSignal
from tau.ai.types import ImageContent, JsonObject, TextContent
from tau.tools.errors import ToolError, describe_os_error, raise_if_aborted
from tau.tools.images import (
    MAX_IMAGE_BASE64_BYTES,
    MAX_IMAGE_DIMENSION,
    ImageResizer,
    image_size,
    sniff_image_mime_type,
)
from tau.tools.operations import LocalFileOperations, ReadOperations
from tau.tools.paths import resolve_read_path
from tau.tools.truncate import DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, format_size, truncate_head, utf8_len

_BINARY_SAMPLE = 8192
_BINARY_REPLACEMENT_RATIO = 0.1

READ_PARAMETERS: JsonObject = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": "Path to the file to read (relative or absolute)"},
        "offset": {"type": "number", "description": "Line number to start reading from (1-indexed)"},
        "limit": {"type": "number", "description": "Maximum number of lines to read"},
    },
    "required": ["path"],
    "additionalProperties": False,
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


def _text_result(text: str, path: str, offset: int | None, limit: int | None) -> AgentToolResult:
    lines = text.split("\n")
    total = len(lines)
    start = max(0, offset - 1) if offset else 0
    if start >= total:
        raise ToolError(f"Offset {offset} is beyond end of file ({total} lines total)")
    end = min(start + max(limit, 0), total) if limit is not None else total
    cut = truncate_head("\n".join(lines[start:end]))
    details: JsonObject | None = None

    if cut.first_line_exceeds_limit:
        line_no = start + 1
        size = format_size(utf8_len(lines[start]))
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


def create_read_tool(
    cwd: str,
    operations: ReadOperations | None = None,
    *,
    auto_resize_images: bool | Callable[[], bool] = True,
    image_resizer: ImageResizer | None = None,
    model_accepts_images: Callable[[], bool] | None = None,
) -> AgentTool:
    """The read tool for ``cwd``.

    ``image_resizer`` downscales images over 2000×2000 px or the base64 cap when
    ``auto_resize_images`` is on; ``model_accepts_images`` (asked per call) adds a note when the
    current model cannot see images.
    """
    ops: ReadOperations = operations or LocalFileOperations()

    def omitted(mime_type: str, data: bytes) -> AgentToolResult:
        return AgentToolResult(
            content=[
                TextContent(
                    f"Read image file [{mime_type}]\n[Image omitted: it could not be brought under "
                    f"{format_size(MAX_IMAGE_BASE64_BYTES)} of base64 (file is {format_size(len(data))}).]"
                )
            ]
        )

    def image_result(data: bytes, mime_type: str) -> AgentToolResult:
        auto = auto_resize_images() if callable(auto_resize_images) else auto_resize_images
        size = image_size(data, mime_type)
        too_large = (len(data) + 2) // 3 * 4 >= MAX_IMAGE_BASE64_BYTES
        too_wide = size is not None and max(size) > MAX_IMAGE_DIMENSION
        lines: list[str] = []
        if auto and (too_large or too_wide) and image_resizer is not None:
            resized = image_resizer(
                data, mime_type, max_dimension=MAX_IMAGE_DIMENSION, max_base64_bytes=MAX_IMAGE_BASE64_BYTES
            )
            if resized is None:
                return omitted(mime_type, data)
            data, mime_type = resized.data, resized.mime_type
            scale = resized.original_width / resized.width if resized.width else 1.0
            lines.append(f"Read image file [{mime_type}]")
            lines.append(
                f"[Image: original {resized.original_width}x{resized.original_height}, displayed at "
                f"{resized.width}x{resized.height}. Multiply coordinates by {scale:.2f} to map to the "
                "original image.]"
            )
        elif auto and too_large:
            return omitted(mime_type, data)
        else:
            dimensions = f" ({size[0]}x{size[1]})" if size is not None else ""
            lines.append(f"Read image file [{mime_type}]{dimensions}")
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
        try:
            await ops.access(absolute)
            data = await ops.read_file(absolute)
        except FileNotFoundError as error:
            raise ToolError(f"File not found: {absolute} (ENOENT)") from error
        except IsADirectoryError as error:
            raise ToolError(
                f"Cannot read {absolute}: it is a directory (EISDIR); use ls to list it"
            ) from error
        except OSError as error:
            raise ToolError(f"Cannot read {absolute}: {describe_os_error(error)}") from error
        raise_if_aborted(signal)

        mime_type = sniff_image_mime_type(data[:16])
        if mime_type is not None:
            return image_result(data, mime_type)
        if _looks_binary(data):
            raise ToolError(
                f"Cannot read {absolute}: it looks like a binary file ({format_size(len(data))}), not text "
                "or a supported image. Inspect it with bash (file, xxd, strings) instead."
            )
        return _text_result(data.decode("utf-8", "replace"), path, offset, limit)

    return AgentTool(
        name="read",
        label="read",
        description=READ_DESCRIPTION,
        parameters=READ_PARAMETERS,
        execute=execute,
        prompt_snippet="Read file contents",
        prompt_guidelines=["Use read to examine files instead of cat or sed."],
    )
