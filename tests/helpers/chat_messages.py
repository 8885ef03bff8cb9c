"""The conversation a recorded Chat Completions request carries, for the side-by-side tests that
compare what tau and pi 1.6 send."""

from __future__ import annotations

from typing import Any

from tau.testing.fake_llm import RecordedRequest


def conversation_messages(request: RecordedRequest) -> list[tuple[dict[str, Any], str]]:
    """Each message after the system prompt (system and developer messages left out) with its
    text: the content string, or its blocks' texts joined by spaces; ``""`` for none."""
    out = []
    for message in request.body["messages"]:
        if message["role"] in ("system", "developer"):
            continue
        content = message.get("content")
        if isinstance(content, list):
            content = " ".join(str(block.get("text", "")) for block in content)
        out.append((message, content or ""))
    return out
