"""stream_simple's output cap: the model's maxTokens fitted into the context window as pi 1.6 fits it."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from tau.ai.output_budget import clamp_max_tokens_to_context, estimate_input_tokens
from tau.ai.types import AssistantMessage, Context, TextContent, Usage, UserMessage


def test_a_small_input_leaves_the_model_limit() -> None:
    assert clamp_max_tokens_to_context(1_000_000, Context(messages=[UserMessage("hi")]), 128_000) == 128_000


def test_the_cap_leaves_room_for_the_input_and_a_4096_token_margin() -> None:
    # 7000 characters are 2000 tokens at 3.5 characters per token.
    context = Context(messages=[UserMessage("x" * 7000)])
    assert estimate_input_tokens(context) == 2000
    assert clamp_max_tokens_to_context(32_000, context, 32_000) == 32_000 - 2000 - 4096


def test_a_large_window_keeps_a_margin_of_15_percent_of_the_input() -> None:
    context = Context(messages=[UserMessage("x" * 700_000)])  # 200 000 tokens
    assert clamp_max_tokens_to_context(1_000_000, context, 1_000_000) == 1_000_000 - 200_000 - 30_000


def test_the_last_reported_usage_stands_for_the_messages_before_it() -> None:
    reply = AssistantMessage(
        content=[TextContent("y" * 70)],
        api="anthropic-messages",
        provider="anthropic",
        model="m",
        usage=Usage(input=5000, output=10, total_tokens=5010),
    )
    context = Context(
        system_prompt="s" * 7000, messages=[UserMessage("x" * 7000), reply, UserMessage("z" * 35)]
    )
    assert estimate_input_tokens(context) == 5010 + 10


@given(st.text(max_size=3000), st.text(max_size=200), st.integers(1, 200_000), st.integers(1, 300_000))
def test_the_cap_is_never_above_the_request_nor_below_one(
    text: str, system: str, wanted: int, window: int
) -> None:
    context = Context(system_prompt=system, messages=[UserMessage(text)])
    cap = clamp_max_tokens_to_context(window, context, wanted)
    assert 1 <= cap <= wanted
