"""Fitting images to the provider limits with Pillow (``images.autoResize``, issue #32)."""

from __future__ import annotations

import base64
import io
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

from PIL import Image

from tau.ai.types import ImageContent
from tau.tools.image_resize import PILLOW_MISSING_NOTE, fit_image, fit_prompt_images, fit_tool_result_images
from tau.tools.images import MAX_IMAGE_BASE64_BYTES, ImageLimits

SRC = Path(__file__).resolve().parents[2] / "src"


def _encoded(image: Image.Image, fmt: str, **options: object) -> bytes:
    out = io.BytesIO()
    image.save(out, format=fmt, **options)
    return out.getvalue()


def test_an_image_within_the_limits_is_left_as_it_is() -> None:
    data = _encoded(Image.new("RGB", (2000, 1200), "red"), "PNG")
    fitted = fit_image(data, "image/png")
    assert fitted.data is data and fitted.mime_type == "image/png" and fitted.notes == ()


def test_an_image_over_the_byte_cap_is_reencoded_under_it() -> None:
    noise = Image.effect_noise((1600, 1600), 90)
    data = _encoded(Image.merge("RGB", (noise, noise.rotate(90), noise.rotate(180))), "PNG")
    assert len(data) * 4 / 3 > MAX_IMAGE_BASE64_BYTES
    fitted = fit_image(data, "image/png")
    assert fitted.data is not None and (len(fitted.data) + 2) // 3 * 4 < MAX_IMAGE_BASE64_BYTES
    assert fitted.mime_type == "image/jpeg"


def test_exif_orientation_is_applied_before_scaling() -> None:
    exif = Image.Exif()
    exif[0x0112] = 6  # rotate 90° clockwise to display
    data = _encoded(Image.new("RGB", (3000, 1000), "blue"), "JPEG", exif=exif)
    fitted = fit_image(data, "image/jpeg")
    assert fitted.data is not None
    with Image.open(io.BytesIO(fitted.data)) as image:
        assert image.size == (667, 2000)
    assert fitted.notes == (
        "[Image: original 1000x3000, displayed at 667x2000. Multiply coordinates by 1.50 to map to the "
        "original image.]",
    )


def test_auto_resize_off_leaves_even_a_large_image() -> None:
    data = _encoded(Image.new("RGB", (3000, 10), "red"), "PNG")
    assert fit_image(data, "image/png", auto_resize=False).data is data


def test_prompt_images_are_fitted_and_noted() -> None:
    big = _encoded(Image.new("RGB", (4000, 100), "green"), "PNG")
    small = ImageContent(base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\0" * 16).decode(), "image/png")
    images, notes = fit_prompt_images(
        [ImageContent(base64.b64encode(big).decode(), "image/png"), small], auto_resize=True
    )
    assert images[1] is small
    with Image.open(io.BytesIO(base64.b64decode(images[0].data))) as image:
        assert image.size == (2000, 50)
    assert notes == [
        "[Image: original 4000x100, displayed at 2000x50. Multiply coordinates by 2.00 to map to the "
        "original image.]"
    ]


def test_without_pillow_a_wide_image_is_sent_as_it_is_with_one_line_saying_how_to_resize(
    tmp_path: Path,
) -> None:
    """A real interpreter whose import path has every installed package but Pillow."""
    site = Path(sysconfig.get_paths()["purelib"])
    packages = tmp_path / "site"
    packages.mkdir()
    for entry in site.iterdir():
        if entry.name == "PIL" or entry.name.lower().startswith("pillow"):
            continue
        (packages / entry.name).symlink_to(entry)
    big = _encoded(Image.new("RGB", (3000, 20), "red"), "PNG")
    (tmp_path / "wide.png").write_bytes(big)
    script = (
        "import importlib.util, pathlib, sys\n"
        "from tau.tools.image_resize import fit_image\n"
        "assert importlib.util.find_spec('PIL') is None\n"
        "data = pathlib.Path(sys.argv[1]).read_bytes()\n"
        "fitted = fit_image(data, 'image/png')\n"
        "print(fitted.data == data, fitted.mime_type)\n"
        "print(*fitted.notes, sep='\\n')\n"
        "print('PIL' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-S", "-c", script, str(tmp_path / "wide.png")],
        env=os.environ | {"PYTHONPATH": f"{SRC}{os.pathsep}{packages}"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["True image/png", PILLOW_MISSING_NOTE, "False"]
    assert "pip install 'tau[images]'" in PILLOW_MISSING_NOTE


def test_pillow_is_imported_only_when_an_image_needs_resizing(tmp_path: Path) -> None:
    (tmp_path / "small.png").write_bytes(_encoded(Image.new("RGB", (20, 20), "red"), "PNG"))
    (tmp_path / "wide.png").write_bytes(_encoded(Image.new("RGB", (3000, 20), "red"), "PNG"))
    script = (
        "import pathlib, sys\n"
        "import tau.runtime.sdk\n"
        "from tau.tools.image_resize import fit_image\n"
        "for name in sys.argv[1:]:\n"
        "    fit_image(pathlib.Path(name).read_bytes(), 'image/png')\n"
        "    print('PIL' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "small.png"), str(tmp_path / "wide.png")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["False", "True"]


def test_input_limits_are_read_as_pi_16_with_its_defaults_for_what_is_missing() -> None:
    limits = ImageLimits.from_input_limits({"images": {"resize": {"maxWidth": 640, "jpegQuality": 50}}})
    assert limits == ImageLimits(640, 2000, MAX_IMAGE_BASE64_BYTES, 50)
    assert (
        ImageLimits.from_input_limits(None) == ImageLimits.from_input_limits({"images": {}}) == ImageLimits()
    )
    bad = {"images": {"resize": {"maxWidth": "wide", "maxHeight": -3, "maxBytes": True}}}
    assert ImageLimits.from_input_limits(bad) == ImageLimits()


def test_an_image_is_fitted_to_smaller_limits_width_and_height_apart() -> None:
    data = _encoded(Image.new("RGB", (1000, 500), "red"), "PNG")
    fitted = fit_image(data, "image/png", limits=ImageLimits(max_width=400, max_height=150))
    assert fitted.data is not None
    with Image.open(io.BytesIO(fitted.data)) as image:
        assert image.size == (300, 150)
    assert fitted.notes and "displayed at 300x150" in fitted.notes[0]


def test_max_bytes_and_jpeg_quality_of_the_limits_are_used() -> None:
    noise = Image.effect_noise((600, 600), 90)
    data = _encoded(Image.merge("RGB", (noise, noise.rotate(90), noise.rotate(180))), "PNG")
    limits = ImageLimits(max_bytes=60_000, jpeg_quality=30)
    fitted = fit_image(data, "image/png", limits=limits)
    assert fitted.data is not None and (len(fitted.data) + 2) // 3 * 4 < 60_000
    assert fitted.mime_type == "image/jpeg"
    at_quality = _encoded(Image.open(io.BytesIO(data)).convert("RGB"), "JPEG", quality=30)
    if (len(at_quality) + 2) // 3 * 4 < 60_000:  # fits at the configured quality: that one is sent
        assert fitted.data == at_quality


def test_tool_result_images_follow_the_limits() -> None:
    data = _encoded(Image.new("RGB", (800, 800), "green"), "PNG")
    block = ImageContent(base64.b64encode(data).decode("ascii"), "image/png")
    assert fit_tool_result_images([block]) is None  # within the defaults
    fitted = fit_tool_result_images([block], limits=ImageLimits(max_width=200, max_height=200))
    assert fitted is not None and isinstance(fitted[0], ImageContent)
    with Image.open(io.BytesIO(base64.b64decode(fitted[0].data))) as image:
        assert image.size == (200, 200)
