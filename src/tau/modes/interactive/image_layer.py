"""Images in the fullscreen transcript (kitty's graphics protocol): the transcript's lines keep
each image's sequence on its first row, which prompt_toolkit never sees (``escapes``); after each
frame the images in view are placed over their rows here.

Each image is sent to the terminal once, under an id of its own; every frame that shows images (or
showed some) first takes the placements down and then places what is in view, an image partly
scrolled out cropped to its rows in view, as pi 1.6 does in fullscreen.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Callable

from msgspec import Struct

from tau.modes.interactive.render.images import image_size

__all__ = ["ImageLayer", "Placement", "placements_in_view"]

_KITTY = re.compile(r"\x1b_G([^;\x1b]*);([^\x1b]*)\x1b\\")
_SGR = re.compile(r"\x1b\[[0-9;:]*m|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)")
_CHUNK = 4096
_DELETE_PLACEMENTS = "\x1b_Ga=d,d=a,q=2\x1b\\"
"""Take every placement down, keeping the images' data (lower-case ``a``)."""


class Placement(Struct, frozen=True):
    image_id: int
    data: str
    row: int
    """Screen row of the first row in view."""
    column: int
    columns: int
    rows: int
    """Rows of the whole image."""
    hidden: int
    """Rows scrolled out above the view."""
    shown: int
    height_px: int


def _controls(text: str) -> dict[str, str]:
    return dict(part.split("=", 1) for part in text.split(",") if "=" in part)


def _image_of(line: str) -> tuple[int, int, int, str] | None:
    """The column, columns, rows and base64 data of the kitty image a line starts, if any."""
    commands = _KITTY.findall(line)
    if not commands:
        return None
    first = _controls(commands[0][0])
    if first.get("a") != "T":
        return None
    try:
        columns, rows = int(first["c"]), int(first["r"])
    except (KeyError, ValueError):
        return None
    start = line.index("\x1b_G")
    from wcwidth import wcswidth

    column = max(0, wcswidth(_SGR.sub("", line[:start])))
    return column, columns, rows, "".join(payload for _, payload in commands)


def placements_in_view(line: Callable[[int], str], total: int, top: int, height: int) -> list[Placement]:
    """The images of lines ``top`` to ``top + height`` (and of lines above whose image reaches into
    the view), where they stand on the screen."""
    found: list[Placement] = []
    for index in range(max(0, top - 200), min(total, top + height)):
        text = line(index)
        if "\x1b_G" not in text:
            continue
        image = _image_of(text)
        if image is None:
            continue
        column, columns, rows, data = image
        hidden = max(0, top - index)
        shown = min(rows - hidden, top + height - max(index, top))
        if shown <= 0:
            continue
        size = image_size(data, "image/png")
        found.append(
            Placement(
                image_id=zlib.crc32(data.encode()) & 0x7FFFFFFF or 1,
                data=data,
                row=max(index, top) - top,
                column=column,
                columns=columns,
                rows=rows,
                hidden=hidden,
                shown=shown,
                height_px=size.height if size is not None else rows,
            )
        )
    return found


def _transmit(placement: Placement) -> str:
    head = f"a=t,f=100,q=2,i={placement.image_id}"
    data = placement.data
    if len(data) <= _CHUNK:
        return f"\x1b_G{head};{data}\x1b\\"
    chunks = [data[i : i + _CHUNK] for i in range(0, len(data), _CHUNK)]
    middle = "".join(f"\x1b_Gm=1;{chunk}\x1b\\" for chunk in chunks[1:-1])
    return f"\x1b_G{head},m=1;{chunks[0]}\x1b\\{middle}\x1b_Gm=0;{chunks[-1]}\x1b\\"


def _place(placement: Placement) -> str:
    crop = ""
    if placement.shown < placement.rows:  # the rows in view, cut from the image's pixels
        top = placement.height_px * placement.hidden // placement.rows
        bottom = -(-placement.height_px * (placement.hidden + placement.shown) // placement.rows)
        crop = f",y={top},h={max(1, min(placement.height_px, bottom) - top)}"
    return (
        f"\x1b[{placement.row + 1};{placement.column + 1}H"
        f"\x1b_Ga=p,i={placement.image_id},p=1,q=2,C=1,c={placement.columns},r={placement.shown}{crop}\x1b\\"
    )


class ImageLayer:
    """Places the transcript's images after each frame (``write`` sends raw bytes to the terminal)."""

    def __init__(self, write: Callable[[str], None]) -> None:
        self._write = write
        self._sent: set[int] = set()
        self._showing = False
        self._last: tuple[object, ...] | None = None

    def draw(self, placements: list[Placement], screen: tuple[int, int] = (0, 0)) -> None:
        """Place ``placements``, unless the same ones stand on a screen of the same size already
        (``screen``: its rows and columns; a resize redraws the screen and may clear images)."""
        key = (screen, *placements)
        if key == self._last or (not placements and not self._showing):
            self._last = key
            return
        self._last = key
        out = ["\x1b7", _DELETE_PLACEMENTS]
        for placement in placements:
            if placement.image_id not in self._sent:
                self._sent.add(placement.image_id)
                out.append(_transmit(placement))
            out.append(_place(placement))
        out.append("\x1b8")
        self._showing = bool(placements)
        self._write("".join(out))

    def clear(self) -> None:
        """Take the images down (leaving fullscreen)."""
        if self._showing:
            self._write(_DELETE_PLACEMENTS)
            self._showing = False
