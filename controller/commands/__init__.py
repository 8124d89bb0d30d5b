"""Subcommands of `tablectl`, one module each, discovered by controller.cli."""
