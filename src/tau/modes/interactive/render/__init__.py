"""The TUI's rendering layer: messages turned into ANSI text for a given width.

``theme`` and ``format`` are light (the footer and editor use them for the first frame);
``markdown`` and ``blocks`` import rich and pygments, so they are loaded when the first block is drawn.
"""
