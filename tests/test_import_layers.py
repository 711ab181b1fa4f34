"""The import layering in pyproject.toml ([tool.importlinter]) holds, and each contract fails when broken.

The contracts are run the way `make imports` runs them (`lint-imports`), first on this source, then on
copies of it with one import added that a contract forbids.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import trainkb

SRC = Path(trainkb.__file__).resolve().parents[1]
CONFIG = SRC.parent / "pyproject.toml"
LINT_IMPORTS = "from importlinter.cli import lint_imports_command; lint_imports_command()"
CONTRACTS = {
    "layers": "each layer imports only the layers below it",
    "features": "no feature imports another, even through a third module",
    "private": "a subpackage's private modules are imported only from inside it",
    "acyclic": "no import cycle between the modules of one package",
}


def _lint_imports(src: Path, cwd: Path) -> tuple[int, dict[str, str]]:
    """Exit status of lint-imports over the trainkb found in ``src``, and each contract's verdict."""
    env = {**os.environ, "PYTHONPATH": str(src)}
    run = subprocess.run(
        [sys.executable, "-c", LINT_IMPORTS, "--config", str(CONFIG), "--no-cache"],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=120,
    )
    verdicts = {}
    for key, name in CONTRACTS.items():
        line = next((line for line in run.stdout.splitlines() if line.startswith(f"{name} ")), "")
        verdicts[key] = line.removeprefix(f"{name} ").split(" ")[0]
    return run.returncode, verdicts


def test_the_source_keeps_every_contract(tmp_path: Path) -> None:
    code, verdicts = _lint_imports(SRC, tmp_path)
    assert verdicts == dict.fromkeys(CONTRACTS, "KEPT")
    assert code == 0


# (file to add to or create, text to append, the contract that must break)
VIOLATIONS = [
    pytest.param("catalogue/__init__.py", "import trainkb.search\n", "layers", id="catalogue-imports-search"),
    pytest.param("search/__init__.py", "import trainkb.triage\n", "layers", id="search-imports-triage"),
    pytest.param("_newfeature.py", '"""Placed in no layer."""\n', "layers", id="module-in-no-layer"),
    pytest.param("tui/__init__.py", "import trainkb.site\n", "features", id="tui-imports-site"),
    pytest.param("_present.py", "import trainkb._hook\n", "layers", id="presentation-imports-hook"),
    pytest.param("commands/site.py", "import trainkb.site._export\n", "private", id="command-imports-private"),
    pytest.param("check/_ping.py", "from . import _pong\n", "acyclic", id="cycle-inside-a-package"),
]


@pytest.mark.parametrize(("target", "line", "contract"), VIOLATIONS)
def test_a_forbidden_import_breaks_its_contract(tmp_path: Path, target: str, line: str, contract: str) -> None:
    copy = tmp_path / "src"
    shutil.copytree(SRC / "trainkb", copy / "trainkb", ignore=shutil.ignore_patterns("__pycache__"))
    path = copy / "trainkb" / target
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    path.write_text(text + line, encoding="utf-8")
    if contract == "acyclic":
        (path.parent / "_pong.py").write_text("from . import _ping\n", encoding="utf-8")
    code, verdicts = _lint_imports(copy, tmp_path)
    assert code == 1
    assert verdicts[contract] == "BROKEN", verdicts
