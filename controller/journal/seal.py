"""The journal's seal: the writer's signed word that the journal's file is as it left it.

A checkpoint anchor (controller/journal/anchor.py) says the chain was whole when it was signed,
not since: a record edited in place keeps every stored hash. What a start needs, to leave the
records before it to be checked while the table deals, is that the file has not been written
since. The seal says that, in a file of its own beside the journal (`JOURNAL.sealed`), since a
statement about the file cannot live inside it:

    {"upto_seq": 41800, "head": "<hash of record 41800>", "file": [dev, inode, size,
     mtime_ns, ctime_ns], "wal": false, "key_id": "<16 hex>", "mac": "<hex>"}

`mac` is an HMAC-SHA-256 under the anchor key of the rest (so nobody without the key can make
one). The writer seals only once it has proven the whole chain (its start's check, then its own
records, its files watched after every commit: controller/journal/files.py), after each WAL
checkpoint it makes and after its clean close, each time with the file's identity as it left it.
Any write to the file since (in place, a copy put over it, a rename, a `touch`) changes its
inode change time (ctime), which no program can set back, so a seal that still matches the file
means its pages are the writer's own (to the kernel's clock tick for file times, a few
milliseconds: a write in the same tick as the seal keeps it, and is found by the check below).

What it does not cover: the write-ahead log. After a clean close there is none, and the seal
says so (`"wal": false`): one found at the start voids it. A seal made while the writer is open
says `"wal": true`, since it writes one. After a crash the WAL holds the
records since the last checkpoint, and frames added to it could rewrite an older page; so a
start checks the chain from the seal's seq to the end before the first card (as it checks from
the snapshot), and the records before the seal are checked all the same, while the table deals:
one that does not verify stops the table (controller/journal/proof.py).
"""
from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import stat
from dataclasses import dataclass
from typing import Any

from controller.journal.anchor import AnchorKey
from controller.journal.chain import canonical
from controller.journal.schema import FILE_MODE
from controller.settings.paths import flush

SUFFIX = ".sealed"
SIGNED = ("upto_seq", "head", "file", "wal", "key_id")
#: kept apart from the anchors' MACs: a seal's signature can never pass for an anchor's
_DOMAIN = b"tablectl journal seal\0"


def seal_path(journal_path: str) -> str:
    return journal_path + SUFFIX


def file_state(journal_path: str) -> tuple[list[int], bool]:
    """The journal's file as the system names it (device, inode, size, modification and
    inode-change times in ns), and whether a write-ahead log with frames stands beside it.
    OSError when it cannot be looked at."""
    st = os.stat(journal_path)
    try:
        wal = os.stat(journal_path + "-wal").st_size > 0
    except FileNotFoundError:
        wal = False
    return [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns], wal


def _mac(key: AnchorKey, fields: dict[str, Any]) -> str:
    body = canonical({k: fields[k] for k in SIGNED}).encode("ascii")
    return hmac.new(key.secret, _DOMAIN + body, hashlib.sha256).hexdigest()


def write(journal_path: str, key: AnchorKey, upto_seq: int, head: str,
          closed: bool = False) -> None:
    """Seal the journal as its file is now, with the chain proven up to `upto_seq` (`head`);
    `closed`: by its writer's close (then a write-ahead log it left with frames is said, and
    none may appear later). A new file put in place of the old one in one rename, on disk
    before it returns. OSError as the system gives it (the seal is then the older one, which
    no longer matches: the next start checks everything before its first card, as without a
    seal)."""
    state, wal = file_state(journal_path)
    data: dict[str, Any] = {"upto_seq": upto_seq, "head": head, "file": state,
                            "wal": wal or not closed, "key_id": key.key_id}
    data["mac"] = _mac(key, data)
    target = seal_path(journal_path)
    tmp = f"{target}.{os.getpid()}.tmp"
    with contextlib.suppress(FileNotFoundError):
        os.unlink(tmp)          # a leftover (or something put there): never opened, replaced
    fd = os.open(tmp, os.O_CREAT | os.O_EXCL | os.O_WRONLY | os.O_NOFOLLOW, FILE_MODE)
    try:
        with os.fdopen(fd, "w", encoding="ascii") as fh:
            fh.write(json.dumps(data) + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    flush(os.path.dirname(os.path.abspath(target)))


@dataclass(frozen=True)
class Vouched:
    """What a seal found at a start says: the chain up to `upto_seq` was proven and the
    journal's file has not been written since (`upto_seq` 0: nothing, and `why` says why)."""
    upto_seq: int
    why: str = ""


def vouched(journal_path: str, key: AnchorKey, record_hash: Any, last_seq: int) -> Vouched:
    """The seal beside the journal read and held to its file now (before anything writes it).
    `record_hash(seq)`: the stored hash of a record. Never raises: a seal that is missing,
    unreadable, forged or stale vouches for nothing."""
    try:
        # never blocks, never follows a link: a FIFO or a device put there cannot hold a start
        fd = os.open(seal_path(journal_path), os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return Vouched(0, "the seal is not a regular file")
            data = json.loads(os.read(fd, 4096).decode("ascii"))
        finally:
            os.close(fd)
        state, wal = file_state(journal_path)
    except FileNotFoundError:
        return Vouched(0, "no seal")
    except (OSError, ValueError, UnicodeDecodeError, RecursionError) as err:
        # (RecursionError: JSON nested deeper than the parser goes, put there by hand)
        return Vouched(0, f"the seal cannot be read ({type(err).__name__}: {err})")
    if not isinstance(data, dict) or not all(
            isinstance(data.get(k), t) for k, t in (("upto_seq", int), ("head", str),
                                                    ("file", list), ("wal", bool),
                                                    ("key_id", str), ("mac", str))):
        return Vouched(0, "the seal is malformed")
    if data["key_id"] != key.key_id:
        return Vouched(0, "the seal was made with another key")
    if not hmac.compare_digest(_mac(key, data), data["mac"]):
        return Vouched(0, "the seal does not match its signature")
    if data["file"] != state:
        return Vouched(0, "the journal's file was written since it was sealed")
    if wal and not data["wal"]:
        return Vouched(0, "a write-ahead log appeared since the journal was sealed closed")
    upto = data["upto_seq"]
    if not 0 < upto <= last_seq or record_hash(upto) != data["head"]:
        return Vouched(0, f"record seq {upto} is not the one the seal names")
    return Vouched(upto)
