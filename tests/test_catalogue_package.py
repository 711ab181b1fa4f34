"""The trainkb.catalogue front door: every name it lists resolves, it stays light, and features use it."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import trainkb.catalogue as catalogue

SRC = Path(catalogue.__file__).resolve().parents[1]


def test_every_listed_name_resolves() -> None:
    missing = [name for name in catalogue.__all__ if getattr(catalogue, name, None) is None]
    assert not missing
    assert sorted(set(catalogue.__all__)) == sorted(catalogue.__all__)


def test_an_unknown_name_is_an_attribute_error() -> None:
    try:
        catalogue.NoSuchName  # noqa: B018
    except AttributeError as exc:
        assert "NoSuchName" in str(exc)
    else:
        raise AssertionError("an unknown name resolved")


def test_importing_it_loads_neither_pydantic_nor_yaml() -> None:
    """`kb search` finds the catalogue and checks its cache through the front door."""
    code = (
        "import sys, trainkb.catalogue as c\nc.catalogue_digest(c.find_catalogue())\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'pydantic', 'yaml'}))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr


def _imported_modules(path: Path) -> list[str]:
    """Absolute names of everything ``path`` imports (relative imports resolved against its package)."""
    package = ".".join(path.relative_to(SRC.parent).with_suffix("").parts[:-1])
    names = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
            module = f"{base}.{node.module}" if node.level and node.module else (node.module or base)
            names += [module, *(f"{module}.{alias.name}" for alias in node.names)]
        elif isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
    return names


def test_features_import_the_front_door_not_its_modules() -> None:
    inside = SRC / "catalogue"
    reaching_in = {
        str(path.relative_to(SRC)): name
        for path in SRC.rglob("*.py")
        if inside not in path.parents
        for name in _imported_modules(path)
        if name.startswith("trainkb.catalogue._")
    }
    assert not reaching_in
