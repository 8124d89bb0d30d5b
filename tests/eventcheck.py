"""Events against the published contract (controller/schema/events.schema.json), with
jsonschema: each payload must validate, and every field it carries must be one the contract
documents (the schema itself lets consumers meet new fields; our own output may not have any
it does not describe)."""
from __future__ import annotations

from functools import lru_cache

import jsonschema

from controller.schema import SCHEMA_VERSION, VERSION_FIELD, schema


@lru_cache(maxsize=None)
def _validator(definition: str) -> jsonschema.Draft202012Validator:
    s = schema()
    sub = {"$schema": s["$schema"], "$defs": s["$defs"], "$ref": f"#/$defs/{definition}"}
    return jsonschema.Draft202012Validator(sub)


def check_payload(payload: dict, definition: str) -> None:
    """One payload against one of the schema's definitions (event.<kind>, feed.state, …)."""
    _validator(definition).validate(payload)
    documented = set(schema()["$defs"][definition].get("properties", {}))
    extra = set(payload) - documented
    assert not extra, f"{definition}: fields the contract does not describe: {sorted(extra)}"


def check_events(events: list[dict], *, stamped: bool = True) -> set[str]:
    """Every event of a run; the kinds seen. The whole schema is used for the first of each
    kind (its dispatch on `event`), the event's own definition for the rest (fast)."""
    seen: set[str] = set()
    whole = jsonschema.Draft202012Validator(schema())
    for e in events:
        kind = e.get("event")
        if stamped:
            assert e.get(VERSION_FIELD) == SCHEMA_VERSION, e
        if kind not in seen:
            whole.validate(e)
            seen.add(kind)
        check_payload(e, f"event.{kind}")
    return seen
