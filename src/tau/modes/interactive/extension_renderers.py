"""What extensions change in how the chat is drawn: their Markdown transformers
(``tau.register_markdown_transformer``), entry renderers (``tau.register_entry_renderer``) and tool
renderer resolvers (``tau.register_tool_renderer``), read from the session's runner at each use
(a reload brings other extensions)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from tau.session.entries import CustomEntry

if TYPE_CHECKING:
    from tau.extensions.runner import ExtensionRunner
    from tau.runtime.agent_session import AgentSession

__all__ = ["ExtensionRenderers"]


class ExtensionRenderers:
    """The chat's view of the extensions' renderers, for ``session()``'s runner."""

    def __init__(self, session: Callable[[], AgentSession]) -> None:
        self._session = session

    def _runner(self) -> ExtensionRunner | None:
        return self._session().extension_runner

    def markdown_hook(self) -> Callable[[str, str, bool, int], str] | None:
        """The hook a ``BlockRenderer`` applies to Markdown, or ``None`` while no extension has a
        transformer (the chat then streams replies piece by piece)."""
        runner = self._runner()
        if runner is None or not runner.has_markdown_transformers:
            return None
        return self._transform

    def _transform(self, markdown: str, surface: str, streaming: bool, width: int) -> str:
        runner = self._runner()
        if runner is None:
            return markdown
        from tau.extensions.types import MarkdownContext

        context = MarkdownContext(surface, is_streaming=streaming, available_width=width)  # type: ignore[arg-type]
        return runner.transform_markdown(markdown, context)

    def tool_renderer(self, name: str, base: Callable[[str], Any]) -> Any:
        """What draws calls of ``name``: the resolvers' choice over ``base(name)`` (its definition)."""
        runner = self._runner()
        if runner is None:
            return base(name)
        return runner.resolve_tool_renderer(name, lambda: base(name))

    def entry_renderer(self, custom_type: str) -> Any:
        runner = self._runner()
        return runner.entry_renderer(custom_type) if runner is not None else None

    def branch_entries(self) -> list[CustomEntry]:
        """The ``custom`` entries of the current branch that an extension draws."""
        runner = self._runner()
        if runner is None or not runner.registry.entry_renderers():
            return []
        manager = self._session().session_manager
        return [e for e in manager.get_branch() if isinstance(e, CustomEntry)]
