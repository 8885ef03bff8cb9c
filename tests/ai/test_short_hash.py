"""Tests for tau.ai.short_hash: ids hash exactly as pi's shortHash does."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tau.ai.short_hash import short_hash

# Outputs of shortHash from the published @mariozechner/pi-ai 0.73.1 (dist/utils/hash.js), run with node.
PI_HASHES = [
    ("", "k4n83c7h0j2b"),
    ("a", "m8735310ae7sx"),
    ("hello world", "n7rb4n1m39uz8"),
    ("call_abc|fc_0123456789+/=", "15hdr1tlth3o6"),
    ("🙈 emoji", "1mhtxh71ma01wf"),
    ("\ud83d lone", "vd93coy8x17n"),
    ("x" * 500, "130aesn1aldl4j"),
    ("msg_" + "Z" * 80, "slmjhkzqcv08"),
    ("naïve café", "j9pefc144fbub"),
]


@pytest.mark.parametrize(("text", "expected"), PI_HASHES)
def test_the_hash_equals_pis_output(text: str, expected: str) -> None:
    assert short_hash(text) == expected


@given(st.text())
def test_the_hash_is_short_lowercase_base36(text: str) -> None:
    digest = short_hash(text)
    assert 2 <= len(digest) <= 14
    assert all(c in "0123456789abcdefghijklmnopqrstuvwxyz" for c in digest)


def test_an_astral_character_hashes_as_its_utf16_surrogate_pair() -> None:
    assert short_hash("🙈") == short_hash("\ud83d\ude48")
