"""A small data-parallel training loop that injects one fault on one rank (run it under torchrun).

TRIAGE_FAULT picks the fault, TRIAGE_RANK the rank that has it, TRIAGE_BACKEND gloo (CPU) or
nccl (one GPU per rank), TRIAGE_TIMEOUT the process-group timeout in seconds. The healthy ranks
run the same loop, so whatever they print is how a real job's victims fail.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from datetime import timedelta

import torch
import torch.distributed as dist
from torch.distributed.elastic.multiprocessing.errors import record

FAULT_STEP = 2


def inject(fault: str, device: torch.device, x: torch.Tensor, timeout: float) -> torch.Tensor:
    """Do the fault's damage on the faulty rank; return the batch it goes on with."""
    if fault == "raise":
        if device.type == "cuda":  # a real out-of-memory error: far more than any card holds
            torch.empty(1 << 44, dtype=torch.float32, device=device)
        return torch.randn(8, 5, device=device)  # a malformed batch: the matmul below raises
    if fault == "sigkill":  # what the kernel's OOM killer does
        os.kill(os.getpid(), signal.SIGKILL)
    if fault == "exit":  # a rank that believes it is done
        sys.exit(0)
    if fault == "hang":  # stuck in Python (a slow filesystem, a deadlock) before the next collective
        time.sleep(timeout * 15)
    if fault == "nan":
        x = x.clone()
        x[0, 0] = float("nan")
    return x


@record
def main() -> None:
    fault, bad = os.environ.get("TRIAGE_FAULT", "none"), int(os.environ.get("TRIAGE_RANK", "-1"))
    backend, timeout = os.environ.get("TRIAGE_BACKEND", "gloo"), float(os.environ.get("TRIAGE_TIMEOUT", "4"))
    if backend == "nccl":
        device = torch.device("cuda", int(os.environ["LOCAL_RANK"]))
        torch.cuda.set_device(device)
    else:
        device = torch.device("cpu")
    dist.init_process_group(backend, timeout=timedelta(seconds=timeout))
    rank = dist.get_rank()
    torch.manual_seed(rank)
    model = torch.nn.Linear(4, 1).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    for step in range(5):
        x = torch.randn(8, 4, device=device)
        faulty = rank == bad and step == FAULT_STEP
        if faulty and fault != "collective":
            x = inject(fault, device, x, timeout)
        loss = model(x).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        # the usual guard against a diverging run: raises on the rank whose gradients are not finite
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0, error_if_nonfinite=True)
        for p in model.parameters():
            if faulty and fault == "collective":  # a code path only this rank takes
                dist.broadcast(p.grad, src=rank)
            else:
                dist.all_reduce(p.grad)
        opt.step()
        print(f"step {step} loss {loss.item():.4f}", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
