"""Tests for tau.ai.transform: replaying a conversation to another (or the same) model."""

from __future__ import annotations

import re
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from tau.ai.short_hash import short_hash
from tau.ai.transform import (
    AZURE_TOOL_CALL_PROVIDERS,
    MISSING_TOOL_RESULT_TEXT,
    TOOL_IMAGE_PLACEHOLDER,
    USER_IMAGE_PLACEHOLDER,
    normalize_id_anthropic,
    normalize_id_google,
    normalize_id_openai_completions,
    normalize_id_responses,
    transform_messages,
)
from tau.ai.types import (
    AssistantContent,
    AssistantMessage,
    ImageContent,
    Message,
    Model,
    StopReason,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserContent,
    UserMessage,
)

CLAUDE = Model(
    id="claude-sonnet-4-5",
    api="anthropic-messages",
    provider="anthropic",
    base_url="",
    input=["text", "image"],
)
GPT = Model(id="gpt-5", api="openai-responses", provider="openai", base_url="", input=["text", "image"])
TEXT_ONLY = Model(id="glm-4.6", api="openai-completions", provider="zai", base_url="", input=["text"])

LONG_RESPONSES_ID = "call_x|fc_" + "aB3+/=" * 74 + "Zz"  # 456 characters


def assistant(
    *content: AssistantContent, by: Model = GPT, stop_reason: StopReason = "stop"
) -> AssistantMessage:
    return AssistantMessage(
        content=list(content),
        api=by.api,
        provider=by.provider,
        model=by.id,
        stop_reason=stop_reason,
        timestamp=1,
    )


def result(call_id: str, text: str = "ok", name: str = "read") -> ToolResultMessage:
    return ToolResultMessage(tool_call_id=call_id, tool_name=name, content=[TextContent(text)], timestamp=2)


def user(content: str | list[UserContent] = "next") -> UserMessage:
    return UserMessage(content=content, timestamp=3)


def image() -> ImageContent:
    return ImageContent(data="aGk=", mime_type="image/png")


def anthropic_ids(tool_call_id: str, _model: Model, _source: AssistantMessage) -> str:
    return normalize_id_anthropic(tool_call_id)


def is_missing_result(message: Message, call_id: str) -> bool:
    return (
        isinstance(message, ToolResultMessage)
        and message.tool_call_id == call_id
        and message.is_error
        and message.content == [TextContent(MISSING_TOOL_RESULT_TEXT)]
    )


# --- pass 1: per-block rewrite ----------------------------------------------------------------------


def test_same_model_replay_keeps_signed_thinking_even_when_its_text_is_empty() -> None:
    signed = ThinkingContent("", thinking_signature='{"type":"reasoning","encrypted_content":"x"}')
    visible = ThinkingContent("plan", thinking_signature="sig")
    out = transform_messages([assistant(signed, visible, TextContent("hi"))], GPT)
    assert out[0].content == [signed, visible, TextContent("hi")]


def test_same_model_replay_keeps_text_signatures_and_thought_signatures() -> None:
    text = TextContent("hi", text_signature="msg_1")
    call = ToolCall(id="a|b", name="read", thought_signature="ts")
    out = transform_messages([assistant(text, call), result("a|b")], GPT, anthropic_ids)
    assert out[0].content == [text, call]


def test_foreign_thinking_becomes_plain_text_without_tags() -> None:
    out = transform_messages([assistant(ThinkingContent("step one", thinking_signature="sig"))], CLAUDE)
    assert out[0].content == [TextContent("step one")]


def test_foreign_blank_thinking_is_dropped() -> None:
    out = transform_messages([assistant(ThinkingContent("  \n"), TextContent("answer"))], CLAUDE)
    assert out[0].content == [TextContent("answer")]


def test_blank_unsigned_thinking_is_dropped_even_for_the_same_model() -> None:
    out = transform_messages([assistant(ThinkingContent(" "), TextContent("answer"))], GPT)
    assert out[0].content == [TextContent("answer")]


def test_foreign_redacted_thinking_is_dropped() -> None:
    redacted = ThinkingContent("[Reasoning redacted]", thinking_signature="opaque", redacted=True)
    out = transform_messages([assistant(redacted, TextContent("answer"), by=CLAUDE)], GPT)
    assert out[0].content == [TextContent("answer")]


def test_own_redacted_thinking_is_kept() -> None:
    redacted = ThinkingContent("[Reasoning redacted]", thinking_signature="opaque", redacted=True)
    out = transform_messages([assistant(redacted, by=CLAUDE)], CLAUDE)
    assert out[0].content == [redacted]


def test_foreign_text_loses_its_signature() -> None:
    out = transform_messages([assistant(TextContent("hi", text_signature="msg_1"))], CLAUDE)
    assert out[0].content == [TextContent("hi")]


def test_foreign_tool_calls_lose_their_thought_signature() -> None:
    call = ToolCall(id="c1", name="read", arguments={"path": "a"}, thought_signature="ts")
    out = transform_messages([assistant(call), result("c1")], CLAUDE)
    assert out[0].content == [ToolCall(id="c1", name="read", arguments={"path": "a"})]


def test_a_different_api_of_the_same_provider_and_id_counts_as_another_model() -> None:
    same_id_other_api = Model(id=GPT.id, api="openai-completions", provider=GPT.provider, base_url="")
    out = transform_messages([assistant(TextContent("hi", text_signature="msg_1"))], same_id_other_api)
    assert out[0].content == [TextContent("hi")]


# --- tool-call ids ------------------------------------------------------------------------------------


def test_a_long_responses_id_is_shortened_for_anthropic_and_its_result_follows() -> None:
    history: list[Message] = [
        assistant(ToolCall(id=LONG_RESPONSES_ID, name="read")),
        result(LONG_RESPONSES_ID),
    ]
    out = transform_messages(history, CLAUDE, anthropic_ids)
    new_id = out[0].content[0].id  # type: ignore[union-attr]
    assert re.fullmatch(r"[A-Za-z0-9_-]{1,64}", new_id)
    assert isinstance(out[1], ToolResultMessage)
    assert out[1].tool_call_id == new_id


def test_a_long_responses_id_is_shortened_for_chat_completions_and_its_result_follows() -> None:
    history: list[Message] = [
        assistant(ToolCall(id=LONG_RESPONSES_ID, name="read")),
        result(LONG_RESPONSES_ID),
    ]
    out = transform_messages(
        history, TEXT_ONLY, lambda i, m, _s: normalize_id_openai_completions(i, m.provider)
    )
    new_id = out[0].content[0].id  # type: ignore[union-attr]
    assert re.fullmatch(r"[A-Za-z0-9_-]{1,40}", new_id)
    assert out[1].tool_call_id == new_id  # type: ignore[union-attr]


def test_own_tool_call_ids_are_not_normalised() -> None:
    history: list[Message] = [
        assistant(ToolCall(id=LONG_RESPONSES_ID, name="read")),
        result(LONG_RESPONSES_ID),
    ]
    out = transform_messages(history, GPT, anthropic_ids)
    assert out[0].content[0].id == LONG_RESPONSES_ID  # type: ignore[union-attr]
    assert out[1].tool_call_id == LONG_RESPONSES_ID  # type: ignore[union-attr]


def test_the_anthropic_normaliser_replaces_unsafe_characters_and_cuts_to_64() -> None:
    assert normalize_id_anthropic("call|a+b/c=") == "call_a_b_c_"
    assert len(normalize_id_anthropic("x" * 100)) == 64


def test_the_completions_normaliser_keeps_the_call_part_of_a_pipe_id() -> None:
    assert normalize_id_openai_completions("call_1+x|fc_2", "groq") == "call_1_x"


def test_the_completions_normaliser_cuts_any_id_to_40_for_openai() -> None:
    assert normalize_id_openai_completions("y" * 50, "openai") == "y" * 40


def test_the_completions_normaliser_leaves_other_providers_plain_ids_alone() -> None:
    assert normalize_id_openai_completions("toolu_01+" + "y" * 50, "groq") == "toolu_01+" + "y" * 50


def test_the_responses_normaliser_sanitises_both_halves_of_a_native_id() -> None:
    assert normalize_id_responses("call_1|fc_a+b=", GPT, assistant(by=GPT)) == "call_1|fc_a_b"


def test_the_responses_normaliser_prefixes_an_item_id_that_lacks_fc() -> None:
    assert normalize_id_responses("call_1|item9", GPT, assistant(by=GPT)) == "call_1|fc_item9"


def test_the_responses_normaliser_hashes_a_foreign_item_id() -> None:
    assert normalize_id_responses("call_1|xyz", GPT, assistant(by=CLAUDE)) == f"call_1|fc_{short_hash('xyz')}"


def test_the_responses_normaliser_keeps_each_half_within_64_characters() -> None:
    call_id, item_id = normalize_id_responses(LONG_RESPONSES_ID, GPT, assistant(by=GPT)).split("|")
    assert len(call_id) <= 64
    assert len(item_id) <= 64
    assert item_id.startswith("fc_")
    assert not item_id.endswith("_")


def test_the_responses_normaliser_gives_one_part_for_providers_outside_the_allow_list() -> None:
    copilot = Model(id="gpt-5", api="openai-responses", provider="github-copilot", base_url="")
    assert normalize_id_responses("call_1|fc_2", copilot, assistant(by=CLAUDE)) == "call_1_fc_2"


def test_the_responses_normaliser_accepts_azure_with_its_allow_list() -> None:
    azure = Model(id="gpt-5", api="azure-openai-responses", provider="azure", base_url="")
    source = assistant(by=azure)
    assert normalize_id_responses("c|fc_1", azure, source, AZURE_TOOL_CALL_PROVIDERS) == "c|fc_1"


def test_the_responses_normaliser_sanitises_an_id_without_a_pipe() -> None:
    assert normalize_id_responses("toolu_01+a__", GPT, assistant(by=CLAUDE)) == "toolu_01_a"


def test_the_google_normaliser_only_touches_claude_and_gpt_oss_models() -> None:
    assert normalize_id_google("a|b", "claude-sonnet-4-5") == "a_b"
    assert normalize_id_google("a|b", "gpt-oss-120b") == "a_b"
    assert normalize_id_google("a|b", "gemini-2.5-pro") == "a|b"


# --- pass 2: call/result pairing ---------------------------------------------------------------------


def test_an_orphan_tool_call_before_a_user_message_gets_a_synthetic_error_result() -> None:
    out = transform_messages([assistant(ToolCall(id="c1", name="read")), user()], CLAUDE)
    assert len(out) == 3
    assert is_missing_result(out[1], "c1")
    assert out[1].tool_name == "read"  # type: ignore[union-attr]
    assert isinstance(out[2], UserMessage)


def test_an_orphan_tool_call_at_the_end_gets_a_synthetic_result() -> None:
    out = transform_messages([user(), assistant(ToolCall(id="c1", name="read"))], CLAUDE)
    assert len(out) == 3
    assert is_missing_result(out[2], "c1")


def test_unanswered_calls_are_answered_between_two_assistant_messages() -> None:
    first = assistant(ToolCall(id="c1", name="read"), ToolCall(id="c2", name="bash"))
    out = transform_messages([first, result("c1"), assistant(TextContent("done"))], CLAUDE)
    assert len(out) == 4
    assert is_missing_result(out[2], "c2")
    assert isinstance(out[3], AssistantMessage)


def test_answered_calls_get_no_synthetic_result() -> None:
    history: list[Message] = [assistant(ToolCall(id="c1", name="read")), result("c1"), user()]
    assert transform_messages(history, CLAUDE) == history


def test_errored_and_aborted_assistant_messages_are_dropped() -> None:
    history: list[Message] = [
        user(),
        assistant(TextContent("partial"), stop_reason="error"),
        assistant(ThinkingContent("hmm", thinking_signature="s"), stop_reason="aborted"),
        user("again"),
    ]
    out = transform_messages(history, CLAUDE)
    assert [m.role for m in out] == ["user", "user"]


def test_results_of_a_dropped_assistant_message_are_dropped_too() -> None:
    history: list[Message] = [
        user(),
        assistant(ToolCall(id="c1", name="read"), stop_reason="aborted"),
        result("c1"),
    ]
    out = transform_messages(history, CLAUDE, anthropic_ids)
    assert out == [history[0]]


def test_a_dropped_message_gets_no_synthetic_results() -> None:
    history: list[Message] = [assistant(ToolCall(id="c1", name="read"), stop_reason="error"), user()]
    assert transform_messages(history, CLAUDE) == [history[1]]


# --- pass 0: images for text-only models ---------------------------------------------------------------


def test_a_run_of_user_images_becomes_one_placeholder_for_a_text_only_model() -> None:
    message = user([TextContent("look"), image(), image(), TextContent("and"), image()])
    out = transform_messages([message], TEXT_ONLY)
    assert out[0].content == [
        TextContent("look"),
        TextContent(USER_IMAGE_PLACEHOLDER),
        TextContent("and"),
        TextContent(USER_IMAGE_PLACEHOLDER),
    ]


def test_tool_result_images_become_the_tool_placeholder_for_a_text_only_model() -> None:
    history: list[Message] = [
        assistant(ToolCall(id="c1", name="read")),
        ToolResultMessage(tool_call_id="c1", tool_name="read", content=[image(), image()]),
    ]
    out = transform_messages(history, TEXT_ONLY)
    assert out[1].content == [TextContent(TOOL_IMAGE_PLACEHOLDER)]


def test_an_image_after_an_existing_placeholder_adds_no_second_placeholder() -> None:
    message = user([TextContent(USER_IMAGE_PLACEHOLDER), image()])
    out = transform_messages([message], TEXT_ONLY)
    assert out[0].content == [TextContent(USER_IMAGE_PLACEHOLDER)]


def test_a_vision_model_keeps_images() -> None:
    message = user([TextContent("look"), image()])
    assert transform_messages([message], CLAUDE) == [message]


# --- no mutation ---------------------------------------------------------------------------------------


def test_the_input_is_not_mutated() -> None:
    history: list[Message] = [
        user([image()]),
        assistant(
            ThinkingContent("plan", thinking_signature="sig"),
            TextContent("hi", text_signature="msg"),
            ToolCall(id=LONG_RESPONSES_ID, name="read", thought_signature="ts"),
        ),
        result(LONG_RESPONSES_ID),
        assistant(ToolCall(id="c9", name="x"), stop_reason="error"),
    ]
    before = [m.to_json() for m in history]
    transform_messages(history, TEXT_ONLY, anthropic_ids)
    assert [m.to_json() for m in history] == before


def test_unchanged_messages_are_passed_through_as_the_same_objects() -> None:
    history: list[Message] = [user(), assistant(TextContent("hi"), by=CLAUDE)]
    out = transform_messages(history, CLAUDE, anthropic_ids)
    assert all(new is old for new, old in zip(out, history, strict=True))


# --- properties ------------------------------------------------------------------------------------------

MODELS = [CLAUDE, GPT, TEXT_ONLY]
CALL_IDS = ["c1", "c2", "call_x|fc_a+/=", LONG_RESPONSES_ID, "toolu_01"]


@st.composite
def assistant_messages(draw: st.DrawFn) -> AssistantMessage:
    block_strategy = st.one_of(
        st.builds(TextContent, st.sampled_from(["", "hi", "answer"]), st.none() | st.just("msg_1")),
        st.builds(
            ThinkingContent,
            st.sampled_from(["", " ", "plan"]),
            st.none() | st.just("sig"),
            st.none() | st.booleans(),
        ),
        st.builds(
            ToolCall, st.sampled_from(CALL_IDS), st.just("read"), st.just({}), st.none() | st.just("ts")
        ),
    )
    return assistant(
        *draw(st.lists(block_strategy, max_size=4)),
        by=draw(st.sampled_from(MODELS)),
        stop_reason=draw(st.sampled_from(["stop", "toolUse", "length", "error", "aborted"])),
    )


messages_strategy = st.lists(
    st.one_of(
        assistant_messages(),
        st.builds(result, st.sampled_from(CALL_IDS)),
        st.builds(user, st.just("hi") | st.lists(st.just(image()) | st.just(TextContent("t")), max_size=3)),
    ),
    max_size=10,
)


def without_timestamps(messages: list[Message]) -> list[dict[str, Any]]:
    return [{k: v for k, v in m.to_json().items() if k != "timestamp"} for m in messages]


@given(messages_strategy, st.sampled_from(MODELS))
def test_transforming_never_mutates_the_input(history: list[Message], model: Model) -> None:
    before = [m.to_json() for m in history]
    transform_messages(history, model, anthropic_ids)
    assert [m.to_json() for m in history] == before


@given(messages_strategy, st.sampled_from(MODELS))
def test_no_errored_or_aborted_assistant_message_survives(history: list[Message], model: Model) -> None:
    out = transform_messages(history, model, anthropic_ids)
    assert not any(isinstance(m, AssistantMessage) and m.stop_reason in ("error", "aborted") for m in out)


@given(messages_strategy, st.sampled_from(MODELS))
def test_every_tool_call_is_answered_before_the_next_turn(history: list[Message], model: Model) -> None:
    out = transform_messages(history, model, anthropic_ids)
    for index, message in enumerate(out):
        if not isinstance(message, AssistantMessage):
            continue
        answered: set[str] = set()
        for later in out[index + 1 :]:
            if not isinstance(later, ToolResultMessage):
                break
            answered.add(later.tool_call_id)
        assert {call.id for call in message.tool_calls()} <= answered


@given(messages_strategy, st.sampled_from(MODELS))
def test_every_tool_result_answers_an_earlier_kept_call(history: list[Message], model: Model) -> None:
    out = transform_messages(history, model, anthropic_ids)
    announced: set[str] = set()
    for message in out:
        if isinstance(message, AssistantMessage):
            announced.update(call.id for call in message.tool_calls())
        elif isinstance(message, ToolResultMessage):
            assert message.tool_call_id in announced


@given(messages_strategy)
def test_text_only_targets_receive_no_images(history: list[Message]) -> None:
    out = transform_messages(history, TEXT_ONLY)
    for message in out:
        if isinstance(message.content, list):
            assert not any(isinstance(block, ImageContent) for block in message.content)


@given(messages_strategy, st.sampled_from(MODELS))
def test_transforming_twice_changes_nothing_more(history: list[Message], model: Model) -> None:
    once = transform_messages(history, model, anthropic_ids)
    assert without_timestamps(transform_messages(once, model, anthropic_ids)) == without_timestamps(once)
