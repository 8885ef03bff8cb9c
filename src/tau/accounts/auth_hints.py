"""What to tell a user whose provider has no credentials."""

from __future__ import annotations

from tau.ai.env_keys import env_var_names, vertex_setup_hint

__all__ = ["missing_auth_message"]


def missing_auth_message(provider: str) -> str:
    """A one-line hint for a provider without credentials, naming the variables that would work."""
    if provider == "google-vertex":
        return f'No credentials for provider "google-vertex": {vertex_setup_hint()}'
    variables = env_var_names(provider)
    where = f"set {' or '.join(variables)}, " if variables else ""
    return (
        f'No API key for provider "{provider}": {where}store one in auth.json, '
        'give "apiKey" in models.json, or pass --api-key'
    )
