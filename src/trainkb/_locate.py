"""Where the catalogue lives: --catalogue > $TRAINKB_CATALOGUE > this checkout > the bundled copy."""

from __future__ import annotations

import hashlib
import os
import stat
from importlib import resources
from pathlib import Path
from typing import Any

__all__ = ["ENV_VAR", "MAX_FILE_BYTES", "RECORD_SUFFIXES", "catalogue_digest", "find_catalogue", "find_reports",
           "record_files"]

ENV_VAR = "TRAINKB_CATALOGUE"
MAX_FILE_BYTES = 256 * 1024  # a record (or areas.yaml) larger than this is refused, never read in full
RECORD_SUFFIXES = (".yaml", ".yml")
AREA_FILE = "areas.yaml"


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


def record_files(root: Path) -> list[Path]:
    """Every record file name, ``<area>/<name>.yaml`` or ``.yml``, sorted: the one list that the loader,
    the cache key and lint share.

    Names only: a directory, FIFO or symlink loop that bears a record's name is listed too, so
    the loader can report it; nothing here opens a file.
    """
    try:
        areas = sorted(p for p in root.iterdir() if not p.name.startswith("."))
    except OSError:
        return []
    found = []
    for area in areas:
        try:
            if not area.is_dir():
                continue
            names = list(area.iterdir())
        except OSError:
            continue
        found += [p for p in names if p.suffix in RECORD_SUFFIXES and not p.name.startswith(".")]
    return sorted(found)


def _digest_file(digest: Any, path: Path) -> None:
    """Feed one file's bytes, or for anything that loading refuses, its kind and size (never read)."""
    try:
        info = path.stat()
    except OSError as exc:
        digest.update(f"unreadable {exc.errno}".encode())
        return
    if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_FILE_BYTES:
        digest.update(f"refused {info.st_mode} {info.st_size} {info.st_mtime_ns}".encode())
        return
    try:
        with path.open("rb") as handle:
            digest.update(handle.read(MAX_FILE_BYTES + 1))
    except OSError as exc:
        digest.update(f"unreadable {exc.errno}".encode())


def catalogue_digest(root: Path) -> str:
    """A hash of areas.yaml and every record file (path and bytes): the key of caches built from them.

    Lives here, not on the record models, so `kb search` can check its cache without pydantic.
    """
    digest = hashlib.sha256()
    for path in [root / AREA_FILE, *record_files(root)]:
        digest.update(str(path.relative_to(root)).encode() + b"\0")
        _digest_file(digest, path)
    return digest.hexdigest()[:16]
