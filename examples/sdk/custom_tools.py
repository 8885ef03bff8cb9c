"""A custom tool: give the agent a Python function it can call, next to the built-in tools.

An ``AgentTool`` has a name, a description and a JSON schema for its arguments (what the model
sees), and an async ``execute`` that returns an ``AgentToolResult``; raising marks the call as
failed and the model sees the error. Pass tools as ``custom_tools``; ``tools=[...]`` is an
allowlist, here the custom tool plus ``read``.

    python examples/sdk/custom_tools.py "How many words are in 'the quick brown fox'?"
"""

from __future__ import annotations

import asyncio
import sys

from tau import create_agent_session
from tau.agent.tool import AgentTool, AgentToolResult, ToolUpdate, text_result
from tau.ai.abort import AbortSignal
from tau.ai.types import JsonObject


async def count_words(
    tool_call_id: str, args: JsonObject, signal: AbortSignal | None, on_update: ToolUpdate | None
) -> AgentToolResult:
    """Count the words of ``args["text"]``."""
    text = args["text"]
    if not isinstance(text, str):
        raise ValueError("text must be a string")
    count = len(text.split())
    return text_result(str(count), details={"words": count})


WORD_COUNT = AgentTool(
    name="word_count",
    label="Word count",
    description="Count the words of a text.",
    parameters={
        "type": "object",
        "properties": {"text": {"type": "string", "description": "The text to count"}},
        "required": ["text"],
    },
    execute=count_words,
    prompt_snippet="Count the words of a text",
)


async def main(
    prompt: str = "How many words are in 'the quick brown fox'?", *, cwd: str | None = None
) -> str:
    """Answer ``prompt`` with ``word_count`` (and ``read``) available to the model."""
    result = create_agent_session(cwd=cwd, custom_tools=[WORD_COUNT], tools=["read", "word_count"])
    session = result.session
    session.subscribe(
        lambda event: print(f"[tool] {event.tool_name}") if event.type == "tool_execution_start" else None
    )
    try:
        await session.prompt(prompt)
        answer = session.get_last_assistant_text() or ""
    finally:
        await session.dispose()
    print(answer)
    return answer


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:2]))
