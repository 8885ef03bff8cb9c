"""Summarize: a ``/summarize`` command that asks a model for a summary of the conversation so far.

The request goes through ``ctx.model_registry.stream_simple``, which resolves the provider's
credentials the way the session's own requests do (built-in providers, models.json, and those an
extension registers with ``register_provider``) and routes a virtual model first (reason
``direct``). The summary streams into the status line and ends as a notification; without a
screen (``-p``) it goes to stderr. ``--summarize-model provider/id`` picks the model (default:
the session's). A failure (no credentials, a failed route) is the reply's ``error_message``.

    tau -e examples/extensions/summarize.py
"""

from __future__ import annotations

import sys

from tau.ai.events import TextDeltaEvent
from tau.ai.types import AssistantMessage, Context, TextContent, UserMessage
from tau.extensions import ExtensionAPI, ExtensionCommandContext
from tau.session.entries import MessageEntry

PROMPT = (
    "Summarize the conversation below in a few bullet points: what was asked, what was done, "
    "and what is still open.\n\n<conversation>\n{conversation}\n</conversation>"
)


def message_text(message: object) -> str:
    content = getattr(message, "content", None)
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(block.text for block in content if isinstance(block, TextContent))
    return ""


def conversation_text(ctx: ExtensionCommandContext) -> str:
    lines = []
    for entry in ctx.session_manager.get_branch():
        if isinstance(entry, MessageEntry) and entry.message.role in ("user", "assistant"):
            text = message_text(entry.message).strip()
            if text:
                lines.append(f"{entry.message.role}: {text}")
    return "\n".join(lines)


def setup(tau: ExtensionAPI) -> None:
    tau.register_flag("summarize-model", type=str, description="Model for /summarize (provider/id)")

    def show(ctx: ExtensionCommandContext, text: str, level: str = "info") -> None:
        if ctx.has_ui:
            ctx.ui.notify(text, "error" if level == "error" else "info")
        else:
            print(text, file=sys.stderr)

    @tau.register_command("summarize", description="Summarize the conversation so far")
    async def summarize(args: str, ctx: ExtensionCommandContext) -> None:
        conversation = conversation_text(ctx)
        if not conversation:
            show(ctx, "Nothing to summarize yet.")
            return
        model = ctx.model
        chosen = tau.get_flag("summarize-model")
        if isinstance(chosen, str) and "/" in chosen:
            provider, model_id = chosen.split("/", 1)
            model = ctx.model_registry.find(provider, model_id)
        if model is None:
            show(ctx, "No model to summarize with.", "error")
            return
        prompt = UserMessage(content=PROMPT.format(conversation=conversation))
        stream = ctx.model_registry.stream_simple(
            model, Context(messages=[prompt]), signal=ctx.signal, reasoning="low"
        )
        so_far = ""
        async for event in stream:
            if isinstance(event, TextDeltaEvent):
                so_far += event.delta
                ctx.ui.set_status("summarize", so_far[-60:].replace("\n", " "))
        reply: AssistantMessage = await stream.result()
        ctx.ui.set_status("summarize", None)
        if reply.stop_reason in ("error", "aborted"):
            show(ctx, f"Summary failed: {reply.error_message}", "error")
            return
        show(ctx, f"Summary ({reply.provider}/{reply.model}):\n{message_text(reply).strip()}")
