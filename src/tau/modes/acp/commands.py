"""The slash commands an ACP client may offer: extension commands, prompt templates and skills
(what a prompt starting with ``/`` runs), as in RPC's ``get_commands``."""

from __future__ import annotations

from acp.schema import AvailableCommand, AvailableCommandsUpdate

from tau.runtime.agent_session import AgentSession

__all__ = ["available_commands"]


def available_commands(session: AgentSession) -> AvailableCommandsUpdate:
    commands: list[AvailableCommand] = []
    runner = session.extension_runner
    for name, registered in (runner.commands if runner is not None else {}).items():
        commands.append(AvailableCommand(name=name, description=registered.description or name))
    loader = session.services.resource_loader
    for template in loader.prompt_templates:
        commands.append(
            AvailableCommand(name=template.name, description=template.description or "prompt template")
        )
    for skill in loader.skills:
        commands.append(
            AvailableCommand(name=f"skill:{skill.name}", description=skill.description or "skill")
        )
    return AvailableCommandsUpdate(session_update="available_commands_update", available_commands=commands)
