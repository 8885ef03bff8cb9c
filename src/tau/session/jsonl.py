"""Reading and writing session files: one JSON object per line, appended, flushed.

Reading never drops anything silently: a line that does not parse is kept as its text (and a
warning), so a full rewrite (migration) puts it back where it was. Writing is all or nothing per
call: a write that fails (full disk, file-size limit) is cut back to where the file ended, so the
file never ends in half a line. Files are created readable by their owner only (0600): they hold
file contents and command output.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterable, Iterator

import jiter
from msgspec import Struct, field

from tau._unicode import dumps
from tau.ai.types import JsonObject
from tau.session.errors import SessionFileError, SessionWriteError

FILE_MODE = 0o600


class RawSessionFile(Struct):
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
        # O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused below.
        with open(os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC), "rb") as f:
            if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                raise SessionFileError(f"Cannot read session file {path}: it is not a regular file")
            data = f.read()
    except FileNotFoundError:
        raise SessionFileError(f"Session file not found: {path}") from None
    except OSError as exc:
        raise SessionFileError(f"Cannot read session file {path}: {exc.strerror or exc}") from exc
    return parse_session_bytes(data, path)


def parse_session_bytes(data: bytes, name: str = "<session>") -> RawSessionFile:
    """Split on newlines and parse each line; blank lines are skipped, others kept either way."""
    raw = RawSessionFile(
        ends_with_newline=not data or data.endswith(b"\n"), has_content=bool(data) and not data.isspace()
    )
    for number, line in enumerate(_lines(data), start=1):
        if not line or line.isspace():
            continue
        value = parse_json_line(line)
        if value is not None:
            raw.records.append(value)
        else:
            raw.records.append(line.decode("utf-8", "surrogateescape"))
            raw.warnings.append(
                f"{name}:{number}: skipped a line that is not a JSON object (it stays in the file)"
            )
    return raw


def _lines(data: bytes) -> Iterator[bytes]:
    """``data.split(b"\\n")`` one piece at a time: the list of them all would be a second copy of a
    file that can be hundreds of MB."""
    start = 0
    while (end := data.find(b"\n", start)) >= 0:
        yield data[start:end]
        start = end + 1
    yield data[start:]


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
        except (ValueError, RecursionError):  # RecursionError: nested too deep to parse, a damaged line
            return None
    return value if isinstance(value, dict) else None


def dump_line(obj: JsonObject) -> bytes:
    """One JSONL line as ``JSON.stringify`` writes it: compact, non-ASCII kept, ``\\n`` ended."""
    # A lone surrogate is written as a \\uXXXX escape (as JavaScript does), the rest of the line as
    # it is: the line stays valid UTF-8 JSON that tau and pi read back to the same text.
    return dumps(obj).encode("utf-8") + b"\n"


def record_line(record: JsonObject | str) -> bytes:
    if isinstance(record, str):
        return record.encode("utf-8", "surrogateescape") + b"\n"
    return dump_line(record)


def append_lines(path: str, lines: Iterable[bytes], *, newline_first: bool = False) -> None:
    """Append whole lines to ``path`` (created 0600 if missing), all of them or none.

    Raises ``SessionWriteError``; the file is then as it was (a file this call created is removed)."""
    payload = b"".join(lines)
    if newline_first:
        payload = b"\n" + payload
    existed = os.path.lexists(path)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, FILE_MODE)
    except OSError as exc:
        raise SessionWriteError.for_file(path, exc) from None
    try:
        start = os.fstat(fd).st_size
        view = memoryview(payload)
        while view:
            view = view[os.write(fd, view) :]
    except OSError as exc:
        _cut_back(fd, path, start, remove=not existed)
        raise SessionWriteError.for_file(path, exc) from None
    finally:
        os.close(fd)


def _cut_back(fd: int, path: str, size: int, *, remove: bool) -> None:
    """Undo a partial append (best effort: the disk may refuse this too)."""
    try:
        os.ftruncate(fd, size)
        if remove and size == 0:
            os.unlink(path)
    except OSError:
        pass


def rewrite_file(path: str, lines: Iterable[bytes]) -> None:
    """Replace ``path`` with ``lines`` atomically (temporary file + ``os.replace``), keeping its mode
    (0600 for a new file). Raises ``SessionWriteError``; ``path`` is then untouched."""
    directory = os.path.dirname(path) or "."
    try:
        status = os.stat(path)
    except OSError:
        mode = FILE_MODE
    else:
        if not stat.S_ISREG(status.st_mode):
            # Renaming over a device or FIFO would replace it (as root: /dev/null itself).
            raise SessionWriteError(f"could not save the session to {path}: it is not a regular file", path)
        mode = status.st_mode & 0o777
    temp: str | None = None
    try:
        import tempfile  # its imports (random, shutil, bz2, lzma) only for a whole-file write

        fd, temp = tempfile.mkstemp(prefix=".tmp-", suffix=".jsonl", dir=directory)
        with os.fdopen(fd, "wb") as f:
            f.write(b"".join(lines))
        os.chmod(temp, mode)
        os.replace(temp, path)
    except OSError as exc:
        _remove(temp)
        raise SessionWriteError.for_file(path, exc) from None
    except BaseException:
        _remove(temp)
        raise


def _remove(path: str | None) -> None:
    if path is not None and os.path.exists(path):
        os.unlink(path)


def back_up(path: str) -> str:
    """Copy ``path`` aside as ``<path>.invalid`` (or ``.invalid.N``) before it is replaced."""
    target = f"{path}.invalid"
    number = 1
    while os.path.exists(target):
        target = f"{path}.invalid.{number}"
        number += 1
    try:
        with open(path, "rb") as src:
            data = src.read()
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, FILE_MODE)
        with os.fdopen(fd, "wb") as dst:
            dst.write(data)
    except OSError as exc:
        raise SessionWriteError.for_file(target, exc) from None
    return target


def check_writable(path: str) -> None:
    """Raise ``SessionWriteError`` if ``path`` (or, before it exists, its folder) cannot be written.

    Opening for append writes nothing, and unlike ``os.access`` gives the system's reason."""
    if os.path.lexists(path):
        try:
            os.close(os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CLOEXEC))
        except OSError as exc:
            raise SessionWriteError.for_file(path, exc) from None
        return
    folder = os.path.dirname(path) or "."
    if os.path.isdir(folder) and not os.access(folder, os.W_OK | os.X_OK):
        raise SessionWriteError(
            f"could not save the session to {path}: the folder {folder} is not writable", path
        )
