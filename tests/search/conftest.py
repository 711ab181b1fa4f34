"""A small fixture catalogue for search tests, and a private index cache per test."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import AREAS

RECORDS = {
    "alpha/D1-unused.yaml": r"""
id: D1
title: 'DDP: "Expected to have finished reduction in the prior iteration" (unused parameters)'
area: alpha
section: one
tags: [ddp, unused-parameters]
aliases:
  - find_unused_parameters error
  - parameters that were not used in producing loss
symptom: The second iteration under `DistributedDataParallel` raises about unfinished reduction.
root_cause: A parameter that never contributes to the loss gets no gradient, so its bucket never fills.
fix: Make every output reach the loss, or pass `find_unused_parameters=True`.
fix_summary: Pass `find_unused_parameters=True` to DDP, or make every output reach the loss.
signatures:
  - literal: Expected to have finished reduction in the prior iteration before starting a new one
    names_cause: true
    type: RuntimeError
    example: "Expected to have finished reduction in the prior iteration before starting a new one.
      This error indicates that your module has parameters that were not used in producing loss."
  - regex: Parameter indices which did not receive grad for rank \d+
    names_cause: true
    kind: log
    example: "Parameter indices which did not receive grad for rank 1: 2 3"
verification: {status: manual, reason: test fixture}
""",
    "alpha/D2-port.yaml": r"""
id: D2
title: Second torchrun job on one node fails with "Address already in use"
area: alpha
section: one
tags: [torchrun, port, rendezvous]
aliases: [EADDRINUSE on the master port, port 29500 already taken]
symptom: A second launch on the same machine dies at rendezvous because the store port is taken.
root_cause: Both jobs use the default `MASTER_PORT` 29500.
fix: Give each job its own `--master_port`, or use `--rdzv-endpoint=localhost:0`.
fix_summary: Give each job its own `--master_port`, or use `--rdzv-endpoint=localhost:0`.
signatures:
  - regex: "failed to (?:bind|listen)[^\n]*(?:Address already in use|EADDRINUSE)"
    names_cause: true
    kind: log
    example: "The server socket has failed to bind to [::]:29500 (errno: 98 - Address already in use)."
  - literal: address already in use
    names_cause: true
    type: torch.distributed.DistNetworkError
    example: "The server socket has failed to listen on any local network address. port: 29500,
      useIpv6: false, code: -98, name: EADDRINUSE, message: address already in use"
verification: {status: manual, reason: test fixture}
""",
    "beta/P1-nan-anomaly.yaml": r"""
id: P1
title: Anomaly detection names the backward function that produced NaN
area: beta
section: three
tags: [nan, anomaly-detection, autograd]
aliases: [returned nan values in its output, find the op that makes NaN]
symptom: With `torch.autograd.set_detect_anomaly(True)` backward raises naming a function such as `DivBackward0`.
root_cause: An operation produced NaN in its gradient, usually a division by zero or log of zero.
fix: Guard the denominator with an epsilon, clamp before `log`, and check the input batch.
fix_summary: Guard the denominator with an epsilon, clamp before `log`, and check the input batch.
signatures:
  - regex: Function '\w+' returned nan values in its \d+(?:st|nd|rd|th) output
    names_cause: true
    type: RuntimeError
    example: "Function 'DivBackward0' returned nan values in its 1th output."
verification: {status: manual, reason: test fixture}
""",
    "beta/P2-optimizer.yaml": r"""
id: P2
title: Loss flat from step 0 because the parameters are not in the optimizer
area: beta
section: three
tags: [optimizer, not-learning]
aliases: [weights identical after optimizer step, loss does not decrease at all, model rebuilt after optimizer]
symptom: The loss stays flat and the weights are byte-identical after `optimizer.step()`.
root_cause: The optimizer was built over another model instance, or before the parameters were replaced.
fix: Build the optimizer after the final model exists and pass `model.parameters()` of that instance.
fix_summary: Build the optimizer after the final model exists and pass `model.parameters()` of that instance.
verification: {status: manual, reason: test fixture}
""",
    "alpha/D3-shm.yaml": r"""
id: D3
title: DataLoader worker killed by a Bus error (shared memory exhausted)
area: alpha
section: two
tags: [dataloader, shared-memory, docker]
aliases: [dev shm too small in docker, worker killed by signal Bus error]
symptom: Workers die with a Bus error; in containers `/dev/shm` defaults to 64 MB.
root_cause: Worker processes pass batches through shared memory, and the container's shm is too small.
fix: Run docker with `--shm-size=8g` or `--ipc=host`, or lower `num_workers`.
fix_summary: Run docker with `--shm-size=8g` or `--ipc=host`, or lower `num_workers`.
signatures:
  - literal: "is killed by signal: Bus error"
    names_cause: true
    type: RuntimeError
    example: "DataLoader worker (pid 5123) is killed by signal: Bus error.
      It is possible that dataloader's workers are out of shared memory."
  - regex: "DataLoader worker \\(pid \\d+\\) is killed by signal: Bus error"
    names_cause: true
    type: RuntimeError
    example: "DataLoader worker (pid 5123) is killed by signal: Bus error."
  - regex: "^Bus error(?: \\(core dumped\\))?$"
    names_cause: true
    kind: shell
    example: "Bus error (core dumped)"
verification: {status: manual, reason: test fixture}
""",
}


@pytest.fixture(autouse=True)
def private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Each test gets its own index cache folder, so none reads another's (or the user's)."""
    cache = tmp_path / "xdg-cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    return cache / "trainkb"


@pytest.fixture
def catalogue(tmp_path: Path) -> Path:
    root = tmp_path / "catalogue"
    root.mkdir()
    (root / "areas.yaml").write_text(AREAS, encoding="utf-8")
    for rel, text in RECORDS.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text.lstrip(), encoding="utf-8")
    return root
