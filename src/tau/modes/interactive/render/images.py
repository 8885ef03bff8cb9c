"""Images in the conversation: drawn in the terminal by kitty's graphics protocol or iTerm2's inline
images, where the terminal has one, else a line of text naming the image.

The image takes ``terminal.imageWidthCells`` cells at most (60 by default, less on a narrow
terminal) and as many rows as its proportions need, reckoned with a 9x18-pixel cell. A kitty image
is placed at its first row without moving the cursor and the rows below are left blank for it; an
iTerm2 image is drawn from its last row after moving the cursor up to the first (as pi 1.6 does).
"""

from __future__ import annotations

import base64
import binascii
import math
import struct

from msgspec import Struct
from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.segment import ControlType, Segment
from rich.text import Text

from tau.ai.types import ImageContent
from tau.modes.interactive.render.theme import Theme

__all__ = [
    "CELL_PIXELS",
    "Size",
    "cell_size",
    "encode_iterm2",
    "encode_kitty",
    "image_renderable",
    "image_size",
]

CELL_PIXELS = (9, 18)
"""A terminal cell's width and height in pixels, when the terminal does not say."""
_KITTY_CHUNK = 4096


class Size(Struct, frozen=True):
    width: int
    height: int


def _png(data: bytes) -> Size | None:
    if len(data) >= 24 and data.startswith(b"\x89PNG"):
        width, height = struct.unpack(">II", data[16:24])
        return Size(width, height)
    return None


def _jpeg(data: bytes) -> Size | None:
    if not data.startswith(b"\xff\xd8"):
        return None
    offset = 2
    while offset < len(data) - 9:
        if data[offset] != 0xFF:
            offset += 1
            continue
        marker = data[offset + 1]
        if 0xC0 <= marker <= 0xC2:  # start of frame: height, then width
            height, width = struct.unpack(">HH", data[offset + 5 : offset + 9])
            return Size(width, height)
        (length,) = struct.unpack(">H", data[offset + 2 : offset + 4])
        if length < 2:
            return None
        offset += 2 + length
    return None


def _gif(data: bytes) -> Size | None:
    if len(data) >= 10 and data[:6] in (b"GIF87a", b"GIF89a"):
        width, height = struct.unpack("<HH", data[6:10])
        return Size(width, height)
    return None


def _webp(data: bytes) -> Size | None:
    if len(data) < 30 or data[:4] != b"RIFF" or data[8:12] != b"WEBP":
        return None
    chunk = data[12:16]
    if chunk == b"VP8 ":
        width, height = struct.unpack("<HH", data[26:30])
        return Size(width & 0x3FFF, height & 0x3FFF)
    if chunk == b"VP8L":
        bits = int.from_bytes(data[21:25], "little")
        return Size((bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1)
    if chunk == b"VP8X":
        return Size(int.from_bytes(data[24:27], "little") + 1, int.from_bytes(data[27:30], "little") + 1)
    return None


_READERS = {"image/png": _png, "image/jpeg": _jpeg, "image/gif": _gif, "image/webp": _webp}


def image_size(data: str, mime_type: str) -> Size | None:
    """The pixel size of a base64 image of a known type; ``None`` when it cannot be read."""
    reader = _READERS.get(mime_type)
    if reader is None:
        return None
    try:
        decoded = base64.b64decode(data[:65536].encode("ascii") + b"===", validate=False)
    except (binascii.Error, ValueError):
        return None
    try:
        size = reader(decoded)
    except struct.error:
        return None
    return size if size is not None and size.width > 0 and size.height > 0 else None


def _less_distorted(upper: int, ideal: float) -> int:
    if upper <= 1:
        return upper
    lower = upper - 1
    return lower if max(lower / ideal, ideal / lower) < max(upper / ideal, ideal / upper) else upper


def cell_size(size: Size, max_columns: int, *, fit_proportions: bool = False) -> tuple[int, int]:
    """Columns and rows for an image at most ``max_columns`` cells wide and half as many rows high
    (a square's worth), its proportions kept; ``fit_proportions`` (kitty, which stretches the image
    to the cells given) rounds to the cell count that distorts it least."""
    cell_width, cell_height = CELL_PIXELS
    columns_max = max(1, max_columns)
    rows_max = max(1, math.ceil(columns_max * cell_width / cell_height))
    width_scale = columns_max * cell_width / size.width
    height_scale = rows_max * cell_height / size.height
    scale = min(width_scale, height_scale)
    columns = max(1, min(columns_max, math.ceil(size.width * scale / cell_width)))
    rows = max(1, min(rows_max, math.ceil(size.height * scale / cell_height)))
    if fit_proportions:
        if width_scale <= height_scale:
            rows = _less_distorted(rows, columns * cell_width * size.height / (size.width * cell_height))
        else:
            columns = _less_distorted(columns, rows * cell_height * size.width / (size.height * cell_width))
    return columns, rows


def encode_kitty(data: str, columns: int, rows: int) -> str:
    """kitty's graphics protocol: transmit and show a PNG over ``columns`` x ``rows`` cells, the
    cursor left where it was, quietly (no replies); the data in 4096-byte chunks."""
    head = f"a=T,f=100,q=2,C=1,c={columns},r={rows}"
    if len(data) <= _KITTY_CHUNK:
        return f"\x1b_G{head};{data}\x1b\\"
    chunks = [data[i : i + _KITTY_CHUNK] for i in range(0, len(data), _KITTY_CHUNK)]
    parts = [f"\x1b_G{head},m=1;{chunks[0]}\x1b\\"]
    parts += [f"\x1b_Gm=1;{chunk}\x1b\\" for chunk in chunks[1:-1]]
    parts.append(f"\x1b_Gm=0;{chunks[-1]}\x1b\\")
    return "".join(parts)


def encode_iterm2(data: str, columns: int) -> str:
    """iTerm2's inline image: ``columns`` cells wide, its height by its proportions."""
    size = len(data) * 3 // 4 - data[-2:].count("=")
    return f"\x1b]1337;File=inline=1;size={max(0, size)};width={columns};height=auto:{data}\x07"


def _raw(sequence: str) -> Segment:
    """A segment the console writes as it is, taking no cells (rich counts control segments as none)."""
    return Segment(sequence, None, [(ControlType.BELL,)])


class _InlineImage:
    def __init__(self, image: ImageContent, size: Size, protocol: str, max_columns: int) -> None:
        self.image = image
        self.size = size
        self.protocol = protocol
        self.max_columns = max_columns

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        kitty = self.protocol == "kitty"
        columns, rows = cell_size(
            self.size, min(self.max_columns, options.max_width - 2), fit_proportions=kitty
        )
        new_line = Segment.line()
        if kitty:
            yield _raw(encode_kitty(self.image.data, columns, rows))
            yield new_line
            for _ in range(rows - 1):
                yield new_line
            return
        for _ in range(rows - 1):
            yield new_line
        up = f"\x1b[{rows - 1}A" if rows > 1 else ""
        yield _raw(up + encode_iterm2(self.image.data, columns))
        yield new_line


def image_renderable(image: ImageContent, placeholder: str, theme: Theme) -> RenderableType:
    """``image`` drawn by the theme's image protocol; ``placeholder`` (muted) where there is none,
    images are not shown, or the image's size cannot be read. Only PNG goes to kitty (the one format
    every kitty-protocol terminal reads)."""
    protocol = theme.image_protocol
    if protocol is not None and (protocol == "iterm2" or image.mime_type == "image/png"):
        size = image_size(image.data, image.mime_type)
        if size is not None:
            return _InlineImage(image, size, protocol, theme.image_width_cells)
    return Text(placeholder, style=theme.muted)
