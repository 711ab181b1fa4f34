"""One module per `kb` subcommand: ``add_parser(parser)`` and ``run(args) -> int``."""
