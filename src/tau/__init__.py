"""tau: a minimal, hackable coding-agent harness for the terminal.

Subpackages are imported on demand so that ``import tau.ai`` stays fast; ``tau.create_agent_session``
(the SDK entry, see ``tau.runtime.sdk``) loads the runtime on first access.
"""

# No ``from __future__`` here: that import, like any other, would be looked up in the working folder
# before the next line takes it off the import path (see tau._import_path).
from tau._import_path import drop_working_folder

drop_working_folder()

# typing.TYPE_CHECKING without importing typing (type checkers take the name for it): ``tau --version``
# loads neither typing nor re (a quarter of its start).
TYPE_CHECKING = False

from tau._lazy import lazy_exports  # noqa: E402 - after the working folder is off the import path

if TYPE_CHECKING:
    from tau.runtime.sdk import create_agent_session

__version__ = "0.1.0"

__all__ = ["__version__", "create_agent_session"]

__getattr__, __dir__ = lazy_exports(globals(), {"create_agent_session": "runtime.sdk"})
