"""docs/events.md from the shipped schema: `python -m controller.schema.render [FILE]`
(without FILE, to stdout). The test suite checks the document is the rendering of the schema.
"""
from __future__ import annotations

import argparse
import sys
from typing import Any

from controller.schema import SCHEMA_VERSION, VERSION_FIELD, schema

HEAD = f"""# Events: the published contract

Every event tablectl publishes is a JSON object whose `event` names its type. The same events
travel on stdout (`tablectl simulate --json`, `tablectl run --json`, one object per line), on
the floor feed's `{{prefix}}/{{table}}/events` topic (with `table` and `utc`), and, as far as
the public may see them, into the web display. Each is described below field by field, with
the feed's other topics and the display's JSON after them.

The contract is a JSON Schema (draft 2020-12) shipped in the package,
`controller/schema/events.schema.json`, read with
`importlib.resources.files("controller.schema") / "events.schema.json"`; this page is rendered
from it. Every payload carries `{VERSION_FIELD}`, now **{SCHEMA_VERSION}**. It goes up when a
change could break a consumer (a field removed, renamed or retyped, a meaning changed); new
event types and new fields do not change it, so a consumer ignores what it does not know.
Fields marked *required* are in every event of that type; the others appear where they apply.

Validate a line with the `jsonschema` package:

```python
import json
from importlib import resources
import jsonschema

schema = json.loads(resources.files("controller.schema").joinpath("events.schema.json")
                    .read_text())
jsonschema.validate(json.loads(line), schema)
```
"""


def _type(p: dict[str, Any]) -> str:
    if "$ref" in p:
        name = p["$ref"].rsplit("/", 1)[-1]
        return {"card": "card", "cards": "cards", "bets": "bets",
                "schema_version": "integer"}.get(name, name)
    if "const" in p:
        return f"`{p['const']}`"
    if "enum" in p:
        return " \\| ".join(f"`{v}`" for v in p["enum"])
    if "anyOf" in p:
        return " or ".join(_type(x) for x in p["anyOf"])
    t = p.get("type", "any")
    if isinstance(t, list):
        return " or ".join(t)
    if t == "array" and "items" in p:
        return f"array of {_type(p['items'])}"
    if t == "object" and isinstance(p.get("additionalProperties"), dict):
        return f"object of {_type(p['additionalProperties'])}"
    return str(t)


def _referenced(p: dict[str, Any]) -> dict[str, Any]:
    """The definition a property refers to (`$ref: #/$defs/NAME`), or {}."""
    ref = p.get("$ref", "")
    return schema()["$defs"].get(ref.rsplit("/", 1)[-1], {}) if ref else {}


def _table(d: dict[str, Any], skip: tuple[str, ...] = ()) -> list[str]:
    required = set(d.get("required", ()))
    rows = ["| field | type | | meaning |", "|---|---|---|---|"]
    for name, p in d.get("properties", {}).items():
        if name in skip:
            continue
        desc = p.get("description") or _referenced(p).get("description", "")
        desc = desc.replace("|", "\\|")
        rows.append(f"| `{name}` | {_type(p)} | {'required' if name in required else ''} | "
                    f"{desc} |")
    return rows


def render() -> str:
    s = schema()
    defs = s["$defs"]
    out = [HEAD, "## Values used by many events", ""]
    for name in ("card", "cards", "bets", "schema_version"):
        out.append(f"- **{name}**: {defs[name]['description']}")
    out += ["", "Fields every event may carry: `schema_version`, `seq` (journaled events: all "
            "but `prompt`), `shoe`, `round` (events within a round), and on the floor feed "
            "`table` and `utc`.", "", "## Event types", ""]
    kinds = s["properties"]["event"]["enum"]
    out.append(" · ".join(f"[`{k}`](#{k.replace('_', '_')})" for k in kinds))
    out.append("")
    common = ("event", "schema_version", "table", "utc")
    for k in kinds:
        d = defs[f"event.{k}"]
        out += [f"### {k}", "", d["description"], ""] + _table(d, common) + [""]
    out += ["## Floor feed topics", "",
            "Besides the events topic, each table keeps two retained topics on the broker "
            "(docs/floor-feed.md).", ""]
    for name, title in (("feed.status", "`{prefix}/{table}/status`"),
                        ("feed.state", "`{prefix}/{table}/state`"),
                        ("feed.record", "`{prefix}/{table}/records`")):
        d = defs[name]
        out += [f"### {title}", "", d["description"], ""] + _table(d) + [""]
    out += ["## Web display", "",
            "The display's JSON (docs/scoreboard.md); the streams send the same objects as "
            "server-sent events.", ""]
    for name, title in (("web.roads", "`/api/roads`"), ("web.dealer", "`/api/state`"),
                        ("web.scoreboard", "`/events` (`scoreboard`)")):
        d = defs[name]
        out += [f"### {title}", "", d["description"], ""] + _table(d) + [""]
    return "\n".join(out).rstrip("\n") + "\n"


def main(argv: list[str] | None = None) -> int:
    # a parser, so that `--help` is answered and never taken for the file to write
    parser = argparse.ArgumentParser(prog="python -m controller.schema.render",
                                     description="Render the event schema as Markdown.")
    parser.add_argument("file", nargs="?", help="where to write it (default: standard output)")
    args = parser.parse_args(argv)
    text = render()
    if args.file:
        with open(args.file, "w", encoding="utf-8") as fh:
            fh.write(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
