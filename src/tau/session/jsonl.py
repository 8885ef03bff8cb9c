"""Reading and writing session files: one JSON object per line, appended, flushed.

Reading never drops anything silently: a line that does not parse is kept as its text (and a
warning), so a full rewrite (migration) puts it back where it was.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field

import jiter

from tau.ai.types import JsonObject
from tau.session.errors import SessionFileError


@dataclass(slots=True)
class RawSessionFile:
    """The lines of a file: parsed objects, or the text of lines that are not JSON objects."""

    records: list[JsonObject | str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    ends_with_newline: bool = True
    has_content: bool = False

    def objects(self) -> list[JsonObject]:
        return [r for r in self.records if isinstance(r, dict)]


def read_session_file(path: str) -> RawSessionFile:
    """Parse every line of ``path``; raises ``SessionFileError`` if the file is missing or unreadable."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        raise SessionFileError(f"Session file not found: {path}") from None
    except OSError as exc:
        raise SessionFileError(f"Cannot read session file {path}: {exc.strerror or exc}") from exc
    return parse_session_bytes(data, path)


def parse_session_bytes(data: bytes, name: str = "<session>") -> RawSessionFile:
    """Split on newlines and parse each line; blank lines are skipped, others kept either way."""
    raw = RawSessionFile(ends_with_newline=not data or data.endswith(b"\n"), has_content=bool(data.strip()))
    for number, line in enumerate(data.split(b"\n"), start=1):
        if not line or line.isspace():
            continue
        value = parse_json_line(line)
        if value is not None:
            raw.records.append(value)
        else:
            raw.records.append(line.decode("utf-8", "surrogateescape"))
            raw.warnings.append(f"{name}:{number}: skipped a line that is not a JSON object")
    return raw


def parse_json_line(line: bytes | str) -> JsonObject | None:
    """The JSON object on one line, or ``None``.

    jiter is several times faster than ``json.loads``; ``json`` is the fallback for what jiter
    refuses but JavaScript writes, such as an escaped lone surrogate (``"\\ud800"``).
    """
    data = line.encode("utf-8", "surrogateescape") if isinstance(line, str) else line
    try:
        value = jiter.from_json(data, allow_inf_nan=False)
    except ValueError:
        try:
            value = json.loads(data)
        except ValueError:
            return None
    return value if isinstance(value, dict) else None


def dump_line(obj: JsonObject) -> bytes:
    """One JSONL line as ``JSON.stringify`` writes it: compact, non-ASCII kept, ``\\n`` ended."""
    text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"))
    try:
        return text.encode("utf-8") + b"\n"
    except UnicodeEncodeError:  # lone surrogates: escape them, as JavaScript does
        return json.dumps(obj, separators=(",", ":")).encode("ascii") + b"\n"


def record_line(record: JsonObject | str) -> bytes:
    if isinstance(record, str):
        return record.encode("utf-8", "surrogateescape") + b"\n"
    return dump_line(record)


def append_lines(path: str, lines: Iterable[bytes], *, newline_first: bool = False) -> None:
    """Append whole lines to ``path`` (created if missing) and flush them."""
    payload = b"".join(lines)
    if newline_first:
        payload = b"\n" + payload
    with open(path, "ab") as f:
        f.write(payload)
        f.flush()


def rewrite_file(path: str, lines: Iterable[bytes]) -> None:
    """Replace ``path`` with ``lines`` atomically (temporary file + ``os.replace``)."""
    directory = os.path.dirname(path) or "."
    try:
        mode = os.stat(path).st_mode & 0o777
    except OSError:
        mode = 0o644
    fd, temp = tempfile.mkstemp(prefix=".tmp-", suffix=".jsonl", dir=directory)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(b"".join(lines))
        os.chmod(temp, mode)
        os.replace(temp, path)
    except BaseException:
        if os.path.exists(temp):
            os.unlink(temp)
        raise


def back_up(path: str) -> str:
    """Copy ``path`` aside as ``<path>.invalid`` (or ``.invalid.N``) before it is replaced."""
    target = f"{path}.invalid"
    number = 1
    while os.path.exists(target):
        target = f"{path}.invalid.{number}"
        number += 1
    with open(path, "rb") as src, open(target, "wb") as dst:
        dst.write(src.read())
    return target
