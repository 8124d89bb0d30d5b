"""Rebuild the table from its journal: the latest snapshot, then every input after it replayed
and checked against the events the journal holds for it. The snapshot is one the start check
proved (controller/journal/proof.py): bound into the chain and, with the anchor key, signed.

What the local publishers were owed at a crash comes from the chain too: everything before the
last input was published before that input was taken (the loop publishes each input's events
before it takes the next), and a snapshot record names how far they had got when it was taken
(at a clean stop: everything).

A replay that gives other events than the journal's stops with the record's seq: the journal
and this software disagree about what happened, and dealing on would build on a guess.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Iterator

from controller.journal import Journal, JournalError, Record
from controller.journal.anchor import NEW_JOURNAL_HELP
from controller.journal.store import CURSORS_KIND, SNAPSHOT_KIND, Snapshot
from controller.logsetup import get_logger
from controller.settings.profile import Profile
from controller.table import Table
from controller.table.inputs import SHOE_READS, parse_input

log = get_logger("controller.service")

#: journal records that are not a table input or its events (security and account logs, the
#: anchors that sign the chain's head, and the journal's own snapshot and cursors records)
NOTE_KINDS = frozenset({"auth", "account", "note", "anchor", SNAPSHOT_KIND, CURSORS_KIND})
#: the version of the snapshot layout this release writes and reads
SNAPSHOT_FORMAT = 2
LOCAL_CURSOR = "local"


@dataclass
class Recovery:
    """What opening the journal found."""
    resumed: bool = False
    snapshot_seq: int = 0
    inputs_replayed: int = 0
    shoe_seq: int = 0                   # the shoe's own number of its last journaled read
    shoe_session: int | None = None     # the run of numbers it belongs to (framed), if known
    undelivered: list[dict] = field(default_factory=list)   # events after the local cursor


def _groups(records: Iterator[Record]) -> Iterator[tuple[Record, list[Record]]]:
    """(input record, the records of the events it caused), in journal order (a card read's
    card event, in its input's record since schema 5, comes unfolded with the input's seq)."""
    current: Record | None = None
    outputs: list[Record] = []
    for r in records:
        if r.kind == "input":
            if current is not None:
                yield current, outputs
            current, outputs = r, []
        elif r.kind in NOTE_KINDS:
            continue
        elif current is not None:
            outputs.append(r)
    if current is not None:
        yield current, outputs


def _plain(events: list[dict]) -> list[dict]:
    """Events as the journal stores them (JSON round trip: tuples become lists)."""
    return json.loads(json.dumps(events))


_CHECK = object()


def open_table(profile: Profile, journal: Journal, snapshot: Snapshot | None | object = _CHECK,
               **table_kw: Any) -> tuple[Table, Recovery]:
    """The table the journal describes (a new one for an empty journal), from `snapshot` (the
    one the start check chose) or else the journal's latest trusted snapshot."""
    rec = Recovery()
    if journal.last_seq == 0:
        return Table(profile, **table_kw), rec
    snap = journal.trusted_snapshot() if snapshot is _CHECK else snapshot
    table = Table(profile, **table_kw)
    after = 0
    if isinstance(snap, Snapshot):
        after, state = snap.upto_seq, snap.state
        if state.get("format") != SNAPSHOT_FORMAT:
            raise JournalError(f"journal {journal.path}: its snapshots were written by an older "
                               f"release of tablectl; keep it for the record and start a new "
                               f"journal (--journal NEW.db)")
        table = Table.restore(profile, state["table"], **table_kw)
        rec.snapshot_seq, rec.shoe_seq = after, state.get("shoe_seq", 0)
        rec.shoe_session = state.get("shoe_session")
    for inp_rec, out_recs in _groups(journal.records(after_seq=after)):
        data = inp_rec.data
        try:
            inp = parse_input(data)
        except Exception as err:
            raise JournalError(f"journal {journal.path}: input seq {inp_rec.seq} cannot be read "
                               f"back ({err})") from err
        out = table.apply_safely(inp)
        expected = [r.data for r in out_recs]
        replayed = _plain(out.events)
        if replayed != expected or bool(out.refused) != ("refused" in data):
            end = out_recs[-1].seq if out_recs else inp_rec.seq
            if end == journal.last_seq and len(expected) < len(replayed) \
                    and replayed[:len(expected)] == expected:
                # an input and its events are written in one transaction: no crash ends the
                # journal between them, a cut does
                raise JournalError(
                    f"journal {journal.path}: it ends inside input seq {inp_rec.seq}'s records "
                    f"({len(replayed) - len(expected)} of the events it caused are missing "
                    f"after seq {end}): its tail was cut; {NEW_JOURNAL_HELP.format(path=journal.path)}")
            raise JournalError(
                f"journal {journal.path}: replaying input seq {inp_rec.seq} ({data.get('type')}"
                f"{' ' + str(data.get('action')) if data.get('action') else ''}) does not give "
                f"the events journaled with it (seq {inp_rec.seq}…); the journal and this "
                f"release disagree; stop and have it checked (tablectl verify-journal, "
                f"tablectl recall)")
        if data.get("type") in SHOE_READS and data.get("seq"):
            rec.shoe_seq = data["seq"]
        elif data.get("type") == "shoe_session":
            rec.shoe_session = data.get("session")
        rec.inputs_replayed += 1
    rec.resumed = True
    last_input = journal.last_record("input")
    cursor = max(journal.chained_cursors().get(LOCAL_CURSOR, 0),
                 last_input.seq - 1 if last_input is not None else journal.last_seq)
    rec.undelivered = [dict(r.data, seq=r.seq) for r in journal.records(after_seq=cursor)
                       if r.kind != "input" and r.kind not in NOTE_KINDS]
    log.info("journal replayed", snapshot_seq=rec.snapshot_seq, inputs=rec.inputs_replayed,
             state=table.state, undelivered=len(rec.undelivered))
    return table, rec
