"""Inline images of the HTML export: only raster types with real base64 data become ``<img>``."""

from __future__ import annotations

import pytest
from export_session import PNG, audit_html

from tau.ai.types import ImageContent
from tau.export.media import is_inline_image, render_image


@pytest.mark.parametrize("mime", ["image/png", "image/jpeg", "image/gif", "image/webp"])
def test_raster_images_are_inlined_as_data_uris(mime: str) -> None:
    html = render_image(ImageContent(PNG, mime))
    assert audit_html(html).image_sources == [f"data:{mime};base64,{PNG}"]


@pytest.mark.parametrize(
    ("data", "mime"),
    [
        (PNG, "image/svg+xml"),
        (PNG, "text/html"),
        (PNG, 'image/png" onerror="alert(1)'),
        ('AAAA" onerror="alert(1)', "image/png"),
        ("not base64!", "image/png"),
        ("", "image/png"),
    ],
)
def test_other_images_are_named_not_shown(data: str, mime: str) -> None:
    image = ImageContent(data, mime)
    assert not is_inline_image(image)
    audit = audit_html(render_image(image))
    assert audit.image_sources == [] and audit.event_handlers == []
