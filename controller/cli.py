"""tablectl: run, simulate and supervise a live baccarat-family table.

Each subcommand lives in `controller/commands/<name>.py` and exposes `register(subparsers)`,
which adds its parser and sets `func(args) -> int`.

Bad input anywhere (profile, shoe file, card code, URL, config) exits 2 with one line.
"""
from __future__ import annotations

import argparse
import functools
import importlib
import pkgutil
import sys
from typing import NoReturn
from types import TracebackType

from controller import __version__
from controller.errors import TableStopped
from controller.logsetup import configure, prefix, scrub


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The whole command line; given the command that runs, only that command's parser (its
    module and what it imports load only when it runs: each `tablectl` process starts sooner).
    The arguments parse the same way either way."""
    from controller.settings.argtypes import OneLineParser     # its subparsers are of its class too
    parser = OneLineParser(prog="tablectl", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"tablectl {__version__}")
    _global_options(parser)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    names = command_modules()
    if command is not None and command in names:
        names = [command]
    for name in names:
        importlib.import_module(f"controller.commands.{name.replace('-', '_')}").register(sub)
    return parser


def _global_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--log-level", default="WARNING",
                        help="log level for stderr (DEBUG, INFO, WARNING, ERROR); default WARNING")
    parser.add_argument("--log-file", metavar="FILE",
                        help="write the log to FILE (JSON lines, appended) instead of stderr "
                        "(`run` does so by itself, beside its journal, when its readable lines "
                        "and stderr would share one screen)")


def command_modules() -> list[str]:
    """The commands, by name: `controller/commands/new_journal.py` registers `new-journal`."""
    import controller.commands as pkg
    return [m.name.replace("_", "-") for m in sorted(pkgutil.iter_modules(pkg.__path__),
                                                     key=lambda m: m.name)
            if not m.name.startswith("_")]


class _Unsure(Exception):
    """The command line is not plain enough to read past its global options."""


class _Peek(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise _Unsure(message)


def command_named(argv: list[str] | None) -> str | None:
    """The command `argv` runs, read past the global options; None where that is not plain
    (help, --version, an option the full parser is to judge), so the full parser decides."""
    peek = _Peek(prog="tablectl", add_help=False)
    _global_options(peek)
    try:
        _, rest = peek.parse_known_args(sys.argv[1:] if argv is None else argv)
    except _Unsure:
        return None
    return rest[0] if rest and not rest[0].startswith("-") else None


def bad_input_types() -> tuple[type[BaseException], ...]:
    from controller.shoe.cards import CardCodeError
    from controller.errors import InputError
    from controller.settings.profile import ProfileError
    from controller.journal import JournalError
    from drivers.errors import BadURL, DeviceError
    return (InputError, ProfileError, CardCodeError, BadURL, DeviceError, JournalError)


def main(argv: list[str] | None = None) -> int:
    try:
        parser = build_parser(command_named(argv))
    except bad_input_types() as err:      # e.g. no drivers registered: tablectl not installed
        print(f"tablectl: {err}", file=sys.stderr)
        return 2
    args = parser.parse_args(argv)
    for stream in (sys.stdout, sys.stderr):
        # text no encoder takes (half a UTF-16 surrogate, from an argument's undecodable bytes
        # or an old journal) is printed as its escape, never ends a command in a traceback
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")
    try:
        configure(args.log_level, path=args.log_file)
    except OSError as err:
        print(f"tablectl: --log-file {args.log_file}: cannot be written: "
              f"{err.strerror or err}", file=sys.stderr)
        return 2
    sys.excepthook = functools.partial(_uncaught, args.command)
    try:
        return int(args.func(args) or 0)
    except bad_input_types() as err:
        # the journal files it as an error; no secret in it (a PIN read is registered)
        print(f"{prefix('error')}tablectl {args.command}: {scrub(str(err))}", file=sys.stderr)
        return 2
    except TableStopped as err:
        print(f"{prefix('critical')}tablectl {args.command}: {scrub(str(err))}",
              file=sys.stderr)
        return 3
    except KeyboardInterrupt:
        print(f"tablectl {args.command}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # the reader went away (`… | head`): nothing more to say, and nothing left to flush
        # into a closed pipe at exit
        quiet_stdout()
        return 0


def _uncaught(command: str, kind: type[BaseException], err: BaseException,
              tb: TracebackType | None) -> None:
    """A fault of the program itself, not caught by the command: its traceback goes to the log
    (no frame's local variables, no secret: controller/logsetup.py) instead of Python's own
    print, and one line says what happened. The exit status stays Python's (1)."""
    if isinstance(err, KeyboardInterrupt):
        sys.__excepthook__(kind, err, tb)
        return
    from controller.logsetup import get_logger
    get_logger("controller.cli").critical("command failed", command=command, exc_info=err)
    print(f"{prefix('critical')}tablectl {command}: internal error: {kind.__name__}: "
          f"{scrub(str(err))}", file=sys.stderr)


def quiet_stdout() -> None:
    import os
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


if __name__ == "__main__":
    sys.exit(main())
