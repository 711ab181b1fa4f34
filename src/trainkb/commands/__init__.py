"""One module per `kb` subcommand: ``add_parser(parser)`` and ``run(args) -> int``."""

from ._exit import Exit, UsageError, report_usage_error

__all__ = ["Exit", "UsageError", "report_usage_error"]
