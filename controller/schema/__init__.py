"""The published event contract: a JSON Schema (events.schema.json, shipped in the package) for
every event tablectl publishes — JSON Lines on stdout, the floor feed's topics, the web
display's API and streams — and the version every payload carries.

`SCHEMA_VERSION` goes up when a change could break a consumer (a field removed, renamed or
retyped, an event's meaning changed); new events and new fields keep it. Every publisher stamps
it with `stamped()` under the one field name `VERSION_FIELD`; docs/events.md is rendered from
the schema (`python -m controller.schema.render`).
"""
from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources
from typing import Any

#: the version of the contract this release publishes
SCHEMA_VERSION = 1
#: the field of every payload that carries it
VERSION_FIELD = "schema_version"
SCHEMA_FILE = "events.schema.json"


def stamped(payload: dict[str, Any]) -> dict[str, Any]:
    """The payload with the contract's version (a new dict; the caller's is left alone)."""
    return {**payload, VERSION_FIELD: SCHEMA_VERSION}


@lru_cache(maxsize=1)
def schema() -> dict[str, Any]:
    """The shipped JSON Schema (draft 2020-12)."""
    text = resources.files("controller.schema").joinpath(SCHEMA_FILE).read_text("utf-8")
    return json.loads(text)


def event_kinds() -> list[str]:
    return list(schema()["properties"]["event"]["enum"])
