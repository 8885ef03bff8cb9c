"""``/packages``: the resources of the installed packages, switched on or off with Enter (as
``tau config enable|disable`` does: a ``+path`` / ``-path`` filter in the package's settings entry).
The change applies from the next ``/reload`` or start."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tau.modes.interactive.dialogs import ListDialog, ListItem

if TYPE_CHECKING:
    from tau.config.settings import SettingsScope
    from tau.modes.interactive.host import DialogHost

__all__ = ["packages_command"]


async def packages_command(mode: DialogHost, argument: str) -> None:
    from tau.packages.configured import configured_packages, declared_scopes
    from tau.packages.switches import resource_switches, switched_entry

    settings = mode.session.services.settings_manager
    selected = 0
    while True:
        packages, _ = configured_packages(declared_scopes(settings))
        rows: list[ListItem[Any]] = [
            ListItem(
                f"[{'x' if switch.on else ' '}] {switch.kind[:-1]:<9} {switch.pattern}",
                (package, switch),
                description=f"{package.source.raw} ({'.pi' if package.from_pi else package.scope})",
            )
            for package in packages
            if package.installed
            for switch in resource_switches(package)
        ]
        if not rows:
            mode.chat.add_notice("No packages installed (tau install <source>; tau list)")
            return
        chosen = await mode.show_dialog(
            ListDialog(
                "Package resources: enter switches one on or off (from the next /reload)",
                rows,
                selected=min(selected, len(rows) - 1),
            )
        )
        if chosen is None:
            return
        selected = next(i for i, row in enumerate(rows) if row.value is chosen.value)
        package, switch = chosen.value
        if package.from_pi:
            mode.chat.add_notice(
                f"{package.source.raw} is declared in .pi/settings.json, which tau does not write: "
                "change its filter there (or declare the package in .tau/settings.json)",
                "warning",
            )
            continue
        scope: SettingsScope = "project" if package.scope == "project" else "global"
        replacement = switched_entry(package.entry, switch.kind, switch.pattern, on=not switch.on)

        def change(current: dict[str, Any], entry: Any = package.entry, new: Any = replacement) -> bool:
            # The list as the file holds it now: packages recorded meanwhile by another process stay.
            entries = current.get("packages")
            if not isinstance(entries, list) or entry not in entries:
                return False
            entries[entries.index(entry)] = new
            return True

        found = settings.update(change, scope=scope)
        for error in settings.drain_errors():
            mode.chat.add_notice(error.error.message, "error")
            return
        if not found:
            mode.chat.add_notice(f"{package.source.raw} is no longer in the settings", "warning")
            return
        what = "Enabled" if not switch.on else "Disabled"
        mode.chat.add_notice(
            f"{what} {switch.kind[:-1]} {switch.pattern} of {package.source.raw}; /reload applies it"
        )
