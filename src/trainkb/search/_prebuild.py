"""Build the default catalogue's search index ahead of the first search: `make setup` and the wheel's
build run this, so a fresh install's first `kb search` reads an index instead of parsing and
validating every record.

    python -m trainkb.search._prebuild [CATALOGUE [FOLDER]]

CATALOGUE defaults to the one trainkb ships (this checkout's, or the wheel's bundled copy), never
$TRAINKB_CATALOGUE. The index is written to ``_index.PREBUILT`` (or FOLDER) under the name the user's
cache gives it, which holds the code's digest, the Python version and the catalogue's content digest:
a search reads it only for that very catalogue state, and copies it into the user's cache then.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from ..catalogue import AREA_FILE, layers_digest, load_layers, shipped_folder
from ._index import PREBUILT, _cache_path, _parts_path, _write_cache, _write_parts, build_data, kept_documents

__all__ = ["prebuild"]


def prebuild(root: Path, folder: Path = PREBUILT) -> Path:
    """Write the index of the catalogue at ``root`` into ``folder``, the only index kept there."""
    roots = [root.resolve()]
    digest = layers_digest(roots)
    cat = load_layers(roots, {})  # nothing known: every record parsed, each with its digest
    entries = cat.ordered()
    keys = [cat.positions[entry.id].digest for entry in entries]
    parts: dict[str, dict[str, Any]] = {}
    data = build_data(entries, digest, cat.origin, parts, keys)
    if layers_digest(roots) != digest:
        raise RuntimeError(f"the catalogue at {root} changed while its index was built; run this again")
    path = folder / _cache_path(digest).name
    _write_cache(path, data)
    if not path.is_file():
        raise RuntimeError(f"cannot write the index to {folder}")
    path.chmod(0o644)  # a shared install's users read it (the cache's own files are private)
    kept = _parts_path(folder)
    _write_parts(kept, parts, kept_documents(cat, entries, keys))  # a layer or an edit over this catalogue parses
    # and rebuilds only its own records
    if kept.is_file():
        kept.chmod(0o644)
    for stale in [*folder.glob("index-*.marshal"), *folder.glob("parts-*.marshal")]:
        if stale not in (path, kept):
            stale.unlink()
    return path


USAGE = "usage: python -m trainkb.search._prebuild [CATALOGUE [FOLDER]]"


def main(argv: list[str]) -> int:
    """1 with one line on stderr when the arguments name no catalogue or the index cannot be written: an
    index of nothing written over the shipped one would make every first search build it again."""
    if len(argv) > 2 or any(arg.startswith("-") for arg in argv):
        print(USAGE, file=sys.stderr)
        return 2
    root = Path(argv[0]) if argv else shipped_folder("catalogue", AREA_FILE)
    folder = Path(argv[1]) if len(argv) > 1 else PREBUILT
    if not (root / AREA_FILE).is_file():
        print(f"prebuild: not a catalogue folder (no {AREA_FILE}): {root}", file=sys.stderr)
        return 1
    try:
        print(f"search index of {root} built ahead: {prebuild(root, folder)}")
    except (OSError, RuntimeError) as exc:
        print(f"prebuild: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
