"""The first prompt of a run: piped stdin, then ``@file`` contents, then the first message."""

from __future__ import annotations

import base64
import os

from msgspec import Struct, field

from tau.ai.types import ImageContent
from tau.errors import TauError
from tau.tools.images import sniff_image_mime_type
from tau.tools.operations import NotRegularFileError, open_regular
from tau.tools.paths import resolve_read_path
from tau.tools.truncate import format_size


class FileArgumentError(TauError):
    """An ``@file`` argument that cannot be used; the message says which and why."""


class InitialMessage(Struct, dict=True):
    text: str | None
    images: list[ImageContent] = field(default_factory=list)
    remaining: list[str] = field(default_factory=list)


# A text file beyond this would fill the largest context windows (about a million tokens) by itself.
MAX_TEXT_FILE_BYTES = 4 * 1024 * 1024
# No provider takes a bigger image; a file beyond this is not sent whole anyway.
MAX_IMAGE_FILE_BYTES = 20 * 1024 * 1024


def read_file_arguments(paths: list[str], cwd: str) -> tuple[str, list[ImageContent]]:
    """Text files become ``<file name="…">`` blocks; images are attached and referenced by name."""
    text_parts: list[str] = []
    images: list[ImageContent] = []
    for raw in paths:
        path = resolve_read_path(raw, cwd)
        data = _read_file_argument(path)
        if not data:
            continue
        mime_type = sniff_image_mime_type(data[:16])
        if mime_type is not None:
            images.append(ImageContent(base64.b64encode(data).decode("ascii"), mime_type))
            text_parts.append(f'<file name="{path}"></file>\n')
            continue
        try:
            content = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise FileArgumentError(f"Could not read {path}: not UTF-8 text ({exc.reason})") from None
        text_parts.append(f'<file name="{path}">\n{content}\n</file>\n')
    return "".join(text_parts), images


def _read_file_argument(path: str) -> bytes:
    """The bytes of a regular file, read no further than the most ``@`` takes for its kind (plus one)."""
    try:
        fd = open_regular(path, os.O_RDONLY)
    except FileNotFoundError:
        raise FileArgumentError(f"File not found: {path}") from None
    except IsADirectoryError:
        raise FileArgumentError(f"{path} is a folder; @ takes files") from None
    except NotRegularFileError as exc:
        raise FileArgumentError(f"Cannot use {path}: {exc}; @ takes regular files") from None
    except OSError as exc:
        raise FileArgumentError(f"Could not read {path}: {exc.strerror or exc}") from None
    with open(fd, "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        head = handle.read(16)
        image = sniff_image_mime_type(head) is not None
        limit = MAX_IMAGE_FILE_BYTES if image else MAX_TEXT_FILE_BYTES
        if size > limit:
            raise _too_large(path, format_size(size), limit, image)
        data = head + handle.read(limit + 1 - len(head))
    if len(data) > limit:  # a file whose size the system does not report (/proc, a growing file)
        raise _too_large(path, f"over {format_size(limit)}", limit, image)
    return data


def _too_large(path: str, size: str, limit: int, image: bool) -> FileArgumentError:
    kind = "an image" if image else "a text file"
    return FileArgumentError(
        f"{path} is {size}, more than @ takes for {kind} ({format_size(limit)}); "
        "pipe in a part of it instead (head -c 100000 FILE | tau ...) or let the model read it"
    )


def build_initial_message(
    messages: list[str], file_args: list[str], stdin_text: str | None, cwd: str
) -> InitialMessage:
    """Join stdin (trimmed), file text and the first message without a separator (as pi does)."""
    file_text, images = read_file_arguments(file_args, cwd)
    remaining = list(messages)
    first = remaining.pop(0) if remaining else ""
    text = (stdin_text or "").strip() + file_text + first
    return InitialMessage(text=text or None, images=images, remaining=remaining)
