"""`kb check`: run the catalogue's snippets against the installed torch, contained and in parallel."""

from ._environment import check_environment, scrub_own_environment
from ._process import TorchUnavailable, WarmPool
from ._report import (
    environment_block,
    github_annotations,
    junit_xml,
    load_report,
    make_report,
    merge_reports,
    prune_report,
    summary_text,
)
from ._runner import CheckResult, RunOptions, check_env, run_tasks
from ._server import ServerUnavailable
from ._session import CheckSession, SessionOptions, Stopped, run_session
from ._tasks import CheckTask, changed_entry_ids, parse_shard, select_tasks, skip_reason

__all__ = [
    "CheckResult",
    "CheckSession",
    "CheckTask",
    "RunOptions",
    "ServerUnavailable",
    "SessionOptions",
    "Stopped",
    "TorchUnavailable",
    "WarmPool",
    "changed_entry_ids",
    "check_env",
    "check_environment",
    "environment_block",
    "github_annotations",
    "junit_xml",
    "load_report",
    "make_report",
    "merge_reports",
    "parse_shard",
    "prune_report",
    "run_session",
    "run_tasks",
    "scrub_own_environment",
    "select_tasks",
    "skip_reason",
    "summary_text",
]
