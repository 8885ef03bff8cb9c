"""The triple one run of the loop works with: system prompt, messages, tools."""

from __future__ import annotations

from msgspec import Struct, field

from tau.agent.messages import AgentMessage
from tau.agent.tool import AgentTool


class AgentContext(Struct):
    """What the loop reads and appends to. Each LLM call is derived from it through
    ``transform_context`` and ``convert_to_llm``."""

    system_prompt: str = ""
    messages: list[AgentMessage] = field(default_factory=list)
    tools: list[AgentTool] = field(default_factory=list)

    def find_tool(self, name: str) -> AgentTool | None:
        """The first tool with exactly this name."""
        return next((tool for tool in self.tools if tool.name == name), None)
