"""README.md's command table against the commands themselves: every command has a row, and
each row names exactly the options its `--help` lists (and an option's choices as they are)."""
import argparse
import re
from pathlib import Path

from controller.cli import build_parser

README = Path(__file__).resolve().parents[1] / "README.md"
FLAG = re.compile(r"(?<![\w-])(--[a-z][a-z0-9-]*)")


def table_rows(text: str) -> dict[str, str]:
    """The command table (header `| command | what it does |`): command name → its first
    cell, code spans joined; a pipe escaped inside a cell (`\\|`) is part of the cell."""
    rows: dict[str, str] = {}
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines)
                 if re.fullmatch(r"\|\s*command\s*\|\s*what it does\s*\|", line.strip()))
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        cell = re.split(r"(?<!\\)\|", line)[1].replace("\\|", "|")
        spans = re.findall(r"`([^`]*)`", cell)
        names = [s.split()[1] for s in spans if s.startswith("tablectl ") and len(s.split()) > 1]
        assert names, f"README row without a `tablectl COMMAND …` synopsis: {line[:80]}"
        rows[names[0]] = " ".join(spans)
    return rows


def commands() -> dict[str, list[argparse.ArgumentParser]]:
    """Each subcommand → its parser and, for one with subcommands of its own, theirs."""
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    out = {}
    for name, parser in sub.choices.items():
        nested = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        out[name] = [parser] + [p for a in nested for p in a.choices.values()]
    return out


def options(parsers: list[argparse.ArgumentParser]) -> dict[str, tuple | None]:
    """--flag → its choices (None without), over the parsers given; -h/--help left out."""
    found = {}
    for p in parsers:
        for action in p._actions:
            for opt in action.option_strings:
                if opt.startswith("--") and opt != "--help":
                    found[opt] = tuple(action.choices) if action.choices else None
    return found


def test_every_command_has_a_row_and_every_row_its_options():
    rows = table_rows(README.read_text(encoding="utf-8"))
    cmds = commands()
    problems = [f"{name}: no row in README.md's command table" for name in cmds
                if name not in rows]
    problems += [f"{name}: README.md has a row, tablectl has no such command" for name in rows
                 if name not in cmds]
    for name in sorted(set(rows) & set(cmds)):
        synopsis = rows[name]
        given = set(FLAG.findall(synopsis))
        opts = options(cmds[name])
        if missing := sorted(set(opts) - given):
            problems.append(f"{name}: README.md lacks {', '.join(missing)}")
        if extra := sorted(given - set(opts)):
            problems.append(f"{name}: README.md names {', '.join(extra)}, which --help lacks")
        for opt, choices in opts.items():
            m = re.search(re.escape(opt) + r"[ =]([\w.-]+(?:\|[\w.-]+)+)", synopsis)
            if choices and m and set(m.group(1).split("|")) != {str(c) for c in choices}:
                problems.append(f"{name}: {opt} takes {'|'.join(map(str, choices))}, README.md "
                                f"says {m.group(1)}")
    assert not problems, "README.md's command table and --help differ:\n  " + \
        "\n  ".join(problems)


def test_the_table_reader_sees_escaped_pipes_and_every_span():
    text = ("| command | what it does |\n|---|---|\n"
            "| `tablectl x [--a A\\|B]` and `x y --b` | one |\n| `tablectl z` | two |\n")
    assert table_rows(text) == {"x": "tablectl x [--a A|B] x y --b", "z": "tablectl z"}


def test_the_synopses_argparse_cannot_write_say_what_the_readme_says():
    """`--to` goes with `--from` (a group argparse cannot nest), `--reason` is asked of every
    override, and every command says what it does."""
    rows = table_rows(README.read_text(encoding="utf-8"))
    cmds = commands()
    report = cmds["report"][0].format_usage()
    assert "[--shoe N | --from T [--to T]]" in report and "[--shoe N | --from T [--to T]]" in \
        rows["report"]
    override = cmds["override"][0].format_usage()
    assert "--reason REASON" in override and "[--reason" not in override
    assert '--reason "…"' in rows["override"] and '[--reason' not in rows["override"]
    for name, parsers in cmds.items():
        assert parsers[0].description, f"{name} --help says nothing of what it does"
