"""Offline test doubles for code built on tau.

- ``tau.testing.fake_llm``: a real HTTP server on 127.0.0.1 speaking the four streaming wire
  protocols, scripted turn by turn, with fault injection.
- ``tau.testing.faux``: an in-process provider registered like any API.
"""
