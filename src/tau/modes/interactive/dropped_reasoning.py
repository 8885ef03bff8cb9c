"""pi 1.6's notice of reasoning a provider withheld from the model (``showCacheMissNotices``):
"Anthropic dropped 2 thinking blocks: prefix_mismatch (details in session)", from the reply's
``anthropic_input_transformations`` or ``openai_input_transformations`` diagnostic.

A provider reports a withheld block again on every later request that replays it, so the line is
shown only when the count grew over the previous reply's. Shown live only, as pi does: a session
drawn again does not repeat it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

from tau.ai.types import AssistantMessage
from tau.session.entries import MessageEntry, SessionEntry

__all__ = ["dropped_reasoning_notice"]


class _Kind(NamedTuple):
    provider: str
    dropped_type: str
    one: str
    many: str


_KINDS = {
    "anthropic_input_transformations": _Kind(
        "Anthropic", "thinking_dropped", "thinking block", "thinking blocks"
    ),
    "openai_input_transformations": _Kind("OpenAI", "reasoning", "reasoning item", "reasoning items"),
}


class _Dropped(NamedTuple):
    kind: _Kind
    number: int
    reasons: list[str]


def _dropped(message: AssistantMessage) -> _Dropped | None:
    """The first diagnostic of ``message`` that lists withheld reasoning (session data: any JSON)."""
    for diagnostic in message.diagnostics or []:
        kind = _KINDS.get(str(diagnostic.get("type"))) if isinstance(diagnostic, dict) else None
        details: Any = diagnostic.get("details") if kind is not None else None
        transformations = details.get("transformations") if isinstance(details, dict) else None
        if kind is None or not isinstance(transformations, list):
            continue
        dropped = [t for t in transformations if isinstance(t, dict) and t.get("type") == kind.dropped_type]
        if not dropped:
            continue
        reasons: list[str] = []
        for transformation in dropped:
            reason = transformation.get("reason")
            if isinstance(reason, str) and reason not in reasons:
                reasons.append(reason)
        return _Dropped(kind, len(dropped), reasons)
    return None


def dropped_reasoning_notice(branch: Sequence[SessionEntry], message: AssistantMessage) -> str | None:
    """The line for ``message`` (a reply just ended), or ``None``: nothing withheld, or no more than
    the previous reply on ``branch`` reported (the reply's own entry, if already written, is not
    its previous one)."""
    dropped = _dropped(message)
    if dropped is None:
        return None
    for entry in reversed(branch):
        if not isinstance(entry, MessageEntry) or not isinstance(entry.message, AssistantMessage):
            continue
        if entry.message is message or entry.message == message:
            continue
        previous = _dropped(entry.message)
        if previous is not None and previous.kind == dropped.kind and dropped.number <= previous.number:
            return None
        break
    noun = dropped.kind.one if dropped.number == 1 else dropped.kind.many
    reasons = f": {', '.join(dropped.reasons)}" if dropped.reasons else ""
    return f"{dropped.kind.provider} dropped {dropped.number} {noun}{reasons} (details in session)"
