"""The in-process faux provider (spec 10 §9, tests 67-68)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tau.ai import AbortSignal, Context, StreamOptions, UserMessage, complete, stream
from tau.testing.faux import (
    FauxProvider,
    faux_message,
    faux_text,
    faux_thinking,
    faux_tool_call,
    register_faux_provider,
)


@pytest.fixture
def faux() -> Iterator[FauxProvider]:
    provider = register_faux_provider(chunk_chars=4)
    yield provider
    provider.unregister()


def _context(text: str = "hi") -> Context:
    return Context(messages=[UserMessage(text)], system_prompt="be brief")


async def test_scripted_responses_are_consumed_in_order(faux: FauxProvider) -> None:
    faux.set_responses([faux_message("first"), faux_message("second")])
    model = faux.get_model()
    assert (await complete(model, _context())).text() == "first"
    assert (await complete(model, _context())).text() == "second"
    assert faux.state.call_count == 2
    assert faux.pending == 0


async def test_an_empty_queue_yields_an_error_message(faux: FauxProvider) -> None:
    reply = await complete(faux.get_model(), _context())
    assert reply.stop_reason == "error"
    assert reply.error_message == "No more faux responses queued"


async def test_streaming_splits_blocks_into_pieces_with_the_full_protocol(faux: FauxProvider) -> None:
    faux.set_responses(
        [
            faux_message(
                [
                    faux_thinking("let me think"),
                    faux_text("hello world"),
                    faux_tool_call("read", {"path": "a.py"}),
                ]
            )
        ]
    )
    events = [e async for e in stream(faux.get_model(), _context())]
    kinds = [e.type for e in events]
    assert kinds[0] == "start"
    assert kinds[-1] == "done"
    assert kinds.count("text_delta") == 3
    assert kinds.count("thinking_delta") == 3
    assert kinds.count("toolcall_delta") > 1
    final = events[-1].message  # type: ignore[union-attr]
    assert final.stop_reason == "toolUse"
    assert final.tool_calls()[0].arguments == {"path": "a.py"}


async def test_usage_is_estimated_at_four_characters_a_token(faux: FauxProvider) -> None:
    faux.set_responses([faux_message("x" * 40)])
    reply = await complete(faux.get_model(), Context(messages=[UserMessage("y" * 400)]))
    assert reply.usage.output == 10
    assert reply.usage.input == 102  # "user:" + 400 chars = 405 characters, rounded up
    assert reply.usage.total_tokens == reply.usage.input + reply.usage.output


async def test_a_session_id_simulates_cache_reads_from_the_shared_prefix(faux: FauxProvider) -> None:
    faux.set_responses([faux_message("a"), faux_message("b")])
    model = faux.get_model()
    history: list = [UserMessage("z" * 400)]  # type: ignore[type-arg]
    first = await complete(model, Context(messages=history), session_id="s1")
    assert first.usage.cache_write > 0 and first.usage.cache_read == 0
    history += [first, UserMessage("next question")]
    second = await complete(model, Context(messages=history), session_id="s1")
    assert second.usage.cache_read >= 100
    assert second.usage.input < second.usage.cache_read


async def test_no_cache_is_simulated_when_retention_is_none(faux: FauxProvider) -> None:
    faux.set_responses([faux_message("a"), faux_message("b")])
    model = faux.get_model()
    for reply_text in ("a", "b"):
        reply = await complete(model, _context(), StreamOptions(session_id="s", cache_retention="none"))
        assert reply.text() == reply_text
        assert reply.usage.cache_read == 0 and reply.usage.cache_write == 0


async def test_a_factory_response_sees_the_request(faux: FauxProvider) -> None:
    def echo(context, options, state, model):  # type: ignore[no-untyped-def]
        return faux_message(f"call {state.call_count}: {context.messages[-1].content}")

    faux.set_responses([echo])
    assert (await complete(faux.get_model(), _context("ping"))).text() == "call 1: ping"


async def test_abort_during_a_paced_stream_returns_the_partial_text() -> None:
    faux = register_faux_provider(chunk_chars=4, tokens_per_second=100)
    try:
        faux.set_responses([faux_message("word " * 50)])
        signal = AbortSignal()
        seen = 0
        s = stream(faux.get_model(), _context(), signal=signal)
        async for event in s:
            if event.type == "text_delta":
                seen += 1
                if seen == 3:
                    signal.abort()
        reply = await s.result()
        assert reply.stop_reason == "aborted"
        assert 0 < len(reply.text()) < 250
    finally:
        faux.unregister()


async def test_a_scripted_error_reply_ends_with_an_error_event(faux: FauxProvider) -> None:
    faux.set_responses([faux_message("partial", stop_reason="error", error_message="boom")])
    events = [e async for e in stream(faux.get_model(), _context())]
    assert events[-1].type == "error"
    reply = events[-1].error  # type: ignore[union-attr]
    assert reply.error_message == "boom"
    assert reply.text() == "partial"


async def test_unregister_removes_the_api(faux: FauxProvider) -> None:
    from tau.ai import get_api_provider

    assert get_api_provider(faux.api) is not None
    faux.unregister()
    assert get_api_provider(faux.api) is None
