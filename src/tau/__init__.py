"""tau: a minimal, hackable coding-agent harness for the terminal.

Subpackages are imported on demand so that ``import tau.ai`` stays fast; ``tau.create_agent_session``
(the SDK entry, see ``tau.runtime.sdk``) loads the runtime on first access.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tau.runtime.sdk import create_agent_session

__version__ = "0.1.0"

__all__ = ["__version__", "create_agent_session"]


def __getattr__(name: str) -> Any:
    if name == "create_agent_session":
        from tau.runtime.sdk import create_agent_session

        return create_agent_session
    raise AttributeError(f"module 'tau' has no attribute {name!r}")
