"""pi's built-in ``llama.cpp`` extension: the llama.cpp router as a provider, and ``/llama``."""
