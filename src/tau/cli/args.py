"""Command-line arguments with pi's semantics.

pi's parser is not argparse-shaped: ``-p`` takes an optional message, ``@path`` arguments are files,
list flags accumulate, unknown long flags are kept for extensions (``--plan``, ``--plan=fast``,
``--plan fast``; one that no extension registers is an error later), and ``--`` ends the options. So the parser is a small loop over the arguments, written to match that behaviour.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (``tau --version`` loads none)
if TYPE_CHECKING:
    from typing import Literal

    Mode = Literal["text", "json", "rpc", "acp"]
SANDBOX_MODES = ("off", "read-only", "workspace-write")  # as tau.tools.sandbox (not imported at start)
THINKING_LEVELS = ("off", "minimal", "low", "medium", "high", "xhigh", "max")
RESERVED_COMMANDS = frozenset({"install", "remove", "uninstall", "update", "list", "config"})


# A plain class, neither a msgspec struct nor a dataclass: ``tau --version`` then loads neither
# msgspec (14 ms of its start) nor dataclasses with the inspect, ast and dis modules it imports (about
# 30 M instructions, a fifth of that start). The lists are made per instance in ``__init__``.
class Args:
    """Everything the command line said. ``None`` means "not given"."""

    help: bool = False
    version: bool = False
    mode: Mode | None = None
    print: bool = False
    continue_session: bool = False
    resume: bool = False
    session: str | None = None
    session_id: str | None = None
    name: str | None = None
    fork: str | None = None
    session_dir: str | None = None
    no_session: bool = False
    provider: str | None = None
    model: str | None = None
    api_key: str | None = None
    models: list[str] | None = None
    thinking: str | None = None
    system_prompt: str | None = None
    append_system_prompt: list[str]
    tools: list[str] | None = None
    exclude_tools: list[str]
    no_tools: bool = False
    no_builtin_tools: bool = False
    extensions: list[str]
    no_extensions: bool = False
    no_mcp: bool = False
    skills: list[str]
    no_skills: bool = False
    prompt_templates: list[str]
    no_prompt_templates: bool = False
    themes: list[str]
    tui_mode: str | None = None
    """``--tui-mode regular|fullscreen``: the terminal UI's mode for this run."""
    use_theme: str | None = None
    no_themes: bool = False
    no_context_files: bool = False
    sandbox: str | None = None
    """``--sandbox off|read-only|workspace-write``: the fence of the agent's commands for this run."""
    export: str | None = None
    list_models: bool = False
    list_models_search: str | None = None
    verbose: bool = False
    offline: bool = False
    project_trust: bool | None = None
    """``-a`` / ``--approve`` (True) or ``-na`` / ``--no-approve`` (False): trust for this run only."""
    messages: list[str]
    file_args: list[str]
    unknown_flags: dict[str, str | bool]
    warnings: list[str]
    errors: list[str]

    def __init__(self) -> None:
        self.append_system_prompt = []
        self.exclude_tools = []
        self.extensions = []
        self.skills = []
        self.prompt_templates = []
        self.themes = []
        self.messages = []
        self.file_args = []
        self.unknown_flags = {}
        self.warnings = []
        self.errors = []

    def __repr__(self) -> str:
        given = ", ".join(f"{name}={value!r}" for name, value in vars(self).items())
        return f"Args({given})"


_BOOLEAN_FLAGS: dict[str, str] = {
    "--help": "help",
    "-h": "help",
    "--version": "version",
    "-v": "version",
    "--continue": "continue_session",
    "-c": "continue_session",
    "--resume": "resume",
    "-r": "resume",
    "--no-session": "no_session",
    "--no-tools": "no_tools",
    "-nt": "no_tools",
    "--no-builtin-tools": "no_builtin_tools",
    "-nbt": "no_builtin_tools",
    "--no-extensions": "no_extensions",
    "-ne": "no_extensions",
    "--no-mcp": "no_mcp",
    "--no-skills": "no_skills",
    "-ns": "no_skills",
    "--no-prompt-templates": "no_prompt_templates",
    "-np": "no_prompt_templates",
    "--no-themes": "no_themes",
    "--no-context-files": "no_context_files",
    "-nc": "no_context_files",
    "--verbose": "verbose",
    "--offline": "offline",
}

_TRUST_FLAGS: dict[str, bool] = {"--approve": True, "-a": True, "--no-approve": False, "-na": False}

_VALUE_FLAGS: dict[str, str] = {
    "--session": "session",
    "--session-id": "session_id",
    "--name": "name",
    "-n": "name",
    "--fork": "fork",
    "--session-dir": "session_dir",
    "--provider": "provider",
    "--model": "model",
    "--api-key": "api_key",
    "--system-prompt": "system_prompt",
    "--export": "export",
    "--use-theme": "use_theme",
}

_REPEATABLE_FLAGS: dict[str, str] = {
    "--append-system-prompt": "append_system_prompt",
    "--extension": "extensions",
    "-e": "extensions",
    "--skill": "skills",
    "--prompt-template": "prompt_templates",
    "--theme": "themes",
}


def _comma_list(value: str) -> list[str]:
    return [item.strip() for item in value.split(",") if item.strip()]


def _takes_value(arg: str) -> bool:
    """Whether ``arg`` may be consumed as a flag's value (not a flag, not a file argument)."""
    return not arg.startswith("-") and not arg.startswith("@")


def parse_args(argv: list[str]) -> Args:
    """Parse ``argv`` (without the program name). Problems land in ``errors`` / ``warnings``."""
    args = Args()
    i = 0
    while i < len(argv):
        arg = argv[i]
        following = argv[i + 1] if i + 1 < len(argv) else None
        if arg == "--":  # everything after it is a message or a file, even when it starts with "-"
            for rest in argv[i + 1 :]:
                if rest.startswith("@"):
                    args.file_args.append(rest[1:])
                else:
                    args.messages.append(rest)
            break
        if arg in _BOOLEAN_FLAGS:
            setattr(args, _BOOLEAN_FLAGS[arg], True)
        elif arg in _TRUST_FLAGS:
            args.project_trust = _TRUST_FLAGS[arg]
        elif (
            arg in _VALUE_FLAGS
            or arg in _REPEATABLE_FLAGS
            or arg
            in (
                "--mode",
                "--sandbox",
                "--tui-mode",
                "--models",
                "--tools",
                "-t",
                "--exclude-tools",
                "-xt",
                "--thinking",
            )
        ):
            if following is None:
                args.errors.append(f"{arg} needs a value")
                break
            i += 1
            _apply_value_flag(args, arg, following)
        elif arg in ("--print", "-p"):
            args.print = True
            # The next argument is the first message unless it is a flag or a file (a "---" text is fine).
            if (
                following is not None
                and not following.startswith("@")
                and (not following.startswith("-") or following.startswith("---"))
            ):
                args.messages.append(following)
                i += 1
        elif arg == "--list-models":
            args.list_models = True
            if following is not None and _takes_value(following):
                args.list_models_search = following
                i += 1
        elif arg.startswith("@"):
            args.file_args.append(arg[1:])
        elif arg.startswith("--") and len(arg) > 2:
            name, eq, value = arg[2:].partition("=")
            if eq:
                args.unknown_flags[name] = value
            elif following is not None and _takes_value(following):
                args.unknown_flags[name] = following
                i += 1
            else:
                args.unknown_flags[name] = True
        elif arg.startswith("-") and len(arg) > 1:
            args.errors.append(f"Unknown option: {arg}")
        else:
            args.messages.append(arg)
        i += 1
    if args.export is not None and len(args.messages) > 1:
        args.errors.append("--export takes a session file and at most one output path")
    if args.no_session:
        # Each of these opens a saved session, which --no-session says not to do.
        for flag, given in (("-c", args.continue_session), ("-r", args.resume), ("--session", args.session)):
            if given:
                args.errors.append(f"{flag} opens a saved session; it cannot be combined with --no-session")
    if args.session_id is not None:
        openers = (("--session", args.session), ("-c", args.continue_session), ("-r", args.resume))
        if clashing := [flag for flag, value in openers if value]:
            args.errors.append(f"--session-id cannot be combined with {', '.join(clashing)}")
    if args.name is not None and not args.name.strip():
        args.errors.append("--name needs a non-empty name")
    if any(e.startswith("builtin:") for e in args.extensions):
        from tau.runtime.builtin_extensions import builtin_name, missing_builtin

        for entry in args.extensions:
            builtin = builtin_name(entry)
            if builtin is not None and (why := missing_builtin(builtin)) is not None:
                args.errors.append(f"-e {entry if entry.isprintable() else repr(entry)}: {why}")
    return args


def _apply_value_flag(args: Args, flag: str, value: str) -> None:
    if flag == "--mode":
        if value in ("text", "json", "rpc", "acp"):
            args.mode = value  # type: ignore[assignment]
        else:
            args.errors.append(f'--mode "{value}" is not a mode; use text, json, rpc or acp')
    elif flag == "--tui-mode":
        if value in ("regular", "fullscreen"):
            args.tui_mode = value
        else:
            args.errors.append(f'--tui-mode "{value}" is not a mode; use fullscreen or regular')
    elif flag == "--sandbox":
        if value in SANDBOX_MODES:
            args.sandbox = value
        else:
            args.errors.append(f'--sandbox "{value}" is not a sandbox mode; use {", ".join(SANDBOX_MODES)}')
    elif flag == "--models":
        args.models = _comma_list(value)
    elif flag in ("--tools", "-t"):
        from tau.config.tool_selection import tool_list_error

        tools = _comma_list(value)
        problem = tool_list_error(tools)
        if problem is None:
            args.tools = tools
        else:
            args.errors.append(f"{flag}: {problem}")
    elif flag in ("--exclude-tools", "-xt"):
        args.exclude_tools = _comma_list(value)
    elif flag == "--thinking":
        if value in THINKING_LEVELS:
            args.thinking = value
        else:
            args.warnings.append(
                f'Invalid thinking level "{value}". Valid values: {", ".join(THINKING_LEVELS)}'
            )
    elif flag in _REPEATABLE_FLAGS:
        getattr(args, _REPEATABLE_FLAGS[flag]).append(value)
    else:
        setattr(args, _VALUE_FLAGS[flag], value)
