"""Writing the summary (spec 50 §5, §10 step 6; test cases 23–26)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from tau.ai.types import AssistantMessage, Context, Model, ModelCost
from tau.compaction import (
    CompactionPreparation,
    CompactionSettings,
    FileOperations,
    NothingToCompactError,
    SummarizationError,
    SummaryRequest,
    compact,
    generate_summary,
    prepare_compaction,
)
from tau.compaction.prompts import (
    INITIAL_SUMMARY_INSTRUCTIONS,
    SUMMARIZER_SYSTEM_PROMPT,
    TURN_PREFIX_INSTRUCTIONS,
    UPDATE_SUMMARY_INSTRUCTIONS,
)
from tau.testing.faux import FauxProvider, faux_message, register_faux_provider

from .conftest import assistant, user, worked_example


@dataclass
class Seen:
    context: Context
    max_tokens: int | None
    reasoning: Any
    api_key: str | None


@dataclass
class Recorder:
    """A faux response factory that records each request and answers with a fixed text."""

    reply: str = "## Goal\nsummary"
    seen: list[Seen] = field(default_factory=list)

    def __call__(self, context: Context, options: Any, state: Any, model: Model) -> AssistantMessage:
        self.seen.append(
            Seen(context, options.max_tokens, getattr(options, "reasoning", None), options.api_key)
        )
        return faux_message(self.reply)


@pytest.fixture
def faux() -> Iterator[FauxProvider]:
    models = [
        Model(id="plain", api="x", provider="faux", base_url="", cost=ModelCost()),
        Model(id="thinker", api="x", provider="faux", base_url="", cost=ModelCost(), reasoning=True),
    ]
    provider = register_faux_provider(models=models, chunk_chars=256)
    yield provider
    provider.unregister()


def prompt_text(seen: Seen) -> str:
    [message] = seen.context.messages
    assert message.role == "user" and not isinstance(message.content, str)
    return "".join(getattr(b, "text", "") for b in message.content)


async def test_23_history_summary_request_shape(faux: FauxProvider) -> None:
    recorder = Recorder()
    faux.set_responses([recorder, recorder, recorder])
    request = SummaryRequest(faux.get_model("plain"), api_key="k")
    messages = [user("fix the bug in parser.py"), assistant("on it")]

    assert await generate_summary(messages, request) == "## Goal\nsummary"
    first = recorder.seen[0]
    assert first.max_tokens == 16_384 and first.api_key == "k"  # the model's output limit
    assert first.context.system_prompt == SUMMARIZER_SYSTEM_PROMPT and not first.context.tools
    text = prompt_text(first)
    assert text.startswith(
        "<conversation>\n[User]: fix the bug in parser.py\n\n[Assistant]: on it\n</conversation>\n\n"
    )
    assert text.endswith(INITIAL_SUMMARY_INSTRUCTIONS) and "<previous-summary>" not in text

    await generate_summary(messages, request, previous_summary="OLD", custom_instructions="the parser")
    second = recorder.seen[1]
    text = prompt_text(second)
    assert "</conversation>\n\n<previous-summary>\nOLD\n</previous-summary>\n\n" in text
    assert text.endswith(UPDATE_SUMMARY_INSTRUCTIONS + "\n\nAdditional focus: the parser")


async def test_24_reasoning_is_passed_only_to_reasoning_models_with_thinking_on(faux: FauxProvider) -> None:
    recorder = Recorder()
    faux.set_responses([recorder] * 3)
    messages = [user("q")]
    await generate_summary(messages, SummaryRequest(faux.get_model("thinker"), thinking_level="high"))
    await generate_summary(messages, SummaryRequest(faux.get_model("thinker"), thinking_level="off"))
    await generate_summary(messages, SummaryRequest(faux.get_model("plain"), thinking_level="high"))
    assert [s.reasoning for s in recorder.seen] == ["high", None, None]


def _preparation(
    history: list[Any], prefix: list[Any], settings: CompactionSettings
) -> CompactionPreparation:
    return CompactionPreparation(
        first_kept_entry_id="kept",
        messages_to_summarize=history,
        turn_prefix_messages=prefix,
        is_split_turn=bool(prefix),
        tokens_before=99,
        previous_summary=None,
        file_ops=FileOperations(),
        settings=settings,
    )


async def test_25_a_split_turn_without_history_uses_the_placeholder(faux: FauxProvider) -> None:
    recorder = Recorder(reply="PREFIX")
    faux.set_responses([recorder])
    preparation = _preparation([], [user("start"), assistant("step")], CompactionSettings())
    result = await compact(preparation, SummaryRequest(faux.get_model("plain")))
    assert result.summary == "No prior history.\n\n---\n\n**Turn Context (split turn):**\n\nPREFIX"
    [seen] = recorder.seen
    assert seen.max_tokens == 16_384 and prompt_text(seen).endswith(TURN_PREFIX_INSTRUCTIONS)
    assert (result.first_kept_entry_id, result.tokens_before) == ("kept", 99)


async def test_26_an_error_reply_raises_and_nothing_is_returned(faux: FauxProvider) -> None:
    faux.set_responses([faux_message("", stop_reason="error", error_message="overloaded")])
    preparation = _preparation([user("a"), assistant("b")], [], CompactionSettings())
    with pytest.raises(SummarizationError, match="Summarization failed: overloaded"):
        await compact(preparation, SummaryRequest(faux.get_model("plain")))

    faux.set_responses([Recorder(), faux_message("", stop_reason="error", error_message="boom")])
    split = _preparation([user("a")], [user("b"), assistant("c")], CompactionSettings())
    with pytest.raises(SummarizationError, match="Turn prefix summarization failed: boom"):
        await compact(split, SummaryRequest(faux.get_model("plain")))


async def test_an_empty_selection_is_refused_without_a_call(faux: FauxProvider) -> None:
    with pytest.raises(NothingToCompactError, match=r"Nothing to compact \(session too small\)"):
        await compact(_preparation([], [], CompactionSettings()), SummaryRequest(faux.get_model("plain")))
    assert faux.state.call_count == 0


async def test_worked_example_makes_two_calls_one_after_the_other_and_appends_the_file_list(
    faux: FauxProvider,
) -> None:
    running = 0
    started: list[str] = []

    async def answer(context: Context, options: Any, state: Any, model: Model) -> AssistantMessage:
        nonlocal running
        text = "".join(getattr(b, "text", "") for b in context.messages[0].content)  # type: ignore[union-attr]
        running += 1
        started.append(f"{'P' if text.endswith(TURN_PREFIX_INSTRUCTIONS) else 'H'}:{running}")
        await asyncio.sleep(0.01)
        running -= 1
        return faux_message(started[-1][0])

    faux.set_responses([answer, answer])
    preparation = prepare_compaction(worked_example(), CompactionSettings())
    assert preparation is not None
    result = await compact(preparation, SummaryRequest(faux.get_model("plain")))
    assert started == ["H:1", "P:1"]  # history first; never two at once (a local server may serve one)
    assert result.summary == (
        "H\n\n---\n\n**Turn Context (split turn):**\n\nP\n\n<read-files>\nsrc/a.ts\n</read-files>"
    )
    assert result.usage is not None
    assert result.to_json() == {
        "summary": result.summary,
        "firstKeptEntryId": "e7",
        "tokensBefore": 184_500,
        "usage": result.usage.to_json(),
        "details": {"readFiles": ["src/a.ts"], "modifiedFiles": []},
    }
    assert result.usage.output == 2  # one token written by each of the two requests
