"""Making terminal output readable as plain text: no escape codes, no carriage-return redraws."""

from __future__ import annotations

import re

_ESCAPES = (
    r"\x1b\[[0-?]*[ -/]*[@-~]"  # CSI: colours, cursor moves
    r"|\x1b\][^\x07\x1b\n]*(?:\x07|\x1b\\)?"  # OSC: titles, hyperlinks
    r"|\x1b[PX^_][^\x1b\n]*(?:\x1b\\)?"  # DCS, SOS, PM, APC strings
    r"|\x1b[ -/]*[0-~]"  # two-character escapes, charset selection
)
# Everything on a line up to a carriage return that more text overwrites (progress bars). Tried at
# line starts only: unanchored, a long line without one was rescanned from every position (minutes
# for the megabytes of NULs of `cat /dev/zero`).
_REDRAWN = r"(?m)^[^\n]*\r(?=[^\r\n])"
_CONTROLS = "[\x00-\x08\x0b-\x1f\x7f\ufff9-\ufffb]"


def sanitize_terminal_output(text: str) -> str:
    """Strip ANSI escape sequences and control characters (tabs and newlines stay), and resolve
    carriage-return redraws to what a terminal would finally show on that line.

    Newlines are never added or removed, so line counts taken before sanitising still hold.
    """
    if re.search(_CONTROLS, text) is None:
        return text
    text = re.sub(_ESCAPES, "", text)
    text = text.replace("\r\n", "\n")
    text = re.sub(_REDRAWN, "", text)
    return re.sub(_CONTROLS, "", text)
