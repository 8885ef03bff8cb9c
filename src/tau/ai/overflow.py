"""Recognising a response that failed, or was silently cut, because the prompt outgrew the context."""

from __future__ import annotations

import functools
import re

from tau.ai.types import AssistantMessage

# One pattern per provider error text; the sample message each was written for is in the tests.
# Compiled on the first error that is checked (two dozen patterns: a few ms of every start-up).
_OVERFLOW_TEXTS = (
    r"prompt is too long",  # Anthropic
    r"request_too_large",  # Anthropic, HTTP 413 (request bytes)
    r"input is too long for requested model",  # Amazon Bedrock
    r"exceeds the context window",  # OpenAI
    r"input token count.*exceeds the maximum",  # Google Gemini
    r"maximum prompt length is \d+",  # xAI
    r"reduce the length of the messages",  # Groq
    r"maximum context length is \d+ tokens",  # OpenRouter
    r"exceeds the limit of \d+",  # GitHub Copilot
    r"exceeds the available context size",  # llama.cpp
    r"greater than the context length",  # LM Studio
    r"context window exceeds limit",  # MiniMax
    r"exceeded model token limit",  # Kimi
    r"too large for model with \d+ maximum context length",  # Mistral
    r"model_context_window_exceeded",  # z.ai
    r"prompt too long; exceeded (?:max )?context length",  # Ollama
    r"context[_ ]length[_ ]exceeded",  # generic
    r"too many tokens",  # generic
    r"token limit exceeded",  # generic
    r"^4(?:00|13)\s*(?:status code)?\s*\(no body\)",  # Cerebras
)

# Errors that can look like overflow but are not, e.g. Bedrock's "Too many tokens, please wait".
_NON_OVERFLOW_TEXTS = (
    r"^(?:429|529)(?!\d)",  # rate limited or overloaded: passing, whatever the body says
    r"^(?:Throttling error|Service unavailable):",
    r"rate limit",
    r"too many requests",
)


@functools.cache
def _compiled(texts: tuple[str, ...]) -> tuple[re.Pattern[str], ...]:
    return tuple(re.compile(text, re.IGNORECASE) for text in texts)


# A server that truncates the prompt to fit leaves at least this share of the window filled.
_TRUNCATED_FILL_RATIO = 0.99


def get_overflow_patterns() -> list[re.Pattern[str]]:
    """The error-text patterns that mean "context overflow" (a fresh list the caller may extend)."""
    return list(_compiled(_OVERFLOW_TEXTS))


def get_non_overflow_patterns() -> list[re.Pattern[str]]:
    """The patterns that veto an overflow match (rate limits, throttling, outages)."""
    return list(_compiled(_NON_OVERFLOW_TEXTS))


def is_overflow_error_text(error_message: str) -> bool:
    """Whether a provider error text reports a context overflow and is no rate-limit lookalike."""
    if any(p.search(error_message) for p in _compiled(_NON_OVERFLOW_TEXTS)):
        return False
    return any(p.search(error_message) for p in _compiled(_OVERFLOW_TEXTS))


def is_recoverable_length(message: AssistantMessage, desired_max_output: int) -> bool:
    """Whether ``message`` was cut off by a ``length`` stop below ``desired_max_output`` (the
    model's own output limit, before any clamping to the context): context pressure or the
    provider cut it, so one compact-and-retry may help. A reply that used the whole limit is not."""
    return (
        message.stop_reason == "length"
        and desired_max_output > 0
        and message.usage.output < desired_max_output
    )


def is_context_overflow(message: AssistantMessage, context_window: int | None = None) -> bool:
    """Whether ``message`` shows the prompt did not fit: an overflow error, or silent overflow/truncation."""
    error = message.error_message
    if message.stop_reason == "error" and error and is_overflow_error_text(error):
        return True
    if not context_window:
        return False
    prompt_tokens = message.usage.input + message.usage.cache_read
    if message.stop_reason == "stop":
        return prompt_tokens > context_window
    if message.stop_reason == "length" and message.usage.output == 0:
        return prompt_tokens >= _TRUNCATED_FILL_RATIO * context_window
    return False
