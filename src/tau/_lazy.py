"""Re-exports a package imports on first access, so importing the package loads none of its parts.

    __getattr__, __dir__ = lazy_exports(globals(), {"Name": "module", ...})

Kept free of any tau import: ``tau/__init__.py`` uses it too, and ``import tau.ai`` must stay fast.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing: see tau/__init__.py
if TYPE_CHECKING:
    from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(
    namespace: dict[str, Any], homes: Mapping[str, str] | Sequence[str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """A package's module ``__getattr__`` and ``__dir__`` for the names in its ``__all__``.

    ``homes`` maps each name to the submodule that defines it, or lists submodules to search in
    order (the cheap ones first). A name is imported once, then kept in ``namespace``."""
    package: str = namespace["__name__"]
    exports: Sequence[str] = namespace["__all__"]

    def candidates(name: str) -> Sequence[str]:
        if isinstance(homes, Mapping):
            return (homes[name],) if name in homes else ()
        return homes if name in exports else ()

    def __getattr__(name: str) -> Any:
        for home in candidates(name):
            module = importlib.import_module(f"{package}.{home}")
            if hasattr(module, name):
                value = getattr(module, name)
                namespace[name] = value
                return value
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__() -> list[str]:
        return [*namespace, *exports]

    return __getattr__, __dir__
