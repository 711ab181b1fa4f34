"""trainkb: a troubleshooting knowledge base for PyTorch and GPU training failures.

``import trainkb; trainkb.install()`` makes an uncaught exception print the entries that
explain it, after its normal traceback. Importing trainkb is cheap by design.
"""

from __future__ import annotations

from ._hook import install, uninstall

__all__ = ["__version__", "install", "uninstall"]

__version__ = "0.1.0"
