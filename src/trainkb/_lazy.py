"""Names a package exports but imports only on first use (PEP 562), so a light command never pays for them.

A package lists each lazy name with the private module that defines it and binds the two functions this
module returns as its ``__getattr__`` and ``__dir__``; the name is then kept in the package like any other.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterable, Mapping

__all__ = ["lazy_names"]


def lazy_names(
    package: str, lazy: Mapping[str, str], exported: Iterable[str]
) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """A package's ``__getattr__`` and ``__dir__`` for ``lazy`` (name -> module inside ``package``)."""
    names = frozenset(exported)

    def __getattr__(name: str) -> object:
        module = lazy.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f".{module}", package), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[package]), *names})

    return __getattr__, __dir__
