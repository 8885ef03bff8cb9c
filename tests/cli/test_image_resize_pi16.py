"""``images.autoResize`` side by side with pi 1.6 (issue #32): the image each sends for a
3000x1500 PNG and a 2400x1800 JPEG, read by the read tool and attached with ``@file``."""

from __future__ import annotations

import base64
import io
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from pi16 import pi16_command
from PIL import Image, ImageDraw, ImageFilter
from tau_command import MODEL, TauCommand

from tau.testing.fake_llm import RecordedRequest
from tau.testing.fake_llm.script import text_turn, tool_turn


def _models(tau: TauCommand) -> None:
    config = json.loads((tau.agent_dir / "models.json").read_text())
    config["providers"]["local"]["models"] = [{"id": "fake-model", "input": ["text", "image"]}]
    (tau.agent_dir / "models.json").write_text(json.dumps(config))


def _drawing_png(width: int, height: int) -> bytes:
    """Flat shapes: PNG stays the smaller encoding after scaling, with any encoder."""
    image = Image.new("RGB", (width, height), "white")
    draw = ImageDraw.Draw(image)
    for i in range(0, width, 150):
        draw.rectangle((i, i // 2 % height, i + 90, height - 1), fill=(i % 255, 80, 200))
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()


def _photo_jpeg(width: int, height: int) -> bytes:
    """Smooth texture like a photo: JPEG stays the smaller encoding after scaling."""
    noise = Image.effect_noise((width, height), 60).filter(ImageFilter.GaussianBlur(3))
    image = Image.merge("RGB", (noise, noise.transpose(Image.Transpose.FLIP_LEFT_RIGHT), noise))
    out = io.BytesIO()
    image.save(out, format="JPEG", quality=95)
    return out.getvalue()


def _sent_images(request: RecordedRequest) -> list[tuple[str, tuple[int, int]]]:
    """(mime type, pixel size) of every data-URL image in the request body."""
    found: list[tuple[str, tuple[int, int]]] = []

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)
        elif isinstance(value, str) and value.startswith("data:image/"):
            header, _, data = value.partition(",")
            with Image.open(io.BytesIO(base64.b64decode(data))) as image:
                found.append((header.removeprefix("data:").removesuffix(";base64"), image.size))

    walk(request.body["messages"])
    return found


def _texts(request: RecordedRequest) -> str:
    return json.dumps(request.body["messages"])


def _run_both(tau: TauCommand, tmp_path: Path, *args: str, tool_call: bool) -> list[list[RecordedRequest]]:
    """The requests tau, then pi, made for ``args``."""
    out = []
    pi_dir = tmp_path / "pi"
    pi_dir.mkdir(exist_ok=True)
    (pi_dir / "models.json").write_text((tau.agent_dir / "models.json").read_text())
    for side in ("tau", "pi"):
        if tool_call:
            tau.server.add(tool_turn("read", {"path": args[-1]}), text_turn("ok"))
        else:
            tau.server.add(text_turn("ok"))
        start = len(tau.server.requests)
        prompt = ("-p", "look") if tool_call else ("-p", f"@{args[-1]}", "look")
        if side == "tau":
            done = tau.run(*MODEL, *prompt)
        else:
            env = tau.env | {"PI_OFFLINE": "1", "PI_CODING_AGENT_DIR": str(pi_dir), "HOME": str(pi_dir)}
            done = subprocess.run(
                [*pi16_command(), *MODEL, *prompt],
                cwd=tau.work,
                env=env,
                input="",
                capture_output=True,
                text=True,
                timeout=120,
            )
        assert done.returncode == 0, done.stderr
        out.append(tau.server.requests[start:])
    return out


CASES = [
    ("wide.png", _drawing_png, (3000, 1500), ("image/png", (2000, 1000))),
    ("photo.jpg", _photo_jpeg, (2400, 1800), ("image/jpeg", (2000, 1500))),
]


@pytest.mark.parametrize(("name", "make", "size", "expected"), CASES)
@pytest.mark.parametrize("via", ["read", "@file"])
def test_a_large_image_is_sent_scaled_as_pi_16_sends_it(
    tau: TauCommand, tmp_path: Path, name: str, make: Any, size: tuple[int, int], expected: Any, via: str
) -> None:
    _models(tau)
    (tau.work / name).write_bytes(make(*size))
    ours, pis = _run_both(tau, tmp_path, name, tool_call=via == "read")
    request = -1 if via == "read" else 0
    assert _sent_images(ours[request]) == _sent_images(pis[request]) == [expected]
    original = f"original {size[0]}x{size[1]}, displayed at {expected[1][0]}x{expected[1][1]}"
    assert original in _texts(ours[request]) and original in _texts(pis[request])
    scale = f"Multiply coordinates by {size[0] / expected[1][0]:.2f}"
    assert scale in _texts(ours[request])


def test_auto_resize_off_sends_the_image_as_it_is_as_pi_16(tau: TauCommand, tmp_path: Path) -> None:
    _models(tau)
    (tau.work / "wide.png").write_bytes(_drawing_png(3000, 1500))
    for agent_dir in (tau.agent_dir, tmp_path / "pi"):
        agent_dir.mkdir(exist_ok=True)
        (agent_dir / "settings.json").write_text(json.dumps({"images": {"autoResize": False}}))
    ours, pis = _run_both(tau, tmp_path, "wide.png", tool_call=False)
    assert _sent_images(ours[0]) == _sent_images(pis[0]) == [("image/png", (3000, 1500))]
    assert "displayed at" not in _texts(ours[0])


SMALL_LIMITS = {"images": {"resize": {"maxWidth": 400, "maxHeight": 150, "jpegQuality": 60}}}


@pytest.mark.parametrize("via", ["read", "@file"])
def test_a_custom_models_input_limits_resize_as_pi_16(tau: TauCommand, tmp_path: Path, via: str) -> None:
    config = json.loads((tau.agent_dir / "models.json").read_text())
    config["providers"]["local"]["models"] = [
        {"id": "fake-model", "input": ["text", "image"], "inputLimits": SMALL_LIMITS}
    ]
    (tau.agent_dir / "models.json").write_text(json.dumps(config))
    (tau.work / "wide.png").write_bytes(_drawing_png(1000, 500))  # under the default limits
    ours, pis = _run_both(tau, tmp_path, "wide.png", tool_call=via == "read")
    request = -1 if via == "read" else 0
    # 400 px wide makes it 400x200, then 150 px high makes it 300x150.
    assert _sent_images(ours[request]) == _sent_images(pis[request]) == [("image/png", (300, 150))]
    original = "original 1000x500, displayed at 300x150"
    assert original in _texts(ours[request]) and original in _texts(pis[request])
