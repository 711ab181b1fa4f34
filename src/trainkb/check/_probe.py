"""Facts about the environment that need torch; computed in a warm child, not in `kb check`."""

from __future__ import annotations

import importlib
import platform
import sys
from multiprocessing.connection import Connection
from typing import Any

__all__ = ["probe"]


def _package_ok(name: str) -> str | None:
    """None when ``name`` imports; otherwise the reason it does not."""
    try:
        importlib.import_module(name)
    except Exception as exc:  # a broken install is as unusable as a missing one
        return f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"[:200]
    return None


def probe(conn: Connection, packages: list[str]) -> None:
    """Process target: send the environment block and which packages import, or why torch does not."""
    try:
        import torch
    except Exception as exc:  # not installed, or installed broken: kb check says so in one line
        conn.send({"torch_error": f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"[:300]})
        conn.close()
        return

    cuda = torch.cuda.is_available()
    info: dict[str, Any] = {
        "python": platform.python_version(),
        "platform": sys.platform,
        "machine": platform.machine(),
        "torch": torch.__version__,
        "torch_git": getattr(torch.version, "git_version", None),
        "cuda_build": torch.version.cuda,
        "cuda_available": cuda,
        "gpu_count": torch.cuda.device_count() if cuda else 0,
        "gpus": [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())] if cuda else [],
        "nccl": torch.distributed.is_nccl_available() if torch.distributed.is_available() else False,
        "packages": {name: _package_ok(name) for name in packages},
    }
    conn.send(info)
    conn.close()
