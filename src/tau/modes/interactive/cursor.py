"""The editor's drawn cursor (pi 1.6's default, ``showHardwareCursor: false``).

The terminal's own cursor is hidden while the editor has the keys and the character under the
cursor (a whole grapheme cluster), or a blank after the last one, is drawn in reverse video. The
terminal's cursor still moves to that cell, so input methods place their windows there.
``showHardwareCursor: true`` shows the terminal's cursor instead and draws none.
"""

from __future__ import annotations

from collections.abc import Callable

from prompt_toolkit.application.current import get_app
from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.formatted_text.utils import fragment_list_to_text
from prompt_toolkit.layout.processors import Processor, Transformation, TransformationInput
from wcwidth import iter_graphemes

__all__ = ["DrawnCursor"]

_REVERSE = " reverse"


class DrawnCursor(Processor):
    """Reverse video on the cursor's cluster of the focused buffer, while ``drawn()`` says so."""

    def __init__(self, drawn: Callable[[], bool]) -> None:
        self._drawn = drawn

    def apply_transformation(self, transformation_input: TransformationInput) -> Transformation:
        fragments = transformation_input.fragments
        document = transformation_input.document
        if (
            transformation_input.lineno != document.cursor_position_row
            or not self._drawn()
            or not get_app().layout.has_focus(transformation_input.buffer_control)
        ):
            return Transformation(fragments)
        column = document.cursor_position_col
        text = fragment_list_to_text(fragments)
        if len(text) != len(document.current_line):  # another processor changed the text first
            return Transformation(fragments)
        if column >= len(text):
            return Transformation([*fragments, (_REVERSE, " ")])
        start = 0
        for cluster in iter_graphemes(text):
            if start + len(cluster) > column:
                break
            start += len(cluster)
        end = start + len(cluster)
        styles = [(style, char) for style, chars, *_ in fragments for char in chars]
        shown: StyleAndTextTuples = [
            (style + _REVERSE if start <= index < end else style, char)
            for index, (style, char) in enumerate(styles)
        ]
        return Transformation(shown)
