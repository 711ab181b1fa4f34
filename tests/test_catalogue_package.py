"""The trainkb.catalogue front door: every name it lists resolves and it stays light.

That nothing outside the package reaches past it is the private-modules import contract (test_import_layers.py).
"""

from __future__ import annotations

import subprocess
import sys

import trainkb.catalogue as catalogue


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
