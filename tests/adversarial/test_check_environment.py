"""What a check can see: an allow-listed environment, no secret anywhere up its process tree,
and no GPU unless it asks for one."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from helpers import checks_yaml, record

from trainkb.catalogue import load_catalogue
from trainkb.check import check_env, check_environment, select_tasks

SECRETS = {
    "GITHUB_PAT": "ghp_rel21aPatValue0123456789",
    "DATABASE_URL": "postgres://app:hunter2rel21a@db.internal/prod",
    "SLACK_WEBHOOK_URL": "https://hooks.slack.com/services/T000/B000/rel21aWebhookSecret",
    "MY_PASSPHRASE": "correct-horse-rel21a",
    "HF_TOKEN": "hf_rel21aTokenValue",
    "AWS_SECRET_ACCESS_KEY": "rel21aAwsSecretKey",
}

# Reads its own environment and then /proc/<pid>/environ of every ancestor (supervisor,
# forkserver, `kb check` itself); none may hold a secret.
LOOKS_FOR_SECRETS = """\
import os
from pathlib import Path
secrets = {secrets!r}
leaked = [k for k, v in os.environ.items() if any(s in v for s in secrets)]
assert not leaked, f"in os.environ: {{leaked}}"
assert os.environ.get("NCCL_DEBUG") == "INFO", "an allow-listed variable must pass"
pid, seen = os.getpid(), []
while pid > 1:
    try:
        block = Path(f"/proc/{{pid}}/environ").read_bytes()
    except OSError:
        block = b""
    seen += [(pid, s) for s in secrets if s.encode() in block]
    pid = int(Path(f"/proc/{{pid}}/stat").read_text().rsplit(")", 1)[1].split()[1])
assert not seen, f"readable in an ancestor's /proc/<pid>/environ: {{seen}}"
"""


@pytest.mark.slow
def test_no_secret_reaches_a_check_or_its_ancestors(make_catalogue):
    code = LOOKS_FOR_SECRETS.format(secrets=sorted(SECRETS.values()))
    root = make_catalogue({"alpha/D1-sample.yaml": record(checks=checks_yaml({"code": code, "expect": "ok"}))})
    env = dict(os.environ, NCCL_DEBUG="INFO", **SECRETS)
    proc = subprocess.run(
        [sys.executable, "-m", "trainkb", "--catalogue", str(root), "check", "-q", "--no-drift"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.slow
def test_kb_own_variables_do_not_reach_a_check_or_its_ancestors(make_catalogue):
    """kb reads GIT_* and TRAINKB_* itself; no check may read them, not even from kb's /proc/<pid>/environ."""
    own = {"GIT_COMMITTER_NAME": "rel30git-committer", "TRAINKB_SITE_URL": "https://rel30kb.example.invalid/"}
    code = LOOKS_FOR_SECRETS.format(secrets=sorted(own.values()))
    root = make_catalogue({"alpha/D1-sample.yaml": record(checks=checks_yaml({"code": code, "expect": "ok"}))})
    proc = subprocess.run(
        [sys.executable, "-m", "trainkb", "--catalogue", str(root), "check", "-q", "--no-drift"],
        env=dict(os.environ, NCCL_DEBUG="INFO", **own),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_allow_list_keeps_what_torch_needs_and_nothing_else():
    environ = {
        "PATH": "/bin",
        "HOME": "/h",
        "LC_ALL": "C",
        "PYTHONPATH": "x",
        "CUDA_HOME": "/c",
        "NCCL_DEBUG": "INFO",
        "TORCH_LOGS": "+dynamo",
        "PYTORCH_CUDA_ALLOC_CONF": "a",
        "OMP_NUM_THREADS": "1",
        "HF_HOME": "/hf",
        **SECRETS,
        "CI_JOB_JWT": "x",
        "SSH_AUTH_SOCK": "/s",
        "RANDOM_VAR": "y",
    }
    kept = check_environment(environ)
    assert set(kept) == {
        "PATH",
        "HOME",
        "LC_ALL",
        "PYTHONPATH",
        "CUDA_HOME",
        "NCCL_DEBUG",
        "TORCH_LOGS",
        "PYTORCH_CUDA_ALLOC_CONF",
        "OMP_NUM_THREADS",
        "HF_HOME",
    }


def test_only_cuda_checks_see_the_gpu(make_catalogue, monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "1")
    checks = checks_yaml(
        {"name": "cpu", "code": "pass", "expect": "ok"},
        {"name": "gpu", "code": "pass", "expect": "ok", "requires": {"cuda": True}},
    )
    cpu, gpu = select_tasks(load_catalogue(make_catalogue({"alpha/D1-sample.yaml": record(checks=checks)})))
    assert check_env(cpu)["CUDA_VISIBLE_DEVICES"] == ""
    assert check_env(gpu)["CUDA_VISIBLE_DEVICES"] == "1"


@pytest.mark.slow
def test_a_cpu_check_runs_with_no_gpu_visible(make_catalogue, capsys):
    from trainkb.cli import main

    code = (
        "import os, torch\nassert os.environ['CUDA_VISIBLE_DEVICES'] == ''\n"
        "assert not torch.cuda.is_initialized()\nassert torch.cuda.device_count() == 0\n"
    )
    root = make_catalogue({"alpha/D1-sample.yaml": record(checks=checks_yaml({"code": code, "expect": "ok"}))})
    assert main(["--catalogue", str(root), "check", "-q", "--no-drift"]) == 0, capsys.readouterr().out


WARM_IMPORT_WATCHED = """\
import functools, torch
calls = []
def watch(module, name):
    original = getattr(module, name, None)
    if original is not None:
        @functools.wraps(original)
        def counted(*args, **kwargs):
            calls.append(name)
            return original(*args, **kwargs)
        setattr(module, name, counted)
for name in ("is_available", "device_count", "_lazy_init", "init", "current_device", "get_device_properties"):
    watch(torch.cuda, name)
for name in ("_cuda_getDeviceCount", "_cuda_init"):
    watch(torch._C, name)
import trainkb.check._warm
print(calls, torch.cuda.is_initialized())
"""


@pytest.mark.slow
def test_the_warm_server_never_asks_cuda():
    """A CUDA query in the forkserver would fix the device list before CUDA_VISIBLE_DEVICES is set."""
    proc = subprocess.run([sys.executable, "-c", WARM_IMPORT_WATCHED], capture_output=True, text=True, timeout=300)
    assert proc.stdout.strip() == "[] False", proc.stdout + proc.stderr
