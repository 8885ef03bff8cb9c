"""The first prompt of a run: piped stdin, then ``@file`` contents, then the first message."""

from __future__ import annotations

import base64
import os
from dataclasses import dataclass, field

from tau.ai.types import ImageContent
from tau.tools.images import sniff_image_mime_type
from tau.tools.paths import resolve_read_path


class FileArgumentError(Exception):
    """An ``@file`` argument that cannot be used; the message says which and why."""


@dataclass
class InitialMessage:
    text: str | None
    images: list[ImageContent] = field(default_factory=list)
    remaining: list[str] = field(default_factory=list)


def read_file_arguments(paths: list[str], cwd: str) -> tuple[str, list[ImageContent]]:
    """Text files become ``<file name="…">`` blocks; images are attached and referenced by name."""
    text_parts: list[str] = []
    images: list[ImageContent] = []
    for raw in paths:
        path = resolve_read_path(raw, cwd)
        if not os.path.exists(path):
            raise FileArgumentError(f"File not found: {path}")
        if os.path.isdir(path):
            raise FileArgumentError(f"{path} is a folder; @ takes files")
        with open(path, "rb") as handle:
            data = handle.read()
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


def build_initial_message(
    messages: list[str], file_args: list[str], stdin_text: str | None, cwd: str
) -> InitialMessage:
    """Join stdin, file text and the first message without a separator (as pi does)."""
    file_text, images = read_file_arguments(file_args, cwd)
    remaining = list(messages)
    first = remaining.pop(0) if remaining else ""
    text = (stdin_text or "") + file_text + first
    return InitialMessage(text=text or None, images=images, remaining=remaining)
