"""Building the site inside its output folder, where the folder cannot be swapped whole.

A mount point cannot be renamed (EBUSY, or EXDEV across file systems) and a folder whose parent is
not writable cannot get a sibling (EACCES, EPERM, EROFS). There the new site renders into a hidden
folder inside the old one, and only once it is complete do its top-level entries replace the old
ones: the old site stays whole while pages render, and a move that fails puts the old entries back.
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
from pathlib import Path

__all__ = ["HIDDEN", "hidden_folder", "new_folder", "remove_abandoned", "remove_abandoned_inside", "swap_entries"]

HIDDEN = re.compile(r"\.kb-(?:build|old)-(\d+)-[0-9a-f]+")  # a build's working folders inside the site


def new_folder(parent: Path, prefix: str) -> Path:
    """A new empty folder in ``parent`` named ``prefix`` + this process's pid + a random part."""
    while True:
        path = parent / f"{prefix}{os.getpid()}-{secrets.token_hex(4)}"
        try:
            path.mkdir()
            return path
        except FileExistsError:
            continue


def hidden_folder(target: Path, kind: str) -> Path:
    """A new empty hidden folder inside ``target``, named for this process."""
    return new_folder(target, f".kb-{kind}-")


def remove_abandoned(parent: Path, pattern: re.Pattern[str], marker: str) -> None:
    """Remove the folders of ``parent`` named by ``pattern`` (group 1: the pid of the build that made
    them) that hold ``marker`` and whose build is gone (killed mid-build)."""
    for path in parent.iterdir():
        match = pattern.fullmatch(path.name)
        if match is None or path.is_symlink() or not (path / marker).is_file():
            continue
        try:
            os.kill(int(match[1]), 0)
        except ProcessLookupError:
            shutil.rmtree(path, ignore_errors=True)
        except (PermissionError, OverflowError):
            continue


def remove_abandoned_inside(target: Path, marker: str) -> None:
    """Remove the hidden folders that builds of ``target`` left when they were killed."""
    remove_abandoned(target, HIDDEN, marker)


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        path.unlink()


def swap_entries(building: Path, target: Path, marker: str) -> None:
    """Replace the top-level entries of ``target`` with those of ``building``, then remove the old ones.

    ``target``'s marker stays in place throughout, so a build killed between two moves leaves a
    folder the next build still recognises as a site and may rebuild.
    """
    aside = hidden_folder(target, "old")
    (aside / marker).touch()  # what a kill leaves here is the next build's to remove
    old = [p for p in target.iterdir() if p.name != marker and HIDDEN.fullmatch(p.name) is None]
    moved: list[str] = []
    try:
        for path in old:
            os.rename(path, aside / path.name)
            moved.append(path.name)
        for path in sorted(building.iterdir(), key=lambda p: p.name != marker):  # an empty folder gets its marker first
            if path.name != marker or not (target / marker).exists():
                shutil.move(path, target / path.name)  # a rename, or a copy from another file system
    except BaseException:
        for name in moved:
            _remove(target / name)
            os.rename(aside / name, target / name)
        shutil.rmtree(aside, ignore_errors=True)
        raise
    shutil.rmtree(aside)
