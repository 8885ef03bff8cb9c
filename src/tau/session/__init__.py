"""Sessions: the JSONL tree store, migrations, context projection, listing."""
