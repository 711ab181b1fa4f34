"""trainkb: a troubleshooting knowledge base for PyTorch and GPU training failures.

``import trainkb; trainkb.install()`` makes an uncaught exception print the entries that
explain it, after its normal traceback. Importing trainkb is cheap by design: the hook's
module loads on the first use of ``install`` or ``uninstall`` (`kb search` never needs it).
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing's flag, without importing typing (a warm `kb search` never needs it)
if TYPE_CHECKING:
    from typing import Any

    from ._hook import install, uninstall

__all__ = ["__version__", "install", "uninstall"]

__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    if name in ("install", "uninstall"):
        from . import _hook

        return getattr(_hook, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
