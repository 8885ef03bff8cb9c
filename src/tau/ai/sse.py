"""Server-sent events decoded from a response's bytes (the WHATWG event-stream rules).

Lines end at ``\\r\\n``, ``\\n`` or ``\\r``; ``data`` lines of one event are joined with ``\\n``; an
empty line ends an event; lines starting with ``:`` are comments. Text is UTF-8, undecodable bytes
become U+FFFD.
"""

from __future__ import annotations

import codecs
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass


class SSEError(Exception):
    """The response is not an event stream."""


@dataclass(slots=True)
class ServerSentEvent:
    event: str = "message"
    data: str = ""
    id: str = ""
    retry: int | None = None


def check_content_type(content_type: str) -> None:
    media_type = content_type.partition(";")[0]
    if "text/event-stream" not in media_type:
        raise SSEError(
            f"Expected response header Content-Type to contain 'text/event-stream', got {media_type!r}"
        )


async def aiter_events(chunks: AsyncIterator[bytes]) -> AsyncIterator[ServerSentEvent]:
    """The events of a stream of body chunks, as each one is complete."""
    text = codecs.getincrementaldecoder("utf-8")(errors="replace")
    pending = ""  # an unfinished line
    event, data, last_id, retry = "", [], "", None
    async for chunk in chunks:
        block = pending + text.decode(chunk)
        if "\r" in block:
            # A trailing \r may be the first half of \r\n: keep it for the next chunk.
            held = block.endswith("\r")
            block = block[:-1] if held else block
            block = block.replace("\r\n", "\n").replace("\r", "\n") + ("\r" if held else "")
        lines = block.split("\n")
        pending = lines.pop()
        for line in lines:
            if line:
                name, _, value = line.partition(":")
                if not name:
                    continue  # a comment
                if value.startswith(" "):
                    value = value[1:]
                if name == "data":
                    data.append(value)
                elif name == "event":
                    event = value
                elif name == "id":
                    if "\0" not in value:
                        last_id = value
                elif name == "retry":
                    with contextlib.suppress(ValueError):
                        retry = int(value)
                continue
            if event or data or last_id or retry is not None:
                yield ServerSentEvent(event or "message", "\n".join(data), last_id, retry)
            event, data, retry = "", [], None
    # What follows the last empty line is an unfinished event: dropped, as the rules say.
