"""One module a subcommand: ``add_parser(subparsers)`` registers it; its parser's
``run`` default takes the parsed arguments and returns the exit code."""
