"""Which checks to run: by id, area, git change and shard; and whether their needs are met."""

from __future__ import annotations

import subprocess
import sys
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion, Version

from ..catalogue import Catalogue, Check

__all__ = ["CheckTask", "changed_entry_ids", "parse_shard", "select_tasks", "skip_reason"]


@dataclass(frozen=True)
class CheckTask:
    """One check of one entry, with where it lives for annotations."""

    entry_id: str
    check: Check
    path: str
    line: int

    @property
    def key(self) -> str:
        return f"{self.entry_id}:{self.check.name}"

    @property
    def expect_kind(self) -> str:
        expect = self.check.expect
        return expect if isinstance(expect, str) else next(iter(type(expect).model_fields))


def parse_shard(text: str) -> tuple[int, int]:
    """'2/4' -> (2, 4); raises ValueError with a readable message."""
    try:
        index, count = (int(part) for part in text.split("/"))
    except ValueError:
        raise ValueError(f"--shard must look like i/n (e.g. 1/4), got {text!r}") from None
    if not 1 <= index <= count:
        raise ValueError(f"--shard {text}: need 1 <= i <= n")
    return index, count


def _changed_files(root: Path, ref: str) -> set[Path]:
    top = subprocess.run(
        ["git", "-C", str(root), "rev-parse", "--show-toplevel"], capture_output=True, text=True, check=True
    ).stdout.strip()
    # a tree (`HEAD:catalogue`) or a blob diffs against every file as changed: only a commit is a point to diff from
    probe = ["git", "-C", top, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"]
    if subprocess.run(probe, capture_output=True, text=True).returncode != 0:
        raise subprocess.CalledProcessError(128, probe, "", f"{ref!r} names no commit in {top}")
    diff = subprocess.run(
        ["git", "-C", top, "diff", "--name-only", ref, "--", str(root)], capture_output=True, text=True, check=True
    ).stdout.split()
    new = subprocess.run(
        ["git", "-C", top, "ls-files", "--others", "--exclude-standard", "--", str(root)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return {(Path(top) / name).resolve() for name in [*diff, *new]}


def changed_entry_ids(cat: Catalogue, ref: str) -> set[str]:
    """Entries whose record file differs from ``ref`` (committed, staged, unstaged or untracked).

    In a layered catalogue each layer is asked in its own repository; a layer that is not in
    one, or whose repository lacks ``ref`` (an installed base under a team's repository), is
    left out, and only when every layer fails is that an error.
    """
    changed: set[Path] = set()
    failures: list[subprocess.CalledProcessError] = []
    roots = [root for _name, root in cat.layers] or [cat.root]
    for root in roots:
        try:
            changed |= _changed_files(root, ref)
        except subprocess.CalledProcessError as exc:
            failures.append(exc)
    if len(failures) == len(roots):
        raise failures[0]
    return {entry_id for entry_id, path in cat.files.items() if path.resolve() in changed}


def select_tasks(
    cat: Catalogue,
    ids: list[str] | None = None,
    area: str | None = None,
    only: set[str] | None = None,
    shard: tuple[int, int] | None = None,
) -> list[CheckTask]:
    """Checks in catalogue order, filtered; sharding hashes the check key so it is stable."""
    wanted = {i.upper() for i in ids} if ids else None
    tasks = []
    for entry in cat.ordered():
        if wanted is not None and entry.id.upper() not in wanted:
            continue
        if area and entry.area != area:
            continue
        if only is not None and entry.id not in only:
            continue
        positions = cat.positions[entry.id]
        for index, check in enumerate(entry.checks):
            _, (line, _col) = positions.position_of(("checks", index))
            tasks.append(CheckTask(entry.id, check, cat.display_path(entry.id), line))
    if shard is not None:
        index, count = shard
        tasks = [t for t in tasks if zlib.crc32(t.key.encode()) % count == index - 1]
    return tasks


def skip_reason(check: Check, env: dict[str, Any]) -> str | None:
    """Why this environment cannot run ``check``, or None when it can."""
    needs = check.requires
    if needs.platform and sys.platform not in needs.platform:
        return f"needs platform {'/'.join(needs.platform)}; this is {sys.platform}"
    if needs.torch:
        try:
            version = Version(env["torch"].split("+")[0])
        except InvalidVersion:
            return f"cannot read the torch version {env['torch']!r}"
        if version not in SpecifierSet(needs.torch):
            return f"needs torch{needs.torch}; this is {env['torch']}"
    if needs.cuda and not env["cuda_available"]:
        return "needs CUDA; no GPU is available here"
    if needs.min_gpus and env["gpu_count"] < needs.min_gpus:
        return f"needs {needs.min_gpus} GPUs; {env['gpu_count']} available"
    for package in needs.packages:
        problem = env.get("packages_missing", {}).get(package)
        if problem is not None:
            return f"needs package {package!r} ({problem})"
    return None
