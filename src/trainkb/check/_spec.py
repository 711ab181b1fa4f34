"""What one snippet process is asked to run: built by `kb check`, pickled to the forkserver's child."""

from __future__ import annotations

from typing import TypedDict

__all__ = ["SnippetSpec"]


class SnippetSpec(TypedDict):
    code: str
    filename: str  # the name tracebacks show: <ENTRY:check>
    script: str  # the code as a file, outside every rank's folder: __main__.__file__ and sys.argv[0]
    cwd: str  # the rank's own folder
    owner_dir: str  # the check's folder, removed by the supervisor when the check ends
    env: dict[str, str]  # the whole environment: allow-listed, plus the rank's torchrun variables
    memory_bytes: int | None  # RLIMIT_AS; None for CUDA checks (a context reserves tens of GB)
    cpu_seconds: int  # RLIMIT_CPU soft limit
    threads: int  # torch.set_num_threads
