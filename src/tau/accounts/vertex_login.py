"""What ``tau auth login google-vertex`` and ``/login google-vertex`` ask, and the credential they store.

Vertex has no account sign-in; like pi 1.6 the login offers three ways in: a Google Cloud API key
(stored as ``{"type": "api_key", "key"}``), or Application Default Credentials / a service-account
file, for which only the settings are stored: ``{"type": "api_key", "env": {"GOOGLE_CLOUD_PROJECT",
"GOOGLE_CLOUD_LOCATION"[, "GOOGLE_APPLICATION_CREDENTIALS"]}}``. Requests read those variables
from the credential before the process environment (``AuthStorage.get_credential_env``).

The terminal and the TUI each ask the questions their own way; this module holds the questions
and turns the answers into the credential, so both store the same thing.
"""

from __future__ import annotations

from pathlib import Path

from tau.accounts.oauth.interaction import SelectOption
from tau.ai.types import JsonObject
from tau.errors import TauError

__all__ = [
    "ADC_HINT",
    "METHODS",
    "METHOD_MESSAGE",
    "PROVIDER",
    "VertexLoginError",
    "questions_for",
    "vertex_credential",
]

PROVIDER = "google-vertex"
METHOD_MESSAGE = "How should tau authenticate to Google Vertex AI?"
METHODS = [
    SelectOption("api-key", "Google Cloud API key"),
    SelectOption("adc", "Application Default Credentials (gcloud auth application-default login)"),
    SelectOption("service-account", "Service account credentials file"),
]
ADC_HINT = (
    "Application Default Credentials come from `gcloud auth application-default login`; "
    "see https://cloud.google.com/docs/authentication/provide-credentials-adc"
)
# Question keys, in the order they are asked; the API key is asked as a secret.
_QUESTIONS = {
    "key": "Google Cloud API key",
    "project": "Google Cloud project ID",
    "location": "Google Cloud location (e.g. us-central1)",
    "credentials": "Service account credentials file path",
}
_METHOD_QUESTIONS = {
    "api-key": ["key"],
    "adc": ["project", "location"],
    "service-account": ["project", "location", "credentials"],
}


class VertexLoginError(TauError, ValueError):
    """An answer that cannot be stored; the text is one line for the user."""


def questions_for(method: str) -> list[tuple[str, str]]:
    """The ``(key, prompt)`` questions a method asks, in order."""
    if method not in _METHOD_QUESTIONS:
        raise VertexLoginError(f"Unknown Google Vertex AI sign-in method: {method}")
    return [(key, _QUESTIONS[key]) for key in _METHOD_QUESTIONS[method]]


def vertex_credential(method: str, answers: dict[str, str]) -> JsonObject:
    """The auth.json credential for the answers (keyed as ``questions_for``); an empty answer or a
    missing credentials file is refused."""
    given = {key: answers.get(key, "").strip() for key, _ in questions_for(method)}
    for key, prompt in questions_for(method):
        if not given[key]:
            raise VertexLoginError(f"No {prompt.split(' (')[0]} given; nothing saved.")
    if method == "api-key":
        return {"type": "api_key", "key": given["key"]}
    env = {"GOOGLE_CLOUD_PROJECT": given["project"], "GOOGLE_CLOUD_LOCATION": given["location"]}
    if method == "service-account":
        path = Path(given["credentials"]).expanduser()
        if not path.is_file():
            raise VertexLoginError(f"No service account credentials file at {path}; nothing saved.")
        env["GOOGLE_APPLICATION_CREDENTIALS"] = str(path.resolve())
    return {"type": "api_key", "env": env}
