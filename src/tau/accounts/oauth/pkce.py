"""The opening every PKCE login (RFC 7636) shares: a verifier and its challenge, the state, and the
authorize URL that carries them. ``callback.browser_sign_in`` then brings the code back."""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from urllib.parse import urlencode

from msgspec import Struct

from tau.accounts.oauth._common import oauth_url, pkce_pair
from tau.accounts.oauth.callback import code_from_paste

__all__ = ["PkceLogin"]


class _Verifier(enum.Enum):
    SAME = "the verifier"


class PkceLogin(Struct, frozen=True, dict=True):
    """One sign-in's secrets. ``state`` goes out in the authorize URL and must come back with the
    code; ``None`` when the provider sends none back (the callback's unguessable path guards)."""

    verifier: str
    challenge: str
    state: str | None

    @classmethod
    def start(cls, state: str | _Verifier | None = _Verifier.SAME) -> PkceLogin:
        """A fresh verifier; the state is the verifier itself unless given (as pi's logins do)."""
        verifier, challenge = pkce_pair()
        return cls(verifier, challenge, verifier if isinstance(state, _Verifier) else state)

    def authorize_url(
        self, url: str, params: Mapping[str, str], *, redirect_param: str = "redirect_uri"
    ) -> Callable[[str], str]:
        """Builds ``url`` with the provider's ``params``, the redirect address, the challenge and the state."""

        def build(redirect_uri: str) -> str:
            query = {
                **params,
                redirect_param: redirect_uri,
                "code_challenge": self.challenge,
                "code_challenge_method": "S256",
            }
            if self.state is not None:
                query["state"] = self.state
            return f"{oauth_url(url)}?{urlencode(query)}"

        return build

    def pasted_code(self, text: str) -> str:
        """The code in what the user pasted (``code#state``, a redirect URL, a bare code)."""
        return code_from_paste(text, self.state)
