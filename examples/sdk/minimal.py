"""Minimal SDK use: create a session, send one prompt, print the answer.

Everything is defaulted: the services of the current directory, a new session file under the agent
dir (``$TAU_AGENT_DIR`` or ``~/.tau/agent``), and the model from the settings (``defaultProvider``
/ ``defaultModel``) or else the first provider with credentials.

    python examples/sdk/minimal.py "What does this project do?"
"""

from __future__ import annotations

import asyncio
import sys

from tau import create_agent_session


async def main(prompt: str = "Say hello in five words.", *, cwd: str | None = None) -> str:
    """Answer ``prompt`` in a new session rooted at ``cwd`` (default: the current directory)."""
    result = create_agent_session(cwd=cwd)
    if result.model_fallback_message:
        print(result.model_fallback_message, file=sys.stderr)
    session = result.session
    try:
        await session.prompt(prompt)
        answer = session.get_last_assistant_text() or ""
    finally:
        await session.dispose()
    print(answer)
    return answer


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:2]))
