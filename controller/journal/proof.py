"""What a table proves about its journal before it deals on it.

A restart builds on the latest snapshot and the records after it, so those are checked before
anything else happens: the snapshot against its hash and against the record that binds it into
the chain (controller/journal/store.py), the chain from the snapshot (and, with the anchor key,
from the last anchor, whose signature and head are checked) to the end. The snapshot is the
checkpoint that bounds this first check: with the key it is one the last anchor signs, so a
restart after a clean stop checks a handful of records here.

With the key, the last anchor may be a checkpoint: its signer had proven the whole chain up to
the head it signs (controller/journal/anchor.py). That was true when it was signed; it says
nothing of the file since: a record before it edited in place keeps every stored hash, so the
checkpoint's head still matches and only the record's own check finds the change. So a
checkpoint is checked like any anchor (its signature, its place in the anchors' sequence, that
its record still has the hash it signs) and vouches for nothing: the records before it are
checked again, as without the key.

The rest of the chain (from the first record to the snapshot), every snapshot and, with the
key, every anchor are checked too: at once when that is at most `budget` records, otherwise by
the table on a reader of its own (controller/service/runtime.py runs `check_rest`), before the
first card is accepted (the cards are held back until it is done). Either way a journal that
does not verify is refused with one line naming the first bad record, and the table stops
(exit 2).

With the key, the journal's seal (controller/journal/seal.py) may vouch for that rest: the
writer's signed word that the journal's file is as it left it, with the chain proven up to the
seal's seq. A seal that holds bounds the first check instead (from the seal's seq, when that is
before the snapshot), and the rest is checked while the table deals: still checked, since the
write-ahead log a crash leaves could rewrite an older page without the file's changing, and one
that does not verify stops the table all the same.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable

from controller.settings.config import StorageCfg
from controller.journal.anchor import (CHECKPOINT, KIND, NEW_JOURNAL_HELP, AnchorKey,
                                       _first_seq, _problem, verify_anchors)
from controller.journal import seal
from controller.journal.store import Journal, JournalError, Snapshot

#: records of the rest of the chain checked before the table starts; beyond, while it waits
#: ([storage] verify_before_start)
BUDGET: int = StorageCfg.verify_before_start


@dataclass(frozen=True)
class StartCheck:
    """What check_at_start proved and what it left for check_rest."""

    snapshot: Snapshot | None       # what the restart builds on (checked)
    checked_after: int              # the chain after this seq is checked
    rest_after: int                 # still to check: the records after rest_after …
    rest_upto: int                  # … up to rest_upto (nothing when rest_upto <= rest_after)
    anchored: bool                  # with the key, and the journal has anchors to check
    checkpoint: int = 0             # seq of the last anchor when it is a checkpoint (it bounds
                                    # nothing: the file may have changed since it was signed)
    vouched: int = 0                # the journal's seal vouches for the chain up to this seq
                                    # (seal.py): the rest is checked while the table deals
    unsealed: str = ""              # else why no seal vouches for it (with the key)

    @property
    def pending(self) -> int:
        """Records still to check before the first card."""
        return max(0, self.rest_upto - self.rest_after)


def refused(journal: Journal, why: object) -> JournalError:
    return JournalError(f"journal {journal.path} does not verify: {why}; "
                        f"{NEW_JOURNAL_HELP.format(path=journal.path)}")


def check_at_start(journal: Journal, key: AnchorKey | None, *,
                   budget: int | None = BUDGET) -> StartCheck:
    """Before a table deals on `journal`: JournalError (one line) when what it builds on does
    not verify; the rest too when it is at most `budget` records (None: all of it, always)."""
    if journal.last_seq == 0:
        return StartCheck(None, 0, 0, 0, False)
    last = journal.last_record(KIND)
    first = _first_seq(journal)
    origin = first if first > 1 else 0     # archived days: the archives vouch for what is before
    before, anchor_upto, checkpoint = None, None, 0
    if key is None:
        if last is not None:
            raise JournalError(f"journal {journal.path} is anchored (key id "
                               f"{last.data.get('key_id')}); give its key (--anchor-key FILE "
                               "or [storage] anchor_key_file)")
    elif last is not None:
        why = _problem(key, last.seq, last.data, int(last.data.get("n", 1)) - 1,
                       str(last.data.get("prev", "")), journal, first)
        if why is not None:
            raise refused(journal, why)
        before, anchor_upto = last.seq, int(last.data["upto_seq"])
        if last.data.get(CHECKPOINT) is not None:
            # its signer had proven the chain then; a record edited in place since keeps the
            # head it signs: what lies before it is checked all the same (check_rest)
            checkpoint = last.seq
    try:
        # with the key, a snapshot the last anchor signs: one after it could have been
        # rewritten with the records after the anchor
        snap = journal.trusted_snapshot(before_seq=before)
    except JournalError as err:
        raise refused(journal, str(err).split(": ", 1)[-1]) from None
    after = snap.upto_seq if snap is not None else origin
    if anchor_upto is not None:
        after = min(after, anchor_upto)
    vouch, unsealed = 0, ""
    if key is not None and after > origin:
        # the file untouched since the writer sealed it: what it had proven before the seal
        # is checked while the table deals; everything after the seal before it
        found = seal.vouched(journal.path, key, journal.record_hash, journal.last_seq)
        vouch, unsealed = found.upto_seq, found.why
        if vouch:
            after = min(after, vouch)
    after = max(after, origin)
    result = journal.verify(after_seq=after, snapshots=False)
    if not result.ok:
        raise refused(journal, result)
    check = StartCheck(snap, after, origin, after, key is not None and last is not None,
                       checkpoint, vouched=vouch if after > origin else 0, unsealed=unsealed)
    if budget is None or check.pending <= budget:
        check_rest(journal, check, key)
        return replace(check, rest_upto=origin)
    return check


def check_rest(journal: Journal, check: StartCheck, key: AnchorKey | None,
               progress: Callable[[int], None] | None = None) -> None:
    """The chain before what check_at_start checked, every snapshot, and with the key every
    anchor. JournalError (one line) when any does not verify."""
    if check.pending:
        result = journal.verify(after_seq=check.rest_after, upto_seq=check.rest_upto,
                                snapshots=False, progress=progress)
        if not result.ok:
            raise refused(journal, result)
    snaps = journal.check_snapshots()
    if not snaps.ok:
        raise refused(journal, snaps)
    if key is not None and check.anchored:
        anchors = verify_anchors(journal, key)
        if not anchors.ok:
            raise refused(journal, anchors.problem)


def reader_check(path: str) -> str | None:
    """Why the journal at `path`, or one of its archives, does not verify (one line), or None.
    What recall, audit, report and roads say before they show a journal: the whole chain,
    every snapshot, the archives and their links (the anchors need the key: verify-journal)."""
    from controller.journal.archive import check_archives, verify
    with Journal.open_readonly(path) as journal:
        result = verify(journal)
    if not result.ok:
        return f"journal {path} does not verify: {result}"
    archives = check_archives(path)
    return None if archives.ok else f"journal {path}: {archives}"
