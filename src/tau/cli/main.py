"""Start-up: parse the command line, open the session, build the runtime, hand over to a mode.

Every problem a user can cause (a bad flag, an unknown model, a missing key or file, a broken
config file) ends here as one line on stderr and exit code 1, never a traceback.
"""

from __future__ import annotations

import contextlib
import gc
import os
import sys

from tau import __version__
from tau.cli.args import Args, parse_args
from tau.errors import TauError

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing: see tau/__init__.py
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any, TextIO

    from tau.accounts.model_resolver import ScopedModel
    from tau.agent.tool import AgentTool
    from tau.ai.types import Model, ThinkingLevelOrOff
    from tau.cli.launch import Launch
    from tau.config.project_trust import ProjectTrust
    from tau.config.settings import SettingsManager
    from tau.extensions.context import TrustMode
    from tau.extensions.runner import ExtensionRunner
    from tau.runtime.runtime import AgentSessionRuntime
    from tau.runtime.services import AgentSessionServices, ExtensionOptions, ResourceOptions
    from tau.runtime.tool_registry import NoTools
    from tau.session.manager import SessionManager


class UsageError(TauError):
    """A problem with what the user asked for; printed as one line, exit code 1."""


def run(argv: list[str] | None = None, *, process_ends: bool = False) -> int:
    """The ``tau`` command in this process; ``process_ends`` when the process exits right after
    (the console script): what start-up froze then stays frozen, which spares the collection at
    exit a pass over it."""
    # Start-up builds long-lived objects only (modules, classes, settings, the catalogue, the
    # session): the collector's passes over them cost a tenth of a `tau -p`. It is switched back on,
    # with what start-up made frozen, when a mode takes over (_end_start_up).
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _run(argv)
    finally:
        if not process_ends:
            # What the run froze can be collected again: in a process that goes on after it
            # (tests, embedders), the run's garbage, its event loop among it, would stay for good.
            # (Unfreezing is O(1); counting the frozen objects first would walk every object of
            # the process, 12 ms in a test worker, on every run.)
            gc.unfreeze()
        if collecting:
            gc.enable()


def _end_start_up() -> None:
    """Collection on again for the run itself; what start-up made is frozen, so that later passes
    skip it. (Start-up leaves under a thousand objects in garbage cycles; frozen, they stay, once;
    a collection to free them first would cost as much as the pause saves.)"""
    gc.freeze()
    gc.enable()


def _run(argv: list[str] | None) -> int:
    _fill_closed_standard_fds()
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["auth"]:
        from tau.cli.auth_command import run_auth

        return run_auth(argv[1:])
    if argv[:1] == ["mcp"]:
        from tau.cli.mcp_command import run_mcp_command

        return run_mcp_command(argv[1:])
    if argv[:1] and argv[0] in ("install", "remove", "uninstall", "list", "update", "config"):
        from tau.cli.package_command import run_package_command

        return run_package_command(argv)
    if argv[:1] == ["batch"]:
        from tau.cli.batch_command import run_batch_command

        return run_batch_command(argv[1:])
    args = parse_args(argv)
    if args.version:
        return _write_stdout(f"tau {__version__}\n")
    for warning in args.warnings:
        print(f"tau: warning: {warning}", file=sys.stderr)
    if args.errors:  # as the extensions' flag problems: "tau: error: ...", pi's "Error: ..."
        for error in args.errors:
            print(f"tau: error: {error}", file=sys.stderr)
        return 1
    try:
        if args.help:
            return _write_stdout(_help_text(args))
        if args.export is not None:  # synchronous: no event loop to start for writing one page
            return _export(args.export, args.messages[0] if args.messages else None)
    except UsageError as exc:
        print(f"tau: {exc}", file=sys.stderr)
        return 1
    import asyncio

    try:
        return asyncio.run(_main_then_close_connections(args))
    except UsageError as exc:
        from tau.ai.redaction import redact

        print(f"tau: {redact(str(exc))}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


# ACP sessions are headless like RPC: extensions' trust questions get RPC's answer.
_TRUST_MODES: dict[str, TrustMode] = {
    "interactive": "tui",
    "text": "print",
    "json": "json",
    "rpc": "rpc",
    "acp": "rpc",
}


def _mode(args: Args) -> str:
    if args.mode in ("rpc", "acp"):
        return args.mode
    if args.mode == "json":
        return "json"
    if args.print or not sys.stdin.isatty():
        return "text"
    return "interactive"


def _fill_closed_standard_fds() -> None:
    """Open /dev/null on a closed stdin, stdout or stderr (``tau >&-``).

    Otherwise the next file tau opens gets that number, and a tool's subprocess would write its
    output into it. A closed stdin reads as empty and a closed stderr swallows the messages (Python
    would send them to stdout instead); ``sys.stdout`` stays ``None``, so a closed stdout is still
    seen and reported.
    """
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            devnull = os.open(os.devnull, os.O_RDWR)
            if devnull != fd:
                os.dup2(devnull, fd)
                os.close(devnull)
    if sys.stdin is None:
        sys.stdin = open(os.devnull)  # noqa: SIM115 - stays open as the process's stdin
    if sys.stderr is None:
        sys.stderr = open(os.devnull, "w")  # noqa: SIM115 - likewise


def _write_stdout(text: str) -> int:
    """Write a command's whole output; the exit code (141 when the reader is gone, 1 on another failure)."""
    from tau.modes.line_output import LineOutput

    output = LineOutput(sys.stdout)
    if output.write(text):
        return 0
    if output.message is not None:
        print(f"tau: {output.message}", file=sys.stderr)
    return output.exit_code


async def _main_then_close_connections(args: Args) -> int:
    """``_main``, then the kept-alive model connections of this loop closed: they belong to it, and
    a process that runs tau more than once (tests, embedders) would keep each run's open."""
    try:
        return await _main(args)
    finally:
        http = sys.modules.get("tau.ai.transport.http")  # not loaded: no connection was made
        if http is not None:
            await http.close_clients()


async def _main(args: Args) -> int:
    mode = _mode(args)
    if sys.stdout is None:
        raise UsageError("stdout is closed, so nothing could be shown; redirect it to a file or /dev/null")
    if args.offline:
        os.environ["TAU_OFFLINE"] = "1"
    if mode in ("rpc", "acp") and args.file_args:
        raise UsageError(f"@file arguments cannot be used with --mode {mode}; send files in prompt commands")
    if mode in ("rpc", "acp") and args.messages:
        raise UsageError(f"messages cannot be given on the command line with --mode {mode}; send prompts")
    if args.resume and mode != "interactive":
        raise UsageError("-r opens the session picker of the interactive mode; use --session <id> or -c here")
    output: int | TextIO | None = None  # the mode's own stdout: ACP's descriptor, the others' stream
    guard = None
    if mode != "interactive" and not args.list_models:
        # Before anything loads: what an extension prints as it is imported (or a process it starts
        # writes) must not land in the answer or among the protocol's lines.
        from tau.modes.stdout_guard import StdoutGuard

        guard = StdoutGuard(as_descriptor=mode == "acp")
        output = guard.descriptor if mode == "acp" else guard.stream
    try:
        return await _main_with_output(args, mode, output)
    finally:
        if guard is not None:
            guard.restore()


async def _main_with_output(args: Args, mode: str, output: int | TextIO | None) -> int:
    """The run, once the mode's own stdout (``output``) is set aside."""
    from tau.config.paths import agent_dir as default_agent_dir
    from tau.config.paths import make_private_dir

    cwd = os.getcwd()
    agent_dir = str(default_agent_dir())
    with contextlib.suppress(OSError):  # before anything is written into it; unwritable: reported later
        make_private_dir(default_agent_dir())
    from tau.config.settings import SettingsManager

    user_settings = SettingsManager.create(cwd, agent_dir, project=False)  # read once for both below
    _apply_http_proxy(user_settings)
    if any((":" in e and not os.path.exists(e)) or os.path.isdir(e) for e in args.extensions):  # cheap
        _add_temporary_packages(args, agent_dir)
    trust = _project_trust(args, agent_dir, user_settings)
    data_trusted, preloaded = await _data_settings_trust(args, mode, trust, cwd, agent_dir)
    session_manager = _open_session(args, cwd, agent_dir, project_data=data_trusted)
    try:
        return await _run_session(args, mode, session_manager, cwd, agent_dir, output, trust, preloaded)
    finally:
        _remove_unused_session_folder(session_manager.get_session_dir(), agent_dir)


def _add_temporary_packages(args: Args, agent_dir: str) -> None:
    """``-e npm:…`` / ``-e git:…`` / ``-e pip:…``: fetch the package into the cache and load what it
    offers for this run, as the command line's own paths (see ``tau.packages.temporary``)."""
    from tau.config.paths import is_offline
    from tau.packages.temporary import is_package_source, load_temporary_packages

    sources = [e for e in args.extensions if is_package_source(e)]
    if not sources:
        return
    found = load_temporary_packages(sources, agent_dir, offline=is_offline())
    for warning in found.warnings:
        print(f"tau: warning: {warning}", file=sys.stderr)
    args.extensions = [e for e in args.extensions if e not in sources] + found.extensions
    args.skills += found.skills
    args.prompt_templates += found.prompts
    args.themes += found.themes


async def _data_settings_trust(
    args: Args, mode: str, trust: ProjectTrust, cwd: str, agent_dir: str
) -> tuple[bool, tuple[str, ExtensionRunner] | None]:
    """Whether the project's settings that choose where data goes (``sessionDir``) may apply: only
    in a trusted folder, so trust is decided before the session opens when the project sets one
    that counts (neither ``--session-dir`` nor ``$TAU_SESSION_DIR`` overrides it). Also the
    extensions loaded to decide, with their folder, for the session to take over."""
    from tau.session.paths import SESSION_DIR_ENV

    if args.no_session or args.session_dir is not None or os.environ.get(SESSION_DIR_ENV):
        return False, None
    from tau.config.data_settings import data_location_settings, ignored_settings_warning

    keys = data_location_settings(cwd)
    if not keys:
        return False, None
    runner = await _decide_trust(args, mode, trust, cwd, agent_dir)
    preloaded = (cwd, runner) if runner is not None else None
    if trust.is_trusted(cwd):
        return True, preloaded
    if mode != "acp":  # ACP says it for each folder a session opens in
        print(f"tau: warning: {ignored_settings_warning(keys)}", file=sys.stderr)
    return False, preloaded


async def _decide_trust(
    args: Args, mode: str, trust: ProjectTrust, folder: str, agent_dir: str
) -> ExtensionRunner | None:
    """Let the user's extensions, then the terminal UI's question, decide ``folder``'s trust when
    nothing has yet; the extensions loaded to ask them (for the session to take over)."""
    preloaded = None
    if trust.asks_extensions(folder):
        from tau.cli.trust_extensions import decide_trust_by_extensions

        trust_mode: TrustMode = "print" if args.list_models else _TRUST_MODES[mode]
        preloaded = await decide_trust_by_extensions(
            folder, agent_dir, _extension_options(args), trust, trust_mode
        )
    if mode == "interactive" and not args.list_models and trust.needs_question(folder):
        from tau.modes.interactive.trust import ask_project_trust

        trust.answer(folder, await ask_project_trust(folder))
    return preloaded


async def _run_session(
    args: Args,
    mode: str,
    session_manager: SessionManager,
    cwd: str,
    agent_dir: str,
    output: int | TextIO | None,
    trust: ProjectTrust,
    decided: tuple[str, ExtensionRunner] | None,
) -> int:
    """The session's run; ``decided``: the extensions that decided a folder's trust already."""
    from tau.config.project_trust import canonical_folder

    for warning in session_manager.warnings:
        print(f"tau: warning: {warning}", file=sys.stderr)
    session_cwd = session_manager.get_cwd()
    preloaded = await _decide_trust(args, mode, trust, session_cwd, agent_dir)
    if (
        preloaded is None
        and decided is not None
        and canonical_folder(decided[0]) == canonical_folder(session_cwd)
    ):
        preloaded = decided[1]
    trusted = trust.is_trusted(session_cwd)
    for warning in trust.warnings:
        print(f"tau: warning: {warning}", file=sys.stderr)
    # Print mode sees the sandbox's start through just before the first request (below).
    later = mode in ("text", "json") and not args.list_models
    services = _create_services(
        args, session_cwd, agent_dir, project_trusted=trusted, preloaded=preloaded, await_sandbox=not later
    )
    for diagnostic in services.diagnostics:
        print(f"tau: {diagnostic.type}: {diagnostic.message}", file=sys.stderr)
    if any(d.type == "error" for d in services.diagnostics):
        return 1
    for warning in _startup_warnings(args, services):
        print(f"tau: warning: {warning}", file=sys.stderr)

    if args.list_models:
        import io

        from tau.cli.list_models import list_models

        table = io.StringIO()
        list_models(services.model_registry, args.list_models_search, table)
        return _write_stdout(table.getvalue())

    model, thinking = _resolve_model(args, services)
    no_tools: NoTools | None = "all" if args.no_tools else ("builtin" if args.no_builtin_tools else None)
    if mode in ("rpc", "interactive"):  # ACP ends it once its modules are imported
        _end_start_up()
    if mode in ("rpc", "acp", "interactive"):
        from tau.cli.launch import Launch

        launch = Launch(args, services, agent_dir, model, thinking, no_tools, trust)
        if mode == "rpc":
            assert output is not None and not isinstance(output, int)
            return await _run_rpc(launch, session_manager, output)
        if mode == "acp":
            assert isinstance(output, int)
            return await _run_acp(launch, output)
        return await _run_interactive(launch, session_manager, cwd)
    stdin_text = sys.stdin.read() if not sys.stdin.isatty() else None
    from tau.cli.initial_message import FileArgumentError, build_initial_message

    try:
        initial = build_initial_message(args.messages, args.file_args, stdin_text, cwd)
    except FileArgumentError as exc:
        raise UsageError(str(exc)) from None

    from tau.runtime.sdk import create_agent_session

    result = create_agent_session(
        services=services,
        session_manager=session_manager,
        model=model,
        thinking_level=thinking,
        scoped_models=_scoped_models(args, services),
        tools=args.tools,
        no_tools=no_tools,
        exclude_tools=args.exclude_tools,
    )
    session = result.session
    if session.model is None:  # the fallback message would say the same in other words
        raise UsageError(_no_model_message(services))
    if result.model_fallback_message:
        print(f"tau: {result.model_fallback_message}", file=sys.stderr)

    from tau.modes.print_mode import run_print_mode
    from tau.runtime.errors import AgentSessionError

    assert output is not None and not isinstance(output, int)
    _end_start_up()
    try:
        if (problem := services.sandbox.problem) is not None:  # before any request, as at start
            print(f"tau: error: {problem}", file=sys.stderr)
            return 1
        return await run_print_mode(
            session,
            mode="json" if mode == "json" else "text",
            initial_text=initial.text,
            initial_images=initial.images,
            messages=initial.remaining,
            out=output,
            err=sys.stderr,
        )
    except AgentSessionError as exc:
        raise UsageError(str(exc)) from None
    finally:
        await session.dispose()


def _remove_unused_session_folder(session_dir: str, agent_dir: str) -> None:
    """Take away the project's session folder under the agent dir if no session was written into it
    (no model, a bad flag, ``--list-models``), and the ``sessions`` folder if that leaves it empty.
    A folder the user chose (``--session-dir``, a ``--session`` path) is never touched."""
    root = os.path.join(agent_dir, "sessions")
    if os.path.dirname(os.path.abspath(session_dir)) != root:
        return
    for folder in (session_dir, root):
        try:
            os.rmdir(folder)  # only ever removes an empty folder
        except OSError:
            return


def _startup_warnings(args: Args, services: AgentSessionServices) -> list[str]:
    from tau.cli.checks import bare_variable_warnings, default_model_warning, unknown_tools_warning

    warnings: list[str | None] = [*bare_variable_warnings(services)]
    if args.tools is not None:
        warnings.append(unknown_tools_warning("--tools", args.tools, services))
    if args.exclude_tools:
        warnings.append(unknown_tools_warning("--exclude-tools", args.exclude_tools, services))
    if not args.model and not args.list_models:  # the setting is what picks the model
        warnings.append(default_model_warning(services))
    return [warning for warning in warnings if warning is not None]


def _export(session_file: str, output_path: str | None) -> int:
    """``tau --export in.jsonl [out.html]``: write the HTML page and say where; needs no model."""
    from tau.export import ExportError, export_session_html

    try:
        path = export_session_html(session_file, output_path)
    except ExportError as exc:
        raise UsageError(str(exc)) from None
    return _write_stdout(f"Exported to: {path}\n")


def _open_session(args: Args, cwd: str, agent_dir: str, *, project_data: bool) -> SessionManager:
    """The session of this run (``--name`` gives it its display name); ``project_data``: the
    folder is trusted, so its ``sessionDir`` setting applies."""
    if args.fork and (args.session or args.continue_session or args.no_session):
        raise UsageError("--fork cannot be combined with --session, -c or --no-session")
    manager = _open_session_manager(args, cwd, agent_dir, project_data)
    if args.name is not None:
        manager.append_session_info(args.name.strip())
    return manager


def _open_session_manager(args: Args, cwd: str, agent_dir: str, project_data: bool) -> SessionManager:
    from tau.cli.session_id import find_local_session, session_id_problem
    from tau.config.settings import SettingsManager
    from tau.session import SessionManager
    from tau.session.errors import SessionError, SessionWriteError
    from tau.session.paths import resolve_session_dir

    if args.session_id is not None and (problem := session_id_problem(args.session_id)) is not None:
        raise UsageError(problem)
    if args.no_session:
        manager = SessionManager.in_memory(cwd)
        if args.session_id is not None:
            manager.new_session(id=args.session_id)
        return manager
    settings_dir = SettingsManager.create(cwd, agent_dir, project=project_data).session_dir
    session_dir = resolve_session_dir(
        cwd, args.session_dir, settings_session_dir=settings_dir, agent_dir=agent_dir
    )
    try:
        existing = find_local_session(session_dir, args.session_id) if args.session_id is not None else None
        if args.fork or args.session:  # the listing only to find a named session
            from tau.session.listing import find_session, header_problem
        if args.fork:
            if existing is not None:
                raise UsageError(f"--session-id: a session with the id {args.session_id} already exists here")
            found = find_session(args.fork, cwd, session_dir, agent_dir=agent_dir)
            manager = _fork(found.path, cwd, session_dir, args.session_id)
        elif args.session:
            found = find_session(args.session, cwd, session_dir, agent_dir=agent_dir)
            folder = os.path.dirname(found.path)
            if not os.path.exists(found.path) and not os.path.isdir(folder):
                # A new session in a new folder is most likely a typo: it must not start a conversation.
                raise UsageError(f"no session file {found.path}: the folder {folder} does not exist")
            # Opening another kind of file would set it aside and start a session in its place.
            problem = header_problem(found.path) if os.path.isfile(found.path) else None
            if problem is not None and os.path.getsize(found.path) > 0:
                raise UsageError(f"--session {found.path}: {problem}; the file was left as it is")
            manager = SessionManager.open(found.path, session_dir if found.scope != "global" else None)
            stored_cwd = manager.get_cwd()
            if stored_cwd and not os.path.isdir(stored_cwd):
                raise UsageError(
                    f"the session's folder {stored_cwd} no longer exists; recreate it, or fork the "
                    f"session into this folder with: tau --fork {manager.get_session_id()[:8]}"
                )
        elif args.continue_session:
            manager = SessionManager.continue_recent(cwd, session_dir, agent_dir=agent_dir)
        elif existing is not None:
            manager = SessionManager.open(existing, session_dir)
        else:
            manager = SessionManager.create(cwd, session_dir, agent_dir=agent_dir)
            if args.session_id is not None:
                print(
                    f"tau: warning: no session of this folder has the id {args.session_id}; "
                    "starting a new one with it",
                    file=sys.stderr,
                )
                manager.new_session(id=args.session_id)
        manager.check_writable()  # before any reply is paid for
    except SessionWriteError as exc:
        raise UsageError(
            f"{exc}; fix that, choose another folder with --session-dir, or use --no-session"
        ) from None
    except SessionError as exc:
        raise UsageError(str(exc)) from None
    return manager


def _fork(source: str, cwd: str, session_dir: str, session_id: str | None) -> SessionManager:
    """A copy of the session in ``source`` for ``cwd``; with the given id, else a fresh one."""
    from tau.session import SessionManager

    if session_id is None:
        return SessionManager.fork_from(source, cwd, session_dir)
    from tau.session.forking import write_fork
    from tau.session.ids import IdSource

    path = write_fork(source, cwd, session_dir, IdSource(session_uuid=lambda: session_id))
    return SessionManager.open(path, session_dir)


def _text_or_file(flag: str, value: str) -> str:
    """A flag value that may name a file: its contents if it does, else the text itself.

    Bytes that are not UTF-8 become U+FFFD with a warning, as pi reads such a file; a file that
    cannot be read at all is an error rather than a prompt made of its path.
    """
    if not os.path.isfile(value):
        return value
    try:
        with open(value, "rb") as handle:
            data = handle.read()
    except OSError as exc:
        raise UsageError(f"cannot read the {flag} file {value}: {exc.strerror or exc}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = data.decode("utf-8", errors="replace")
        print(
            f"tau: warning: {flag} file {value} is not valid UTF-8; its undecodable bytes were replaced",
            file=sys.stderr,
        )
    return text.removeprefix("\ufeff")


def _apply_http_proxy(user_settings: SettingsManager) -> None:
    """The user's ``httpProxy`` setting (never a project's) as ``HTTP_PROXY`` / ``HTTPS_PROXY``,
    unless those are set already; the model requests and extensions' HTTP clients then use it."""
    proxy = user_settings.get("httpProxy")
    if isinstance(proxy, str) and proxy.strip():
        for name in ("HTTP_PROXY", "HTTPS_PROXY"):
            os.environ.setdefault(name, proxy.strip())


def _project_trust(args: Args, agent_dir: str, user_settings: SettingsManager | None = None) -> ProjectTrust:
    """The trust decisions of this run: ``-a`` / ``-na``, trust.json, ``defaultProjectTrust`` (from
    ``user_settings``, the user's settings without a project's, when they are read already)."""
    from tau.config.project_trust import ProjectTrust
    from tau.config.settings import SettingsManager

    if user_settings is None:
        user_settings = SettingsManager.create(os.getcwd(), agent_dir, project=False)
    default = user_settings.default_project_trust
    return ProjectTrust(agent_dir, override=args.project_trust, default=default)


def _help_text(args: Args) -> str:
    """The help, with the flags of the extensions that would load here (never asking about trust)."""
    from tau.cli.help import help_text
    from tau.config.paths import agent_dir

    cwd, base = os.getcwd(), str(agent_dir())
    trusted = _project_trust(args, base).is_trusted(cwd)
    if not _might_have_extensions(args, cwd, base, project_trusted=trusted):
        return help_text()  # without the services (a third of a second of imports)
    services = _create_services(args, cwd, base, flag_values={}, project_trusted=trusted)
    runner = services.extension_runner
    if runner is None:
        return help_text()
    text = help_text(list(runner.flags.values()))
    runner.dispose()
    return text


async def _run_rpc(launch: Launch, session_manager: SessionManager, out: TextIO) -> int:
    """RPC mode: commands on stdin, responses and events on ``out`` (stdout, taken for the protocol
    alone), sessions replaceable."""
    from tau.modes.rpc_mode import run_rpc_mode

    runtime = _create_runtime(launch, session_manager, "rpc", startup_services=launch.services)
    if runtime.session.model is None:
        raise UsageError(_no_model_message(launch.services))
    return await run_rpc_mode(runtime, out=out)


async def _run_acp(launch: Launch, protocol_fd: int) -> int:
    """ACP mode: an editor opens sessions (each in its own cwd) over JSON-RPC on stdin/stdout
    (``protocol_fd``: stdout's descriptor, taken for the protocol alone)."""
    from tau.config.settings import SettingsManager
    from tau.modes.acp import SessionOpener, run_acp_mode
    from tau.session.paths import resolve_session_dir

    _end_start_up()
    args, services, agent_dir, trust = launch.args, launch.services, launch.agent_dir, launch.trust

    warned: set[str] = set()

    async def session_dir(cwd: str) -> str:
        # The folder's sessionDir setting only once it is trusted (decided first, see _data_settings_trust).
        from tau.config.data_settings import data_location_settings, ignored_settings_warning
        from tau.session.paths import SESSION_DIR_ENV

        overridden = args.session_dir is not None or bool(os.environ.get(SESSION_DIR_ENV))
        keys = [] if overridden else data_location_settings(cwd)
        trusted = False
        if keys:
            await decide_trust(cwd)
            trusted = trust.is_trusted(cwd)
            if not trusted and cwd not in warned:
                warned.add(cwd)
                print(f"tau: warning: {cwd}: {ignored_settings_warning(keys)}", file=sys.stderr)
        settings_dir = SettingsManager.create(cwd, agent_dir, project=trusted).session_dir
        return resolve_session_dir(
            cwd, args.session_dir, settings_session_dir=settings_dir, agent_dir=agent_dir
        )

    # The extensions that decided a session folder's trust, until that session takes them over.
    decided_with: dict[str, ExtensionRunner] = {}

    async def decide_trust(cwd: str) -> None:
        if trust.asks_extensions(cwd):
            from tau.cli.trust_extensions import decide_trust_by_extensions

            runner = await decide_trust_by_extensions(
                cwd, agent_dir, _extension_options(args), trust, "rpc", at_start=False
            )
            if runner is not None:
                decided_with[cwd] = runner

    # The start-up services (their extensions loaded, models read) go to the first session opened
    # in their cwd without the editor's MCP servers (whose extensions would differ).
    unused = [services]

    def open_runtime(
        manager: SessionManager, builtin_replacements: Sequence[AgentTool], mcp_servers: Mapping[str, Any]
    ) -> AgentSessionRuntime:
        startup = unused.pop() if unused and not mcp_servers else None
        runtime = _create_runtime(
            launch,
            manager,
            "rpc",
            builtin_replacements,
            mcp_servers,
            decided_with=decided_with,
            startup_services=startup,
        )
        if startup is not None and runtime.services is not startup:  # another cwd: kept for a later one
            unused.append(startup)
        return runtime

    def reload_credentials() -> bool:  # after `tau auth login` in a terminal
        services.auth_storage.reload()
        services.model_registry.refresh()
        return launch.model is not None or bool(services.model_registry.get_available())

    opener = SessionOpener(
        agent_dir=agent_dir,
        session_dir=session_dir,
        open_runtime=open_runtime,
        decide_trust=decide_trust,
        project_trusted=trust.is_trusted,
        reload_credentials=reload_credentials,
    )
    return await run_acp_mode(opener, out_fd=protocol_fd)


async def _run_interactive(launch: Launch, session_manager: SessionManager, cwd: str) -> int:
    """The terminal UI; the first message and ``@file`` arguments are sent once it is up."""
    from tau.cli.initial_message import FileArgumentError, build_initial_message
    from tau.modes.interactive.app import run_interactive_mode
    from tau.modes.interactive.trust import untrusted_notice

    args, services = launch.args, launch.services
    try:
        initial = build_initial_message(args.messages, args.file_args, None, cwd)
    except FileArgumentError as exc:
        raise UsageError(str(exc)) from None
    runtime = _create_runtime(launch, session_manager, "tui", startup_services=services)
    notices: list[str] = []
    if runtime.session.model is None:  # one notice: the fallback message would say the same
        notices.append(_no_model_message(services))
    elif runtime.model_fallback_message:
        notices.append(runtime.model_fallback_message)
    if (untrusted := untrusted_notice(services.cwd, services.project_trusted)) is not None:
        notices.append(untrusted)
    from tau.modes.interactive.theme_loading import load_run_themes

    theme, theme_notices = load_run_themes(services, args.themes, args.use_theme, no_themes=args.no_themes)
    notices += theme_notices
    return await run_interactive_mode(
        runtime,
        initial_text=initial.text or None,
        initial_images=initial.images,
        messages=initial.remaining,
        notices=notices,
        open_resume_picker=args.resume,
        theme=theme,
        tui_mode=args.tui_mode,
        verbose=args.verbose,
    )


def _create_runtime(
    launch: Launch,
    session_manager: SessionManager,
    trust_mode: TrustMode,
    builtin_replacements: Sequence[AgentTool] = (),
    mcp_servers: Mapping[str, Any] | None = None,
    *,
    decided_with: dict[str, ExtensionRunner] | None = None,
    startup_services: AgentSessionServices | None = None,
) -> AgentSessionRuntime:
    """A runtime whose replacement sessions (new, resume, fork) get the same command-line options
    and this run's trust decisions (a folder first met later is not asked about: the extensions'
    ``project_trust`` handlers may decide, else it is not trusted unless saved, ``-a`` or
    ``defaultProjectTrust: "always"`` say otherwise). ``decided_with`` holds the extension runners
    that already decided a folder's trust (ACP fills it before opening a session there).
    ``startup_services``: the services start-up built, taken by the first session when it is in
    their cwd (its extensions are then loaded once, and the models read once)."""
    from tau.runtime.runtime import create_agent_session_runtime, session_runtime_factory

    args, services, agent_dir, trust = launch.args, launch.services, launch.agent_dir, launch.trust
    # The extensions loaded to decide a new folder's trust, until its session takes them over.
    decided_with = {} if decided_with is None else decided_with

    async def before_replacement(cwd: str) -> None:
        if trust.asks_extensions(cwd):
            from tau.cli.trust_extensions import decide_trust_by_extensions

            runner = await decide_trust_by_extensions(
                cwd, agent_dir, _extension_options(args), trust, trust_mode, at_start=False
            )
            if runner is not None:
                decided_with[cwd] = runner

    unused = [startup_services] if startup_services is not None else []

    def prebuilt_services(cwd: str) -> AgentSessionServices | None:
        # Not when extensions loaded to decide the folder's trust are waiting to be its own.
        if unused and cwd not in decided_with and os.path.realpath(unused[0].cwd) == os.path.realpath(cwd):
            return unused.pop()
        unused.clear()  # only ever the first session's
        return None

    factory = session_runtime_factory(
        auth_storage=services.auth_storage,
        resource_options=services.resource_options,
        extension_options=_extension_options(args, mcp_servers=mcp_servers),
        model=launch.model,
        thinking_level=launch.thinking,
        scoped_models=_scoped_models(args, services),
        tools=args.tools,
        no_tools=launch.no_tools,
        exclude_tools=args.exclude_tools,
        builtin_replacements=builtin_replacements,
        project_trusted=trust.is_trusted,
        preloaded_extensions=lambda cwd: decided_with.pop(cwd, None),
        prebuilt_services=prebuilt_services,
        sandbox_mode=args.sandbox,
    )
    runtime = create_agent_session_runtime(
        factory, cwd=session_manager.get_cwd(), agent_dir=agent_dir, session_manager=session_manager
    )
    runtime.before_replacement = before_replacement
    return runtime


def _might_have_extensions(args: Args, cwd: str, agent_dir: str, *, project_trusted: bool) -> bool:
    from tau.config.settings import SettingsManager
    from tau.runtime.extension_loading import might_have_extensions

    settings = SettingsManager.create(cwd, agent_dir, project=project_trusted)
    options = _extension_options(args)
    return might_have_extensions(cwd, agent_dir, settings, options, include_project=project_trusted)


def _create_services(
    args: Args,
    cwd: str,
    agent_dir: str,
    *,
    flag_values: dict[str, str | bool] | None = None,
    project_trusted: bool,
    preloaded: ExtensionRunner | None = None,
    await_sandbox: bool = True,
) -> AgentSessionServices:
    from pathlib import Path

    from tau.runtime.services import create_agent_session_services

    return create_agent_session_services(
        cwd=cwd,
        agent_dir=Path(agent_dir),
        resource_options=_resource_options(args),
        extension_options=_extension_options(args, flag_values),
        project_trusted=project_trusted,
        preloaded_extensions=preloaded,
        sandbox_mode=args.sandbox,
        await_sandbox=await_sandbox,
    )


def _resource_options(args: Args) -> ResourceOptions:
    from tau.runtime.services import ResourceOptions

    return ResourceOptions(
        system_prompt=_text_or_file("--system-prompt", args.system_prompt) if args.system_prompt else None,
        append_system_prompts=[_text_or_file("--append-system-prompt", v) for v in args.append_system_prompt],
        skill_paths=[os.path.abspath(p) for p in args.skills],
        prompt_template_paths=[os.path.abspath(p) for p in args.prompt_templates],
        no_context_files=args.no_context_files,
        no_skills=args.no_skills,
        no_prompt_templates=args.no_prompt_templates,
    )


def _extension_options(
    args: Args,
    flag_values: dict[str, str | bool] | None = None,
    *,
    mcp_servers: Mapping[str, Any] | None = None,
) -> ExtensionOptions:
    from tau.runtime.extension_loading import ExtensionOptions

    return ExtensionOptions(
        paths=[
            p if p.startswith("builtin:") else os.path.abspath(os.path.expanduser(p)) for p in args.extensions
        ],
        no_extensions=args.no_extensions,
        no_mcp=args.no_mcp,
        flag_values=args.unknown_flags if flag_values is None else flag_values,
        mcp_servers=mcp_servers,
        tools=args.tools or (),
        interactive=_mode(args) == "interactive",
    )


def _scoped_models(args: Args, services: AgentSessionServices) -> list[ScopedModel]:
    """The models Ctrl+P cycles, from ``--models`` or else the ``enabledModels`` setting; the first
    one starts a new session when no ``--model`` is given. A pattern that matches nothing is a warning."""
    from tau.accounts.model_resolver import resolve_model_scope

    patterns = args.models if args.models is not None else services.settings_manager.enabled_models
    if not patterns:
        return []
    source = "--models" if args.models is not None else "the enabledModels setting"
    scoped, warnings = resolve_model_scope(patterns, services.model_registry.get_available())
    for warning in warnings:
        print(f"tau: warning: {source}: {warning}", file=sys.stderr)
    return scoped


def _resolve_model(
    args: Args, services: AgentSessionServices
) -> tuple[Model | None, ThinkingLevelOrOff | None]:
    from tau.accounts.model_resolver import ModelResolutionError, is_valid_thinking_level, resolve_cli_model

    model = None
    thinking = args.thinking if args.thinking and is_valid_thinking_level(args.thinking) else None
    if args.model:
        try:
            resolved = resolve_cli_model(
                services.model_registry, args.model, args.provider, thinking=args.thinking
            )
        except ModelResolutionError as exc:
            raise UsageError(str(exc)) from None
        if resolved.warning:
            print(f"tau: warning: {resolved.warning}", file=sys.stderr)
        model = resolved.model
        thinking = resolved.thinking_level or thinking
    elif args.provider:
        raise UsageError(f"--provider needs --model (e.g. --provider {args.provider} --model <pattern>)")
    if args.api_key:
        target = model
        if target is None:
            from tau.accounts.model_resolver import find_initial_model

            target = find_initial_model(services.model_registry).model
        if target is None:
            raise UsageError("--api-key needs a model: add --model <provider/id>")
        services.auth_storage.set_runtime_api_key(target.provider, args.api_key)
    return model, thinking


def _no_model_message(services: AgentSessionServices) -> str:
    auth_file = os.path.join(str(services.agent_dir), "auth.json")
    return (
        "no model available: set a provider key such as ANTHROPIC_API_KEY, OPENAI_API_KEY or "
        f"GEMINI_API_KEY, or put one in {auth_file}, then pick a model with --model"
    )
