"""Pieces of the prompt flow: where extensions join it, and how typed text is expanded.

``AgentSession.prompt`` runs the steps of spec 30 §1.3. Extensions join at three points
(commands, ``input``, ``before_agent_start``), reached through ``PromptHooks``; its defaults do
nothing, and ``extension_hooks.ExtensionPromptHooks`` calls the extension runner.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, TypeAlias

from msgspec import Struct, field

from tau.ai.types import ImageContent, TextContent
from tau.context.prompt_templates import expand_prompt_template
from tau.context.resources import ResourceLoader
from tau.context.skills import expand_skill_command
from tau.context.system_prompt import SystemPromptOptions
from tau.session.messages import CustomMessage

__all__ = [
    "AgentStartOverrides",
    "InputDisposition",
    "InputOutcome",
    "InputSource",
    "PromptHooks",
    "StreamingBehavior",
    "expand_input",
    "split_user_content",
]

StreamingBehavior: TypeAlias = Literal["steer", "follow_up"]
InputSource: TypeAlias = Literal["interactive", "rpc", "extension"]
InputDisposition: TypeAlias = Literal["started", "queued", "handled"]
"""What became of one input (pi's ``disposition``): it starts a run, waits in a queue, or a command or
an extension's ``input`` handler took it."""


class InputOutcome(Struct, frozen=True):
    """What the ``input`` step made of the typed text: replaced text/images, or ``handled``."""

    text: str
    images: Sequence[ImageContent] | None = None
    handled: bool = False


class AgentStartOverrides(Struct, frozen=True):
    """``before_agent_start`` results: a system prompt for this run only, and messages to add
    after the user's."""

    system_prompt: str | None = None
    messages: list[CustomMessage] = field(default_factory=list)


class PromptHooks:
    """The extension points of the prompt flow (spec 30 §1.3 steps 1, 2 and 9). No-ops here."""

    def is_command(self, text: str) -> bool:
        """Whether ``text`` invokes a registered command (commands cannot be queued)."""
        return False

    async def run_command(self, text: str) -> bool:
        """Run the command ``text`` invokes, if any; whether one ran."""
        return False

    async def on_input(
        self, text: str, images: Sequence[ImageContent] | None, source: InputSource
    ) -> InputOutcome:
        return InputOutcome(text, images)

    async def before_agent_start(
        self,
        text: str,
        images: Sequence[ImageContent] | None,
        base_system_prompt: str,
        base_system_prompt_options: SystemPromptOptions | None = None,
    ) -> AgentStartOverrides:
        return AgentStartOverrides()


def expand_input(text: str, resources: ResourceLoader) -> str:
    """``/skill:name args``, then ``/template args``, expanded; other text unchanged.

    A skill whose file cannot be read leaves the text as typed."""
    try:
        text = expand_skill_command(text, resources.skills)
    except (OSError, UnicodeDecodeError):
        return text
    return expand_prompt_template(text, resources.prompt_templates)


def split_user_content(
    content: str | Sequence[TextContent | ImageContent],
) -> tuple[str, list[ImageContent] | None]:
    """A prompt's text (text blocks joined by newlines) and images from message-style content."""
    if isinstance(content, str):
        return content, None
    text = "\n".join(b.text for b in content if isinstance(b, TextContent))
    return text, [b for b in content if isinstance(b, ImageContent)] or None
