"""A scripted fake LLM server speaking OpenAI, Anthropic and Google streaming protocols."""

from tau.testing.fake_llm.script import (
    Fault,
    RecordedRequest,
    ScriptedToolCall,
    ScriptedUsage,
    Turn,
    text_turn,
    tool_turn,
)
from tau.testing.fake_llm.server import FakeLLMServer, sse_frame

__all__ = [
    "FakeLLMServer",
    "Fault",
    "RecordedRequest",
    "ScriptedToolCall",
    "ScriptedUsage",
    "Turn",
    "sse_frame",
    "text_turn",
    "tool_turn",
]
