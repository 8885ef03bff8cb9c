"""What every mode's launcher takes from the start-up, as one record.

The RPC, ACP and terminal launchers (and the runtime each builds) all need the command line, the
services start-up built, the agent folder, the model and thinking level chosen, the tools left out
and the run's trust decisions; ``Launch`` carries them, so a launcher's signature says only what is
its own (the session file, the protocol's stream, the cwd).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from msgspec import Struct

if TYPE_CHECKING:
    from tau.ai.types import Model, ThinkingLevelOrOff
    from tau.cli.args import Args
    from tau.config.project_trust import ProjectTrust
    from tau.runtime.services import AgentSessionServices
    from tau.runtime.tool_registry import NoTools

__all__ = ["Launch"]


class Launch(Struct, frozen=True):
    args: Args
    services: AgentSessionServices
    """The services start-up built (extensions loaded, models read) for the session's cwd."""
    agent_dir: str
    model: Model | None
    thinking: ThinkingLevelOrOff | None
    no_tools: NoTools | None
    trust: ProjectTrust
