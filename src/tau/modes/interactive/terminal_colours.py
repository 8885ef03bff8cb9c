"""The terminal's colours as it reports them (OSC 10 foreground, OSC 11 background, OSC 4 the 16
ANSI colours), and the ``system`` theme derived from them (``render.system_palette``, as pi 1.6).

Until the answers are in, or when the terminal gives none (it answers the DA1 sent after the
questions either way), the ``system`` theme keeps the ANSI colours the terminal draws itself;
answers that come late still apply, as in pi.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tau.modes.interactive.render.oklab import RGB
    from tau.modes.interactive.render.system_palette import DerivedColours
    from tau.modes.interactive.render.theme import Theme

__all__ = ["TerminalColours"]


class TerminalColours:
    def __init__(self) -> None:
        self.foreground: RGB | None = None
        self.background: RGB | None = None
        self.palette: dict[int, RGB] = {}
        self.derived: DerivedColours | None = None
        self._themes: dict[Theme, Theme] = {}
        self._borders: dict[str, str] | None = None

    def answer(self, number: int, value: str) -> None:
        """One answer: OSC ``number`` (10, 11, or 4 with ``value`` ``"index;colour"``)."""
        from tau.modes.interactive.render.system_palette import parse_osc_colour

        if number == 4:
            index, _, value = value.partition(";")
            colour = parse_osc_colour(value)
            if index.isdigit() and int(index) < 16 and colour is not None:
                self.palette[int(index)] = colour
        elif number in (10, 11) and (colour := parse_osc_colour(value)) is not None:
            if number == 10:
                self.foreground = colour
            else:
                self.background = colour

    def settle(self) -> bool:
        """Derive the colours from the answers so far; whether they changed."""
        from tau.modes.interactive.render.system_palette import derive

        palette = [self.palette[i] for i in range(16)] if len(self.palette) == 16 else None
        derived = derive(self.background, self.foreground, palette)
        if derived == self.derived:
            return False
        self.derived = derived
        self._themes.clear()
        self._borders = None
        return True

    def theme(self, base: Theme) -> Theme | None:
        """``base`` (the ``system`` theme) in the derived colours; ``None`` before there are any."""
        if self.derived is None:
            return None
        if base not in self._themes:
            from tau.modes.interactive.render.system_palette import derived_theme

            self._themes[base] = derived_theme(self.derived, base)
        return self._themes[base]

    def frame_style(self) -> dict[str, str]:
        """The frame's prompt_toolkit styles in the derived colours (none before there are any)."""
        if self.derived is None:
            return {}
        from tau.modes.interactive.render.system_palette import frame_style

        return frame_style(self.derived)

    def border_colours(self) -> dict[str, str] | None:
        """The editor border's colour per thinking level and for ``bash``, when derived."""
        if self.derived is None:
            return None
        if self._borders is None:  # asked at every frame: kept
            from tau.modes.interactive.render.system_palette import border_colours

            self._borders = border_colours(self.derived)
        return self._borders
