"""A prompt section of the extension's own: the open tasks of ``TODO.md``, refreshed each run.

Dynamic context (task status, open files, a build's state) belongs in a named section rather
than in an edit of the whole system prompt: the model gets the section as ``<task_status>`` at
the end of the prompt, and when the text changes from one run to the next only the new section is
appended to the conversation, so everything sent before stays in the provider's prompt cache.
Leaving the section out (or setting it to ``""``) removes it the same way.

    tau -e examples/extensions/task_status_section.py
"""

from __future__ import annotations

from pathlib import Path

from tau.extensions import BeforeAgentStartEvent, ExtensionAPI, ExtensionContext

SECTION = "task_status"


def open_tasks(todo: Path) -> list[str]:
    """The unchecked ``- [ ]`` items of a Markdown task list."""
    try:
        lines = todo.read_text(encoding="utf-8").splitlines()
    except OSError:
        return []
    return [line.strip()[6:].strip() for line in lines if line.strip().startswith("- [ ]")]


def setup(tau: ExtensionAPI) -> None:
    @tau.on("before_agent_start")
    def status(event: BeforeAgentStartEvent, ctx: ExtensionContext) -> None:
        options = event.system_prompt_options
        if options is None:
            return
        tasks = open_tasks(Path(ctx.cwd) / "TODO.md")
        if tasks:
            lines = "\n".join(f"- {task}" for task in tasks)
            options.sections[SECTION] = f"Open tasks in TODO.md ({len(tasks)}):\n{lines}"
