"""Polling a device-code login (RFC 8628) until the user has entered the code."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Literal, TypeVar

from tau.accounts.oauth._common import min_interval_s
from tau.accounts.oauth.errors import LoginCancelledError, LoginError
from tau.accounts.oauth.interaction import LoginInteraction

__all__ = ["PollResult", "poll_device_code", "token_error_result"]

T = TypeVar("T")

# ("done", value), ("pending", None), ("slow_down", new interval in s or None), ("failed", message)
PollResult = tuple[Literal["done", "pending", "slow_down", "failed"], object]

_DEFAULT_INTERVAL_S = 5.0  # RFC 8628 §3.2, when the server gives none
_SLOW_DOWN_STEP_S = 5.0  # RFC 8628 §3.5


def poll_device_code(
    ui: LoginInteraction,
    poll: Callable[[], PollResult],
    *,
    interval_s: float | None,
    expires_in_s: float,
    wait_first: bool,
) -> object:
    """The value ``poll`` returns with ``"done"``; waits ``interval_s`` between polls (more after a
    ``slow_down``). Raises ``LoginCancelledError`` or ``LoginError`` (failed, timed out)."""
    deadline = time.monotonic() + expires_in_s
    floor = min_interval_s()
    interval = max(floor, interval_s if interval_s is not None else _DEFAULT_INTERVAL_S)
    slowed = False
    if wait_first:
        _sleep(ui, min(interval, max(0.0, deadline - time.monotonic())))
    while time.monotonic() < deadline:
        status, value = poll()
        if status == "done":
            return value
        if status == "failed":
            raise LoginError(str(value))
        if status == "slow_down":
            slowed = True
            interval = (
                max(floor, float(value))
                if isinstance(value, int | float) and value > 0
                else interval + _SLOW_DOWN_STEP_S
            )
        _sleep(ui, min(interval, max(0.0, deadline - time.monotonic())))
    if slowed:
        raise LoginError(
            "The device login timed out after slow_down answers; a drifting clock (WSL, VMs) often "
            "causes this: sync the clock and try again"
        )
    raise LoginError("The device login timed out: log in again")


def _sleep(ui: LoginInteraction, seconds: float) -> None:
    if ui.cancelled.wait(seconds):
        raise LoginCancelledError("Login cancelled.")


def token_error_result(error: LoginError, *, name: str) -> PollResult:
    """What an RFC 8628 token endpoint's refusal means for the polling (``error`` in its body)."""
    body = error.body if isinstance(error.body, dict) else {}
    code = body.get("error")
    if code == "authorization_pending":
        return "pending", None
    if code == "slow_down":
        return "slow_down", body.get("interval")
    if code in ("access_denied", "authorization_denied"):
        return "failed", f"{name} login was denied"
    if code == "expired_token":
        return "failed", f"The {name} device code expired: log in again"
    return "failed", str(error)
