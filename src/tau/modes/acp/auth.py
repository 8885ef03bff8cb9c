"""Logging in from the editor: ACP's ``authMethods`` and ``authenticate``.

tau keeps its credentials where its other modes find them (auth.json, the environment,
models.json), and ``tau auth login`` is how they get there. A client that can run the agent in a
terminal (``clientCapabilities.auth.terminal``) is offered that command, once for an account login
and once for an API key; every client is offered the plain method, for a login made in a terminal
of one's own. ``authenticate`` with any of them re-reads the credentials: it answers once a model
is available, else with ``auth_required`` again (what ``session/new`` answers while none is).
"""

from __future__ import annotations

from tau.ai.types import JsonObject

__all__ = ["LOGIN_METHOD_IDS", "NO_MODEL", "auth_methods"]

NO_MODEL = (
    "no model available: log in with `tau auth login` (the editor may offer it), or give tau a"
    " provider key such as ANTHROPIC_API_KEY in its environment"
)

_ACCOUNT, _API_KEY, _DONE = "tau-login", "tau-api-key", "tau-credentials"
LOGIN_METHOD_IDS = frozenset({_ACCOUNT, _API_KEY, _DONE})


def auth_methods(terminal: bool) -> list[JsonObject]:
    methods: list[JsonObject] = []
    if terminal:
        methods += [
            {
                "type": "terminal",
                "id": _ACCOUNT,
                "name": "Log in with an account",
                "description": "tau auth login: sign in to a provider's subscription in the browser",
                "args": ["auth", "login"],
            },
            {
                "type": "terminal",
                "id": _API_KEY,
                "name": "Save an API key",
                "description": "tau auth login --api-key: store a provider's key in tau's auth.json",
                "args": ["auth", "login", "--api-key"],
            },
        ]
    methods.append(
        {
            "id": _DONE,
            "name": "Use tau's credentials",
            "description": "After `tau auth login` in a terminal, or a key set for tau: use it",
        }
    )
    return methods
