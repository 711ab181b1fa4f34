"""What the repository tracks: the product's own files, nothing a run left behind.

A snippet run by hand in the checkout writes its checkpoint or download where it runs; once such a
file is committed, every clone and every sdist carries it."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TOP_LEVEL = {
    ".ci",
    ".github",
    ".gitignore",
    ".pre-commit-config.yaml",
    ".pre-commit-hooks.yaml",
    "Makefile",
    "README.md",
    "benchmarks",
    "catalogue",
    "docs",
    "hatch_build.py",
    "pyproject.toml",
    "reports",
    "site",
    "src",
    "tests",
}
# what training code writes: weights, arrays, pickles
RUN_OUTPUT = (".pt", ".pth", ".ckpt", ".bin", ".safetensors", ".npy", ".npz", ".pkl")


@pytest.fixture(scope="module")
def tracked() -> list[str]:
    """The tracked paths, listed once for the module."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True)
    return [name for name in listed.stdout.decode("utf-8", "surrogateescape").split("\0") if name]


def test_the_root_holds_only_the_projects_own_entries(tracked):
    strays = sorted({name.split("/", 1)[0] for name in tracked} - TOP_LEVEL)
    assert not strays, f"tracked at the repository root but not part of the project: {strays}"


def test_no_training_output_is_tracked(tracked):
    found = [name for name in tracked if name.lower().endswith(RUN_OUTPUT)]
    assert not found, f"checkpoints or arrays tracked (a run's output?): {found}"
