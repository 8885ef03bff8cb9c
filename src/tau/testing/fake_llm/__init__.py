"""A scripted fake LLM server speaking OpenAI, Anthropic and Google streaming protocols."""

from tau.testing.fake_llm.script import (
    PIXEL_PNG,
    Fault,
    RecordedRequest,
    ScriptedImage,
    ScriptedToolCall,
    ScriptedUsage,
    Turn,
    text_turn,
    tool_turn,
)
from tau.testing.fake_llm.server import FakeLLMServer, sse_frame

__all__ = [
    "PIXEL_PNG",
    "FakeLLMServer",
    "Fault",
    "RecordedRequest",
    "ScriptedImage",
    "ScriptedToolCall",
    "ScriptedUsage",
    "Turn",
    "sse_frame",
    "text_turn",
    "tool_turn",
]
