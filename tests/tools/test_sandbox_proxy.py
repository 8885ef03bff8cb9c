"""Which hosts the sandbox's proxy lets fenced commands reach (``sandbox.network`` as a list)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from tau.tools.sandbox_proxy import HostList


def test_a_listed_name_is_allowed_on_any_port_and_others_are_not() -> None:
    hosts = HostList(["pypi.org", "127.0.0.1"])
    assert hosts.allows("pypi.org", 443) and hosts.allows("PyPI.org.", 80) and hosts.allows("127.0.0.1", 8080)
    assert not hosts.allows("files.pypi.org", 443) and not hosts.allows("localhost", 8080)


def test_a_wildcard_allows_the_sub_domains_but_not_the_domain() -> None:
    hosts = HostList(["*.github.com"])
    assert hosts.allows("api.github.com", 443) and hosts.allows("a.b.github.com", 443)
    assert not hosts.allows("github.com", 443) and not hosts.allows("evilgithub.com", 443)


def test_a_port_in_the_entry_allows_that_port_only() -> None:
    hosts = HostList(["example.org:8443", "[::1]:80"])
    assert hosts.allows("example.org", 8443) and not hosts.allows("example.org", 443)
    assert hosts.allows("::1", 80) and not hosts.allows("::1", 81)


@given(
    entries=st.lists(st.text(max_size=30), max_size=4), host=st.text(max_size=30), port=st.integers(0, 65535)
)
def test_any_entry_text_is_taken_without_an_exception(entries: list[str], host: str, port: int) -> None:
    allowed = HostList(entries).allows(host, port)
    assert allowed is False or (host.strip(".") and any(entry.strip() for entry in entries))
