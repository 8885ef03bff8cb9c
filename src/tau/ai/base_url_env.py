"""A model's base URL with its ``{VARIABLE}`` placeholders filled, before any API sees the model.

Cloudflare's catalogue URLs name the account and the AI Gateway they go to
(``https://gateway.ai.cloudflare.com/v1/{CLOUDFLARE_ACCOUNT_ID}/{CLOUDFLARE_GATEWAY_ID}/openai``).
As pi 1.6 does for every API those providers use (OpenAI Completions and Responses, Anthropic
Messages, the classifiers), each placeholder is filled from the request's ``env`` option (the
settings a stored credential carries: ``/login`` asks for them) and, when that has none, from the
process environment. ``tau.ai.streaming`` and ``tau.ai.classify`` call this for every request, so
no API module fills placeholders itself; a placeholder left empty ends the request with one line
naming the variable, before anything is sent.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, TypeVar

from msgspec import structs

from tau.ai.types import Model

if TYPE_CHECKING:  # the classifier catalogue loads only when a classifier runs
    from tau.ai.classifier_models import ClassifierModel

PLACEHOLDER = re.compile(r"\{([A-Z_][A-Z0-9_]*)\}")

AnyModel = TypeVar("AnyModel", Model, "ClassifierModel")

__all__ = ["PLACEHOLDER", "env_value", "fill_base_url", "missing_variable_message", "unfilled_variable"]


def env_value(name: str, env: object) -> str | None:
    """``name`` from ``env`` (the ``env`` option: a credential's settings), else the process environment."""
    stored = env.get(name) if isinstance(env, Mapping) else None
    if isinstance(stored, str) and stored.strip():
        return stored.strip()
    return os.environ.get(name, "").strip() or None


def fill_base_url(model: AnyModel, env: object) -> AnyModel:
    """``model`` with each ``{VARIABLE}`` of its base URL that has a value replaced by it (a copy;
    ``model`` itself when nothing changes). Placeholders without a value stay as they are."""
    if "{" not in model.base_url:
        return model

    def substitute(match: re.Match[str]) -> str:
        return env_value(match.group(1), env) or match.group(0)

    base_url = PLACEHOLDER.sub(substitute, model.base_url)
    if base_url == model.base_url:
        return model
    return structs.replace(model, base_url=base_url)


def unfilled_variable(model: Model | ClassifierModel) -> str | None:
    """The first placeholder still in ``model``'s base URL, if any."""
    match = PLACEHOLDER.search(model.base_url)
    return match.group(1) if match else None


def missing_variable_message(provider: str, name: str) -> str:
    return f"{name} is required for provider {provider} but is not set."
