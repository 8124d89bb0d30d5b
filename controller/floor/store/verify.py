"""A table's journal held to what left it: the records and anchors the floor store received.

Every record the store holds for the table must be in the journal with the same hash (a
record rewritten, or removed and the rest renumbered, differs); a journal that ends before
the store's last record had its tail cut. With the anchor key, the journal's anchors are
checked as `verify-journal --key` does and the journal must hold the last anchor the store
kept (`verify_anchors(…, kept=…)`). Records older than the journal's first (archived days)
are the archives' to vouch for; records the store has not received yet are only counted.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from controller.floor.store.reader import StoredJournal, open_store, tables


@dataclass(frozen=True)
class StoreCheck:
    ok: bool
    text: str


def against_store(journal: Any, url: str, table: str, key: Any = None) -> StoreCheck:
    from controller.journal.anchor import verify_anchors
    with open_store(url) as (conn, where):
        info = tables(conn, table=table)[0]
        stored = StoredJournal(conn, info, where)
        found = _compare(journal, stored, table)
        if not found.ok or key is None:
            return found
        last = stored.last_record("anchor")
        if last is None:
            return StoreCheck(False, f"floor store: no anchor of table {table} reached the "
                                     f"store; {found.text}")
        anchors = verify_anchors(journal, key, dict(last.data, seq=last.seq))
        if not anchors.ok:
            return StoreCheck(False, f"floor store: {anchors.problem}")
        return StoreCheck(True, f"{found.text}; the journal holds the store's last anchor "
                                f"(seq {last.seq}, number {last.data.get('n')})")


def _compare(journal: Any, stored: StoredJournal, table: str) -> StoreCheck:
    mine = iter(journal.records())
    rec = next(mine, None)
    first = rec.seq if rec is not None else None
    compared = archived = 0
    store_last = 0
    lacking: list[list[int]] = []       # the journal's records the store lacks before its last
    matched = 0                         # the last seq the two hold alike
    for seq, digest in stored.hashes():
        store_last = seq
        if first is not None and seq < first:
            archived += 1
            continue
        while rec is not None and rec.seq < seq:
            if rec.seq > matched:
                if lacking and lacking[-1][1] == rec.seq - 1:
                    lacking[-1][1] = rec.seq
                else:
                    lacking.append([rec.seq, rec.seq])
            rec = next(mine, None)
        if rec is None:
            anchor = stored.last_record("anchor")
            at = f" (its last anchor at seq {anchor.seq})" if anchor is not None else ""
            return StoreCheck(False, f"floor store: the journal ends at seq {journal.last_seq}, "
                                     f"but the floor store holds table {table}'s records up to "
                                     f"seq {_last(stored)}{at}: the journal's tail was cut")
        if rec.seq != seq:
            return StoreCheck(False, f"floor store: record seq {seq} of table {table} is in the "
                                     f"floor store but not in the journal: records were "
                                     f"removed")
        if rec.hash != digest:
            return StoreCheck(False, f"floor store: record seq {seq} is not the one that left "
                                     f"table {table} (its hash differs from the store's): the "
                                     f"journal was rewritten")
        compared += 1
        matched = seq
    if compared == 0 and archived == 0:
        return StoreCheck(False, f"floor store: it holds no record of table {table} to hold "
                                 f"the journal to")
    behind = journal.last_seq - store_last if journal.last_seq > store_last else 0
    return StoreCheck(True, f"floor store: {compared} record(s) of table {table} match, the "
                            f"last at seq {store_last}"
                      + (f" ({archived} older ones are in the archives)" if archived else "")
                      + _lacking(lacking)
                      + (f"; {behind} later record(s) have not reached the store yet"
                         if behind else ""))


def _lacking(ranges: list[list[int]]) -> str:
    """The journal's records missing from the store between two it holds: not evidence
    against the journal, but not vouched for by the store either (its gap alarm names them)."""
    if not ranges:
        return ""
    n = sum(b - a + 1 for a, b in ranges)
    shown = ", ".join(str(a) if a == b else f"{a}–{b}" for a, b in ranges[:5])
    more = f" and {len(ranges) - 5} more range(s)" if len(ranges) > 5 else ""
    return (f"; the store lacks {n} record(s) of the journal between those (seq {shown}{more}), "
            f"which it does not vouch for")


def _last(stored: StoredJournal) -> int:
    return stored.last_seq
