"""Anchors: the journal's chain head signed with a key only the table's service can read.

The hash chain alone proves nothing against someone who can write the file: they edit a
record and recompute every hash after it. An anchor is a record (kind "anchor") holding the
head of the chain it follows and an HMAC-SHA-256 of it under the anchor key:

    {"event": "anchor", "n": 7, "upto_seq": 4180, "head": "<hash of record 4180>",
     "prev": "<mac of anchor 6>", "reason": "shoe_end", "key_id": "<16 hex>", "mac": "<hex>"}

`mac` signs the canonical JSON of every other field. Anchors are numbered and each names the
one before it, so none can be removed from the middle. Without the key nobody can make one, so:

- a record edited and the chain recomputed: an anchor after it names a head the chain no
  longer has;
- records deleted and the rest renumbered: an anchor no longer follows the record it names;
- the tail cut: the anchors that went with it are missing, which the file alone cannot show,
  but the anchor events are published (the floor feed carries them off the table PC), and
  `verify-journal --last-anchor FILE` holds the journal to the last one kept there.

The service anchors every N records, after every snapshot (at every shoe's end among
others) and at a clean stop (controller/service/loop.py decides when), so the latest snapshot
a restart builds on is signed. At start `tablectl run` checks the last anchor and the whole
chain (controller/journal/proof.py) and refuses a journal that does not verify;
`verify-journal --key` checks every anchor. The key file: 32 random bytes as 64 hex digits
(`tablectl anchor-key FILE`), readable by its owner only (mode 0600), or it is refused.
"""
from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import stat
from dataclasses import dataclass
from typing import Any

from controller.errors import InputError
from controller.journal.chain import GENESIS, canonical
from controller.journal.store import Journal

KIND = "anchor"
KEY_MODE = 0o600
SIGNED = ("n", "upto_seq", "head", "prev", "reason", "key_id")
#: signed too when present: the writer had proven the whole chain up to the head it signs
#: (its start check, then its own records): a checkpoint. True when signed, it says nothing of
#: the file since (a record edited in place keeps the head it signs): a restart checks the
#: records before it all the same (controller/journal/proof.py)
CHECKPOINT = "verified"
#: records between two anchors (besides the shoe ends and the stops): about 330 inputs (a card
#: read and its card event are one record)
EVERY = 600
NEW_JOURNAL_HELP = ("a manager keeps it for examination and starts a new one: tablectl "
                    "new-journal --journal {path} --as MANAGER --reason …")


class KeyFileError(InputError):
    """The anchor key cannot be used: one line naming the file and the fix."""


@dataclass(frozen=True)
class AnchorKey:
    secret: bytes
    path: str

    @property
    def key_id(self) -> str:
        """Names the key in each anchor (a wrong key is told from a forged anchor)."""
        return hashlib.sha256(b"tablectl anchor key\0" + self.secret).hexdigest()[:16]

    def mac(self, fields: dict) -> str:
        signed = (*SIGNED, CHECKPOINT) if fields.get(CHECKPOINT) is not None else SIGNED
        body = canonical({k: fields[k] for k in signed}).encode("ascii")
        return hmac.new(self.secret, body, hashlib.sha256).hexdigest()

    def __repr__(self) -> str:            # never the secret
        return f"AnchorKey({self.path!r}, id {self.key_id})"


def load_key(path: str, flag: str = "--anchor-key") -> AnchorKey:
    """The key in `path`, refused unless only its owner may read it."""
    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode):
            raise KeyFileError(f"{flag} {path}: not a regular file; give the key file")
        if st.st_mode & 0o077:
            raise KeyFileError(f"{flag} {path}: others may read the anchor key (mode "
                               f"{st.st_mode & 0o777:04o}); only the service may: chmod 600 "
                               f"{path}")
        with open(path, "rb") as fh:
            text = fh.read(4096)
    except FileNotFoundError:
        raise KeyFileError(f"{flag} {path}: no such file; make one with tablectl anchor-key "
                           f"{path}") from None
    except OSError as err:
        raise KeyFileError(f"{flag} {path}: cannot be read ({err.strerror}); run the "
                           "controller as the key's owner") from None
    try:
        secret = bytes.fromhex(text.decode("ascii").strip())
    except (UnicodeDecodeError, ValueError):
        secret = b""
    if len(secret) < 32:
        raise KeyFileError(f"{flag} {path}: not an anchor key (64 hex digits or more); make one "
                           f"with tablectl anchor-key FILE")
    return AnchorKey(secret, path)


def make_key(path: str) -> AnchorKey:
    """A new random key in a new file (mode 0600); an existing file is never overwritten."""
    secret = secrets.token_bytes(32)
    try:
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, KEY_MODE)
    except FileExistsError:
        raise KeyFileError(f"{path}: already exists; a key is never overwritten (the journals "
                           "it signed need it): choose another file") from None
    except OSError as err:
        raise KeyFileError(f"{path}: cannot be created ({err.strerror}); check the "
                           "directory") from None
    with os.fdopen(fd, "w") as fh:
        os.fchmod(fd, KEY_MODE)
        fh.write(secret.hex() + "\n")
    return AnchorKey(secret, path)


class Anchoring:
    """The writer's side: signs the journal's head (on the table's thread, as its journal)."""

    def __init__(self, journal: Journal, key: AnchorKey):
        self.journal, self.key = journal, key
        last = journal.last_record(KIND)
        self.n = int(last.data.get("n", 0)) if last else 0
        self.prev = str(last.data.get("mac", GENESIS)) if last else GENESIS
        self.seq = last.seq if last else 0           # where the last anchor is
        # set once the table has proven the whole chain (controller/journal/proof.py): from
        # then on every anchor is a checkpoint
        self.proven = False

    @property
    def unanchored(self) -> int:
        """Records written after the last anchor."""
        return self.journal.last_seq - self.seq

    def sign(self, reason: str) -> dict | None:
        """Anchor the head now (durably); the anchor event with its seq, or None when the
        head is already anchored."""
        if self.journal.last_seq == self.seq:
            return None
        data: dict[str, Any] = {"event": KIND, "n": self.n + 1,
                                "upto_seq": self.journal.last_seq,
                                "head": self.journal.head_hash, "prev": self.prev,
                                "reason": reason, "key_id": self.key.key_id}
        if self.proven:
            data[CHECKPOINT] = data["upto_seq"]
        data["mac"] = self.key.mac(data)
        seq = self.journal.append(KIND, data, durable=True)
        self.n, self.prev, self.seq = data["n"], data["mac"], seq
        return dict(data, seq=seq)


def _first_seq(journal: Journal) -> int:
    """The journal's first record: 1, or after `tablectl archive` moved older days out, the
    archive's last record, kept as the link (controller/journal/archive.py)."""
    return int(journal._rows("SELECT min(seq) FROM records")[0][0] or 0)


def _problem(key: AnchorKey, seq: int, data: dict, n: int, prev: str,
             journal: Journal, first: int = 1) -> str | None:
    """Why the anchor at `seq` does not hold, or None. An anchor whose head was archived
    (before `first`) is checked there, with the archive."""
    if not all(isinstance(data.get(k), t) for k, t in (
            ("n", int), ("upto_seq", int), ("head", str), ("prev", str), ("reason", str),
            ("key_id", str), ("mac", str))):
        return f"the anchor at seq {seq} is malformed"
    if CHECKPOINT in data and data[CHECKPOINT] != data["upto_seq"]:
        return f"the anchor at seq {seq} claims a check it does not sign (malformed)"
    if data["key_id"] != key.key_id:
        return (f"the anchor at seq {seq} was signed with another key (id {data['key_id']}, "
                f"this key's is {key.key_id}); give the journal's key")
    if not hmac.compare_digest(key.mac(data), data["mac"]):
        return f"the anchor at seq {seq} does not match its signature (altered)"
    if data["n"] != n + 1 or data["prev"] != prev:
        return (f"the anchor at seq {seq} (number {data['n']}) does not follow anchor number "
                f"{n}: an anchor was removed")
    if data["upto_seq"] != seq - 1:
        return (f"the anchor at seq {seq} signed the head at seq {data['upto_seq']}: records "
                "before it were removed or renumbered")
    if data["upto_seq"] >= first and journal.record_hash(data["upto_seq"]) != data["head"]:
        return (f"record seq {data['upto_seq']} is not the one the anchor at seq {seq} signed: "
                "the chain was rewritten")
    return None


@dataclass(frozen=True)
class AnchorReport:
    ok: bool
    anchors: int = 0
    last_seq: int = 0                   # the last anchor's seq
    unanchored: int = 0                 # records after it
    problem: str | None = None

    def __str__(self) -> str:
        if not self.ok:
            return f"anchors: {self.problem}"
        return (f"{self.anchors} anchor(s) verified with the key, the last at seq "
                f"{self.last_seq}; {self.unanchored} record(s) after it")


def verify_anchors(journal: Journal, key: AnchorKey, kept: dict | None = None,
                   since: int = 0) -> AnchorReport:
    """Every anchor of the journal under `key` (those from seq `since` on: a checkpoint's, whose
    own check vouches for the ones before), and the journal held to `kept` (an anchor event
    kept off the table PC) when given. The chain itself is checked by Journal.verify."""
    n, prev, count, last = 0, GENESIS, 0, 0
    first = _first_seq(journal)
    for rec in journal.records(after_seq=max(since - 1, 0), kinds=[KIND]):
        if count == 0 and (first > 1 or since) and isinstance(rec.data.get("n"), int):
            # older days archived (the anchors before this one are in the archives), or a
            # checkpoint's own check vouches for those before it
            n, prev = rec.data["n"] - 1, str(rec.data.get("prev"))
        why = _problem(key, rec.seq, rec.data, n, prev, journal, first)
        if why is not None:
            return AnchorReport(False, count, last, problem=why)
        n, prev, count, last = rec.data["n"], rec.data["mac"], count + 1, rec.seq
    end = journal.last_seq
    if kept is not None:
        why = _held_to(journal, key, kept)
        if why is not None:
            return AnchorReport(False, count, last, problem=why)
    if count == 0 and end:
        return AnchorReport(False, problem=f"no anchor in {end} record(s): nothing shows this "
                            "journal was not rewritten")
    return AnchorReport(True, count, last, end - last)


def _held_to(journal: Journal, key: AnchorKey, kept: dict) -> str | None:
    seq = kept.get("seq")
    fields = {k: kept.get(k) for k in (*SIGNED, "mac")}
    if not isinstance(seq, int) or any(v is None for v in fields.values()):
        return "the anchor kept off the table PC is not an anchor event (seq, n, mac, …)"
    fields[CHECKPOINT] = kept.get(CHECKPOINT)
    if fields["key_id"] != key.key_id or not hmac.compare_digest(key.mac(fields),
                                                                  str(fields["mac"])):
        return "the anchor kept off the table PC does not match this key"
    end = journal.last_seq
    if end < seq:
        return (f"the journal ends at seq {end}, before the anchor kept off the table PC "
                f"(seq {seq}, number {fields['n']}): its tail was cut")
    rec = next(iter(journal.records(after_seq=seq - 1)), None)
    if rec is None or rec.seq != seq or rec.kind != KIND or rec.data.get("mac") != fields["mac"]:
        return (f"seq {seq} is not the anchor kept off the table PC (number {fields['n']}): "
                "the journal was rewritten")
    return None


def read_kept(path: str) -> dict:
    """The last anchor event in a file of JSON lines (a floor feed's log, `run --json`)."""
    last = None
    try:
        with open(path, encoding="utf-8-sig") as fh:
            for line in fh:
                line = line.strip()
                if '"anchor"' not in line:
                    continue
                try:
                    event = json.loads(line)
                except ValueError:
                    continue
                if isinstance(event, dict) and event.get("event") == KIND:
                    last = event
    except OSError as err:
        raise InputError(f"--last-anchor {path}: cannot be read ({err.strerror})") from None
    if last is None:
        raise InputError(f"--last-anchor {path}: holds no anchor event; give the floor feed's "
                         "record (JSON lines with \"event\": \"anchor\")")
    return last
