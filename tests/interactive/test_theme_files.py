"""pi's theme files loaded as tau themes: the colour forms, and a package's theme in the TUI (issue #16)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from tau_command import TauCommand
from terminal import ENTER, Terminal

from tau.modes.interactive.render.theme_colors import to_rich_color
from tau.modes.interactive.render.theme_files import ThemeFileError, discover_theme_files, load_theme_file
from tau.testing.fake_llm import Turn

ROLES = [
    "accent", "muted", "dim", "text", "thinkingText", "userMessageBg", "customMessageBg",
    "customMessageLabel", "toolTitle", "toolPendingBg", "toolSuccessBg", "toolErrorBg", "toolOutput",
    "error", "warning", "success", "toolDiffAdded", "toolDiffRemoved", "toolDiffContext", "bashMode",
    "thinkingOff", "thinkingMinimal", "thinkingLow", "thinkingMedium", "thinkingHigh", "thinkingXhigh",
    "mdHeading", "mdLink", "mdLinkUrl", "mdCode", "mdCodeBlockBorder", "mdQuote", "mdListBullet", "mdHr",
]  # fmt: skip


def _theme(name: str, **colors: Any) -> dict[str, Any]:
    return {
        "name": name,
        "vars": {"sea": "okhsl(232 54% 67%)", "deep": "sea"},
        "colors": {**{role: "deep" for role in ROLES}, **colors},
    }


@pytest.mark.parametrize(
    ("value", "expected"),
    [  # the hex values are what pi 1.6's own colour code gives for the same input
        ("okhsl(232 54% 67%)", "#69add0"),
        ("okhsl(233 41% 24%)", "#213b49"),
        ("okhsl(295 100% 50%)", "#8a37ff"),
        ("oklch(62% 0.1 200)", "#1c989e"),
        ("oklch(70% 0.3 30)", "#ff6551"),  # out of sRGB: chroma lowered, as pi maps it
        ("#0af", "#00aaff"),
        (39, "color(39)"),
        ("", "default"),
    ],
)
def test_each_of_pis_colour_forms_becomes_the_colour_pi_draws(value: object, expected: str) -> None:
    assert to_rich_color(value) == expected


def test_a_theme_file_maps_pis_roles_with_variables_followed_through_chains(tmp_path: Path) -> None:
    path = tmp_path / "ocean.json"
    path.write_text(json.dumps(_theme("ocean", userMessageBg=22, mdHeading="#fff")))
    theme = load_theme_file(str(path))
    assert (theme.name, theme.accent, theme.user_bg) == ("ocean", "#69add0", "color(22)")
    assert theme.md_heading == "bold #ffffff"
    assert theme.code_theme == "monokai"  # a light text colour: a dark theme


def test_a_theme_without_appearance_on_a_light_background_is_a_light_theme(tmp_path: Path) -> None:
    path = tmp_path / "paper.json"
    path.write_text(json.dumps(_theme("paper", userMessageBg="okhsl(90 20% 95%)", text="#222")))
    assert load_theme_file(str(path)).code_theme == "friendly"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"colors": {"accent": "#fff"}}, 'the colour "muted" is missing'),
        ({"vars": {"a": "b", "b": "a"}, "colors": {**{r: "a" for r in ROLES}}}, "go round in a circle"),
        ({"colors": {**{r: "nowhere" for r in ROLES}}}, "not a colour: 'nowhere'"),
        ({"name": "system"}, '"name" must be'),
    ],
)
def test_a_theme_file_tau_cannot_use_is_one_line_naming_the_file(
    tmp_path: Path, change: dict[str, Any], message: str
) -> None:
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({**_theme("bad"), **change}))
    with pytest.raises(ThemeFileError) as error:
        load_theme_file(str(path))
    assert str(error.value).startswith(f"theme {path}: ") and message in str(error.value)
    assert "\n" not in str(error.value)


def test_a_packages_theme_is_chosen_with_use_theme_and_a_broken_one_is_a_notice(
    tau: TauCommand, tmp_path: Path
) -> None:
    package = tmp_path / "pkg"
    (package / "themes").mkdir(parents=True)
    (package / "themes" / "ocean.json").write_text(json.dumps(_theme("ocean", userMessageBg=22)))
    (tau.agent_dir / "themes").mkdir()
    (tau.agent_dir / "themes" / "broken.json").write_text("{ nope")
    (tau.agent_dir / "settings.json").write_text(json.dumps({"packages": [str(package)]}))
    tau.server.add(Turn(text="done"))
    args = ["--provider", "local", "--model", "fake-model", "--use-theme", "ocean"]
    terminal = Terminal([sys.executable, "-m", "tau", *args], cwd=str(tau.work), env=tau.env)
    try:
        terminal.wait_for("fake-model")
        terminal.wait_for("cannot read it: Expecting property name")
        terminal.type("hello there")
        terminal.send(ENTER)
        terminal.wait_for("done")
        assert b"48;5;22m" in terminal.raw  # the user message on the theme's background
    finally:
        terminal.close()


def test_a_trusted_projects_tau_and_pi_theme_folders_are_read_tau_first(tmp_path: Path) -> None:
    agent, cwd = tmp_path / "agent", tmp_path / "work"
    files = [cwd / ".tau" / "themes" / "a.json", cwd / ".pi" / "themes" / "a.json"]
    for file in files:
        file.parent.mkdir(parents=True)
        file.write_text(json.dumps(_theme("a")))
    kwargs: dict[str, Any] = {"setting_paths": (), "extra": ()}
    trusted = discover_theme_files(str(agent), str(cwd), project_trusted=True, **kwargs)
    assert trusted == [str(f) for f in files]  # the first of a name is registered, the other reported
    assert discover_theme_files(str(agent), str(cwd), project_trusted=False, **kwargs) == []
