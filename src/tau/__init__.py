"""tau: a minimal, hackable coding-agent harness for the terminal.

Subpackages are imported on demand so that ``import tau.ai`` stays fast; ``tau.create_agent_session``
(the SDK entry, see ``tau.runtime.sdk``) loads the runtime on first access.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tau._lazy import lazy_exports

if TYPE_CHECKING:
    from tau.runtime.sdk import create_agent_session

__version__ = "0.1.0"

__all__ = ["__version__", "create_agent_session"]

__getattr__, __dir__ = lazy_exports(globals(), {"create_agent_session": "runtime.sdk"})
