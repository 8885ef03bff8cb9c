"""Tests for tau.ai.overflow: context-overflow detection."""

from __future__ import annotations

import pytest

from tau.ai.overflow import get_overflow_patterns, is_context_overflow
from tau.ai.types import AssistantMessage, StopReason, Usage

# One real-world error text per provider pattern, in the order of get_overflow_patterns().
PROVIDER_ERRORS = [
    ("anthropic", "prompt is too long: 213462 tokens > 200000 maximum"),
    (
        "anthropic-413",
        '413 {"error":{"type":"request_too_large","message":"Request exceeds the maximum size"}}',
    ),
    ("bedrock", "ValidationException: Input is too long for requested model."),
    (
        "openai",
        "Your input exceeds the context window of this model. Please adjust your input and try again.",
    ),
    ("google", "The input token count (1196265) exceeds the maximum number of tokens allowed (1048575)."),
    ("xai", "This model's maximum prompt length is 131072 but the request contains 537812 tokens."),
    ("groq", "Please reduce the length of the messages or completion."),
    (
        "openrouter",
        "This endpoint's maximum context length is 200000 tokens. However, you requested about 250000 tokens",
    ),
    ("copilot", "prompt token count of 140000 exceeds the limit of 128000"),
    ("llama.cpp", "the request exceeds the available context size, try increasing it"),
    ("lm-studio", "The number of tokens to keep from the initial prompt is greater than the context length."),
    ("minimax", "invalid params, context window exceeds limit (2013)"),
    ("kimi", "Your request exceeded model token limit: 262144 (requested: 300000)"),
    (
        "mistral",
        "Prompt contains 140000 tokens and 0 draft tokens, too large for model with 131072 maximum context length",
    ),
    ("z.ai", "Provider finish_reason: model_context_window_exceeded"),
    ("ollama", "prompt too long; exceeded max context length by 1200 tokens"),
    ("generic-context-length", "Error code: context_length_exceeded"),
    ("generic-too-many-tokens", "Request has too many tokens for this model"),
    ("generic-token-limit", "token limit exceeded for this request"),
    ("cerebras", "400 status code (no body)"),
]


def error_message(text: str) -> AssistantMessage:
    return AssistantMessage(
        content=[], api="x", provider="x", model="m", stop_reason="error", error_message=text
    )


def usage_message(
    stop_reason: StopReason, input_tokens: int, cache_read: int = 0, output: int = 10
) -> AssistantMessage:
    usage = Usage(input=input_tokens, cache_read=cache_read, output=output)
    return AssistantMessage(
        content=[], api="x", provider="x", model="m", stop_reason=stop_reason, usage=usage
    )


def test_there_is_one_sample_error_per_pattern() -> None:
    patterns = get_overflow_patterns()
    assert len(patterns) == len(PROVIDER_ERRORS)
    for pattern, (provider, text) in zip(patterns, PROVIDER_ERRORS, strict=True):
        assert pattern.search(text), provider


@pytest.mark.parametrize(("provider", "text"), PROVIDER_ERRORS, ids=[p for p, _ in PROVIDER_ERRORS])
def test_each_providers_overflow_error_is_detected(provider: str, text: str) -> None:
    assert is_context_overflow(error_message(text))


def test_patterns_ignore_case() -> None:
    assert is_context_overflow(error_message("PROMPT IS TOO LONG"))


def test_a_413_with_no_body_is_an_overflow() -> None:
    assert is_context_overflow(error_message("413 (no body)"))


@pytest.mark.parametrize(
    "text",
    [
        "429 rate limit exceeded: too many tokens",
        "ThrottlingException: Too many requests, too many tokens, please wait",
        "Throttling error: Too many tokens, please wait before trying again.",
        "Service unavailable: token limit exceeded",
    ],
)
def test_rate_limit_errors_that_mention_tokens_are_not_overflow(text: str) -> None:
    assert not is_context_overflow(error_message(text))


@pytest.mark.parametrize("text", ["529 prompt is too long", "429 too many tokens in flight, slow down"])
def test_an_overloaded_or_rate_limited_status_is_not_overflow_whatever_its_body_says(text: str) -> None:
    assert not is_context_overflow(error_message(text))


def test_an_unrelated_error_is_not_overflow() -> None:
    assert not is_context_overflow(error_message("401 invalid x-api-key"))


def test_an_overflow_text_on_a_successful_message_is_not_overflow() -> None:
    message = usage_message("stop", 10)
    message.error_message = "prompt is too long"
    assert not is_context_overflow(message)


def test_a_stop_whose_prompt_exceeds_the_window_is_silent_overflow() -> None:
    assert is_context_overflow(usage_message("stop", 150_000, cache_read=60_000), context_window=200_000)


def test_silent_overflow_needs_a_context_window() -> None:
    assert not is_context_overflow(usage_message("stop", 500_000))


def test_a_prompt_exactly_filling_the_window_with_a_stop_is_not_overflow() -> None:
    assert not is_context_overflow(usage_message("stop", 200_000), context_window=200_000)


def test_a_length_stop_with_no_output_and_a_full_window_is_overflow() -> None:
    assert is_context_overflow(usage_message("length", 198_000, output=0), context_window=200_000)


def test_a_length_stop_with_output_is_not_overflow() -> None:
    assert not is_context_overflow(usage_message("length", 199_000, output=5), context_window=200_000)


def test_a_length_stop_below_99_percent_of_the_window_is_not_overflow() -> None:
    assert not is_context_overflow(usage_message("length", 197_000, output=0), context_window=200_000)


def test_the_pattern_list_is_a_copy_the_caller_may_change() -> None:
    get_overflow_patterns().clear()
    assert get_overflow_patterns()
