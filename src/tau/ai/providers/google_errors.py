"""Google Cloud error bodies read for what the user must do (Vertex AI and Cloud Code Assist).

Google answers with ``{"error": {"code", "message", "status", "details": [...]}}``; the
``google.rpc.ErrorInfo`` entry in ``details`` carries a machine-readable ``reason``. A disabled
API (``SERVICE_DISABLED``) and a rejected token (401) become one line saying what to run; every
other status keeps the server's own message.
"""

from __future__ import annotations

import json
from typing import Any

from tau.ai.stream_writer import ProviderError
from tau.ai.transport.http import HttpStatusError


def explain_http_error(exc: HttpStatusError, *, product: str, relogin: str) -> ProviderError:
    """``exc`` rephrased when Google says why; ``relogin`` tells how to get a fresh credential."""
    reason, metadata = _error_info(exc.body)
    if reason == "SERVICE_DISABLED":
        return ProviderError(_service_disabled(product, metadata))
    if exc.status == 401:
        return ProviderError(
            f"{product} rejected the credentials ({exc}): the token expired or was revoked; {relogin}"
        )
    return exc


def _service_disabled(product: str, metadata: dict[str, Any]) -> str:
    service = str(metadata.get("service") or "aiplatform.googleapis.com")
    consumer = str(metadata.get("consumer") or "")
    project = consumer.removeprefix("projects/") or None
    where = f" for project {project}" if project else ""
    flag = f" --project {project}" if project else ""
    message = (
        f"{product}: the {service} API is not enabled{where}; enable it with "
        f"`gcloud services enable {service}{flag}`"
    )
    url = metadata.get("activationUrl")
    if isinstance(url, str) and url:
        message += f" (or at {url})"
    return message + ", wait a minute, and retry"


def _error_info(body: str) -> tuple[str | None, dict[str, Any]]:
    """The ``ErrorInfo`` reason and metadata of a Google error body, if it has one."""
    try:
        data = json.loads(body)
    except ValueError:
        return None, {}
    if isinstance(data, list) and data:  # some endpoints wrap the error in a one-item array
        data = data[0]
    error = data.get("error") if isinstance(data, dict) else None
    details = error.get("details") if isinstance(error, dict) else None
    for detail in details if isinstance(details, list) else []:
        if isinstance(detail, dict) and isinstance(detail.get("reason"), str):
            metadata = detail.get("metadata")
            return detail["reason"], metadata if isinstance(metadata, dict) else {}
    return None, {}
