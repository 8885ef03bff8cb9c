"""An RPC ``prompt``'s images are scaled as pi 1.6 scales them (``images.autoResize``, issue #32)."""

from __future__ import annotations

import base64
import io
import json
from pathlib import Path
from typing import Any

from PIL import Image, ImageDraw
from rpc_side_by_side import Side, add_turns, on_both, two_sides

from tau.testing.fake_llm.script import text_turn


def _wide_png() -> str:
    image = Image.new("RGB", (3000, 1500), "white")
    ImageDraw.Draw(image).rectangle((100, 100, 2900, 1400), fill=(30, 120, 200))
    out = io.BytesIO()
    image.save(out, format="PNG")
    return base64.b64encode(out.getvalue()).decode("ascii")


def _sent(side: Side) -> tuple[list[tuple[str, tuple[int, int]]], str]:
    """The data-URL images (mime type, size) of the side's last request and its user text."""
    messages = side.server.requests[-1].body["messages"]
    images = []
    texts = []
    for message in messages:
        content = message.get("content")
        if message["role"] != "user" or not isinstance(content, list):
            continue
        for part in content:
            if part.get("type") == "image_url":
                header, _, data = part["image_url"]["url"].partition(",")
                with Image.open(io.BytesIO(base64.b64decode(data))) as image:
                    images.append((header.removeprefix("data:").removesuffix(";base64"), image.size))
            elif part.get("type") == "text":
                texts.append(part["text"])
    return images, "\n".join(texts)


async def test_an_rpc_prompt_image_is_scaled_and_noted_as_pi_16(tmp_path: Path) -> None:
    def vision(models: dict[str, Any]) -> None:
        models["providers"]["local"]["models"][0]["input"] = ["text", "image"]

    async with two_sides(tmp_path, models=vision) as (tau, pi):
        add_turns(tau, pi, text_turn("ok"))
        image = {"type": "image", "data": _wide_png(), "mimeType": "image/png"}

        async def run(side: Side) -> None:
            await side.rpc.prompt("what is it?", images=[image])

        await on_both(tau, pi, run)
        (our_images, our_text), (pi_images, pi_text) = _sent(tau), _sent(pi)
        assert our_images == pi_images == [("image/png", (2000, 1000))], json.dumps([our_text, pi_text])
        assert our_text.startswith("what is it?\n\n[Image: original 3000x1500, displayed at 2000x1000.")
        assert pi_text.startswith("what is it?\n\n[Image: original 3000x1500, displayed at 2000x1000.")
