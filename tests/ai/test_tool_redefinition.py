"""A tool redefined under its name mid-conversation, as bash is when the sandbox turns on or off
(issue #34): each form appends the change after what the model was sent before, never rewrites it.

Two requests of one conversation: the first just after the change (its last message the tool
result the change followed), the second a turn later. The second repeats the first's tools and
messages and adds after them.
"""

from __future__ import annotations

import json
from typing import Any

from tau.ai.options import StreamOptions
from tau.ai.prompt_updates import for_model, notice_text
from tau.ai.providers import anthropic_request, openai_completions, openai_responses
from tau.ai.types import (
    AssistantMessage,
    Context,
    Message,
    Model,
    PromptAnchor,
    PromptUpdate,
    TextContent,
    Tool,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from tau.tools.bash import bash_parameters

PLAIN = Tool("bash", "Run a command", bash_parameters(escalate=False))
ESCALATE = Tool("bash", "Run a command", bash_parameters(escalate=True))
READ = Tool("read", "Read a file", {"type": "object", "properties": {"path": {"type": "string"}}})


def model(api: str, **compat: Any) -> Model:
    return Model(id="m", api=api, provider="p", base_url="http://127.0.0.1:9", compat=compat or None)


def conversation(*, later: bool, changes: list[tuple[Tool, Tool]] | None = None) -> Context:
    """``go``, a bash call and its result, then bash redefined (``changes``: each (before, after)
    one change at the same place); with ``later``, a reply and the next prompt after it."""
    changes = changes or [(PLAIN, ESCALATE)]
    messages: list[Message] = [
        UserMessage("go", timestamp=1),
        AssistantMessage(
            [ToolCall("c1", "bash", {"command": "ls"})],
            api="x",
            provider="p",
            model="m",
            stop_reason="toolUse",
            timestamp=2,
        ),
        ToolResultMessage("c1", "bash", [TextContent("a.txt")], timestamp=3),
    ]
    if later:
        messages += [
            AssistantMessage([TextContent("done")], api="x", provider="p", model="m", timestamp=4),
            UserMessage("again", timestamp=5),
        ]
    updates = [
        PromptUpdate(
            at=3, sections={"sandbox": "Sandbox: on."}, tools_added=[after], tools_removed=[before.name]
        )
        for before, after in changes
    ]
    current = changes[-1][1]
    return Context(
        messages=messages,
        system_prompt="PROMPT\n\nSandbox: on.",
        tools=[READ, current],
        anchor=PromptAnchor("PROMPT", [READ, changes[0][0]]),
        updates=updates,
    )


def assert_appended(before: dict[str, Any], after: dict[str, Any], key: str) -> None:
    """Everything but ``key`` (the messages or input) the same, and ``key`` only grown."""
    assert {k: v for k, v in before.items() if k != key} == {k: v for k, v in after.items() if k != key}
    assert after[key][: len(before[key])] == before[key]


def escalate_in(value: Any) -> bool:
    return "escalate" in json.dumps(value)


def test_the_notice_keeps_the_first_declaration_and_gives_the_definition_now() -> None:
    plain = model("openai-completions")
    first = openai_completions.build_body(plain, for_model(plain, conversation(later=False)), StreamOptions())
    second = openai_completions.build_body(plain, for_model(plain, conversation(later=True)), StreamOptions())
    assert_appended(first, second, "messages")
    [bash] = [t for t in first["tools"] if t["function"]["name"] == "bash"]
    assert "escalate" not in bash["function"]["parameters"]["properties"]  # the cached declaration
    notice = first["messages"][-1]
    assert notice["role"] == "user"
    text = json.dumps(notice["content"])
    assert "is redefined" in text and escalate_in(notice["content"])
    assert "Tools now available" not in text and "no longer available" not in text


def test_a_tool_redefined_back_is_told_again() -> None:
    context = conversation(later=False, changes=[(PLAIN, ESCALATE), (ESCALATE, PLAIN)])
    sent = for_model(model("openai-completions"), context)
    assert [t.parameters for t in sent.tools or []] == [READ.parameters, PLAIN.parameters]
    *_, notice = sent.messages
    assert isinstance(notice, UserMessage) and not isinstance(notice.content, str)
    text = "".join(part.text for part in notice.content if isinstance(part, TextContent))
    # The second definition told is the first one again (no escalate).
    first, second = text.split('Tool "bash" is redefined')[1:]
    assert "escalate" in first and "escalate" not in second


def test_a_tool_removed_then_declared_again_differently_is_available_and_told() -> None:
    context = conversation(later=False)
    assert context.updates is not None
    context.updates = [
        PromptUpdate(at=3, tools_removed=["bash"]),
        PromptUpdate(at=3, tools_added=[ESCALATE]),
    ]
    text = notice_text(context.updates[1], [ESCALATE])
    assert text.startswith("Tools now available: bash") and "is redefined" in text
    sent = for_model(model("openai-completions"), context)
    assert [t.parameters for t in sent.tools or []] == [READ.parameters, PLAIN.parameters]


def test_chat_completions_with_tool_additions_keeps_the_top_level_tools() -> None:
    kimi = model(
        "openai-completions", supportsMidConvoSystemMessages=True, supportsMidConvoToolAdditions=True
    )
    first = openai_completions.build_body(kimi, conversation(later=False), StreamOptions())
    second = openai_completions.build_body(kimi, conversation(later=True), StreamOptions())
    assert_appended(first, second, "messages")
    assert not escalate_in(first["tools"])
    change = first["messages"][-1]
    assert change["role"] == "system" and "tools" not in change
    assert 'Updated system prompt section "sandbox"' in change["content"]
    assert 'Tool "bash" is redefined' in change["content"] and escalate_in(change["content"])


def test_chat_completions_still_folds_a_real_removal() -> None:
    kimi = model(
        "openai-completions", supportsMidConvoSystemMessages=True, supportsMidConvoToolAdditions=True
    )
    context = conversation(later=False)
    assert context.updates is not None
    context.updates[0].tools_removed = ["bash", "read"]
    context.tools = [context.updates[0].tools_added[0]]
    body = openai_completions.build_body(kimi, context, StreamOptions())
    assert [t["function"]["name"] for t in body["tools"]] == ["bash"] and escalate_in(body["tools"])


def test_anthropic_tool_changes_add_the_new_definition_in_place() -> None:
    claude = model(
        "anthropic-messages", supportsMidConvoSystemMessages=True, supportsMidConvoToolChanges=True
    )
    first = anthropic_request.build_body(claude, conversation(later=False), StreamOptions(), oauth=False)
    second = anthropic_request.build_body(claude, conversation(later=True), StreamOptions(), oauth=False)
    assert first["tools"] == second["tools"] and not escalate_in(first["tools"])
    change = first["messages"][-1]
    assert change["role"] == "system"
    kinds = [block["type"] for block in change["content"]]
    assert kinds == ["text", "tool_addition"]  # no tool_removal: the new definition replaces
    assert escalate_in(change["content"][1])
    # The later request carries the same change (without the cache marker) before the reply.
    unmarked = {
        **change,
        "content": [{k: v for k, v in b.items() if k != "cache_control"} for b in change["content"]],
    }
    assert second["messages"][len(first["messages"]) - 1] == unmarked


def test_responses_with_additional_tools_declare_the_new_definition_as_an_item() -> None:
    gpt = model("openai-responses", supportsMidConvoSystemMessages=True, supportsAdditionalTools=True)
    first = openai_responses.build_request_body(gpt, conversation(later=False), StreamOptions())
    second = openai_responses.build_request_body(gpt, conversation(later=True), StreamOptions())
    assert_appended(first, second, "input")
    items = [item for item in first["input"] if item.get("type") == "additional_tools"]
    assert len(items) == 2 and not escalate_in(items[0]) and escalate_in(items[1])
    assert "no longer available" not in json.dumps(first["input"])
