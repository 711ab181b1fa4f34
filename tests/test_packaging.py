"""The wheel built from the sdist carries the catalogue and works outside the checkout."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from trainkb.catalogue import load_catalogue

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.timeout(600)
@pytest.mark.slow
def test_wheel_from_sdist_installs_and_lists(tmp_path):
    dist = tmp_path / "dist"
    # `python -m build` builds the sdist first and the wheel from that sdist.
    built = subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(dist), str(ROOT)],
        capture_output=True,
        text=True,
    )
    assert built.returncode == 0, built.stdout[-2000:] + built.stderr[-2000:]
    [wheel] = dist.glob("trainkb-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "trainkb/_bundled_catalogue/areas.yaml" in names
    assert "trainkb/_bundled_catalogue/schema.json" in names
    shipped = sorted(n for n in names if n.startswith("trainkb/_bundled_catalogue/") and n.endswith(".yaml"))
    on_disk = sorted(p for p in (ROOT / "catalogue").rglob("*.yaml"))
    assert len(shipped) == len(on_disk)
    assert [n for n in names if n.startswith("trainkb/search/_prebuilt/index-")]  # the search index, built ahead

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = [str(venv / "bin/python"), "-m", "pip", "install", "--quiet", str(wheel)]
    subprocess.run(pip, check=True, capture_output=True, text=True)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "TRAINKB_CATALOGUE"}
    proc = subprocess.run(
        [str(venv / "bin/kb"), "list", "--json"], cwd=outside, env=env, capture_output=True, text=True, check=True
    )
    rows = json.loads(proc.stdout)
    assert len(rows) == len(load_catalogue(ROOT / "catalogue").entries)
    assert all(row["path"].startswith("_bundled_catalogue/") for row in rows)
    assert "trainkb/_bundled_site/templates/entry.html.j2" in names
    found = subprocess.run(
        [str(venv / "bin/kb"), "search", "--json", "RuntimeError: Address already in use"],
        cwd=outside,
        env=env,
        capture_output=True,
        text=True,
    )
    assert json.loads(found.stdout)["results"][0]["id"] == "D4"
    subprocess.run(
        [str(venv / "bin/kb"), "site", "build", "-o", "site-out"],
        cwd=outside,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert (outside / "site-out" / "D4" / "index.html").is_file()
