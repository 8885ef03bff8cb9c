"""Whether a model takes JSON-schema tools strict: each API's flag, read as its provider reads it
when it builds a request. A tool that asks for strict sampling only where possible (``prefer``)
holds the model to its schema only on such a model."""

from __future__ import annotations

from tau.ai.types import Model


def takes_strict_tools(model: Model) -> bool:
    """Whether ``model``'s requests send a ``prefer`` JSON-schema tool strict."""
    flag = (model.compat or {}).get("supportsStrictMode")
    if model.api == "openai-completions":
        from tau.ai.providers.openai_compat import resolve_compat  # each API's flags only for its models

        return resolve_compat(model).supports_strict_mode
    if model.api in ("openai-responses", "azure-openai-responses"):
        return flag if isinstance(flag, bool) else model.api == "azure-openai-responses"
    if model.api == "openai-codex-responses":
        return flag is not False
    if model.api == "anthropic-messages":
        from tau.ai.providers.anthropic_compat import anthropic_compat

        return anthropic_compat(model).supports_strict_tools
    if model.api in ("google-generative-ai", "google-vertex"):
        from tau.ai.providers.google_convert import supports_strict_tools  # only for Gemini models

        return supports_strict_tools(model.id)
    return flag is True  # Bedrock, Mistral and the rest: opt-in
