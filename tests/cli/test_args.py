"""Command-line parsing with pi's semantics (spec 70 §8, tests 1-8)."""

from __future__ import annotations

from tau.cli.args import parse_args


def test_version_and_help_are_both_recorded_with_the_message() -> None:
    args = parse_args(["--version", "--help", "msg"])
    assert args.version and args.help and args.messages == ["msg"]


def test_print_takes_the_next_argument_as_the_first_message() -> None:
    args = parse_args(["-p", "hi"])
    assert args.print and args.messages == ["hi"]


def test_print_leaves_a_file_argument_alone() -> None:
    args = parse_args(["-p", "@f.txt"])
    assert args.print and args.messages == [] and args.file_args == ["f.txt"]


def test_print_does_not_eat_a_following_flag() -> None:
    args = parse_args(["-p", "--model", "x"])
    assert args.print and args.messages == [] and args.model == "x"


def test_print_accepts_a_message_that_starts_with_three_dashes() -> None:
    assert parse_args(["-p", "--- a yaml doc"]).messages == ["--- a yaml doc"]


def test_an_unknown_mode_is_an_error_and_known_modes_are_set() -> None:
    unknown = parse_args(["--mode", "foo"])
    assert unknown.mode is None and unknown.errors == [
        '--mode "foo" is not a mode; use text, json, rpc or acp'
    ]
    assert parse_args(["--mode", "rpc"]).mode == "rpc"
    assert parse_args(["--mode", "json"]).mode == "json"


def test_list_flags_are_split_on_commas_and_trimmed() -> None:
    assert parse_args(["--models", "a, b,c"]).models == ["a", "b", "c"]
    assert parse_args(["--tools", "read,,grep"]).tools == ["read", "grep"]


def test_repeatable_flags_accumulate_in_order() -> None:
    args = parse_args(
        [
            "-e",
            "x.py",
            "--extension",
            "y.py",
            "--skill",
            "s1",
            "--skill",
            "s2",
            "--append-system-prompt",
            "A",
            "--append-system-prompt",
            "B",
            "--prompt-template",
            "p",
            "--theme",
            "t",
        ]
    )
    assert args.extensions == ["x.py", "y.py"]
    assert args.skills == ["s1", "s2"]
    assert args.append_system_prompt == ["A", "B"]
    assert args.prompt_templates == ["p"] and args.themes == ["t"]


def test_a_bogus_thinking_level_is_a_warning_not_a_value() -> None:
    args = parse_args(["--thinking", "bogus"])
    assert args.thinking is None
    assert "bogus" in args.warnings[0]


def test_an_unknown_short_option_is_an_error() -> None:
    assert parse_args(["-x"]).errors == ["Unknown option: -x"]


def test_unknown_long_flags_are_kept_for_extensions() -> None:
    assert parse_args(["--plan"]).unknown_flags == {"plan": True}
    assert parse_args(["--plan=fast"]).unknown_flags == {"plan": "fast"}
    assert parse_args(["--plan", "fast"]).unknown_flags == {"plan": "fast"}
    args = parse_args(["--plan", "@x"])
    assert args.unknown_flags == {"plan": True} and args.file_args == ["x"]


def test_file_arguments_and_messages_are_separated() -> None:
    args = parse_args(["@a.png", "q"])
    assert args.file_args == ["a.png"] and args.messages == ["q"]


def test_list_models_takes_an_optional_search() -> None:
    assert parse_args(["--list-models", "sonnet"]).list_models_search == "sonnet"
    args = parse_args(["--list-models", "-p"])
    assert args.list_models and args.list_models_search is None and args.print


def test_a_value_flag_at_the_end_is_an_error() -> None:
    assert parse_args(["--model"]).errors == ["--model needs a value"]


def test_short_aliases_map_to_their_flags() -> None:
    args = parse_args(["-c", "-nc", "-nt", "-t", "read"])
    assert args.continue_session and args.no_context_files and args.no_tools and args.tools == ["read"]


def test_a_saved_session_flag_with_no_session_is_an_error() -> None:
    assert parse_args(["-c", "--no-session"]).errors == [
        "-c opens a saved session; it cannot be combined with --no-session"
    ]
    assert len(parse_args(["--no-session", "--session", "abc"]).errors) == 1
    assert parse_args(["--no-session", "-p", "hi"]).errors == []


def test_tools_with_no_tools_is_no_warning() -> None:
    # As in pi 1.6, --no-tools only turns off the defaults: --tools still names what is active.
    assert parse_args(["--no-tools", "--tools", "read"]).warnings == []


def test_tools_mixing_names_and_modifiers_is_an_error() -> None:
    assert parse_args(["--tools", "read,+grep"]).errors == [
        "--tools: use either tool names and patterns, or only +name/-name entries, not both"
    ]
    assert parse_args(["-t", "+gr*"]).errors == [
        "-t: +name/-name entries take exact tool names, not patterns: +gr*"
    ]


def test_export_with_more_than_one_output_path_is_an_error() -> None:
    assert parse_args(["--export", "s.jsonl", "a.html", "b.html"]).errors == [
        "--export takes a session file and at most one output path"
    ]
    assert parse_args(["--export", "s.jsonl", "a.html"]).errors == []
