"""Custom tool: a ``todo`` list the model keeps while it works, plus a ``/todos`` command.

The tool's state lives in each tool result's ``details`` rather than in the extension, so it
follows the session tree: after a fork or a ``/tree`` jump the list is what it was at that point.
On ``session_start`` the list is rebuilt from the last ``todo`` result on the current branch.
The tool declares a prompt snippet (its line under "Available tools") and a guideline.

    tau -e examples/extensions/custom_tool.py
"""

from __future__ import annotations

from typing import Any

from tau.agent.tool import AgentToolResult, text_result
from tau.ai.types import ToolResultMessage
from tau.extensions import (
    ExtensionAPI,
    ExtensionCommandContext,
    ExtensionContext,
    SessionStartEvent,
    ToolDefinition,
)

PARAMETERS = {
    "type": "object",
    "properties": {
        "action": {"type": "string", "enum": ["add", "done", "list"]},
        "text": {"type": "string", "description": "The item to add (add only)"},
        "index": {"type": "integer", "description": "1-based item number (done only)"},
    },
    "required": ["action"],
}


def render(todos: list[dict[str, Any]]) -> str:
    if not todos:
        return "No todos."
    return "\n".join(f"{i}. [{'x' if t['done'] else ' '}] {t['text']}" for i, t in enumerate(todos, 1))


def todos_on_branch(ctx: ExtensionContext) -> list[dict[str, Any]]:
    """The list as the last ``todo`` result on the current branch left it."""
    for entry in reversed(ctx.session_manager.get_branch()):
        message = getattr(entry, "message", None)
        if isinstance(message, ToolResultMessage) and message.tool_name == "todo":
            details = message.details if isinstance(message.details, dict) else {}
            return [dict(t) for t in details.get("todos", [])]
    return []


def setup(tau: ExtensionAPI) -> None:
    todos: list[dict[str, Any]] = []

    @tau.on("session_start")
    def restore(event: SessionStartEvent, ctx: ExtensionContext) -> None:
        todos[:] = todos_on_branch(ctx)

    def execute(
        tool_call_id: str, params: dict[str, Any], signal: Any, on_update: Any, ctx: ExtensionContext
    ) -> AgentToolResult:
        action = params["action"]
        if action == "add":
            text = str(params.get("text", "")).strip()
            if not text:
                raise ValueError("add needs a non-empty text")
            todos.append({"text": text, "done": False})
        elif action == "done":
            index = int(params.get("index", 0))
            if not 1 <= index <= len(todos):
                raise ValueError(f"no todo number {index}; there are {len(todos)}")
            todos[index - 1]["done"] = True
        return text_result(render(todos), details={"todos": [dict(t) for t in todos]})

    tau.register_tool(
        ToolDefinition(
            name="todo",
            label="Todo",
            description="Keep a todo list for multi-step work: add items, mark them done, list them.",
            parameters=PARAMETERS,
            execute=execute,
            prompt_snippet="Keep a todo list for multi-step work",
            prompt_guidelines=["Use todo to plan work of more than three steps and tick items off as you go"],
        )
    )

    @tau.register_command("todos", description="Show the model's todo list")
    def show(args: str, ctx: ExtensionCommandContext) -> None:
        ctx.ui.notify(render(todos))
