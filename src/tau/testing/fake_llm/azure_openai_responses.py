"""Azure OpenAI's Responses protocol for the fake server: OpenAI's stream behind Azure's front door.

Requests go to ``…/openai/v1/responses`` (or the older ``…/openai/responses``) with an ``api-key``
header or an Entra ID bearer token; the stream is OpenAI's. Errors take Azure's shape: a 404 is
``DeploymentNotFound``, a 401 the "invalid subscription key" answer. A request without either
credential header is refused with that 401.
"""

from __future__ import annotations

from typing import Any

from tau.testing.fake_llm.openai_responses import MALFORMED_FRAME, render
from tau.testing.fake_llm.openai_responses import error_body as openai_error_body
from tau.testing.fake_llm.script import RecordedRequest

__all__ = ["MALFORMED_FRAME", "error_body", "reject", "render"]

DEPLOYMENT_NOT_FOUND = (
    "The API deployment for this resource does not exist. If you created the deployment within the "
    "last 5 minutes, please wait a moment and try again."
)
ACCESS_DENIED = (
    "Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid "
    "key for an active subscription and use a correct regional API endpoint for your resource."
)


def error_body(status: int, message: str) -> dict[str, Any]:
    """An error body as Azure sends it (404 and 401 with Azure's own codes and texts)."""
    if status == 404:
        return {"error": {"code": "DeploymentNotFound", "message": DEPLOYMENT_NOT_FOUND}}
    if status == 401:
        return {"error": {"code": "401", "message": ACCESS_DENIED}}
    return openai_error_body(status, message)


def reject(request: RecordedRequest) -> tuple[int, dict[str, Any]] | None:
    """Azure's answer to a request without credentials, before any turn is used."""
    if "api-key" not in request.headers and not request.headers.get("authorization", "").startswith(
        "Bearer "
    ):
        return 401, error_body(401, "")
    return None
