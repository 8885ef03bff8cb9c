"""A request whose history extends the last one's converts only the new messages, and sends exactly
the bytes a body built from scratch would.

Random sessions (tool loops, other models' turns, orphan results, aborted turns, images, messages
replaced or given new content, branches cut back, model and system prompt switches, a payload hook
editing a body in place) are replayed message by message through each API's body builder; after
every step the body built from the live history must equal the one built from a deep copy of it,
where nothing can be reused.
"""

from __future__ import annotations

import copy
import sys
from collections.abc import Callable
from types import FrameType
from typing import Any

import msgspec
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from tau.ai.options import StreamOptions
from tau.ai.providers import anthropic_request, google_convert, openai_completions, openai_responses
from tau.ai.transport.request_cache import encode_body, expose_body
from tau.ai.types import (
    AssistantMessage,
    Context,
    ImageContent,
    JsonObject,
    Message,
    Model,
    TextContent,
    ThinkingContent,
    Tool,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)

PROPERTY = settings(max_examples=60, derandomize=True, deadline=None)
PNG = ImageContent("aGVsbG8=", "image/png")
READ = Tool("read", "Read a file", {"type": "object", "properties": {"path": {"type": "string"}}})


def _anthropic(model: Model, context: Context) -> JsonObject:
    return anthropic_request.build_body(model, context, StreamOptions(), oauth=False)


def _completions(model: Model, context: Context) -> JsonObject:
    return openai_completions.build_body(model, context, StreamOptions())


def _responses(model: Model, context: Context) -> JsonObject:
    return openai_responses.build_request_body(model, context, StreamOptions())


def _google(model: Model, context: Context) -> JsonObject:
    return google_convert.build_request_body(model, context, {}, temperature=None, max_tokens=None)


BUILDERS: dict[str, Callable[[Model, Context], JsonObject]] = {
    "anthropic-messages": _anthropic,
    "openai-completions": _completions,
    "openai-responses": _responses,
    "google-generative-ai": _google,
}


def _models(api: str) -> list[Model]:
    """The two targets a session switches between: one that sees images and reasons, one that does not."""
    return [
        Model(id="own-model", api=api, provider="openai", base_url="http://127.0.0.1:1", reasoning=True),
        Model(id="plain-model", api=api, provider="other", base_url="http://127.0.0.1:1", input=["text"]),
    ]


class Session:
    """A history grown by steps, with the counters that keep its ids unique."""

    def __init__(self, api: str) -> None:
        self.api = api
        self.models = _models(api)
        self.model = self.models[0]
        self.system = "You are a test."
        self.messages: list[Message] = []
        self.count = 0

    def step(self, op: tuple[Any, ...]) -> None:
        kind = op[0]
        self.count += 1
        if kind == "turn":  # the common step: a tool call and its result
            self.step(("assistant", 1, 0, "toolUse", False))
            self.step(("results", "all", op[1]))
        elif kind == "user":
            content: list[TextContent | ImageContent] = [TextContent(f"prompt {self.count}")]
            self.messages.append(UserMessage([*content, PNG] if op[1] else content, timestamp=self.count))
        elif kind == "assistant":
            self.messages.append(self._assistant(calls=op[1], author=op[2], stop=op[3], thinking=op[4]))
        elif kind == "results":
            self._results(op[1], image=op[2])
        elif kind == "replace" and self.messages:
            index = op[1] % len(self.messages)
            old = self.messages[index]
            self.messages[index] = msgspec.structs.replace(
                old, content=[*old.content, TextContent("replaced")]
            )  # type: ignore[list-item]
        elif kind == "in_place" and self.messages:
            message = self.messages[op[1] % len(self.messages)]
            message.content = [TextContent(f"rewritten {self.count}")]  # type: ignore[assignment]
        elif kind == "appended" and self.messages:
            self.messages[op[1] % len(self.messages)].content.append(TextContent(f"more {self.count}"))  # type: ignore[arg-type, union-attr]
        elif kind == "cut":
            del self.messages[op[1] % (len(self.messages) + 1) :]
        elif kind == "model":
            self.model = self.models[op[1]]
        elif kind == "system":
            self.system = f"You are test {self.count}."

    def _assistant(self, *, calls: int, author: int, stop: str, thinking: bool) -> AssistantMessage:
        api, provider, model = [
            (self.api, "openai", "own-model"),
            (self.api, "openai", "sibling-model"),
            ("other-api", "elsewhere", "foreign-model"),
        ][author]
        content: list[Any] = [ThinkingContent(f"think {self.count}", f"sig-{self.count}")] if thinking else []
        if stop != "empty":
            content.append(TextContent(f"answer {self.count}"))
        content += [
            ToolCall(f"call_{self.count}_{i}|fc_{self.count}/{i}", "read", {"path": f"f{i}.py"}, "c2ln")
            for i in range(calls)
        ]
        stop_reason = "toolUse" if calls and stop == "stop" else "stop" if stop == "empty" else stop
        return AssistantMessage(
            content=content, api=api, provider=provider, model=model, usage=Usage(),
            stop_reason=stop_reason, timestamp=self.count,  # type: ignore[arg-type]
        )  # fmt: skip

    def _results(self, which: str, *, image: bool) -> None:
        # "again": a late answer to the last calls asked for, after turns that asked for none
        asked = [m for m in reversed(self.messages) if isinstance(m, AssistantMessage)]
        last = next((m for m in asked if m.tool_calls() or which != "again"), None)
        calls = last.tool_calls() if last is not None else []
        ids = {"all": [c.id for c in calls], "first": [c.id for c in calls[:1]], "orphan": ["orphan"]}.get(
            which, [c.id for c in calls]
        )
        for call_id in ids:
            blocks: list[TextContent | ImageContent] = [TextContent(f"result of {call_id}")]
            self.messages.append(
                ToolResultMessage(call_id, "read", [*blocks, PNG] if image else blocks, timestamp=self.count)
            )

    def body(self, messages: list[Message]) -> JsonObject:
        context = Context(messages=messages, system_prompt=self.system, tools=[READ])
        return BUILDERS[self.api](self.model, context)


TURN = st.tuples(st.just("turn"), st.booleans())
OPS = st.one_of(
    TURN,
    TURN,
    TURN,
    st.tuples(st.just("user"), st.booleans()),
    st.tuples(
        st.just("assistant"),
        st.integers(0, 2),
        st.integers(0, 2),
        st.sampled_from(["stop", "toolUse", "error", "aborted", "empty"]),
        st.booleans(),
    ),
    st.tuples(st.just("results"), st.sampled_from(["all", "all", "first", "orphan", "again"]), st.booleans()),
    st.tuples(st.just("replace"), st.integers(0, 50)),
    st.tuples(st.just("in_place"), st.integers(0, 50)),
    st.tuples(st.just("appended"), st.integers(0, 50)),
    st.tuples(st.just("cut"), st.integers(0, 50)),
    st.tuples(st.just("model"), st.integers(0, 1)),
    st.tuples(st.just("system")),
    st.tuples(st.just("hook")),
)


def _edit_strings(value: Any) -> None:
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, item in list(items):
        if isinstance(item, str) and item.startswith(("prompt", "result of", "answer")):
            value[key] = "EDITED BY HOOK"
        else:
            _edit_strings(item)


@pytest.mark.parametrize("api", list(BUILDERS))
@PROPERTY
@given(ops=st.lists(OPS, max_size=30))
# A late answer after a turn that became no message: Gemini adds it to the answers' turn before.
@example(
    ops=[("user", False), ("turn", False), ("assistant", 0, 0, "empty", False), ("results", "again", False)]
)
@example(ops=[("user", False), ("turn", False), ("turn", True), ("appended", 2), ("turn", False)])
def test_every_request_sends_the_bytes_of_a_body_built_from_scratch(
    api: str, ops: list[tuple[Any, ...]]
) -> None:
    session = Session(api)
    for op in ops:
        session.step(op)
        live = session.body(session.messages)
        if op[0] == "hook":  # a payload hook edits this request's body in place
            expose_body(live)
            _edit_strings(live)
            encode_body(live)
            continue
        assert encode_body(live) == encode_body(session.body(copy.deepcopy(session.messages))), op


TURNS = {
    "tool": [("assistant", 1, 0, "toolUse", False), ("results", "all", False)],
    "chat": [("assistant", 0, 0, "stop", False), ("user", False)],
}


def _conversation(api: str, turn: str, turns: int) -> Session:
    session = Session(api)
    session.step(("user", False))
    for _ in range(turns):
        for op in TURNS[turn]:
            session.step(op)
    return session


def _calls_for_next_request(session: Session, turn: str) -> int:
    """Python function calls made to build and encode the request after the next turn."""
    encode_body(session.body(session.messages))
    for op in TURNS[turn]:
        session.step(op)
    calls = 0

    def count(frame: FrameType, event: str, arg: Any) -> None:
        nonlocal calls
        calls += event == "call"

    sys.setprofile(count)
    try:
        encode_body(session.body(session.messages))
    finally:
        sys.setprofile(None)
    return calls


@pytest.mark.parametrize("turn", list(TURNS))
@pytest.mark.parametrize("api", list(BUILDERS))
def test_the_next_request_does_not_convert_or_encode_the_old_messages_again(api: str, turn: str) -> None:
    short, long = _conversation(api, turn, 10), _conversation(api, turn, 500)
    extra_messages = len(long.messages) - len(short.messages)
    # Each old message is only checked for changes (one call); converting or encoding it again
    # would take several.
    more_calls = _calls_for_next_request(long, turn) - _calls_for_next_request(short, turn)
    assert more_calls <= 1.2 * extra_messages
