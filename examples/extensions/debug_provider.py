"""See what the provider really sent: raw stream events, kept in the session.

``/debug-provider [on|off]`` (no argument toggles) starts or stops the capture. While it is on,
``provider_stream_event`` collects every parsed event of the provider's stream, as the provider
sent it, and when the assistant message ends they are written to the session as one
``debug-provider-events`` custom entry (not sent to the model). ``before_provider_headers`` tags
each request with the session id, so a gateway's logs can be matched with the entries.

    tau -e examples/extensions/debug_provider.py
"""

from __future__ import annotations

from typing import Any

from tau.extensions import ExtensionAPI, ExtensionCommandContext, ExtensionContext

ENTRY_TYPE = "debug-provider-events"


def setup(tau: ExtensionAPI) -> None:
    state: dict[str, Any] = {"enabled": False, "events": None}

    @tau.register_command("debug-provider", description="Toggle capture of raw provider stream events")
    def toggle(args: str, ctx: ExtensionCommandContext) -> None:
        wanted = args.strip().lower()
        if wanted not in ("", "on", "off"):
            ctx.ui.notify("Usage: /debug-provider [on|off]", "warning")
            return
        state["enabled"] = not state["enabled"] if wanted == "" else wanted == "on"
        state["events"] = None
        ctx.ui.notify(f"Provider event capture {'on' if state['enabled'] else 'off'}")

    @tau.on("before_provider_headers")
    def tag(event: Any, ctx: ExtensionContext) -> None:
        if state["enabled"]:
            event.headers["x-tau-session-id"] = ctx.session_manager.get_session_id()

    @tau.on("provider_stream_event")
    def collect(event: Any, ctx: ExtensionContext) -> None:
        if not state["enabled"]:
            return
        if state["events"] is None:
            state["events"] = {
                "provider": event.provider,
                "api": event.api,
                "model": event.model,
                "events": [],
            }
        state["events"]["events"].append(event.data)

    @tau.on("message_end")
    def keep(event: Any, ctx: ExtensionContext) -> None:
        captured, state["events"] = state["events"], None
        if captured is not None and event.message.role == "assistant":
            tau.append_entry(ENTRY_TYPE, captured)
