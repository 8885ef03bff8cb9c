"""Renderer registrations through the runner: tool renderer resolvers, Markdown transformers and
entry renderers (what the terminal UI and the HTML export ask for)."""

from __future__ import annotations

from typing import Any

import pytest

from tau.extensions import ExtensionRunner, ExtensionSource, MarkdownContext, ToolRenderer, load_extensions


async def loaded(project: Any, runners: list[ExtensionRunner], *setups: Any) -> ExtensionRunner:
    sources = [ExtensionSource.inline(f"ext{i}", s) for i, s in enumerate(setups, 1)]
    runner = await load_extensions(sources, cwd=str(project))
    runners.append(runner)
    return runner


async def test_tool_renderer_resolvers_run_in_load_order_and_next_reaches_the_tools_own(
    project, runners
) -> None:
    calls: list[str] = []

    def first(tau: Any) -> None:
        @tau.register_tool_renderer
        def fill_in(name: str, next: Any) -> Any:
            calls.append(f"first:{name}")
            return next() or ToolRenderer(render_call=lambda args, theme: "first")

    def second(tau: Any) -> None:
        tau.register_tool_renderer(lambda name, next: {"render_call": "second"} if name == "mine" else next())

    def broken(tau: Any) -> None:
        tau.register_tool_renderer(lambda name, next: 1 / 0)

    runner = await loaded(project, runners, first, broken, second)
    own = ToolRenderer(render_call=lambda args, theme: "own")
    assert runner.resolve_tool_renderer("mine", lambda: own) == ToolRenderer("second", None)
    assert runner.resolve_tool_renderer("other", lambda: own) is own
    fallback = runner.resolve_tool_renderer("ghost", lambda: None)
    assert fallback.render_call({}, None) == "first"
    assert calls == ["first:mine", "first:other", "first:ghost"]
    assert [r.event for r in runner.errors] == ["render"] * 3  # the broken one, passed over each time


async def test_markdown_transformers_chain_on_their_surfaces_only(project, runners) -> None:
    def upper(tau: Any) -> None:
        tau.register_markdown_transformer(lambda text, context: text.upper())

    def summaries(tau: Any) -> None:
        tau.register_markdown_transformer(
            lambda text, context: f"[{context.message_type}] {text}", message_types=["summary", "assistant"]
        )

    runner = await loaded(project, runners, upper, summaries)
    assert runner.transform_markdown("hi", MarkdownContext("assistant")) == "[assistant] HI"
    assert runner.transform_markdown("hi", MarkdownContext("user")) == "HI"
    assert runner.transform_markdown("hi", MarkdownContext("summary")) == "[summary] hi"
    assert runner.transform_markdown("hi", MarkdownContext("changelog")) == "hi"


async def test_an_unknown_markdown_surface_is_refused_where_it_is_registered(project, runners) -> None:
    problems: list[str] = []

    def setup(tau: Any) -> None:
        with pytest.raises(ValueError, match="unknown message types") as raised:
            tau.register_markdown_transformer(lambda text, context: text, message_types=["footer"])
        problems.append(str(raised.value))

    await loaded(project, runners, setup)
    assert problems and "'footer'" in problems[0]


async def test_the_first_extension_to_render_an_entry_type_keeps_it(project, runners) -> None:
    def first(tau: Any) -> None:
        tau.register_entry_renderer("card", lambda entry, options, theme: "first")

    def second(tau: Any) -> None:
        tau.register_entry_renderer("card", lambda entry, options, theme: "second")

    runner = await loaded(project, runners, first, second)
    assert runner.entry_renderer("card")(None, None, None) == "first"
    assert runner.entry_renderer("other") is None
    assert any("already rendered by extension 'ext1'" in d.message for d in runner.diagnostics)
