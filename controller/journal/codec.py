"""How a record is stored and hashed, per journal schema (docs/journal.md says it for auditors).

Schema 4 (this release's): a record is the row (seq INTEGER, utc INTEGER µs since the epoch,
mono INTEGER µs of the monotonic clock, kind TEXT, data TEXT, hash BLOB of 32 bytes), and

    hash = SHA-256(previous hash (32 bytes; 32 zero bytes before the first record)
                   || seq, utc, mono as 8-byte big-endian signed integers
                   || length of kind in bytes (2-byte big-endian) || kind (UTF-8)
                   || data (the JSON object's text, ASCII))

computed over the bytes as they are, with no JSON work: a verifier reads rows and hashes. The
data column leaves out the object's first member when it is `"event":KIND` (a domain event
under its own name): a column that starts with "," or "}" stands for `{"event":"KIND"` followed
by it, and the hash covers that whole text.

Schema 3 (and 1, 2: journals written before): utc ISO 8601 text, mono REAL seconds, hash 64 hex
digits = SHA-256(previous hex hash + canonical JSON of {seq, utc, mono, kind, data})
(controller/journal/chain.py). Such a journal is read, verified and appended to in its own
format.

Schema 5 stores and hashes a record as schema 4 does, and folds a card read's input and the
`card` event it caused into one record: the `input` record of the read holds the event's fields
(its "event" member left out) under FOLD. A reader gets the two back (`unfold`): the input and
the event, both with the record's seq and hash; the records after it are the other events the
read caused, as before.

Either way a reader gets a Record with utc as ISO text, mono in seconds and the hash in hex.
"""
from __future__ import annotations

import hashlib
import struct
from datetime import datetime, timedelta, timezone
from typing import Callable, Iterable, Sequence

from controller.journal import chain
from controller.journal.chain import GENESIS, Break, _compact_chunks, _fast_compact, _quote

_HEAD = struct.Struct(">qqqH")
try:
    # the writes' hash: CPython's own SHA-256 runs far less code per call than OpenSSL's (its
    # EVP layer), which tells where a live table's caches are cold between two cards (the
    # same digest; the chain checks keep hashlib's, faster over many records in a row)
    from _sha256 import sha256 as _live_sha256      # type: ignore[import-not-found]
except ImportError:                                 # pragma: no cover - other Pythons
    _live_sha256 = hashlib.sha256
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_US = timedelta(microseconds=1)


def iso_to_us(utc: str) -> int:
    """µs since the epoch of an ISO 8601 time (UTC when it names no zone)."""
    t = datetime.fromisoformat(utc.replace("Z", "+00:00"))
    if t.tzinfo is None:
        t = t.replace(tzinfo=timezone.utc)
    return (t - _EPOCH) // _US


_seconds: dict[int, str] = {}


def us_to_iso(us: int) -> str:
    """The ISO text the journal has always shown: 2024-05-01T12:00:00.123456Z."""
    sec, frac = divmod(us, 1_000_000)
    text = _seconds.get(sec)
    if text is None:
        if len(_seconds) > 4096:
            _seconds.clear()
        text = _seconds[sec] = (_EPOCH + timedelta(seconds=sec)).strftime("%Y-%m-%dT%H:%M:%S")
    return f"{text}.{frac:06d}Z"


_prefixes: dict[str, tuple[str, bytes]] = {}


def _prefix(kind: str) -> tuple[str, bytes]:
    """('{"event":"KIND"', kind as UTF-8) for a kind."""
    got = _prefixes.get(kind)
    if got is None:
        got = _prefixes[kind] = ('{"event":' + _quote(kind), kind.encode("utf-8"))
    return got


def full_text(kind: str, stored: str) -> str:
    """The data's whole JSON text from its column (see the module's docstring)."""
    return stored if stored[:1] == "{" else _prefix(kind)[0] + stored


def digest(prev: bytes, seq: int, utc: int, mono: int, kind: str, text: str) -> bytes:
    kb = _prefix(kind)[1]
    return hashlib.sha256(prev + _HEAD.pack(seq, utc, mono, len(kb)) + kb
                          + text.encode("ascii")).digest()


#: per kind, what chaining a record of it needs: the data's '{"event":"KIND"' head, its
#: length, and the packer of (seq, utc, mono, kind's length, kind) with the kind's bytes
_Link = tuple[str, int, Callable[..., bytes], int, bytes]
_links: dict[str, _Link] = {}


def _link(kind: object) -> _Link:
    if not isinstance(kind, str) or not kind:
        raise ValueError(f"journal: record kind must be a non-empty string, not {kind!r}")
    head, kb = _prefix(kind)
    got = _links[kind] = (head, len(head), struct.Struct(f">qqqH{len(kb)}s").pack, len(kb), kb)
    return got


def _not_a_dict(kind: str, data: object) -> ValueError:
    return ValueError(f"journal: {kind} data must be a dict, not {type(data).__name__}")


def _not_ready(kind: str, err: Exception) -> ValueError:
    return ValueError(f"journal: {kind} data is not JSON-ready: {err}")


class V4:
    """Schema 4: binary hashes, integer times, the event's own name not repeated."""

    version = 4
    genesis: object = bytes(32)

    @staticmethod
    def times(utc: object, mono: object) -> tuple[int, int]:
        """A clock's reading as stored: (µs since the epoch, monotonic µs)."""
        u = utc if type(utc) is int else iso_to_us(str(utc))
        m = mono if type(mono) is int else round(float(mono) * 1e6)    # type: ignore[arg-type]
        return u, m

    @staticmethod
    def prepare(kind: str, data: dict) -> tuple[str, str]:
        """(column text, whole text to hash) of a record's data."""
        text = _fast_compact(data)
        if text[:1] != "{":
            raise ValueError("not a JSON object")
        head = _prefix(kind)[0]
        if text.startswith(head) and text[len(head):len(head) + 1] in (",", "}"):
            return text[len(head):], text
        return text, text

    @staticmethod
    def row(prev: object, seq: int, utc: object, mono: object, kind: str,
            prepared: tuple[str, str]) -> tuple:
        return (seq, utc, mono, kind, prepared[0],
                digest(prev, seq, utc, mono, kind, prepared[1]))   # type: ignore[arg-type]

    @staticmethod
    def chain(prev: object, seq: int, utc: object, mono: object,
              items: Iterable[tuple[str, dict]]) -> list[tuple]:
        """The rows of (kind, data) records numbered from seq + 1 after hash `prev`, sharing
        one time: each data encoded once, hashed as it is stored; ValueError for a record that
        cannot be one (nothing is kept of the call then)."""
        rows = []
        sha256, links, chunks, join = _live_sha256, _links, _compact_chunks, _join
        for kind, data in items:
            try:
                head, n, pack, kn, kb = links[kind]
            except (KeyError, TypeError):
                head, n, pack, kn, kb = _link(kind)
            if not isinstance(data, dict):
                raise _not_a_dict(kind, data)
            try:
                text = join(chunks(data, 0))
            except (TypeError, ValueError) as err:
                raise _not_ready(kind, err) from err
            except RecursionError:
                raise _not_ready(kind, ValueError("Circular reference detected")) from None
            seq += 1
            prev = sha256(prev + pack(seq, utc, mono, kn, kb)        # type: ignore[operator]
                          + text.encode("ascii")).digest()
            # an event under its own name: the column leaves out the kind's '{"event":"KIND"'
            # (what follows that closed string is necessarily "," or "}")
            rows.append((seq, utc, mono, kind, text[n:] if text.startswith(head) else text,
                         prev))
        return rows

    @staticmethod
    def unpack(row: tuple) -> tuple[int, str, float, str, str, str]:
        """(seq, utc ISO, mono s, kind, whole data text, hash hex) of a stored row."""
        seq, utc, mono, kind, data, h = row
        return (seq, us_to_iso(utc), mono / 1e6, kind, full_text(kind, data),
                h.hex() if isinstance(h, bytes) else str(h))

    @staticmethod
    def hex(h: object) -> str:
        return h.hex() if isinstance(h, bytes) else str(h)

    @staticmethod
    def iso(utc: object) -> str:
        return us_to_iso(utc)     # type: ignore[arg-type]

    @staticmethod
    def raw(hex_hash: str) -> object:
        return bytes.fromhex(hex_hash)

    @staticmethod
    def utc_param(utc: str) -> object:
        return iso_to_us(utc)

    @staticmethod
    def check_chain(rows: Iterable[tuple], first_seq: int,
                    prev: object) -> tuple[int, object, Break | None]:
        """Walk stored rows in seq order from `first_seq` after hash `prev`: (records checked,
        last good hash, first break or None). Bytes and hashlib only."""
        expected, checked = first_seq, 0
        sha256, pack, prefixes = hashlib.sha256, _HEAD.pack, _prefixes
        for seq, utc, mono, kind, data, stored in rows:
            if seq != expected:
                return checked, prev, Break.out_of_seq(seq, expected)
            try:
                pre = prefixes.get(kind) or _prefix(kind)
                if data[0] != "{":
                    data = pre[0] + data
                good = sha256(prev + pack(seq, utc, mono, len(pre[1])) + pre[1]    # type: ignore
                              + data.encode("ascii")).digest() == stored
            except (TypeError, ValueError, IndexError, AttributeError, struct.error):
                return checked, prev, Break(seq, _why(utc, mono, kind, data, stored))
            if not good:
                return checked, prev, Break(seq, "hash mismatch (stored "
                                            f"{V4.hex(stored)[:12]}…, does not match its "
                                            "content and the record before)")
            prev = stored
            checked += 1
            expected += 1
        return checked, prev, None


def _why(utc: object, mono: object, kind: object, data: object, stored: object) -> str:
    if type(utc) is not int or type(mono) is not int:
        return "bad record: utc and mono must be whole numbers"
    if not isinstance(kind, str) or not kind:
        return "bad record: kind must be text"
    if not isinstance(data, str) or not data:
        return "bad record: data must be JSON text"
    if not isinstance(stored, bytes) or len(stored) != 32:
        return "bad record: hash must be 32 bytes"
    return "bad record: data is not ASCII JSON text"


class V3:
    """Schemas 1-3: ISO times, hex hashes over canonical JSON (controller/journal/chain.py)."""

    version = 3
    genesis: object = GENESIS

    @staticmethod
    def times(utc: object, mono: object) -> tuple[str, float]:
        u = us_to_iso(utc) if type(utc) is int else str(utc)
        m = mono / 1e6 if type(mono) is int else float(mono)    # type: ignore[operator,arg-type]
        return u, m

    @staticmethod
    def prepare(kind: str, data: dict) -> tuple[str, str]:
        return chain.stored_and_canonical(data)

    @staticmethod
    def row(prev: object, seq: int, utc: object, mono: object, kind: str,
            prepared: tuple[str, str]) -> tuple:
        return (seq, utc, mono, kind, prepared[0],
                chain.record_hash(str(prev), seq, str(utc), float(mono),   # type: ignore
                                  kind, prepared[1]))

    @staticmethod
    def chain(prev: object, seq: int, utc: object, mono: object,
              items: Iterable[tuple[str, dict]]) -> list[tuple]:
        rows = []
        for kind, data in items:
            if not (isinstance(kind, str) and kind in _links):
                _link(kind)
            if not isinstance(data, dict):
                raise _not_a_dict(kind, data)
            try:
                stored, canonical = chain.stored_and_canonical(data)
            except (TypeError, ValueError) as err:
                raise _not_ready(kind, err) from err
            seq += 1
            prev = chain.record_hash(str(prev), seq, str(utc), float(mono),  # type: ignore
                                     kind, canonical)
            rows.append((seq, utc, mono, kind, stored, prev))
        return rows

    @staticmethod
    def unpack(row: tuple) -> tuple:
        return row

    @staticmethod
    def hex(h: object) -> str:
        return str(h)

    @staticmethod
    def iso(utc: object) -> str:
        return str(utc)

    @staticmethod
    def raw(hex_hash: str) -> object:
        return hex_hash

    @staticmethod
    def utc_param(utc: str) -> object:
        return utc

    @staticmethod
    def check_chain(rows: Iterable[tuple], first_seq: int,
                    prev: object) -> tuple[int, object, Break | None]:
        return chain.check_chain(rows, first_seq, str(prev))


#: the member of a card read's input record (schema 5) that holds the `card` event it caused
FOLD = "card"


class V5(V4):
    """Schema 5: schema 4's rows, a card read's input and its `card` event in one record."""

    version = 5

    @staticmethod
    def fold(items: Iterable[tuple[str, dict]]) -> tuple[list[tuple[str, dict]], list[int]]:
        """The records to write for (kind, data) items, and for each item the index of the
        record that holds it: a card read's input followed by its `card` event become one."""
        items = items if isinstance(items, list) else list(items)
        out: list[tuple[str, dict]] = []
        where: list[int] = []
        i, n = 0, len(items)
        while i < n:
            kind, data = items[i]
            where.append(len(out))
            if kind == "input" and _folds(items, i):
                fields = items[i + 1][1].copy()
                del fields["event"]
                data = data.copy()
                data[FOLD] = fields
                where.append(len(out))
                i += 1
            out.append((kind, data))
            i += 1
        return out, where

    @staticmethod
    def fold_chain(prev: object, seq: int, utc: object, mono: object,
                   items: list[tuple[str, dict]]) -> tuple[list[tuple], Sequence[int] | None]:
        """`fold` then `chain` in one pass: the rows, and for each item the index of its row
        (None when nothing folded: one row an item).

        A lone card read (its input and its card event, nothing more) is the live table's
        commonest write, made where the caches are cold: its one record is encoded by one call
        of the C encoder, over shallow copies of the two objects (the event's without its
        "event" member) nested as `fold` nests them, so the text is the one `fold` then
        `chain` make (tests hold the two equal); anything else goes through `fold` and
        `chain`."""
        if len(items) == 2:
            (kind, data), (second, event) = items
            # an input with an "event" member goes the long way (under its own name first,
            # its column would leave it out)
            if kind == "input" and second == "card" and type(data) is dict \
                    and type(event) is dict and data.get("type") == "card" \
                    and event.get("event") == "card" and FOLD not in data \
                    and "event" not in data:
                fields = event.copy()
                del fields["event"]
                record = data.copy()
                record[FOLD] = fields
                try:
                    text = _join(_compact_chunks(record, 0))
                except (TypeError, ValueError, RecursionError):
                    text = ""                       # `fold` and `chain` say what is wrong
                if text:
                    seq += 1
                    # the text is ASCII (the encoder escapes everything else): its UTF-8, the
                    # encoding str.encode makes without a name to look up, is the same bytes
                    return [(seq, utc, mono, "input", text, _live_sha256(
                        prev + _pack_input(seq, utc, mono, 5, b"input")  # type: ignore
                        + text.encode()).digest())], CARD_ALONE
        folded, where = V5.fold(items)
        rows = V4.chain(prev, seq, utc, mono, folded)
        return rows, where if len(folded) < len(items) else None


def _folds(items: list[tuple[str, dict]], i: int) -> bool:
    """Whether items[i] is a card read's input whose `card` event follows it (one record)."""
    kind, data = items[i]
    if kind != "input" or i + 1 >= len(items) or items[i + 1][0] != "card":
        return False
    event = items[i + 1][1]
    return isinstance(data, dict) and data.get("type") == "card" and FOLD not in data \
        and isinstance(event, dict) and event.get("event") == "card"


_join = "".join
_pack_input = struct.Struct(">qqqH5s").pack
#: where a lone card read's two items are: both in its one record
CARD_ALONE = (0, 0)


Codec = type[V3] | type[V4] | type[V5]


def for_version(version: int) -> Codec:
    return V5 if version >= 5 else V4 if version >= 4 else V3


def folded(kind: str, data: dict) -> dict | None:
    """The `card` event a schema 5 input record holds (its data), or None."""
    if kind == "input":
        fields = data.get(FOLD)
        if isinstance(fields, dict) and data.get("type") == "card":
            return {"event": "card", **fields}
    return None


def unfold(kind: str, data: dict) -> tuple[tuple[str, dict], ...]:
    """What a record holds as (kind, data) pairs: a folded card read's input and its `card`
    event, or the record itself."""
    event = folded(kind, data)
    if event is None:
        return ((kind, data),)
    return (kind, {k: v for k, v in data.items() if k != FOLD}), ("card", event)


def links(prev: str, seq: int, utc: str, mono: float, kind: str, data: dict,
          stored: str) -> bool:
    """Whether a record as a reader gets it (ISO utc, mono seconds, data, hex hashes; the floor
    feed's) follows the record whose hash is `prev`, in either schema's chain."""
    try:
        if digest(bytes.fromhex(prev), seq, iso_to_us(utc), round(mono * 1e6), kind,
                  _fast_compact(data)).hex() == stored:
            return True
        return chain.record_hash(prev, seq, utc, float(mono), kind,
                                 chain.canonical(data)) == stored
    except (TypeError, ValueError, struct.error):
        return False
