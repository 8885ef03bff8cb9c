"""Extensions' tool renderers in the HTML export, as pi's export draws them: what a tool's
``render_call(args, theme)`` / ``render_result(result, options, theme)`` returns (text with colour
codes, or anything rich can print) becomes HTML with its colours, in place of the generic layout.
A renderer that raises, or returns nothing printable, leaves the generic layout."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["ExtensionToolHtml", "ToolRendererLookup"]

ToolRendererLookup = Callable[[str], Any]
"""``lookup(tool_name)``: what draws calls of that tool (``render_call`` / ``render_result``), or ``None``."""

_WIDTH = 100


class ExtensionToolHtml:
    """``theme``: what the renderers get as their theme (the terminal UI's, when it exports)."""

    def __init__(self, lookup: ToolRendererLookup, theme: Any = None) -> None:
        self._lookup = lookup
        self._theme = theme

    def call(self, name: str, arguments: Any) -> str | None:
        renderer = self._renderer(name)
        draw = getattr(renderer, "render_call", None)
        if not callable(draw):
            return None
        return _html(lambda: draw(arguments, self._theme))

    def result(self, name: str, result: Any) -> str | None:
        renderer = self._renderer(name)
        draw = getattr(renderer, "render_result", None)
        if not callable(draw):
            return None
        from tau.extensions.types import RenderOptions

        options = RenderOptions(expanded=True)
        return _html(lambda: draw(result, options, self._theme))

    def _renderer(self, name: str) -> Any:
        try:
            return self._lookup(name)
        except Exception:  # an extension must not stop the export
            return None


def _html(produce: Callable[[], Any]) -> str | None:
    from rich.console import Console
    from rich.protocol import is_renderable
    from rich.text import Text

    try:
        produced = produce()
        if isinstance(produced, str):
            produced = Text.from_ansi(produced)
        if produced is None or not is_renderable(produced):
            return None
        import io

        console = Console(record=True, width=_WIDTH, color_system="truecolor", file=io.StringIO())
        console.print(produced)
        html = console.export_html(inline_styles=True, code_format="{code}")
    except Exception:
        return None
    html = html.rstrip("\n")
    return f'<pre class="extension-render">{html}</pre>' if html.strip() else None
