"""`kb doctor` probes: small looks at this environment (and optional source files), each named
after the catalogue entry whose condition it detects.

A probe returns a Finding with what it observed; ``warn`` means the entry's condition holds
here, ``ok`` that it does not, ``info`` a fact worth knowing, ``n/a`` that the probe needs
something this machine lacks (a GPU, torch).
"""

from __future__ import annotations

import json
import multiprocessing
import os
import re
import select
import signal
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from types import ModuleType
from typing import Literal

from ._files import read_regular
from ._runguard import Job
from ._runguard import start as start_guarded

__all__ = ["IMPORT_TIMEOUT", "PROBES", "Context", "Finding", "TorchImport", "import_torch", "run_probes"]

MAX_SOURCE_BYTES = 4 * 1024 * 1024  # of one scanned source file: a script, not a device or a dump

# "error": the environment is broken (torch does not import)
Status = Literal["ok", "warn", "info", "n/a", "error"]
SHM_WARN_BYTES = 1 << 30  # PyTorch workers routinely need more than Docker's 64 MB default


@dataclass(frozen=True)
class Finding:
    entry: str
    probe: str
    status: Status
    observed: str
    message: str

    def as_dict(self) -> dict[str, str]:
        return dict(vars(self))


@dataclass
class Context:
    """What probes may look at; tests substitute every part of it."""

    environ: Mapping[str, str]
    torch: ModuleType | None
    shm_path: str = "/dev/shm"
    sources: tuple[Path, ...] = ()
    start_method: str | None = None
    torch_problem: tuple[str, str] | None = None  # (what went wrong, the next step) when torch is broken

    @cached_property
    def _scanned(self) -> tuple[list[tuple[Path, str]], list[Path]]:
        """The sources' files read once for every probe: their texts, and the files that were not read."""
        texts, unread = [], []
        for path in self.sources:
            files = sorted(path.rglob("*.py")) if path.is_dir() else [path]
            for file in files:
                text = _read_source(file)
                if text is None:
                    unread.append(file)
                else:
                    texts.append((file, text))
        return texts, unread

    def source_texts(self) -> list[tuple[Path, str]]:
        return self._scanned[0]

    def unread_sources(self) -> list[Path]:
        """Given files that are no regular file (a FIFO, a device) or could not be opened: not scanned."""
        return self._scanned[1]


def _read_source(file: Path) -> str | None:
    """A regular file's first few megabytes; None for anything else (/dev/zero, a FIFO) or on error."""
    raw = read_regular(file, MAX_SOURCE_BYTES)
    return None if raw is None else raw.decode("utf-8", errors="replace")


def _cuda(ctx: Context) -> bool:
    return bool(ctx.torch is not None and ctx.torch.cuda.is_available())


def versions(ctx: Context) -> Finding:
    if ctx.torch_problem is not None:
        return Finding("P1", "versions", "error", *ctx.torch_problem)
    if ctx.torch is None:
        return Finding("P1", "versions", "n/a", "torch not importable", "Install torch to run the other probes.")
    torch = ctx.torch
    gpus = [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())] if _cuda(ctx) else []
    observed = f"torch {torch.__version__}, CUDA build {torch.version.cuda or 'none'}, " + (
        f"GPUs: {', '.join(gpus)}" if gpus else "no GPU visible"
    )
    return Finding("P1", "versions", "info", observed, "The catalogue's checks record which torch they ran on.")


def tf32_matmul(ctx: Context) -> Finding:
    if ctx.torch is None:
        return Finding("P2", "tf32_matmul", "n/a", "torch not importable", "")
    matmul = ctx.torch.backends.cuda.matmul
    precision = getattr(matmul, "fp32_precision", None)
    legacy = precision in (None, "none")  # "none": the newer API defers to allow_tf32
    allowed = bool(matmul.allow_tf32) if legacy else precision == "tf32"
    observed = f"allow_tf32={matmul.allow_tf32}" + ("" if precision is None else f", fp32_precision={precision!r}")
    if not _cuda(ctx):
        return Finding("P2", "tf32_matmul", "n/a", observed + " (no GPU)", "TF32 only matters on Ampere+ GPUs.")
    major, _ = ctx.torch.cuda.get_device_capability(0)
    if major >= 8 and not allowed:
        return Finding(
            "P2",
            "tf32_matmul",
            "warn",
            observed,
            "fp32 matmuls run without TF32 on this Ampere+ GPU; enable it unless you need full fp32.",
        )
    return Finding("P2", "tf32_matmul", "ok", observed, "")


def bf16_support(ctx: Context) -> Finding:
    if not _cuda(ctx):
        return Finding("P3", "bf16_support", "n/a", "no GPU", "bf16 support is a property of the GPU.")
    torch = ctx.torch
    assert torch is not None
    supported = torch.cuda.is_bf16_supported()
    major, minor = torch.cuda.get_device_capability(0)
    observed = f"compute capability {major}.{minor}, is_bf16_supported()={supported}"
    if major < 8:
        return Finding(
            "P3",
            "bf16_support",
            "warn",
            observed,
            "Pre-Ampere GPU: use fp16 with GradScaler; bf16 is emulated or unavailable.",
        )
    return Finding("P3", "bf16_support", "ok", observed, "")


def dev_shm_size(ctx: Context) -> Finding:
    try:
        stats = os.statvfs(ctx.shm_path)
    except OSError:
        return Finding("DP15", "dev_shm_size", "n/a", f"{ctx.shm_path} not present", "")
    total = stats.f_frsize * stats.f_blocks
    observed = f"{ctx.shm_path} is {total / 2**20:.0f} MiB"
    if total < SHM_WARN_BYTES:
        return Finding(
            "DP15",
            "dev_shm_size",
            "warn",
            observed,
            "DataLoader workers pass batches through shared memory; expect 'Bus error' with "
            "num_workers>0. Run the container with --shm-size=8g or --ipc=host.",
        )
    return Finding("DP15", "dev_shm_size", "ok", observed, "")


def start_method(ctx: Context) -> Finding:
    method = (
        ctx.start_method
        or multiprocessing.get_start_method(allow_none=True)
        or ("fork" if sys.platform.startswith("linux") else "spawn")
    )
    observed = f"multiprocessing start method: {method}"
    if method != "fork":
        return Finding(
            "DP6",
            "start_method",
            "warn",
            observed,
            "DataLoader workers pickle the dataset: lambdas and closures in it will fail; "
            "guard the entry point with if __name__ == '__main__'.",
        )
    return Finding("DP6", "start_method", "ok", observed, "")


_DEBUG_VARS = (
    "NCCL_DEBUG",
    "TORCH_DISTRIBUTED_DEBUG",
    "TORCH_NCCL_ASYNC_ERROR_HANDLING",
    "TORCH_NCCL_BLOCKING_WAIT",
    "NCCL_ASYNC_ERROR_HANDLING",
    "NCCL_BLOCKING_WAIT",
    "TORCH_NCCL_TRACE_BUFFER_SIZE",
)


def distributed_debug(ctx: Context) -> Finding:
    present = {name: ctx.environ[name] for name in _DEBUG_VARS if name in ctx.environ}
    legacy = [n for n in present if n.startswith("NCCL_") and n != "NCCL_DEBUG"]
    if legacy:
        return Finding(
            "D19",
            "distributed_debug",
            "warn",
            ", ".join(f"{k}={v}" for k, v in present.items()),
            f"{', '.join(legacy)}: deprecated names; torch reads the TORCH_NCCL_* spelling.",
        )
    if present:
        return Finding("D19", "distributed_debug", "info", ", ".join(f"{k}={v}" for k, v in present.items()), "")
    return Finding(
        "D19",
        "distributed_debug",
        "info",
        "no NCCL/distributed debug variables set",
        "For a hang, rerun with TORCH_DISTRIBUTED_DEBUG=DETAIL and NCCL_DEBUG=INFO.",
    )


_RANK_AS_DEVICE = re.compile(
    r"""(?:cuda:|set_device\(|device\()\s*(?:int\()?\s*(?:os\.environ\[["']RANK["']\]|rank\b)"""
)
_USES_LOCAL_RANK = re.compile(r"LOCAL_RANK|local_rank")


def _launcher_problems(env: Mapping[str, str]) -> list[str]:
    """What is wrong with the ranks a launcher exported: a script reads them with ``int(os.environ[...])``."""
    values: dict[str, int] = {}
    problems = []
    for name in ("RANK", "LOCAL_RANK", "WORLD_SIZE"):
        if name not in env:
            continue
        try:
            values[name] = int(env[name])
        except ValueError:
            problems.append(f"{name}={env[name]!r} is not a whole number (int() raises ValueError)")
    for name in ("RANK", "LOCAL_RANK"):
        if name in values and values[name] < 0:
            problems.append(f"{name}={values[name]} is negative; ranks count from 0")
    if values.get("WORLD_SIZE") == 0:
        problems.append("WORLD_SIZE=0; a job has at least one process")
    elif "WORLD_SIZE" in values and values.get("RANK", 0) >= values["WORLD_SIZE"]:
        problems.append(f"RANK={values['RANK']} is not below WORLD_SIZE={values['WORLD_SIZE']}")
    return problems


def local_rank(ctx: Context) -> Finding:
    env = ctx.environ
    problems = _launcher_problems(env)
    if problems:
        return Finding(
            "D3",
            "local_rank",
            "warn",
            "; ".join(problems),
            "A launcher (torchrun) sets these; fix or unset whatever exported them before starting the job.",
        )
    if "RANK" in env and "LOCAL_RANK" in env and env["RANK"] != env["LOCAL_RANK"]:
        observed = f"RANK={env['RANK']} LOCAL_RANK={env['LOCAL_RANK']}"
    elif "RANK" in env:
        observed = f"RANK={env['RANK']} LOCAL_RANK={env.get('LOCAL_RANK', '(unset)')}"
    else:
        observed = "not inside a torchrun job"
    for path, text in ctx.source_texts():
        if _RANK_AS_DEVICE.search(text) and not _USES_LOCAL_RANK.search(text):
            return Finding(
                "D3",
                "local_rank",
                "warn",
                f"{path}: picks the GPU from RANK, never reads LOCAL_RANK",
                "On a second node every process lands on GPU 0; use LOCAL_RANK for the device.",
            )
    return Finding("D3", "local_rank", "info" if "RANK" in env else "ok", observed, "")


_CUDA_AMP = re.compile(r"torch\.cuda\.amp\.(?:autocast|GradScaler)|from torch\.cuda\.amp import")


def deprecated_cuda_amp(ctx: Context) -> Finding:
    hits = [
        f"{path}:{text.count(chr(10), 0, m.start()) + 1}"
        for path, text in ctx.source_texts()
        for m in _CUDA_AMP.finditer(text)
    ]
    if not ctx.sources:
        return Finding("P4", "deprecated_cuda_amp", "n/a", "no source files given (kb doctor PATH…)", "")
    if hits:
        return Finding(
            "P4",
            "deprecated_cuda_amp",
            "warn",
            ", ".join(hits[:5]) + (" …" if len(hits) > 5 else ""),
            "torch.cuda.amp is deprecated: use torch.amp.autocast('cuda') and torch.amp.GradScaler('cuda').",
        )
    unread = ctx.unread_sources()
    if unread:  # "no use found" would vouch for files never read
        shown = ", ".join(map(str, unread[:5])) + (" …" if len(unread) > 5 else "")
        read = len(ctx.source_texts())
        return Finding(
            "P4",
            "deprecated_cuda_amp",
            "info" if read else "n/a",
            f"no torch.cuda.amp use in {read} file(s) read; not read: {shown}",
            "Only regular files are scanned: a FIFO, a device or a file that cannot be opened is skipped.",
        )
    return Finding("P4", "deprecated_cuda_amp", "ok", "no torch.cuda.amp use found", "")


PROBES: list[Callable[[Context], Finding]] = [
    versions,
    tf32_matmul,
    bf16_support,
    dev_shm_size,
    start_method,
    distributed_debug,
    local_rank,
    deprecated_cuda_amp,
]


IMPORT_TIMEOUT = 120.0  # seconds: a cold import from a network filesystem can take a minute

# Run by a fresh interpreter with the parent's sys.path: it imports torch and writes one line to what
# was its stdout (torch's own prints go to /dev/null), "ok", "missing ..." (no torch at all) or
# "error <Type>: <message>", then leaves at once (os._exit: no atexit handler of a half-imported torch runs).
_TRIAL = """
import json, os, sys
fd = os.dup(1)
os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
sys.path[:] = json.loads(sys.argv[1])
try:
    import torch
    said = "ok"
except BaseException as exc:
    kind = "missing" if isinstance(exc, ModuleNotFoundError) and exc.name == "torch" else "error"
    said = kind + " " + type(exc).__name__ + ": " + " ".join(str(exc).split())
os.write(fd, said.encode("utf-8", "replace")[:4000] + b"\\n")
os._exit(0)
"""

_REINSTALL = "reinstall a torch build that matches this machine (pip install --force-reinstall torch)"


@dataclass(frozen=True)
class TorchImport:
    """torch, or None; ``problem`` is (what went wrong, the next step) when an installed torch is broken."""

    module: ModuleType | None
    problem: tuple[str, str] | None = None


def _read_line(read: int, timeout: float) -> bytes | None:
    """What the child wrote up to its newline or its end; None when ``timeout`` passed first."""
    said = b""
    deadline = time.monotonic() + timeout
    while (left := deadline - time.monotonic()) > 0:
        if select.select([read], [], [], left)[0]:
            chunk = os.read(read, 4096)
            said += chunk
            if not chunk or said.endswith(b"\n"):  # said its line, or every holder of the pipe is gone
                return said
    return None


def _exit_status(job: Job) -> int | None:
    """The trial's return code (-N for signal N) once its guard has said it, within a few seconds; None
    when it neither exited nor said anything. Read from the guard's report line (``X <wait status>``)
    rather than through ``wait()``, which would let the guard go and leave what the trial started."""
    if job.exit_fd is None or not select.select([job.exit_fd], [], [], 5)[0]:
        return None
    word, _, number = os.read(job.exit_fd, 64).partition(b" ")
    return os.waitstatus_to_exitcode(int(number)) if word == b"X" and number.strip().isdigit() else None


def _trial_import(timeout: float) -> tuple[str, str]:
    """("ok" | "missing" | "error" | "crash" | "exit" | "hang", detail): how `import torch` goes in a
    child process, which may crash, exit or hang without taking kb along. The child runs behind the
    guard of `kb run`, so it and whatever it starts (in a new session too) die with kb, even when kb
    is killed by SIGKILL, and are killed when the trial is over."""
    read, write = os.pipe()
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        job = start_guarded([sys.executable, "-c", _TRIAL, json.dumps(sys.path)], write, null, os.environ, (read,))
    except BaseException:
        os.close(read)
        raise
    finally:
        os.close(write)
        os.close(null)
    try:
        said = _read_line(read, timeout)
        status = _exit_status(job) if said is not None and not said.endswith(b"\n") else None
    finally:
        os.close(read)
        job.abort()  # also on Ctrl-C: the trial and every process it started are gone
    if said is None:
        return "hang", f"{timeout:g}"
    kind, _, detail = said.decode("utf-8", "replace").strip().partition(" ")
    if kind in ("ok", "missing", "error"):
        return kind, detail
    if status is not None and status < 0:
        return "crash", signal.Signals(-status).name if -status in signal.valid_signals() else str(-status)
    return "exit", str(status)


def import_torch(timeout: float = IMPORT_TIMEOUT) -> TorchImport:
    """torch, tried first in a child process: a torch that raises, crashes, exits or hangs on import
    is reported (the real error and what to do next), never allowed to stop or freeze kb."""
    kind, detail = _trial_import(timeout)
    if kind == "missing":
        return TorchImport(None)
    problems = {
        "error": (f"torch does not import: {detail}", f"{_REINSTALL}; python -c 'import torch' shows the traceback"),
        "crash": (
            f"importing torch kills the process ({detail})",
            f"python -X faulthandler -c 'import torch' shows where; {_REINSTALL}, "
            "and check LD_PRELOAD and LD_LIBRARY_PATH for clashing libraries",
        ),
        "exit": (
            f"importing torch ends the process (exit status {detail})",
            f"python -c 'import torch' shows what stops it; {_REINSTALL}",
        ),
        "hang": (
            f"importing torch did not finish within {detail} s",
            "python -X importtime -c 'import torch' shows what it waits on (a slow network filesystem, a lock); "
            "kb doctor --import-timeout S allows longer",
        ),
    }
    if kind in problems:
        return TorchImport(None, problems[kind])
    try:
        import torch
    except (Exception, SystemExit) as exc:  # imported in the child, not here: still said, never raised
        return TorchImport(None, (f"torch does not import: {type(exc).__name__}: {exc}", _REINSTALL))
    return TorchImport(torch)


def run_probes(sources: tuple[Path, ...] = (), ctx: Context | None = None) -> list[Finding]:
    """Every probe's finding; a probe that crashes reports itself instead of stopping the others."""
    if ctx is None:
        found = import_torch()
        ctx = Context(environ=os.environ, torch=found.module, sources=sources, torch_problem=found.problem)
    findings = []
    for probe in PROBES:
        try:
            findings.append(probe(ctx))
        except Exception as exc:
            findings.append(Finding("?", probe.__name__, "n/a", f"probe failed: {type(exc).__name__}: {exc}", ""))
    return findings
