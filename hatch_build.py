"""Wheel build hook: ship the bundled catalogue's search index built ahead (trainkb/search/_prebuild.py),
so that a fresh install's first `kb search` reads it instead of parsing and validating every record."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface


class PrebuiltIndex(BuildHookInterface):  # type: ignore[type-arg]
    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name != "wheel" or version == "editable":  # an editable install: `make setup` builds it
            return
        self._folder = Path(tempfile.mkdtemp(prefix="trainkb-index-"))
        root = Path(self.root)
        env = {key: value for key, value in os.environ.items() if key != "TRAINKB_CATALOGUE"}
        env["PYTHONPATH"] = str(root / "src")
        command = [sys.executable, "-m", "trainkb.search._prebuild", str(root / "catalogue"), str(self._folder)]
        subprocess.run(command, env=env, check=True, capture_output=True, text=True)
        for path in [*self._folder.glob("index-*.marshal"), *self._folder.glob("parts-*.marshal")]:
            build_data["force_include"][str(path)] = f"trainkb/search/_prebuilt/{path.name}"

    def finalize(self, version: str, build_data: dict[str, Any], artifact_path: str) -> None:
        folder = getattr(self, "_folder", None)
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)
