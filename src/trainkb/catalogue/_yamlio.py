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

    def position_of(self, loc: Path_) -> tuple[Path_, tuple[int, int]]:
        """The deepest known prefix of ``loc`` and its position (falls back to 1:1)."""
        for cut in range(len(loc), -1, -1):
            if loc[:cut] in self.positions:
                return loc[:cut], self.positions[loc[:cut]]
        return (), (1, 1)


def _walk(
    node: yaml.Node, here: Path_, located: Located, problems: list[YamlProblem], path: str, seen_nodes: set[int]
) -> None:
    if id(node) in seen_nodes:  # the composer hands an alias back as the very node its anchor named
        line, col = node.start_mark.line + 1, node.start_mark.column + 1
        raise _Fail(
            YamlProblem(
                path,
                line,
                col,
                dotted(here),
                "YAML anchors and aliases are not allowed in records (the anchor defined here "
                "is reused by an alias); write the value out",
            )
        )
    seen_nodes.add(id(node))
    if isinstance(node, yaml.MappingNode):
        seen: dict[Any, int] = {}
        for key_node, value_node in node.value:
            key = key_node.value if isinstance(key_node, yaml.ScalarNode) else str(key_node.value)
            line, col = key_node.start_mark.line + 1, key_node.start_mark.column + 1
            if key in seen:
                problems.append(
                    YamlProblem(
                        path, line, col, dotted((*here, key)), f"duplicate key (first defined on line {seen[key]})"
                    )
                )
                continue
            seen[key] = line
            located.positions[(*here, key)] = (line, col)
            _walk(value_node, (*here, key), located, problems, path, seen_nodes)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            located.positions[(*here, index)] = (item.start_mark.line + 1, item.start_mark.column + 1)
            _walk(item, (*here, index), located, problems, path, seen_nodes)


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


def load_yaml(file: Path, display: str | None = None) -> tuple[Located | None, list[YamlProblem]]:
    """Read one YAML document; return it with positions, or the problems that stopped it."""
    shown = display or str(file)
    try:
        raw = _read_bounded(file, shown)
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
        located = Located(None, {(): (node.start_mark.line + 1, node.start_mark.column + 1)})
        problems: list[YamlProblem] = []
        _walk(node, (), located, problems, shown, set())
        if problems:
            return None, problems
        located.data = loader.construct_document(node)
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
