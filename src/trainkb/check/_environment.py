"""What environment a check sees (an allow-list), and hiding the rest from `kb check` itself.

A deny-list of secret-looking names misses `GITHUB_PAT`, `DATABASE_URL` or a webhook URL, so a
check gets only the variables torch, its libraries and a Python program need, named below.
`kb check` also drops everything else from its own environment before it starts the
forkserver, and overwrites the dropped entries (and the ones only kb reads) in the block the
kernel shows as ``/proc/<pid>/environ`` — that block is the environment the process started
with, and deleting from ``os.environ`` does not touch it.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import re
import sys
from collections.abc import Mapping

__all__ = ["CHECK_ALLOWED", "KB_ALLOWED", "SECRET_NAME", "check_environment", "scrub_own_environment"]

# Exact names and prefixes (`FOO_*`) a check may see. HF_/TRANSFORMERS_ carry cache paths and
# offline switches; their tokens (HF_TOKEN) are removed by SECRET_NAME like any other.
CHECK_ALLOWED = re.compile(
    r"PATH|HOME|USER|LOGNAME|SHELL|LANG|LANGUAGE|TZ|TMPDIR|LC_\w+|LD_LIBRARY_PATH|VIRTUAL_ENV|CONDA_PREFIX"
    r"|CC|CXX|XDG_CACHE_HOME|PYTHON\w*|PYTORCH_\w+|TORCH\w*|CUDA\w*|NCCL_\w+|NVIDIA_\w+|TRITON_\w+"
    r"|OMP_\w+|GOMP_\w+|KMP_\w+|MKL_\w+|OPENBLAS_\w+|HF_\w+|TRANSFORMERS_\w+"
)
# What `kb check` itself reads besides: terminal width and colour, git for --changed-since and
# the report's commit, the search cache, CI detection.
KB_ALLOWED = re.compile(r"TERM|COLUMNS|LINES|NO_COLOR|FORCE_COLOR|CI|GITHUB_ACTIONS|XDG_\w+|GIT_\w+|TRAINKB_\w+")
SECRET_NAME = re.compile(
    r"TOKEN|KEY|SECRET|PASSWORD|PASSWD|PASSPHRASE|CREDENTIAL|AUTH|COOKIE|SESSION|PAT$", re.IGNORECASE
)


def _allowed(name: str, *patterns: re.Pattern[str]) -> bool:
    return any(p.fullmatch(name) for p in patterns) and not SECRET_NAME.search(name)


def check_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """The allow-listed part of ``environ``: the base of every check's environment."""
    return {name: value for name, value in environ.items() if _allowed(name, CHECK_ALLOWED)}


def scrub_own_environment() -> list[str]:
    """Drop from this process every variable neither a check nor kb needs; return their names.

    What only kb reads (GIT_*, TRAINKB_*, terminal and CI settings) stays in ``os.environ``
    but leaves the start-up block, so a check cannot read it from /proc/<kb pid>/environ.
    Runs before the forkserver starts (it gets the checks' environment only).
    """
    dropped = [name for name in os.environ if not _allowed(name, CHECK_ALLOWED, KB_ALLOWED)]
    for name in dropped:
        del os.environ[name]
    kept_private = [name for name in os.environ if not _allowed(name, CHECK_ALLOWED)]
    for name in kept_private:  # setenv copies the value: libc no longer points into the block
        os.environ[name] = os.environ[name]
    if (dropped or kept_private) and sys.platform == "linux":
        _blank_initial_environment([*dropped, *kept_private])
    return dropped


def _blank_initial_environment(names: list[str]) -> None:
    """Overwrite ``NAME=value`` of each dropped variable in the kernel-visible start-up block.

    ``del os.environ[...]`` has unset them in libc, so nothing points at those bytes any more.
    """
    with contextlib.suppress(OSError, ValueError, IndexError):
        fields = open("/proc/self/stat", "rb").read().rsplit(b")", 1)[1].split()  # noqa: SIM115
        # fields[0] is field 3 (state); env_start and env_end are fields 50 and 51
        start, end = int(fields[47]), int(fields[48])
        block = ctypes.string_at(start, end - start)
        wanted = {name.encode() for name in names}
        offset = 0
        for entry in block.split(b"\0"):
            if entry.split(b"=", 1)[0] in wanted:
                ctypes.memset(start + offset, 0, len(entry))
            offset += len(entry) + 1
