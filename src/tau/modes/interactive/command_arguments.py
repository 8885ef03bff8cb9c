"""Suggestions for a command's argument in the completion menu, as pi 1.6 makes them: ``/model``
offers the scoped models (else every available one) as ``provider/id``, ``/thinking`` the levels
the model supports, and an extension's command what its ``complete(prefix)`` returns. Each list
is narrowed by pi's fuzzy match on what was typed."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from tau.ai.types import Model
from tau.modes.interactive.editor import ArgumentChoice
from tau.modes.interactive.fuzzy import pi_fuzzy_filter

__all__ = ["ArgumentSession", "extension_arguments", "model_arguments", "thinking_arguments"]


class ArgumentSession(Protocol):
    """What the suggestions read of the session."""

    def selectable_models(self) -> Sequence[Model]: ...

    def thinking_levels(self) -> Sequence[str]: ...


def _model_search_text(model: Model) -> str:
    """What a typed model is matched against (pi's ``getModelSearchText``)."""
    name = f" {model.name}" if model.name else ""
    return f"{model.id} {model.provider} {model.provider}/{model.id} {model.provider} {model.id}{name}"


def model_arguments(session: ArgumentSession) -> Callable[[str], list[ArgumentChoice] | None]:
    def suggest(typed: str) -> list[ArgumentChoice] | None:
        models = pi_fuzzy_filter(typed, session.selectable_models(), _model_search_text)
        return [ArgumentChoice(f"{m.provider}/{m.id}", m.id, m.provider) for m in models] or None

    return suggest


def thinking_arguments(session: ArgumentSession) -> Callable[[str], list[ArgumentChoice] | None]:
    def suggest(typed: str) -> list[ArgumentChoice] | None:
        levels = pi_fuzzy_filter(typed, session.thinking_levels(), lambda level: level)
        return [ArgumentChoice(level) for level in levels] or None

    return suggest


def extension_arguments(
    complete: Callable[[str], Sequence[str] | None],
) -> Callable[[str], list[ArgumentChoice] | None]:
    """An extension command's ``complete(prefix)``: its strings, in its order."""

    def suggest(typed: str) -> list[ArgumentChoice] | None:
        values = complete(typed)
        return [ArgumentChoice(str(value)) for value in values or ()] or None

    return suggest
