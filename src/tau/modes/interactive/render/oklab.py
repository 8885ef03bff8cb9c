"""Björn Ottosson's OKLab colour space and its OKLCH and OKHSL forms, for the ``system`` theme's
colours derived from the terminal's palette (``system_palette``).

Colours are ``(r, g, b)`` tuples on 0-255 (sRGB); those made here are whole numbers. Hues are in
degrees. OKHSL's saturation
is relative to the most chroma sRGB allows at a hue and lightness, and its lightness is OKLab's
with a "toe" that spaces dark shades as the eye sees them.
"""

from __future__ import annotations

import math

__all__ = [
    "RGB",
    "okhsl_lightness",
    "okhsl_to_rgb",
    "oklab_lightness",
    "oklch_to_rgb",
    "rgb_to_okhsl",
    "rgb_to_oklch",
]

RGB = tuple[float, float, float]
_TO_LMS = ((0.4122214708, 0.5363325363, 0.0514459929), (0.2119034982, 0.6806995451, 0.1073969566),
           (0.0883024619, 0.2817188376, 0.6299787005))  # fmt: skip
_LMS_TO_LAB = ((0.2104542553, 0.7936177850, -0.0040720468), (1.9779984951, -2.4285922050, 0.4505937099),
               (0.0259040371, 0.7827717662, -0.8086757660))  # fmt: skip
_LAB_TO_LMS = ((1.0, 0.3963377774, 0.2158037573), (1.0, -0.1055613458, -0.0638541728),
               (1.0, -0.0894841775, -1.2914855480))  # fmt: skip
_LMS_TO_RGB = ((4.0767416621, -3.3077115913, 0.2309699292), (-1.2684380046, 2.6097574011, -0.3413193965),
               (-0.0041960863, -0.7034186147, 1.7076147010))  # fmt: skip
_K1, _K2 = 0.206, 0.03
_K3 = (1 + _K1) / (1 + _K2)


def _dot(row: tuple[float, float, float], v: tuple[float, float, float]) -> float:
    return row[0] * v[0] + row[1] * v[1] + row[2] * v[2]


def _to_linear(channel: float) -> float:
    value = channel / 255
    return value / 12.92 if value <= 0.04045 else ((value + 0.055) / 1.055) ** 2.4


def _from_linear(value: float) -> float:
    encoded = 12.92 * value if value <= 0.0031308 else 1.055 * max(value, 0.0) ** (1 / 2.4) - 0.055
    return min(255.0, max(0.0, encoded * 255))


def _lab(rgb: RGB) -> tuple[float, float, float]:
    linear = (_to_linear(rgb[0]), _to_linear(rgb[1]), _to_linear(rgb[2]))
    lms = tuple(math.copysign(abs(_dot(row, linear)) ** (1 / 3), _dot(row, linear)) for row in _TO_LMS)
    return (_dot(_LMS_TO_LAB[0], lms), _dot(_LMS_TO_LAB[1], lms), _dot(_LMS_TO_LAB[2], lms))  # type: ignore[arg-type]


def _linear_from_lab(lightness: float, a: float, b: float) -> tuple[float, float, float]:
    lms = tuple(_dot(row, (lightness, a, b)) ** 3 for row in _LAB_TO_LMS)
    return (_dot(_LMS_TO_RGB[0], lms), _dot(_LMS_TO_RGB[1], lms), _dot(_LMS_TO_RGB[2], lms))  # type: ignore[arg-type]


def _rgb_from_lab(lightness: float, a: float, b: float) -> RGB:
    """The sRGB colour, each channel clipped and rounded to a whole 0-255 value (as a terminal gets it)."""
    red, green, blue = _linear_from_lab(lightness, a, b)
    return (round(_from_linear(red)), round(_from_linear(green)), round(_from_linear(blue)))


def oklab_lightness(rgb: RGB) -> float:
    """OKLab's L, 0-1."""
    return _lab(rgb)[0]


def rgb_to_oklch(rgb: RGB) -> tuple[float, float, float]:
    """Lightness, chroma and hue (degrees)."""
    lightness, a, b = _lab(rgb)
    return lightness, math.hypot(a, b), math.degrees(math.atan2(b, a)) % 360


def oklch_to_rgb(lightness: float, chroma: float, hue: float) -> RGB:
    """The colour, each channel clipped to sRGB."""
    angle = math.radians(hue)
    return _rgb_from_lab(lightness, chroma * math.cos(angle), chroma * math.sin(angle))


def _toe(x: float) -> float:
    return 0.5 * (_K3 * x - _K1 + math.sqrt((_K3 * x - _K1) ** 2 + 4 * _K2 * _K3 * x))


def _toe_inverse(x: float) -> float:
    return (x * x + _K1 * x) / (_K3 * (x + _K2))


def okhsl_lightness(oklab_l: float) -> float:
    """OKHSL's lightness of an OKLab lightness."""
    return _toe(oklab_l)


def _max_saturation(a: float, b: float) -> float:
    """The most saturation (chroma / lightness) sRGB allows at hue ``(a, b)`` (a unit vector)."""
    if -1.88170328 * a - 0.80936493 * b > 1:
        k, weights = (1.19086277, 1.76576728, 0.59662641, 0.75515197, 0.56771245), _LMS_TO_RGB[0]
    elif 1.81444104 * a - 1.19445276 * b > 1:
        k, weights = (0.73956515, -0.45954404, 0.08285427, 0.12541070, 0.14503204), _LMS_TO_RGB[1]
    else:
        k, weights = (1.35733652, -0.00915799, -1.15130210, -0.50559606, 0.00692167), _LMS_TO_RGB[2]
    saturation = k[0] + k[1] * a + k[2] * b + k[3] * a * a + k[4] * a * b
    slopes = tuple(row[1] * a + row[2] * b for row in _LAB_TO_LMS)
    roots = tuple(1 + saturation * slope for slope in slopes)
    value = _dot(weights, tuple(r**3 for r in roots))  # type: ignore[arg-type]
    first = _dot(weights, tuple(3 * s * r * r for s, r in zip(slopes, roots, strict=True)))  # type: ignore[arg-type]
    second = _dot(weights, tuple(6 * s * s * r for s, r in zip(slopes, roots, strict=True)))  # type: ignore[arg-type]
    return saturation - value * first / (first * first - 0.5 * value * second)


def _cusp(a: float, b: float) -> tuple[float, float]:
    """Lightness and chroma of the most chromatic colour sRGB has at hue ``(a, b)``."""
    saturation = _max_saturation(a, b)
    top = max(_linear_from_lab(1, saturation * a, saturation * b))
    lightness = (1 / top) ** (1 / 3)
    return lightness, lightness * saturation


def _gamut_intersection(a: float, b: float, lightness: float, cusp: tuple[float, float]) -> float:
    """The most chroma at ``lightness`` and hue ``(a, b)`` inside sRGB (along constant lightness)."""
    cusp_l, cusp_c = cusp
    if cusp_l >= lightness:  # below the cusp: the edge to black is a straight line
        return cusp_c * lightness / cusp_l
    t = cusp_c * (lightness - 1) / (cusp_l - 1)  # above it: the straight line, then one Halley step
    slopes = tuple(row[1] * a + row[2] * b for row in _LAB_TO_LMS)
    roots = tuple(lightness + t * slope for slope in slopes)
    cubes = tuple(r**3 for r in roots)
    firsts = tuple(3 * s * r * r for s, r in zip(slopes, roots, strict=True))
    seconds = tuple(6 * s * s * r for s, r in zip(slopes, roots, strict=True))
    step = math.inf
    for weights in _LMS_TO_RGB:
        value = _dot(weights, cubes) - 1  # type: ignore[arg-type]
        first = _dot(weights, firsts)  # type: ignore[arg-type]
        second = _dot(weights, seconds)  # type: ignore[arg-type]
        u = first / (first * first - 0.5 * value * second)
        if u >= 0:
            step = min(step, -value * u)
    return t + (step if step != math.inf else 0)


def _chromas(lightness: float, a: float, b: float) -> tuple[float, float, float]:
    """OKHSL's three chroma stops at a lightness and hue: C0, Cmid and Cmax."""
    cusp = _cusp(a, b)
    c_max = _gamut_intersection(a, b, lightness, cusp)
    s_max, t_max = cusp[1] / cusp[0], cusp[1] / (1 - cusp[0])
    s_mid = 0.11516993 + 1 / (
        7.44778970 + 4.15901240 * b
        + a * (-2.19557347 + 1.75198401 * b + a * (-2.13704948 - 10.02301043 * b
        + a * (-4.24894561 + 5.38770819 * b + 4.69891013 * a)))
    )  # fmt: skip
    t_mid = 0.11239642 + 1 / (
        1.61320320 - 0.68124379 * b
        + a * (0.40370612 + 0.90148123 * b + a * (-0.27087943 + 0.61223990 * b
        + a * (0.00299215 - 0.45399568 * b - 0.14661872 * a)))
    )  # fmt: skip
    k = c_max / min(lightness * s_max, (1 - lightness) * t_max)
    c_a, c_b = lightness * s_mid, (1 - lightness) * t_mid
    c_mid = 0.9 * k * math.sqrt(math.sqrt(1 / (1 / c_a**4 + 1 / c_b**4)))
    c_a, c_b = lightness * 0.4, (1 - lightness) * 0.8
    c_0 = math.sqrt(1 / (1 / c_a**2 + 1 / c_b**2))
    return c_0, c_mid, c_max


def okhsl_to_rgb(hue: float, saturation: float, lightness: float) -> RGB:
    """An OKHSL colour (hue in degrees, saturation and lightness 0-1)."""
    if lightness >= 1:
        return (255.0, 255.0, 255.0)
    if lightness <= 0:
        return (0.0, 0.0, 0.0)
    a, b = math.cos(math.radians(hue)), math.sin(math.radians(hue))
    oklab_l = _toe_inverse(lightness)
    c_0, c_mid, c_max = _chromas(oklab_l, a, b)
    if saturation < 0.8:
        t = 1.25 * saturation
        k_1 = 0.8 * c_0
        k_2 = 1 - k_1 / c_mid
        chroma = t * k_1 / (1 - k_2 * t)
    else:
        t = (saturation - 0.8) / 0.2
        k_1 = 0.2 * c_mid * c_mid * 1.25 * 1.25 / c_0
        k_2 = 1 - k_1 / (c_max - c_mid)
        chroma = c_mid + t * k_1 / (1 - k_2 * t)
    return _rgb_from_lab(oklab_l, chroma * a, chroma * b)


def rgb_to_okhsl(rgb: RGB) -> tuple[float, float, float]:
    """Hue (degrees), saturation and lightness of a colour."""
    oklab_l, a, b = _lab(rgb)
    chroma = math.hypot(a, b)
    lightness = _toe(oklab_l)
    if chroma < 1e-9 or oklab_l <= 0 or oklab_l >= 1:
        return 0.0, 0.0, min(1.0, max(0.0, lightness))
    hue = math.degrees(math.atan2(b, a)) % 360
    c_0, c_mid, c_max = _chromas(oklab_l, a / chroma, b / chroma)
    if chroma < c_mid:
        k_1 = 0.8 * c_0
        k_2 = 1 - k_1 / c_mid
        saturation = chroma / (k_1 + k_2 * chroma) * 0.8
    else:
        k_1 = 0.2 * c_mid * c_mid * 1.25 * 1.25 / c_0
        k_2 = 1 - k_1 / (c_max - c_mid)
        t = (chroma - c_mid) / (k_1 + k_2 * (chroma - c_mid))
        saturation = 0.8 + 0.2 * t
    return hue, saturation, lightness
