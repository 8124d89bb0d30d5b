"""`tablectl report [--journal J] [--shoe N | --from T [--to T]] [--language LANG] --output FILE`.

A shoe or a shift, from the journal, to print or to read: each shoe's start and end, its roads
as the scoreboard showed them, the results and the net result of every bet beside the exact
odds, irregularities, holds with how long each lasted and who cleared it, overrides with who
and why, the devices and their alarms, and charts (rounds per hour, hold time by cause, results
against the exact odds). Without --shoe or --from/--to: the latest shoe. Times are UTC.

In the reader's language (en, zh_Hant, hi, bn, th): --language, else the table's own, [table]
language of the config (--config, $TABLECTL_CONFIG, /etc/tablectl/table.toml or the shipped one;
TABLECTL_TABLE_LANGUAGE over it). A PDF in Chinese, Hindi, Bengali or Thai draws its letters
with a font of the machine's (e.g. Debian's fonts-noto-cjk, fonts-noto-core); without one, it
is still written, and the log says which font to install.
"""
from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from controller.commands._store import add_store_options, per_table, store_url
from controller.errors import InputError

DEFAULT_JOURNAL = os.path.join("var", "journal.db")


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "report", help="a shoe or shift report (roads, results, holds, overrides, charts) as "
        "PDF or HTML", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter,
        # --to goes with --from: argparse cannot nest a group, so the synopsis says it
        usage="tablectl report [-h] [--journal J] [--shoe N | --from T [--to T]] "
              "[--language LANG] [--config CONFIG] --output FILE [--store URL] [--table T] "
              "[--pit P]")
    p.add_argument("--journal", default=DEFAULT_JOURNAL, metavar="J",
                   help=f"journal file (default {DEFAULT_JOURNAL})")
    which = p.add_mutually_exclusive_group()
    which.add_argument("--shoe", type=int, metavar="N", help="one shoe (default: the latest)")
    which.add_argument("--from", dest="start", metavar="T",
                       help="every shoe started from this time (ISO 8601, UTC unless it says)")
    p.add_argument("--to", dest="end", metavar="T", help="… and before this time")
    p.add_argument("--language", metavar="LANG",
                   help="the report's language: en, zh_Hant, hi, bn or th (default: [table] "
                   "language of the config, env TABLECTL_TABLE_LANGUAGE)")
    p.add_argument("--config", help="table config whose [table] language is the default "
                   "(default $TABLECTL_CONFIG, /etc/tablectl/table.toml or the shipped one)")
    p.add_argument("--output", required=True, metavar="FILE",
                   help="where to write it: FILE.pdf or FILE.html")
    add_store_options(p, period=False)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    url = store_url(args)
    if url is None and not os.path.isfile(args.journal):
        raise InputError(f"journal {args.journal}: no such file (give --journal J)")
    out = Path(args.output)
    if out.suffix.lower() not in (".pdf", ".html", ".htm"):
        raise InputError(f"--output {args.output}: name a .pdf or .html file")
    from controller.settings.paths import refuse_special
    refuse_special(out, "--output")
    if args.end is not None and args.shoe is not None:
        raise InputError("--to goes with --from, not with --shoe")
    folder = out.parent if str(out.parent) else Path(".")
    if not folder.is_dir():
        raise InputError(f"--output {args.output}: no folder {folder}; give a file in an "
                         f"existing folder")
    if not os.access(folder, os.W_OK):
        raise InputError(f"--output {args.output}: the folder {folder} is not writable by you")
    language = _language(args)
    needs_report_extra()
    # Imported when the command runs, so that `tablectl` starts fast.
    from controller.journal import Journal
    from controller.report.collect import collect, parse_time
    from controller.report.render import write_html, write_pdf
    start = parse_time(args.start, "--from") if args.start else None
    end = parse_time(args.end, "--to") if args.end else None
    from controller.commands._unproven import warn
    if url is not None:
        status = 0
        report: Any = _from_store(args, url, start, end)
    else:
        status = warn(args.journal, "report")
        with Journal.open_readonly(args.journal) as journal:
            report = collect(journal, shoe=args.shoe, start=start, end=end)
    first = report[0] if isinstance(report, list) else report
    try:
        if out.suffix.lower() == ".pdf":
            pages = write_pdf(report, out, language)
            print(f"tablectl report: {first.selection}{_tables(report)}: written to {out} "
                  f"(PDF, {pages} page{'s' if pages != 1 else ''})")
        else:
            images = write_html(report, out, language)
            print(f"tablectl report: {first.selection}{_tables(report)}: written to {out} "
                  f"(one HTML file, its {images} picture{'s' if images != 1 else ''} of roads "
                  f"and charts inside it)")
    except OSError as err:          # a full disk, a file that cannot be replaced…
        raise InputError(f"--output {args.output}: cannot be written: "
                         f"{err.strerror or err}") from None
    return status


def _tables(report: Any) -> str:
    if not isinstance(report, list):
        return ""
    names = [r.table for r in report]
    return f", {len(names)} table{'s' if len(names) != 1 else ''} ({', '.join(names)})"


def _from_store(args: argparse.Namespace, url: str, start: Any, end: Any) -> list:
    """Each table's report from the floor store (tables with nothing in the selection are
    left out; none at all is one line)."""
    from controller.report.collect import collect
    reports, skipped = [], []
    with per_table(args, url) as (where, chosen):
        for info, journal in chosen:
            try:
                report = collect(journal, shoe=args.shoe, start=start, end=end)
            except InputError as err:
                skipped.append(f"{info.name}: {str(err).rsplit(': ', 1)[-1]}")
                continue
            report.table = info.name
            reports.append(report)
    if not reports:
        raise InputError(f"--store: nothing to report ({'; '.join(skipped)})")
    return reports


def _language(args: argparse.Namespace) -> str:
    """--language, else the table's: [table] language (TABLECTL_TABLE_LANGUAGE over it)."""
    from controller.words import normalise
    if args.language is None:
        from controller.settings.config import load_config
        return normalise(load_config(args.config).table.language)   # checked when read
    try:
        return normalise(args.language)
    except ValueError as err:
        raise InputError(f"--language: {err}") from None


def needs_report_extra() -> None:
    """The charts need matplotlib, which a table PC does not carry: say what to install."""
    import importlib.util
    if importlib.util.find_spec("matplotlib") is None:
        raise InputError("the report draws its charts with matplotlib, which is not installed "
                         "here: pip install 'tablectl[report]' (about 170 MB)")
