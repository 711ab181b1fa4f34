"""Layered catalogues: a team's folders over the bundled one, loaded as one catalogue.

The base is a whole catalogue; each layer above it is a folder with ``catalogue.yaml``
(its name, shown beside its entries in the site and the TUI), records in
``<area>/<ID>-<slug>.yaml`` and, optionally, an ``areas.yaml`` that adds areas. A layer's
record adds to the entries below it; reusing an id already taken below is a finding
unless the record says ``overrides: <its id>``, and then it replaces the lower record.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ._loader import Catalogue, _display, _validate, in_file, load_catalogue
from ._locate import LAYER_FILE
from ._yamlio import load_yaml

__all__ = ["LayerFile", "layer_name", "layer_reports", "load_layers"]


class LayerFile(BaseModel):
    """``catalogue.yaml``: what a layer calls itself."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str | None = Field(
        default=None,
        min_length=1,
        max_length=40,
        description="Shown beside the layer's entries (default: the folder's name).",
    )
    description: str | None = None
    url: str | None = Field(default=None, description="Where the layer's repository lives.")


def layer_name(root: Path, cat: Catalogue) -> str:
    """The ``name`` in the layer's catalogue.yaml, else the folder's name (problems go to ``cat``)."""
    path = root / LAYER_FILE
    if not os.path.lexists(path) or (path.is_file() and path.stat().st_size == 0):  # an empty marker is enough
        return root.name
    shown = _display(path, root)
    located, problems = load_yaml(path, shown)
    cat.problems += in_file(problems, path)
    if located is None:
        return root.name
    parsed, problems = _validate(LayerFile, located, shown)
    cat.problems += in_file(problems, path)
    return parsed.name if parsed is not None and parsed.name else root.name


def load_layers(roots: Sequence[Path], known: Mapping[str, Any] | None = None) -> Catalogue:
    """One catalogue from a base folder and the layers over it (a single folder loads as before);
    ``known`` as ``load_catalogue`` takes it."""
    base = load_catalogue(Path(roots[0]), known=known)
    if len(roots) == 1:
        return base
    base.base_problems = len(base.problems)
    base.layers.append((layer_name(base.root, base), base.root))
    for root in roots[1:]:
        _add_layer(base, load_catalogue(Path(root), areas_required=False, known=known))
    return base


def layer_reports(cat: Catalogue) -> list[Path]:
    """The base's check reports, then a ``reports/`` folder beside each layer (a team's own runs)."""
    from ._locate import find_reports

    folders = [find_reports(cat.root)]
    for _name, root in cat.layers[1:]:
        beside = root.parent / "reports"
        if beside.is_dir() and all(beside.resolve() != f.resolve() for f in folders):
            folders.append(beside)
    return folders


def _root_of(cat: Catalogue, entry_id: str) -> Path:
    """The folder of the layer an entry comes from: two layers may both be called `catalogue/`."""
    path = cat.files[entry_id]
    return next((root for _name, root in reversed(cat.layers) if path.is_relative_to(root)), cat.root)


def _add_layer(cat: Catalogue, layer: Catalogue) -> None:
    name = layer_name(layer.root, cat)
    cat.layers.append((name, layer.root))
    cat.problems += layer.problems
    for area in layer.areas:
        if cat.area(area.id) is not None:
            cat.layer_findings.append(
                (
                    _display(layer.root / "areas.yaml", layer.root),
                    1,
                    1,
                    "area-collision",
                    f"area {area.id!r} is already defined by a catalogue below this one",
                    layer.root / "areas.yaml",
                )
            )
        else:
            cat.areas.append(area)
    cat.areas.sort(key=lambda a: a.order)
    for entry_id, paths in layer.duplicates.items():
        for path in paths[1:]:
            cat.layer_findings.append(
                (
                    _display(path, layer.root),
                    1,
                    1,
                    "duplicate-id",
                    f"id {entry_id!r} is already used by {_display(paths[0], layer.root)}",
                    path,
                )
            )
    for entry_id, entry in layer.entries.items():
        path = layer.files[entry_id]
        if entry_id in cat.entries:
            if entry.overrides != entry_id:
                line, col = layer.positions[entry_id].position_of(("id",))[1]
                cat.layer_findings.append(
                    (
                        _display(path, layer.root),
                        line,
                        col,
                        "id-collision",
                        f"id {entry_id!r} is already used by {cat.display_path(entry_id)} of the layer "
                        f"'{_root_of(cat, entry_id)}', below this record's layer '{layer.root}'; "
                        f"pick another id, or write `overrides: {entry_id}` to replace that record",
                        path,
                    )
                )
                continue
            cat.overridden[entry_id] = cat.files[entry_id]
        cat.entries[entry_id] = entry
        cat.files[entry_id] = path
        cat.positions[entry_id] = layer.positions[entry_id]
        cat.origin[entry_id] = name
    cat.__dict__.pop("backlinks", None)  # a cached_property computed before this layer is stale
