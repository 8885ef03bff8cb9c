"""The reasoning an API reports it withheld from the model, kept on the reply as a diagnostic (as pi
1.6 does): Anthropic's and OpenAI Responses' ``input_transformations``.

Anthropic lists each change it made to the request (``thinking_dropped`` for a thinking block it
left out, with a ``path`` and a ``reason``); the diagnostic ``anthropic_input_transformations`` keeps
all of them. OpenAI (GPT-6.2 on) removes replayed reasoning items after an edit of earlier input
(``prefix_mismatch``) or when they were made under another organization, user or model; the
diagnostic ``openai_input_transformations`` keeps those removals, not the ``turn_boundary`` ones:
models that only use the current turn's reasoning report every earlier turn's item on every request,
which is normal and would grow the session with the square of its length.

A removal is reported again on every later request that replays the item; the interactive mode
compares counts with the previous reply's before it says anything."""

from __future__ import annotations

from typing import Any

from tau.ai.types import AssistantMessage, JsonObject, now_ms

__all__ = ["record_anthropic", "record_openai"]


def record_anthropic(output: AssistantMessage, transformations: Any) -> None:
    """Add the ``anthropic_input_transformations`` diagnostic to ``output`` when the API reported a
    non-empty list; each entry keeps its ``type``, ``path`` and ``reason`` (those present)."""
    if not isinstance(transformations, list) or not transformations:
        return
    kept = [_pick(item, ("type", "path", "reason")) for item in transformations]
    _append(output, "anthropic_input_transformations", kept)


def record_openai(output: AssistantMessage, transformations: Any) -> None:
    """Add the ``openai_input_transformations`` diagnostic to ``output`` for the reasoning items
    the API removed (``type: reasoning``, ``action: removed``), other than at a turn boundary."""
    if not isinstance(transformations, list):
        return
    removals = [
        _pick(item, ("type", "id", "action", "reason"))
        for item in transformations
        if isinstance(item, dict)
        and item.get("type") == "reasoning"
        and item.get("action") == "removed"
        and item.get("reason") != "turn_boundary"
    ]
    if removals:
        _append(output, "openai_input_transformations", removals)


def _pick(item: Any, names: tuple[str, ...]) -> JsonObject:
    if not isinstance(item, dict):
        return {}
    return {name: item[name] for name in names if item.get(name) is not None}


def _append(output: AssistantMessage, kind: str, transformations: list[JsonObject]) -> None:
    diagnostic: JsonObject = {
        "type": kind,
        "timestamp": now_ms(),
        "details": {"transformations": transformations},
    }
    output.diagnostics = [*(output.diagnostics or []), diagnostic]
