"""Inline images: sizes read from the image data, cells reckoned as pi 1.6 does, the kitty and
iTerm2 sequences, and the text line where no protocol draws them."""

from __future__ import annotations

import base64
import struct
import zlib

from hypothesis import given
from hypothesis import strategies as st
from rich.console import Console

from tau.ai.types import ImageContent
from tau.modes.interactive.render.images import (
    Size,
    cell_size,
    encode_iterm2,
    encode_kitty,
    image_renderable,
    image_size,
)
from tau.modes.interactive.render.theme import DARK


def _png(width: int, height: int) -> str:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    rows = b"".join(b"\x00" + b"\x00\x00\x00" * width for _ in range(height))
    data = (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )
    return base64.b64encode(data).decode()


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def test_sizes_are_read_from_png_jpeg_gif_and_webp_data() -> None:
    assert image_size(_png(30, 20), "image/png") == Size(30, 20)
    jpeg = (
        b"\xff\xd8"
        + b"\xff\xe0\x00\x04ab"
        + b"\xff\xc0\x00\x11\x08"
        + struct.pack(">HH", 48, 64)
        + b"\x00" * 12
    )
    assert image_size(_b64(jpeg), "image/jpeg") == Size(64, 48)
    assert image_size(_b64(b"GIF89a" + struct.pack("<HH", 7, 9) + b"\x00" * 4), "image/gif") == Size(7, 9)
    webp = (
        b"RIFF"
        + b"\x00" * 4
        + b"WEBPVP8X"
        + b"\x00" * 8
        + (99).to_bytes(3, "little")
        + (49).to_bytes(3, "little")
    )
    assert image_size(_b64(webp), "image/webp") == Size(100, 50)


def test_an_unreadable_or_unknown_image_has_no_size() -> None:
    assert image_size(_b64(b"not an image at all, not at all"), "image/png") is None
    assert image_size(_png(3, 3), "image/tiff") is None
    assert image_size("!!!", "image/png") is None


@given(st.binary(max_size=200), st.sampled_from(["image/png", "image/jpeg", "image/gif", "image/webp"]))
def test_reading_a_size_never_fails_on_arbitrary_bytes(data: bytes, mime: str) -> None:
    size = image_size(_b64(data), mime)
    assert size is None or (size.width > 0 and size.height > 0)


def test_cells_keep_the_proportions_within_the_width_and_half_as_many_rows() -> None:
    assert cell_size(Size(900, 900), 60) == (60, 30)  # 9x18-pixel cells: a square is half as high
    assert cell_size(Size(900, 1800), 60) == (30, 30)  # held to 30 rows, narrower to keep its shape
    assert cell_size(Size(1800, 180), 60) == (60, 3)
    assert cell_size(Size(1, 1), 60) == (60, 30)  # a small image is drawn as large as the room allows
    assert cell_size(Size(100, 5000), 10)[1] == 5


def test_kitty_images_go_in_chunks_of_4096_with_the_last_one_marked() -> None:
    assert encode_kitty("abcd", 4, 2) == "\x1b_Ga=T,f=100,q=2,C=1,c=4,r=2;abcd\x1b\\"
    data = "A" * 9000
    sequence = encode_kitty(data, 10, 5)
    assert sequence.startswith("\x1b_Ga=T,f=100,q=2,C=1,c=10,r=5,m=1;")
    assert sequence.count("\x1b_Gm=1;") == 1 and sequence.endswith(
        "\x1b_Gm=0;" + "A" * (9000 - 8192) + "\x1b\\"
    )


def test_iterm2_images_say_their_size_and_width() -> None:
    assert encode_iterm2("QUJD", 12) == "\x1b]1337;File=inline=1;size=3;width=12;height=auto:QUJD\x07"


def _print(renderable: object) -> str:
    console = Console(width=80, force_terminal=True, color_system=None)
    with console.capture() as capture:
        console.print(renderable)
    return capture.get()


def test_an_image_is_a_text_line_without_a_protocol_and_drawn_rows_with_one() -> None:
    image = ImageContent(data=_png(90, 36), mime_type="image/png")
    assert _print(image_renderable(image, "[image: image/png, 1 KB]", DARK)) == "[image: image/png, 1 KB]\n"
    kitty = _print(image_renderable(image, "x", DARK.__class__(**{**_fields(), "image_protocol": "kitty"})))
    assert kitty.startswith("\x1b_Ga=T,f=100,q=2,C=1,c=60,r=12;") and kitty.count("\n") == 12
    iterm = _print(image_renderable(image, "x", DARK.__class__(**{**_fields(), "image_protocol": "iterm2"})))
    assert iterm.startswith("\n" * 11 + "\x1b[11A\x1b]1337;File=inline=1;") and iterm.count("\n") == 12


def test_kitty_gets_png_only_and_other_formats_keep_the_text_line() -> None:
    gif = ImageContent(data=_b64(b"GIF89a" + struct.pack("<HH", 7, 9) + b"\x00" * 4), mime_type="image/gif")
    theme = DARK.__class__(**{**_fields(), "image_protocol": "kitty"})
    assert _print(image_renderable(gif, "[image: image/gif, 14 B]", theme)) == "[image: image/gif, 14 B]\n"


def _fields() -> dict[str, object]:
    return {name: getattr(DARK, name) for name in DARK.__struct_fields__}


def test_the_fullscreen_layer_sends_an_image_once_and_places_it_again_only_when_it_moves() -> None:
    from tau.modes.interactive.image_layer import ImageLayer, placements_in_view

    data = _png(90, 36)
    lines = ["header", f" \x1b_Ga=T,f=100,q=2,C=1,c=10,r=4;{data}\x1b\\", "", "", "", "after"]
    written: list[str] = []
    layer = ImageLayer(written.append)
    shown = placements_in_view(lines.__getitem__, len(lines), 0, 10)
    assert [(p.row, p.column, p.columns, p.rows, p.shown) for p in shown] == [(1, 1, 10, 4, 4)]
    layer.draw(shown, (10, 80))
    assert written[-1].count("a=t,f=100") == 1 and "\x1b[2;2H\x1b_Ga=p," in written[-1]
    layer.draw(placements_in_view(lines.__getitem__, len(lines), 0, 10), (10, 80))
    assert len(written) == 1  # the same placements on the same screen: nothing to do
    cropped = placements_in_view(lines.__getitem__, len(lines), 3, 10)  # two rows scrolled out
    assert [(p.row, p.hidden, p.shown) for p in cropped] == [(0, 2, 2)]
    layer.draw(cropped, (10, 80))
    assert "a=t" not in written[-1] and ",r=2,y=18,h=18\x1b\\" in written[-1]
    layer.draw([], (10, 80))
    assert written[-1] == "\x1b7\x1b_Ga=d,d=a,q=2\x1b\\\x1b8"  # taken down once out of view
    layer.draw([], (10, 80))
    assert len(written) == 3
