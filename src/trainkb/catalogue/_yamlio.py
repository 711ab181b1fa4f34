"""Safe YAML loading that keeps source positions and refuses to lose data.

pyyaml silently keeps the last of two equal keys; here a duplicate key is an error. Records
need no anchors or aliases, and an alias is how a few hundred bytes expand into gigabytes
("billion laughs") or into a structure that contains itself, so an alias is an error too.
Only a regular file under the size limit is read, and never more than the limit.
Every value's line and column is remembered so that a validation error deep inside a
record can still be reported as ``path:line:col``.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ._locate import MAX_RECORD_BYTES

__all__ = ["MAX_RECORD_BYTES", "Located", "YamlProblem", "dotted", "load_yaml"]

try:  # libyaml is several times faster; fall back to pure Python when it is absent.
    _Loader: type = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - depends on how pyyaml was built
    _Loader = yaml.SafeLoader

Path_ = tuple[str | int, ...]


@dataclass(frozen=True)
class YamlProblem:
    """A located problem in a file, before or after validation."""

    path: str
    line: int
    col: int
    field: str
    message: str
    file: Path | None = None  # the real file (``path`` is how it is shown): layers may share a shown path

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}:{self.col}"
        return f"{where}: {self.field}: {self.message}" if self.field else f"{where}: {self.message}"


@dataclass
class Located:
    """Parsed data plus the 1-based (line, col) of every key and item in it."""

    data: Any
    positions: dict[Path_, tuple[int, int]] = field(default_factory=dict)
    digest: str | None = None  # the SHA-256 of the file's bytes, where the caller asked for it

    def position_of(self, loc: Path_) -> tuple[Path_, tuple[int, int]]:
        """The deepest known prefix of ``loc`` and its position (falls back to 1:1)."""
        for cut in range(len(loc), -1, -1):
            if loc[:cut] in self.positions:
                return loc[:cut], self.positions[loc[:cut]]
        return (), (1, 1)


_STR, _MAP, _SEQ = "tag:yaml.org,2002:str", "tag:yaml.org,2002:map", "tag:yaml.org,2002:seq"


class _Walk:
    """One pass over the node tree that finds aliases and duplicate keys, records positions and, for a
    plain document (default tags, scalar keys), builds the same data pyyaml's constructor would. Any
    other document is left to the constructor, which then reads it whole (about twice this pass's cost)."""

    def __init__(self, loader: Any, located: Located, path: str) -> None:
        self.loader, self.located, self.path = loader, located, path
        self.problems: list[YamlProblem] = []
        self.seen_nodes: set[int] = set()
        self.plain = True  # every node so far built here exactly as the constructor builds it

    def node(self, node: yaml.Node, here: Path_) -> Any:
        if id(node) in self.seen_nodes:  # the composer hands an alias back as the very node its anchor named
            line, col = node.start_mark.line + 1, node.start_mark.column + 1
            raise _Fail(
                YamlProblem(
                    self.path,
                    line,
                    col,
                    dotted(here),
                    "YAML anchors and aliases are not allowed in records (the anchor defined here "
                    "is reused by an alias); write the value out",
                )
            )
        self.seen_nodes.add(id(node))
        if isinstance(node, yaml.MappingNode):
            return self._mapping(node, here)
        if isinstance(node, yaml.SequenceNode):
            self.plain = self.plain and node.tag == _SEQ
            items = []
            for index, item in enumerate(node.value):
                self.located.positions[(*here, index)] = (item.start_mark.line + 1, item.start_mark.column + 1)
                items.append(self.node(item, (*here, index)))
            return items
        return self._scalar(node)

    def _mapping(self, node: yaml.MappingNode, here: Path_) -> dict[Any, Any]:
        self.plain = self.plain and node.tag == _MAP
        seen: dict[Any, int] = {}
        built: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            key = key_node.value if isinstance(key_node, yaml.ScalarNode) else str(key_node.value)
            line, col = key_node.start_mark.line + 1, key_node.start_mark.column + 1
            if key in seen:
                self.problems.append(
                    YamlProblem(
                        self.path,
                        line,
                        col,
                        dotted((*here, key)),
                        f"duplicate key (first defined on line {seen[key]})",
                    )
                )
                continue
            seen[key] = line
            self.located.positions[(*here, key)] = (line, col)
            # a key that is not a scalar is the constructor's to read; a merge key (<<) or a value key (=)
            # has no constructor of its own, so building it fails and hands the document over too
            self.plain = self.plain and isinstance(key_node, yaml.ScalarNode)
            value = self.node(value_node, (*here, key))
            if self.plain:
                built[self._scalar(key_node)] = value
        return built

    def _scalar(self, node: yaml.Node) -> Any:
        if node.tag == _STR:
            return node.value  # what construct_yaml_str returns for a scalar
        if not self.plain:
            return None
        try:
            return self.loader.construct_object(node, deep=True)
        except Exception:  # the constructor, run afresh over the whole document, raises it in its place
            self.plain = False
            return None


def _construct(text: str) -> Any:
    """pyyaml's own construction of the document in ``text``, from a fresh parse: a construction that
    failed part way leaves its loader's state behind."""
    loader = _Loader(text)
    try:
        return loader.construct_document(loader.get_single_node())
    finally:
        loader.dispose()


def dotted(loc: Path_) -> str:
    """Render a location tuple as ``checks[0].expect.raises``."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _decode(raw: bytes, path: str) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        col = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        raise _Fail(YamlProblem(path, line, col, "", f"not valid UTF-8 (byte 0x{raw[exc.start]:02x})")) from None


class _Fail(Exception):
    def __init__(self, problem: YamlProblem) -> None:
        super().__init__(str(problem))
        self.problem = problem


def load_yaml(
    file: Path, display: str | None = None, known: Mapping[str, Any] | None = None
) -> tuple[Located | None, list[YamlProblem]]:
    """Read one YAML document; return it with positions, or the problems that stopped it.

    With ``known`` (documents read before, by the SHA-256 of their bytes) the result carries its
    digest, and bytes read before are not parsed again: parsing is most of a catalogue's load. Such
    a document comes without positions, so only a caller that reports no problem passes ``known``."""
    shown = display or str(file)
    digest = None
    try:
        raw = _read_bounded(file, shown)
        if known is not None:
            import hashlib  # only here: the warm paths never hash a record

            digest = hashlib.sha256(raw).hexdigest()
            if digest in known:
                return Located(known[digest], digest=digest), []
        text = _decode(raw, shown)
    except _Fail as fail:
        return None, [fail.problem]
    except OSError as exc:
        return None, [YamlProblem(shown, 1, 1, "", f"cannot read: {exc.strerror or exc}")]
    if "\x00" in text:
        return None, [YamlProblem(shown, 1, 1, "", "file contains NUL bytes; is it binary?")]
    if not text.strip():
        return None, [YamlProblem(shown, 1, 1, "", "file is empty")]
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        if node is None or (isinstance(node, yaml.ScalarNode) and not node.value):
            return None, [YamlProblem(shown, 1, 1, "", "file holds no YAML document")]
        located = Located(None, {(): (node.start_mark.line + 1, node.start_mark.column + 1)}, digest)
        walk = _Walk(loader, located, shown)
        data = walk.node(node, ())
        if walk.problems:
            return None, walk.problems
        located.data = data if walk.plain else _construct(text)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        message = " ".join(filter(None, [exc.context, exc.problem]))
        if _tab_at(text, line):
            message += " (YAML forbids tabs for indentation; use spaces)"
        elif "mapping values are not allowed" in message:
            message += " (quote a value that contains ': ')"
        return None, [YamlProblem(shown, line, col, "", f"invalid YAML: {message}")]
    except yaml.YAMLError as exc:
        return None, [YamlProblem(shown, 1, 1, "", f"invalid YAML: {exc}")]
    except _Fail as fail:
        return None, [fail.problem]
    except RecursionError:
        return None, [YamlProblem(shown, 1, 1, "", "invalid YAML: nested too deeply")]
    finally:
        loader.dispose()
    return located, []


def _read_bounded(file: Path, shown: str) -> bytes:
    """The bytes of a regular file no larger than the limit; anything else is a located problem.

    Opened without blocking (a FIFO named like a record must not hang the loader) and read
    at most one byte past the limit, so a file that grows after stat() is still refused.
    """
    fd = os.open(file, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            kind = "a directory" if stat.S_ISDIR(info.st_mode) else "not a regular file"
            raise _Fail(YamlProblem(shown, 1, 1, "", f"is {kind}; it must be a regular YAML file"))
        too_big = YamlProblem(
            shown,
            1,
            1,
            "",
            f"file is {info.st_size / 1e6:.1f} MB; records are limited to {MAX_RECORD_BYTES // 1024} KB",
        )
        if info.st_size > MAX_RECORD_BYTES:
            raise _Fail(too_big)
        with os.fdopen(os.dup(fd), "rb") as handle:
            raw = handle.read(MAX_RECORD_BYTES + 1)
        if len(raw) > MAX_RECORD_BYTES:
            raise _Fail(too_big)
        return raw
    finally:
        os.close(fd)


def _tab_at(text: str, line: int) -> bool:
    lines = text.splitlines()
    return 0 < line <= len(lines) and lines[line - 1].lstrip(" ").startswith("\t")
