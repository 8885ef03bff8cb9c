"""``convert_to_llm``: the session's messages as the three roles a model API understands.

Shell runs, extension messages and summaries become user text; ``!!`` shell runs and unknown kinds
are dropped. Wrapper wording is generated on every call and never stored, so only the tag
structure is a contract.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import msgspec

from tau.agent.messages import AgentMessage
from tau.ai.types import (
    AssistantMessage,
    ImageContent,
    Message,
    TextContent,
    ToolResultMessage,
    UserContent,
    UserMessage,
)
from tau.session.messages import (
    BashExecutionMessage,
    BranchSummaryMessage,
    CompactionSummaryMessage,
    CustomMessage,
)

BRANCH_SUMMARY_PREAMBLE = "Summary of a branch this conversation explored and then returned from:"
COMPACTION_SUMMARY_PREAMBLE = (
    "The earlier part of this conversation was compacted into the following summary:"
)
# pi 1.6's words, so a session moved between the two reads the same.
IMAGE_PLACEHOLDER = "Image reading is disabled."


def convert_to_llm(messages: Iterable[AgentMessage], *, block_images: bool = False) -> list[Message]:
    """The messages the model is sent; with ``block_images``, images in user and tool-result
    messages become a text placeholder (one per run of adjacent images). Inputs are not mutated."""
    converted: list[Message] = []
    for message in messages:
        llm_message = _to_llm(message)
        if llm_message is None:
            continue
        if block_images and not isinstance(llm_message, AssistantMessage):
            llm_message = _without_images(llm_message)
        converted.append(llm_message)
    return converted


def becomes_llm_message(message: AgentMessage) -> bool:
    """Whether ``convert_to_llm`` turns ``message`` into a message of its own (one for one)."""
    return _to_llm(message) is not None


def _to_llm(message: AgentMessage) -> Message | None:
    if isinstance(message, (UserMessage, AssistantMessage, ToolResultMessage)):
        return message
    if isinstance(message, BashExecutionMessage):
        if message.exclude_from_context:
            return None
        return _user_text(format_bash_execution(message), message.timestamp)
    if isinstance(message, CustomMessage):
        content = message.content
        blocks: list[UserContent] = [TextContent(content)] if isinstance(content, str) else list(content)
        return UserMessage(blocks, timestamp=message.timestamp)
    if isinstance(message, BranchSummaryMessage):
        text = f"{BRANCH_SUMMARY_PREAMBLE}\n\n<summary>\n{message.summary}</summary>"
        return _user_text(text, message.timestamp)
    if isinstance(message, CompactionSummaryMessage):
        text = f"{COMPACTION_SUMMARY_PREAMBLE}\n\n<summary>\n{message.summary}\n</summary>"
        return _user_text(text, message.timestamp)
    return None


def format_bash_execution(message: BashExecutionMessage) -> str:
    """A user's shell run as the model reads it: command, fenced output, then how it ended."""
    lines = [f"Ran `{message.command}`"]
    lines.append(f"```\n{message.output}\n```" if message.output else "(no output)")
    if message.cancelled:
        lines.append("\n(command cancelled)")
    elif message.exit_code is not None and message.exit_code != 0:
        lines.append(f"\nCommand exited with code {message.exit_code}")
    if message.truncated and message.full_output_path:
        lines.append(f"\n[Output truncated. Full output: {message.full_output_path}]")
    return "\n".join(lines)


def _user_text(text: str, timestamp: int) -> UserMessage:
    return UserMessage([TextContent(text)], timestamp=timestamp)


def _without_images(message: UserMessage | ToolResultMessage) -> UserMessage | ToolResultMessage:
    if isinstance(message.content, str) or not any(isinstance(b, ImageContent) for b in message.content):
        return message
    return msgspec.structs.replace(message, content=_replace_images(message.content))


def _replace_images(blocks: Sequence[UserContent]) -> list[UserContent]:
    out: list[UserContent] = []
    for block in blocks:
        if isinstance(block, ImageContent):
            previous = out[-1] if out else None
            if isinstance(previous, TextContent) and previous.text == IMAGE_PLACEHOLDER:
                continue
            block = TextContent(IMAGE_PLACEHOLDER)
        out.append(block)
    return out
