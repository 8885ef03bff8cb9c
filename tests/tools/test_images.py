"""Tests for tau.tools.images: sniffing and header sizes."""

from __future__ import annotations

import struct

from tau.tools.images import image_size, sniff_image_mime_type


def test_image_types_are_recognised_by_their_magic_bytes() -> None:
    assert sniff_image_mime_type(b"\x89PNG\r\n\x1a\n....") == "image/png"
    assert sniff_image_mime_type(b"\xff\xd8\xff\xe0") == "image/jpeg"
    assert sniff_image_mime_type(b"GIF89a") == "image/gif"
    assert sniff_image_mime_type(b"RIFF\0\0\0\0WEBPVP8 ") == "image/webp"
    assert sniff_image_mime_type(b"plain text") is None


def test_png_and_gif_sizes_come_from_the_header() -> None:
    png = b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + b"IHDR" + struct.pack(">II", 640, 480)
    assert image_size(png, "image/png") == (640, 480)
    assert image_size(b"GIF89a" + struct.pack("<HH", 32, 16), "image/gif") == (32, 16)


def test_jpeg_size_comes_from_the_start_of_frame_marker() -> None:
    app0 = b"\xff\xe0" + struct.pack(">H", 16) + b"JFIF\0" + b"\0" * 9
    sof0 = b"\xff\xc0" + struct.pack(">HBHH", 17, 8, 300, 500) + b"\0" * 10
    assert image_size(b"\xff\xd8" + app0 + sof0, "image/jpeg") == (500, 300)


def test_webp_sizes_come_from_each_chunk_kind() -> None:
    vp8x = b"RIFF\0\0\0\0WEBPVP8X" + b"\0" * 8 + (99).to_bytes(3, "little") + (49).to_bytes(3, "little")
    assert image_size(vp8x, "image/webp") == (100, 50)


def test_a_truncated_header_gives_no_size() -> None:
    assert image_size(b"\x89PNG", "image/png") is None
    assert image_size(b"\xff\xd8\xff", "image/jpeg") is None
