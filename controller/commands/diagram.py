"""`tablectl diagram`: write the table machine's mermaid diagram (docs/table-machine.md)."""
from __future__ import annotations

import argparse
from pathlib import Path


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("diagram", help="export the table machine's diagram (mermaid)")
    p.add_argument("--output", default="-", help="file to write (default: standard output)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    # Imported when the command runs, so that `tablectl` starts fast.
    from controller.table.diagram import document
    text = document()
    if args.output == "-":
        print(text)
    else:
        Path(args.output).write_text(text)
    return 0
