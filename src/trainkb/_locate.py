"""Where the catalogue lives: --catalogue > $TRAINKB_CATALOGUE > this checkout > the bundled copy."""

from __future__ import annotations

import hashlib
import os
from importlib import resources
from pathlib import Path

__all__ = ["ENV_VAR", "catalogue_digest", "find_catalogue", "find_reports"]

ENV_VAR = "TRAINKB_CATALOGUE"


def _checkout_catalogue() -> Path | None:
    """The top-level catalogue/ when trainkb runs from a source checkout (editable install)."""
    top = Path(__file__).resolve().parents[2]
    candidate = top / "catalogue"
    if (top / "pyproject.toml").is_file() and (candidate / "areas.yaml").is_file():
        return candidate
    return None


def find_catalogue(explicit: str | os.PathLike[str] | None = None) -> Path:
    """Resolve the catalogue folder by the documented order of precedence."""
    if explicit:
        return Path(explicit)
    if os.environ.get(ENV_VAR):
        return Path(os.environ[ENV_VAR])
    checkout = _checkout_catalogue()
    if checkout is not None:
        return checkout
    return Path(str(resources.files("trainkb") / "_bundled_catalogue"))


def find_reports(catalogue_root: Path) -> Path:
    """The check reports beside the catalogue (reports/), or the copy bundled in the wheel."""
    beside = catalogue_root.parent / "reports"
    if beside.is_dir():
        return beside
    return Path(str(resources.files("trainkb") / "_bundled_reports"))


def catalogue_digest(root: Path) -> str:
    """A hash of every YAML file under ``root`` (path and bytes): the key of caches built from it.

    Lives here, not on the record models, so `kb search` can check its cache without pydantic.
    """
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.yaml")):
        digest.update(str(path.relative_to(root)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]
