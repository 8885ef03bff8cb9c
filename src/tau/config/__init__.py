"""tau.config: where tau keeps its files and what the user has set.

Paths (``paths``), ``settings.json`` (``settings``, checked by ``settings_schema``), the errors a
bad file gives (``config_errors``), project trust (``project_trust``), which tools are on
(``tool_selection``), data settings (``data_settings``) and the sandbox setting (``sandbox_config``).
Modules are imported by their full name; ``import tau.config`` loads nothing.
"""
