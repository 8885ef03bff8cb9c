"""The text of ``tau --help``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tau.extensions.types import FlagDefinition

HELP = """\
tau - a minimal, hackable coding agent for the terminal

Usage:
  tau [options] [--] [@files...] [messages...]
  tau auth login|logout|status|print-api-key|print-bearer-token|check   (see: tau auth --help)
  tau mcp add|remove|list|login|logout                                  (see: tau mcp --help)
  tau install|remove|list|update|config [<source>] [-l]                 (see: tau install --help)
  tau batch TASKS.jsonl --out DIR [--workers N] [--ray [ADDRESS]]       (see: tau batch --help)

Options:
  -p, --print [message]          Answer and exit (non-interactive); piped stdin is added.
                                 Without -p (and with a terminal) tau opens its terminal UI
  --mode text|json|rpc|acp       Output mode (json: one event per line; rpc: commands on stdin;
                                 acp: an Agent Client Protocol server for editors)
  --provider <name>              Provider of --model
  --model <pattern>              Model id, provider/id or fuzzy pattern, optional :<thinking>
  --api-key <key>                API key for the chosen model's provider (this run only)
  --thinking <level>             off, minimal, low, medium, high, xhigh, max
  --models <a,b,...>             Models to cycle through (globs work: "local/*", "*sonnet*")
  -c, --continue                 Continue the most recent session in this folder
  -r, --resume                   Pick a session to resume
  --session <path|id>            Open a session file, or a session by id prefix
  --session-id <id>              This folder's session with exactly this id, or a new one with it
  --fork <path|id>               Copy a session into a new one in this folder
  --session-dir <dir>            Where sessions are stored
  --no-session                   Keep nothing on disk
  -n, --name <name>              Display name of the session
  -t, --tools <a,b,...>          Only these tools (names or * patterns; read, bash, edit, write,
                                 grep, find, ls); only +name/-name entries edit the defaults
  -xt, --exclude-tools <a,b,...> Leave out these tools (names or * patterns)
  -nt, --no-tools                No tools by default
  -nbt, --no-builtin-tools       No built-in tools by default (extension tools stay)
  --system-prompt <text|file>    Replace the default system prompt
  --append-system-prompt <text|file>
                                 Append to the system prompt (repeatable)
  -nc, --no-context-files        Do not load AGENTS.md / CLAUDE.md
  -e, --extension <path|source>  Load an extension (repeatable); a package source (npm:, git:,
                                 pip:) loads that package for this run only (cached, not recorded)
  -ne, --no-extensions           Do not discover extensions
  --no-mcp                       Do not start the MCP servers of mcp.json (see: tau mcp --help)
  --skill <path>                 Load a skill (repeatable); -ns, --no-skills
  --prompt-template <path>       Load a prompt template (repeatable); -np, --no-prompt-templates
  --list-models [search]         List the models you can use and exit
  --export <session.jsonl> [out.html]
                                 Write a session as one self-contained HTML page and exit
  --theme <name|path>            A theme to use (system, the default; dark, light, a loaded one),
                                 or a pi theme file or folder to load (repeatable)
  --no-themes                    Do not load discovered theme files (--theme paths still load)
  --use-theme <name[/name]>      The theme to use for this run (default: the theme setting);
                                 light/dark: the first on a light terminal, the second on a dark one
  --tui-mode fullscreen|regular  The terminal UI on the whole screen, or inline in the scrollback
                                 (default: the tuiMode setting, else fullscreen)
  --sandbox <mode>               Fence the agent's commands: off, read-only, workspace-write
                                 (default: the sandbox setting; Linux, needs bubblewrap)
  -a, --approve                  Trust this folder's .tau extensions and settings for this run
  -na, --no-approve              Ignore this folder's .tau extensions and settings for this run
  --offline                      No network at start-up (also TAU_OFFLINE=1)
  --verbose                      Verbose start-up
  -v, --version                  Print the version and exit
  -h, --help                     Print this help and exit
  --                             End of options: the rest are messages and @files

Examples:
  tau                                        (the terminal UI; /hotkeys lists its keys)
  tau -p "List the Python files in src/"
  tau -c -p "Now add tests for it"
  tau --model anthropic/claude-sonnet-4-5:high "Refactor the parser"
  git diff | tau -p "Review this change"
  tau --mode json -p "Fix the failing test" > events.jsonl

Environment:
  TAU_AGENT_DIR        Configuration and sessions (default ~/.tau/agent)
  TAU_SESSION_DIR      Session storage (default <agent dir>/sessions)
  TAU_OFFLINE          1 = no network at start-up (pi's PI_OFFLINE too)
  TAU_CACHE_RETENTION  long = longer prompt caching where offered (pi's PI_CACHE_RETENTION too)
  TAU_PACKAGE_DIR      Where tau's README.md and CHANGELOG.md are (Nix/Guix store paths)
  TAU_CODEMODE_MAX_WORKERS, TAU_RADIUS_GATEWAY, TAU_SHARE_VIEWER_URL, TAU_TRUE_COLOR,
  TAU_TUI_ESC_TIMEOUT, TAU_CLEAR_ON_SHRINK, TAU_HARDWARE_CURSOR
                       pi's PI_* variables of the same names, read too; the TAU_ one wins
  LLAMA_BASE_URL, LLAMA_API_KEY
                       The llama.cpp router (provider llama.cpp, /llama)
  ANTHROPIC_API_KEY, OPENAI_API_KEY, GEMINI_API_KEY, OPENROUTER_API_KEY, GROQ_API_KEY, ...
                       Provider keys (or put them in <agent dir>/auth.json)
"""


def help_text(extension_flags: Sequence[FlagDefinition] = ()) -> str:
    """``HELP``, followed by the flags loaded extensions register (if any)."""
    if not extension_flags:
        return HELP
    lines = ["", "Extension flags:"]
    for flag in extension_flags:
        usage = f"--{flag.name}" + (" <value>" if flag.type == "string" else "")
        about = f"{flag.description} ({flag.extension})" if flag.description else f"({flag.extension})"
        lines.append(f"  {usage:<30} {about}" if len(usage) <= 30 else f"  {usage}\n  {'':<30} {about}")
    return HELP + "\n".join(lines) + "\n"
