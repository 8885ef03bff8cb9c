"""Fuzzy matching for pickers and @ file references."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from tau.modes.interactive.fuzzy import fuzzy_filter, fuzzy_score, pi_fuzzy_filter


def test_a_subsequence_matches_and_a_missing_letter_does_not() -> None:
    assert fuzzy_score("agsn", "src/agent_session.py") is not None
    assert fuzzy_score("xyz", "src/agent_session.py") is None


def test_substring_and_file_name_matches_rank_first() -> None:
    files = ["docs/session-notes.md", "src/tau/session/manager.py", "src/tau/runtime/agent_session.py"]
    assert fuzzy_filter("manager", files, lambda f: f)[0] == "src/tau/session/manager.py"
    assert fuzzy_filter("agent_session", files, lambda f: f) == ["src/tau/runtime/agent_session.py"]


def test_every_word_of_the_query_must_match() -> None:
    models = ["anthropic/claude-sonnet-4", "openai/gpt-5", "anthropic/claude-haiku"]
    assert fuzzy_filter("claude son", models, lambda m: m) == ["anthropic/claude-sonnet-4"]


def test_an_empty_query_keeps_the_order() -> None:
    assert fuzzy_filter("", ["b", "a", "c"], lambda s: s) == ["b", "a", "c"]


@given(st.text(max_size=30), st.lists(st.text(max_size=30), max_size=20))
def test_every_result_contains_the_query_letters_in_order(query: str, items: list[str]) -> None:
    for item in fuzzy_filter(query, items, lambda s: s):
        lowered = item.lower()
        for word in query.lower().split():
            position = 0
            for char in word:
                position = lowered.find(char, position) + 1
                assert position > 0


def test_pi_fuzzy_filter_ranks_as_pi_16s_fuzzy_filter() -> None:
    names = ["openrouter openrouter/anthropic/claude-opus", "claude-opus-4", "gpt-4o", "4gpt", "nothing"]
    # a contiguous occurrence beats the greedy scatter over "openrouter"; the word start ranks first
    assert pi_fuzzy_filter("opus", names, str) == [
        "claude-opus-4",
        "openrouter openrouter/anthropic/claude-opus",
    ]
    # letters-then-digits also finds digits-then-letters (a contiguous swapped match can outrank a gapped direct one);
    # every expectation here is what pi 1.6's fuzzyFilter answers
    assert pi_fuzzy_filter("gpt4", names, str) == ["4gpt", "gpt-4o"]
    assert pi_fuzzy_filter("gpt4", ["4gpt-mini", "gpt-4o"], str) == ["4gpt-mini", "gpt-4o"]
    # tokens split on spaces and slashes must all match; an exact text ranks first
    assert pi_fuzzy_filter("claude/4", names, str) == ["claude-opus-4"]
    assert pi_fuzzy_filter("4gpt", ["4gpt-x", "4gpt"], str) == ["4gpt", "4gpt-x"]
    assert pi_fuzzy_filter("  ", names, str) == names
