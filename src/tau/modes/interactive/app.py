"""Interactive mode: the chat in the terminal (spec 70 §2).

Inline, like pi: the conversation goes into the terminal's own scrollback (``Chat`` +
``Scrollback``); below it prompt_toolkit draws the live area (the streaming reply, running tools,
a status line), queued messages, extension widgets, the editor (or a dialog in its place) and the
footer. Nothing takes over the whole screen, so the history stays scrollable and selectable with
the terminal's own tools after tau exits.

This module owns the application and the session's events; slash commands are in ``commands``,
key bindings in ``keys``, dialogs in ``dialogs``, the extension UI in ``ui``.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from prompt_toolkit.application import Application
from prompt_toolkit.filters import Condition
from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.key_binding import merge_key_bindings
from prompt_toolkit.key_binding.defaults import load_key_bindings
from prompt_toolkit.layout import ConditionalContainer, DynamicContainer, HSplit, Layout, VSplit, Window
from prompt_toolkit.layout.containers import Container
from prompt_toolkit.layout.controls import BufferControl, FormattedTextControl
from prompt_toolkit.layout.dimension import Dimension
from prompt_toolkit.output import ColorDepth
from prompt_toolkit.patch_stdout import patch_stdout
from prompt_toolkit.styles import Style

from tau.agent.events import AgentEnd, AgentStart, MessageEnd, MessageUpdate, ToolExecutionUpdate, TurnStart
from tau.ai.types import AssistantMessage, ImageContent, Model, UserMessage
from tau.modes.interactive import actions, panels
from tau.modes.interactive.chat import Chat, ViewFlags
from tau.modes.interactive.cursor import DrawnCursor
from tau.modes.interactive.dialogs import Dialog
from tau.modes.interactive.editor import (
    CompletionCommand,
    EditorCompleter,
    ProjectFiles,
    create_editor_buffer,
)
from tau.modes.interactive.footer import git_branch, usage_totals
from tau.modes.interactive.frames import create_frame_output, print_above
from tau.modes.interactive.fullscreen import (
    Transcript,
    TranscriptView,
    build_bindings,
    restore_terminal_at_exit,
    search_box,
)
from tau.modes.interactive.graphemes import ClusterCells, cluster_fragments
from tau.modes.interactive.header import startup_header
from tau.modes.interactive.keyboard import KeyboardProtocol
from tau.modes.interactive.keymap import load_keymap, register_enter_sequences
from tau.modes.interactive.keys import EDITOR_ROWS, build_key_bindings
from tau.modes.interactive.progress import TerminalProgress
from tau.modes.interactive.screen import Scrollback
from tau.modes.interactive.state import Activity, InputState
from tau.modes.interactive.stray_output import capture_stray_output
from tau.modes.interactive.ui import InteractiveUI
from tau.runtime.events import (
    AutoRetryEnd,
    AutoRetryStart,
    CompactionEnd,
    CompactionStart,
    EntryAppended,
    QueueUpdate,
    SessionInfoChanged,
    SummarizationRetryAttemptStart,
    SummarizationRetryFinished,
    SummarizationRetryScheduled,
    ThinkingLevelChanged,
)
from tau.session.entries import CustomEntry, UsageEntry
from tau.session.messages import CompactionSummaryMessage

if TYPE_CHECKING:
    from tau.modes.interactive.capabilities import Capabilities
    from tau.modes.interactive.render.blocks import BlockRenderer
    from tau.modes.interactive.render.console import ColorSystem
    from tau.runtime.agent_session import AgentSession
    from tau.runtime.runtime import AgentSessionRuntime

__all__ = ["DEFAULT_THEME", "DEFAULT_TUI_MODE", "InteractiveMode", "run_interactive_mode"]

DEFAULT_TUI_MODE = "fullscreen"
"""Without a ``tuiMode`` setting or ``--tui-mode``: the whole screen, as pi 1.6 (``regular`` keeps
the inline UI in the terminal's own scrollback)."""

DEFAULT_THEME = "system"
"""Without a ``theme`` setting or ``--theme``: the terminal's own colours, light or dark as it is (pi 1.6)."""

_BORDER_BY_LEVEL = {
    "off": "#5f5f5f", "minimal": "#5f87af", "low": "#5fafaf", "medium": "#5faf5f",
    "high": "#d7af5f", "xhigh": "#d75f87", "max": "#d75f87",
}  # fmt: skip
_STYLE = {
    "footer": "#a8a8a8",
    "footer.dim": "#808080",
    "footer.warning": "#d7af00",
    "footer.error": "#ff5f5f",
    "status": "#5fafd7",
    "status.error": "#ff5f5f",
    "queue": "#808080 italic",
    "dialog.title": "bold",
    "dialog.hint": "#808080",
    "dialog.selected": "reverse",
    "dialog.border": "#5f87af",
    "widget": "",
    "bash": "#d7875f",
    "search": "bg:#262626",
    "search.border": "#5f87af",
    "search.hint": "#808080",
    "search.match": "bg:ansibrightblack fg:ansiwhite",
    "search.current": "bg:ansiyellow fg:ansiblack",
    "transcript.selected": "reverse",
    "transcript.jump": "#808080",
    "menu.selected": "#5fafd7",
    "menu.description": "#808080",
    "scrollbar.track": "#585858",
    "scrollbar.thumb": "#bcbcbc",
}
_LIGHT_STYLE = {
    **_STYLE,
    "footer": "#4e4e4e",
    "footer.dim": "#6c6c6c",
    "queue": "#6c6c6c italic",
    "search": "bg:#e4e4e4",
}
# The system theme: the terminal's own 16 colours and its default colours, no RGB.
_SYSTEM_BORDER_BY_LEVEL = {
    "off": "ansibrightblack", "minimal": "ansibrightblack", "low": "ansiblue", "medium": "ansicyan",
    "high": "ansimagenta", "xhigh": "ansibrightmagenta", "max": "ansibrightmagenta",
}  # fmt: skip
_SYSTEM_STYLE = {
    **_STYLE,
    "footer": "",
    "footer.dim": "dim",
    "footer.warning": "ansiyellow",
    "footer.error": "ansired",
    "status": "ansicyan",
    "status.error": "ansired",
    "queue": "dim italic",
    "dialog.hint": "dim",
    "dialog.border": "ansiblue",
    "bash": "ansiyellow",
    "search": "",
    "search.border": "ansiblue",
    "search.hint": "dim",
    "transcript.jump": "dim",
    "menu.selected": "ansicyan",
    "menu.description": "dim",
    "scrollbar.track": "dim",
    "scrollbar.thumb": "",
}


async def run_interactive_mode(
    runtime: AgentSessionRuntime,
    *,
    initial_text: str | None = None,
    initial_images: Sequence[ImageContent] | None = None,
    messages: Sequence[str] = (),
    notices: Sequence[str] = (),
    open_resume_picker: bool = False,
    theme: str | None = None,
    tui_mode: str | None = None,
    verbose: bool = False,
) -> int:
    """Run the TUI until the user quits; returns the exit code. ``open_resume_picker`` (``tau -r``)
    starts with the session picker open; ``theme`` (dark, light or system) and ``tui_mode``
    (fullscreen or regular) override the settings; ``verbose`` shows the whole startup header
    whatever ``quietStartup`` says."""
    mode = InteractiveMode(runtime, theme=theme, tui_mode=tui_mode, verbose=verbose)
    try:
        return await mode.run(
            initial_text, list(initial_images or []), list(messages), list(notices), open_resume_picker
        )
    except Exception as error:  # the next start says so and /bug attaches it, as pi 1.6
        from tau.modes.interactive.crash_log import record_crash

        session = runtime.session
        record_crash(
            session.services.agent_dir,
            "fatal_error",
            error,
            session_file=session.session_file,
            cwd=session.cwd,
        )
        raise


class InteractiveMode:
    def __init__(
        self,
        runtime: AgentSessionRuntime,
        *,
        theme: str | None = None,
        tui_mode: str | None = None,
        verbose: bool = False,
    ) -> None:
        self.runtime = runtime
        self.verbose = verbose
        self._capabilities: tuple[tuple[Any, ...], Capabilities] | None = None
        settings = self.session.services.settings_manager
        self.theme_setting = theme or str(settings.get("theme") or DEFAULT_THEME)
        """The theme as set: a name, or pi's ``light/dark`` pair (which follows the terminal)."""
        self.fullscreen = (tui_mode or settings.get("tuiMode") or DEFAULT_TUI_MODE) == "fullscreen"
        from tau.modes.interactive.render.theme import light_from_colorfgbg

        # Until the terminal answers the background query: its COLORFGBG, else dark (as pi).
        self.light_terminal = light_from_colorfgbg(os.environ.get("COLORFGBG"))
        from tau.modes.interactive.terminal_colours import TerminalColours

        self.terminal_colours = TerminalColours()
        """What the terminal said of its colours (OSC 10, 11, 4): the ``system`` theme's source."""
        self.keymap = load_keymap(self.session.services.agent_dir)
        self.tools_expanded = False
        self.show_thinking: bool = not bool(settings.get("hideThinkingBlock", False))
        from tau.modes.interactive.render.padding import output_pad

        self.output_pad: int = output_pad(settings.get("outputPad"))
        self.scrollback: Scrollback | Transcript = Transcript() if self.fullscreen else Scrollback()
        self._switch_to: str | None = None
        self._renderers: dict[int, BlockRenderer] = {}
        from tau.modes.interactive.extension_renderers import ExtensionRenderers

        self.extension_renderers = ExtensionRenderers(lambda: self.session)
        self.chat = self._new_chat()
        self.files = ProjectFiles(self.session.cwd)
        self.completer = EditorCompleter(self.command_infos, self.files)
        self.editor = create_editor_buffer(self.completer, self._user_history())
        from tau.modes.interactive.components import ComponentHost

        self.components = ComponentHost(self)
        """Extensions' header, footer, overlays and autocomplete providers (``ctx.ui``)."""
        from tau.modes.interactive.shrink import ShrinkWatch

        self.shrink = ShrinkWatch(
            lambda: self.session.services.settings_manager.clear_on_shrink and not self.fullscreen,
            lambda: self.components.has_overlays,
            self.redraw_all,
        )
        """``terminal.clearOnShrink`` in the inline UI."""
        self.dialog: Dialog | None = None
        self._dialog_lock = asyncio.Lock()
        self.activity = Activity()
        self.input = InputState()
        self.statuses: dict[str, str] = {}
        self.widgets: dict[str, tuple[list[str], str]] = {}
        self.totals = usage_totals(self.session.session_manager.get_entries())
        self.branch = git_branch(self.session.cwd)
        self._tasks: set[asyncio.Task[Any]] = set()
        self._ticker: asyncio.Task[None] | None = None
        self._seen_width = 0
        self._extra_usage_warned = False
        self.hidden_thinking_label: str | None = None
        self.terminal_input_listeners: list[Callable[[str], Any]] = []
        self.footer_cache: tuple[Any, float, StyleAndTextTuples] | None = None
        self._resize_pending: asyncio.TimerHandle | None = None
        self.progress = TerminalProgress(self.write_raw, lambda: settings.show_terminal_progress)
        from tau._env_twins import env_twin
        from tau.modes.interactive.program_status import ProgramStatus

        self.program_status = ProgramStatus(
            self.write_raw,
            env_twin("PROGRAM_STATUS"),
            lambda: self.session.session_manager.get_session_name(),
        )
        self.session.subscribe(self._on_event)  # a replaced session drops its listeners itself
        runtime.set_rebind_session(self._rebind)
        self.app = self._build_app()

    # -- state -----------------------------------------------------------------------------------

    @property
    def session(self) -> AgentSession:
        return self.runtime.session

    @property
    def width(self) -> int:
        try:
            return max(20, self.app.output.get_size().columns)
        except Exception:  # no terminal yet (tests drive the mode without one)
            return 80

    @property
    def height(self) -> int:
        """The terminal's rows (24 before the application runs)."""
        return self.app.output.get_size().rows if self.app.is_running else 24

    def flags(self) -> ViewFlags:
        return ViewFlags(self.width, self.tools_expanded, self.show_thinking)

    def renderer(self, width: int) -> BlockRenderer:
        renderer = self._renderers.get(width)
        if renderer is None:
            from tau.modes.interactive.render.blocks import BlockRenderer

            self._renderers.clear()  # one width at a time is all that is ever drawn
            renderer = self._renderers[width] = BlockRenderer(
                self.theme(),
                width,
                color_system=self.color_system(),
                output_pad=self.output_pad,
                markdown=self.extension_renderers.markdown_hook(),
                thinking_label=self.hidden_thinking_label,
            )
        return renderer

    def theme(self) -> Any:
        from msgspec.structs import replace

        from tau.modes.interactive.render.theme import get_theme

        theme = get_theme(self.theme_name, light_terminal=self.light_terminal)
        if theme.name == "system" and (derived := self.terminal_colours.theme(theme)) is not None:
            theme = derived
        settings = self.session.services.settings_manager
        capabilities = self.capabilities()
        # Inline images; in fullscreen kitty's only, which ``image_layer`` places over the pane's
        # rows after each frame (an iTerm2 image lives in the cells the pane redraws): a text line.
        images = capabilities.images if settings.show_images else None
        if self.fullscreen and images == "iterm2":
            images = None
        drawn = replace(
            theme,
            code_block_indent=settings.code_block_indent,
            hyperlinks=capabilities.hyperlinks,
            image_protocol=images,
            image_width_cells=max(1, settings.image_width_cells),
            mermaid=settings.mermaid_mode,
        )
        return theme if drawn == theme else drawn

    def _color_depth(self) -> ColorDepth:
        return ColorDepth.DEPTH_24_BIT if self.capabilities().true_color else ColorDepth.DEPTH_8_BIT

    def color_system(self) -> ColorSystem:
        """24-bit colour where the terminal has it (``terminal.trueColor``), else the 256 colours."""
        return "truecolor" if self.capabilities().true_color else "256"

    def capabilities(self) -> Capabilities:
        """What the terminal draws (images, 24-bit colour, links): detected, the settings over it."""
        from tau.modes.interactive.capabilities import terminal_capabilities

        settings = self.session.services.settings_manager
        key = (settings.terminal_hyperlinks, settings.terminal_true_color, settings.terminal_images)
        if self._capabilities is None or self._capabilities[0] != key:
            found = terminal_capabilities(os.environ, hyperlinks=key[0], true_color=key[1], images=key[2])
            self._capabilities = (key, found)
        return self._capabilities[1]

    def _new_chat(self) -> Chat:
        return Chat(
            self.renderer,
            self.theme,
            self.flags,
            lambda text, new_block: self.scrollback.write(text, new_block),  # the mode may switch
            self.invalidate,
            tool_definition=lambda name: self.extension_renderers.tool_renderer(name, self._tool_definition),
            custom_renderer=self._custom_renderer,
            entry_renderer=self.extension_renderers.entry_renderer,
        )

    def _tool_definition(self, name: str) -> Any:
        runner = self.session.extension_runner
        if runner is None:
            return None
        return next((t for t in runner.tool_definitions if getattr(t, "name", None) == name), None)

    def _custom_renderer(self, custom_type: str) -> Any:
        runner = self.session.extension_runner
        if runner is None:
            return None
        registered = runner.message_renderers.get(custom_type)
        return registered.renderer if registered is not None else None

    def _user_history(self) -> list[str]:
        texts: list[str] = []
        for message in self.session.messages:
            if isinstance(message, UserMessage):
                text = (
                    message.content
                    if isinstance(message.content, str)
                    else "".join(getattr(b, "text", "") for b in message.content)
                )
                if text.strip():
                    texts.append(text)
        return texts

    def selectable_models(self) -> list[Model]:
        """What ``/model``'s argument offers: the scoped models, else every available one (pi's)."""
        scoped = self.session.scoped_models
        return [s.model for s in scoped] if scoped else self.session.services.model_registry.get_available()

    def thinking_levels(self) -> list[str]:
        return list(self.session.get_available_thinking_levels())

    def command_infos(self) -> list[CompletionCommand]:
        from tau.modes.interactive.command_arguments import (
            extension_arguments,
            model_arguments,
            thinking_arguments,
        )
        from tau.modes.interactive.commands import BUILTIN_COMMANDS, EXTENSION_FIRST
        from tau.modes.interactive.login import login_argument_choices

        runner = self.session.extension_runner
        extension_commands = runner.commands if runner is not None else {}
        arguments = {
            "model": model_arguments(self),
            "thinking": thinking_arguments(self),
            "login": lambda typed: login_argument_choices(self, typed),
        }
        infos = [
            CompletionCommand(name, spec.description, arguments.get(name))
            for name, spec in BUILTIN_COMMANDS.items()
            if not (name in EXTENSION_FIRST and name in extension_commands)  # the MCP extension's /mcp
        ]
        for name, registered in extension_commands.items():
            complete = extension_arguments(registered.complete) if registered.complete is not None else None
            infos.append(CompletionCommand(name, registered.description or "extension command", complete))
        loader = self.session.services.resource_loader
        for template in loader.prompt_templates:
            infos.append(CompletionCommand(template.name, template.description or "prompt template"))
        if self.session.services.settings_manager.enable_skill_commands:
            for skill in loader.skills:
                infos.append(CompletionCommand(f"skill:{skill.name}", skill.description or "skill"))
        return infos

    def invalidate(self) -> None:
        app = getattr(self, "app", None)
        if app is not None and app.is_running:
            app.invalidate()

    def spawn(self, work: Any) -> asyncio.Task[Any]:
        task: asyncio.Task[Any] = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._task_done)
        return task

    def _task_done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and (error := task.exception()) is not None:
            self.chat.add_notice(str(error) or type(error).__name__, "error")

    # -- layout ------------------------------------------------------------------------------------

    def _build_app(self) -> Application[int]:
        register_enter_sequences()
        settings = self.session.services.settings_manager
        drawn_cursor = lambda: not settings.show_hardware_cursor  # noqa: E731
        editor_window = Window(
            BufferControl(self.editor, input_processors=[DrawnCursor(drawn_cursor), ClusterCells()]),
            height=Dimension(min=1, max=EDITOR_ROWS),
            wrap_lines=True,
            dont_extend_height=True,
            always_hide_cursor=Condition(drawn_cursor),
        )
        self.builtin_editor_window = editor_window
        padding = lambda: Dimension.exact(self._editor_padding())  # noqa: E731
        editor_area = HSplit(
            [
                Window(  # the agent at work written into it, as pi's
                    FormattedTextControl(
                        lambda: panels.working_rule_fragments(self, self.width, f"fg:{self._border_colour()}")
                    ),
                    height=1,
                ),
                VSplit([Window(width=padding), editor_window, Window(width=padding)]),
                Window(height=1, char="─", style=lambda: f"fg:{self._border_colour()}"),
            ]
        )

        def input_area() -> Container:
            if self.dialog is not None:
                return self.dialog.container
            return self.components.editor_slot.window or editor_area

        def text_window(get: Any, shown: Any = None) -> Container:
            return ConditionalContainer(
                Window(
                    FormattedTextControl(lambda: cluster_fragments(get())),
                    dont_extend_height=True,
                    wrap_lines=False,
                ),
                filter=Condition(shown or (lambda: bool(get()))),
            )

        transcript: list[Container] = []
        if self.fullscreen:
            transcript = self._transcript_pane()
        root: Container = HSplit(
            [
                *transcript,
                text_window(
                    lambda: panels.live_fragments(self), lambda: bool(self.chat.live) and not self.fullscreen
                ),
                text_window(
                    lambda: panels.status_fragments(self, self._working_in_rule()),
                    lambda: self.shrink.keeps_status_row(
                        bool(panels.status_fragments(self, self._working_in_rule()))
                    ),
                ),
                text_window(
                    lambda: panels.queue_fragments(self),
                    lambda: bool(any(self.input.queued) or self.input.held_for_compaction),
                ),
                text_window(lambda: panels.widget_fragments(self, "aboveEditor")),
                DynamicContainer(input_area),
                # Below the editor, not floating: an inline app cannot draw past its own bottom.
                self._completions_menu(),
                text_window(lambda: panels.widget_fragments(self, "belowEditor")),
                text_window(self._footer_fragments, lambda: True),
            ]
        )
        root = self.components.with_overlays(root)
        if self.fullscreen:
            root = self._with_search_box(root)
        # A dialog open while the TUI mode changes (/settings) keeps the keys.
        layout = Layout(
            root, focused_element=self.dialog.focus if self.dialog is not None else self.editor_window
        )
        style = self._style()
        from prompt_toolkit.input import create_input

        app_input = create_input()
        output = create_frame_output()

        def write(data: str) -> None:
            output.write_raw(data)
            output.flush()

        self.keyboard = KeyboardProtocol(write, _fileno(output))
        self.keyboard.program_status = self.program_status
        self.keyboard.input_listeners = self.terminal_input_listeners  # kept across TUI mode switches
        if self.keyboard.install(app_input):
            self.keyboard.on_background = self._on_background
            self.keyboard.on_appearance = self._on_appearance_report
            self.keyboard.on_colour = self.terminal_colours.answer
            self.keyboard.on_colours_end = self._on_colours_end
        app: Application[int] = Application(
            layout=layout,
            input=app_input,
            output=output,
            key_bindings=merge_key_bindings(self._key_bindings()),
            style=style,
            full_screen=self.fullscreen,
            mouse_support=self.fullscreen,
            min_redraw_interval=0.05,
            color_depth=self._color_depth,
            erase_when_done=True,  # on quit only the conversation stays in the terminal
        )
        app.ttimeoutlen = _escape_timeout_s()  # Escape alone must act at once, not after half a second
        app.timeoutlen = 0.5
        app.after_render += self.keyboard.on_render  # the key queries go out once the tty is raw
        if self.fullscreen:
            from tau.modes.interactive.image_layer import ImageLayer

            layer = ImageLayer(self.write_raw)

            def place_images(_: object) -> None:
                size = app.output.get_size()
                layer.draw(self.transcript_view.images, (size.rows, size.columns))

            app.after_render += place_images
        else:
            app.after_render += self.shrink.after_render
        return app

    def _print_above(self, text: str) -> None:
        """Text into the scrollback, the live area drawn afresh below it."""
        self.shrink.forget()
        print_above(self.app, text)

    @property
    def editor_window(self) -> Window:
        """The window the editor's keys go to: an extension's editor (``set_editor_component``) or tau's."""
        return self.components.editor_slot.window or self.builtin_editor_window

    def border_colour(self) -> str:
        return self._border_colour()

    def editor_padding(self) -> int:
        return self._editor_padding()

    def _footer_fragments(self) -> Any:
        custom = self.components.footer_fragments()
        return custom if custom is not None else panels.footer_fragments(self)

    def _editor_padding(self) -> int:
        """``editorPaddingX`` cells each side of the editor's text, at most what leaves it one."""
        padding = self.session.services.settings_manager.editor_padding_x
        return min(padding, (self.width - 1) // 2)

    def _completions_menu(self) -> Container:
        """The completions as pi lists them, ``autocompleteMaxVisible`` rows at most (read as it
        draws: /settings)."""
        from tau.modes.interactive.completion_menu import menu_container

        return menu_container(
            self.editor,
            lambda: self.width,
            lambda: self.session.services.settings_manager.autocomplete_max_visible,
        )

    def _key_bindings(self) -> list[Any]:
        bindings = [load_key_bindings(), build_key_bindings(self)]
        if self.fullscreen:
            bindings.append(build_bindings(self, self.transcript_view, self.search_window))
        return bindings

    def _transcript_pane(self) -> list[Container]:
        """The fullscreen transcript, and a line saying so while it is scrolled up."""
        self.transcript_view = view = TranscriptView(self)
        return [
            Window(view, wrap_lines=False),
            ConditionalContainer(
                Window(FormattedTextControl(view.jump_label), height=1),
                filter=Condition(view.scrolled_up),
            ),
        ]

    def _with_search_box(self, root: Container) -> Container:
        from prompt_toolkit.layout import Float, FloatContainer

        box, self.search_window = search_box(self.transcript_view)
        shown = Condition(lambda: self.transcript_view.search is not None)
        width = lambda: max(32, self.width * 2 // 5)  # noqa: E731
        return FloatContainer(
            root, floats=[Float(ConditionalContainer(box, filter=shown), top=1, right=1, width=width)]
        )

    def flash(self, text: str) -> None:
        """A short confirmation on the status line ("Copied"), gone after a second and a half."""
        self.activity.flash_text = text
        self.invalidate()

        def clear() -> None:
            if self.activity.flash_text == text:
                self.activity.flash_text = ""
                self.invalidate()

        asyncio.get_running_loop().call_later(1.5, clear)

    @property
    def theme_name(self) -> str:
        """The theme in use: the setting's, or the half of a ``light/dark`` pair the terminal's
        appearance picks."""
        light, sep, dark = self.theme_setting.partition("/")
        if not sep:
            return self.theme_setting
        return light if self.light_terminal else dark

    @theme_name.setter
    def theme_name(self, value: str) -> None:
        self.theme_setting = value

    def _style(self) -> Style:
        styles = {"light": _LIGHT_STYLE, "system": {**_SYSTEM_STYLE, **self.terminal_colours.frame_style()}}
        return Style.from_dict(styles.get(self.theme_name, _STYLE))

    def _on_colours_end(self) -> None:
        """The terminal's colour answers are in: the ``system`` theme takes colours derived from them."""
        if self.terminal_colours.settle() and self.theme_name == "system" and self.app.is_running:
            self.restyle()

    def _on_background(self, colour: str) -> None:
        """The terminal told its background (OSC 11): the system theme follows light or dark."""
        from tau.modes.interactive.render.theme import is_light_background

        light = is_light_background(colour)
        if light is not None:
            self._on_appearance(light)

    def _on_appearance(self, light: bool) -> None:
        """The terminal is light or dark (its background, or its report of a change, mode 2031)."""
        if light != self.light_terminal:
            self.light_terminal = light
            if self.theme_name == "system" or "/" in self.theme_setting:
                self.restyle()

    def _on_appearance_report(self, light: bool) -> None:
        """The terminal turned light or dark (mode 2031); under the ``system`` theme its colours
        are asked for again, as pi does, and the theme is derived afresh from the answers."""
        self._on_appearance(light)
        if self.theme_name == "system":
            self.keyboard.ask_colours()

    def _working_in_rule(self) -> bool:
        """Whether tau's own editor is shown, so its top rule says the agent works (pi 1.6 writes
        it there; above a dialog or an extension's editor it keeps its own line)."""
        return self.dialog is None and self.components.editor_slot.window is None

    def _border_colour(self) -> str:
        system = self.theme_name == "system"
        derived = self.terminal_colours.border_colours() if system else None
        if self.editor.text.startswith("!"):
            return derived["bash"] if derived else "ansiyellow" if system else "#d7875f"
        model = self.session.model
        level = self.session.thinking_level if model is not None and model.reasoning else "off"
        borders = derived or (_SYSTEM_BORDER_BY_LEVEL if system else _BORDER_BY_LEVEL)
        return borders.get(level, borders["off"])

    # -- running -----------------------------------------------------------------------------------

    async def run(
        self,
        initial_text: str | None,
        initial_images: list[ImageContent],
        messages: list[str],
        notices: list[str],
        open_resume_picker: bool = False,
    ) -> int:
        if header := startup_header(self):
            self.scrollback.write(header, new_block=False)
        for notice in [*notices, *self.keymap.warnings]:
            self.chat.add_notice(notice, "warning")
        self._warn_extra_usage()
        from tau.modes.interactive.crash_log import crash_notice, take_unnotified_crash

        if (crash := take_unnotified_crash(self.session.services.agent_dir)) is not None:
            self.chat.add_notice(crash_notice(crash), "warning")
        if self.session.messages:
            self.chat.add_messages(
                self.session.messages, self.extension_renderers.branch_entries(), self._restored_notes()
            )
        else:  # pi 1.6: what changed since the version last seen, on a fresh session only
            from tau import __version__
            from tau.modes.interactive.changelog import whats_new

            settings = self.session.services.settings_manager
            if news := whats_new(settings, __version__):
                title, text = news
                self.chat.add_notice(f"{title}\n\n{text}" if title else text)
            from tau.modes.interactive.package_changelogs import package_updates, updates_text

            if updates := package_updates(settings):
                title, text = updates_text(updates, collapsed=settings.collapse_changelog)
                self.chat.add_notice(f"{title}\n\n{text}" if title else text)
        self.ui = InteractiveUI(self)
        await self.session.bind_extensions(
            self.ui, on_error=self._extension_error, shutdown_handler=self.quit
        )
        self._set_title()
        self.files.start()
        self.scrollback.attach(self._print_above)
        self.app.after_render += self._after_first_render
        self.keyboard.start()
        self.spawn(self._refresh_account_models())
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGHUP):
            loop.add_signal_handler(signum, self._on_signal, signum)
        if hasattr(signal, "SIGTSTP"):  # `kill -TSTP` from outside: as Ctrl+Z, not a bare stop
            loop.add_signal_handler(signal.SIGTSTP, self.suspend)
        if open_resume_picker:
            from tau.modes.interactive.commands import run_builtin_command

            run_builtin_command(self, "/resume")
        if initial_text or initial_images or messages:
            self.spawn(self._initial_prompts(initial_text, initial_images, messages))
        try:
            while True:
                restored = restore_terminal_at_exit(_fileno(self.app.output) if self.fullscreen else None)
                try:
                    with self._stray_output():
                        code = await self.app.run_async()
                finally:
                    restored()
                if self._switch_to is None:
                    break
                await self._switch_tui_mode(self._switch_to)
        finally:
            for signum in (signal.SIGTERM, signal.SIGHUP, getattr(signal, "SIGTSTP", signal.SIGTERM)):
                loop.remove_signal_handler(signum)
            if self.progress.shown:
                self.progress.done()
            self.keyboard.restore()
            if self.fullscreen:
                self._print_exit_output()
            await self.scrollback.flush()
            self.scrollback.detach()
            for task in list(self._tasks):
                task.cancel()
            await self.runtime.dispose()
        return code if isinstance(code, int) else 0

    async def _refresh_account_models(self) -> None:
        """As pi at start: the model lists gateways (Radius) keep per account are fetched in the
        background with whatever authenticates them (a login, ``RADIUS_API_KEY``), then the
        registry is rebuilt here, on the loop that reads it."""
        registry = self.session.services.model_registry
        if not registry.has_account_listed_auth():
            return
        from tau.accounts.account_models import refresh_account_models

        await asyncio.to_thread(refresh_account_models, registry, rebuild=False)
        registry.refresh()

    def _stray_output(self) -> contextlib.AbstractContextManager[object]:
        """Where a stray print (an extension's, a library's) goes: above the app inline, into the
        transcript in fullscreen (printing above would leave the alternate screen)."""
        if isinstance(self.scrollback, Transcript):
            return capture_stray_output(self.scrollback, self.invalidate)
        return patch_stdout(raw=True)

    @property
    def tui_mode(self) -> str:
        """``fullscreen`` or ``regular``: the mode running, or the one it is switching to."""
        return self._switch_to or ("fullscreen" if self.fullscreen else "regular")

    def switch_tui_mode(self, tui_mode: str) -> None:
        """Change between fullscreen and regular now (``/settings``): the application ends and
        one of the other mode starts with the same conversation, editor and dialogs."""
        if (tui_mode == "fullscreen") != self.fullscreen and self.app.is_running:
            self._switch_to = tui_mode
            self.quit()

    async def _switch_tui_mode(self, tui_mode: str) -> None:
        self._switch_to = None
        self.keyboard.restore()
        await self.scrollback.flush()
        self.scrollback.detach()
        self.fullscreen = tui_mode == "fullscreen"
        self.scrollback = Transcript() if self.fullscreen else Scrollback()
        self.app = self._build_app()
        self._renderers.clear()
        self.redraw_all()  # into the new pane, or printed afresh into the terminal's scrollback
        self.scrollback.attach(self._print_above)
        self._seen_width = self.width
        self.app.after_render += self._watch_width
        self._set_title()
        self.keyboard.start()

    def _print_exit_output(self) -> None:
        """Back on the main screen after fullscreen: the conversation (``fullscreenExitOutput``
        ``transcript``, the default) or how to resume it (``resume-hint``), as pi does."""
        import sys

        settings = self.session.services.settings_manager
        if settings.get("fullscreenExitOutput") == "resume-hint":
            session_file = self.session.session_manager.get_session_file()
            text = f"To resume this session:\ntau --session {session_file}\n" if session_file else ""
        else:
            text = self.scrollback.text() + "\n" if isinstance(self.scrollback, Transcript) else ""
        if text:
            sys.stdout.write(text)
            sys.stdout.flush()

    def _after_first_render(self, app: Any) -> None:
        self.app.after_render -= self._after_first_render
        self._seen_width = self.width
        self.app.after_render += self._watch_width
        import threading

        # Warm the renderer (rich, markdown-it, pygments) while the user types the first message.
        threading.Thread(target=_warm_up_rendering, daemon=True).start()

    def _watch_width(self, app: Any) -> None:
        """A resize redraws the conversation at the new width (once it has settled)."""
        width = self.width
        if width == self._seen_width:
            return
        self._seen_width = width
        if self._resize_pending is not None:
            self._resize_pending.cancel()
        self._resize_pending = asyncio.get_running_loop().call_later(0.15, self.on_resize)

    async def _initial_prompts(
        self, text: str | None, images: list[ImageContent], messages: list[str]
    ) -> None:
        if text or images:
            await self.session.prompt(text or "", images=images or None)
        for message in messages:
            await self.session.prompt(message)

    def quit(self, code: int = 0) -> None:
        if self.app.is_running and self.app.future is not None and not self.app.future.done():
            self.app.exit(result=code)

    def suspend(self) -> None:
        """Ctrl+Z (or a SIGTSTP from outside): give the terminal back first (the main screen,
        the mouse and the keys the shell expects), stop, and take it again and redraw on ``fg``."""
        if not hasattr(signal, "SIGTSTP") or not self.app.is_running:
            return
        from prompt_toolkit.application import run_in_terminal

        loop = asyncio.get_running_loop()

        def stop() -> None:
            self.keyboard.restore()
            loop.remove_signal_handler(signal.SIGTSTP)  # this one stops, by the default action
            try:
                os.kill(0, signal.SIGTSTP)
            finally:
                loop.add_signal_handler(signal.SIGTSTP, self.suspend)
                self.keyboard.start()

        run_in_terminal(stop)

    def _on_signal(self, signum: int) -> None:
        """SIGTERM/SIGHUP: leave as on a quit (the terminal restored, the session saved), with the
        signal's exit code."""
        self.quit(128 + signum)

    def _extension_error(self, report: Any) -> None:
        self.chat.add_notice(f"extension {report.extension_path} ({report.event}): {report.error}", "error")

    def write_raw(self, data: str) -> None:
        self.app.output.write_raw(data)
        self.app.output.flush()

    def _set_title(self) -> None:
        name = self.session.session_name or os.path.basename(self.session.cwd) or "/"
        self.write_title("".join(ch for ch in f"tau - {name}" if ch.isprintable()))

    def write_title(self, title: str) -> None:
        """The terminal window's title (OSC 0), as given."""
        self.app.output.set_title(title)
        self.app.output.flush()

    def footer_changed(self) -> None:
        """What the footer shows changed (a credential, the sandbox): worked out again as it draws."""
        self.footer_cache = None

    # -- events ------------------------------------------------------------------------------------

    def _warn_extra_usage(self) -> None:
        """pi 1.6's warning about an Anthropic subscription login, once a run: at start and when a
        run starts on such a model (``warnings.anthropicExtraUsage: false`` turns it off)."""
        if self._extra_usage_warned or not self.session.services.settings_manager.warn_anthropic_extra_usage:
            return
        from tau.modes.interactive.extra_usage import EXTRA_USAGE_WARNING, uses_anthropic_subscription

        if uses_anthropic_subscription(self.session.model, self.session.services.model_registry):
            self._extra_usage_warned = True
            self.chat.add_notice(EXTRA_USAGE_WARNING, "warning")

    def _on_event(self, event: Any) -> None:
        self._report_status(event)
        if isinstance(event, AgentStart):
            self._warn_extra_usage()
            self.activity.working = True
            self.start_ticker()
        elif isinstance(event, AgentEnd):
            self.activity.working = False
            self.activity.working_message = None
            self.progress.done()
            self.chat.finish_run()
        elif isinstance(event, QueueUpdate):
            self.input.queued = (list(event.steering), list(event.follow_up))
        elif isinstance(event, CompactionStart):
            self.activity.compacting = True
            self.progress.busy()
            self.start_ticker()
        elif isinstance(event, CompactionEnd):
            self.activity.compacting = False
            self.progress.done()
            self.activity.compactions_ended += 1
            self.footer_cache = None  # the context use is unknown now ("?"), as in pi
            if event.result is not None:
                summary = CompactionSummaryMessage(event.result.summary, event.result.tokens_before)
                self.chat.add_messages([summary])
                if (
                    event.result.usage is not None
                    and self.session.services.settings_manager.show_cache_miss_notices
                ):
                    from tau.modes.interactive.cache_misses import compaction_cost_notice

                    self.chat.add_notice(compaction_cost_notice(event.result.usage), "warning")
            elif event.error_message and not event.aborted:
                message = event.error_message
                if not message.lower().startswith("compaction"):
                    message = f"Compaction failed: {message}"
                self.chat.add_notice(message, "error")
            elif event.aborted:
                self.chat.add_notice("Compaction cancelled", "warning")
            held, self.input.held_for_compaction = self.input.held_for_compaction, []
            for text in held:
                actions.submit(self, text)
        elif isinstance(event, AutoRetryStart):
            self.activity.retry_text = f"{event.error_message} (attempt {event.attempt}/{event.max_attempts})"
            self.activity.retry_deadline = time.monotonic() + event.delay_ms / 1000
            self.start_ticker()
        elif isinstance(event, AutoRetryEnd):
            self.activity.retry_text = None
            if not event.success and event.final_error:
                self.chat.add_notice(f"Gave up after {event.attempt} attempts: {event.final_error}", "error")
        elif isinstance(event, SummarizationRetryScheduled):
            self.activity.summary_retry_text = (
                f"{event.error_message} (attempt {event.attempt}/{event.max_attempts})"
            )
            self.activity.retry_deadline = time.monotonic() + event.delay_ms / 1000
            self.start_ticker()
        elif isinstance(event, SummarizationRetryAttemptStart | SummarizationRetryFinished):
            self.activity.summary_retry_text = None
        elif isinstance(event, EntryAppended):
            if isinstance(event.entry, CustomEntry):
                self.chat.add_entry(event.entry)
            elif (
                isinstance(event.entry, UsageEntry)
                and event.entry.kind == "cache_warm"
                and self.session.services.settings_manager.show_cache_miss_notices
            ):
                from tau.modes.interactive.cache_misses import cache_warmed_notice

                self.chat.add_notice(cache_warmed_notice(event.entry.usage.cost.total))
        elif isinstance(event, SessionInfoChanged):
            self.footer_cache = None
            self._set_title()
        elif isinstance(event, ThinkingLevelChanged):
            pass  # the footer and the border read the level when they draw
        else:
            if not isinstance(event, MessageUpdate | ToolExecutionUpdate):
                self.footer_cache = None  # tokens, context use or the name may have changed
            if isinstance(event, MessageEnd) and isinstance(event.message, AssistantMessage):
                self.totals.add(event.message.usage)
            elif isinstance(event, TurnStart):
                self.progress.busy()
            self.chat.on_agent_event(event)
            if isinstance(event, MessageEnd) and isinstance(event.message, AssistantMessage):
                self._notice_dropped_reasoning(event.message)
                self._notice_cache_miss(event.message)
        self.invalidate()

    def _restored_notes(self) -> Callable[[object], str | None] | None:
        """The cache-miss lines of a session drawn again, with ``showCacheMissNotices`` on."""
        if not self.session.services.settings_manager.show_cache_miss_notices:
            return None
        from tau.modes.interactive.cache_misses import restored_miss_notices

        registry = self.session.services.model_registry

        def price(provider: str, model_id: str) -> float:
            model = registry.find(provider, model_id)
            return model.cost.cache_read if model is not None else 0.0

        return restored_miss_notices(self.session.session_manager.get_entries(), price)

    def _notice_dropped_reasoning(self, message: AssistantMessage) -> None:
        """pi 1.6's "Anthropic dropped 2 thinking blocks: ... (details in session)" line, when the
        provider withheld more reasoning from this reply's request than from the previous one's."""
        if message.stop_reason in ("error", "aborted"):
            return
        if not self.session.services.settings_manager.show_cache_miss_notices:
            return
        from tau.modes.interactive.dropped_reasoning import dropped_reasoning_notice

        text = dropped_reasoning_notice(self.session.session_manager.get_branch(), message)
        if text is not None:
            self.chat.add_notice(text, "warning")

    def _notice_cache_miss(self, message: AssistantMessage) -> None:
        """pi 1.6's "Cache miss: ... re-billed" line after the reply that paid for it."""
        if not self.session.services.settings_manager.show_cache_miss_notices:
            return
        from tau.modes.interactive.cache_misses import detect_cache_miss, miss_notice

        model = self.session.services.model_registry.find(message.provider, message.model)
        price = model.cost.cache_read if model is not None else 0.0
        miss = detect_cache_miss(self.session.session_manager.get_entries(), message, price)
        if miss is not None and (text := miss_notice(miss)) is not None:
            self.chat.add_notice(text, "warning")

    def _report_status(self, event: Any) -> None:
        """The program status (OSC 7501) follows the run, as pi 1.6's reporter."""
        status = self.program_status
        if isinstance(event, AgentStart):
            status.run_started()
        elif isinstance(event, AgentEnd):
            status.run_ended()
        elif isinstance(event, MessageEnd) and isinstance(event.message, AssistantMessage):
            status.reply_ended(event.message.stop_reason, event.message.error_message)
        elif isinstance(event, CompactionStart):
            status.compaction_started()
        elif isinstance(event, CompactionEnd):
            status.compaction_ended(
                aborted=event.aborted, error_message=event.error_message, manual=event.reason == "manual"
            )
        elif isinstance(event, SessionInfoChanged):
            status.report()  # the name is the message of working and done

    def start_ticker(self) -> None:
        if self._ticker is None or self._ticker.done():
            self._ticker = asyncio.ensure_future(self._tick())

    async def _tick(self) -> None:
        while self.activity.busy:
            self.invalidate()
            await asyncio.sleep(0.1)
        self.invalidate()

    async def _rebind(self, session: AgentSession) -> None:
        """A new, resumed or forked session replaced the old one: follow it and redraw."""
        session.subscribe(self._on_event)
        self.totals = usage_totals(session.session_manager.get_entries())
        self.files = ProjectFiles(session.cwd)
        self.completer.files = self.files
        self.branch = git_branch(session.cwd)
        self.input.queued = ([], [])
        self.redraw_all(reload_messages=True)
        self._set_title()

    # -- dialogs and redraws -----------------------------------------------------------------------

    async def show_dialog(self, dialog: Dialog) -> Any:
        """Put ``dialog`` where the editor is until it answers (one dialog at a time)."""
        async with self._dialog_lock:
            self.dialog = dialog
            dialog.use_keymap(self.keymap)
            self.app.layout.focus(dialog.focus)
            self.invalidate()
            try:
                return await dialog.future
            finally:
                self.dialog = None
                self.app.layout.focus(self.editor_window)
                self.invalidate()

    def redraw_all(self, *, reload_messages: bool = False) -> None:
        """Print the whole conversation again (a resize, Ctrl+O/Ctrl+T, another session)."""
        if reload_messages:
            self.chat.clear()
            self.chat = self._new_chat()
            self.scrollback.redraw([header] if (header := self._header_text()) else [])
            self._renderers.clear()  # another session may bring other extensions' renderers
            self.chat.add_messages(
                self.session.messages, self.extension_renderers.branch_entries(), self._restored_notes()
            )
            return
        header = self._header_text()
        blocks = [header, *self.chat.render_all()] if header else self.chat.render_all()
        self.scrollback.redraw(blocks)
        self.invalidate()

    def _header_text(self) -> str:
        from tau.modes.interactive.header import startup_header

        custom = self.components.header_text()
        if custom is not None:
            return custom
        return startup_header(self)

    def restyle(self) -> None:
        """The theme changed: new colours for the frame and for every block."""
        self.app.style = self._style()
        self._renderers.clear()
        for block in self.chat.history:
            block.invalidate()  # a block keeps its drawing per width and flags, not per theme
        self.redraw_all()

    def set_output_pad(self, pad: int) -> None:
        """The ``outputPad`` setting changed: every block is laid out again inside the new padding."""
        self.output_pad = pad
        self._renderers.clear()
        self.redraw_all(reload_messages=True)

    def keymap_reload(self) -> None:
        self.keymap = load_keymap(self.session.services.agent_dir)
        self.app.key_bindings = merge_key_bindings(self._key_bindings())
        for warning in self.keymap.warnings:
            self.chat.add_notice(warning, "warning")

    def on_resize(self) -> None:
        self._renderers.clear()
        self.redraw_all()


def _fileno(output: Any) -> int | None:
    try:
        return int(output.fileno())
    except Exception:  # not a terminal
        return None


def _warm_up_rendering() -> None:
    import rich.markdown
    import rich.syntax  # noqa: F401


def _escape_timeout_s() -> float:
    """How long a lone Escape waits for the rest of a key sequence: ``TAU_TUI_ESC_TIMEOUT`` (or pi's
    ``PI_TUI_ESC_TIMEOUT``) milliseconds; else 100 ms over SSH (Alt+key arrives in two parts) and
    50 ms elsewhere."""
    from tau._env_twins import env_twin

    try:
        configured = float(env_twin("TUI_ESC_TIMEOUT") or "nan")
    except ValueError:
        configured = float("nan")
    if configured > 0 and configured != float("inf"):
        return configured / 1000
    return 0.1 if os.environ.get("SSH_CONNECTION") or os.environ.get("SSH_TTY") else 0.05
