"""Images a tool returns are fitted to the provider limits before they enter the session, as pi
1.6 does for every tool (``images.autoResize``, issue #32)."""

from __future__ import annotations

import base64
import io
from typing import Any

import msgspec
from PIL import Image

from tau.agent.tool import AgentTool, AgentToolResult
from tau.ai.types import Context, ImageContent, TextContent, ToolResultMessage
from tau.runtime.services import AgentSessionServices
from tau.testing.faux import FauxProvider, faux_message, faux_tool_call

from .conftest import SessionFactory, faux_model


def _screenshot_tool(width: int, height: int) -> AgentTool:
    out = io.BytesIO()
    Image.new("RGB", (width, height), "navy").save(out, format="PNG")
    data = base64.b64encode(out.getvalue()).decode("ascii")

    async def execute(call_id: str, args: dict[str, Any], signal: Any, on_update: Any) -> AgentToolResult:
        return AgentToolResult(content=[TextContent("shot"), ImageContent(data, "image/png")])

    return AgentTool(
        name="screenshot", description="Screenshot", parameters={"type": "object"}, execute=execute
    )


async def _tool_result_sent(
    make_session: SessionFactory, faux: FauxProvider, **options: Any
) -> ToolResultMessage:
    seen: list[Context] = []

    def answer(context: Context, *rest: Any) -> Any:
        seen.append(context)
        return faux_message("done")

    faux.set_responses([faux_message(faux_tool_call("screenshot", {})), answer])
    session = make_session(custom_tools=[_screenshot_tool(4000, 1000)], **options)
    await session.prompt("take one")
    result = seen[0].messages[-1]
    assert isinstance(result, ToolResultMessage)
    return result


def _size(block: Any) -> tuple[int, int]:
    assert isinstance(block, ImageContent)
    with Image.open(io.BytesIO(base64.b64decode(block.data))) as image:
        return image.size


async def test_a_large_image_from_a_tool_is_scaled_with_a_note(
    make_session: SessionFactory, faux: FauxProvider
) -> None:
    result = await _tool_result_sent(make_session, faux)
    assert [b.type for b in result.content] == ["text", "image", "text"]
    assert _size(result.content[1]) == (2000, 500)
    note = result.content[2]
    assert isinstance(note, TextContent) and "original 4000x1000, displayed at 2000x500" in note.text


async def test_auto_resize_off_leaves_a_tool_image_as_it_is(
    make_session: SessionFactory, faux: FauxProvider, services: AgentSessionServices
) -> None:
    services.settings_manager.set_auto_resize_images(False)
    result = await _tool_result_sent(make_session, faux)
    assert [b.type for b in result.content] == ["text", "image"]
    assert _size(result.content[1]) == (4000, 1000)


async def test_a_tool_image_follows_the_models_input_limits(
    make_session: SessionFactory, faux: FauxProvider, services: AgentSessionServices
) -> None:
    limits = {"images": {"resize": {"maxWidth": 800, "maxHeight": 100}}}
    model = msgspec.structs.replace(faux_model(services), input_limits=limits)
    result = await _tool_result_sent(make_session, faux, model=model)
    assert _size(result.content[1]) == (400, 100)
    note = result.content[2]
    assert isinstance(note, TextContent) and "original 4000x1000, displayed at 400x100" in note.text
