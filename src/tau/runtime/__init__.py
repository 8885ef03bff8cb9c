"""tau.runtime: what a running session is built from.

Settings (``settings``), credentials (``auth_storage``), the model registry with the user's
models.json (``models_config``, ``model_registry``), model reference resolution for the CLI
(``model_resolver``) and the places tau keeps its files (``paths``). AgentSession and the SDK entry
build on these. Import the submodules directly; this package imports nothing on its own.
"""
