"""The ways a login or a token refresh fails; each text is one line for the user."""

from __future__ import annotations

from tau.errors import TauError

__all__ = ["LoginCancelledError", "LoginError", "RefreshRejectedError"]


class LoginError(TauError):
    """A login or refresh that failed; the text is one line for the user. ``status``, ``body`` and
    ``reason`` (``HTTP 400: invalid_grant``) describe the HTTP answer, when an endpoint refused."""

    def __init__(
        self, message: str, *, status: int | None = None, body: object = None, reason: str = ""
    ) -> None:
        super().__init__(message)
        self.status = status
        self.body = body
        self.reason = reason or message


class LoginCancelledError(LoginError):
    """The user stopped the login (Ctrl+C, Esc, end of input)."""


class RefreshRejectedError(LoginError):
    """The provider refused a token (HTTP 400/401/403): revoked, expired, or from another client."""
