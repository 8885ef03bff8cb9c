"""The colour values of pi's theme files, as ``#rrggbb`` (or rich's ``color(N)`` / ``default``).

pi writes colours as ``#rgb`` / ``#rrggbb``, ``oklch(L% C H)``, ``okhsl(H S% L%)``, a 256-colour
index, or ``""`` for the terminal's default. OKLCH and OKHSL are Björn Ottosson's colour spaces
(https://bottosson.github.io/posts/colorpicker/); OKHSL keeps every value inside sRGB, OKLCH is
clipped to it here.
"""

from __future__ import annotations

import math
import re

from tau.errors import TauError

__all__ = ["ColorError", "to_rich_color"]

_HEX = re.compile(r"^#([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$")
_FUNCTION = re.compile(r"^(oklch|okhsl)\(\s*([^)]*?)\s*\)$", re.IGNORECASE)


class ColorError(TauError, ValueError):
    """A value that is not one of pi's colour forms."""


def to_rich_color(value: object) -> str:
    """One resolved colour value (no variable names left) as a rich colour."""
    if isinstance(value, bool):
        raise ColorError(f"not a colour: {value!r}")
    if isinstance(value, int):
        if 0 <= value <= 255:
            return f"color({value})"
        raise ColorError(f"a palette index must be 0-255, not {value}")
    if not isinstance(value, str):
        raise ColorError(f"not a colour: {value!r}")
    text = value.strip()
    if text == "":
        return "default"
    if match := _HEX.match(text):
        digits = match.group(1)
        return "#" + ("".join(c * 2 for c in digits) if len(digits) == 3 else digits).lower()
    if match := _FUNCTION.match(text):
        parts = [p for p in re.split(r"[\s,/]+", match.group(2)) if p]
        if len(parts) != 3:
            raise ColorError(f"{text}: needs three values")
        if match.group(1).lower() == "oklch":
            lightness, chroma, hue = _number(parts[0], 1.0), _number(parts[1], 0.4), _number(parts[2], 1.0)
            rgb = _oklch_to_srgb(min(max(lightness, 0.0), 1.0), max(chroma, 0.0), math.radians(hue))
        else:
            hue, saturation, lightness = (
                _number(parts[0], 1.0),
                _number(parts[1], 1.0),
                _number(parts[2], 1.0),
            )
            rgb = _okhsl_to_srgb(hue / 360 % 1.0, saturation, lightness)
        return "#" + "".join(f"{round(min(max(c, 0.0), 1.0) * 255):02x}" for c in rgb)
    raise ColorError(f"not a colour: {text!r}")


def _number(text: str, percent_of: float) -> float:
    """``text`` as a number; ``N%`` is that share of ``percent_of`` (a hue may end in ``deg``)."""
    try:
        if text.endswith("%"):
            return float(text[:-1]) / 100 * percent_of
        return float(text.removesuffix("deg"))
    except ValueError:
        raise ColorError(f"not a number: {text!r}") from None


def _srgb_transfer(x: float) -> float:
    x = min(max(x, 0.0), 1.0)
    return 12.92 * x if x <= 0.0031308 else 1.055 * x ** (1 / 2.4) - 0.055


def _oklab_to_linear(lightness: float, a: float, b: float) -> tuple[float, float, float]:
    l_ = lightness + 0.3963377774 * a + 0.2158037573 * b
    m_ = lightness - 0.1055613458 * a - 0.0638541728 * b
    s_ = lightness - 0.0894841775 * a - 1.2914855480 * b
    lc, mc, sc = l_**3, m_**3, s_**3
    return (
        4.0767416621 * lc - 3.3077115913 * mc + 0.2309699292 * sc,
        -1.2684380046 * lc + 2.6097574011 * mc - 0.3413193965 * sc,
        -0.0041960863 * lc - 0.7034186147 * mc + 1.7076147010 * sc,
    )


def _oklab_to_srgb(lightness: float, a: float, b: float) -> tuple[float, float, float]:
    r, g, b_ = _oklab_to_linear(lightness, a, b)
    return _srgb_transfer(r), _srgb_transfer(g), _srgb_transfer(b_)


def _oklch_to_srgb(lightness: float, chroma: float, hue: float) -> tuple[float, float, float]:
    """Out of sRGB, the chroma is lowered (lightness and hue kept) until the colour fits."""
    a, b = math.cos(hue), math.sin(hue)

    def fits(c: float) -> bool:
        return all(-1e-6 <= x <= 1 + 1e-6 for x in _oklab_to_linear(lightness, c * a, c * b))

    if not fits(chroma):
        low, high = 0.0, chroma
        for _ in range(30):
            middle = (low + high) / 2
            low, high = (middle, high) if fits(middle) else (low, middle)
        chroma = low
    return _oklab_to_srgb(lightness, chroma * a, chroma * b)


# -- OKHSL (after Ottosson's reference implementation) ------------------------------------------

_K1, _K2 = 0.206, 0.03
_K3 = (1 + _K1) / (1 + _K2)
_LMS = ((0.3963377774, 0.2158037573), (-0.1055613458, -0.0638541728), (-0.0894841775, -1.2914855480))
_RGB_ROWS = (
    (4.0767416621, -3.3077115913, 0.2309699292),
    (-1.2684380046, 2.6097574011, -0.3413193965),
    (-0.0041960863, -0.7034186147, 1.7076147010),
)


def _toe_inv(x: float) -> float:
    return (x * x + _K1 * x) / (_K3 * (x + _K2))


def _max_saturation(a: float, b: float) -> float:
    """The saturation where one sRGB channel of hue ``(a, b)`` reaches zero."""
    if -1.88170328 * a - 0.80936493 * b > 1:
        k, w = (1.19086277, 1.76576728, 0.59662641, 0.75515197, 0.56771245), _RGB_ROWS[0]
    elif 1.81444104 * a - 1.19445276 * b > 1:
        k, w = (0.73956515, -0.45954404, 0.08285427, 0.12541070, 0.14503204), _RGB_ROWS[1]
    else:
        k, w = (1.35733652, -0.00915799, -1.15130210, -0.50559606, 0.00692167), _RGB_ROWS[2]
    saturation = k[0] + k[1] * a + k[2] * b + k[3] * a * a + k[4] * a * b
    ks = [row[0] * a + row[1] * b for row in _LMS]
    cone = [1 + saturation * kx for kx in ks]
    f = sum(wi * c**3 for wi, c in zip(w, cone, strict=True))
    f1 = sum(wi * 3 * kx * c * c for wi, kx, c in zip(w, ks, cone, strict=True))
    f2 = sum(wi * 6 * kx * kx * c for wi, kx, c in zip(w, ks, cone, strict=True))
    return saturation - f * f1 / (f1 * f1 - 0.5 * f * f2)


def _cusp(a: float, b: float) -> tuple[float, float]:
    saturation = _max_saturation(a, b)
    rgb = _oklab_to_linear(1, saturation * a, saturation * b)
    lightness = (1 / max(rgb)) ** (1 / 3)
    return lightness, lightness * saturation


def _gamut_intersection(
    a: float, b: float, l1: float, c1: float, l0: float, cusp: tuple[float, float]
) -> float:
    l_cusp, c_cusp = cusp
    if (l1 - l0) * c_cusp - (l_cusp - l0) * c1 <= 0:
        return c_cusp * l0 / (c1 * l_cusp + c_cusp * (l0 - l1))
    t = c_cusp * (l0 - 1) / (c1 * (l_cusp - 1) + c_cusp * (l0 - l1))
    dl, dc = l1 - l0, c1
    ks = [row[0] * a + row[1] * b for row in _LMS]
    d = [dl + dc * kx for kx in ks]
    lightness, chroma = l0 * (1 - t) + t * l1, t * c1
    cone = [lightness + chroma * kx for kx in ks]
    lms = [c**3 for c in cone]
    lms_dt = [3 * dx * c * c for dx, c in zip(d, cone, strict=True)]
    lms_dt2 = [6 * dx * dx * c for dx, c in zip(d, cone, strict=True)]
    steps = []
    for row in _RGB_ROWS:
        value = sum(w * x for w, x in zip(row, lms, strict=True)) - 1
        first = sum(w * x for w, x in zip(row, lms_dt, strict=True))
        second = sum(w * x for w, x in zip(row, lms_dt2, strict=True))
        u = first / (first * first - 0.5 * value * second)
        steps.append(-value * u if u >= 0 else math.inf)
    return t + min(steps)


def _okhsl_to_srgb(hue: float, saturation: float, lightness: float) -> tuple[float, float, float]:
    if lightness >= 1:
        return 1.0, 1.0, 1.0
    if lightness <= 0:
        return 0.0, 0.0, 0.0
    a, b = math.cos(2 * math.pi * hue), math.sin(2 * math.pi * hue)
    big_l = _toe_inv(lightness)
    cusp = _cusp(a, b)
    c_max = _gamut_intersection(a, b, big_l, 1, big_l, cusp)
    s_max, t_max = cusp[1] / cusp[0], cusp[1] / (1 - cusp[0])
    s_mid = 0.11516993 + 1 / (
        7.44778970
        + 4.15901240 * b
        + a
        * (
            -2.19557347
            + 1.75198401 * b
            + a * (-2.13704948 - 10.02301043 * b + a * (-4.24894561 + 5.38770819 * b + 4.69891013 * a))
        )
    )
    t_mid = 0.11239642 + 1 / (
        1.61320320
        - 0.68124379 * b
        + a
        * (
            0.40370612
            + 0.90148123 * b
            + a * (-0.27087943 + 0.61223990 * b + a * (0.00299215 - 0.45399568 * b - 0.14661872 * a))
        )
    )
    k = c_max / min(big_l * s_max, (1 - big_l) * t_max)
    c_a, c_b = big_l * s_mid, (1 - big_l) * t_mid
    c_mid = 0.9 * k * math.sqrt(math.sqrt(1 / (1 / c_a**4 + 1 / c_b**4)))
    c_a, c_b = big_l * 0.4, (1 - big_l) * 0.8
    c_0 = math.sqrt(1 / (1 / c_a**2 + 1 / c_b**2))
    mid = 0.8
    if saturation < mid:
        t = saturation / mid
        k1 = mid * c_0
        chroma = t * k1 / (1 - (1 - k1 / c_mid) * t)
    else:
        t = (saturation - mid) / (1 - mid)
        k1 = (1 - mid) * c_mid * c_mid / (mid * mid) / c_0
        chroma = c_mid + t * k1 / (1 - (1 - k1 / (c_max - c_mid)) * t)
    return _oklab_to_srgb(big_l, chroma * a, chroma * b)
