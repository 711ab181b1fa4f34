"""`kb doctor` probes, each tested by faking the condition it detects."""

from __future__ import annotations

import json
import os
from pathlib import Path
from types import SimpleNamespace

from trainkb import _doctor
from trainkb._doctor import Context, run_probes
from trainkb.cli import main


def by_probe(findings):
    return {f.probe: f for f in findings}


def fake_torch(cuda=False, capability=(8, 0), tf32=False, bf16=True):
    matmul = SimpleNamespace(allow_tf32=tf32, fp32_precision="none")
    return SimpleNamespace(
        __version__="2.13.0",
        version=SimpleNamespace(cuda="12.8" if cuda else None),
        backends=SimpleNamespace(cuda=SimpleNamespace(matmul=matmul)),
        cuda=SimpleNamespace(
            is_available=lambda: cuda,
            device_count=lambda: 1 if cuda else 0,
            get_device_name=lambda i: "NVIDIA A100",
            get_device_capability=lambda i: capability,
            is_bf16_supported=lambda: bf16,
        ),
    )


def test_tf32_off_on_ampere_warns():
    findings = by_probe(run_probes(ctx=Context(environ={}, torch=fake_torch(cuda=True))))
    assert findings["tf32_matmul"].status == "warn"
    assert findings["tf32_matmul"].entry == "P2"
    assert findings["versions"].observed.endswith("GPUs: NVIDIA A100")


def test_gpu_probes_are_not_applicable_without_a_gpu():
    findings = by_probe(run_probes(ctx=Context(environ={}, torch=fake_torch(cuda=False))))
    assert findings["tf32_matmul"].status == "n/a"
    assert findings["bf16_support"].status == "n/a"


def test_pre_ampere_bf16_warns():
    findings = by_probe(run_probes(ctx=Context(environ={}, torch=fake_torch(cuda=True, capability=(7, 0)))))
    assert findings["bf16_support"].status == "warn"


def test_small_dev_shm_warns(monkeypatch, tmp_path):
    monkeypatch.setattr(os, "statvfs", lambda path: SimpleNamespace(f_frsize=4096, f_blocks=16384))  # 64 MiB
    finding = by_probe(run_probes(ctx=Context(environ={}, torch=None, shm_path=str(tmp_path))))["dev_shm_size"]
    assert finding.status == "warn" and finding.observed.endswith("is 64 MiB")


def test_spawn_start_method_warns():
    finding = by_probe(run_probes(ctx=Context(environ={}, torch=None, start_method="spawn")))["start_method"]
    assert (finding.entry, finding.status) == ("DP6", "warn")


def test_legacy_nccl_variables_warn():
    finding = by_probe(run_probes(ctx=Context(environ={"NCCL_ASYNC_ERROR_HANDLING": "1"}, torch=None)))
    assert finding["distributed_debug"].status == "warn"


def test_source_scan_finds_rank_as_device_and_cuda_amp(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(
        "import os, torch\nrank = int(os.environ['RANK'])\ntorch.cuda.set_device(rank)\n"
        "scaler = torch.cuda.amp.GradScaler()\n"
    )
    findings = by_probe(run_probes(ctx=Context(environ={"RANK": "9"}, torch=None, sources=(tmp_path,))))
    assert findings["local_rank"].status == "warn"
    assert findings["deprecated_cuda_amp"].status == "warn"
    assert findings["deprecated_cuda_amp"].observed == f"{script}:4"
    script.write_text(
        "import os, torch\nlocal_rank = int(os.environ['LOCAL_RANK'])\ntorch.cuda.set_device(local_rank)\n"
    )
    findings = by_probe(run_probes(ctx=Context(environ={}, torch=None, sources=(tmp_path,))))
    assert findings["local_rank"].status == "ok"
    assert findings["deprecated_cuda_amp"].status == "ok"


def test_a_crashing_probe_does_not_stop_the_others(monkeypatch):
    def broken(ctx):
        raise RuntimeError("boom")

    monkeypatch.setattr(_doctor, "PROBES", [broken, _doctor.start_method])
    findings = run_probes(ctx=Context(environ={}, torch=None))
    assert findings[0].observed == "probe failed: RuntimeError: boom"
    assert findings[1].probe == "start_method"


def test_every_probe_names_a_real_entry():
    from trainkb.catalogue import find_catalogue, load_catalogue

    ids = set(load_catalogue(find_catalogue()).entries)
    findings = run_probes(ctx=Context(environ={}, torch=None))
    assert {f.entry for f in findings} <= ids


def test_cli_json(capsys):
    status = main(["doctor", "--json"])
    rows = json.loads(capsys.readouterr().out)
    assert {"entry", "probe", "status", "observed", "message", "title"} <= set(rows[0])
    assert status in (0, 1)


def test_a_source_that_is_not_a_regular_file_is_said_to_be_unread(tmp_path):
    """`kb doctor FIFO` or `kb doctor /dev/zero` read nothing: that is not "no torch.cuda.amp use found"."""
    fifo = tmp_path / "train.py"
    os.mkfifo(fifo)
    alone = by_probe(run_probes(ctx=Context(environ={}, torch=None, sources=(fifo, Path("/dev/zero")))))
    finding = alone["deprecated_cuda_amp"]
    assert finding.status == "n/a"
    assert finding.observed == f"no torch.cuda.amp use in 0 file(s) read; not read: {fifo}, /dev/zero"
    script = tmp_path / "eval.py"
    script.write_text("import torch\n", encoding="utf-8")
    mixed = by_probe(run_probes(ctx=Context(environ={}, torch=None, sources=(script, fifo))))["deprecated_cuda_amp"]
    assert mixed.status == "info" and mixed.observed.endswith(f"in 1 file(s) read; not read: {fifo}")
