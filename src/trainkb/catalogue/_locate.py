"""Where the catalogue lives: --catalogue > $TRAINKB_CATALOGUE > this checkout > the bundled copy.

Both may name several folders (an ``os.pathsep``-separated list): the first is the base and
each later one a layer over it. A folder holding ``catalogue.yaml`` is a layer; when the
first folder named is one, the default catalogue is put beneath it as the base.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from pathlib import Path

TYPE_CHECKING = False  # typing's flag, without importing typing (a warm `kb search` never needs it)
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "AREA_FILE",
    "ENV_VAR",
    "LAYER_FILE",
    "MAX_RECORD_BYTES",
    "RECORD_SUFFIXES",
    "PathList",
    "bundled_folder",
    "catalogue_digest",
    "find_catalogue",
    "find_catalogues",
    "find_reports",
    "is_layer",
    "layers_digest",
    "record_files",
    "shipped_folder",
]

ENV_VAR = "TRAINKB_CATALOGUE"
# A file-size cap, not a paste limit: a record (or areas.yaml) larger than this is refused, never read in
# full; the largest real record is about 16 KB, and the search cache hashes no more than this of a file.
MAX_RECORD_BYTES = 256 * 1024
RECORD_SUFFIXES = (".yaml", ".yml")
AREA_FILE = "areas.yaml"
LAYER_FILE = "catalogue.yaml"  # marks a folder as a layer over a base catalogue; names the layer

PathList = str | os.PathLike[str] | Sequence[str | os.PathLike[str]]


def bundled_folder(name: str) -> Path:
    """The copy of the checkout's top-level ``name/`` that the wheel ships as ``trainkb/_bundled_<name>``."""
    from importlib import resources  # only here: it imports tempfile and more, which a checkout's search never needs

    return Path(str(resources.files("trainkb") / f"_bundled_{name}"))


def shipped_folder(name: str, marker: str) -> Path:
    """``name/`` at the top of a source checkout (editable install) when it holds ``marker``, else the
    wheel's bundled copy: the one answer to "checkout or installed wheel?" (catalogue, reports, site)."""
    top = Path(__file__).resolve().parents[3]
    checkout = top / name
    if (top / "pyproject.toml").is_file() and (checkout / marker).exists():
        return checkout
    return bundled_folder(name)


def _default_catalogue() -> Path:
    return shipped_folder("catalogue", AREA_FILE)


def _folders(value: PathList | None) -> list[str]:
    """Every folder named by a path, a path list, or a sequence of either (repeated --catalogue)."""
    if value is None:
        return []
    items = [value] if isinstance(value, str | os.PathLike) else list(value)
    return [part for item in items for part in os.fspath(item).split(os.pathsep) if part]


def is_layer(folder: Path) -> bool:
    """A layer is a folder with ``catalogue.yaml``; it needs a base beneath it. Whatever holds that
    name (a folder, a FIFO, a broken link) marks a layer still: loading it as a whole catalogue would
    hide the team's mistake; the layer's name reports it instead."""
    return os.path.lexists(folder / LAYER_FILE)


def find_catalogues(explicit: PathList | None = None) -> list[Path]:
    """The base catalogue folder, then each layer over it, by the documented order of precedence."""
    named = _folders(explicit) or _folders(os.environ.get(ENV_VAR))
    folders = [Path(p) for p in named] or [_default_catalogue()]
    if is_layer(folders[0]):
        folders.insert(0, _default_catalogue())
    unique: list[Path] = []
    for folder in folders:  # the same folder twice would collide with itself
        if all(folder.resolve() != seen.resolve() for seen in unique):
            unique.append(folder)
    return unique


def find_catalogue(explicit: PathList | None = None) -> Path:
    """The base catalogue folder (the first of ``find_catalogues``)."""
    return find_catalogues(explicit)[0]


def find_reports(catalogue_root: Path) -> Path:
    """The check reports beside the catalogue (reports/), or the copy bundled in the wheel."""
    beside = catalogue_root.parent / "reports"
    if beside.is_dir():
        return beside
    return bundled_folder("reports")


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
    if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_RECORD_BYTES:
        digest.update(f"refused {info.st_mode} {info.st_size} {info.st_mtime_ns}".encode())
        return
    try:
        with path.open("rb") as handle:
            digest.update(handle.read(MAX_RECORD_BYTES + 1))
    except OSError as exc:
        digest.update(f"unreadable {exc.errno}".encode())


def catalogue_digest(root: Path) -> str:
    """A hash of areas.yaml and every record file (path and bytes): the key of caches built from them.

    Lives here, not on the record models, so `kb search` can check its cache without pydantic.
    """
    import hashlib  # only here: a warm `kb search` finds its index by the files' stamps, not their hash

    digest = hashlib.sha256()
    for path in [root / AREA_FILE, *record_files(root)]:
        digest.update(os.fsencode(path.relative_to(root)) + b"\0")  # the bytes, whatever the encoding
        _digest_file(digest, path)
    return digest.hexdigest()[:16]


def layers_digest(roots: Sequence[Path]) -> str:
    """``catalogue_digest`` of one folder, or of every layer in order: the cache key of a layered catalogue."""
    if len(roots) == 1:
        return catalogue_digest(roots[0])
    import hashlib

    digest = hashlib.sha256()
    for position, root in enumerate(roots):
        digest.update(b"%d:%s:%s\n" % (position, os.fsencode(root.resolve()), catalogue_digest(root).encode()))
        _digest_file(digest, root / LAYER_FILE)  # the layer's name is shown with its entries
    return digest.hexdigest()[:16]
