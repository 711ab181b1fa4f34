"""The pre-commit hooks this repository exposes, run in a scratch team repository.

The test runs the `language: system` hooks (the `kb` of this environment), which needs no
network: `pre-commit try-repo` copies this repository's hook manifest and runs the entry.
`kb-lint` (`language: python`) would pip-install trainkb and its dependencies from PyPI into
pre-commit's cache; its manifest entry is validated here, its run is left to a networked CI.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import TEAM_AREAS, TEAM_RECORD, team_paste

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def _env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "TRAINKB_", "PRE_COMMIT"))}
    env.update(
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
        PRE_COMMIT_HOME=str(tmp_path / "pre-commit-home"),
        XDG_CACHE_HOME=str(tmp_path / "cache"),
        GIT_AUTHOR_NAME="t",
        GIT_AUTHOR_EMAIL="t@example.com",
        GIT_COMMITTER_NAME="t",
        GIT_COMMITTER_EMAIL="t@example.com",
    )
    return env


def _run(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=240)


def _pre_commit(hook: str, repo: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return _run(
        [sys.executable, "-m", "pre_commit", "try-repo", str(ROOT), hook, "--all-files", "--verbose"], repo, env
    )


@pytest.fixture
def team_repo(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    env = _env(tmp_path)
    repo = tmp_path / "team-catalogue"
    layer = repo / "catalogue"
    (layer / "cluster").mkdir(parents=True)
    (layer / "catalogue.yaml").write_text("name: team-x\n", encoding="utf-8")
    (layer / "areas.yaml").write_text(TEAM_AREAS, encoding="utf-8")
    (layer / "cluster" / "Q1-negative-shard-length.yaml").write_text(TEAM_RECORD, encoding="utf-8")
    for args in (["git", "init", "-q"], ["git", "add", "."], ["git", "commit", "-qm", "team layer"]):
        assert _run(args, repo, env).returncode == 0
    return repo, env


def test_manifest_is_valid():
    run = subprocess.run(
        [sys.executable, "-m", "pre_commit", "validate-manifest", str(ROOT / ".pre-commit-hooks.yaml")],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stdout + run.stderr


# pre-commit copies this repository and runs kb as processes. Fast: test_manifest_is_valid, a clean layer linting
# clean (test_layers.py), a drafted record linting with only its TODOs (test_new.py)
@pytest.mark.slow
def test_lint_hook_passes_a_clean_layer_and_fails_on_todos(team_repo):
    repo, env = team_repo
    run = _pre_commit("kb-lint-system", repo, env)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "Passed" in run.stdout

    crash = repo.parent / "crash.log"
    crash.write_text(team_paste(), encoding="utf-8")
    drafted = _run(
        [
            sys.executable,
            "-m",
            "trainkb",
            "new",
            "--catalogue",
            "catalogue",
            "--area",
            "cluster",
            "--id",
            "Q2",
            "--from",
            str(crash),
        ],
        repo,
        env,
    )
    assert drafted.returncode == 0, drafted.stderr
    run = _pre_commit("kb-lint-system", repo, env)
    assert run.returncode == 1
    assert "Failed" in run.stdout and "[todo]" in run.stdout and "catalogue/cluster/Q2-" in run.stdout


@pytest.mark.slow
def test_check_hook_runs_the_changed_record(team_repo):
    repo, env = team_repo
    record = repo / "catalogue" / "cluster" / "Q1-negative-shard-length.yaml"
    record.write_text(record.read_text(encoding="utf-8").replace("negative length", "negative size"), encoding="utf-8")
    run = _pre_commit("kb-check-changed", repo, env)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "Q1" in run.stdout and "1 passed" in run.stdout, run.stdout

    record.write_text(
        record.read_text(encoding="utf-8").replace("match: negative dimension", "match: positive"), encoding="utf-8"
    )
    run = _pre_commit("kb-check-changed", repo, env)
    assert run.returncode == 1 and "Failed" in run.stdout, run.stdout
