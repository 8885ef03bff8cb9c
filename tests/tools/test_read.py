"""Tests for the read tool: windows of text files, continuation notes, images, refusals."""

from __future__ import annotations

import base64
import struct
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tau.ai.abort import AbortController
from tau.ai.types import ImageContent
from tau.tools import ResizedImage, ToolAborted, ToolError, create_read_tool
from tau.tools.images import ImageLimits


def png_bytes(width: int = 2, height: int = 3) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    raw = b"".join(b"\0" + b"\xff\x00\x00" * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(raw))
        + chunk(b"IEND", b"")
    )


def numbered(count: int, trailing_newline: bool = False) -> str:
    return "\n".join(f"line {i}" for i in range(1, count + 1)) + ("\n" if trailing_newline else "")


async def test_a_small_file_is_returned_verbatim_without_a_note(
    tmp_path: Path, run: Any, text_of: Callable[..., str]
) -> None:
    (tmp_path / "a.txt").write_text("hello\nworld\n")
    result = await run(create_read_tool(str(tmp_path)), {"path": "a.txt"})
    assert text_of(result) == "hello\nworld\n"
    assert result.details is None


async def test_an_empty_file_reads_as_empty_text(
    tmp_path: Path, run: Any, text_of: Callable[..., str]
) -> None:
    (tmp_path / "empty.txt").write_text("")
    assert text_of(await run(create_read_tool(str(tmp_path)), {"path": "empty.txt"})) == ""


async def test_a_missing_file_is_an_error_naming_enoent(
    tmp_path: Path, run: Any, text_of: Callable[..., str]
) -> None:
    with pytest.raises(ToolError, match="ENOENT") as caught:
        await run(create_read_tool(str(tmp_path)), {"path": "nope.txt"})
    assert "nope.txt" in str(caught.value)


async def test_a_directory_is_refused_with_a_hint_to_list_it(
    tmp_path: Path, run: Any, text_of: Callable[..., str]
) -> None:
    (tmp_path / "sub").mkdir()
    with pytest.raises(ToolError, match="directory"):
        await run(create_read_tool(str(tmp_path)), {"path": "sub"})


async def test_a_binary_file_is_refused_as_binary(
    tmp_path: Path, run: Any, text_of: Callable[..., str]
) -> None:
    (tmp_path / "blob.bin").write_bytes(bytes(range(256)) * 8)
    with pytest.raises(ToolError, match="binary"):
        await run(create_read_tool(str(tmp_path)), {"path": "blob.bin"})


async def test_a_latin1_text_file_is_still_read_with_replacement_characters(
    tmp_path: Path, run: Any, text_of: Callable[..., str]
) -> None:
    (tmp_path / "old.txt").write_bytes("naïve text written long ago\n".encode("latin-1"))
    result = await run(create_read_tool(str(tmp_path)), {"path": "old.txt"})
    assert text_of(result) == "na\ufffdve text written long ago\n"


async def test_2500_lines_show_the_first_2000_and_the_next_offset(
    tmp_path: Path, run: Any, text_of: Callable[..., str]
) -> None:
    (tmp_path / "big.txt").write_text(numbered(2500))
    text = text_of(await run(create_read_tool(str(tmp_path)), {"path": "big.txt"}))
    body, note = text.rsplit("\n\n", 1)
    assert body.split("\n") == [f"line {i}" for i in range(1, 2001)]
    assert "1-2000" in note and "2500" in note and "offset=2001" in note


async def test_a_trailing_newline_counts_as_one_more_line(
    tmp_path: Path, run: Any, text_of: Callable[..., str]
) -> None:
    (tmp_path / "big.txt").write_text(numbered(2500, trailing_newline=True))
    text = text_of(await run(create_read_tool(str(tmp_path)), {"path": "big.txt"}))
    assert "of 2501" in text


async def test_hitting_the_byte_limit_names_the_limit_and_the_next_offset(
    tmp_path: Path, run: Any, text_of: Callable[..., str]
) -> None:
    (tmp_path / "wide.txt").write_text("\n".join("x" * 99 for _ in range(1000)))  # 100 KB
    result = await run(create_read_tool(str(tmp_path)), {"path": "wide.txt"})
    text = text_of(result)
    assert "50.0KB" in text and "1-512 of 1000" in text and "offset=513" in text
    assert result.details["truncation"]["truncatedBy"] == "bytes"


async def test_offset_51_of_100_lines_returns_the_rest_without_a_note(
    tmp_path: Path, run: Any, text_of: Callable[..., str]
) -> None:
    (tmp_path / "f.txt").write_text(numbered(100))
    text = text_of(await run(create_read_tool(str(tmp_path)), {"path": "f.txt", "offset": 51}))
    assert text.split("\n") == [f"line {i}" for i in range(51, 101)]


async def test_a_limit_reports_the_remaining_lines_and_the_next_offset(
    tmp_path: Path, run: Any, text_of: Callable[..., str]
) -> None:
    (tmp_path / "f.txt").write_text(numbered(100))
    tool = create_read_tool(str(tmp_path))
    first = text_of(await run(tool, {"path": "f.txt", "limit": 10}))
    body, note = first.rsplit("\n\n", 1)
    assert body.split("\n") == [f"line {i}" for i in range(1, 11)]
    assert "90" in note and "offset=11" in note
    window = text_of(await run(tool, {"path": "f.txt", "offset": 41, "limit": 20}))
    body, note = window.rsplit("\n\n", 1)
    assert body.split("\n") == [f"line {i}" for i in range(41, 61)]
    assert "40" in note and "offset=61" in note


async def test_an_offset_past_the_end_is_an_error_with_the_line_count(
    tmp_path: Path, run: Any, text_of: Callable[..., str]
) -> None:
    (tmp_path / "f.txt").write_text(numbered(100))
    with pytest.raises(ToolError, match="100 lines"):
        await run(create_read_tool(str(tmp_path)), {"path": "f.txt", "offset": 500})


async def test_a_first_line_over_50kb_yields_only_a_sed_fallback_for_that_line(
    tmp_path: Path, run: Any, text_of: Callable[..., str]
) -> None:
    (tmp_path / "f.txt").write_text("short\n" + "y" * 60_000 + "\nend")
    result = await run(create_read_tool(str(tmp_path)), {"path": "f.txt", "offset": 2})
    text = text_of(result)
    assert "yyyy" not in text
    assert "sed -n '2p'" in text and "head -c 51200" in text
    assert result.details["truncation"]["firstLineExceedsLimit"] is True


async def test_png_bytes_are_an_image_whatever_the_extension(
    tmp_path: Path, run: Any, text_of: Callable[..., str]
) -> None:
    (tmp_path / "pic.txt").write_bytes(png_bytes())
    result = await run(create_read_tool(str(tmp_path)), {"path": "pic.txt"})
    image = result.content[1]
    assert isinstance(image, ImageContent) and image.mime_type == "image/png"
    assert base64.b64decode(image.data) == png_bytes()
    assert "image/png" in text_of(result) and "2x3" in text_of(result)


async def test_text_in_a_png_named_file_is_read_as_text(
    tmp_path: Path, run: Any, text_of: Callable[..., str]
) -> None:
    (tmp_path / "fake.png").write_text("not an image")
    result = await run(create_read_tool(str(tmp_path)), {"path": "fake.png"})
    assert text_of(result) == "not an image"


async def test_an_oversized_image_is_downscaled_by_the_resizer_with_a_scale_note(
    tmp_path: Path, run: Any, text_of: Callable[..., str]
) -> None:
    (tmp_path / "huge.png").write_bytes(png_bytes(4000, 1))
    calls: list[int] = []

    def resizer(data: bytes, mime_type: str, *, limits: ImageLimits) -> ResizedImage:
        calls.append(limits.max_width)
        return ResizedImage(b"small", "image/jpeg", 4000, 1, 2000, 1)

    result = await run(create_read_tool(str(tmp_path), image_resizer=resizer), {"path": "huge.png"})
    assert calls == [2000]
    note = text_of(result)
    assert "4000x1" in note and "2000x1" in note and "2.00" in note
    assert isinstance(result.content[1], ImageContent) and result.content[1].mime_type == "image/jpeg"


async def test_an_image_that_cannot_fit_the_cap_becomes_a_note(
    tmp_path: Path, run: Any, text_of: Callable[..., str]
) -> None:
    (tmp_path / "huge.png").write_bytes(png_bytes(4000, 1))
    tool = create_read_tool(str(tmp_path), image_resizer=lambda *a, **k: None)
    result = await run(tool, {"path": "huge.png"})
    assert len(result.content) == 1 and "omitted" in text_of(result)


async def test_auto_resize_off_sends_the_image_as_it_is(
    tmp_path: Path, run: Any, text_of: Callable[..., str]
) -> None:
    (tmp_path / "huge.png").write_bytes(png_bytes(4000, 1))
    tool = create_read_tool(str(tmp_path), auto_resize_images=False, image_resizer=lambda *a, **k: None)
    result = await run(tool, {"path": "huge.png"})
    assert isinstance(result.content[1], ImageContent)


async def test_a_model_without_vision_gets_a_note_that_the_image_is_left_out(
    tmp_path: Path, run: Any, text_of: Callable[..., str]
) -> None:
    (tmp_path / "pic.png").write_bytes(png_bytes())
    tool = create_read_tool(str(tmp_path), model_accepts_images=lambda: False)
    assert "left out" in text_of(await run(tool, {"path": "pic.png"}))


async def test_an_aborted_call_does_not_start(tmp_path: Path, run: Any, text_of: Callable[..., str]) -> None:
    (tmp_path / "a.txt").write_text("x")
    controller = AbortController()
    controller.abort()
    with pytest.raises(ToolAborted):
        await run(create_read_tool(str(tmp_path)), {"path": "a.txt"}, signal=controller.signal)


async def test_the_tool_advertises_a_snippet_and_a_guideline(run: Any, text_of: Callable[..., str]) -> None:
    tool = create_read_tool("/")
    assert tool.name == "read" and tool.prompt_snippet
    assert any("cat" in line for line in tool.prompt_guidelines)
