"""Prompt and tool changes delivered per API (``tau.ai.prompt_updates``, issue #31)."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from tau.ai.options import StreamOptions
from tau.ai.prompt_updates import delivery, for_model, notice_text, render_update_text
from tau.ai.providers.anthropic_request import build_body
from tau.ai.providers.bedrock_request import convert_messages as bedrock_messages
from tau.ai.types import (
    AssistantMessage,
    Context,
    JsonSchemaSampling,
    Model,
    PromptAnchor,
    PromptUpdate,
    TextContent,
    Tool,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)

READ = Tool("read", "Read a file", {"type": "object", "properties": {"path": {"type": "string"}}})
WRITE = Tool("write", "Write a file", {"type": "object", "properties": {"path": {"type": "string"}}})
FLAGS = {"supportsMidConvoSystemMessages": True, "supportsMidConvoToolChanges": True}


def model(api: str = "openai-completions", **compat: Any) -> Model:
    return Model(id="m", api=api, provider="p", base_url="http://x", compat=compat or None)


def reply_with_call() -> AssistantMessage:
    return AssistantMessage(
        [ToolCall("c1", "read", {"path": "a"})], api="x", provider="p", model="m", stop_reason="toolUse"
    )


def conversation() -> Context:
    """A prompt, a tool call and its result; ``write`` removed and a section changed after the result."""
    messages = [
        UserMessage([TextContent("go")]),
        reply_with_call(),
        ToolResultMessage("c1", "read", [TextContent("A")]),
    ]
    update = PromptUpdate(at=3, sections={"skills": "new skills"}, tools_removed=["write"])
    return Context(
        messages=messages,
        system_prompt="PROMPT\n\nnew skills",
        tools=[READ],
        anchor=PromptAnchor("PROMPT", [READ, WRITE]),
        updates=[update],
    )


def test_each_api_gets_its_delivery() -> None:
    assert delivery(model("anthropic-messages", **FLAGS)) == "native"
    assert delivery(model("anthropic-messages")) == "notice"
    assert delivery(model("google-generative-ai")) == "notice"
    assert delivery(model(promptChangeNotices=False)) == "rewrite"
    responses = {"supportsMidConvoSystemMessages": True, "supportsAdditionalTools": True}
    assert delivery(model("openai-responses", **responses)) == "native"
    assert delivery(model("openai-codex-responses", **responses)) == "native"
    # Without supportsAdditionalTools the changes still travel in place, the tools at the top level.
    assert delivery(model("openai-responses", supportsMidConvoSystemMessages=True)) == "native"
    assert delivery(model("azure-openai-responses", **responses)) == "native"
    assert delivery(model("mistral-conversations", supportsMidConvoSystemMessages=True)) == "native"
    assert delivery(model("openai-responses", supportsAdditionalTools=True)) == "notice"
    assert delivery(model("mistral-conversations")) == "notice"


def test_a_notice_keeps_the_first_prompt_and_every_tool_and_follows_the_tool_results() -> None:
    sent = for_model(model(), conversation())
    assert sent.system_prompt == "PROMPT" and [t.name for t in sent.tools or []] == ["read", "write"]
    *_, result, notice = sent.messages
    assert isinstance(result, ToolResultMessage) and isinstance(notice, UserMessage)
    text = notice.content[0].text  # type: ignore[union-attr]
    assert text.startswith('<system_prompt_update>\nUpdated system prompt section "skills":\n\nnew skills')
    assert "Tools no longer available (a call to one of them is refused): write" in text


def test_rewrite_sends_the_current_prompt_and_tools() -> None:
    sent = for_model(model(promptChangeNotices=False), conversation())
    assert sent.system_prompt == "PROMPT\n\nnew skills" and [t.name for t in sent.tools or []] == ["read"]
    assert sent.anchor is None and len(sent.messages) == 3


def test_a_tool_with_constrained_sampling_redefined_under_its_name_falls_back_to_the_current_prompt() -> None:
    context = conversation()
    assert context.updates is not None and context.anchor is not None
    strict = Tool("read", "Read a file", READ.parameters, constrained_sampling=JsonSchemaSampling())
    context.anchor.tools = [strict, WRITE]
    context.updates[0].tools_added = [Tool("read", "Read a file, differently", READ.parameters)]
    assert for_model(model(supportsStrictMode=True), context).system_prompt == "PROMPT\n\nnew skills"
    required = Tool(
        "read", "Read a file", READ.parameters, constrained_sampling=JsonSchemaSampling("require")
    )
    context.anchor.tools = [required, WRITE]
    assert for_model(model(), context).system_prompt == "PROMPT\n\nnew skills"


def test_a_prefer_strict_tool_given_new_parameters_for_a_model_without_strict_tools_is_a_notice() -> None:
    """``prefer`` goes plain where the model has no strict tools: nothing holds it to the old schema,
    so a tool that only gains a parameter (the sandbox's ``escalate``) is told by a notice; one whose
    description changes (another program's tool) is declared again."""
    context = conversation()
    assert context.updates is not None and context.anchor is not None
    strict = Tool("read", "Read a file", READ.parameters, constrained_sampling=JsonSchemaSampling())
    context.anchor.tools = [strict, WRITE]
    wider = {**READ.parameters, "properties": {**READ.parameters["properties"], "extra": {"type": "string"}}}
    context.updates[0].tools_added = [
        Tool("read", "Read a file", wider, constrained_sampling=JsonSchemaSampling())
    ]
    sent = for_model(model(), context)
    assert sent.system_prompt == "PROMPT" and '"extra"' in str(sent.messages[-1])
    context.updates[0].tools_added = [Tool("read", "Read a file, differently", READ.parameters)]
    assert for_model(model(), context).system_prompt == "PROMPT\n\nnew skills"


def test_bedrock_gets_the_notice_inside_the_tool_results_turn_so_turns_alternate() -> None:
    bedrock = model("bedrock-converse-stream")
    sent = for_model(bedrock, conversation())
    turns = bedrock_messages(sent, bedrock, None)
    assert [t["role"] for t in turns] == ["user", "assistant", "user"]
    assert "system_prompt_update" in str(turns[-1]["content"])


def test_native_anthropic_keeps_the_anchor_and_appends_a_system_message_with_a_tool_removal() -> None:
    anthropic = model("anthropic-messages", **FLAGS)
    body = build_body(anthropic, conversation(), StreamOptions(), oauth=False)
    assert body["system"][0]["text"] == "PROMPT"
    assert [t["name"] for t in body["tools"]] == ["read", "write", "__pi_deferred_placeholder__"]
    last = body["messages"][-1]
    assert last["role"] == "system"
    assert last["content"][0]["text"] == 'Updated system prompt section "skills":\n\nnew skills'
    assert last["content"][1]["type"] == "tool_removal" and "cache_control" in last["content"][-1]


@given(
    st.dictionaries(st.from_regex(r"[a-z][a-z0-9_-]{0,8}", fullmatch=True), st.none() | st.text(max_size=40))
)
def test_every_changed_section_is_named_once_in_the_update(sections: dict[str, str | None]) -> None:
    text = render_update_text(PromptUpdate(at=0, sections=sections))
    for name, value in sections.items():
        marker = (
            f'Removed system prompt section "{name}".'
            if value is None
            else f'Updated system prompt section "{name}":'
        )
        assert marker in text
    assert notice_text(PromptUpdate(at=0, sections=sections)) == text


async def test_a_model_with_mid_conversation_effort_sends_the_level_as_an_effort_message() -> None:
    from tau.ai.streaming import complete_simple
    from tau.testing.fake_llm import FakeLLMServer, text_turn

    with FakeLLMServer([text_turn("ok")]) as server:
        claude = Model(
            id="claude-next",  # not a name tau knows as adaptive: the flag decides
            api="anthropic-messages",
            provider="p",
            base_url=server.url(),
            reasoning=True,
            compat={"supportsMidConvoEffort": True},
        )
        reply = await complete_simple(
            claude, Context(messages=[UserMessage("hi")]), api_key="k", reasoning="high"
        )
        body = server.last_request.body
    assert body["thinking"]["type"] == "adaptive" and body["output_config"] == {"effort": "low"}
    # The top-level effort stays "low" (part of the cached prefix); the level asked for is a message.
    assert body["messages"][-1] == {"role": "system", "content": [], "output_config": {"effort": "high"}}
    assert reply.provider_thinking_level == "high"
