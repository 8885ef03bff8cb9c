"""tau.ai.transport: how provider requests travel.

The HTTP/1.1 client (``wire``) and its httpx fallback (``httpx_transport``), the shared client
(``http``), the server-sent events parser (``sse``), the per-request cache of built bodies
(``request_cache``) and the garbage-collector pause around a stream (``gc_pause``). Private to
``tau.ai``: providers use it, library users use ``tau.ai``.
"""
