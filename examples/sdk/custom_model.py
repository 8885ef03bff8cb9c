"""A hand-built model: talk to any OpenAI-compatible server (Ollama, llama.cpp, vLLM, LM Studio).

``tau.ai.Model`` is a plain descriptor; any ``base_url`` works. The key is given to the session's
auth storage for this process only (``set_runtime_api_key``, like ``--api-key``); local servers
usually accept any value. To make such a model permanent, add it to ``models.json`` in the agent
dir instead.

    python examples/sdk/custom_model.py http://localhost:11434/v1 llama3.2
"""

from __future__ import annotations

import asyncio
import os
import sys

from tau import create_agent_session
from tau.ai import Model
from tau.runtime.services import create_agent_session_services


def local_model(base_url: str, model_id: str) -> Model:
    """A model of provider ``local`` served at ``base_url`` over the OpenAI chat-completions API."""
    return Model(
        id=model_id,
        api="openai-completions",
        provider="local",
        base_url=base_url,
        context_window=32_768,
        max_tokens=4_096,
        compat={"supportsDeveloperRole": False, "supportsReasoningEffort": False},
    )


async def main(
    base_url: str = "http://localhost:11434/v1",
    model_id: str = "llama3.2",
    *,
    api_key: str = "local",
    prompt: str = "Say hello in five words.",
    cwd: str | None = None,
) -> str:
    """Answer ``prompt`` with ``model_id`` served at ``base_url``."""
    model = local_model(base_url, model_id)
    services = create_agent_session_services(cwd=cwd or os.getcwd())
    services.auth_storage.set_runtime_api_key(model.provider, api_key)
    session = create_agent_session(services=services, model=model).session
    try:
        await session.prompt(prompt)
        answer = session.get_last_assistant_text() or ""
    finally:
        await session.dispose()
    print(f"{model.provider}/{model.id}: {answer}")
    return answer


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:3]))
