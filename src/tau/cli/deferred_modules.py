"""Standard modules the command's imports ask for but a run seldom uses, loaded on first use.

``urllib.parse`` imports ``ipaddress``, ``subprocess`` imports ``locale``, ``inspect`` imports
``tokenize`` and ``linecache``, ``traceback`` imports ``textwrap``, ``pathlib`` imports ``ntpath``
and ``fnmatch``, and so on, each to use it inside a function or two that a ``tau -p`` never
calls: together about 4 ms of every start. :func:`defer_standard_modules` puts a stand-in for each
in ``sys.modules`` before anything imports it. ``import locale`` then binds the stand-in; the first
attribute read (``locale.getencoding``, ``from textwrap import dedent``, ``dir()`` excepted) runs
the real module's code in that same object, which from then on is the module, as
``importlib.util.LazyLoader`` does (whose modules load as soon as an ``import`` statement looks
at them, so that it cannot serve here).

Only pure-Python modules are deferred (an extension module cannot be loaded into an existing
object), and only by the command: a program importing tau gets the standard library as usual.
"""

from __future__ import annotations

import sys
import threading
from types import ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from importlib.machinery import ModuleSpec

# Found by deferring each standard module a `tau -c -p` imports, one at a time, and keeping those
# the run never read (tests/cli/test_deferred_modules.py checks the list stays so).
DEFERRED = ("base64", "fnmatch", "ipaddress", "linecache", "locale", "ntpath", "struct", "textwrap", "tokenize")

_loading = threading.RLock()


def defer_standard_modules(names: tuple[str, ...] = DEFERRED) -> None:
    """Put a stand-in in ``sys.modules`` for each of ``names`` not imported yet."""
    for name in names:
        if name not in sys.modules:
            sys.modules[name] = _OnFirstUse(name)


class _OnFirstUse(ModuleType):
    """A module whose code runs when one of its attributes is first read. (An import statement
    finding it in sys.modules reads only its ``__spec__``, None until then, which is no miss.)"""

    def __getattr__(self, attribute: str) -> Any:
        with _loading:  # another thread may be loading it: wait for that
            if type(self) is _OnFirstUse and self.__spec__ is None:
                _load_into(self)
        if type(self) is _OnFirstUse:  # its own code, while it runs, asks for a name not made yet
            raise AttributeError(f"module {self.__name__!r} has no attribute {attribute!r}")
        return getattr(self, attribute)


def _load_into(module: ModuleType) -> None:
    """Run ``module``'s code in it, as an import would have, and make it a plain module."""
    import importlib._bootstrap

    name = module.__name__
    spec = next(
        (found for finder in sys.meta_path if (found := _find(finder, name)) is not None),
        None,
    )
    if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
        raise ModuleNotFoundError(f"No module named {name!r}", name=name)
    made = spec.loader.create_module(spec)  # a frozen module's sets its __file__ there
    if made is not None:
        vars(module).update(vars(made))
    importlib._bootstrap._init_module_attrs(spec, module, override=True)
    spec._initializing = True  # type: ignore[attr-defined]  # concurrent `import`s wait, as for any import
    try:
        spec.loader.exec_module(module)
    except BaseException:
        module.__spec__ = None  # the next use tries again, as the next import of a failed module would
        raise
    finally:
        spec._initializing = False  # type: ignore[attr-defined]
    module.__class__ = ModuleType


def _find(finder: object, name: str) -> ModuleSpec | None:
    find_spec = getattr(finder, "find_spec", None)
    return find_spec(name, None) if find_spec is not None else None
