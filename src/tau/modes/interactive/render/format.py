"""Small text helpers for the screen: token counts, sizes, cell widths, truncation, and making
untrusted text safe to print.

Light on purpose (no rich import beyond ``rich.cells``): the footer uses it for the first frame.
"""

from __future__ import annotations

import re

from rich.cells import cell_len

from tau._unicode import well_formed
from tau.modes.interactive.render.clusters import split_graphemes
from tau.tools.terminal_text import sanitize_terminal_output

_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)")
# C1 controls: some terminals act on U+009B (CSI) and friends like on their ESC-prefixed forms.
_C1 = re.compile("[\x80-\x9f]")


def format_tokens(count: int) -> str:
    """A token count the way the footer shows it: ``999``, ``1.5k``, ``42k``, ``1.2M``, ``15M``.

    Rounding never produces a value that belongs to the next unit (9 999 is ``10k``, not ``10.0k``;
    999 999 is ``1.0M``, not ``1000k``).
    """
    if count < 0:
        return "-" + format_tokens(-count)
    if count < 1000:
        return str(count)
    tenths = (count + 50) // 100
    if tenths < 100:
        return f"{tenths // 10}.{tenths % 10}k"
    thousands = (count + 500) // 1000
    if thousands < 1000:
        return f"{thousands}k"
    tenths = (count + 50_000) // 100_000
    if tenths < 100:
        return f"{tenths // 10}.{tenths % 10}M"
    return f"{(count + 500_000) // 1_000_000}M"


def format_bytes(size: int) -> str:
    """A size for a placeholder: ``512 B``, ``12 KB``, ``1.5 MB``."""
    if size < 1024:
        return f"{size} B"
    if size < 1024 * 1024:
        return f"{round(size / 1024)} KB"
    return f"{size / (1024 * 1024):.1f} MB"


def format_duration(ms: int) -> str:
    """How long a tool ran: ``0.2s`` under a minute, then ``3m 5s``, ``1h 2m 5s``."""
    seconds = ms / 1000
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes, rest = divmod(int(seconds), 60)
    if minutes < 60:
        return f"{minutes}m {rest}s"
    return f"{minutes // 60}h {minutes % 60}m {rest}s"


def visible_width(text: str) -> int:
    """Terminal cells ``text`` takes (wide characters count 2); ANSI colour codes and links take none."""
    if "\x1b" in text:
        text = _ANSI.sub("", text)
    return cell_len(text)


def truncate_to_width(text: str, width: int, ellipsis: str = "…") -> str:
    """Plain ``text`` cut to at most ``width`` cells, ending in ``ellipsis`` when something was cut;
    the cut falls between grapheme clusters (never inside 👩‍👩‍👧 or after half of é)."""
    if cell_len(text) <= width:
        return text
    room = width - cell_len(ellipsis)
    if room < 0:
        return ""
    used = 0
    spans, _ = split_graphemes(text)
    for start, _end, cells in spans:
        used += cells
        if used > room:
            return text[:start] + ellipsis
    return text


def terminal_safe(text: str) -> str:
    """``text`` with every escape sequence and control character removed (tabs and newlines stay).

    Tool output, file contents and model text can hold sequences that clear the screen, move the
    cursor or retitle the window; dropping them keeps the user's terminal in tau's hands. Works line
    by line (no sequence spans a newline), so sanitising a text piecewise at line breaks gives the
    same result as sanitising it whole.

    The halves of a surrogate pair (an emoji that streamed in two deltas) become the character, and a
    lone half shows as U+FFFD: a terminal gets text it can encode.
    """
    text = sanitize_terminal_output(well_formed(text))
    return _C1.sub("", text) if _C1.search(text) else text
