"""What the floor feed's payloads are: one schema version, and the journal record kinds it knows.

Every payload the feed publishes carries the contract's version (`controller.schema`:
`"schema_version": SCHEMA_VERSION`). A consumer that keeps the record
(the floor store) accepts a record only when its version is one it knows and its kind is one of
that version's `RECORD_KINDS`; anything else is kept aside with the reason, never guessed at.
A new kind of event is added to the published schema (controller/schema), in the same change
that first journals it (a test scans the code for the events it emits and finds each of them).
"""
from __future__ import annotations

import re
from typing import Any

from controller.journal.snapshots import SNAPSHOT_KIND
from controller.journal.store import CURSORS_KIND
from controller.schema import SCHEMA_VERSION, VERSION_FIELD, event_kinds

#: the version of every payload the feed sends (events, records, state, status): the contract's
FEED_SCHEMA = SCHEMA_VERSION

#: the table's domain events, journaled under their own name (`kind` == `data["event"]`): every
#: event of the published contract but the dealer's prompt, which is shown, never journaled
EVENTS = frozenset(event_kinds()) - {"prompt"}
#: the other records of a journal: what reached the table, raw device events, sign-ins,
#: account changes, notes (a new journal's first record), and the records that bind a snapshot
#: and the publishers' positions into the chain
OTHER_KINDS = frozenset({"input", "device", "auth", "account", "note", SNAPSHOT_KIND,
                         CURSORS_KIND})

#: feed schema version → the record kinds a payload of that version may carry
RECORD_KINDS: dict[int, frozenset[str]] = {1: EVENTS | OTHER_KINDS}

_HASH = re.compile(r"[0-9a-f]{64}")
_TABLE = re.compile(r"[^\x00-\x1f/+#]{1,64}")


def record_problem(payload: Any, table: str | None = None) -> str | None:
    """Why a `records` payload is not a record this code knows (one line), or None.
    `table`: the table its topic names, which the payload must name too."""
    if not isinstance(payload, dict):
        return f"not a JSON object ({type(payload).__name__})"
    v = payload.get(VERSION_FIELD)
    if v not in RECORD_KINDS:
        return (f"schema version {v!r} is not one this store knows "
                f"({', '.join(map(str, sorted(RECORD_KINDS)))}); upgrade the store")
    name = payload.get("table")
    if not isinstance(name, str) or not _TABLE.fullmatch(name):
        return f"table {name!r} is not a table name"
    if table is not None and name != table:
        return f"sent on the topic of table {table!r} but names table {name!r}"
    seq = payload.get("seq")
    if not isinstance(seq, int) or isinstance(seq, bool) or seq < 1:
        return f"seq {seq!r} is not a record number (1 or more)"
    kind = payload.get("kind")
    if kind not in RECORD_KINDS[v]:
        return f"kind {kind!r} is not a record kind of schema version {v}"
    data = payload.get("data")
    if not isinstance(data, dict):
        return "data is not a JSON object"
    if kind in EVENTS and data.get("event") != kind:
        return f"a {kind} record whose data says event {data.get('event')!r}"
    utc = payload.get("utc")
    if not isinstance(utc, str) or not re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z",
                                                    utc):
        return f"utc {utc!r} is not an ISO 8601 UTC time"
    mono = payload.get("mono")
    if not isinstance(mono, (int, float)) or isinstance(mono, bool):
        return f"mono {mono!r} is not a number"
    digest = payload.get("hash")
    if not isinstance(digest, str) or not _HASH.fullmatch(digest):
        return "hash is not 64 hex digits"
    pit = payload.get("pit")
    if pit is not None and not isinstance(pit, str):
        return f"pit {pit!r} is not text"
    return None
