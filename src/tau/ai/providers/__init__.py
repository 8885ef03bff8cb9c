"""One module per wire protocol; each exposes ``stream`` and ``stream_simple``."""
