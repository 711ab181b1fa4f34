"""trainkb: a troubleshooting knowledge base for PyTorch and GPU training failures."""

from __future__ import annotations

__all__ = ["__version__"]

__version__ = "0.1.0"
