"""Where the templates and static files live: this checkout's site/, or the wheel's copy."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

__all__ = ["site_dir"]


def site_dir() -> Path:
    """site/ at the top of a source checkout, else ``trainkb/_bundled_site`` force-included in the wheel."""
    checkout = Path(__file__).resolve().parents[3] / "site"
    if (checkout / "templates").is_dir() and (checkout.parent / "pyproject.toml").is_file():
        return checkout
    return Path(str(resources.files("trainkb") / "_bundled_site"))
