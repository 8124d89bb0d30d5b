"""`tablectl diagram`: write the table machine's mermaid diagram (docs/table-machine.md)."""
from __future__ import annotations

import argparse
from pathlib import Path


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("diagram", help="export the table machine's diagram (mermaid)",
                       description="The table machine's states and transitions as mermaid "
                       "diagrams, one section per game, generated from each game's procedure "
                       "(the same data the machine is built from), as docs/table-machine.md "
                       "shows them.")
    p.add_argument("--output", default="-", metavar="FILE",
                   help="file to write (default: standard output)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    # Imported when the command runs, so that `tablectl` starts fast.
    from controller.table.diagram import document
    text = document()
    if args.output == "-":
        print(text)
        return 0
    from controller.settings.paths import refuse_special
    refuse_special(args.output, "--output")     # never write into a device or a FIFO
    try:
        Path(args.output).write_text(text)
    except OSError as err:
        from controller.errors import InputError
        raise InputError(f"--output {args.output}: cannot be written ({err.strerror}); give a "
                         "file in an existing, writable directory") from None
    return 0
