"""``/llama`` where the llama.cpp extension is not loaded: the command is always there, as in pi 1.6.

Outside the terminal UI the extension loads only when a router is configured (its start-up costs
otherwise buy nothing: ``/llama`` is a dialog of the terminal UI), so the RPC and print modes list
``/llama`` and answer it themselves with the line pi's extension gives there.
"""

from __future__ import annotations

from collections.abc import Collection

__all__ = ["LLAMA_COMMAND", "LLAMA_DESCRIPTION", "LLAMA_SOURCE_PATH", "NOT_HERE", "answered_by_mode"]

LLAMA_COMMAND = "llama"
LLAMA_DESCRIPTION = "Manage llama.cpp router models"
LLAMA_SOURCE_PATH = "builtin:llama.cpp"
NOT_HERE = "/llama is available in interactive mode"
"""What ``/llama`` says (a warning) outside the terminal UI, as pi's does."""


def answered_by_mode(text: str, extension_commands: Collection[str]) -> bool:
    """Whether ``text`` is ``/llama`` (with or without arguments) while no extension registered it."""
    invoked = text == "/llama" or text.startswith("/llama ")
    return invoked and LLAMA_COMMAND not in extension_commands
