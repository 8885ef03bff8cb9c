"""Summaries of abandoned branches (spec 50 §9; test cases 43–46; the runtime side is in
test_runtime_tree.py)."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Iterator
from typing import Any

import pytest

from tau.ai.abort import AbortController
from tau.ai.types import AssistantMessage, Context, Model, ModelCost
from tau.compaction import (
    FileDetails,
    SummaryRequest,
    collect_entries_for_branch_summary,
    estimate_tokens,
    generate_branch_summary,
    prepare_branch_entries,
)
from tau.compaction.prompts import (
    BRANCH_SUMMARY_INSTRUCTIONS,
    BRANCH_SUMMARY_PREAMBLE,
    SUMMARIZER_SYSTEM_PROMPT,
)
from tau.session.entries import BranchSummaryEntry, MessageEntry
from tau.session.manager import SessionManager
from tau.testing.faux import FauxProvider, faux_message, register_faux_provider

from .conftest import assistant, chain, compaction, tool_result, user


@pytest.fixture
def faux() -> Iterator[FauxProvider]:
    model = Model(id="m", api="x", provider="faux", base_url="", cost=ModelCost(), context_window=20_000)
    thinker = Model(id="r", api="x", provider="faux", base_url="", cost=ModelCost(), reasoning=True)
    provider = register_faux_provider(models=[model, thinker], chunk_chars=256)
    yield provider
    provider.unregister()


def test_43_collects_from_the_old_leaf_back_to_the_common_ancestor() -> None:
    manager = SessionManager.in_memory("/p")
    manager.append_message(user("root"))
    shared = manager.append_message(assistant("shared"))
    manager.append_message(user("left"))
    manager.append_message(assistant("", calls=[("read", {"path": "x.py"})]))
    manager.append_message(tool_result("content"))
    old_leaf = manager.append_message(assistant("left done"))
    manager.branch(shared)
    target = manager.append_message(user("right"))

    collected = collect_entries_for_branch_summary(manager, old_leaf, target)
    assert collected.common_ancestor_id == shared
    texts = [e.message.role for e in collected.entries if isinstance(e, MessageEntry)]
    assert texts == ["user", "assistant", "toolResult", "assistant"]
    assert collect_entries_for_branch_summary(manager, None, target).entries == []

    prepared = prepare_branch_entries(collected.entries)
    assert [m.role for m in prepared.messages] == ["user", "assistant", "assistant"]  # no tool result
    assert prepared.file_ops.details() == FileDetails(["x.py"], [])


def test_43_the_budget_keeps_the_newest_and_squeezes_in_summaries_below_90_percent() -> None:
    entries = chain(user("u" * 400), assistant("a" * 400), user("u" * 400), assistant("a" * 400))
    prepared = prepare_branch_entries(entries, token_budget=250)
    assert [m.role for m in prepared.messages] == ["user", "assistant"]  # the newest two, oldest first
    assert prepared.total_tokens == 200

    with_summary = chain(compaction("e9", "s" * 200), user("u" * 400), assistant("a" * 400))
    squeezed = prepare_branch_entries(with_summary, token_budget=240)  # 200 < 216: the summary still fits in
    assert [m.role for m in squeezed.messages] == ["compactionSummary", "user", "assistant"]
    assert squeezed.total_tokens == 250
    over = prepare_branch_entries(with_summary, token_budget=210)  # 200 is not below 189
    assert [m.role for m in over.messages] == ["user", "assistant"]

    carried = BranchSummaryEntry(
        id="",
        parent_id=None,
        timestamp="",
        from_id="x",
        summary="s",
        details={"readFiles": ["r.py"], "modifiedFiles": ["m.py"]},
    )
    hooked = BranchSummaryEntry(
        id="",
        parent_id=None,
        timestamp="",
        from_id="x",
        summary="s",
        details={"readFiles": ["h.py"]},
        from_hook=True,
    )
    assert prepare_branch_entries(chain(carried, hooked)).file_ops.details() == FileDetails(
        ["r.py"], ["m.py"]
    )
    assert estimate_tokens(squeezed.messages[0]) == 50


async def test_44_nothing_to_summarize_makes_no_call(faux: FauxProvider) -> None:
    result = await generate_branch_summary(chain("model_change", "label"), SummaryRequest(faux.get_model()))
    assert result.summary == "No content to summarize"
    assert faux.state.call_count == 0


async def test_45_instructions_focus_or_replacement_and_the_output_limit_fitted_to_the_window(
    faux: FauxProvider,
) -> None:
    seen: list[tuple[str, int | None, Any]] = []

    def record(context: Context, options: Any, state: Any, model: Model) -> AssistantMessage:
        text = "".join(getattr(b, "text", "") for b in context.messages[0].content)  # type: ignore[union-attr]
        seen.append((text, options.max_tokens, getattr(options, "reasoning", None)))
        return faux_message("## Goal\nexplored")

    faux.set_responses([record, record, record])
    entries = chain(user("try it"), assistant("tried"))
    request = SummaryRequest(faux.get_model(), thinking_level="high")
    await generate_branch_summary(entries, request)
    await generate_branch_summary(entries, request, custom_instructions="the tests")
    await generate_branch_summary(
        entries, request, custom_instructions="ONLY THIS", replace_instructions=True
    )
    (plain, _, reasoning), (focused, _, _), (replaced, _, _) = seen
    assert plain.startswith("<conversation>\n[User]: try it\n\n[Assistant]: tried\n</conversation>\n\n")
    assert plain.endswith(BRANCH_SUMMARY_INSTRUCTIONS)
    assert focused.endswith(BRANCH_SUMMARY_INSTRUCTIONS + "\n\nAdditional focus: the tests")
    assert replaced.endswith("</conversation>\n\nONLY THIS")
    for text, max_tokens, _ in seen:  # 20000-token window: what is left after the input and 4096
        input_tokens = -(-(len(SUMMARIZER_SYSTEM_PROMPT) + len(text)) // 4)
        # stream_simple fits every request's cap into the window again, as pi-ai 1.6 does, with its
        # own estimate (3.5 characters per token, per message): the lower of the two is sent.
        request_tokens = math.ceil(len(SUMMARIZER_SYSTEM_PROMPT) / 3.5) + math.ceil(len(text) / 3.5)
        assert max_tokens == min(20_000 - input_tokens, 20_000 - request_tokens) - 4096 < 16_384
    assert reasoning is None  # not a reasoning model


async def test_a_reasoning_model_summarises_the_branch_at_the_sessions_thinking_level(
    faux: FauxProvider,
) -> None:
    levels: list[Any] = []

    def record(context: Context, options: Any, state: Any, model: Model) -> AssistantMessage:
        levels.append(getattr(options, "reasoning", None))
        return faux_message("## Goal\nexplored")

    faux.set_responses([record, record])
    entries = chain(user("try it"), assistant("tried"))
    await generate_branch_summary(entries, SummaryRequest(faux.get_model("r"), thinking_level="low"))
    await generate_branch_summary(entries, SummaryRequest(faux.get_model("r"), thinking_level="off"))
    assert levels == ["low", None]


async def test_46_summary_text_carries_preamble_and_file_lists(faux: FauxProvider) -> None:
    faux.set_responses([faux_message("BODY")])
    entries = chain(user("go"), assistant("", calls=[("edit", {"path": "b.py"}), ("read", {"path": "a.py"})]))
    result = await generate_branch_summary(entries, SummaryRequest(faux.get_model()))
    assert result.summary == (
        f"{BRANCH_SUMMARY_PREAMBLE}\n\nBODY\n\n<read-files>\na.py\n</read-files>\n\n<modified-files>\nb.py\n</modified-files>"
    )
    assert result.details is not None
    assert result.details.to_json() == {"readFiles": ["a.py"], "modifiedFiles": ["b.py"]}
    assert BRANCH_SUMMARY_PREAMBLE.count("\n") == 1  # two lines


async def test_46_an_aborted_summary_reports_aborted_and_an_error_reports_the_error(
    faux: FauxProvider,
) -> None:
    controller = AbortController()

    async def hang(context: Context, options: Any, state: Any, model: Model) -> AssistantMessage:
        await asyncio.sleep(10)
        return faux_message("never")

    faux.set_responses([hang, faux_message("", stop_reason="error", error_message="nope")])
    entries = chain(user("go"), assistant("went"))
    pending = asyncio.ensure_future(
        generate_branch_summary(entries, SummaryRequest(faux.get_model(), signal=controller.signal))
    )
    await asyncio.sleep(0.01)
    controller.abort()
    aborted = await pending
    assert aborted.aborted and aborted.summary is None

    failed = await generate_branch_summary(entries, SummaryRequest(faux.get_model()))
    assert failed.error == "Branch summarization failed: nope" and failed.summary is None
