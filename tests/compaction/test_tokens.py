"""Token accounting (spec 50 §2, §3.1, §3.3; test cases 1–9, 34, 35)."""

from __future__ import annotations

from tau.ai.overflow import is_context_overflow
from tau.ai.types import TextContent, Usage, UserMessage
from tau.compaction import (
    CompactionSettings,
    calculate_context_tokens,
    estimate_context_tokens,
    estimate_tokens,
    get_last_assistant_usage,
    should_compact,
)
from tau.compaction.tokens import js_json
from tau.session.messages import BranchSummaryMessage, CompactionSummaryMessage, CustomMessage

from .conftest import assistant, bash, chain, tool_result, usage, user


def test_1_reported_total_is_the_context_size_and_zero_usage_is_zero() -> None:
    reported = Usage(input=1000, output=500, cache_read=200, cache_write=100, total_tokens=1800)
    assert calculate_context_tokens(reported) == 1800
    assert calculate_context_tokens(Usage()) == 0


def test_2_usage_without_a_total_sums_its_four_counts() -> None:
    assert calculate_context_tokens(Usage(input=1000, output=500, cache_read=200, cache_write=100)) == 1800


def test_3_user_text_counts_utf16_units_and_images_count_nothing() -> None:
    assert estimate_tokens(user("abcde")) == 2
    assert estimate_tokens(user("😀")) == 1
    assert estimate_tokens(user("😀😀😀")) == 2  # 6 units
    with_image = UserMessage([TextContent("abcd"), *tool_result("", images=1).content])
    assert estimate_tokens(with_image) == 1


def test_4_tool_result_images_count_4800_chars_each() -> None:
    assert estimate_tokens(tool_result("0123456789", images=1)) == 1203
    assert estimate_tokens(CustomMessage("note", "x" * 8)) == 2


def test_5_tool_calls_count_name_and_compact_json_with_javascript_numbers() -> None:
    call = assistant("", calls=[("read", {"path": "src/a.ts"})])
    assert estimate_tokens(call) == 6  # "read" + '{"path":"src/a.ts"}' = 4 + 19 = 23 chars
    assert js_json({"n": 1.0, "m": [0.5, 1e21, 1e-7], "s": "é"}) == '{"n":1,"m":[0.5,1e+21,1e-7],"s":"é"}'
    assert estimate_tokens(assistant("", calls=[("f", {"x": 1.0})])) == 2  # 'f{"x":1}' = 8 chars
    assert estimate_tokens(assistant("abcd", thinking="efgh")) == 2


def test_6_shell_runs_and_summaries() -> None:
    assert estimate_tokens(bash("ls", "abcdefg")) == 3  # 9 chars
    assert estimate_tokens(BranchSummaryMessage("x" * 9, "e0")) == 3
    assert estimate_tokens(CompactionSummaryMessage("x" * 8, 10)) == 2


def test_7_the_estimate_is_anchored_on_the_last_good_reply() -> None:
    good = assistant("x", reported=Usage(total_tokens=500))
    failed = assistant("", stop_reason="error", error="boom", reported=Usage(total_tokens=9999))
    aborted = assistant("", stop_reason="aborted", reported=Usage(total_tokens=9999))
    messages = [user("q"), good, user("x" * 40), failed, aborted]
    estimate = estimate_context_tokens(messages)
    assert estimate.last_usage_index == 1
    assert estimate.usage_tokens == 500
    assert estimate.trailing_tokens == 10 + 0 + 0
    assert estimate.tokens == 510

    zero = estimate_context_tokens([user("q"), assistant("x" * 8)])
    assert (zero.last_usage_index, zero.tokens) == (1, 0)  # a zero usage still anchors

    none = estimate_context_tokens([user("x" * 8), failed])
    assert none.last_usage_index is None
    assert none.tokens == none.trailing_tokens == 2 and none.usage_tokens == 0


def test_8_last_assistant_usage_skips_aborted_replies() -> None:
    entries = chain(
        user(), assistant(reported=Usage(total_tokens=7)), user(), assistant(stop_reason="aborted")
    )
    found = get_last_assistant_usage(entries)
    assert found is not None and found.total_tokens == 7
    assert get_last_assistant_usage(chain(user(), "model_change")) is None


def test_9_compaction_triggers_strictly_above_window_minus_reserve() -> None:
    settings = CompactionSettings(reserve_tokens=10_000)
    assert should_compact(95_000, 100_000, settings)
    assert not should_compact(89_000, 100_000, settings)
    assert not should_compact(90_000, 100_000, settings)
    assert not should_compact(95_000, 100_000, CompactionSettings(enabled=False, reserve_tokens=10_000))


def test_34_throttling_is_not_overflow_but_too_long_prompts_are() -> None:
    def failed(text: str) -> bool:
        return is_context_overflow(assistant("", stop_reason="error", error=text))

    assert not failed("Throttling error: Too many tokens, please wait before trying again.")
    assert not failed("You have hit the rate limit: too many tokens per minute")
    assert failed("prompt is too long: 213462 tokens > 200000 maximum")
    assert failed("413 status code (no body)")


def test_35_silent_overflow_and_truncating_servers() -> None:
    silent = assistant("ok", reported=Usage(input=7000, cache_read=1500))
    assert is_context_overflow(silent, 8000)
    truncated = assistant("", stop_reason="length", reported=Usage(input=7950, output=0))
    assert is_context_overflow(truncated, 8000)
    assert not is_context_overflow(assistant("", stop_reason="length", reported=Usage(input=7000)), 8000)


def test_the_projected_estimate_trusts_a_usage_only_when_no_rewrite_came_after_it() -> None:
    """pi 1.6's estimateProjectedContextTokens, the mid-run measure: the last non-zero usage plus
    what follows, unless a compaction or context_edit entry came after that reply."""
    from tau.compaction.tokens import estimate_projected_context_tokens
    from tau.session.manager import SessionManager
    from tau.session.messages import SystemMessage

    session = SessionManager.in_memory()
    session.append_message(SystemMessage(content="p" * 40))
    session.append_message(user("abcd" * 10))
    reply = assistant("x" * 8, reported=usage(900))
    reply_id = session.append_message(reply)
    session.append_message(tool_result("y" * 8))
    session.append_message(assistant("z", reported=usage(0)))  # a zero usage is not a measure

    def projected() -> tuple[int, int | None]:
        messages = session.build_session_context(system_messages=True).messages
        estimate = estimate_projected_context_tokens(messages, session.get_branch())
        return estimate.tokens, estimate.last_usage_index

    assert projected() == (900 + 2 + 1, 2)  # the usage, then the tool result and the last reply
    session.append_context_edit(reply_id, {"content": "short"})
    # The reply's usage measured another context: everything estimated, the prompt once.
    assert projected() == (10 + 10 + 2 + 2 + 1, None)
