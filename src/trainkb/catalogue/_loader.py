"""Load a catalogue folder into validated entries, collecting every problem at once."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from ._locate import layers_digest, record_files
from ._schema import AREA_FILE, Area, AreasFile, Entry
from ._yamlio import Located, YamlProblem, dotted, load_yaml

__all__ = ["Backlink", "Catalogue", "load_catalogue", "validation_problems"]

_UNION_TAGS = {"ok", "raises", "warns", "hangs"}


@dataclass(frozen=True)
class Backlink:
    source: str
    relation: str
    why: str


@dataclass
class Catalogue:
    """Entries keyed by id, their source files and positions, and what failed to load."""

    root: Path
    areas: list[Area] = field(default_factory=list)
    entries: dict[str, Entry] = field(default_factory=dict)
    files: dict[str, Path] = field(default_factory=dict)
    positions: dict[str, Located] = field(default_factory=dict)
    problems: list[YamlProblem] = field(default_factory=list)
    duplicates: dict[str, list[Path]] = field(default_factory=dict)
    # Layered catalogues (_layers.py): (name, folder) base first; the layer of each entry
    # that a layer above the base added; the files that ``overrides:`` replaced; what layering found.
    layers: list[tuple[str, Path]] = field(default_factory=list)
    origin: dict[str, str] = field(default_factory=dict)
    overridden: dict[str, Path] = field(default_factory=dict)
    layer_findings: list[tuple[str, int, int, str, str, Path]] = field(default_factory=list)  # shown, ..., file
    base_problems: int = 0  # how many of ``problems`` (the first ones) the base folder's files have

    def area(self, area_id: str) -> Area | None:
        return next((a for a in self.areas if a.id == area_id), None)

    def ordered(self) -> list[Entry]:
        """Entries in area order, then section order, then natural id order."""
        area_rank = {a.id: (a.order, {s.id: i for i, s in enumerate(a.sections)}) for a in self.areas}

        def key(entry: Entry) -> tuple[Any, ...]:
            order, sections = area_rank.get(entry.area, (10**6, {}))
            prefix = entry.id.rstrip("0123456789")
            return (order, sections.get(entry.section, 10**6), prefix, int(entry.id[len(prefix) :]))

        return sorted(self.entries.values(), key=key)

    @cached_property
    def backlinks(self) -> dict[str, list[Backlink]]:
        """Who links to each entry; computed, never written in the YAML."""
        found: dict[str, list[Backlink]] = {}
        for entry in self.ordered():
            for link in entry.links:
                found.setdefault(link.id, []).append(Backlink(entry.id, link.relation, link.why))
        return found

    def display_path(self, entry_id: str) -> str:
        path = self.files[entry_id]
        roots = [root for _name, root in self.layers if path.is_relative_to(root)]
        return _display(path, roots[-1] if roots else self.root)

    def content_hash(self) -> str:
        """A hash of every source file, for caches keyed on the catalogue's content."""
        return layers_digest([root for _name, root in self.layers] or [self.root])


def _display(path: Path, root: Path) -> str:
    try:
        return str(path.relative_to(root.parent))
    except ValueError:
        return str(path)


def in_file(problems: list[YamlProblem], path: Path) -> list[YamlProblem]:
    """``problems`` stamped with the real file they are about."""
    return [replace(problem, file=path) for problem in problems]


def validation_problems(err: ValidationError, located: Located, shown: str) -> list[YamlProblem]:
    """Turn pydantic errors into ``path:line:col: field: message`` problems."""
    problems = []
    for item in err.errors(include_url=False):
        loc = _clean_loc(item["loc"])
        _known, (line, col) = located.position_of(loc)
        message = item["msg"]
        if item["type"] == "extra_forbidden":
            message = "unknown key (not part of the record format)"
        elif item["type"] == "missing":
            message = "required field is missing"
        elif message.startswith("Value error, "):
            message = message.removeprefix("Value error, ")
        if item["type"] == "string_type" and isinstance(item.get("input"), dict):
            message += " (YAML read a mapping here: quote a value that contains ': ')"
        problems.append(YamlProblem(shown, line, col, dotted(loc) or "(record)", message))
    return problems


def _clean_loc(loc: Iterable[Any]) -> tuple[str | int, ...]:
    """Drop pydantic's union tags so the field path reads like the YAML."""
    out: list[str | int] = []
    for part in loc:
        if isinstance(part, str) and (part.startswith("function-") or part in {"literal['ok']"}):
            continue
        if out and part == out[-1] and part in _UNION_TAGS:
            continue
        out.append(part)
    return tuple(out)


def _validate(model: type[BaseModel], located: Located, shown: str) -> tuple[Any, list[YamlProblem]]:
    if not isinstance(located.data, dict):
        return None, [YamlProblem(shown, 1, 1, "", "expected a mapping of fields at the top level")]
    try:
        return model.model_validate(located.data), []
    except ValidationError as err:
        return None, validation_problems(err, located, shown)


def _read_record(
    path: Path, shown: str, known: Mapping[str, Any] | None
) -> tuple[Entry | None, Located | None, list[YamlProblem]]:
    """The record at ``path``, its document and what stopped it. A kept document (``known``) that does
    not validate is read from the file again, which then decides, with positions for its problems."""
    located, problems = load_yaml(path, shown, known)
    if located is None:
        return None, None, problems
    entry, problems = _validate(Entry, located, shown)
    if entry is None and known and located.digest in known:
        return _read_record(path, shown, {})
    return entry, located, problems


def load_catalogue(root: Path, areas_required: bool = True, known: Mapping[str, Any] | None = None) -> Catalogue:
    """Load areas.yaml and every ``<area>/<ID>-<slug>.yaml`` (or ``.yml``) below ``root``.

    A layer (``areas_required=False``) may leave areas.yaml out and use its base's areas. ``known``:
    record documents read before, by the SHA-256 of their file (see ``load_yaml``).
    """
    root = root.resolve()
    cat = Catalogue(root=root)
    areas_path = root / AREA_FILE
    if areas_path.exists() or areas_path.is_symlink():
        located, problems = load_yaml(areas_path, _display(areas_path, root))
        cat.problems += in_file(problems, areas_path)
        if located is not None:
            parsed, problems = _validate(AreasFile, located, _display(areas_path, root))
            cat.problems += in_file(problems, areas_path)
            if parsed is not None:
                cat.areas = sorted(parsed.areas, key=lambda a: a.order)
    elif areas_required:
        cat.problems.append(YamlProblem(_display(areas_path, root), 1, 1, "", "missing areas.yaml", areas_path))
    for path in record_files(root):
        shown = _display(path, root)
        entry, located, problems = _read_record(path, shown, known)
        cat.problems += in_file(problems, path)
        if entry is None or located is None:
            continue
        if entry.id in cat.entries:
            cat.duplicates.setdefault(entry.id, [cat.files[entry.id]]).append(path)
            continue
        cat.entries[entry.id] = entry
        cat.files[entry.id] = path
        cat.positions[entry.id] = located
    return cat
