"""The slash commands an ACP client may offer: extension commands, prompt templates and skills
(what a prompt starting with ``/`` runs), as in RPC's ``get_commands``."""

from __future__ import annotations

from tau.ai.types import JsonObject
from tau.runtime.agent_session import AgentSession

__all__ = ["available_commands"]


def available_commands(session: AgentSession) -> JsonObject:
    commands: list[JsonObject] = []
    runner = session.extension_runner
    for name, registered in (runner.commands if runner is not None else {}).items():
        commands.append({"name": name, "description": registered.description or name})
    loader = session.services.resource_loader
    for template in loader.prompt_templates:
        commands.append({"name": template.name, "description": template.description or "prompt template"})
    for skill in loader.skills:
        commands.append({"name": f"skill:{skill.name}", "description": skill.description or "skill"})
    return {"sessionUpdate": "available_commands_update", "availableCommands": commands}
