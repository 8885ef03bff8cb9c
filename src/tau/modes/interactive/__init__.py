"""The interactive terminal UI (``tau`` with no ``-p``); ``app.run_interactive_mode`` starts it."""
