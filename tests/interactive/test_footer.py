"""The footer's numbers (spec 70 §2.5, cases 29-31) and the prompt-cache hit rate."""

from __future__ import annotations

from pathlib import Path

from tau.ai.types import AssistantMessage, Cost, TextContent, Usage, UserMessage
from tau.modes.interactive.footer import FooterInfo, UsageTotals, build_footer, git_branch, usage_totals
from tau.modes.interactive.render.format import format_tokens
from tau.runtime.context_usage import ContextUsage
from tau.session import SessionManager


def _text(lines: list[list[tuple[str, str]]]) -> list[str]:
    return ["".join(text for _, text in line) for line in lines]


def _reply(text: str, **usage: int) -> AssistantMessage:
    cost = Cost(total=usage.pop("cost_milli", 0) / 1000)
    return AssistantMessage(
        [TextContent(text)],
        api="openai-completions",
        provider="local",
        model="m",
        usage=Usage(**usage, cost=cost),
    )


def test_token_counts_are_formatted_like_pi() -> None:
    assert [format_tokens(n) for n in (999, 1500, 42_000, 1_200_000, 15_000_000)] == [
        "999",
        "1.5k",
        "42k",
        "1.2M",
        "15M",
    ]


def test_the_usage_line_shows_each_nonzero_count_and_the_cost() -> None:
    totals = UsageTotals(input=1500, output=42_000, cache_read=0, cache_write=0, cost=0.1234)
    line = _text(build_footer(FooterInfo("/w", totals, None, "gpt-x"), 80))[1]
    assert line.startswith("↑1.5k ↓42k $0.123")
    assert "R" not in line.split("$")[0] and line.endswith("gpt-x")


def test_context_shows_a_question_mark_right_after_compaction_and_auto_only_when_on() -> None:
    unknown = FooterInfo("/w", UsageTotals(), ContextUsage(None, 200_000, None), "m", auto_compaction=True)
    assert "?/200k (auto)" in _text(build_footer(unknown, 80))[1]
    known = FooterInfo("/w", UsageTotals(), ContextUsage(50_000, 200_000, 25.0), "m", auto_compaction=False)
    line = _text(build_footer(known, 80))[1]
    assert "25.0%/200k" in line and "(auto)" not in line


def test_context_use_turns_to_warning_and_error_colours() -> None:
    def style_of(percent: float) -> str:
        info = FooterInfo("/w", UsageTotals(), ContextUsage(1, 100_000, percent), "m")
        return next(style for style, text in build_footer(info, 80)[1] if "%/" in text)

    assert style_of(50.0) == "class:footer"
    assert style_of(75.0) == "class:footer.warning"
    assert style_of(95.0) == "class:footer.error"


def test_totals_count_every_branch_and_replies_before_a_compaction(tmp_path: Path) -> None:
    manager = SessionManager.in_memory(str(tmp_path))
    manager.append_message(UserMessage("one"))
    first = manager.append_message(_reply("a", input=100, output=10))
    manager.append_compaction("summary", first, 5000)
    manager.append_message(_reply("b", input=200, output=20))
    manager.branch(first)
    manager.append_message(_reply("c", input=300, output=30))
    totals = usage_totals(manager.get_entries())
    assert (totals.input, totals.output) == (600, 60)


def test_the_cache_hit_rate_is_cache_reads_over_all_prompt_tokens() -> None:
    totals = UsageTotals(input=1000, cache_read=3000, cache_write=0)
    assert totals.cache_hit_rate == 0.75
    assert UsageTotals(input=1000).cache_hit_rate is None
    line = _text(build_footer(FooterInfo("/w", totals, None, "m"), 80))[1]
    assert "cache 75%" in line


def test_the_location_line_has_home_as_tilde_the_branch_and_the_name(
    monkeypatch: object, tmp_path: Path
) -> None:
    import os

    home = os.path.expanduser("~")
    info = FooterInfo(
        os.path.join(home, "proj"), UsageTotals(), None, "m", git_branch="main", session_name="fixes"
    )
    assert _text(build_footer(info, 80))[0] == "~/proj (main) • fixes"


def test_the_model_and_thinking_level_sit_on_the_right() -> None:
    info = FooterInfo("/w", UsageTotals(input=5), None, "claude", reasoning=True, thinking_level="high")
    line = _text(build_footer(info, 40))[1]
    assert line.endswith("claude • high") and len(line) == 40
    off = FooterInfo("/w", UsageTotals(), None, "claude", reasoning=True, thinking_level="off")
    assert _text(build_footer(off, 40))[1].endswith("claude • thinking off")


def test_extension_statuses_form_a_third_line_sorted_by_key() -> None:
    info = FooterInfo("/w", UsageTotals(), None, "m", statuses={"b": "second", "a": "first"})
    assert _text(build_footer(info, 80))[2] == "first  second"


def test_git_branch_reads_head_from_a_parent_folder(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "HEAD").write_text("ref: refs/heads/feature/x\n")
    (tmp_path / "sub").mkdir()
    assert git_branch(str(tmp_path / "sub")) == "feature/x"
    (tmp_path / ".git" / "HEAD").write_text("0123456789abcdef\n")
    assert git_branch(str(tmp_path)) == "0123456"


def test_the_location_line_names_the_sandbox_mode_only_when_commands_are_fenced() -> None:
    fenced = FooterInfo("/w", UsageTotals(), None, "m", git_branch="main", sandbox="workspace-write")
    assert _text(build_footer(fenced, 80))[0] == "/w (main) • sandbox: workspace-write"
    assert "sandbox" not in _text(build_footer(FooterInfo("/w", UsageTotals(), None, "m"), 80))[0]
