"""The ``system`` theme's colours derived from the terminal's own, as pi 1.6 derives them.

tau asks the terminal for its foreground (OSC 10), background (OSC 11) and 16 ANSI colours (OSC 4).
Each of pi's colour tokens belongs to a family: a hue, a range of saturation and the ANSI slot whose
colour gives the hue when the terminal reports its palette. Its lightness comes from contrast rules:
on each surface it is drawn on (the background, a panel) it needs the lightness a level's curve
gives for that surface's lightness. Colours are built in OKHSL (``oklab``). Body text keeps 4.5:1
(WCAG) on its surfaces and takes the terminal's own foreground where that is strong enough.

Three cases, as pi: background and palette (the palette's hues, placed for the background),
background only (the families' own hues), nothing (``derive`` answers ``None``: the theme keeps
the ANSI colours, which the terminal draws itself). The level curves and families are pi's design
data (its "system and light/dark" theme review), so the colours are pi's colours.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from msgspec import Struct

from tau.modes.interactive.render.oklab import (
    RGB,
    okhsl_lightness,
    okhsl_to_rgb,
    oklab_lightness,
    oklch_to_rgb,
    rgb_to_okhsl,
    rgb_to_oklch,
)
from tau.modes.interactive.render.theme import Theme

__all__ = [
    "DerivedColours",
    "appearance",
    "border_colours",
    "derive",
    "derived_theme",
    "frame_style",
    "parse_osc_colour",
    "wcag_contrast",
]


class _Family(Struct, frozen=True):
    hue: float
    low: float
    """Saturation at black and white."""
    high: float
    """Saturation at mid lightness."""
    slot: int
    """The ANSI colour whose hue the family takes from a reported palette."""


_FAMILIES = {
    "neutral": _Family(231.49, 0.02, 0.08, 8),
    "blue": _Family(231.49, 0.1, 0.68, 4),
    "green": _Family(158.68, 0.1, 0.76, 2),
    "red": _Family(20, 0.1, 0.92, 1),
    "yellow": _Family(82.36, 0.5, 1, 3),
    "orange": _Family(52, 0.12, 0.85, 3),
    "violet": _Family(295, 0.2, 0.6, 5),
    "calamine": _Family(202.43, 0.1, 0.74, 6),
    "thinkingSlate": _Family(231.49, 0.08, 0.2, 4),
    "thinkingBlue": _Family(231.49, 0.2, 0.45, 4),
    "thinkingPeriwinkle": _Family(263.25, 0.3, 0.6, 6),
    "thinkingViolet": _Family(295, 0.4, 0.75, 5),
    "thinkingMagenta": _Family(337.5, 0.5, 0.85, 13),
    "thinkingRed": _Family(20, 0.95, 1, 1),
}

_NEUTRAL_TOKENS = [
    "toolPendingBg",
    "text",
    "userMessageText",
    "customMessageText",
    "toolTitle",
    "syntaxOperator",
    "syntaxPunctuation",
    "muted",
    "dim",
    "thinkingText",
    "toolOutput",
    "mdLinkUrl",
    "mdQuote",
    "mdQuoteBorder",
    "mdHr",
    "mdCodeBlockBorder",
    "toolDiffContext",
    "syntaxComment",
    "scrollbarTrack",
    "scrollbarThumb",
    "searchMatchText",
    "borderMuted",
    "thinkingOff",
]
_FAMILY_OF: dict[str, str] = {
    **dict.fromkeys(_NEUTRAL_TOKENS, "neutral"),
    **dict.fromkeys(["selectedBg", "userMessageBg", "border", "mdLink", "syntaxKeyword"], "blue"),
    **dict.fromkeys(["searchMatchBg", "syntaxString"], "orange"),
    **dict.fromkeys(
        [
            "customMessageBg",
            "accent",
            "borderAccent",
            "customMessageLabel",
            "mdCode",
            "mdListBullet",
            "syntaxType",
        ],
        "violet",
    ),
    **dict.fromkeys(
        ["toolSuccessBg", "success", "mdCodeBlock", "toolDiffAdded", "bashMode", "syntaxNumber"], "green"
    ),
    **dict.fromkeys(["toolErrorBg", "error", "toolDiffRemoved"], "red"),
    **dict.fromkeys(["warning", "mdHeading", "syntaxFunction"], "yellow"),
    "syntaxVariable": "calamine",
    "thinkingMinimal": "thinkingSlate",
    "thinkingLow": "thinkingBlue",
    "thinkingMedium": "thinkingPeriwinkle",
    "thinkingHigh": "thinkingViolet",
    "thinkingXhigh": "thinkingMagenta",
    "thinkingMax": "thinkingRed",
}
_SLOT_OF = {"syntaxString": 2, "syntaxNumber": 5, "searchMatchBg": 3}
"""Tokens that would share a hue with a similar token take another ANSI colour."""


class _Curve(Struct, frozen=True):
    coefficients: tuple[float, ...]
    """Of a polynomial in the surface's OKLab lightness, lowest power first."""
    low: float
    high: float
    """The surface lightness the level can be reached on."""


_LEVELS: dict[str, dict[str, _Curve]] = {
    "panel": {
        "dark": _Curve((0.29131, -0.39746, 2.33185, -0.85524, -1.2076, 0.86276), 0, 0.979),
        "light": _Curve((-3.74073, 27.94549, -78.44258, 112.6798, -79.60015, 22.11277), 0.348, 1),
    },
    "track": {
        "dark": _Curve((0.39028, -0.23015, 0.83573, 2.43829, -4.38292, 2.01582), 0, 0.946),
        "light": _Curve((-5.24921, 38.37322, -107.28833, 152.10005, -106.17127, 29.18061), 0.368, 1),
    },
    "thinking0": {
        "dark": _Curve((0.52988, -0.05809, -0.30924, 4.63567, -6.52933, 2.89108), 0, 0.873),
        "light": _Curve((-28.27749, 182.85284, -469.62416, 603.15916, -384.59976, 97.35147), 0.51, 1),
    },
    "thinking1": {
        "dark": _Curve((0.55278, -0.03667, -0.45659, 4.95347, -6.90265, 3.0706), 0, 0.858),
        "light": _Curve((-37.10484, 235.86282, -596.62344, 754.3633, -474.00763, 118.3551), 0.535, 1),
    },
    "thinking2": {
        "dark": _Curve((0.57486, -0.01765, -0.58987, 5.25227, -7.27175, 3.25532), 0, 0.842),
        "light": _Curve((-59.89653, 377.05024, -945.07843, 1182.03145, -734.96375, 181.68658), 0.556, 1),
    },
    "thinking3": {
        "dark": _Curve((0.59621, -0.00062, -0.71148, 5.53588, -7.6392, 3.44606), 0, 0.827),
        "light": _Curve((-72.07122, 445.84082, -1099.57352, 1353.88793, -829.53392, 202.26164), 0.58, 1),
    },
    "thinking4": {
        "dark": _Curve((0.61691, 0.01462, -0.82288, 5.80651, -8.00641, 3.64333), 0, 0.811),
        "light": _Curve((-110.14338, 674.21488, -1645.75941, 2004.32367, -1215.15899, 293.3183), 0.6, 1),
    },
    "thinking5": {
        "dark": _Curve((0.63702, 0.02826, -0.92498, 6.06465, -8.37246, 3.84651), 0, 0.795),
        "light": _Curve((-175.47701, 1063.54495, -2570.70594, 3098.80776, -1860.15527, 444.76392), 0.62, 1),
    },
    "thinking6": {
        "dark": _Curve((0.65658, 0.04044, -1.01835, 6.30989, -8.73529, 4.05439), 0, 0.779),
        "light": _Curve((-183.81712, 1094.70055, -2602.68539, 3088.71276, -1826.91131, 430.75931), 0.643, 1),
    },
    "subtle": {
        "dark": _Curve((0.56762, -0.02475, -0.5383, 5.12628, -7.10931, 3.17324), 0, 0.848),
        "light": _Curve((-232.85459, 1376.54473, -3249.11801, 3827.91186, -2248.29472, 526.55751), 0.657, 1),
    },
    "thumb": {
        "dark": _Curve((0.60323, 0.00278, -0.73328, 5.57157, -7.68067, 3.46933), 0, 0.823),
        "light": _Curve((-82.89897, 511.01355, -1255.98095, 1540.76821, -940.68087, 228.58523), 0.586, 1),
    },
    "readable": {
        "dark": _Curve((0.66937, 0.04704, -1.06871, 6.43941, -8.9332, 4.17229), 0, 0.77),
        "light": _Curve(
            (-1554.52576, 8733.56817, -19604.93507, 21977.72696, -12300.99599, 2749.81288), 0.751, 1
        ),
    },
    "emphasis": {
        "dark": _Curve((0.7303, 0.07695, -1.31626, 7.1681, -10.14436, 4.92846), 0, 0.712),
        "light": _Curve(
            (-4948.31942, 26870.91986, -58334.48399, 63280.17197, -34298.01053, 7430.30146), 0.811, 1
        ),
    },
    "textOnPanel": {
        "dark": _Curve((0.86713, 0.05232, -0.89428, 4.79014, -5.5432, 1.75023), 0, 0.542),
        "light": _Curve(
            (-8570.89457, 43954.60805, -90084.00702, 92220.6791, -47152.15802, 9632.27113), 0.867, 1
        ),
    },
    "text": {
        "dark": _Curve((0.89242, 0.02311, -0.44862, 2.34417, -0.06084, -2.63844), 0, 0.5),
        "light": _Curve(
            (-2004.67048, 6664.47299, -6060.70202, -1792.61209, 5133.82359, -1939.85583), 0.894, 1
        ),
    },
}

_TOOL_PANELS = ("toolPendingBg", "toolSuccessBg", "toolErrorBg")
_MESSAGE_PANELS = ("userMessageBg", "customMessageBg")
_PANELS = ("userMessageBg", "toolPendingBg", "toolSuccessBg", "toolErrorBg", "selectedBg", "searchMatchBg",
           "customMessageBg")  # fmt: skip
_THINKING = ("thinkingOff", "thinkingMinimal", "thinkingLow", "thinkingMedium", "thinkingHigh",
             "thinkingXhigh", "thinkingMax")  # fmt: skip
_BG = "background"
_CODE_SURFACES = (_BG, *_MESSAGE_PANELS, *_TOOL_PANELS)


def _rules() -> list[tuple[str, tuple[str, ...], str]]:
    """(token, the surfaces it is drawn on, the level it needs on each)."""
    rules: list[tuple[str, tuple[str, ...], str]] = [(panel, (_BG,), "panel") for panel in _PANELS]
    rules += [
        ("text", (_BG,), "text"),
        ("text", ("selectedBg",), "textOnPanel"),
        ("userMessageText", ("userMessageBg",), "textOnPanel"),
        ("toolTitle", _TOOL_PANELS, "textOnPanel"),
    ]
    rules += [
        (t, (_BG, "selectedBg", *_TOOL_PANELS), "readable") for t in ("accent", "success", "error", "warning")
    ]
    rules += [
        ("muted", (_BG, "selectedBg", "customMessageBg", *_TOOL_PANELS), "readable"),
        ("dim", (_BG, "selectedBg", "customMessageBg", *_TOOL_PANELS), "subtle"),
        ("thinkingText", (_BG,), "readable"),
        ("customMessageText", ("customMessageBg", *_TOOL_PANELS), "readable"),
        ("customMessageLabel", (_BG, "customMessageBg", "selectedBg", *_TOOL_PANELS), "readable"),
        ("toolOutput", (_BG, *_TOOL_PANELS), "readable"),
    ]
    markdown = ("mdHeading", "mdLink", "mdLinkUrl", "mdCode", "mdQuote", "mdCodeBlockBorder", "mdListBullet")
    rules += [(t, (_BG, *_MESSAGE_PANELS), "readable") for t in markdown]
    rules += [("mdCodeBlock", _CODE_SURFACES, "readable")]
    rules += [
        (t, (_BG, *_TOOL_PANELS), "readable") for t in ("toolDiffAdded", "toolDiffRemoved", "toolDiffContext")
    ]
    syntax = ("syntaxComment", "syntaxKeyword", "syntaxFunction", "syntaxVariable", "syntaxString",
              "syntaxNumber", "syntaxType", "syntaxOperator", "syntaxPunctuation")  # fmt: skip
    rules += [(t, _CODE_SURFACES, "readable") for t in syntax]
    rules += [("searchMatchText", ("searchMatchBg",), "readable")]
    rules += [(t, (_BG,), "readable") for t in ("bashMode", "border", "borderAccent")]
    rules += [("borderMuted", (_BG,), "subtle")]
    rules += [(t, _CODE_SURFACES, "readable") for t in ("mdQuoteBorder", "mdHr")]
    rules += [("scrollbarTrack", (_BG,), "track"), ("scrollbarThumb", ("scrollbarTrack",), "thumb")]
    rules += [(token, (_BG,), f"thinking{index}") for index, token in enumerate(_THINKING)]
    return rules


_RULES = _rules()


def _solve_order() -> list[str]:
    """Tokens with every surface before the tokens drawn on it."""
    order: list[str] = []

    def visit(token: str) -> None:
        if token in order:
            return
        for ruled, surfaces, _ in _RULES:
            if ruled == token:
                for surface in surfaces:
                    if surface != _BG:
                        visit(surface)
        order.append(token)

    for token, _, _ in _RULES:
        visit(token)
    return order


_ORDER = _solve_order()
_READABLE_FLOOR = {"dark": "readable", "light": "subtle"}
"""Relaxing first pulls the levels stronger than this one toward it."""
_FOREGROUND_LEVEL = "emphasis"
_FOREGROUND_TOKENS = ("text", "userMessageText", "toolTitle")
_TEXT_CONTRAST = 4.5
_WHITE: RGB = (255, 255, 255)
_BLACK: RGB = (0, 0, 0)


class DerivedColours(Struct, frozen=True):
    colours: dict[str, str]
    """pi's token name → ``#rrggbb``, or ``""``: the terminal's default foreground."""
    appearance: str
    """``dark`` or ``light``."""


def parse_osc_colour(value: str) -> RGB | None:
    """The colour of an OSC 4/10/11 reply (``rgb:RRRR/GGGG/BBBB``, 1 to 4 hex digits a channel, or
    ``#rrggbb``); ``None`` for anything else."""
    value = value.strip()
    if value.startswith("#") and len(value) == 7:
        try:
            return (int(value[1:3], 16), int(value[3:5], 16), int(value[5:7], 16))
        except ValueError:
            return None
    if not value.startswith(("rgb:", "rgba:")):
        return None
    channels = value.split(":", 1)[1].split("/")[:3]
    if len(channels) != 3 or not all(1 <= len(c) <= 4 for c in channels):
        return None
    try:
        red, green, blue = (int(c, 16) / (16 ** len(c) - 1) * 255 for c in channels)
    except ValueError:
        return None
    return (round(red), round(green), round(blue))


def _luminance(rgb: RGB) -> float:
    def linear(channel: float) -> float:
        value = channel / 255
        return value / 12.92 if value <= 0.04045 else ((value + 0.055) / 1.055) ** 2.4

    return 0.2126 * linear(rgb[0]) + 0.7152 * linear(rgb[1]) + 0.0722 * linear(rgb[2])


def wcag_contrast(first: RGB, second: RGB) -> float:
    """WCAG 2's contrast ratio, 1 to 21."""
    a, b = _luminance(first), _luminance(second)
    return (max(a, b) + 0.05) / (min(a, b) + 0.05)


def appearance(background: RGB, foreground: RGB | None) -> str:
    """``dark`` or ``light``: the way the terminal's own text goes, when text can be readable that
    way, else the side (white or black text) with more contrast on the background."""
    white, black = wcag_contrast(_WHITE, background), wcag_contrast(_BLACK, background)
    if foreground is not None:
        text_l, back_l = oklab_lightness(foreground), oklab_lightness(background)
        if abs(text_l - back_l) > 0.05:
            side = "dark" if text_l > back_l else "light"
            if (white if side == "dark" else black) >= _TEXT_CONTRAST:
                return side
    return "dark" if white >= black else "light"


def _hex(rgb: RGB) -> str:
    return "#" + "".join(f"{round(channel):02x}" for channel in rgb)


def _bell(lightness: float) -> float:
    """1 at mid lightness, 0 at black and white (a Gaussian, sigma 0.25, set to 0 at the ends)."""

    def gaussian(x: float) -> float:
        return math.exp(-((x - 0.5) ** 2) / (2 * 0.25**2))

    return (gaussian(lightness) - gaussian(0)) / (1 - gaussian(0))


def _curve(family: _Family, lightness: float) -> float:
    floor = family.low / family.high if family.high > 0 else 1
    return floor + (1 - floor) * _bell(lightness)


def _target(level: str, side: str, surface_l: float) -> float | None:
    curve = _LEVELS[level][side]
    if not curve.low <= surface_l <= curve.high:
        return None
    return sum(c * surface_l**power for power, c in enumerate(curve.coefficients))


class _Source(Struct, frozen=True):
    hue: float
    saturation: float
    lightness: float
    chroma: float


def _source(rgb: RGB) -> _Source:
    hue, saturation, lightness = rgb_to_okhsl(rgb)
    return _Source(hue, saturation, lightness, rgb_to_oklch(rgb)[1])


def _anchored(source: _Source, family: _Family, lightness: float, saturation: float) -> RGB:
    """The source colour's hue at another OKHSL lightness: its saturation falls off toward black and
    white along the family's curve, and its OKLCH chroma never grows (a pastel stays pastel)."""
    anchor = _curve(family, source.lightness)
    falloff = min(1.0, _curve(family, lightness) / anchor) if anchor > 0 else 1.0
    colour = okhsl_to_rgb(source.hue, source.saturation * falloff * saturation, lightness)
    cap = source.chroma * falloff * saturation
    oklab_l, chroma, _ = rgb_to_oklch(colour)
    return colour if chroma <= cap else oklch_to_rgb(oklab_l, cap, source.hue)


def _with_text_contrast(colour: RGB, surfaces: Sequence[RGB], lighter: bool) -> RGB:
    """``colour`` moved toward white (or black) until it has 4.5:1 on every surface."""

    def meets(candidate: RGB) -> bool:
        return all(wcag_contrast(candidate, surface) >= _TEXT_CONTRAST for surface in surfaces)

    if meets(colour):
        return colour
    hue, saturation, lightness = rgb_to_okhsl(colour)

    def at(value: float) -> RGB:
        return okhsl_to_rgb(hue, saturation, value)

    extreme = 1.0 if lighter else 0.0
    if not meets(at(extreme)):
        return at(extreme)
    low, high = lightness, extreme
    for _ in range(20):
        middle = (low + high) / 2
        if meets(at(middle)):
            high = middle
        else:
            low = middle
    return at(high)


def _bisect(fits: Callable[[float], bool], low: float, high: float) -> float:
    """The last value from ``low`` toward ``high`` for which ``fits`` holds (20 halvings)."""
    for _ in range(20):
        middle = (low + high) / 2
        if fits(middle):
            low = middle
        else:
            high = middle
    return low


def derive(
    background: RGB | None,
    foreground: RGB | None = None,
    palette: Sequence[RGB] | None = None,
    saturation: float = 1.0,
) -> DerivedColours | None:
    """pi's ``system`` colours for what the terminal reported; ``None`` without a background."""
    if background is None:
        return None
    saturation = min(1.0, max(0.0, saturation))
    sources = [_source(colour) for colour in palette] if palette is not None and len(palette) == 16 else None
    side = appearance(background, foreground)
    lighter = side == "dark"
    extreme = 1.0 if lighter else 0.0
    background_l = oklab_lightness(background)

    def paint(token: str, oklab_l: float) -> RGB:
        lightness = okhsl_lightness(oklab_l)
        family = _FAMILIES[_FAMILY_OF[token]]
        if sources is None:
            chroma = (family.low + (family.high - family.low) * _bell(lightness)) * saturation
            return okhsl_to_rgb(family.hue, chroma, lightness)
        return _anchored(sources[_SLOT_OF.get(token, family.slot)], family, lightness, saturation)

    def target(level: str, surface_l: float, relax: float) -> float | None:
        reached = _target(level, side, surface_l)
        if reached is None and relax == 0:
            return None
        distance = (reached if reached is not None else extreme) - surface_l
        floor_l = _target(_READABLE_FLOOR[side], side, surface_l)
        floor = (floor_l if floor_l is not None else extreme) - surface_l
        if abs(distance) > abs(floor):
            distance -= (distance - floor) * min(relax, 1)
        return surface_l + distance * (1 - max(0.0, relax - 1))

    extreme_text = _WHITE if lighter else _BLACK

    def readable_on(colour: RGB) -> bool:
        return wcag_contrast(extreme_text, colour) >= _TEXT_CONTRAST

    def panel(token: str, oklab_l: float) -> RGB:
        """A panel no lighter (darker) than white (black) text stays readable on."""
        colour = paint(token, oklab_l)
        if readable_on(colour):
            return colour
        return paint(token, _bisect(lambda value: readable_on(paint(token, value)), background_l, oklab_l))

    def solve(relax: float) -> dict[str, RGB] | None:
        colours: dict[str, RGB] = {_BG: background}
        for token in _ORDER:
            targets: list[float] = []
            for ruled, surfaces, level in _RULES:
                if ruled != token:
                    continue
                for surface in surfaces:
                    value = target(level, oklab_lightness(colours.get(surface, background)), relax)
                    if value is None or not 0 <= value <= 1:
                        return None
                    targets.append(value)
            lightness = max(targets) if lighter else min(targets)
            colours[token] = panel(token, lightness) if token in _PANELS else paint(token, lightness)
        return colours

    relax = 0.0
    solved = solve(0)
    if solved is None:  # a mid-grey background cannot fit every level: relax as little as needed
        low, high = 0.0, 2.0
        solved = solve(high)
        for _ in range(20):
            middle = (low + high) / 2
            attempt = solve(middle)
            if attempt is not None:
                high, solved = middle, attempt
            else:
                low = middle
        relax = high
    found = solved or {}
    result = {token: _hex(found[token]) if token in found else "" for token in _FAMILY_OF}

    def surfaces_of(token: str) -> list[RGB]:
        return [found.get(s, background) for ruled, surfaces, _ in _RULES if ruled == token for s in surfaces]

    for token in _FOREGROUND_TOKENS:
        surfaces = surfaces_of(token)
        text = found.get(token)
        if foreground is not None:
            targets = [target(_FOREGROUND_LEVEL, oklab_lightness(s), relax) for s in surfaces]
            if all(t is not None and 0 <= t <= 1 for t in targets):
                needed = (
                    max(t for t in targets if t is not None)
                    if lighter
                    else min(t for t in targets if t is not None)
                )
                foreground_l = oklab_lightness(foreground)
                if foreground_l >= needed if lighter else foreground_l <= needed:
                    result[token] = ""  # the terminal's own foreground is strong enough
                    continue
                text = _anchored(
                    _source(foreground), _FAMILIES["neutral"], okhsl_lightness(needed), saturation
                )
        if text is not None:
            result[token] = _hex(_with_text_contrast(text, surfaces, lighter))
    return DerivedColours(colours=result, appearance=side)


def derived_theme(derived: DerivedColours, base: Theme) -> Theme:
    """``base`` (the ``system`` theme) with the derived colours; ``""`` keeps the terminal's default.
    Code keeps ``base``'s ANSI highlighting (the terminal's palette draws it)."""
    from msgspec.structs import replace

    c = derived.colours

    def fg(token: str, prefix: str = "") -> str:
        colour = c.get(token, "")
        return f"{prefix} {colour}".strip() if colour else (prefix or "default")

    def bg(token: str) -> str:
        return c.get(token, "") or "default"

    return replace(
        base,
        accent=fg("accent"),
        muted=fg("muted"),
        dim=fg("dim"),
        text=fg("text"),
        thinking=fg("thinkingText", "italic"),
        user_bg=bg("userMessageBg"),
        custom_bg=bg("customMessageBg"),
        custom_label=fg("customMessageLabel", "bold"),
        tool_title=fg("toolTitle", "bold"),
        tool_pending_bg=bg("toolPendingBg"),
        tool_success_bg=bg("toolSuccessBg"),
        tool_error_bg=bg("toolErrorBg"),
        tool_output=fg("toolOutput"),
        error=fg("error"),
        warning=fg("warning"),
        success=fg("success"),
        diff_added=fg("toolDiffAdded"),
        diff_removed=fg("toolDiffRemoved"),
        diff_context=fg("toolDiffContext"),
        bash_mode=fg("bashMode"),
        notice_info=fg("dim"),
        notice_warning=fg("warning"),
        notice_error=fg("error"),
        footer=fg("dim"),
        footer_warning=fg("warning"),
        footer_error=fg("error"),
        border_off=fg("thinkingOff"),
        border_minimal=fg("thinkingMinimal"),
        border_low=fg("thinkingLow"),
        border_medium=fg("thinkingMedium"),
        border_high=fg("thinkingHigh"),
        border_xhigh=fg("thinkingXhigh"),
        md_heading=fg("mdHeading", "bold"),
        md_link=fg("mdLink"),
        md_link_url=fg("mdLinkUrl"),
        md_code=fg("mdCode"),
        md_code_border=fg("mdCodeBlockBorder"),
        md_quote=fg("mdQuote", "italic"),
        md_bullet=fg("mdListBullet"),
        md_hr=fg("mdHr"),
    )


_LEVEL_TOKENS = {
    "off": "thinkingOff", "minimal": "thinkingMinimal", "low": "thinkingLow", "medium": "thinkingMedium",
    "high": "thinkingHigh", "xhigh": "thinkingXhigh", "max": "thinkingMax",
}  # fmt: skip


def border_colours(derived: DerivedColours) -> dict[str, str]:
    """The editor border's colour for each thinking level (prompt_toolkit colours), and ``bash``."""
    c = derived.colours
    borders = {level: c[token] or "default" for level, token in _LEVEL_TOKENS.items()}
    borders["bash"] = c["bashMode"] or "default"
    return borders


def frame_style(derived: DerivedColours) -> dict[str, str]:
    """The frame's prompt_toolkit styles (footer, status line, dialogs, search, scrollbar)."""
    c = derived.colours

    def fg(token: str, extra: str = "") -> str:
        return f"{c[token]} {extra}".strip() if c[token] else extra

    return {
        "footer": fg("text"),
        "footer.dim": fg("dim"),
        "footer.warning": fg("warning"),
        "footer.error": fg("error"),
        "status": fg("accent"),
        "status.error": fg("error"),
        "queue": fg("muted", "italic"),
        "dialog.hint": fg("dim"),
        "dialog.border": fg("border"),
        "bash": fg("bashMode"),
        "search.border": fg("border"),
        "search.hint": fg("dim"),
        "transcript.jump": fg("dim"),
        "scrollbar.track": fg("scrollbarTrack"),
        "scrollbar.thumb": fg("scrollbarThumb"),
    }
