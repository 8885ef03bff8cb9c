"""Code objects for generated source, kept between runs as Python keeps a module's bytecode.

``tau._dataclass`` writes each class's ``__init__`` as source text when the class makes its first
object; compiling that text is most of the cost (a ``tau -p`` compiles about sixty). ``compiled``
returns the code for a text from a file beside tau's own bytecode,
``tau/__pycache__/generated.<cache tag>.marshal``, compiling only a text it has not seen; what a
run compiled is added to the file when the process exits. The text is the key, so a changed class
simply gets new code; the file names Python's bytecode version and is ignored under any other.

Nothing is written where Python writes no bytecode (``PYTHONDONTWRITEBYTECODE``, ``-B``) or cannot
(a read-only install): then each run compiles, as before. Two processes ending together each
replace the file whole (one's additions are lost, neither's file is torn).

Kept free of any tau import: ``tau._dataclass`` uses it, and every layer uses that.
"""

from __future__ import annotations

import atexit
import contextlib
import marshal
import os
import sys
from importlib.util import MAGIC_NUMBER
from types import CodeType

__all__ = ["compiled"]

# Past this many texts the file starts afresh (texts of classes that changed are never removed).
MAX_ENTRIES = 4096

_codes: dict[str, CodeType] | None = None
_added = False


def compiled(source: str) -> CodeType:
    """The code of ``source`` compiled in ``exec`` mode, from the cache when it holds it."""
    global _codes, _added
    if _codes is None:
        _codes = _load()
    code = _codes.get(source)
    if code is None:
        code = compile(source, "<tau generated>", "exec")
        if not _added:
            _added = True
            atexit.register(_save)
        _codes[source] = code
    return code


def cache_path() -> str:
    """Where the codes are kept: tau's own ``__pycache__`` folder (under ``sys.pycache_prefix`` when set)."""
    package = os.path.dirname(os.path.abspath(__file__))
    folder = os.path.join(package, "__pycache__")
    if sys.pycache_prefix:
        folder = os.path.join(sys.pycache_prefix, package.lstrip(os.sep), "__pycache__")
    return os.path.join(folder, f"generated.{sys.implementation.cache_tag}.marshal")


def _load() -> dict[str, CodeType]:
    try:
        with open(cache_path(), "rb") as file:
            data = file.read()
    except OSError:
        return {}
    if not data.startswith(MAGIC_NUMBER):
        return {}
    try:
        codes = marshal.loads(memoryview(data)[len(MAGIC_NUMBER) :])
    except (ValueError, EOFError, TypeError):
        return {}  # a damaged file: compiled afresh, then replaced
    if not isinstance(codes, dict) or len(codes) > MAX_ENTRIES:
        return {}
    return codes


def _save() -> None:
    if sys.dont_write_bytecode or _codes is None:
        return
    path = cache_path()
    codes = {**_load(), **_codes}  # what another process added meanwhile, then this run's
    if len(codes) > MAX_ENTRIES:
        codes = _codes
    temporary = f"{path}.{os.getpid()}.tmp"
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(temporary, "wb") as file:
            file.write(MAGIC_NUMBER + marshal.dumps(codes))
        os.replace(temporary, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
