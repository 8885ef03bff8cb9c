"""The file-system and process access of each tool, as small protocols an extension can replace.

An extension that runs tools over SSH or in a container supplies its own operations object and keeps
the tools' formatting, truncation and error handling. The ``Local*`` classes are the defaults.
Methods are coroutines so a remote implementation never blocks the event loop; the local ones hand
large file reads and writes to a worker thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import stat
from collections.abc import Callable, Mapping, Sequence
from typing import Protocol

from msgspec import Struct

from tau._unicode import well_formed
from tau.ai.abort import AbortSignal
from tau.errors import TauError


class ReadOperations(Protocol):
    async def read_file(self, path: str) -> bytes: ...

    async def access(self, path: str) -> None:
        """Raise (an ``OSError``, ideally) unless ``path`` is a readable file."""
        ...


class WriteOperations(Protocol):
    async def write_file(self, path: str, text: str) -> None: ...

    async def mkdir(self, path: str) -> None:
        """Create ``path`` and its missing parents; no error if it exists."""
        ...


class EditOperations(Protocol):
    async def read_file(self, path: str) -> bytes: ...

    async def write_file(self, path: str, text: str) -> None: ...

    async def access(self, path: str) -> None:
        """Raise unless ``path`` is a file that can be read and written."""
        ...


class CommandAborted(TauError):
    """Raised by :meth:`BashOperations.exec` when the signal fired; the process tree is gone."""


class CommandTimedOut(TauError):
    """Raised by :meth:`BashOperations.exec` when the timeout passed; the process tree is gone."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"timeout:{seconds:g}")
        self.seconds = seconds


class BashOperations(Protocol):
    async def exec(
        self,
        command: str,
        cwd: str,
        *,
        on_data: Callable[[bytes], None],
        signal: AbortSignal | None,
        timeout: float | None,
        env: Mapping[str, str],
    ) -> int | None:
        """Run ``command`` in a shell; stream merged stdout+stderr bytes to ``on_data``.

        Returns the exit code (``None`` when the process was killed by a signal from elsewhere).
        Raises :class:`CommandAborted` or :class:`CommandTimedOut` after killing the whole tree.
        """
        ...


class GrepOperations(Protocol):
    async def is_directory(self, path: str) -> bool:
        """Whether ``path`` is a directory; raise if it does not exist."""
        ...

    async def read_file(self, path: str) -> str:
        """The text of a matched file, for context lines."""
        ...


class FindOperations(Protocol):
    async def exists(self, path: str) -> bool: ...

    async def glob(self, pattern: str, cwd: str, *, ignore: Sequence[str], limit: int) -> list[str]:
        """Paths under ``cwd`` matching ``pattern`` (absolute or relative to ``cwd``; directories may
        end in ``/``), honouring .gitignore, at most ``limit`` of them."""
        ...


class LsOperations(Protocol):
    async def exists(self, path: str) -> bool: ...

    async def is_directory(self, path: str) -> bool:
        """Whether ``path`` (symlinks followed) is a directory; raise if it cannot be stat'ed."""
        ...

    async def readdir(self, path: str) -> list[str]: ...


class NotRegularFileError(TauError, OSError):
    """The path is a FIFO, a device or a socket: reading or writing it could block or never end."""

    def __init__(self, path: str, mode: int) -> None:
        super().__init__(0, f"it is {_describe_kind(mode)}, not a regular file", path)

    def __str__(self) -> str:
        return str(self.strerror)


def _describe_kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a file"


def check_regular(path: str, mode: int) -> None:
    """Raise :class:`NotRegularFileError` unless ``mode`` (of ``path``) is a regular file's or a folder's."""
    if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        raise NotRegularFileError(path, mode)


def open_regular(path: str, flags: int) -> int:
    """``os.open`` that refuses anything but a regular file (or a folder, which fails as usual).

    ``O_NONBLOCK`` keeps the open itself from waiting for the other end of a FIFO; the kind is then
    checked on the opened file, so a path swapped in between cannot slip through.
    """
    fd = os.open(path, flags | os.O_NONBLOCK | os.O_CLOEXEC, 0o666)
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(21, "Is a directory", path)
        check_regular(path, mode)
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _read_bytes(path: str) -> bytes:
    with open(open_regular(path, os.O_RDONLY), "rb") as file:
        return file.read()


def _write_text(path: str, text: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        # Checked before opening: opening a FIFO for writing would truncate nothing but could block.
        check_regular(path, os.stat(path).st_mode)
    fd = open_regular(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    # newline="" writes the text exactly as given. Surrogate halves (a model's JSON may hold them)
    # are written as Node writes them: a pair as its character, a lone one as U+FFFD, so the file is
    # valid UTF-8 that read and edit take back.
    with open(fd, "w", encoding="utf-8", newline="") as file:
        file.write(well_formed(text))


def _check_access(path: str, mode: int) -> None:
    st = os.stat(path)
    if stat.S_ISDIR(st.st_mode):
        raise IsADirectoryError(21, "Is a directory", path)
    check_regular(path, st.st_mode)
    if not os.access(path, mode):
        raise PermissionError(13, "Permission denied", path)


class LocalFileOperations(Struct, dict=True):
    """Local files for read, write, edit, grep and ls."""

    async def read_file(self, path: str) -> bytes:
        return await asyncio.to_thread(_read_bytes, path)

    async def write_file(self, path: str, text: str) -> None:
        await asyncio.to_thread(_write_text, path, text)

    async def mkdir(self, path: str) -> None:
        os.makedirs(path, exist_ok=True)

    async def access(self, path: str) -> None:
        _check_access(path, os.R_OK)

    async def is_directory(self, path: str) -> bool:
        return stat.S_ISDIR(os.stat(path).st_mode)

    async def exists(self, path: str) -> bool:
        return os.path.exists(path)

    async def readdir(self, path: str) -> list[str]:
        return os.listdir(path)


class LocalEditOperations(LocalFileOperations, dict=True):
    """Local files for edit: ``access`` also demands write permission."""

    async def access(self, path: str) -> None:
        _check_access(path, os.R_OK | os.W_OK)


class LocalGrepOperations(Struct, dict=True):
    """Local files for grep's context lines (decoded leniently: a match may sit in a non-UTF-8 file)."""

    async def is_directory(self, path: str) -> bool:
        mode = os.stat(path).st_mode
        check_regular(path, mode)  # ripgrep would wait forever on a FIFO named on its command line
        return stat.S_ISDIR(mode)

    async def read_file(self, path: str) -> str:
        data = await asyncio.to_thread(_read_bytes, path)
        return data.decode("utf-8", "replace")
