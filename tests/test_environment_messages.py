"""The first commands in an odd environment: one line that says what is wrong and what to do, no traceback."""

from __future__ import annotations

import os
import shutil
import site
import subprocess
import sys
from pathlib import Path

import browsers
import pytest
from helpers import checks_yaml, record

import trainkb
from trainkb.check import CheckResult, summary_text

SRC = str(Path(trainkb.__file__).resolve().parents[1])
DDP = "RuntimeError: Expected to have finished reduction in the prior iteration before starting a new one"


def _kb(args: list[str], env: dict[str, str], python: list[str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*(python or [sys.executable]), "-m", "trainkb", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=300,
    )


def _one_line_error(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    return lines[0]


@pytest.fixture
def one_check(make_catalogue) -> str:
    return str(make_catalogue({"alpha/D1-sample.yaml": record(checks=checks_yaml({"code": "pass", "expect": "ok"}))}))


def test_kb_check_where_torch_is_not_installed(one_check, tmp_path):
    """An interpreter whose site-packages lack torch (every other package linked in, `-S` keeps the real one out)."""
    packages = tmp_path / "site-packages"
    packages.mkdir()
    for folder in site.getsitepackages():
        for item in Path(folder).iterdir():
            if not item.name.lower().startswith(("torch", "functorch", "nvidia", "triton")):
                (packages / item.name).symlink_to(item)
    env = {"PYTHONPATH": os.pathsep.join([SRC, str(packages)]), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    assert _kb(["--version"], env, [sys.executable, "-S"]).returncode == 0  # kb itself runs there
    line = _one_line_error(_kb(["--catalogue", one_check, "check"], env, [sys.executable, "-S"]))
    assert line.startswith("kb: error: torch is not importable here (No module named 'torch')")
    assert "install the torch you train with" in line


def test_kb_check_where_importing_torch_fails(one_check, tmp_path):
    broken = tmp_path / "broken" / "torch"
    broken.mkdir(parents=True)
    (broken / "__init__.py").write_text("raise ImportError('libtorch_cpu.so: cannot open shared object file')\n")
    env = {"PYTHONPATH": os.pathsep.join([str(broken.parent), SRC]), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    line = _one_line_error(_kb(["--catalogue", one_check, "check"], env))
    assert line.startswith("kb: error: torch is not importable here (ImportError: libtorch_cpu.so: cannot open")


def test_search_where_the_cache_cannot_be_written(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    env = {"XDG_CACHE_HOME": str(blocker / "cache")}  # a folder that cannot be made
    # a copy of the catalogue with one record changed: no index built ahead (`make setup`, the wheel) matches it,
    # so search has to build one (with the shipped catalogue's own index it reads that and needs no cache)
    copy = tmp_path / "catalogue"
    shutil.copytree(Path(SRC).parent / "catalogue", copy)
    changed = next(copy.glob("*/D8-*.yaml"))
    changed.write_text(changed.read_text(encoding="utf-8") + "# changed\n", encoding="utf-8")
    for _ in range(2):  # said every time, since every search has to build the index again
        proc = _kb(["--catalogue", str(copy), "search", DDP], env)
        assert proc.returncode == 0 and "D8" in proc.stdout  # search still answers
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
        assert lines[0].startswith(f"kb: cannot keep the search index in {blocker / 'cache' / 'trainkb'} (")
        assert lines[0].endswith("set XDG_CACHE_HOME to a writable folder")


def _skipped(reason: str) -> CheckResult:
    return CheckResult("D1", "c0", "skipped", 0.0, reason, "failure", "claim", "ok", "a/D1-x.yaml", 3)


def test_a_gpu_only_check_without_a_gpu_says_where_it_runs():
    text = summary_text([_skipped("needs CUDA; no GPU is available here")], "cpu-torch", 1.0)
    assert "1 × needs CUDA; no GPU is available here" in text
    assert "→ GPU checks run on a machine with a GPU; `kb show ID` lists the results committed from one" in text
    text = summary_text([_skipped("needs package 'transformers' (ModuleNotFoundError: ...)")], "cpu-torch", 1.0)
    assert "`make setup CHECKS=1` adds transformers" in text
    assert "→" not in summary_text([], "cpu-torch", 1.0)


def test_missing_browser_names_the_package_to_install(monkeypatch, tmp_path):
    monkeypatch.setattr(browsers, "CHROMIUM", tmp_path / "no-chromium")
    reason = browsers.missing_browser()
    assert reason is not None and "apt install chromium" in reason and "\n" not in reason
