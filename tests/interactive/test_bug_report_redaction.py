"""The bug report's redaction: credentials in keys and URLs never reach the zip."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from tau.modes.interactive.bug_report import REDACTED, redact_json, redact_url


def test_a_urls_user_password_and_secret_query_values_are_removed() -> None:
    assert (
        redact_url("https://me:pw@host.example/v1?api_key=abc&x=1")
        == f"https://host.example/v1?api_key={REDACTED}&x=1"
    )
    assert redact_url("https://host.example/v1") == "https://host.example/v1"
    assert redact_url("not a url") == "not a url"


def test_credential_looking_keys_are_redacted_at_any_depth() -> None:
    value = {"apiKey": "k", "nested": {"accessToken": "t", "keep": "v"}, "list": [{"password": "p"}]}
    assert redact_json(value) == {
        "apiKey": REDACTED,
        "nested": {"accessToken": REDACTED, "keep": "v"},
        "list": [{"password": REDACTED}],
    }


@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), min_size=1))
def test_a_password_in_a_url_never_survives(password: str) -> None:
    secret = "S3CR3T" + password.replace("@", "").replace("/", "").replace(":", "")
    from urllib.parse import quote

    url = f"https://user:{quote(secret, safe='')}@host.example/path"
    assert quote(secret, safe="") not in redact_url(url)


@given(st.text())
def test_any_text_is_returned_or_redacted_without_an_error(text: str) -> None:
    assert isinstance(redact_url(text), str)
