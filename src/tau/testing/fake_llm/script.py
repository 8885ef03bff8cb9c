"""What the fake LLM server answers: a script of turns, each optionally carrying a fault."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any, Literal, TypeAlias

from msgspec import Struct, field


class ScriptedToolCall(Struct):
    """A tool call to stream. ``raw_arguments`` (sent verbatim) wins over ``arguments``.
    ``custom_input`` makes it a custom tool call (an OpenAI grammar tool) streaming that raw text
    instead of JSON arguments (Chat Completions and Responses)."""

    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    id: str | None = None
    raw_arguments: str | None = None
    custom_input: str | None = None


class ScriptedUsage(Struct):
    input: int = 10
    output: int = 5
    cache_read: int = 0
    cache_write: int = 0
    reasoning: int = 0


class ScriptedImage(Struct):
    """A generated image to answer with: bare base64 ``data`` and its ``mime_type``."""

    data: str
    mime_type: str = "image/png"


PIXEL_PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
"""A 1x1 PNG, base64: the image the fake server generates unless a turn gives its own."""


FaultKind: TypeAlias = Literal["status", "cut", "truncate", "stall", "malformed", "close_before_headers"]


class Fault(Struct):
    """Something to go wrong while answering a turn.

    - ``status``: answer with ``status`` (and ``body``, ``headers``, e.g. ``Retry-After``) at once.
    - ``cut``: drop the connection after ``after_events`` events (an incomplete HTTP body).
    - ``truncate``: end the body cleanly after ``after_events`` events, before the protocol's end.
    - ``stall``: send ``after_events`` events, then wait ``seconds`` before going on.
    - ``malformed``: after ``after_events`` events, send a data line that is not valid JSON.
    - ``close_before_headers``: drop the connection before any response.
    """

    kind: FaultKind
    after_events: int = 0
    status: int = 500
    body: str | dict[str, Any] | None = None
    headers: dict[str, str] = field(default_factory=dict)
    seconds: float = 30.0


class Turn(Struct):
    """One scripted response, rendered in whichever protocol the request speaks.

    ``stop_reason`` is the protocol's own value (``"max_tokens"``, ``"content_filter"``,
    ``"SAFETY"``…); when absent the natural one is used (tool use when tool calls are present).
    ``chunk_size`` is the number of characters per streamed delta.
    """

    text: str | None = None
    thinking: str | None = None
    thinking_signature: str | None = None
    tool_calls: list[ScriptedToolCall] = field(default_factory=list)
    usage: ScriptedUsage = field(default_factory=ScriptedUsage)
    stop_reason: str | None = None
    chunk_size: int = 8
    fault: Fault | None = None
    response_model: str | None = None
    response_id: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    frames_per_second: float | None = None
    """Pace the stream (frames that are due go out together); ``None``: as fast as possible."""
    images: list[ScriptedImage] = field(default_factory=list)
    """Generated images, for an image request (OpenRouter's ``modalities``); none given: one small
    PNG (``PIXEL_PNG``) when the request asks for images."""
    classifier_answers: dict[str, Any] | None = None
    """A classification's answers in System One's wire form, by question id (``fake_llm.system_one``);
    ``None``: a fixed answer for every question asked."""
    input_transformations: list[dict[str, Any]] | None = None
    """What the API says it changed in the request (reasoning it withheld from the model), sent as
    ``input_transformations``: in Anthropic's ``message_start`` message and in the final Responses
    ``response`` object; other protocols leave it out."""

    def text_chunks(self) -> list[str]:
        return split_chunks(self.text or "", self.chunk_size)

    def thinking_chunks(self) -> list[str]:
        return split_chunks(self.thinking or "", self.chunk_size)


def split_chunks(text: str, size: int) -> list[str]:
    """Cut ``text`` into pieces of ``size`` characters (at least one piece when non-empty)."""
    size = max(1, size)
    return [text[i : i + size] for i in range(0, len(text), size)]


class RecordedRequest(Struct):
    """A request the fake server received."""

    method: str
    path: str
    query: str
    headers: dict[str, str]
    body: Any
    api: str
    client_port: int = 0
    raw_body: bytes = b""
    """The body's bytes as they arrived."""

    def seed(self) -> str:
        """A hex digest standing for this request, for the ids of its reply (the same request gets
        the same ids): of the bytes as they arrived, else of the body in sorted JSON. The bytes are
        hashed as they are: encoding a 1 MB body again took the server 4 ms per request, which the
        client under test (or a benchmark) would count as its own."""
        data = self.raw_body or json.dumps(self.body, sort_keys=True, default=str).encode()
        return hashlib.sha256(data).hexdigest()


TurnSource: TypeAlias = Turn | Callable[[RecordedRequest], Turn]


def text_turn(text: str, **kwargs: Any) -> Turn:
    return Turn(text=text, **kwargs)


def tool_turn(name: str, arguments: dict[str, Any], *, id: str | None = None, **kwargs: Any) -> Turn:
    return Turn(tool_calls=[ScriptedToolCall(name=name, arguments=arguments, id=id)], **kwargs)
