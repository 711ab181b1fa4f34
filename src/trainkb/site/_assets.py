"""Where the templates and static files live: this checkout's site/, or the wheel's copy."""

from __future__ import annotations

from pathlib import Path

from ..catalogue import shipped_folder

__all__ = ["site_dir"]


def site_dir() -> Path:
    """site/ at the top of a source checkout, else ``trainkb/_bundled_site`` force-included in the wheel."""
    return shipped_folder("site", "templates")
